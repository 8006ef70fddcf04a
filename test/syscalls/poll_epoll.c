//go:build ignore

/* poll_epoll: poll/ppoll/select/pselect6 on pipes and eventfds (readiness,
 * hang-up, timeouts, signal masks, errors), eventfd2 counters and
 * EFD_SEMAPHORE, and epoll: create/ctl/wait/pwait/pwait2 with level and
 * edge triggering, EPOLLONESHOT, nesting and the documented errors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static int block_usr1_with_handler(sigset_t *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL))
		return -1;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	usr1_count = 0;
	return sigprocmask(SIG_BLOCK, &s, old);
}

static void poll_pipe_readable(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	CHECK_EQ(pf.revents, 0);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN);
	struct pollfd wf = { .fd = p[1], .events = POLLOUT | POLLIN };
	CHECK_EQ(poll(&wf, 1, 0), 1);
	CHECK_EQ(wf.revents, POLLOUT);
}

static void poll_hangup_and_error(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "x", 1), 1);
	close(p[1]);
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLHUP);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLHUP);
	int q[2];
	CHECK_SYS(pipe(q));
	close(q[0]);
	struct pollfd wf = { .fd = q[1], .events = POLLOUT };
	CHECK_EQ(poll(&wf, 1, 0), 1);
	CHECK_EQ(wf.revents, POLLOUT | POLLERR);
}

static void poll_nval_and_negative(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "x", 1), 1);
	struct pollfd pf[3] = {
		{ .fd = 999, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
		{ .fd = p[0], .events = POLLIN },
	};
	pf[1].revents = 0x5a;
	CHECK_EQ(poll(pf, 3, 0), 2);
	CHECK_EQ(pf[0].revents, POLLNVAL);
	CHECK_EQ(pf[1].revents, 0);
	CHECK_EQ(pf[2].revents, POLLIN);
}

static void poll_timeout(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	int64_t t0 = mt_now_ns();
	CHECK_EQ(poll(&pf, 1, 30), 0);
	CHECK_GE(mt_now_ns() - t0, 25 * 1000000LL);
	t0 = mt_now_ns();
	CHECK_EQ(poll(NULL, 0, 20), 0);
	CHECK_GE(mt_now_ns() - t0, 15 * 1000000LL);
}

static void poll_errors(void)
{
	struct rlimit rl;
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	struct pollfd pf = { .fd = 0, .events = POLLIN };
	CHECK_ERR(poll(&pf, rl.rlim_cur + 1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_poll, (void *)8, 1, 0), EFAULT);
}

static int wake_pipe[2];

static void *write_later(void *arg)
{
	(void)arg;
	usleep(30000);
	(void)write(wake_pipe[1], "w", 1);
	return NULL;
}

static void poll_woken_by_thread(void)
{
	CHECK_SYS(pipe(wake_pipe));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, write_later, NULL));
	struct pollfd pf = { .fd = wake_pipe[0], .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 5000), 1);
	CHECK_EQ(pf.revents, POLLIN);
	CHECK_RET0(pthread_join(th, NULL));
}

static void ppoll_sigmask_eintr(void)
{
	sigset_t old;
	CHECK_SYS(block_usr1_with_handler(&old));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(usr1_count, 0);
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	struct timespec ts = { 5, 0 };
	CHECK_ERR(ppoll(&pf, 1, &ts, &old), EINTR);
	CHECK_EQ(usr1_count, 1);
	/* The original mask is back. */
	sigset_t cur;
	CHECK_SYS(sigprocmask(SIG_BLOCK, NULL, &cur));
	CHECK_EQ(sigismember(&cur, SIGUSR1), 1);
	struct timespec bad = { 0, 1000000000L };
	CHECK_ERR(ppoll(&pf, 1, &bad, NULL), EINVAL);
	struct timespec zero = { 0, 0 };
	CHECK_EQ(ppoll(&pf, 1, &zero, NULL), 0);
}

