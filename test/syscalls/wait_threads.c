//go:build ignore

/* wait_threads: waiting for children from several threads: any thread
 * may wait for a child another thread forked, __WNOTHREAD limits a wait to
 * the caller's own children, two threads blocked in wait each get one
 * child, a child's parent is the process (getppid is the tgid), and a
 * child forked by a thread that then exits stays a child of the process. */
#include "moattest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *fork_child_thread(void *arg)
{
	pid_t *out = arg;
	pid_t pid = fork();
	if (pid == 0)
		_exit(getppid() == 1 ? 21 : 22);
	*out = pid;
	return NULL;
}

static void wait_for_child_of_other_thread(void)
{
	pid_t pid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, fork_child_thread, &pid));
	pthread_join(th, NULL);
	CHECK_GT(pid, 0);
	int st;
	/* The forking thread has exited; the process still owns the child,
	 * whose parent pid is our tgid (1). */
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXITED(st, 21);
}

static atomic_int thread_child;

static void *fork_and_hold(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	atomic_store(&thread_child, pid);
	/* Wait for it with __WNOTHREAD: it is ours. */
	int st;
	pid_t r = waitpid(pid, &st, __WNOTHREAD);
	return (void *)(long)(r == pid && WIFSIGNALED(st) ? 0 : 1);
}

static void wnothread_limits_to_own_children(void)
{
	atomic_store(&thread_child, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, fork_and_hold, NULL));
	while (atomic_load(&thread_child) == 0)
		sched_yield();
	pid_t pid = atomic_load(&thread_child);
	int st;
	/* Not a child of this thread. */
	errno = 0;
	long own = waitpid(pid, &st, __WNOTHREAD | WNOHANG);
	int own_err = errno;
	/* Without the flag, it is one of the process's children. */
	long any = waitpid(pid, &st, WNOHANG);
	/* Clean up before checking, so later cases start clean. */
	kill(pid, SIGKILL);
	void *ret;
	pthread_join(th, &ret);
	waitpid(pid, &st, WNOHANG);
	CHECK_EQ(own, -1);
	CHECK_EQ(own_err, ECHILD);
	CHECK_EQ(any, 0);
	CHECK_EQ((long)ret, 0);
}

static void *waiter(void *arg)
{
	(void)arg;
	int st;
	pid_t r = waitpid(-1, &st, 0);
	return (void *)(long)r;
}

static void two_waiting_threads_share_children(void)
{
	pid_t kids[2];
	int p[2];
	CHECK_SYS(pipe(p));
	for (int i = 0; i < 2; i++) {
		kids[i] = CHECK_SYS(fork());
		if (kids[i] == 0) {
			char c;
			close(p[1]);
			if (read(p[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, waiter, NULL));
	struct timespec ts = {0, 30 * 1000 * 1000};
	nanosleep(&ts, NULL);
	close(p[1]);
	void *r0, *r1;
	pthread_join(th[0], &r0);
	pthread_join(th[1], &r1);
	/* Each waiter reaped a different child. */
	CHECK((long)r0 > 0 && (long)r1 > 0);
	CHECK_NE((long)r0, (long)r1);
	CHECK((long)r0 == kids[0] || (long)r0 == kids[1]);
	CHECK((long)r1 == kids[0] || (long)r1 == kids[1]);
}

static void *echild_waiter(void *arg)
{
	(void)arg;
	int st;
	pid_t r = waitpid(-1, &st, WNOHANG);
	return (void *)(long)(r == -1 && errno == ECHILD ? 0 : 1);
}

static void echild_in_thread_without_children(void)
{
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, echild_waiter, NULL));
	void *ret;
	pthread_join(th, &ret);
	CHECK_EQ((long)ret, 0);
}

static void sigchld_goes_to_process(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigprocmask(SIG_BLOCK, &s, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	sigaction(SIGCHLD, &sa, NULL);
	pid_t pid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, fork_child_thread, &pid));
	pthread_join(th, NULL);
	siginfo_t si;
	struct timespec ts = {5, 0};
	/* The main thread receives the SIGCHLD of a child another thread
	 * forked (it is process-directed). */
	CHECK_EQ(sigtimedwait(&s, &si, &ts), SIGCHLD);
	CHECK_EQ(si.si_pid, pid);
	mt_wait(pid);
}

static const struct mt_case cases[] = {
	MT_CASE(wait_for_child_of_other_thread),
	MT_CASE(wnothread_limits_to_own_children),
	MT_CASE(two_waiting_threads_share_children),
	MT_CASE(echild_in_thread_without_children),
	MT_CASE(sigchld_goes_to_process),
};

MT_MAIN(cases)
