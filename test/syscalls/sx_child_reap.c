//go:build ignore

/* sx_child_reap: SIGCHLD and reaping: SIG_IGN and SA_NOCLDWAIT auto-reap
 * (wait ends in ECHILD), SA_NOCLDSTOP, the siginfo of SIGCHLD for exit,
 * kill, stop and continue, waitid WNOHANG and argument errors, and tgkill
 * or tkill of a thread that has exited (ESRCH). */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int nchld;
static atomic_int last_code;
static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	atomic_store(&last_code, si->si_code);
	atomic_fetch_add(&nchld, 1);
}

static void catch_chld(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | flags;
	sigaction(SIGCHLD, &sa, NULL);
	atomic_store(&nchld, 0);
	atomic_store(&last_code, 0);
}

static void wait_handler(int n)
{
	int64_t end = mt_now_ns() + 5000000000LL;
	while (atomic_load(&nchld) < n && mt_now_ns() < end)
		usleep(1000);
}

static void sig_ign_autoreaps(void)
{
	signal(SIGCHLD, SIG_IGN);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(3);
	/* wait blocks until the child is gone, then finds no child. */
	int st;
	CHECK_ERR(waitpid(-1, &st, 0), ECHILD);
	CHECK_ERR(kill(pid, 0), ESRCH);
}

static void nocldwait_autoreaps_handler_runs(void)
{
	/* With SA_RESTART; nocldwait_without_restart_echild is the case
	 * without. */
	catch_chld(SA_NOCLDWAIT | SA_RESTART);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(4);
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), ECHILD);
	wait_handler(1);
	/* Linux still sends SIGCHLD to a handler under SA_NOCLDWAIT. */
	CHECK_EQ(atomic_load(&nchld), 1);
	CHECK_EQ(atomic_load(&last_code), CLD_EXITED);
}

/* parent_sleeps waits (up to five seconds) until the parent sleeps in the
 * kernel. */
static int parent_sleeps(void)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)getppid());
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

static void nocldwait_without_restart_echild(void)
{
	/* The SIGCHLD of an auto-reaped child interrupts the wait, but the
	 * wait looks once more, finds no child at all and says ECHILD. */
	catch_chld(SA_NOCLDWAIT);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		parent_sleeps();
		_exit(4);
	}
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), ECHILD);
	CHECK_ERR(waitpid(-1, &st, 0), ECHILD);
	wait_handler(1);
	CHECK_EQ(atomic_load(&nchld), 1);
	CHECK_EQ(atomic_load(&last_code), CLD_EXITED);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void wait_interrupted_with_child_left_eintr(void)
{
	/* A signal without SA_RESTART while a child still runs: EINTR. */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		close(p[1]);
		parent_sleeps();
		kill(getppid(), SIGUSR1);
		char c;
		(void)read(p[0], &c, 1);
		_exit(5);
	}
	close(p[0]);
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), EINTR);
	close(p[1]);
	CHECK_EXITED(mt_wait(pid), 5);
}

static void nocldstop_silent_on_stop(void)
{
	catch_chld(SA_NOCLDSTOP);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CHECK_EQ(atomic_load(&nchld), 0);
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
	wait_handler(1);
	CHECK_EQ(atomic_load(&nchld), 1);
	CHECK_EQ(atomic_load(&last_code), CLD_KILLED);
}

static int take_chld(siginfo_t *si)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	struct timespec ts = { 10, 0 };
	memset(si, 0, sizeof(*si));
	return sigtimedwait(&s, si, &ts);
}

static void block_chld(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void sigchld_info_exit_and_kill(void)
{
	block_chld();
	siginfo_t si;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(5);
	CHECK_EQ(take_chld(&si), SIGCHLD);
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_uid, getuid());
	CHECK_EQ(si.si_status, 5);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXITED(st, 5);

	pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(kill(pid, SIGTERM));
	CHECK_EQ(take_chld(&si), SIGCHLD);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, SIGTERM);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_SIGNALED(st, SIGTERM);
}