static void select_pipe(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(p[0], &r);
	FD_SET(p[1], &w);
	struct timeval tv = { 0, 0 };
	CHECK_EQ(select(p[1] + 1, &r, &w, NULL, &tv), 1);
	CHECK(!FD_ISSET(p[0], &r));
	CHECK(FD_ISSET(p[1], &w));
	CHECK_EQ(write(p[1], "x", 1), 1);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(p[0], &r));
}

static void select_timeout_updates(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = { 0, 30000 };
	int64_t t0 = mt_now_ns();
	CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, &tv), 0);
	CHECK_GE(mt_now_ns() - t0, 25 * 1000000LL);
	/* Linux writes back the time left: none. */
	CHECK_EQ(tv.tv_sec, 0);
	CHECK_EQ(tv.tv_usec, 0);
	CHECK(!FD_ISSET(p[0], &r));
}

static void select_errors(void)
{
	fd_set r;
	/* Linux clamps nfds to the size of the descriptor table, which
	 * starts at 64 slots and grows only as descriptors are used: grow it
	 * past 100 first, so the check does not depend on what the process
	 * inherited. */
	CHECK_SYS(dup2(0, 200));
	CHECK_SYS(close(200));
	FD_ZERO(&r);
	FD_SET(100, &r);
	struct timeval tv = { 0, 0 };
	CHECK_ERR(select(101, &r, NULL, NULL, &tv), EBADF);
	CHECK_ERR(select(-1, NULL, NULL, NULL, &tv), EINVAL);
	struct timeval bad = { 0, -1 };
	CHECK_ERR(select(0, NULL, NULL, NULL, &bad), EINVAL);
	CHECK_ERR(syscall(SYS_select, 1, (void *)8, NULL, NULL, &tv), EFAULT);
}

static void pselect_sigmask_eintr(void)
{
	sigset_t old;
	CHECK_SYS(block_usr1_with_handler(&old));
	CHECK_SYS(raise(SIGUSR1));
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = { 5, 0 };
	CHECK_ERR(pselect(p[0] + 1, &r, NULL, NULL, &ts, &old), EINTR);
	CHECK_EQ(usr1_count, 1);
}

static void eventfd_counter(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	uint64_t v = 3;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 4;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 0;
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, 7);
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
	v = UINT64_MAX;
	CHECK_ERR(write(fd, &v, 8), EINVAL);
	CHECK_ERR(write(fd, &v, 4), EINVAL);
	char small[4];
	CHECK_ERR(read(fd, small, 4), EINVAL);
	/* An initial value. */
	int fd2 = CHECK_SYS(eventfd(42, 0));
	CHECK_EQ(read(fd2, &v, 8), 8);
	CHECK_EQ(v, 42);
	CHECK_ERR(eventfd(0, 0x2), EINVAL);
	int fd3 = CHECK_SYS(eventfd(0, EFD_CLOEXEC));
	CHECK_EQ(fcntl(fd3, F_GETFD), FD_CLOEXEC);
}

static void eventfd_semaphore(void)
{
	int fd = CHECK_SYS(eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK));
	uint64_t v;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(read(fd, &v, 8), 8);
		CHECK_EQ(v, 1);
	}
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
}

static void eventfd_overflow_blocks(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	uint64_t v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 1;
	CHECK_ERR(write(fd, &v, 8), EAGAIN);
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN);
}

static void eventfd_poll(void)
{
	int fd = CHECK_SYS(eventfd(0, 0));
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	uint64_t v = 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLOUT);
}

static void epoll_create_flags(void)
{
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_EQ(fcntl(ep, F_GETFD), FD_CLOEXEC);
	int ep2 = CHECK_SYS(epoll_create1(0));
	CHECK_EQ(fcntl(ep2, F_GETFD), 0);
	CHECK_ERR(epoll_create1(0x1), EINVAL);
	CHECK_ERR(epoll_create(0), EINVAL);
	CHECK_ERR(epoll_create(-1), EINVAL);
	int ep3 = CHECK_SYS(epoll_create(1));
	close(ep3);
}

