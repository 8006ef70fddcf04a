//go:build ignore

/* thread_ops: threads made with raw clone(CLONE_THREAD): tids, TLS with
 * CLONE_SETTLS and arch_prctl, set_tid_address and the exit wake-up,
 * robust lists (set/get errors, ownership on death), exit of one thread vs
 * exit_group, execve from a thread, and /proc/self/task. */
#include "moattest.h"

#include <asm/prctl.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STK (128 * 1024)

static char *stack_top(void)
{
	char *p = mmap(NULL, STK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p + STK;
}

static void wait_cleared(volatile pid_t *w)
{
	for (int i = 0; i < 5000; i++) {
		pid_t v = *w;
		if (v == 0)
			return;
		struct timespec ts = {0, 2 * 1000 * 1000};
		syscall(SYS_futex, w, FUTEX_WAIT, v, &ts, NULL, 0);
	}
}

static atomic_long seen_fs;

/* tls_thread runs with our own TLS block: no libc calls that touch TLS
 * (errno included), so only raw instructions. */
static int tls_thread(void *arg)
{
	(void)arg;
	unsigned long fs;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(fs));
	atomic_store(&seen_fs, (long)fs);
	return 0;
}

static void clone_settls_sets_fs(void)
{
	static unsigned long tls_block[16];
	tls_block[0] = (unsigned long)tls_block; /* self pointer, like a TCB */
	char *stk = stack_top();
	CHECK(stk != NULL);
	static volatile pid_t ctid;
	ctid = 1;
	atomic_store(&seen_fs, 0);
	int tid = clone(tls_thread, stk,
			CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
				CLONE_SETTLS | CLONE_CHILD_CLEARTID,
			NULL, NULL, tls_block, &ctid);
	CHECK_GT(tid, 0);
	wait_cleared(&ctid);
	CHECK_EQ(ctid, 0);
	CHECK_EQ(atomic_load(&seen_fs), (long)tls_block);
	/* Our own FS base is unchanged. */
	unsigned long fs;
	CHECK_SYS(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs));
	CHECK_NE(fs, (unsigned long)tls_block);
}

static void *store_tid(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static void gettid_differs_in_threads(void)
{
	static pid_t tids[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, store_tid, &tids[i]));
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++) {
		CHECK_NE(tids[i], getpid());
		for (int j = 0; j < i; j++)
			CHECK_NE(tids[i], tids[j]);
	}
}

static atomic_int stop_flag;

static void noop(int sig)
{
	(void)sig;
}

static void *pause_until_stop(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_flag))
		pause();
	return NULL;
}

static void proc_self_task_lists_threads(void)
{
	atomic_store(&stop_flag, 0);
	signal(SIGURG, noop);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, pause_until_stop, NULL));
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	CHECK(d != NULL);
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	atomic_store(&stop_flag, 1);
	for (int i = 0; i < 3; i++) {
		pthread_kill(th[i], SIGURG);
		pthread_join(th[i], NULL);
	}
	CHECK_EQ(n, 4);
}

static void set_robust_list_errors(void)
{
	struct robust_list_head *saved = NULL;
	size_t saved_len = 0;
	CHECK_SYS(syscall(SYS_get_robust_list, 0, &saved, &saved_len));
	static struct robust_list_head head;
	head.list.next = &head.list;
	head.futex_offset = 0;
	head.list_op_pending = NULL;
	CHECK_ERR(syscall(SYS_set_robust_list, &head, sizeof(head) + 1), EINVAL);
	CHECK_ERR(syscall(SYS_set_robust_list, &head, 0), EINVAL);
	CHECK_SYS(syscall(SYS_set_robust_list, &head, sizeof(head)));
	struct robust_list_head *got = NULL;
	size_t len = 0;
	CHECK_SYS(syscall(SYS_get_robust_list, 0, &got, &len));
	CHECK(got == &head);
	CHECK_EQ(len, sizeof(head));
	CHECK_ERR(syscall(SYS_get_robust_list, 99999, &got, &len), ESRCH);
	CHECK_ERR(syscall(SYS_get_robust_list, 0, (void *)1, &len), EFAULT);
	/* Back to glibc's list. */
	CHECK_SYS(syscall(SYS_set_robust_list, saved, saved_len));
}

struct robust_mutex {
	struct robust_list list;
	uint32_t futex;
};

static void robust_owner_death_marks_word(void)
{
	/* A child process holding a robust futex dies: the kernel sets
	 * FUTEX_OWNER_DIED in a shared word. */
	struct robust_mutex *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		static struct robust_list_head head;
		head.list.next = &m->list;
		m->list.next = &head.list;
		head.futex_offset = offsetof(struct robust_mutex, futex);
		head.list_op_pending = NULL;
		if (syscall(SYS_set_robust_list, &head, sizeof(head)) != 0)
			_exit(2);
		m->futex = (uint32_t)syscall(SYS_gettid) | FUTEX_WAITERS;
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK(m->futex & FUTEX_OWNER_DIED);
	CHECK_EQ(m->futex & FUTEX_TID_MASK, 0);
}

static void robust_word_of_other_owner_untouched(void)
{
	struct robust_mutex *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		static struct robust_list_head head;
		head.list.next = &m->list;
		m->list.next = &head.list;
		head.futex_offset = offsetof(struct robust_mutex, futex);
		head.list_op_pending = NULL;
		syscall(SYS_set_robust_list, &head, sizeof(head));
		/* Owned by someone else (tid 12345): left alone. */
		m->futex = 12345;
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_EQ(m->futex, 12345);
}

static void *exit_thread(void *arg)
{
	(void)arg;
	syscall(SYS_exit, 9);
	return NULL;
}

static void thread_exit_leaves_process(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, exit_thread, NULL);
		pthread_join(th, NULL);
		_exit(4);
	}
	int st = mt_wait(pid);
	/* The thread's exit code is not the process's. */
	CHECK_EXITED(st, 4);
}

static void *exec_thread(void *arg)
{
	(void)arg;
	char buf[64];
	snprintf(buf, sizeof(buf), "exit $(( $$ == %d ? 0 : 1 ))", getpid());
	char *argv[] = {"/bin/sh", "-c", buf, NULL};
	execv(argv[0], argv);
	_exit(127);
	return NULL;
}

static void *sleep_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void exec_from_thread_keeps_pid(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, exec_thread, NULL);
		for (;;)
			pause();
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void exit_group_kills_sleeping_threads(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (int i = 0; i < 4; i++) {
			pthread_t th;
			pthread_create(&th, NULL, sleep_thread, NULL);
		}
		syscall(SYS_exit_group, 6);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 6);
}

static const struct mt_case cases[] = {
	MT_CASE(clone_settls_sets_fs),
	MT_CASE(gettid_differs_in_threads),
	MT_CASE(proc_self_task_lists_threads),
	MT_CASE(set_robust_list_errors),
	MT_CASE(robust_owner_death_marks_word),
	MT_CASE(robust_word_of_other_owner_untouched),
	MT_CASE(thread_exit_leaves_process),
	MT_CASE(exec_from_thread_keeps_pid),
	MT_CASE(exit_group_kills_sleeping_threads),
};

MT_MAIN(cases)