static void sigchld_info_stop_and_continue(void)
{
	block_chld();
	siginfo_t si;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		raise(SIGSTOP);
		for (;;)
			pause(); /* stays alive so the continue stays reportable */
	}
	CHECK_EQ(take_chld(&si), SIGCHLD);
	CHECK_EQ(si.si_code, CLD_STOPPED);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, SIGSTOP);
	siginfo_t wi;
	memset(&wi, 0, sizeof(wi));
	CHECK_SYS(waitid(P_PID, pid, &wi, WSTOPPED));
	CHECK_EQ(wi.si_code, CLD_STOPPED);
	CHECK_EQ(wi.si_status, SIGSTOP);

	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_EQ(take_chld(&si), SIGCHLD);
	CHECK_EQ(si.si_code, CLD_CONTINUED);
	CHECK_EQ(si.si_status, SIGCONT);
	memset(&wi, 0, sizeof(wi));
	CHECK_SYS(waitid(P_PID, pid, &wi, WCONTINUED));
	CHECK_EQ(wi.si_code, CLD_CONTINUED);
	CHECK_EQ(wi.si_pid, pid);
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
}

static void waitid_wnohang_nothing_ready(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		close(p[1]);
		_exit(read(p[0], &c, 1) == 0 ? 0 : 1);
	}
	close(p[0]);
	siginfo_t si;
	memset(&si, 0x5a, sizeof(si));
	int r = waitid(P_PID, pid, &si, WEXITED | WNOHANG);
	int e = errno;
	close(p[1]);
	int st = mt_wait(pid);
	CHECK_EQ(r, 0);
	(void)e;
	/* Nothing to report: si_pid is zeroed. */
	CHECK_EQ(si.si_pid, 0);
	CHECK_EQ(si.si_signo, 0);
	CHECK_EXITED(st, 0);
	CHECK_EQ(waitpid(-1, &st, WNOHANG), -1);
}

static void waitid_and_waitpid_errors(void)
{
	siginfo_t si;
	/* No state change requested. */
	CHECK_ERR(waitid(P_ALL, 0, &si, 0), EINVAL);
	CHECK_ERR(waitid(P_ALL, 0, &si, WNOHANG), EINVAL);
	/* Bad idtype. */
	CHECK_ERR(syscall(SYS_waitid, 42, 0, &si, WEXITED, NULL), EINVAL);
	/* Unknown option bits. */
	CHECK_ERR(waitpid(-1, NULL, 0x10000), EINVAL);
	/* Not a child. */
	CHECK_ERR(waitpid(getpid(), NULL, 0), ECHILD);
	CHECK_ERR(waitid(P_PID, getpid(), &si, WEXITED), ECHILD);
	CHECK_ERR(waitpid(-1, NULL, WNOHANG), ECHILD);
}

static void zombie_stays_after_later_sig_ign(void)
{
	block_chld();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(9);
	siginfo_t si;
	CHECK_EQ(take_chld(&si), SIGCHLD);
	/* Ignoring SIGCHLD now does not reap the existing zombie on Linux. */
	signal(SIGCHLD, SIG_IGN);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXITED(st, 9);
}

static atomic_int exited_tid;
static void *record_tid(void *arg)
{
	(void)arg;
	atomic_store(&exited_tid, (int)syscall(SYS_gettid));
	return NULL;
}

static void tgkill_exited_thread_esrch(void)
{
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, record_tid, NULL));
	CHECK_RET0(pthread_join(th, NULL));
	int tid = atomic_load(&exited_tid);
	CHECK_GT(tid, 0);
	/* pthread_join returns once the kernel cleared the tid word, that is
	 * after the thread is gone from the thread group. */
	CHECK_ERR(syscall(SYS_tgkill, getpid(), tid, 0), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, getpid(), tid, SIGUSR1), ESRCH);
	CHECK_ERR(syscall(SYS_tkill, tid, SIGUSR1), ESRCH);
	/* A live thread of another thread group: wrong tgid. */
	CHECK_ERR(syscall(SYS_tgkill, getpid() + 100000, getpid(), 0), ESRCH);
}

static const struct mt_case cases[] = {
	MT_CASE(sig_ign_autoreaps),
	MT_CASE(nocldwait_autoreaps_handler_runs),
	MT_CASE(nocldwait_without_restart_echild),
	MT_CASE(wait_interrupted_with_child_left_eintr),
	MT_CASE(nocldstop_silent_on_stop),
	MT_CASE(sigchld_info_exit_and_kill),
	MT_CASE(sigchld_info_stop_and_continue),
	MT_CASE(waitid_wnohang_nothing_ready),
	MT_CASE(waitid_and_waitpid_errors),
	MT_CASE(zombie_stays_after_later_sig_ign),
	MT_CASE(tgkill_exited_thread_esrch),
};

MT_MAIN(cases)
