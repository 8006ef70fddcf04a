//go:build ignore

/* s2_tgkill: tgkill and tkill: argument errors, thread-group mismatch,
 * missing threads, permission checks, zombies and delivery to the named
 * thread. */
#include "moattest.h"
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw_tgkill(pid_t tgid, pid_t tid, int sig)
{
	return syscall(SYS_tgkill, tgid, tid, sig);
}

static long raw_tkill(pid_t tid, int sig)
{
	return syscall(SYS_tkill, tid, sig);
}

static void tgkill_self_probe(void)
{
	CHECK_EQ(raw_tgkill(getpid(), gettid(), 0), 0);
	CHECK_EQ(raw_tkill(gettid(), 0), 0);
}

static void bad_signal_einval(void)
{
	CHECK_ERR(raw_tgkill(getpid(), gettid(), 65), EINVAL);
	CHECK_ERR(raw_tgkill(getpid(), gettid(), -1), EINVAL);
	CHECK_ERR(raw_tkill(gettid(), 65), EINVAL);
	CHECK_ERR(raw_tkill(gettid(), -1), EINVAL);
}

static void bad_ids_einval(void)
{
	CHECK_ERR(raw_tgkill(0, gettid(), 0), EINVAL);
	CHECK_ERR(raw_tgkill(getpid(), 0, 0), EINVAL);
	CHECK_ERR(raw_tgkill(-1, gettid(), 0), EINVAL);
	CHECK_ERR(raw_tgkill(getpid(), -5, 0), EINVAL);
	CHECK_ERR(raw_tkill(0, 0), EINVAL);
	CHECK_ERR(raw_tkill(-1, 0), EINVAL);
}

static void missing_thread_esrch(void)
{
	/* Above the largest pid_max (4194304). */
	CHECK_ERR(raw_tgkill(getpid(), 4194305, 0), ESRCH);
	CHECK_ERR(raw_tkill(4194305, 0), ESRCH);
	CHECK_ERR(raw_tgkill(4194305, 4194305, SIGKILL), ESRCH);
}

static void wrong_group_esrch(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		pause();
		_exit(0);
	}
	/* Our thread is not in the child's group, nor the child in ours. */
	CHECK_ERR(raw_tgkill(p, gettid(), 0), ESRCH);
	CHECK_ERR(raw_tgkill(getpid(), p, 0), ESRCH);
	CHECK_EQ(raw_tgkill(p, p, 0), 0);
	CHECK_EQ(raw_tgkill(p, p, SIGKILL), 0);
	CHECK_SIGNALED(mt_wait(p), SIGKILL);
	CHECK_ERR(raw_tgkill(p, p, 0), ESRCH);
}

static void zombie_accepts_probe(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0)
		_exit(3);
	siginfo_t si;
	CHECK_SYS(waitid(P_PID, p, &si, WEXITED | WNOWAIT));
	/* An unreaped zombie is still found. */
	CHECK_EQ(raw_tgkill(p, p, 0), 0);
	CHECK_EQ(raw_tkill(p, SIGTERM), 0);
	CHECK_EXITED(mt_wait(p), 3);
}

static void unprivileged_eperm(void)
{
	pid_t parent = getpid();
	AS_USER(
		CHILD_ERR(raw_tgkill(parent, parent, 0), EPERM);
		CHILD_ERR(raw_tkill(parent, SIGTERM), EPERM);
		CHILD_CHECK(raw_tgkill(getpid(), gettid(), 0) == 0);
	);
}

static volatile pid_t hit_tid;

static void on_usr1(int sig)
{
	(void)sig;
	hit_tid = gettid();
}

static volatile pid_t worker_tid;
static volatile int worker_stop;

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = gettid();
	while (!worker_stop)
		usleep(1000);
	return NULL;
}

static void delivered_to_named_thread(void)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = on_usr1;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	/* Neither thread blocks SIGUSR1: the handler must run on the thread
	 * tgkill named, not on whichever the kernel picks. */
	hit_tid = 0;
	worker_tid = 0;
	worker_stop = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, worker, NULL));
	while (!worker_tid)
		usleep(1000);
	CHECK_EQ(raw_tgkill(getpid(), worker_tid, SIGUSR1), 0);
	for (int i = 0; i < 10000 && !hit_tid; i++)
		usleep(1000);
	worker_stop = 1;
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(hit_tid, worker_tid);
}

static const struct mt_case cases[] = {
	MT_CASE(tgkill_self_probe),
	MT_CASE(bad_signal_einval),
	MT_CASE(bad_ids_einval),
	MT_CASE(missing_thread_esrch),
	MT_CASE(wrong_group_esrch),
	MT_CASE(zombie_accepts_probe),
	MT_CASE(unprivileged_eperm),
	MT_CASE(delivered_to_named_thread),
};

MT_MAIN(cases)
