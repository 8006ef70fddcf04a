//go:build ignore

/* pty_ioctls: the terminal ioctls beyond modes and job control on a
 * pseudo-terminal pair: flushing queues (TCFLSH, TCSAFLUSH), draining,
 * breaks and flow control, TIOCOUTQ, the line discipline number,
 * exclusive mode, VMIN and VTIME in non-canonical reads, IXON flow
 * control, and canonical mode's word erase and literal next. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* open_pty opens a master and its unlocked slave, both non-blocking. */
static int open_pty(int *m, int *s)
{
	*m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (*m < 0)
		return -1;
	int unlock = 0, n;
	if (ioctl(*m, TIOCSPTLCK, &unlock) || ioctl(*m, TIOCGPTN, &n))
		return -1;
	char path[32];
	snprintf(path, sizeof(path), "/dev/pts/%d", n);
	*s = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (*s < 0)
		return -1;
	/* No echo: the master reads only what the slave writes. */
	struct termios t;
	if (tcgetattr(*s, &t))
		return -1;
	t.c_lflag &= ~ECHO;
	return tcsetattr(*s, TCSANOW, &t);
}

/* readable waits up to 5 s for fd to be readable (Linux moves pty data
 * between the ends asynchronously). */
static int readable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	return poll(&pf, 1, 5000);
}

static void tcflush_discards_own_input(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	char b[16];
	CHECK_EQ(write(m, "abc\n", 4), 4);
	CHECK_EQ(readable(s), 1);
	CHECK_SYS(tcflush(s, TCIFLUSH));
	CHECK_ERR(read(s, b, sizeof(b)), EAGAIN);
	/* The master's input is what the slave wrote. */
	CHECK_EQ(write(s, "xyz\n", 4), 4);
	CHECK_EQ(readable(m), 1);
	CHECK_SYS(tcflush(m, TCIFLUSH));
	CHECK_ERR(read(m, b, sizeof(b)), EAGAIN);
	/* Output already sent stays sent. */
	CHECK_EQ(write(s, "out\n", 4), 4);
	CHECK_EQ(readable(m), 1);
	CHECK_SYS(tcflush(s, TCOFLUSH));
	CHECK_EQ(mt_read_n(m, b, 5, 1000), 5);
	CHECK_ERR(ioctl(s, TCFLSH, 7), EINVAL);
	CHECK_SYS(tcflush(s, TCIOFLUSH));
}

static void tcsaflush_discards_input(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_EQ(write(m, "pending\n", 8), 8);
	CHECK_EQ(readable(s), 1);
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	CHECK_SYS(tcsetattr(s, TCSAFLUSH, &t));
	char b[16];
	CHECK_ERR(read(s, b, sizeof(b)), EAGAIN);
	/* TCSADRAIN keeps it. */
	CHECK_EQ(write(m, "kept\n", 5), 5);
	CHECK_EQ(readable(s), 1);
	CHECK_SYS(tcsetattr(s, TCSADRAIN, &t));
	CHECK_EQ(read(s, b, sizeof(b)), 5);
}

static void drain_break_flow(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_SYS(tcdrain(s));
	CHECK_SYS(tcdrain(m));
	CHECK_SYS(tcsendbreak(s, 0));
	CHECK_SYS(ioctl(s, TCSBRKP, 0));
	CHECK_SYS(tcflow(s, TCOOFF));
	CHECK_SYS(tcflow(s, TCOON));
	CHECK_SYS(tcflow(m, TCION));
	CHECK_ERR(ioctl(s, TCXONC, 9), EINVAL);
	/* Written output is with the master at once: nothing queued. */
	CHECK_EQ(write(s, "q", 1), 1);
	int n = -1;
	CHECK_SYS(ioctl(s, TIOCOUTQ, &n));
	CHECK_EQ(n, 0);
	n = -1;
	CHECK_SYS(ioctl(m, TIOCOUTQ, &n));
	CHECK_EQ(n, 0);
}

static void line_discipline_and_exclusive(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	int d = -1;
	CHECK_SYS(ioctl(s, TIOCGETD, &d));
	CHECK_EQ(d, 0); /* N_TTY */
	d = 0;
	CHECK_SYS(ioctl(s, TIOCSETD, &d));
	d = 99;
	CHECK_ERR(ioctl(s, TIOCSETD, &d), EINVAL);
	CHECK_ERR(ioctl(s, TIOCGETD, (void *)8), EFAULT);
	int e = -1;
	CHECK_SYS(ioctl(s, TIOCGEXCL, &e));
	CHECK_EQ(e, 0);
	CHECK_SYS(ioctl(s, TIOCEXCL));
	CHECK_SYS(ioctl(s, TIOCGEXCL, &e));
	CHECK_EQ(e, 1);
	/* The master's flag is its own. */
	CHECK_SYS(ioctl(m, TIOCGEXCL, &e));
	CHECK_EQ(e, 0);
	CHECK_SYS(ioctl(s, TIOCNXCL));
	CHECK_SYS(ioctl(s, TIOCGEXCL, &e));
	CHECK_EQ(e, 0);
}

