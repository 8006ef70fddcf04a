//go:build ignore

/* wait_variants: exit, exit_group, wait4 and waitid: pid selectors, option
 * flags, status encoding, siginfo fields and the documented errors. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child_exit(int code)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(code);
	return pid;
}

static pid_t child_pause(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void exit_code_truncated_to_byte(void)
{
	pid_t pid = CHECK_SYS(child_exit(256 + 7));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 7);
	pid = CHECK_SYS(child_exit(-1));
	st = mt_wait(pid);
	CHECK_EXITED(st, 255);
}

static void *exit_group_thread(void *arg)
{
	(void)arg;
	syscall(SYS_exit_group, 12);
	return NULL;
}

static void exit_group_from_thread(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, exit_group_thread, NULL);
		for (;;)
			pause();
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 12);
}

static void *sleeper_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void exit_of_leader_waits_for_threads(void)
{
	/* SYS_exit in the main thread ends only that thread; the process
	 * ends (and reports the status) when its last thread exits. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, sleeper_thread, NULL);
		syscall(SYS_exit, 3);
		_exit(99);
	}
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	int st;
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	CHECK_SYS(kill(pid, SIGKILL));
	st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void wait4_any_child(void)
{
	pid_t a = CHECK_SYS(child_exit(1));
	pid_t b = CHECK_SYS(child_exit(2));
	int seen = 0;
	for (int i = 0; i < 2; i++) {
		int st;
		pid_t r = CHECK_SYS(wait4(-1, &st, 0, NULL));
		CHECK(WIFEXITED(st));
		if (r == a) {
			CHECK_EQ(WEXITSTATUS(st), 1);
			seen |= 1;
		} else if (r == b) {
			CHECK_EQ(WEXITSTATUS(st), 2);
			seen |= 2;
		} else {
			FAIL("unexpected pid %d", r);
		}
	}
	CHECK_EQ(seen, 3);
	CHECK_ERR(wait4(-1, NULL, 0, NULL), ECHILD);
}

static void wait4_process_group_selectors(void)
{
	/* Child a in its own group, child b in ours. */
	pid_t a = CHECK_SYS(fork());
	if (a == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(a, a);
	pid_t b = CHECK_SYS(child_exit(5));
	int st;
	/* pid 0: any child in our group: b. */
	CHECK_EQ(wait4(0, &st, 0, NULL), b);
	CHECK_EXITED(st, 5);
	/* Nothing else in our group. */
	CHECK_ERR(wait4(0, &st, WNOHANG, NULL), ECHILD);
	/* -pgid selects a's group. */
	CHECK_EQ(wait4(-a, &st, WNOHANG, NULL), 0);
	CHECK_SYS(kill(a, SIGKILL));
	CHECK_EQ(wait4(-a, &st, 0, NULL), a);
	CHECK_SIGNALED(st, SIGKILL);
}

static void wait4_rusage_filled(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		volatile unsigned long x = 0;
		struct timespec a, b;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		do {
			for (int i = 0; i < 100000; i++)
				x += i;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		} while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < 30000000LL);
		_exit(0);
	}
	struct rusage ru;
	memset(&ru, 0xff, sizeof(ru));
	int st;
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK_EXITED(st, 0);
	long us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
	CHECK_GE(us, 20000);
	CHECK_LT(ru.ru_utime.tv_usec, 1000000);
	CHECK_GE(ru.ru_maxrss, 1);
}

static void wait4_errors(void)
{
	CHECK_ERR(wait4(-1, NULL, 0x100, NULL), EINVAL);
	/* WNOWAIT is for waitid only. */
	CHECK_ERR(wait4(-1, NULL, WNOWAIT, NULL), EINVAL);
	CHECK_ERR(wait4(-1, NULL, WNOHANG, NULL), ECHILD);
	/* Not our child (init has no parent here; use a non-existent pid). */
	CHECK_ERR(wait4(99999, NULL, 0, NULL), ECHILD);
	/* INT_MIN as pid is rejected with ESRCH. */
	CHECK_ERR(wait4(-2147483647 - 1, NULL, 0, NULL), ESRCH);
	pid_t pid = CHECK_SYS(child_exit(0));
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_ERR(wait4(pid, NULL, 0, (struct rusage *)1), EFAULT);
	mt_wait(pid);
}

