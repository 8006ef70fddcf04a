//go:build ignore

/* poll_select_edge: argument edge cases of poll, ppoll, select, pselect6,
 * epoll_create/epoll_create1/epoll_ctl/epoll_wait/epoll_pwait/
 * epoll_pwait2, and eventfd/eventfd2 (semaphore mode, limits, flags). */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void poll_zero_fds_sleeps(void)
{
	int64_t t0 = mt_now_ns();
	CHECK_EQ(poll(NULL, 0, 30), 0);
	CHECK_GE(mt_now_ns() - t0, 29 * 1000 * 1000);
	CHECK_EQ(poll(NULL, 0, 0), 0);
}

static void poll_nfds_limit(void)
{
	struct rlimit rl;
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	/* More entries than RLIMIT_NOFILE: EINVAL. */
	CHECK_ERR(poll(NULL, rl.rlim_cur + 1, 0), EINVAL);
	CHECK_ERR(poll((struct pollfd *)1, 1, 0), EFAULT);
}

static void poll_negative_fd_ignored(void)
{
	struct pollfd p[2] = {{-1, POLLIN, 0x55}, {-5, POLLOUT, 0}};
	CHECK_EQ(poll(p, 2, 0), 0);
	CHECK_EQ(p[0].revents, 0);
	CHECK_EQ(p[1].revents, 0);
}

static void poll_events_always_reported(void)
{
	/* POLLHUP and POLLERR are reported even when not asked for. */
	int p[2];
	CHECK_SYS(pipe(p));
	close(p[1]);
	struct pollfd pf = {p[0], 0, 0};
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLHUP);
	int q[2];
	CHECK_SYS(pipe(q));
	close(q[0]);
	pf.fd = q[1];
	pf.events = 0;
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLERR);
}

static void poll_same_fd_twice(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "x", 1), 1);
	struct pollfd pf[3] = {{p[0], POLLIN, 0}, {p[0], POLLOUT, 0}, {p[1], POLLOUT, 0}};
	CHECK_EQ(poll(pf, 3, 0), 2);
	CHECK_EQ(pf[0].revents, POLLIN);
	CHECK_EQ(pf[1].revents, 0);
	CHECK_EQ(pf[2].revents, POLLOUT);
}

static void ppoll_timeout_checks(void)
{
	struct pollfd pf = {0, POLLIN, 0};
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(ppoll(&pf, 1, &bad, NULL), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(ppoll(&pf, 1, &neg, NULL), EINVAL);
	/* A bad sigset size. */
	sigset_t s;
	sigemptyset(&s);
	struct timespec zero = {0, 0};
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, &zero, &s, 4), EINVAL);
	CHECK_EQ(syscall(SYS_ppoll, &pf, 1, &zero, NULL, 4), 1);
	/* The remaining time is written back. */
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pe = {p[0], POLLIN, 0};
	struct timespec ts = {0, 20 * 1000 * 1000};
	CHECK_EQ(syscall(SYS_ppoll, &pe, 1, &ts, NULL, 8), 0);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
}

static void select_nfds_and_bad_fd(void)
{
	fd_set r;
	FD_ZERO(&r);
	CHECK_ERR(select(-1, &r, NULL, NULL, NULL), EINVAL);
	FD_SET(50, &r);
	struct timeval tv = {0, 0};
	CHECK_ERR(select(51, &r, NULL, NULL, &tv), EBADF);
	/* Bits beyond nfds are not looked at. */
	FD_ZERO(&r);
	FD_SET(50, &r);
	CHECK_EQ(select(3, &r, NULL, NULL, &tv), 0);
	/* And are cleared on return. */
	CHECK(!FD_ISSET(50, &r));
	struct timeval negtv = {-1, 0};
	CHECK_ERR(select(1, NULL, NULL, NULL, &negtv), EINVAL);
	CHECK_ERR(syscall(SYS_select, 1, (void *)1, NULL, NULL, &tv), EFAULT);
}

