//go:build ignore

/* kill_family: sending signals: kill (pid forms, signal 0, errors), tkill,
 * tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo (si_code rules), and what
 * the receiver's siginfo says. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child_pause(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static int wait_sig(int sig, siginfo_t *si)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	struct timespec ts = {10, 0};
	return sigtimedwait(&set, si, &ts);
}

static void block(int sig)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static void kill_self_siginfo(void)
{
	block(SIGUSR1);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGUSR1, &si), SIGUSR1);
	CHECK_EQ(si.si_code, SI_USER);
	CHECK_EQ(si.si_pid, getpid());
	CHECK_EQ(si.si_uid, getuid());
}

static void kill_signal_zero_probes(void)
{
	CHECK_EQ(kill(getpid(), 0), 0);
	pid_t pid = CHECK_SYS(child_pause());
	CHECK_EQ(kill(pid, 0), 0);
	kill(pid, SIGKILL);
	/* A zombie still exists for kill(2). */
	siginfo_t si;
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_EQ(kill(pid, 0), 0);
	mt_wait(pid);
	CHECK_ERR(kill(pid, 0), ESRCH);
}

static void kill_invalid_signal(void)
{
	CHECK_ERR(kill(getpid(), -1), EINVAL);
	CHECK_ERR(kill(getpid(), 65), EINVAL);
	CHECK_ERR(kill(getpid(), 1000), EINVAL);
}

static void kill_pid_zero_hits_own_group(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* In its own group, with a child of its own. */
		setpgid(0, 0);
		pid_t g = fork();
		if (g == 0) {
			for (;;)
				pause();
		}
		signal(SIGUSR1, SIG_IGN);
		CHILD_CHECK(kill(0, SIGUSR1) == 0);
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g);
		CHILD_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void kill_minus_one_broadcast(void)
{
	/* kill(-1) from a non-init process signals every process it may,
	 * except init and itself. */
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t a = CHECK_SYS(child_pause());
	pid_t b = CHECK_SYS(fork());
	if (b == 0) {
		signal(SIGUSR2, SIG_IGN);
		CHILD_CHECK(kill(-1, SIGUSR2) == 0);
		char c = 1;
		CHILD_CHECK(write(p[1], &c, 1) == 1);
		pause();
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	int st = mt_wait(a);
	CHECK_SIGNALED(st, SIGUSR2);
	/* The sender survived (it ignores SIGUSR2 anyway); init was spared
	 * (we are still here with the default action, which for init does
	 * nothing). */
	CHECK_EQ(kill(b, 0), 0);
	kill(b, SIGKILL);
	mt_wait(b);
}

static void kill_esrch(void)
{
	CHECK_ERR(kill(99999, SIGTERM), ESRCH);
	CHECK_ERR(kill(-99999, SIGTERM), ESRCH);
	/* INT_MIN is refused rather than taken as a group. */
	CHECK_ERR(kill(-2147483647 - 1, SIGTERM), ESRCH);
}

static void tkill_errors(void)
{
	CHECK_ERR(syscall(SYS_tkill, 0, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, -1, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, getpid(), 65), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, 99999, SIGUSR1), ESRCH);
	CHECK_EQ(syscall(SYS_tkill, getpid(), 0), 0);
}

static void tkill_siginfo(void)
{
	block(SIGUSR1);
	CHECK_SYS(syscall(SYS_tkill, syscall(SYS_gettid), SIGUSR1));
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGUSR1, &si), SIGUSR1);
	/* Linux 6.x reports SI_USER here (older kernels SI_TKILL). */
	CHECK(si.si_code == SI_TKILL || si.si_code == SI_USER);
	CHECK_EQ(si.si_pid, getpid());
}

static void tgkill_errors(void)
{
	pid_t me = getpid();
	CHECK_ERR(syscall(SYS_tgkill, 0, me, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, me, 0, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, me, -3, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, me, me, 65), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, 99999, me, SIGUSR1), ESRCH);
	pid_t pid = CHECK_SYS(child_pause());
	/* The thread exists but not in that thread group. */
	CHECK_ERR(syscall(SYS_tgkill, me, pid, SIGUSR1), ESRCH);
	CHECK_EQ(syscall(SYS_tgkill, pid, pid, 0), 0);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void sigqueue_to_self_value(void)
{
	block(SIGRTMIN);
	union sigval v = {.sival_int = 1234};
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN, v));
	siginfo_t si;
	CHECK_EQ(wait_sig(SIGRTMIN, &si), SIGRTMIN);
	CHECK_EQ(si.si_code, SI_QUEUE);
	CHECK_EQ(si.si_value.sival_int, 1234);
	CHECK_EQ(si.si_pid, getpid());
}

