//go:build ignore

/* s3_epoll_events: what epoll reports for different files and how the
 * wait calls take their timeouts: the legacy epoll_create (size hint, no
 * FD_CLOEXEC) and epoll_create1's flags, data kept per registration and
 * changed by EPOLL_CTL_MOD, EPOLLRDHUP and EPOLLHUP on stream sockets,
 * listening sockets readable on a pending connection, files without poll
 * support refused (EPERM), EPOLLWAKEUP dropped silently, epoll_pwait2 with
 * NULL, zero and non-zero timespecs, and the EINVAL/EFAULT/EBADF errors of
 * the waits. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static long pwait2(int ep, struct epoll_event *ev, int n, const struct timespec *ts,
		   const sigset_t *mask)
{
	return syscall(SYS_epoll_pwait2, ep, ev, n, ts, mask, 8);
}

static void legacy_create(void)
{
	/* Any positive size is a hint only. */
	int a = CHECK_SYS(syscall(SYS_epoll_create, 1));
	int b = CHECK_SYS(syscall(SYS_epoll_create, 100000));
	CHECK_EQ(fcntl(a, F_GETFD), 0);
	CHECK_EQ(fcntl(b, F_GETFD), 0);
	CHECK_ERR(syscall(SYS_epoll_create, 0), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_create, -5), EINVAL);
	/* An epoll instance can watch another one. */
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
	CHECK_SYS(epoll_ctl(a, EPOLL_CTL_ADD, b, &ev));
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(a, out, 2, 0), 0);
	/* epoll_create1 knows only EPOLL_CLOEXEC (O_NONBLOCK is refused). */
	CHECK_ERR(epoll_create1(O_NONBLOCK), EINVAL);
}

static void data_per_registration(void)
{
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	int p[2];
	CHECK_SYS(pipe(p));
	int d = CHECK_SYS(dup(p[0]));
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1122334455667788ULL};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	/* The same file through another descriptor is another
	 * registration with its own data. */
	ev.data.u64 = 42;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, d, &ev));
	CHECK_EQ(write(p[1], "x", 1), 1);
	struct epoll_event out[4];
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 2);
	uint64_t sum = out[0].data.u64 + out[1].data.u64;
	CHECK(sum == 0x1122334455667788ULL + 42);
	/* MOD replaces both the mask and the data. */
	ev.events = EPOLLOUT;
	ev.data.u64 = 7;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, d, &ev));
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].data.u64, 0x1122334455667788ULL);
	ev.events = EPOLLIN;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, d, &ev));
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 2);
	CHECK(out[0].data.u64 == 7 || out[1].data.u64 == 7);
}

static void stream_socket_hangups(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.fd = s[0]};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, s[0], &ev));
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	/* The peer shuts down its writing side: readable, EPOLLRDHUP. */
	CHECK_SYS(shutdown(s[1], SHUT_WR));
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	CHECK_EQ(out[0].events, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
	/* Both sides shut: EPOLLHUP too (reported without asking). */
	CHECK_SYS(shutdown(s[0], SHUT_WR));
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	CHECK_EQ(out[0].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP), EPOLLIN | EPOLLRDHUP | EPOLLHUP);
}

static void listener_readable_on_connect(void)
{
	ENTER();
	int l = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "sock"};
	CHECK_SYS(bind(l, (struct sockaddr *)&a, sizeof a));
	CHECK_SYS(listen(l, 4));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = l};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
	struct epoll_event out[2];
	/* A listener is never writable and readable only with a pending
	 * connection. */
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect(c, (struct sockaddr *)&a, sizeof a));
	CHECK_EQ(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	int acc = CHECK_SYS(accept(l, NULL, NULL));
	CHECK_GE(acc, 0);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
}

static void regular_files_refused(void)
{
	ENTER();
	int f = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN};
	/* Regular files and directories do not support poll wakeups. */
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev), EPERM);
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, d, &ev), EPERM);
	/* An epoll instance cannot watch itself. */
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
	/* Nor does /dev/null (it has no poll method). */
	int n = CHECK_SYS(open("/dev/null", O_RDWR));
	ev.events = EPOLLIN | EPOLLOUT;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, n, &ev), EPERM);
}

static void wakeup_flag_dropped(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = {.events = EPOLLIN | EPOLLWAKEUP, .data.u32 = 9};
	/* Without CAP_BLOCK_SUSPEND (in the initial namespace) EPOLLWAKEUP
	 * is silently dropped, not refused; root natively lacks it too in
	 * its user namespace, so check from an unprivileged child. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
		CHILD_CHECK(write(p[1], "w", 1) == 1);
		struct epoll_event out[1];
		CHILD_CHECK(epoll_wait(ep, out, 1, 0) == 1);
		CHILD_CHECK(out[0].events == EPOLLIN && out[0].data.u32 == 9);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void pwait2_timeouts(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	struct epoll_event out[1];
	struct timespec zero = {0, 0};
	CHECK_EQ(pwait2(ep, out, 1, &zero, NULL), 0);
	struct timespec small = {0, 20 * 1000 * 1000};
	int64_t t0 = mt_now_ns();
	CHECK_EQ(pwait2(ep, out, 1, &small, NULL), 0);
	CHECK_GE(mt_now_ns() - t0, 19 * 1000 * 1000);
	/* The timespec is not written back. */
	CHECK_EQ(small.tv_nsec, 20 * 1000 * 1000);
	/* NULL waits forever: ready data returns at once. */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(pwait2(ep, out, 1, NULL, NULL), 1);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(pwait2(ep, out, 1, &bad, NULL), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(pwait2(ep, out, 1, &neg, NULL), EINVAL);
	CHECK_ERR(pwait2(ep, out, 1, (struct timespec *)1, NULL), EFAULT);
}

static void wait_argument_errors(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event out[1];
	struct timespec zero = {0, 0};
	CHECK_ERR(pwait2(ep, out, 0, &zero, NULL), EINVAL);
	CHECK_ERR(pwait2(ep, out, -1, &zero, NULL), EINVAL);
	CHECK_ERR(pwait2(p[0], out, 1, &zero, NULL), EINVAL);
	CHECK_ERR(pwait2(99, out, 1, &zero, NULL), EBADF);
	/* With a NULL mask the size is not looked at. */
	CHECK_EQ(syscall(SYS_epoll_pwait, ep, out, 1, 0, NULL, 4), 0);
	/* With a mask it must be 8. */
	sigset_t m;
	sigemptyset(&m);
	CHECK_ERR(syscall(SYS_epoll_pwait, ep, out, 1, 0, &m, 4), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 1, &zero, &m, 4), EINVAL);
	/* An unwritable event array fails once there is an event to copy
	 * out. */
	struct epoll_event ev = {.events = EPOLLOUT};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev));
	CHECK_ERR(syscall(SYS_epoll_wait, ep, (struct epoll_event *)1, 1, 0), EFAULT);
	CHECK_ERR(pwait2(ep, (struct epoll_event *)1, 1, &zero, NULL), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(legacy_create),
	MT_CASE(data_per_registration),
	MT_CASE(stream_socket_hangups),
	MT_CASE(listener_readable_on_connect),
	MT_CASE(regular_files_refused),
	MT_CASE(wakeup_flag_dropped),
	MT_CASE(pwait2_timeouts),
	MT_CASE(wait_argument_errors),
};

MT_MAIN(cases)