static void select_huge_nfds_clamped(void)
{
	/* nfds above the descriptor table size is clamped. */
	struct timeval tv = {0, 0};
	CHECK_EQ(select(1 << 20, NULL, NULL, NULL, &tv), 0);
}

static void select_null_sets_sleep(void)
{
	struct timeval tv = {0, 30000};
	int64_t t0 = mt_now_ns();
	CHECK_EQ(select(0, NULL, NULL, NULL, &tv), 0);
	CHECK_GE(mt_now_ns() - t0, 29 * 1000 * 1000);
	CHECK_EQ(tv.tv_sec, 0);
	CHECK_EQ(tv.tv_usec, 0);
}

static void select_exceptfds_on_pipe(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set e;
	FD_ZERO(&e);
	FD_SET(p[0], &e);
	struct timeval tv = {0, 0};
	/* A pipe never has exceptional conditions, even at hangup. */
	close(p[1]);
	CHECK_EQ(select(p[0] + 1, NULL, NULL, &e, &tv), 0);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, &tv), 1);
}

static void pselect6_sigmask_arg(void)
{
	struct {
		const sigset_t *ss;
		size_t len;
	} arg;
	sigset_t s;
	sigemptyset(&s);
	arg.ss = &s;
	arg.len = 4;
	struct timespec zero = {0, 0};
	CHECK_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &zero, &arg), EINVAL);
	arg.len = 8;
	CHECK_EQ(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &zero, &arg), 0);
	/* A NULL sigset pointer in the struct means no mask change. */
	arg.ss = NULL;
	arg.len = 0;
	CHECK_EQ(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &zero, &arg), 0);
	CHECK_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &zero, (void *)1), EFAULT);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &bad, NULL), EINVAL);
}

static void epoll_create_errors(void)
{
	CHECK_ERR(epoll_create(0), EINVAL);
	CHECK_ERR(epoll_create(-1), EINVAL);
	int e = CHECK_SYS(epoll_create(1));
	CHECK_EQ(fcntl(e, F_GETFD), 0);
	CHECK_ERR(epoll_create1(0x1), EINVAL);
	int c = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_EQ(fcntl(c, F_GETFD), FD_CLOEXEC);
}

static void epoll_ctl_rules(void)
{
	int e = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
	/* Adding itself, a regular file or a bad fd. */
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_ADD, e, &ev), EINVAL);
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_ADD, f, &ev), EPERM);
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_ADD, 999, &ev), EBADF);
	CHECK_ERR(epoll_ctl(p[0], EPOLL_CTL_ADD, p[1], &ev), EINVAL);
	CHECK_SYS(epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev));
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_MOD, p[1], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_DEL, p[1], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(e, 99, p[0], &ev), EINVAL);
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_MOD, p[0], (void *)1), EFAULT);
	/* EPOLLEXCLUSIVE cannot be used with MOD. */
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	CHECK_ERR(epoll_ctl(e, EPOLL_CTL_MOD, p[0], &ev), EINVAL);
	/* DEL ignores the event pointer. */
	CHECK_SYS(epoll_ctl(e, EPOLL_CTL_DEL, p[0], NULL));
}

static void epoll_wait_args(void)
{
	int e = CHECK_SYS(epoll_create1(0));
	struct epoll_event out[4];
	CHECK_ERR(epoll_wait(e, out, 0, 0), EINVAL);
	CHECK_ERR(epoll_wait(e, out, -1, 0), EINVAL);
	CHECK_ERR(epoll_wait(1, out, 4, 0), EINVAL);
	CHECK_ERR(epoll_wait(999, out, 4, 0), EBADF);
	CHECK_EQ(epoll_wait(e, out, 4, 0), 0);
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0xabcdef};
	CHECK_SYS(epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev));
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_ERR(epoll_wait(e, (void *)1, 4, 0), EFAULT);
	CHECK_EQ(epoll_wait(e, out, 4, 0), 1);
	CHECK_EQ(out[0].data.u64, 0xabcdef);
	CHECK_EQ(out[0].events, EPOLLIN);
	sigset_t s;
	sigemptyset(&s);
	CHECK_ERR(syscall(SYS_epoll_pwait, e, out, 4, 0, &s, 4), EINVAL);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(syscall(SYS_epoll_pwait2, e, out, 4, &bad, NULL, 8), EINVAL);
	struct timespec zero = {0, 0};
	CHECK_EQ(syscall(SYS_epoll_pwait2, e, out, 4, &zero, NULL, 8), 1);
}

