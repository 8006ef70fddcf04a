//go:build ignore

/* s3_poll_kinds: the exact revents poll reports for each kind of
 * descriptor when asked for everything: regular files, directories,
 * memfds, /dev/null, /dev/zero and /proc files always ready for reading
 * and writing; O_PATH descriptors POLLNVAL (but ready to select);
 * eventfd, timerfd and signalfd with plain POLLIN/POLLOUT, inotify and
 * epoll with POLLRDNORM too, only with something to read; the two ends of
 * a pipe; and select agreeing with poll on the same descriptors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define ALL (POLLIN | POLLOUT | POLLPRI | POLLRDNORM | POLLWRNORM | POLLRDBAND | POLLWRBAND)

static short revents(int fd)
{
	struct pollfd p = {.fd = fd, .events = ALL};
	if (poll(&p, 1, 0) < 0)
		return -1;
	return p.revents;
}

#define RW (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

static void files_always_ready(void)
{
	ENTER();
	int f = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(revents(f), RW);
	int ro = CHECK_SYS(open("f", O_RDONLY));
	/* The access mode does not matter to the answer. */
	CHECK_EQ(revents(ro), RW);
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_EQ(revents(d), RW);
	int m = CHECK_SYS(memfd_create("p", 0));
	CHECK_EQ(revents(m), RW);
	int etc = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(revents(etc), RW);
}

static void devices_and_proc(void)
{
	int n = CHECK_SYS(open("/dev/null", O_RDWR));
	CHECK_EQ(revents(n) & RW, RW);
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	CHECK_EQ(revents(z) & RW, RW);
	int p = CHECK_SYS(open("/proc/self/status", O_RDONLY));
	CHECK_EQ(revents(p), RW);
}

static void opath_is_nval(void)
{
	int o = CHECK_SYS(open("/dev/null", O_PATH));
	CHECK_EQ(revents(o), POLLNVAL);
	/* select, which only checks that the number is open, counts it
	 * ready (the default mask of a file without a poll method). */
	fd_set r;
	FD_ZERO(&r);
	FD_SET(o, &r);
	struct timeval tv = {0, 0};
	CHECK_EQ(select(o + 1, &r, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(o, &r));
}

static void eventfd_states(void)
{
	/* eventfd reports POLLIN and POLLOUT only, without the *NORM
	 * twins. */
	int e = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	CHECK_EQ(revents(e), POLLOUT);
	uint64_t one = 1;
	CHECK_EQ(write(e, &one, 8), 8);
	CHECK_EQ(revents(e), POLLIN | POLLOUT);
	/* At the maximum count it cannot take more. */
	uint64_t v;
	CHECK_EQ(read(e, &v, 8), 8);
	uint64_t big = 0xfffffffffffffffeULL;
	CHECK_EQ(write(e, &big, 8), 8);
	CHECK_EQ(revents(e), POLLIN);
}

static void timerfd_and_signalfd(void)
{
	int t = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	CHECK_EQ(revents(t), 0);
	struct itimerspec its = {.it_value = {0, 1}};
	CHECK_SYS(timerfd_settime(t, 0, &its, NULL));
	struct pollfd pf = {.fd = t, .events = POLLIN};
	CHECK_EQ(poll(&pf, 1, 5000), 1);
	/* timerfd and signalfd: POLLIN alone. */
	CHECK_EQ(revents(t), POLLIN);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &m, NULL));
	int s = CHECK_SYS(signalfd(-1, &m, SFD_NONBLOCK));
	CHECK_EQ(revents(s), 0);
	CHECK_SYS(raise(SIGUSR2));
	CHECK_EQ(revents(s), POLLIN);
}

static void inotify_and_epoll(void)
{
	ENTER();
	int in = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	CHECK_SYS(inotify_add_watch(in, ".", IN_CREATE));
	CHECK_EQ(revents(in), 0);
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, in, &ev));
	CHECK_EQ(revents(ep), 0);
	CHECK_SYS(close(CHECK_SYS(open("x", O_CREAT | O_WRONLY, 0644))));
	CHECK_EQ(revents(in), POLLIN | POLLRDNORM);
	/* The epoll instance is readable, never writable. */
	CHECK_EQ(revents(ep), POLLIN | POLLRDNORM);
}

static void pipe_ends(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	/* The read end is never writable, the write end never readable. */
	CHECK_EQ(revents(p[0]), 0);
	CHECK_EQ(revents(p[1]), POLLOUT | POLLWRNORM);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(revents(p[0]), POLLIN | POLLRDNORM);
	CHECK_SYS(close(p[1]));
	CHECK_EQ(revents(p[0]), POLLIN | POLLRDNORM | POLLHUP);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(revents(p[0]), POLLHUP);
}

static void select_agrees(void)
{
	ENTER();
	int f = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	int p[2];
	CHECK_SYS(pipe(p));
	int e = CHECK_SYS(eventfd(0, 0));
	int fds[4] = {f, p[0], p[1], e};
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	int max = 0;
	for (int i = 0; i < 4; i++) {
		FD_SET(fds[i], &r);
		FD_SET(fds[i], &w);
		if (fds[i] > max)
			max = fds[i];
	}
	struct timeval tv = {0, 0};
	/* f: r+w; p[0]: none; p[1]: w; e: w. */
	CHECK_EQ(select(max + 1, &r, &w, NULL, &tv), 4);
	CHECK(FD_ISSET(f, &r) && FD_ISSET(f, &w));
	CHECK(!FD_ISSET(p[0], &r) && !FD_ISSET(p[0], &w));
	CHECK(!FD_ISSET(p[1], &r) && FD_ISSET(p[1], &w));
	CHECK(!FD_ISSET(e, &r) && FD_ISSET(e, &w));
}

static const struct mt_case cases[] = {
	MT_CASE(files_always_ready),
	MT_CASE(devices_and_proc),
	MT_CASE(opath_is_nval),
	MT_CASE(eventfd_states),
	MT_CASE(timerfd_and_signalfd),
	MT_CASE(inotify_and_epoll),
	MT_CASE(pipe_ends),
	MT_CASE(select_agrees),
};

MT_MAIN(cases)