static void epoll_ctl_errors(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], &ev), ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev), EBADF);
	CHECK_ERR(epoll_ctl(999, EPOLL_CTL_ADD, p[0], &ev), EBADF);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
	CHECK_ERR(epoll_ctl(p[0], EPOLL_CTL_ADD, p[1], &ev), EINVAL);
	CHECK_ERR(epoll_ctl(ep, 42, p[1], &ev), EINVAL);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), EPERM);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], (struct epoll_event *)8), EFAULT);
	/* EPOLLEXCLUSIVE cannot be used with MOD. */
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), EINVAL);
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL));
}

static void epoll_level_triggered(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1122334455667788ULL };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	struct epoll_event out[4];
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(p[1], "ab", 2), 2);
	for (int i = 0; i < 3; i++) {
		memset(out, 0, sizeof(out));
		CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
		CHECK_EQ(out[0].events, EPOLLIN);
		CHECK_EQ(out[0].data.u64, 0x1122334455667788ULL);
	}
	char buf[2];
	CHECK_EQ(read(p[0], buf, 2), 2);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
}

static void epoll_edge_triggered(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = p[0] };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	struct epoll_event out[4];
	CHECK_EQ(write(p[1], "a", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].data.fd, p[0]);
	/* No new data: no new edge. */
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(p[1], "b", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
}

static void epoll_oneshot(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = 7 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	CHECK_EQ(write(p[1], "a", 1), 1);
	struct epoll_event out[4];
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	CHECK_EQ(write(p[1], "b", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 0);
	/* Still registered: ADD fails, MOD re-arms. */
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev));
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 1);
	CHECK_EQ(out[0].data.u32, 7);
}

static void epoll_out_and_full_pipe(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = 1 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev));
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	char buf[4096];
	memset(buf, 0, sizeof(buf));
	while (write(p[1], buf, sizeof(buf)) > 0) {
	}
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	char drain[65536];
	CHECK_GT(read(p[0], drain, sizeof(drain)), 0);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
}

static void epoll_hup_err(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2], q[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(pipe(q));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 1 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	ev.events = EPOLLOUT;
	ev.data.u32 = 2;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, q[1], &ev));
	close(p[1]);
	close(q[0]);
	struct epoll_event out[4];
	CHECK_EQ(epoll_wait(ep, out, 4, 0), 2);
	for (int i = 0; i < 2; i++) {
		if (out[i].data.u32 == 1)
			CHECK_EQ(out[i].events, EPOLLHUP);
		else
			CHECK_EQ(out[i].events, EPOLLOUT | EPOLLERR);
	}
}

static void epoll_wait_timeout_and_errors(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event out[2];
	int64_t t0 = mt_now_ns();
	CHECK_EQ(epoll_wait(ep, out, 2, 30), 0);
	CHECK_GE(mt_now_ns() - t0, 25 * 1000000LL);
	CHECK_ERR(epoll_wait(ep, out, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_wait, ep, out, -1, 0), EINVAL);
	CHECK_ERR(epoll_wait(999, out, 2, 0), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(epoll_wait(p[0], out, 2, 0), EINVAL);
	struct epoll_event ev = { .events = EPOLLIN };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_ERR(syscall(SYS_epoll_wait, ep, (void *)8, 2, 0), EFAULT);
}

static void epoll_pwait_sigmask(void)
{
	sigset_t old;
	CHECK_SYS(block_usr1_with_handler(&old));
	CHECK_SYS(raise(SIGUSR1));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event out[2];
	CHECK_ERR(epoll_pwait(ep, out, 2, 5000, &old), EINTR);
	CHECK_EQ(usr1_count, 1);
}

static void epoll_pwait2_timespec(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event out[2];
	struct timespec ts = { 0, 30 * 1000000L };
	int64_t t0 = mt_now_ns();
	long r = syscall(SYS_epoll_pwait2, ep, out, 2, &ts, NULL, 8);
	if (r == -1 && errno == ENOSYS)
		SKIP("epoll_pwait2 not available");
	CHECK_EQ(r, 0);
	CHECK_GE(mt_now_ns() - t0, 25 * 1000000LL);
	struct timespec bad = { 0, 1000000000L };
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, &bad, NULL, 8), EINVAL);
}

static void epoll_close_removes(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = { .events = EPOLLIN };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	CHECK_EQ(write(p[1], "x", 1), 1);
	int dupfd = CHECK_SYS(dup(p[0]));
	close(p[0]);
	struct epoll_event out[2];
	/* The file is still open through the dup: still reported. */
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	close(dupfd);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
}