static void wait4_wnohang_then_block(void)
{
	pid_t pid = CHECK_SYS(child_pause());
	int st = 12345;
	CHECK_EQ(wait4(pid, &st, WNOHANG, NULL), 0);
	CHECK_EQ(st, 12345);
	CHECK_SYS(kill(pid, SIGTERM));
	CHECK_EQ(wait4(pid, &st, 0, NULL), pid);
	CHECK_SIGNALED(st, SIGTERM);
}

static void wait4_untraced_and_continued(void)
{
	pid_t pid = CHECK_SYS(child_pause());
	int st;
	CHECK_SYS(kill(pid, SIGSTOP));
	CHECK_EQ(wait4(pid, &st, WUNTRACED, NULL), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_EQ(WSTOPSIG(st), SIGSTOP);
	/* Reported once. */
	CHECK_EQ(wait4(pid, &st, WUNTRACED | WNOHANG, NULL), 0);
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_EQ(wait4(pid, &st, WCONTINUED, NULL), pid);
	CHECK(WIFCONTINUED(st));
	CHECK_EQ(st, 0xffff);
	CHECK_SYS(kill(pid, SIGKILL));
	st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void waitid_siginfo_exited(void)
{
	pid_t pid = CHECK_SYS(child_exit(42));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED));
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 42);
	CHECK_EQ(si.si_uid, getuid());
	CHECK_EQ(si.si_errno, 0);
}

static void waitid_siginfo_killed(void)
{
	pid_t pid = CHECK_SYS(child_pause());
	CHECK_SYS(kill(pid, SIGUSR2));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED));
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGUSR2);
}

static void waitid_siginfo_stopped_continued(void)
{
	pid_t pid = CHECK_SYS(child_pause());
	siginfo_t si;
	CHECK_SYS(kill(pid, SIGSTOP));
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WSTOPPED));
	CHECK_EQ(si.si_code, CLD_STOPPED);
	CHECK_EQ(si.si_status, SIGSTOP);
	CHECK_SYS(kill(pid, SIGCONT));
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WCONTINUED));
	CHECK_EQ(si.si_code, CLD_CONTINUED);
	CHECK_EQ(si.si_status, SIGCONT);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void tstp_in_orphaned_group_discarded(void)
{
	/* Our group has no member whose parent is outside it in this
	 * session (init's parent is outside the namespace): it is orphaned,
	 * and a terminal stop signal with the default action is discarded. */
	pid_t pid = CHECK_SYS(child_pause());
	CHECK_SYS(kill(pid, SIGTSTP));
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WSTOPPED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, 0);
	kill(pid, SIGKILL);
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void waitid_wnohang_zeroes_pid(void)
{
	pid_t pid = CHECK_SYS(child_pause());
	siginfo_t si;
	memset(&si, 0x5a, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, 0);
	CHECK_EQ(si.si_signo, 0);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void waitid_p_all_and_p_pgid(void)
{
	pid_t a = CHECK_SYS(child_exit(1));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_ALL, 0, &si, WEXITED));
	CHECK_EQ(si.si_pid, a);
	pid_t b = CHECK_SYS(child_exit(2));
	memset(&si, 0, sizeof(si));
	/* P_PGID with 0 means our own group. */
	CHECK_SYS(waitid(P_PGID, 0, &si, WEXITED));
	CHECK_EQ(si.si_pid, b);
	pid_t c = CHECK_SYS(child_exit(3));
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PGID, getpgrp(), &si, WEXITED));
	CHECK_EQ(si.si_pid, c);
	CHECK_EQ(si.si_status, 3);
}

