//go:build ignore

/* pgrp_session: process groups and sessions: setpgid/getpgid/getpgrp/
 * setsid/getsid and their documented errors, and signals sent to groups. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* sync_child forks a child that runs fn and then waits for a byte on a
 * pipe before exiting with fn's result. */
static pid_t spawn_waiting(int *release, int (*fn)(void))
{
	int p[2], q[2];
	if (pipe(p) != 0 || pipe(q) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		close(q[0]);
		int r = fn ? fn() : 0;
		char c = 1;
		if (write(q[1], &c, 1) != 1)
			_exit(98);
		if (read(p[0], &c, 1) < 0)
			_exit(97);
		_exit(r);
	}
	close(p[0]);
	close(q[1]);
	char c;
	if (read(q[0], &c, 1) != 1)
		return -1;
	close(q[0]);
	*release = p[1];
	return pid;
}

static void release_child(int fd)
{
	char c = 0;
	if (write(fd, &c, 1) < 0) {
	}
	close(fd);
}

static int do_setsid(void)
{
	return setsid() > 0 ? 0 : 1;
}

static int do_setpgid_self(void)
{
	return setpgid(0, 0) == 0 ? 0 : 1;
}

static void getpgid_forms(void)
{
	CHECK_EQ(getpgid(0), getpgrp());
	CHECK_EQ(getpgid(getpid()), getpgrp());
	CHECK_EQ(syscall(SYS_getpgrp), getpgid(0));
	CHECK_ERR(getpgid(99999), ESRCH);
	CHECK_ERR(getpgid(-1), ESRCH);
}

