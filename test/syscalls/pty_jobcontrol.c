//go:build ignore

/* pty_jobcontrol: controlling terminals and job control on
 * pseudo-terminals: acquiring a terminal on open or with TIOCSCTTY,
 * O_NOCTTY, /dev/tty, TIOCSPGRP's rules, ^C and ^Z to the foreground
 * group, SIGTTIN and SIGTTOU for background processes, TIOCNOTTY, and
 * the hang-ups when the master closes or the session leader exits, and
 * the SIGHUP and SIGCONT of a stopped job whose group becomes orphaned. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct pty {
	int m, s;
	char path[32];
};

/* open_pty opens a master and its unlocked slave, both O_NOCTTY. */
static int open_pty(struct pty *p)
{
	p->m = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (p->m < 0)
		return -1;
	int unlock = 0, n;
	if (ioctl(p->m, TIOCSPTLCK, &unlock) || ioctl(p->m, TIOCGPTN, &n))
		return -1;
	snprintf(p->path, sizeof(p->path), "/dev/pts/%d", n);
	p->s = open(p->path, O_RDWR | O_NOCTTY);
	return p->s < 0 ? -1 : 0;
}

/* take makes the calling child a session leader controlling p. */
static void take(struct pty *p)
{
	CHILD_CHECK(setsid() == getpid());
	CHILD_CHECK(ioctl(p->s, TIOCSCTTY, 0) == 0);
}

/* wait_sig waits up to 5 s for sig, which the caller blocks. */
static int wait_sig(int sig, siginfo_t *info)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	struct timespec ts = { 5, 0 };
	return sigtimedwait(&s, info, &ts);
}

static void block(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void open_acquires_controlling_tty(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setsid() == getpid());
		/* No terminal yet. */
		CHILD_CHECK(open("/dev/tty", O_RDWR) == -1 && errno == ENXIO);
		CHILD_CHECK(tcgetpgrp(p.s) == -1 && errno == ENOTTY);
		/* O_NOCTTY does not acquire; a plain open does. */
		int a = open(p.path, O_RDWR | O_NOCTTY);
		CHILD_CHECK(a >= 0);
		CHILD_CHECK(tcgetpgrp(a) == -1 && errno == ENOTTY);
		int b = open(p.path, O_RDWR);
		CHILD_CHECK(b >= 0);
		CHILD_CHECK(tcgetpgrp(b) == getpid());
		CHILD_CHECK(tcgetsid(a) == getpid());
		int t = open("/dev/tty", O_RDWR);
		CHILD_CHECK(t >= 0);
		CHILD_CHECK(isatty(t));
		/* A forked child shares it; after setsid it has none. */
		pid_t c = fork();
		if (c == 0) {
			CHILD_CHECK(tcgetpgrp(b) == getppid());
			CHILD_CHECK(setsid() == getpid());
			CHILD_CHECK(open("/dev/tty", O_RDWR) == -1 && errno == ENXIO);
			CHILD_CHECK(tcgetpgrp(b) == -1 && errno == ENOTTY);
			_exit(0);
		}
		int st;
		CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* The master answers TIOCGPGRP for anyone: nobody controls it now
	 * that the session leader exited. */
	pid_t pg = -1;
	CHECK_SYS(ioctl(p.m, TIOCGPGRP, &pg));
	CHECK_EQ(pg, 0);
}

