//go:build ignore

/* s3_robust_exit: what the kernel does with a dying thread's robust futex
 * list and clear_child_tid: FUTEX_OWNER_DIED on words the thread owned
 * (with and without waiters, via list_op_pending, at a negative
 * futex_offset, in shared memory after a process exit), words owned by
 * others left alone, circular lists cut off, get_robust_list of another
 * thread, and set_tid_address's return value and exit-time clear and wake
 * for threads but not for the last thread of a process. */
#include "moattest.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A lock as the kernel sees it: the list entry, then the futex word at
 * futex_offset from the entry. */
struct lock {
	struct robust_list next;
	uint32_t word;
};

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A thread's instructions: locks to own and link, and what to do. */
struct plan {
	struct robust_list_head head;
	struct lock *locks[4];
	int nlocks;
	int own;             /* store our tid in the words */
	uint32_t other_tid;  /* or this one */
	int pending;         /* put locks[0] in list_op_pending, not the list */
	long offset;         /* futex_offset; 0 means offsetof(word) */
	atomic_int ready;
	atomic_int go;
};

static void build(struct plan *p, pid_t tid)
{
	p->head.futex_offset = p->offset ? p->offset : (long)offsetof(struct lock, word);
	p->head.list.next = &p->head.list;
	p->head.list_op_pending = NULL;
	for (int i = p->nlocks - 1; i >= 0; i--) {
		struct lock *l = p->locks[i];
		uint32_t *w = (uint32_t *)((char *)&l->next + p->head.futex_offset);
		*w = (*w & FUTEX_WAITERS) | (p->own ? (uint32_t)tid : p->other_tid);
		if (i == 0 && p->pending) {
			p->head.list_op_pending = &l->next;
			continue;
		}
		l->next.next = p->head.list.next;
		p->head.list.next = &l->next;
	}
}

static void *owner(void *arg)
{
	struct plan *p = arg;
	build(p, gettid_());
	syscall(SYS_set_robust_list, &p->head, sizeof p->head);
	atomic_store(&p->ready, 1);
	while (!atomic_load(&p->go))
		sched_yield();
	/* Exit without glibc touching the list. */
	syscall(SYS_exit, 0);
	return NULL;
}

static void run(struct plan *p)
{
	pthread_t t;
	atomic_store(&p->go, 1);
	pthread_create(&t, NULL, owner, p);
	pthread_join(t, NULL);
}

static void owner_death_marks_word(void)
{
	static struct lock a, b;
	a.word = b.word = 0;
	struct plan p = {.locks = {&a, &b}, .nlocks = 2, .own = 1};
	run(&p);
	/* The tid is gone, FUTEX_OWNER_DIED is set. */
	CHECK_EQ(a.word, FUTEX_OWNER_DIED);
	CHECK_EQ(b.word, FUTEX_OWNER_DIED);
}

static void others_words_untouched(void)
{
	static struct lock a;
	a.word = 0;
	struct plan p = {.locks = {&a}, .nlocks = 1, .own = 0, .other_tid = 1};
	run(&p);
	CHECK_EQ(a.word, 1);
}

static void pending_op_is_handled(void)
{
	static struct lock a, b;
	a.word = b.word = 0;
	struct plan p = {.locks = {&a, &b}, .nlocks = 2, .own = 1, .pending = 1};
	run(&p);
	CHECK_EQ(a.word, FUTEX_OWNER_DIED);
	CHECK_EQ(b.word, FUTEX_OWNER_DIED);
}

static void negative_futex_offset(void)
{
	/* The word before the entry. */
	static struct {
		uint32_t word;
		uint32_t pad;
		struct lock l;
	} s;
	s.word = 0;
	struct plan p = {.locks = {&s.l}, .nlocks = 1, .own = 1,
			 .offset = (long)((char *)&s.word - (char *)&s.l.next)};
	run(&p);
	CHECK_EQ(s.word, FUTEX_OWNER_DIED);
	CHECK_EQ(s.l.word, 0);
}

static void waiter_is_woken(void)
{
	static struct lock a;
	a.word = FUTEX_WAITERS;
	static struct plan p;
	memset(&p, 0, sizeof p);
	p.locks[0] = &a;
	p.nlocks = 1;
	p.own = 1;
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, owner, &p));
	while (!atomic_load(&p.ready))
		sched_yield();
	uint32_t seen = a.word;
	CHECK_EQ(seen & FUTEX_WAITERS, FUTEX_WAITERS);
	atomic_store(&p.go, 1);
	/* Wait while the word still holds the owner; the death wakes us (or
	 * the word has already changed: EAGAIN). */
	struct timespec ts = {10, 0};
	long r = futex(&a.word, FUTEX_WAIT, seen, &ts);
	CHECK(r == 0 || errno == EAGAIN);
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(a.word, FUTEX_WAITERS | FUTEX_OWNER_DIED);
}

