//go:build ignore

/* ioctl_tty: generic ioctls (FIONBIO, FIONREAD, FIOCLEX/FIONCLEX), TTY
 * ioctls on things that are not terminals (ENOTTY), and a pseudo-terminal
 * pair: TIOCGPTN/TIOCSPTLCK, termios round trips, canonical mode with
 * echo, window size, and acquiring a controlling terminal. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void tcgets_not_a_tty(void)
{
	struct termios t;
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ioctl(p[0], TCGETS, &t), ENOTTY);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(ioctl(fd, TCGETS, &t), ENOTTY);
	int n = CHECK_SYS(open("/dev/null", O_RDWR));
	CHECK_ERR(ioctl(n, TCGETS, &t), ENOTTY);
	CHECK_ERR(ioctl(999, TCGETS, &t), EBADF);
	errno = 0;
	CHECK_EQ(isatty(p[0]), 0);
	CHECK_EQ(errno, ENOTTY);
	CHECK_ERR(tcgetpgrp(p[0]), ENOTTY);
}

static void winsz_not_a_tty(void)
{
	struct winsize ws;
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ioctl(p[0], TIOCGWINSZ, &ws), ENOTTY);
	CHECK_ERR(ioctl(p[0], TIOCSWINSZ, &ws), ENOTTY);
	CHECK_ERR(ioctl(p[0], TIOCSCTTY, 0), ENOTTY);
	CHECK_ERR(ioctl(p[0], 0x5401ff, 0), ENOTTY);
}

static void fionbio_toggles_nonblock(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int on = 1;
	CHECK_SYS(ioctl(p[0], FIONBIO, &on));
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	char c;
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);
	int off = 0;
	CHECK_SYS(ioctl(p[0], FIONBIO, &off));
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
	/* It also works on regular files. */
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_SYS(ioctl(fd, FIONBIO, &on));
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(ioctl(fd, FIONBIO, (int *)8), EFAULT);
}

static void fionread_pipe_and_file(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "abcdef", 6), 6);
	int n = 0;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 6);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(lseek(fd, 10, SEEK_SET), 10);
	long size = lseek(fd, 0, SEEK_END);
	CHECK_EQ(lseek(fd, 10, SEEK_SET), 10);
	/* On a regular file: bytes from the offset to the end. */
	CHECK_SYS(ioctl(fd, FIONREAD, &n));
	CHECK_EQ(n, size - 10);
}

static void fioclex_fionclex(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_SYS(ioctl(fd, FIOCLEX));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_SYS(ioctl(fd, FIONCLEX));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_ERR(ioctl(999, FIOCLEX), EBADF);
}

/* open_pty opens a master and its unlocked slave. */
static int open_pty(int *master, int *slave)
{
	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (*master < 0)
		return -1;
	int unlock = 0;
	if (ioctl(*master, TIOCSPTLCK, &unlock))
		return -1;
	int n;
	if (ioctl(*master, TIOCGPTN, &n))
		return -1;
	char path[32];
	snprintf(path, sizeof(path), "/dev/pts/%d", n);
	*slave = open(path, O_RDWR | O_NOCTTY);
	return *slave < 0 ? -1 : 0;
}

static void ptmx_lock_and_number(void)
{
	int m = CHECK_SYS(open("/dev/ptmx", O_RDWR | O_NOCTTY));
	int n = -1;
	CHECK_SYS(ioctl(m, TIOCGPTN, &n));
	CHECK_GE(n, 0);
	char path[32];
	snprintf(path, sizeof(path), "/dev/pts/%d", n);
	/* Locked until TIOCSPTLCK 0. */
	CHECK_ERR(open(path, O_RDWR | O_NOCTTY), EIO);
	int lock = -1;
	CHECK_SYS(ioctl(m, TIOCGPTLCK, &lock));
	CHECK_EQ(lock, 1);
	int unlock = 0;
	CHECK_SYS(ioctl(m, TIOCSPTLCK, &unlock));
	int s = CHECK_SYS(open(path, O_RDWR | O_NOCTTY));
	CHECK_EQ(isatty(s), 1);
	CHECK_EQ(isatty(m), 1);
	char name[64];
	CHECK_RET0(ptsname_r(m, name, sizeof(name)));
	CHECK_STREQ(name, path);
}