/* raw sets non-canonical mode with VMIN and VTIME on the slave. */
static int raw(int s, int vmin, int vtime)
{
	struct termios t;
	if (tcgetattr(s, &t))
		return -1;
	cfmakeraw(&t);
	t.c_cc[VMIN] = vmin;
	t.c_cc[VTIME] = vtime;
	return tcsetattr(s, TCSANOW, &t);
}

static void raw_vmin_zero_returns_at_once(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_SYS(fcntl(s, F_SETFL, O_RDWR)); /* blocking */
	CHECK_SYS(raw(s, 0, 0));
	char b[8];
	CHECK_EQ(read(s, b, sizeof(b)), 0);
	struct pollfd pf = { .fd = s, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	CHECK_EQ(write(m, "z", 1), 1);
	CHECK_EQ(readable(s), 1);
	CHECK_EQ(read(s, b, sizeof(b)), 1);
}

static void raw_vmin_waits_for_count(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_SYS(raw(s, 3, 0));
	CHECK_EQ(write(m, "ab", 2), 2);
	/* Wait until the two bytes are there. */
	int n = 0;
	for (int i = 0; i < 500 && n < 2; i++) {
		CHECK_SYS(ioctl(s, FIONREAD, &n));
		if (n < 2)
			usleep(10000);
	}
	CHECK_EQ(n, 2);
	/* Poll wants VMIN bytes. */
	struct pollfd pf = { .fd = s, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 50), 0);
	/* A non-blocking read takes what there is. */
	char b[8];
	CHECK_EQ(read(s, b, sizeof(b)), 2);
	CHECK_EQ(write(m, "cde", 3), 3);
	CHECK_EQ(readable(s), 1);
	CHECK_EQ(read(s, b, sizeof(b)), 3);
	CHECK_MEMEQ(b, "cde", 3);
	/* A blocking read of VMIN returns once that many arrived. */
	CHECK_SYS(fcntl(s, F_SETFL, O_RDWR));
	CHECK_EQ(write(m, "fgh", 3), 3);
	CHECK_EQ(read(s, b, sizeof(b)), 3);
}

static int vtime_master;

static void *write_soon(void *arg)
{
	(void)arg;
	usleep(50000);
	write(vtime_master, "w", 1);
	return NULL;
}

static void raw_vtime_read_timeout(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_SYS(raw(s, 0, 2)); /* 0.2 s */
	char b[8];
	/* Non-blocking: nothing to wait for. */
	CHECK_ERR(read(s, b, sizeof(b)), EAGAIN);
	CHECK_SYS(fcntl(s, F_SETFL, O_RDWR));
	int64_t t0 = mt_now_ns();
	CHECK_EQ(read(s, b, sizeof(b)), 0);
	int64_t took = mt_now_ns() - t0;
	CHECK_GE(took, 150 * 1000000LL);
	CHECK_LT(took, 5000 * 1000000LL);
	/* Input before the time is up ends the wait. */
	vtime_master = m;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, write_soon, NULL));
	CHECK_SYS(raw(s, 0, 100)); /* 10 s */
	t0 = mt_now_ns();
	CHECK_EQ(read(s, b, sizeof(b)), 1);
	CHECK_LT(mt_now_ns() - t0, 5000 * 1000000LL);
	CHECK_RET0(pthread_join(th, NULL));
}

static void ixon_stop_start_output(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	CHECK_SYS(raw(s, 1, 0));
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	t.c_iflag |= IXON;
	CHECK_SYS(tcsetattr(s, TCSANOW, &t));
	/* ^S stops the slave's output and is not input. */
	CHECK_EQ(write(m, "a\023b", 3), 3);
	int n = 0;
	for (int i = 0; i < 500 && n < 2; i++) {
		CHECK_SYS(ioctl(s, FIONREAD, &n));
		if (n < 2)
			usleep(10000);
	}
	char b[8];
	CHECK_EQ(read(s, b, sizeof(b)), 2);
	CHECK_MEMEQ(b, "ab", 2);
	CHECK_ERR(write(s, "x", 1), EAGAIN);
	struct pollfd pf = { .fd = s, .events = POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	/* ^Q starts it again. */
	CHECK_EQ(write(m, "\021", 1), 1);
	CHECK_EQ(poll(&pf, 1, 5000), 1);
	CHECK_EQ(write(s, "x", 1), 1);
	CHECK_EQ(readable(m), 1);
	CHECK_EQ(read(m, b, sizeof(b)), 1);
	/* tcflow does the same from the slave's side. */
	CHECK_SYS(tcflow(s, TCOOFF));
	CHECK_ERR(write(s, "y", 1), EAGAIN);
	CHECK_SYS(tcflow(s, TCOON));
	CHECK_EQ(write(s, "y", 1), 1);
}

/* read_all reads what fd has within 5 s, until a pause of 100 ms. */
static ssize_t read_all(int fd, char *buf, size_t n)
{
	size_t got = 0;
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int wait = 5000;
	while (got < n && poll(&pf, 1, wait) == 1) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			break;
		got += r;
		wait = 100;
	}
	return got;
}