static void rt_sigqueueinfo_code_rules(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	/* Another process may not be sent a kernel-looking (>= 0) code or
	 * SI_TKILL. */
	pid_t pid = CHECK_SYS(child_pause());
	si.si_code = SI_USER;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), EPERM);
	si.si_code = SI_KERNEL;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), EPERM);
	si.si_code = SI_TKILL;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), EPERM);
	si.si_code = SI_QUEUE;
	CHECK_EQ(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), 0);
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGUSR1);
	/* To itself, any code goes. */
	block(SIGUSR2);
	memset(&si, 0, sizeof(si));
	si.si_code = SI_USER;
	si.si_pid = 777;
	CHECK_EQ(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR2, &si), 0);
	siginfo_t got;
	CHECK_EQ(wait_sig(SIGUSR2, &got), SIGUSR2);
	CHECK_EQ(got.si_code, SI_USER);
	CHECK_EQ(got.si_pid, 777);
}

static void rt_sigqueueinfo_errors(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_code = SI_QUEUE;
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), 65, &si), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, 99999, SIGUSR1, &si), ESRCH);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_rt_tgsigqueueinfo, getpid(), 99999, SIGUSR1, &si), ESRCH);
	CHECK_ERR(syscall(SYS_rt_tgsigqueueinfo, getpid(), 0, SIGUSR1, &si), EINVAL);
	CHECK_ERR(syscall(SYS_rt_tgsigqueueinfo, 0, getpid(), SIGUSR1, &si), EINVAL);
}

static void sigkill_cannot_be_blocked(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		signal(SIGTERM, SIG_IGN);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 0);
	CHECK_SYS(kill(pid, SIGTERM));
	CHECK_SYS(kill(pid, SIGKILL));
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void sigcont_resumes_stopped(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		_exit(c);
	}
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	char c = 33;
	CHECK_EQ(write(p[1], &c, 1), 1);
	CHECK_SYS(kill(pid, SIGCONT));
	st = mt_wait(pid);
	CHECK_EXITED(st, 33);
}

static volatile int got_usr1_thread;

static void record_usr1(int sig)
{
	(void)sig;
	got_usr1_thread = (int)syscall(SYS_gettid);
}

static void *idle_thread(void *arg)
{
	int *tid = arg;
	*tid = (int)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

static void tgkill_targets_thread(void)
{
	signal(SIGUSR1, record_usr1);
	static int tid;
	tid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, idle_thread, &tid));
	while (__atomic_load_n(&tid, __ATOMIC_SEQ_CST) == 0)
		sched_yield();
	got_usr1_thread = 0;
	CHECK_SYS(syscall(SYS_tgkill, getpid(), tid, SIGUSR1));
	for (int i = 0; i < 1000 && got_usr1_thread == 0; i++) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(got_usr1_thread, tid);
	pthread_cancel(th);
	pthread_join(th, NULL);
}

static void init_survives_unhandled_signals(void)
{
	/* As init, a signal with the default action that we did not handle
	 * is not delivered from inside our namespace. */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(kill(getpid(), SIGTERM));
	CHECK_SYS(kill(getpid(), SIGHUP));
	sigset_t pend;
	CHECK_SYS(sigpending(&pend));
	CHECK(!sigismember(&pend, SIGUSR1));
}

static const struct mt_case cases[] = {
	MT_CASE(kill_self_siginfo),
	MT_CASE(kill_signal_zero_probes),
	MT_CASE(kill_invalid_signal),
	MT_CASE(kill_pid_zero_hits_own_group),
	MT_CASE(kill_minus_one_broadcast),
	MT_CASE(kill_esrch),
	MT_CASE(tkill_errors),
	MT_CASE(tkill_siginfo),
	MT_CASE(tgkill_errors),
	MT_CASE(sigqueue_to_self_value),
	MT_CASE(rt_sigqueueinfo_code_rules),
	MT_CASE(rt_sigqueueinfo_errors),
	MT_CASE(sigkill_cannot_be_blocked),
	MT_CASE(sigcont_resumes_stopped),
	MT_CASE(tgkill_targets_thread),
	MT_CASE(init_survives_unhandled_signals),
};

MT_MAIN(cases)