static void tiocsctty_rules(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	int ready[2], done[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(pipe(done));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* Not a session leader (the test made its own group). */
		CHILD_CHECK(ioctl(p.s, TIOCSCTTY, 0) == -1 && errno == EPERM);
		take(&p);
		/* Again: a no-op. */
		CHILD_CHECK(ioctl(p.s, TIOCSCTTY, 0) == 0);
		/* A second terminal: the session already has one. */
		struct pty q;
		CHILD_CHECK(open_pty(&q) == 0);
		CHILD_CHECK(ioctl(q.s, TIOCSCTTY, 0) == -1 && errno == EPERM);
		/* The master end is never a controlling terminal. */
		CHILD_CHECK(ioctl(p.m, TIOCNOTTY) == -1 && errno == ENOTTY);
		pid_t sid = 0;
		CHILD_CHECK(ioctl(p.m, TIOCGSID, &sid) == 0 && sid == getpid());
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		char c;
		CHILD_CHECK(read(done[0], &c, 1) == 1);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	/* Another session's terminal, from outside it. */
	pid_t other = CHECK_SYS(fork());
	if (other == 0) {
		CHILD_CHECK(setsid() == getpid());
		CHILD_CHECK(ioctl(p.s, TIOCSCTTY, 0) == -1 && errno == EPERM);
		CHILD_CHECK(tcgetpgrp(p.s) == -1 && errno == ENOTTY);
		CHILD_CHECK(ioctl(p.s, TIOCNOTTY) == -1 && errno == ENOTTY);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(other), 0);
	pid_t pg = 0, sid = 0;
	CHECK_SYS(ioctl(p.m, TIOCGPGRP, &pg));
	CHECK_EQ(pg, pid);
	CHECK_SYS(ioctl(p.m, TIOCGSID, &sid));
	CHECK_EQ(sid, pid);
	CHECK_EQ(write(done[1], "d", 1), 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void tiocspgrp_rules(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		take(&p);
		pid_t outside = getpgid(getppid());
		CHILD_CHECK(tcsetpgrp(p.s, outside) == -1 && errno == EPERM);
		CHILD_CHECK(tcsetpgrp(p.s, 0x3fffff0) == -1 && errno == ESRCH);
		pid_t neg = -5;
		CHILD_CHECK(ioctl(p.s, TIOCSPGRP, &neg) == -1 && errno == EINVAL);
		CHILD_CHECK(ioctl(p.s, TIOCSPGRP, (void *)8) == -1 && errno == EFAULT);
		/* A group of the session: a child's. */
		int sync[2];
		CHILD_CHECK(pipe(sync) == 0);
		pid_t c = fork();
		if (c == 0) {
			setpgid(0, 0);
			char x;
			read(sync[0], &x, 1);
			_exit(0);
		}
		CHILD_CHECK(setpgid(c, c) == 0 || errno == EACCES);
		CHILD_CHECK(tcsetpgrp(p.s, c) == 0);
		CHILD_CHECK(tcgetpgrp(p.s) == c);
		/* The master reports the foreground group but cannot set it. */
		pid_t me = getpid(), got = 0;
		CHILD_CHECK(ioctl(p.m, TIOCGPGRP, &got) == 0 && got == c);
		CHILD_CHECK(ioctl(p.m, TIOCSPGRP, &me) == -1 && errno == ENOTTY);
		/* Now we are in the background, SIGTTOU ignored as shells do:
		 * we may take the foreground back. */
		signal(SIGTTOU, SIG_IGN);
		CHILD_CHECK(tcsetpgrp(p.s, getpid()) == 0);
		CHILD_CHECK(tcgetpgrp(p.s) == getpid());
		CHILD_CHECK(write(sync[1], "x", 1) == 1);
		int st;
		CHILD_CHECK(waitpid(c, &st, 0) == c);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void ctrl_c_sends_sigint(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	int ready[2];
	CHECK_SYS(pipe(ready));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		block(SIGINT);
		block(SIGQUIT);
		take(&p);
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		siginfo_t si;
		CHILD_CHECK(wait_sig(SIGINT, &si) == SIGINT);
		CHILD_CHECK(si.si_code == SI_KERNEL);
		CHILD_CHECK(wait_sig(SIGQUIT, &si) == SIGQUIT);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(write(p.m, "\003", 1), 1);
	CHECK_EQ(write(p.m, "\034", 1), 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

/* In a session led by a child of the test, a grandchild in its own
 * process group is not orphaned (its parent is in another group of the
 * same session), so stop signals stop it. */
static void ctrl_z_stops_foreground_job(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	int ready[2];
	CHECK_SYS(pipe(ready));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		take(&p);
		pid_t job = fork();
		if (job == 0) {
			setpgid(0, 0);
			for (;;)
				pause();
		}
		setpgid(job, job);
		signal(SIGTTOU, SIG_IGN);
		CHILD_CHECK(tcsetpgrp(p.s, job) == 0);
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		int st;
		CHILD_CHECK(waitpid(job, &st, WUNTRACED) == job);
		CHILD_CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTSTP);
		kill(job, SIGKILL);
		CHILD_CHECK(waitpid(job, &st, 0) == job);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(write(p.m, "\032", 1), 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

/* bg_job runs fn in a background grandchild of a session leader
 * controlling p and returns its wait status (WUNTRACED) to the leader. */
static int bg_job(struct pty *p, void (*fn)(struct pty *))
{
	pid_t job = fork();
	if (job == 0) {
		setpgid(0, 0);
		fn(p);
		_exit(0);
	}
	setpgid(job, job);
	int st;
	if (waitpid(job, &st, WUNTRACED) != job)
		return -1;
	if (WIFSTOPPED(st)) {
		kill(job, SIGKILL);
		int st2;
		waitpid(job, &st2, 0);
	}
	return st;
}

static void bg_read(struct pty *p)
{
	char c;
	ssize_t r = read(p->s, &c, 1);
	_exit(r == -1 && errno == EIO ? 5 : 6);
}

static void bg_read_ignoring(struct pty *p)
{
	signal(SIGTTIN, SIG_IGN);
	bg_read(p);
}

static void bg_tcsetpgrp(struct pty *p)
{
	tcsetpgrp(p->s, getpgrp());
	_exit(7);
}

static void bg_write_tostop(struct pty *p)
{
	ssize_t r = write(p->s, "x", 1);
	_exit(r == 1 ? 8 : 9);
}

static void background_access_signals(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		take(&p);
		int st = bg_job(&p, bg_read);
		CHILD_CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN);
		st = bg_job(&p, bg_read_ignoring);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);
		st = bg_job(&p, bg_tcsetpgrp);
		CHILD_CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
		/* Output from the background is allowed until TOSTOP. */
		st = bg_job(&p, bg_write_tostop);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 8);
		struct termios t;
		CHILD_CHECK(tcgetattr(p.s, &t) == 0);
		t.c_lflag |= TOSTOP;
		CHILD_CHECK(tcsetattr(p.s, TCSANOW, &t) == 0);
		st = bg_job(&p, bg_write_tostop);
		CHILD_CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void orphaned_background_read_eio(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		take(&p);
		pid_t c = fork();
		if (c == 0) {
			setpgid(0, 0);
			pause();
			_exit(0);
		}
		setpgid(c, c);
		signal(SIGTTOU, SIG_IGN);
		CHILD_CHECK(tcsetpgrp(p.s, c) == 0);
		signal(SIGTTOU, SIG_DFL);
		/* The leader's own group has no parent in the session: it is
		 * orphaned, so its background read fails instead of stopping. */
		char x;
		CHILD_CHECK(read(p.s, &x, 1) == -1 && errno == EIO);
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void tiocnotty_hangs_up_foreground(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		block(SIGHUP);
		block(SIGCONT);
		take(&p);
		CHILD_CHECK(ioctl(p.s, TIOCNOTTY) == 0);
		sigset_t pend;
		CHILD_CHECK(sigpending(&pend) == 0);
		CHILD_CHECK(sigismember(&pend, SIGHUP) && sigismember(&pend, SIGCONT));
		CHILD_CHECK(tcgetpgrp(p.s) == -1 && errno == ENOTTY);
		CHILD_CHECK(open("/dev/tty", O_RDWR) == -1 && errno == ENXIO);
		/* Free again: it can be taken back. */
		CHILD_CHECK(ioctl(p.s, TIOCSCTTY, 0) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void leader_exit_hangs_up_foreground(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	int res[2], ready[2];
	CHECK_SYS(pipe(res));
	CHECK_SYS(pipe(ready));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		take(&p);
		pid_t job = fork();
		if (job == 0) {
			block(SIGHUP);
			setpgid(0, 0);
			CHILD_CHECK(write(ready[1], "r", 1) == 1);
			siginfo_t si;
			int s = wait_sig(SIGHUP, &si);
			char r = s == SIGHUP && si.si_code == SI_KERNEL ? 'H' : 'T';
			write(res[1], &r, 1);
			_exit(0);
		}
		setpgid(job, job);
		signal(SIGTTOU, SIG_IGN);
		CHILD_CHECK(tcsetpgrp(p.s, job) == 0);
		char c;
		CHILD_CHECK(read(ready[0], &c, 1) == 1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	char r = 0;
	CHECK_EQ(read(res[0], &r, 1), 1);
	CHECK_EQ(r, 'H');
	pid_t pg = -1;
	CHECK_SYS(ioctl(p.m, TIOCGPGRP, &pg));
	CHECK_EQ(pg, 0);
}

static void master_close_hangs_up_session(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	int ready[2];
	CHECK_SYS(pipe(ready));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		block(SIGHUP);
		close(p.m);
		take(&p);
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		siginfo_t si;
		CHILD_CHECK(wait_sig(SIGHUP, &si) == SIGHUP);
		/* The session lost its terminal. */
		CHILD_CHECK(open("/dev/tty", O_RDWR) == -1 && errno == ENXIO);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	close(p.m);
	CHECK_EXITED(mt_wait(pid), 0);
}

/* A stopped job whose process group the exit of its parent orphans gets
 * SIGHUP then SIGCONT, so it does not stay stopped forever. */
static void orphaned_stopped_job_hup_cont(void)
{
	int res[2];
	CHECK_SYS(pipe(res));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setsid() == getpid());
		pid_t job = fork();
		if (job == 0) {
			block(SIGHUP);
			setpgid(0, 0);
			raise(SIGSTOP);
			/* Continued: SIGHUP must be pending. */
			sigset_t pend;
			sigpending(&pend);
			char r = sigismember(&pend, SIGHUP) ? 'H' : 'N';
			write(res[1], &r, 1);
			_exit(0);
		}
		setpgid(job, job);
		int st;
		CHILD_CHECK(waitpid(job, &st, WUNTRACED) == job && WIFSTOPPED(st));
		_exit(0);
	}
	close(res[1]);
	CHECK_EXITED(mt_wait(pid), 0);
	char r = 0;
	CHECK_EQ(read(res[0], &r, 1), 1);
	CHECK_EQ(r, 'H');
}

/* stat_tty reads tty_nr and tpgid from /proc/self/stat. */
static int stat_tty(unsigned *nr, int *tpgid)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	char st;
	int ppid, pgrp, sid;
	return sscanf(p + 2, "%c %d %d %d %u %d", &st, &ppid, &pgrp, &sid, nr, tpgid) == 6 ? 0 : -1;
}

static void proc_stat_tty_fields(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	int n;
	CHECK_SYS(ioctl(p.m, TIOCGPTN, &n));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setsid() == getpid());
		unsigned nr;
		int tpgid;
		CHILD_CHECK(stat_tty(&nr, &tpgid) == 0);
		CHILD_CHECK(nr == 0 && tpgid == -1);
		CHILD_CHECK(ioctl(p.s, TIOCSCTTY, 0) == 0);
		CHILD_CHECK(stat_tty(&nr, &tpgid) == 0);
		/* new_encode_dev(makedev(136, n)) */
		unsigned want = (n & 0xff) | (136 << 8) | ((n & ~0xff) << 12);
		CHILD_CHECK(nr == want);
		CHILD_CHECK(tpgid == getpid());
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

/* A descriptor opened through /dev/tty is /dev/tty (its device number
 * and name) while reading and writing the terminal. */
static void dev_tty_is_itself(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		take(&p);
		int t = open("/dev/tty", O_RDWR);
		CHILD_CHECK(t >= 0);
		struct stat st;
		CHILD_CHECK(fstat(t, &st) == 0);
		CHILD_CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0));
		char path[64], link[64] = { 0 };
		snprintf(path, sizeof(path), "/proc/self/fd/%d", t);
		CHILD_CHECK(readlink(path, link, sizeof(link) - 1) > 0);
		CHILD_CHECK(strcmp(link, "/dev/tty") == 0);
		CHILD_CHECK(strcmp(ttyname(t), "/dev/tty") == 0);
		CHILD_CHECK(tcgetpgrp(t) == getpid());
		CHILD_CHECK(write(t, "hi\n", 3) == 3);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	char buf[8];
	CHECK_EQ(mt_read_n(p.m, buf, 4, 1000), 4);
	CHECK_MEMEQ(buf, "hi\r\n", 4);
}

/* A slave whose master closed is hung up: end of file on read, EIO for
 * writes and terminal ioctls, and poll reports every event. */
static void slave_hung_up_after_master_close(void)
{
	struct pty p;
	CHECK_SYS(open_pty(&p));
	CHECK_EQ(write(p.m, "data\n", 5), 5);
	close(p.m);
	char b[8];
	CHECK_EQ(read(p.s, b, sizeof(b)), 0);
	CHECK_ERR(write(p.s, "x", 1), EIO);
	struct termios t;
	CHECK_ERR(tcgetattr(p.s, &t), EIO);
	pid_t pg = 0;
	CHECK_ERR(ioctl(p.s, TIOCSPGRP, &pg), ENOTTY);
	struct pollfd pf = { .fd = p.s, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLOUT | POLLERR | POLLHUP);
}

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* TIOCGPTPEER opens the slave from the master (what glibc's openpty
 * does first). */
static void tiocgptpeer_opens_slave(void)
{
	int m = CHECK_SYS(open("/dev/ptmx", O_RDWR | O_NOCTTY));
	CHECK_ERR(ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY), EIO);
	int unlock = 0, n;
	CHECK_SYS(ioctl(m, TIOCSPTLCK, &unlock));
	CHECK_SYS(ioctl(m, TIOCGPTN, &n));
	int s = CHECK_SYS(ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
	CHECK_EQ(fcntl(s, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(s, F_GETFL) & O_ACCMODE, O_RDWR);
	char want[32], path[64], link[64] = { 0 };
	snprintf(want, sizeof(want), "/dev/pts/%d", n);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s);
	CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	CHECK_STREQ(link, want);
	CHECK_EQ(write(m, "ok\n", 3), 3);
	char buf[8];
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	CHECK_MEMEQ(buf, "ok\n", 3);
	/* Only the master has a peer: a slave says EIO, other files ENOTTY. */
	CHECK_ERR(ioctl(s, TIOCGPTPEER, O_RDWR), EIO);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ioctl(p[0], TIOCGPTPEER, O_RDWR), ENOTTY);
}

static const struct mt_case cases[] = {
	MT_CASE(open_acquires_controlling_tty),
	MT_CASE(tiocsctty_rules),
	MT_CASE(tiocspgrp_rules),
	MT_CASE(ctrl_c_sends_sigint),
	MT_CASE(ctrl_z_stops_foreground_job),
	MT_CASE(background_access_signals),
	MT_CASE(orphaned_background_read_eio),
	MT_CASE(tiocnotty_hangs_up_foreground),
	MT_CASE(leader_exit_hangs_up_foreground),
	MT_CASE(master_close_hangs_up_session),
	MT_CASE(orphaned_stopped_job_hup_cont),
	MT_CASE(proc_stat_tty_fields),
	MT_CASE(dev_tty_is_itself),
	MT_CASE(slave_hung_up_after_master_close),
	MT_CASE(tiocgptpeer_opens_slave),
};

MT_MAIN(cases)