static void circular_list_cut_off(void)
{
	static struct lock a, b;
	a.word = b.word = 0;
	struct plan p = {.locks = {&a, &b}, .nlocks = 2, .own = 1};
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		build(&p, gettid_());
		/* b points back at a: the list never returns to the head. */
		b.next.next = &a.next;
		CHILD_CHECK(syscall(SYS_set_robust_list, &p.head, sizeof p.head) == 0);
		_exit(7);
	}
	/* The exit must finish despite the loop. */
	int st = mt_wait(pid);
	CHECK_EXITED(st, 7);
}

static void process_exit_in_shared_memory(void)
{
	struct lock *l = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	l->word = 0;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct plan p = {.locks = {l}, .nlocks = 1, .own = 1};
		build(&p, gettid_());
		CHILD_CHECK(syscall(SYS_set_robust_list, &p.head, sizeof p.head) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_EQ(l->word, FUTEX_OWNER_DIED);
}

static void *report_head(void *arg)
{
	struct plan *p = arg;
	p->head.list.next = &p->head.list;
	syscall(SYS_set_robust_list, &p->head, sizeof p->head);
	p->other_tid = (uint32_t)gettid_();
	atomic_store(&p->ready, 1);
	while (!atomic_load(&p->go))
		sched_yield();
	return NULL;
}

static void get_robust_list_of_thread(void)
{
	static struct plan p;
	memset(&p, 0, sizeof p);
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, report_head, &p));
	while (!atomic_load(&p.ready))
		sched_yield();
	struct robust_list_head *got = NULL;
	size_t len = 0;
	long r = syscall(SYS_get_robust_list, p.other_tid, &got, &len);
	atomic_store(&p.go, 1);
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(r, 0);
	CHECK(got == &p.head);
	CHECK_EQ(len, sizeof(struct robust_list_head));
	/* Our own is glibc's, a different head. */
	CHECK_SYS(syscall(SYS_get_robust_list, 0, &got, &len));
	CHECK(got != &p.head);
}

static uint32_t ctid_word;
static char ctid_stack[65536] __attribute__((aligned(16)));

static int ctid_thread(void *arg)
{
	(void)arg;
	long tid = syscall(SYS_set_tid_address, &ctid_word);
	ctid_word = (uint32_t)tid;
	syscall(SYS_exit, 0);
	return 0;
}

static void clear_child_tid_on_thread_exit(void)
{
	ctid_word = 0xffffffffu;
	pid_t tid = clone(ctid_thread, ctid_stack + sizeof ctid_stack,
			  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				  CLONE_THREAD | CLONE_SYSVSEM,
			  NULL);
	CHECK_GT(tid, 0);
	/* Wait until the word is 0: the kernel clears it and wakes us. */
	for (int i = 0; i < 1000; i++) {
		uint32_t v = __atomic_load_n(&ctid_word, __ATOMIC_SEQ_CST);
		if (v == 0)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		futex(&ctid_word, FUTEX_WAIT, v, &ts);
	}
	CHECK_EQ(ctid_word, 0);
}

static void set_tid_address_returns_tid(void)
{
	uint32_t dummy;
	CHECK_EQ(syscall(SYS_set_tid_address, &dummy), gettid_());
	/* Any address is accepted, even NULL or an unmapped one. */
	CHECK_EQ(syscall(SYS_set_tid_address, NULL), gettid_());
	CHECK_EQ(syscall(SYS_set_tid_address, (void *)8), gettid_());
	/* The last thread of a process does not clear its word: nobody
	 * shares the memory any more. */
	uint32_t *w = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	*w = 1234;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(syscall(SYS_set_tid_address, w) == getpid());
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_EQ(*w, 1234);
}

static const struct mt_case cases[] = {
	MT_CASE(owner_death_marks_word),
	MT_CASE(others_words_untouched),
	MT_CASE(pending_op_is_handled),
	MT_CASE(negative_futex_offset),
	MT_CASE(waiter_is_woken),
	MT_CASE(circular_list_cut_off),
	MT_CASE(process_exit_in_shared_memory),
	MT_CASE(get_robust_list_of_thread),
	MT_CASE(clear_child_tid_on_thread_exit),
	MT_CASE(set_tid_address_returns_tid),
};

MT_MAIN(cases)