static void epoll_timeout_elapses(void)
{
	int e = CHECK_SYS(epoll_create1(0));
	struct epoll_event out[1];
	int64_t t0 = mt_now_ns();
	CHECK_EQ(epoll_wait(e, out, 1, 30), 0);
	CHECK_GE(mt_now_ns() - t0, 29 * 1000 * 1000);
}

static void eventfd_semaphore_counts(void)
{
	int fd = CHECK_SYS(eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK));
	uint64_t v;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(read(fd, &v, 8), 8);
		CHECK_EQ(v, 1);
	}
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
	v = 2;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, 1);
}

static void eventfd_limits(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	uint64_t v = UINT64_MAX;
	/* 2^64-1 is not a valid value to add. */
	CHECK_ERR(write(fd, &v, 8), EINVAL);
	v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 1;
	CHECK_ERR(write(fd, &v, 8), EAGAIN);
	/* Short buffers: EINVAL. */
	CHECK_ERR(write(fd, &v, 4), EINVAL);
	CHECK_ERR(read(fd, &v, 7), EINVAL);
	/* Longer ones are fine (8 bytes used). */
	uint64_t big[2];
	CHECK_EQ(read(fd, big, 16), 8);
	CHECK_EQ(big[0], UINT64_MAX - 1);
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
	v = 5;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_ERR(read(fd, (void *)1, 8), EFAULT);
}

static void eventfd_empty_read_bad_buffer(void)
{
	/* An empty non-blocking eventfd says EAGAIN before it looks at the
	 * buffer. */
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	CHECK_ERR(read(fd, (void *)1, 8), EAGAIN);
}

static void eventfd_flags(void)
{
	CHECK_ERR(eventfd(0, 0x2), EINVAL);
	int fd = CHECK_SYS(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	/* The old eventfd syscall takes no flags. */
	int old = CHECK_SYS(syscall(SYS_eventfd, 5));
	CHECK_EQ(fcntl(old, F_GETFD), 0);
	uint64_t v;
	CHECK_EQ(read(old, &v, 8), 8);
	CHECK_EQ(v, 5);
	char link[64];
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "anon_inode:[eventfd]");
}

static void eventfd_poll_states(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	struct pollfd pf = {fd, POLLIN | POLLOUT, 0};
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	uint64_t v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN);
}

static const struct mt_case cases[] = {
	MT_CASE(poll_zero_fds_sleeps),
	MT_CASE(poll_nfds_limit),
	MT_CASE(poll_negative_fd_ignored),
	MT_CASE(poll_events_always_reported),
	MT_CASE(poll_same_fd_twice),
	MT_CASE(ppoll_timeout_checks),
	MT_CASE(select_nfds_and_bad_fd),
	MT_CASE(select_huge_nfds_clamped),
	MT_CASE(select_null_sets_sleep),
	MT_CASE(select_exceptfds_on_pipe),
	MT_CASE(pselect6_sigmask_arg),
	MT_CASE(epoll_create_errors),
	MT_CASE(epoll_ctl_rules),
	MT_CASE(epoll_wait_args),
	MT_CASE(epoll_timeout_elapses),
	MT_CASE(eventfd_semaphore_counts),
	MT_CASE(eventfd_limits),
	MT_CASE(eventfd_empty_read_bad_buffer),
	MT_CASE(eventfd_flags),
	MT_CASE(eventfd_poll_states),
};

MT_MAIN(cases)