static void epoll_nested(void)
{
	int outer = CHECK_SYS(epoll_create1(0));
	int inner = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct epoll_event ev = { .events = EPOLLIN };
	CHECK_SYS(epoll_ctl(inner, EPOLL_CTL_ADD, p[0], &ev));
	ev.data.u32 = 99;
	CHECK_SYS(epoll_ctl(outer, EPOLL_CTL_ADD, inner, &ev));
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(outer, out, 2, 0), 0);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(epoll_wait(outer, out, 2, 0), 1);
	CHECK_EQ(out[0].data.u32, 99);
	struct pollfd pf = { .fd = inner, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	/* A loop is refused. */
	ev.data.u32 = 1;
	CHECK_ERR(epoll_ctl(inner, EPOLL_CTL_ADD, outer, &ev), ELOOP);
}

static int efd_shared;

static void *signal_eventfd_later(void *arg)
{
	(void)arg;
	usleep(30000);
	uint64_t v = 5;
	(void)write(efd_shared, &v, 8);
	return NULL;
}

static void epoll_woken_by_thread_eventfd(void)
{
	efd_shared = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 5 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, efd_shared, &ev));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, signal_eventfd_later, NULL));
	struct epoll_event out[2];
	int64_t t0 = mt_now_ns();
	CHECK_EQ(epoll_wait(ep, out, 2, 5000), 1);
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	CHECK_EQ(out[0].data.u32, 5);
	CHECK_RET0(pthread_join(th, NULL));
	uint64_t v;
	CHECK_EQ(read(efd_shared, &v, 8), 8);
	CHECK_EQ(v, 5);
}

static void epoll_many_fds(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int fds[64][2];
	for (int i = 0; i < 64; i++) {
		CHECK_SYS(pipe(fds[i]));
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i][0], &ev));
	}
	for (int i = 0; i < 64; i += 2)
		CHECK_EQ(write(fds[i][1], "x", 1), 1);
	struct epoll_event out[64];
	CHECK_EQ(epoll_wait(ep, out, 64, 0), 32);
	int seen[64] = { 0 };
	for (int i = 0; i < 32; i++) {
		CHECK_EQ(out[i].data.u32 % 2, 0);
		seen[out[i].data.u32]++;
	}
	for (int i = 0; i < 64; i += 2)
		CHECK_EQ(seen[i], 1);
	/* maxevents smaller than ready: returns maxevents. */
	CHECK_EQ(epoll_wait(ep, out, 5, 0), 5);
}

static const struct mt_case cases[] = {
	MT_CASE(poll_pipe_readable),
	MT_CASE(poll_hangup_and_error),
	MT_CASE(poll_nval_and_negative),
	MT_CASE(poll_timeout),
	MT_CASE(poll_errors),
	MT_CASE(poll_woken_by_thread),
	MT_CASE(ppoll_sigmask_eintr),
	MT_CASE(select_pipe),
	MT_CASE(select_timeout_updates),
	MT_CASE(select_errors),
	MT_CASE(pselect_sigmask_eintr),
	MT_CASE(eventfd_counter),
	MT_CASE(eventfd_semaphore),
	MT_CASE(eventfd_overflow_blocks),
	MT_CASE(eventfd_poll),
	MT_CASE(epoll_create_flags),
	MT_CASE(epoll_ctl_errors),
	MT_CASE(epoll_level_triggered),
	MT_CASE(epoll_edge_triggered),
	MT_CASE(epoll_oneshot),
	MT_CASE(epoll_out_and_full_pipe),
	MT_CASE(epoll_hup_err),
	MT_CASE(epoll_wait_timeout_and_errors),
	MT_CASE(epoll_pwait_sigmask),
	MT_CASE(epoll_pwait2_timespec),
	MT_CASE(epoll_close_removes),
	MT_CASE(epoll_nested),
	MT_CASE(epoll_woken_by_thread_eventfd),
	MT_CASE(epoll_many_fds),
};

MT_MAIN(cases)
