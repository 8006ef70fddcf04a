//go:build ignore

/* s3_kill_perms: who may signal whom: an unprivileged sender needs its
 * real or effective uid to match the target's real or saved uid (all four
 * pairings checked, and none matching is EPERM even for signal 0),
 * SIGCONT is allowed within a session whatever the ids, a process group
 * with some members out of reach still counts as signalled, and kill(-1)
 * reports success once any process was tried. */
#include "moattest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* target forks a child with the given ids that sleeps until killed (in
 * its own session when newsess) and returns its pid once the ids are
 * set. */
static pid_t target(uid_t r, uid_t e, uid_t s, int newsess)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (newsess)
			setsid();
		if (setresuid(r, e, s) != 0)
			_exit(9);
		write(p[1], "r", 1);
		for (;;)
			pause();
	}
	char c;
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		return -1;
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* sender runs body as (r, e, s) in a child and returns its exit code. */
#define SENDER(r, e, s, body)                                               \
	({                                                                  \
		pid_t __c = fork();                                         \
		if (__c == 0) {                                             \
			if (setresuid(r, e, s) != 0)                        \
				_exit(98);                                  \
			body;                                               \
			_exit(0);                                           \
		}                                                           \
		int __st = mt_wait(__c);                                    \
		WIFEXITED(__st) ? WEXITSTATUS(__st) : 97;                   \
	})

static void uid_pairings(void)
{
	/* Target: real 2001, effective 2002, saved 2003. */
	pid_t t = CHECK_SYS(target(2001, 2002, 2003, 1));
	/* Sender real == target real. */
	int r1 = SENDER(2001, 3000, 3000, _exit(kill(t, 0) == 0 ? 0 : 1));
	/* Sender real == target saved. */
	int r2 = SENDER(2003, 3000, 3000, _exit(kill(t, 0) == 0 ? 0 : 1));
	/* Sender effective == target real. */
	int r3 = SENDER(3000, 2001, 3000, _exit(kill(t, 0) == 0 ? 0 : 1));
	/* Sender effective == target saved. */
	int r4 = SENDER(3000, 2003, 3000, _exit(kill(t, 0) == 0 ? 0 : 1));
	/* The target's effective uid does not count. */
	int r5 = SENDER(2002, 2002, 2002, _exit(kill(t, 0) == -1 && errno == EPERM ? 0 : 1));
	/* The sender's saved uid does not count either. */
	int r6 = SENDER(3000, 3000, 2001, _exit(kill(t, 0) == -1 && errno == EPERM ? 0 : 1));
	reap(t);
	CHECK_EQ(r1, 0);
	CHECK_EQ(r2, 0);
	CHECK_EQ(r3, 0);
	CHECK_EQ(r4, 0);
	CHECK_EQ(r5, 0);
	CHECK_EQ(r6, 0);
}

static void no_match_eperm_even_signal_zero(void)
{
	pid_t t = CHECK_SYS(target(2001, 2001, 2001, 1));
	int r = SENDER(3000, 3000, 3000, {
		if (kill(t, 0) != -1 || errno != EPERM)
			_exit(1);
		if (kill(t, SIGTERM) != -1 || errno != EPERM)
			_exit(2);
		if (syscall(SYS_tgkill, t, t, SIGTERM) != -1 || errno != EPERM)
			_exit(3);
		union sigval v = {0};
		if (sigqueue(t, SIGUSR1, v) != -1 || errno != EPERM)
			_exit(4);
	});
	/* The target survived. */
	CHECK_SYS(kill(t, 0));
	reap(t);
	CHECK_EQ(r, 0);
}

static void root_may_signal_anyone(void)
{
	pid_t t = CHECK_SYS(target(2001, 2001, 2001, 1));
	CHECK_SYS(kill(t, 0));
	CHECK_SYS(kill(t, SIGTERM));
	int st = mt_wait(t);
	CHECK_SIGNALED(st, SIGTERM);
}

static void sigcont_within_session(void)
{
	/* The target stays in our session. */
	pid_t t = CHECK_SYS(target(2001, 2001, 2001, 0));
	int r = SENDER(3000, 3000, 3000, {
		if (kill(t, SIGCONT) != 0)
			_exit(1);
		/* Other signals are still refused. */
		if (kill(t, SIGUSR1) != -1 || errno != EPERM)
			_exit(2);
	});
	reap(t);
	CHECK_EQ(r, 0);
}

static void sigcont_other_session_eperm(void)
{
	pid_t t = CHECK_SYS(target(2001, 2001, 2001, 1));
	int r = SENDER(3000, 3000, 3000, _exit(kill(t, SIGCONT) == -1 && errno == EPERM ? 0 : 1));
	reap(t);
	CHECK_EQ(r, 0);
}

static void group_with_unreachable_members(void)
{
	/* A process group led by a sender-owned process plus a root-owned
	 * member. */
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t leader = CHECK_SYS(fork());
	if (leader == 0) {
		setpgid(0, 0);
		pid_t m = fork();
		if (m == 0) {
			/* Stays root. */
			for (;;)
				pause();
		}
		setresuid(3000, 3000, 3000);
		write(p[1], &m, sizeof m);
		for (;;)
			pause();
	}
	pid_t member;
	CHECK_EQ(read(p[0], &member, sizeof member), sizeof member);
	/* Wait until the leader has dropped to uid 3000. */
	int r = SENDER(3000, 3000, 3000, {
		for (int i = 0; i < 5000 && kill(leader, 0) != 0; i++)
			usleep(1000);
		/* One member can be signalled: success. */
		if (kill(-leader, 0) != 0)
			_exit(1);
	});
	int r2 = SENDER(4000, 4000, 4000, _exit(kill(-leader, 0) == -1 && errno == EPERM ? 0 : 1));
	kill(member, SIGKILL);
	reap(leader);
	CHECK_EQ(r, 0);
	CHECK_EQ(r2, 0);
}

static void kill_minus_one_counts_attempts(void)
{
	pid_t t = CHECK_SYS(target(2001, 2001, 2001, 1));
	/* Every other process is out of reach, yet kill(-1) reports success
	 * because processes were tried (EPERM does not count as a
	 * failure). */
	int r = SENDER(3000, 3000, 3000, _exit(kill(-1, 0) == 0 ? 0 : 1));
	CHECK_SYS(kill(t, 0));
	reap(t);
	CHECK_EQ(r, 0);
}

static void signal_own_process_after_setuid(void)
{
	/* A process may always signal itself, whatever its ids. */
	int r = SENDER(3000, 4000, 5000, {
		if (kill(getpid(), 0) != 0)
			_exit(1);
		signal(SIGUSR1, SIG_IGN);
		if (kill(getpid(), SIGUSR1) != 0)
			_exit(2);
	});
	CHECK_EQ(r, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(uid_pairings),
	MT_CASE(no_match_eperm_even_signal_zero),
	MT_CASE(root_may_signal_anyone),
	MT_CASE(sigcont_within_session),
	MT_CASE(sigcont_other_session_eperm),
	MT_CASE(group_with_unreachable_members),
	MT_CASE(kill_minus_one_counts_attempts),
	MT_CASE(signal_own_process_after_setuid),
};

MT_MAIN(cases)