static void pty_termios_roundtrip(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	CHECK(t.c_lflag & ICANON);
	CHECK(t.c_lflag & ECHO);
	cfmakeraw(&t);
	CHECK_SYS(tcsetattr(s, TCSANOW, &t));
	struct termios u;
	CHECK_SYS(tcgetattr(s, &u));
	CHECK_EQ(u.c_lflag & (ICANON | ECHO), 0);
	CHECK_EQ(u.c_cflag & CSIZE, CS8);
	CHECK_SYS(cfsetospeed(&u, B9600));
	CHECK_SYS(tcsetattr(s, TCSANOW, &u));
	CHECK_SYS(tcgetattr(s, &t));
	CHECK_EQ(cfgetospeed(&t), B9600);
}

static void pty_canonical_echo(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_EQ(write(m, "abc\n", 4), 4);
	char buf[64];
	CHECK_EQ(read(s, buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "abc\n", 4);
	/* The echo comes back with NL mapped to CR NL. */
	struct pollfd pf = { .fd = m, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 1000), 1);
	CHECK_EQ(mt_read_n(m, buf, 5, 1000), 5);
	CHECK_MEMEQ(buf, "abc\r\n", 5);
	/* Output from the slave: ONLCR turns \n into \r\n. */
	CHECK_EQ(write(s, "out\n", 4), 4);
	CHECK_EQ(poll(&pf, 1, 1000), 1);
	CHECK_EQ(mt_read_n(m, buf, 5, 1000), 5);
	CHECK_MEMEQ(buf, "out\r\n", 5);
}

static void pty_canonical_line_editing(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	t.c_lflag &= ~ECHO;
	CHECK_SYS(tcsetattr(s, TCSANOW, &t));
	/* Erase (DEL) removes a character; the line arrives on NL only. */
	CHECK_EQ(write(m, "abx\177c", 5), 5);
	CHECK_SYS(fcntl(s, F_SETFL, O_NONBLOCK));
	char buf[64];
	CHECK_ERR(read(s, buf, sizeof(buf)), EAGAIN);
	CHECK_EQ(write(m, "\n", 1), 1);
	/* The line discipline may run asynchronously: wait for the line. */
	struct pollfd pf = { .fd = s, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 5000), 1);
	CHECK_EQ(read(s, buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "abc\n", 4);
	int n = -1;
	CHECK_SYS(ioctl(s, FIONREAD, &n));
	CHECK_EQ(n, 0);
}

static void pty_winsize(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	struct winsize ws = { .ws_row = 40, .ws_col = 132 };
	CHECK_SYS(ioctl(m, TIOCSWINSZ, &ws));
	struct winsize got;
	memset(&got, 0, sizeof(got));
	CHECK_SYS(ioctl(s, TIOCGWINSZ, &got));
	CHECK_EQ(got.ws_row, 40);
	CHECK_EQ(got.ws_col, 132);
	CHECK_ERR(ioctl(s, TIOCGWINSZ, (void *)8), EFAULT);
}

static void pty_controlling_terminal(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setsid() == getpid());
		CHILD_CHECK(ioctl(s, TIOCSCTTY, 0) == 0);
		CHILD_CHECK(tcgetpgrp(s) == getpid());
		CHILD_CHECK(tcgetsid(s) == getpid());
		int t = open("/dev/tty", O_RDWR);
		CHILD_CHECK(t >= 0);
		CHILD_CHECK(write(t, "tty\n", 4) == 4);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	char buf[16];
	struct pollfd pf = { .fd = m, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 1000), 1);
	CHECK_EQ(mt_read_n(m, buf, 5, 1000), 5);
	CHECK_MEMEQ(buf, "tty\r\n", 5);
	/* We are not its session: TIOCSCTTY as a session leader with a tty
	 * already bound to another session fails. */
	CHECK_ERR(tcgetpgrp(s), ENOTTY);
}

static void pty_master_hangup(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	close(m);
	char buf[4];
	/* Reading a slave whose master is gone: EIO (or EOF). */
	ssize_t r = read(s, buf, sizeof(buf));
	CHECK(r == 0 || (r == -1 && errno == EIO));
	struct pollfd pf = { .fd = s, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK(pf.revents & POLLHUP);
}

static const struct mt_case cases[] = {
	MT_CASE(tcgets_not_a_tty),
	MT_CASE(winsz_not_a_tty),
	MT_CASE(fionbio_toggles_nonblock),
	MT_CASE(fionread_pipe_and_file),
	MT_CASE(fioclex_fionclex),
	MT_CASE(ptmx_lock_and_number),
	MT_CASE(pty_termios_roundtrip),
	MT_CASE(pty_canonical_echo),
	MT_CASE(pty_canonical_line_editing),
	MT_CASE(pty_winsize),
	MT_CASE(pty_controlling_terminal),
	MT_CASE(pty_master_hangup),
};

MT_MAIN(cases)