static void getsid_forms(void)
{
	CHECK_EQ(getsid(0), getsid(getpid()));
	CHECK_ERR(getsid(99999), ESRCH);
	CHECK_ERR(getsid(-5), ESRCH);
	int rel;
	pid_t pid = CHECK_SYS(spawn_waiting(&rel, do_setsid));
	CHECK_EQ(getsid(pid), pid);
	CHECK_EQ(getpgid(pid), pid);
	release_child(rel);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void setpgid_child_new_group(void)
{
	int rel;
	pid_t pid = CHECK_SYS(spawn_waiting(&rel, NULL));
	CHECK_EQ(getpgid(pid), getpgrp());
	CHECK_SYS(setpgid(pid, 0));
	CHECK_EQ(getpgid(pid), pid);
	/* Moving it back into our group is allowed (same session). */
	CHECK_SYS(setpgid(pid, getpgrp()));
	CHECK_EQ(getpgid(pid), getpgrp());
	release_child(rel);
	mt_wait(pid);
}

static void setpgid_join_sibling_group(void)
{
	int r1, r2;
	pid_t a = CHECK_SYS(spawn_waiting(&r1, do_setpgid_self));
	pid_t b = CHECK_SYS(spawn_waiting(&r2, NULL));
	CHECK_EQ(getpgid(a), a);
	CHECK_SYS(setpgid(b, a));
	CHECK_EQ(getpgid(b), a);
	release_child(r1);
	release_child(r2);
	mt_wait(a);
	mt_wait(b);
}

static void setpgid_einval_negative(void)
{
	CHECK_ERR(setpgid(0, -1), EINVAL);
	/* pid -1 with pgid 0 makes pgid -1: EINVAL before the lookup. */
	CHECK_ERR(setpgid(-1, 0), EINVAL);
	CHECK_ERR(setpgid(-1, 1), ESRCH);
}

static void setpgid_esrch_not_child(void)
{
	CHECK_ERR(setpgid(99999, 0), ESRCH);
	/* A grandchild is not our child. */
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pid_t g = fork();
		if (g == 0) {
			pause();
			_exit(0);
		}
		if (write(p[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		int st;
		waitpid(g, &st, 0);
		_exit(0);
	}
	pid_t g;
	CHECK_EQ(read(p[0], &g, sizeof(g)), sizeof(g));
	CHECK_ERR(setpgid(g, 0), ESRCH);
	kill(g, SIGKILL);
	mt_wait(pid);
}

static void setpgid_eperm_session_leader(void)
{
	int rel;
	pid_t pid = CHECK_SYS(spawn_waiting(&rel, do_setsid));
	/* The child is a session leader: its group cannot change. */
	CHECK_ERR(setpgid(pid, pid), EPERM);
	/* It is in another session: it cannot move into our group either. */
	CHECK_ERR(setpgid(pid, getpgrp()), EPERM);
	release_child(rel);
	mt_wait(pid);
}

static void setpgid_eperm_other_session_group(void)
{
	/* A child in our session cannot join a group that lives in another
	 * session. */
	int r1, r2;
	pid_t leader = CHECK_SYS(spawn_waiting(&r1, do_setsid));
	pid_t b = CHECK_SYS(spawn_waiting(&r2, NULL));
	CHECK_ERR(setpgid(b, leader), EPERM);
	/* Nor a group that does not exist. */
	CHECK_ERR(setpgid(b, 99999), EPERM);
	release_child(r1);
	release_child(r2);
	mt_wait(leader);
	mt_wait(b);
}

static void setpgid_eacces_after_exec(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_CLOEXEC));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *argv[] = {"/bin/sleep", "5", NULL};
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	char c;
	/* EOF once the exec closed the pipe. */
	CHECK_EQ(read(p[0], &c, 1), 0);
	CHECK_ERR(setpgid(pid, pid), EACCES);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void setsid_eperm_group_leader(void)
{
	/* We are a process group leader (init). */
	CHECK_EQ(getpgrp(), getpid());
	CHECK_ERR(setsid(), EPERM);
	/* A child that made its own group cannot start a session. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setpgid(0, 0) == 0);
		CHILD_CHECK(setsid() == -1 && errno == EPERM);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void setsid_twice_fails(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pid_t s = setsid();
		CHILD_CHECK(s == getpid());
		CHILD_CHECK(getsid(0) == s && getpgrp() == s);
		CHILD_CHECK(setsid() == -1 && errno == EPERM);
		/* Its own child stays in the new session. */
		pid_t g = fork();
		if (g == 0)
			_exit(getsid(0) == s ? 0 : 1);
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void setsid_no_controlling_tty(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setsid() > 0);
		CHILD_CHECK(open("/dev/tty", O_RDWR) == -1 && errno == ENXIO);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void kill_process_group(void)
{
	pid_t a = CHECK_SYS(fork());
	if (a == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(a, a);
	pid_t b = CHECK_SYS(fork());
	if (b == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(setpgid(b, a));
	CHECK_SYS(kill(-a, SIGTERM));
	int st = mt_wait(a);
	CHECK_SIGNALED(st, SIGTERM);
	st = mt_wait(b);
	CHECK_SIGNALED(st, SIGTERM);
}

static void killpg_errors(void)
{
	CHECK_ERR(kill(-99999, SIGTERM), ESRCH);
	CHECK_ERR(killpg(99999, 0), ESRCH);
	CHECK_ERR(killpg(-1, SIGTERM), EINVAL);
}

static void tcgetpgrp_without_tty(void)
{
	/* stdin is /dev/null: not a terminal. */
	CHECK_ERR(tcgetpgrp(0), ENOTTY);
	CHECK_ERR(tcsetpgrp(0, getpgrp()), ENOTTY);
	CHECK_ERR(tcgetpgrp(-1), EBADF);
	CHECK_ERR(tcgetsid(0), ENOTTY);
}

static void group_survives_leader_exit(void)
{
	/* The group lives on while a member does, so a child can still
	 * join it after the leader exited and was reaped. */
	int rl;
	pid_t leader = CHECK_SYS(spawn_waiting(&rl, do_setpgid_self));
	int r;
	pid_t member = CHECK_SYS(spawn_waiting(&r, NULL));
	CHECK_SYS(setpgid(member, leader));
	release_child(rl);
	int st = mt_wait(leader);
	CHECK_EXITED(st, 0);
	CHECK_EQ(getpgid(member), leader);
	int r2;
	pid_t late = CHECK_SYS(spawn_waiting(&r2, NULL));
	CHECK_SYS(setpgid(late, leader));
	CHECK_EQ(getpgid(late), leader);
	release_child(r);
	release_child(r2);
	mt_wait(member);
	mt_wait(late);
	/* Once the last member is gone, the group id is free again. */
	int r3;
	pid_t again = CHECK_SYS(spawn_waiting(&r3, NULL));
	CHECK_ERR(setpgid(again, leader), EPERM);
	release_child(r3);
	mt_wait(again);
}

static const struct mt_case cases[] = {
	MT_CASE(getpgid_forms),
	MT_CASE(getsid_forms),
	MT_CASE(setpgid_child_new_group),
	MT_CASE(setpgid_join_sibling_group),
	MT_CASE(setpgid_einval_negative),
	MT_CASE(setpgid_esrch_not_child),
	MT_CASE(setpgid_eperm_session_leader),
	MT_CASE(setpgid_eperm_other_session_group),
	MT_CASE(setpgid_eacces_after_exec),
	MT_CASE(setsid_eperm_group_leader),
	MT_CASE(setsid_twice_fails),
	MT_CASE(setsid_no_controlling_tty),
	MT_CASE(kill_process_group),
	MT_CASE(killpg_errors),
	MT_CASE(tcgetpgrp_without_tty),
	MT_CASE(group_survives_leader_exit),
};

MT_MAIN(cases)
