//go:build ignore

/* exit_status: how a process's end is encoded and reported: exit codes
 * 0-255 through wait4 and waitid, death by each catchable fatal signal
 * with and without a handler that re-raises, a process killed while
 * blocking the signal (SIGKILL) or ignoring it (no death), exit_group from
 * a signal handler, status seen by a parent that ignores SIGCHLD (no
 * zombie), and the status of the last thread's exit. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void every_exit_code(void)
{
	for (int code = 0; code < 256; code += 17) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0)
			_exit(code);
		int st = mt_wait(pid);
		CHECK_EXITED(st, code);
	}
}

static void waitid_status_is_full_code(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(200);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED));
	CHECK_EQ(si.si_status, 200);
	CHECK_EQ(si.si_code, CLD_EXITED);
}

static void reraise_from_handler(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

static void handler_reraises_to_die(void)
{
	int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};
	for (size_t i = 0; i < 4; i++) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0) {
			signal(sigs[i], reraise_from_handler);
			raise(sigs[i]);
			_exit(0);
		}
		int st = mt_wait(pid);
		CHECK_SIGNALED(st, sigs[i]);
	}
}

static void exit_group_in_handler(int sig)
{
	syscall(SYS_exit_group, 40 + sig);
}

static void exit_from_signal_handler(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		signal(SIGUSR1, exit_group_in_handler);
		raise(SIGUSR1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 40 + SIGUSR1);
}

static void sigkill_while_blocking_everything(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		close(p[1]);
		char c;
		if (read(p[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	CHECK_SYS(kill(pid, SIGKILL));
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void no_zombie_when_sigchld_ignored(void)
{
	signal(SIGCHLD, SIG_IGN);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(3);
	/* wait blocks until the child is gone, then ECHILD. */
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), ECHILD);
	signal(SIGCHLD, SIG_DFL);
}

static void *last_thread_exits(void *arg)
{
	(void)arg;
	usleep(50000);
	syscall(SYS_exit, 77);
	return NULL;
}

static void last_thread_exit_code_is_process_status(void)
{
	/* The main thread exits first with SYS_exit(5); the other thread
	 * exits last with 77: the process status is the last thread's. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, last_thread_exits, NULL);
		syscall(SYS_exit, 5);
	}
	int st = mt_wait(pid);
	/* Without exit_group, the code of the thread that exits last is
	 * the one reported. */
	CHECK_EXITED(st, 77);
}

static void abort_status(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* abort() unblocks and resets SIGABRT if needed. */
		signal(SIGABRT, SIG_IGN);
		abort();
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGABRT);
}

static void status_macros_consistent(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(1);
	int st = mt_wait(pid);
	CHECK(WIFEXITED(st));
	CHECK(!WIFSIGNALED(st));
	CHECK(!WIFSTOPPED(st));
	CHECK_EQ(st, 0x100);
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		pause();
		_exit(0);
	}
	kill(pid, SIGTERM);
	st = mt_wait(pid);
	CHECK_EQ(st, SIGTERM);
}

static const struct mt_case cases[] = {
	MT_CASE(every_exit_code),
	MT_CASE(waitid_status_is_full_code),
	MT_CASE(handler_reraises_to_die),
	MT_CASE(exit_from_signal_handler),
	MT_CASE(sigkill_while_blocking_everything),
	MT_CASE(no_zombie_when_sigchld_ignored),
	MT_CASE(last_thread_exit_code_is_process_status),
	MT_CASE(abort_status),
	MT_CASE(status_macros_consistent),
};

MT_MAIN(cases)