static void waitid_errors(void)
{
	siginfo_t si;
	/* No WEXITED/WSTOPPED/WCONTINUED. */
	CHECK_ERR(waitid(P_ALL, 0, &si, WNOHANG), EINVAL);
	CHECK_ERR(waitid(P_ALL, 0, &si, 0), EINVAL);
	CHECK_ERR(waitid((idtype_t)42, 0, &si, WEXITED), EINVAL);
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED | 0x100), EINVAL);
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED), ECHILD);
	CHECK_ERR(waitid(P_PID, 0, &si, WEXITED), EINVAL);
	CHECK_ERR(waitid(P_PGID, -1, &si, WEXITED), EINVAL);
	pid_t pid = CHECK_SYS(child_exit(0));
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_ERR(syscall(SYS_waitid, P_PID, pid, (void *)1, WEXITED, NULL), EFAULT);
	mt_wait(pid);
}

static void waitid_null_infop(void)
{
	pid_t pid = CHECK_SYS(child_exit(0));
	CHECK_EQ(syscall(SYS_waitid, P_PID, pid, NULL, WEXITED, NULL), 0);
	CHECK_ERR(waitpid(pid, NULL, WNOHANG), ECHILD);
}

static void waitid_rusage_arg(void)
{
	pid_t pid = CHECK_SYS(child_exit(0));
	siginfo_t si;
	struct rusage ru;
	memset(&ru, 0xff, sizeof(ru));
	CHECK_EQ(syscall(SYS_waitid, P_PID, pid, &si, WEXITED, &ru), 0);
	CHECK_GE(ru.ru_utime.tv_sec, 0);
	CHECK_LT(ru.ru_utime.tv_usec, 1000000);
	CHECK_GE(ru.ru_stime.tv_usec, 0);
}

static void waitid_wnowait_then_reap(void)
{
	pid_t pid = CHECK_SYS(child_exit(8));
	siginfo_t si;
	for (int i = 0; i < 2; i++) {
		memset(&si, 0, sizeof(si));
		CHECK_SYS(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
		CHECK_EQ(si.si_pid, pid);
		CHECK_EQ(si.si_status, 8);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXITED(st, 8);
}

static void wv_noop(int sig)
{
	(void)sig;
}

static void wait_interrupted_by_signal(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	/* A handler without SA_RESTART makes wait return EINTR. */
	sa.sa_handler = wv_noop;
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	pid_t pid = CHECK_SYS(child_pause());
	struct itimerval it = {{0, 0}, {0, 100000}};
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), EINTR);
	/* With SA_RESTART the wait is restarted. */
	sa.sa_flags = SA_RESTART;
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	pid_t killer = CHECK_SYS(fork());
	if (killer == 0) {
		struct timespec ts = {0, 300 * 1000 * 1000};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_SIGNALED(st, SIGKILL);
	mt_wait(killer);
}

static void wall_sees_clone_children(void)
{
	pid_t pid = CHECK_SYS(syscall(SYS_clone, SIGUSR1, 0, 0, 0, 0));
	if (pid == 0)
		_exit(2);
	int st;
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK_EXITED(st, 2);
	pid = CHECK_SYS(child_exit(3));
	/* __WCLONE waits only for non-SIGCHLD children. */
	CHECK_ERR(waitpid(pid, &st, __WCLONE | WNOHANG), ECHILD);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
}

static const struct mt_case cases[] = {
	MT_CASE(exit_code_truncated_to_byte),
	MT_CASE(exit_group_from_thread),
	MT_CASE(exit_of_leader_waits_for_threads),
	MT_CASE(wait4_any_child),
	MT_CASE(wait4_process_group_selectors),
	MT_CASE(wait4_rusage_filled),
	MT_CASE(wait4_errors),
	MT_CASE(wait4_wnohang_then_block),
	MT_CASE(wait4_untraced_and_continued),
	MT_CASE(waitid_siginfo_exited),
	MT_CASE(waitid_siginfo_killed),
	MT_CASE(waitid_siginfo_stopped_continued),
	MT_CASE(tstp_in_orphaned_group_discarded),
	MT_CASE(waitid_wnohang_zeroes_pid),
	MT_CASE(waitid_p_all_and_p_pgid),
	MT_CASE(waitid_errors),
	MT_CASE(waitid_null_infop),
	MT_CASE(waitid_rusage_arg),
	MT_CASE(waitid_wnowait_then_reap),
	MT_CASE(wait_interrupted_by_signal),
	MT_CASE(wall_sees_clone_children),
};

MT_MAIN(cases)
