//go:build ignore

/* sx_cancel_robust: pthread cancellation (a blocking read is a cancellation
 * point, disabled and deferred cancellation wait, cleanup handlers run,
 * asynchronous cancellation of a busy loop), robust mutexes whose owner
 * dies (EOWNERDEAD, consistent, ENOTRECOVERABLE, across processes, and
 * waking a waiter asleep on the mutex), and
 * clone with CLONE_SIGHAND sharing the signal handler table. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cfds[2];
static atomic_int tid_of;
static atomic_int marker;
static atomic_int go;

static void *reader(void *arg)
{
	(void)arg;
	atomic_store(&tid_of, (int)syscall(SYS_gettid));
	char c;
	read(cfds[0], &c, 1);
	atomic_store(&marker, 1); /* not reached when canceled */
	return NULL;
}

static void cancel_blocked_read(void)
{
	CHECK_SYS(pipe(cfds));
	atomic_store(&tid_of, 0);
	atomic_store(&marker, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, reader, NULL));
	while (atomic_load(&tid_of) == 0)
		sched_yield();
	if (mt_wait_blocked(atomic_load(&tid_of), 5000) != 0)
		FAIL("reader never blocked");
	CHECK_RET0(pthread_cancel(th));
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK(res == PTHREAD_CANCELED);
	CHECK_EQ(atomic_load(&marker), 0);
	/* The thread is gone: cancelling it again is ESRCH-free only while it
	 * exists, so just check the pipe still works. */
	CHECK_EQ(write(cfds[1], "x", 1), 1);
}

static void *disabled_worker(void *arg)
{
	(void)arg;
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	atomic_store(&marker, 1);
	while (!atomic_load(&go)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL); /* a cancellation point, but disabled */
	}
	atomic_store(&marker, 2);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	pthread_testcancel();
	atomic_store(&marker, 3);
	return (void *)1;
}

static void cancel_disabled_until_enabled(void)
{
	atomic_store(&marker, 0);
	atomic_store(&go, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, disabled_worker, NULL));
	while (atomic_load(&marker) == 0)
		sched_yield();
	CHECK_RET0(pthread_cancel(th));
	usleep(20000);
	CHECK_EQ(atomic_load(&marker), 1);
	atomic_store(&go, 1);
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK(res == PTHREAD_CANCELED);
	CHECK_EQ(atomic_load(&marker), 2);
}

static atomic_int cleaned;
static void cleanup(void *arg)
{
	atomic_store(&cleaned, (int)(long)arg);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, (void *)42);
	atomic_store(&tid_of, (int)syscall(SYS_gettid));
	struct timespec ts = { 60, 0 };
	nanosleep(&ts, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void cancel_runs_cleanup_handlers(void)
{
	atomic_store(&tid_of, 0);
	atomic_store(&cleaned, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, sleeper, NULL));
	while (atomic_load(&tid_of) == 0)
		sched_yield();
	if (mt_wait_blocked(atomic_load(&tid_of), 5000) != 0)
		FAIL("sleeper never blocked");
	CHECK_RET0(pthread_cancel(th));
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK(res == PTHREAD_CANCELED);
	CHECK_EQ(atomic_load(&cleaned), 42);
}

static void *spinner(void *arg)
{
	(void)arg;
	int old;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	atomic_store(&marker, 1);
	for (;;)
		atomic_fetch_add(&go, 1);
	return NULL;
}

static void cancel_async_busy_loop(void)
{
	atomic_store(&marker, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, spinner, NULL));
	while (atomic_load(&marker) == 0)
		sched_yield();
	CHECK_RET0(pthread_cancel(th));
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK(res == PTHREAD_CANCELED);
}

static pthread_mutex_t *rm;

static void init_robust(pthread_mutex_t *m, int pshared)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static void *lock_and_exit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(rm);
	return NULL;
}

static void robust_owner_thread_dies(void)
{
	pthread_mutex_t m;
	init_robust(&m, 0);
	rm = &m;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, lock_and_exit, NULL));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_RET(pthread_mutex_lock(&m), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_consistent(&m));
	CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET0(pthread_mutex_lock(&m));
	CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET0(pthread_mutex_destroy(&m));
}

static void robust_unlock_without_consistent(void)
{
	pthread_mutex_t m;
	init_robust(&m, 0);
	rm = &m;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, lock_and_exit, NULL));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_RET(pthread_mutex_trylock(&m), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET(pthread_mutex_lock(&m), ENOTRECOVERABLE);
	CHECK_RET(pthread_mutex_trylock(&m), ENOTRECOVERABLE);
}