static void canonical_word_erase_and_literal_next(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	t.c_lflag |= ECHO;
	CHECK_SYS(tcsetattr(s, TCSANOW, &t));
	char b[64];
	/* ^W erases the word before, and the blanks after it. */
	CHECK_EQ(write(m, "foo bar  \027baz\n", 14), 14);
	CHECK_EQ(readable(s), 1);
	CHECK_EQ(read(s, b, sizeof(b)), 8);
	CHECK_MEMEQ(b, "foo baz\n", 8);
	ssize_t n = read_all(m, b, sizeof(b));
	const char *echo = "foo bar  \b \b\b \b\b \b\b \b\b \bbaz\r\n";
	CHECK_EQ(n, (ssize_t)strlen(echo));
	CHECK_MEMEQ(b, echo, strlen(echo));
	/* ^V makes the next character literal: ^U is kept, not a kill. */
	CHECK_EQ(write(m, "a\026\025b\n", 5), 5);
	CHECK_EQ(readable(s), 1);
	CHECK_EQ(read(s, b, sizeof(b)), 4);
	CHECK_MEMEQ(b, "a\025b\n", 4);
	n = read_all(m, b, sizeof(b));
	echo = "a^\b^Ub\r\n";
	CHECK_EQ(n, (ssize_t)strlen(echo));
	CHECK_MEMEQ(b, echo, strlen(echo));
}

/* echo_line writes in to the master of a canonical terminal with echo and
 * lflag changes, and checks the line the slave reads and the echo. */
static void echo_line(tcflag_t clear, const char *in, const char *line, const char *echo)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	t.c_lflag |= ECHO;
	t.c_lflag &= ~clear;
	CHECK_SYS(tcsetattr(s, TCSANOW, &t));
	CHECK_EQ(write(m, in, strlen(in)), (ssize_t)strlen(in));
	CHECK_EQ(readable(s), 1);
	char b[64];
	CHECK_EQ(read(s, b, sizeof(b)), (ssize_t)strlen(line));
	CHECK_MEMEQ(b, line, strlen(line));
	ssize_t n = read_all(m, b, sizeof(b));
	CHECK_EQ(n, (ssize_t)strlen(echo));
	CHECK_MEMEQ(b, echo, strlen(echo));
}

static void canonical_erase_echoes(void)
{
	/* A control character shown as ^A takes two columns to erase. */
	echo_line(0, "a\001\177\n", "a\n", "a^A\b \b\b \b\r\n");
	MT_BAIL();
	/* Without ECHOE the erase character itself is shown. */
	echo_line(ECHOE, "ab\177c\n", "ac\n", "ab^?c\r\n");
	MT_BAIL();
	/* Without ECHOKE a kill shows ^U and, with ECHOK, a new line. */
	echo_line(ECHOKE, "ab\025c\n", "c\n", "ab^U\r\nc\r\n");
	MT_BAIL();
	/* With both, the line is rubbed out. */
	echo_line(0, "ab\025c\n", "c\n", "ab\b \b\b \bc\r\n");
}

static void canonical_utf8_erase(void)
{
	int m, s;
	CHECK_SYS(open_pty(&m, &s));
	struct termios t;
	CHECK_SYS(tcgetattr(s, &t));
	t.c_iflag |= IUTF8;
	CHECK_SYS(tcsetattr(s, TCSANOW, &t));
	/* "aé" then erase: the two bytes of é go together. */
	CHECK_EQ(write(m, "a\xc3\xa9\177b\n", 6), 6);
	CHECK_EQ(readable(s), 1);
	char b[16];
	CHECK_EQ(read(s, b, sizeof(b)), 3);
	CHECK_MEMEQ(b, "ab\n", 3);
}

static const struct mt_case cases[] = {
	MT_CASE(tcflush_discards_own_input),
	MT_CASE(tcsaflush_discards_input),
	MT_CASE(drain_break_flow),
	MT_CASE(line_discipline_and_exclusive),
	MT_CASE(raw_vmin_zero_returns_at_once),
	MT_CASE(raw_vmin_waits_for_count),
	MT_CASE(raw_vtime_read_timeout),
	MT_CASE(ixon_stop_start_output),
	MT_CASE(canonical_word_erase_and_literal_next),
	MT_CASE(canonical_erase_echoes),
	MT_CASE(canonical_utf8_erase),
};

MT_MAIN(cases)