static void robust_owner_process_dies(void)
{
	pthread_mutex_t *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	init_robust(m, 1);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(pthread_mutex_lock(m) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* The kernel walked the dead child's robust list: the owner-died bit
	 * is set in the word. */
	CHECK_NE(*(volatile uint32_t *)m & 0x40000000u, 0);
	CHECK_RET(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_consistent(m));
	CHECK_RET0(pthread_mutex_unlock(m));
	munmap(m, 4096);
}

/* sleeps_in_kernel waits (up to five seconds) until thread tid of process
 * pid is asleep in the kernel. */
static int sleeps_in_kernel(pid_t pid, pid_t tid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	for (int i = 0; i < 5000; i++) {
		int f = open(p, O_RDONLY);
		if (f >= 0) {
			ssize_t n = read(f, buf, sizeof(buf) - 1);
			close(f);
			if (n > 0) {
				buf[n] = 0;
				char *q = strrchr(buf, ')');
				if (q && q[1] == ' ' && q[2] == 'S')
					return 1;
			}
		}
		usleep(1000);
	}
	return 0;
}

/* wait_for_waiter returns once a waiter has announced itself in the lock
 * word (glibc sets FUTEX_WAITERS before it sleeps in FUTEX_WAIT) and the
 * waiting thread sleeps in the kernel. */
static int wait_for_waiter(pthread_mutex_t *m, pid_t pid, pid_t tid)
{
	for (int i = 0; i < 5000; i++) {
		if (*(volatile uint32_t *)m & 0x80000000u)
			return sleeps_in_kernel(pid, tid);
		usleep(1000);
	}
	return 0;
}

static atomic_int waiter_tid;
static int lock_fds[2];

static void *lock_until_waiter_blocks(void *arg)
{
	(void)arg;
	pthread_mutex_lock(rm);
	char c = 'l';
	if (write(lock_fds[1], &c, 1) != 1)
		return (void *)1;
	if (!wait_for_waiter(rm, getpid(), atomic_load(&waiter_tid)))
		return (void *)2;
	return NULL; /* exits holding the mutex */
}

static void robust_blocked_waiter_woken_by_thread_death(void)
{
	/* A thread asleep on a robust mutex is woken with EOWNERDEAD when
	 * the owning thread exits. */
	pthread_mutex_t m;
	init_robust(&m, 0);
	rm = &m;
	CHECK_SYS(pipe(lock_fds));
	atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, lock_until_waiter_blocks, NULL));
	char c;
	CHECK_EQ(read(lock_fds[0], &c, 1), 1);
	CHECK_RET(pthread_mutex_trylock(&m), EBUSY);
	CHECK_RET(pthread_mutex_lock(&m), EOWNERDEAD);
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK(res == NULL);
	CHECK_RET0(pthread_mutex_consistent(&m));
	CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET0(pthread_mutex_lock(&m));
	CHECK_RET0(pthread_mutex_unlock(&m));
}

static void robust_blocked_waiter_woken_by_process_death(void)
{
	/* The same across processes, for a mutex in shared memory. */
	pthread_mutex_t *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	init_robust(m, 1);
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t parent = getpid();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(pthread_mutex_lock(m) == 0);
		CHILD_CHECK(write(p[1], "l", 1) == 1);
		CHILD_CHECK(wait_for_waiter(m, parent, parent));
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_RET(pthread_mutex_trylock(m), EBUSY);
	CHECK_RET(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_consistent(m));
	CHECK_RET0(pthread_mutex_unlock(m));
	CHECK_EXITED(mt_wait(pid), 0);
	munmap(m, 4096);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static int set_handler_child(void *arg)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = arg ? on_usr1 : SIG_IGN;
	sa.sa_flags = SA_RESTART;
	return sigaction(SIGUSR1, &sa, NULL) == 0 ? 0 : 1;
}

static void clone_sighand_shares_table(void)
{
	struct {
		const char *name;
		int flags;
		void *arg;
		int shared;
	} tests[] = {
		{ "vm|sighand handler", CLONE_VM | CLONE_SIGHAND, (void *)1, 1 },
		{ "vm|sighand ignore", CLONE_VM | CLONE_SIGHAND, NULL, 1 },
		{ "vm only", CLONE_VM, (void *)1, 0 },
		{ "fork-like", 0, (void *)1, 0 },
	};
	size_t sz = 256 * 1024;
	char *stack = CHECK_MAP(mmap(NULL, sz, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		signal(SIGUSR1, SIG_DFL);
		pid_t pid = clone(set_handler_child, stack + sz,
				  tests[i].flags | SIGCHLD, tests[i].arg);
		if (pid < 0)
			FAIL("%s: clone: %s", tests[i].name, mt_errname(errno));
		int st = mt_wait(pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			FAIL("%s: child %s", tests[i].name, mt_status_str(st));
		struct sigaction cur;
		CHECK_SYS(sigaction(SIGUSR1, NULL, &cur));
		void (*want)(int) = SIG_DFL;
		if (tests[i].shared)
			want = tests[i].arg ? on_usr1 : SIG_IGN;
		if (cur.sa_handler != want)
			FAIL("%s: parent handler %p want %p", tests[i].name,
			     (void *)cur.sa_handler, (void *)want);
		if (tests[i].shared && !(cur.sa_flags & SA_RESTART))
			FAIL("%s: flags %#x lack SA_RESTART", tests[i].name,
			     (unsigned)cur.sa_flags);
	}
	munmap(stack, sz);
}

static void clone_sighand_flag_errors(void)
{
	/* CLONE_SIGHAND needs CLONE_VM; CLONE_THREAD needs CLONE_SIGHAND. */
	CHECK_ERR(syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, NULL, NULL, NULL, 0),
		  EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_VM | CLONE_THREAD, NULL, NULL, NULL, 0),
		  EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(cancel_blocked_read),
	MT_CASE(cancel_disabled_until_enabled),
	MT_CASE(cancel_runs_cleanup_handlers),
	MT_CASE(cancel_async_busy_loop),
	MT_CASE(robust_owner_thread_dies),
	MT_CASE(robust_unlock_without_consistent),
	MT_CASE(robust_owner_process_dies),
	MT_CASE(robust_blocked_waiter_woken_by_thread_death),
	MT_CASE(robust_blocked_waiter_woken_by_process_death),
	MT_CASE(clone_sighand_shares_table),
	MT_CASE(clone_sighand_flag_errors),
};

MT_MAIN(cases)
