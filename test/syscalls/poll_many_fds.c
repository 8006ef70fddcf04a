//go:build ignore

/* poll_many_fds: readiness calls at scale and at the edges of the
 * descriptor space: select up to FD_SETSIZE-1, poll and epoll with
 * hundreds of pipes where only some are ready, high descriptor numbers
 * from dup2, and exact counts and bitmaps on return. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define N 200

static int rd[N], wr[N];

static int open_pipes(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 2 * N + 64) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < N; i++) {
		int p[2];
		if (pipe(p) != 0)
			return -1;
		rd[i] = p[0];
		wr[i] = p[1];
	}
	return 0;
}

static void poll_reports_exactly_ready(void)
{
	CHECK_EQ(open_pipes(), 0);
	for (int i = 0; i < N; i += 7)
		CHECK_EQ(write(wr[i], "x", 1), 1);
	struct pollfd pf[N];
	for (int i = 0; i < N; i++)
		pf[i] = (struct pollfd){rd[i], POLLIN, 0};
	int want = (N + 6) / 7;
	CHECK_EQ(poll(pf, N, 0), want);
	for (int i = 0; i < N; i++)
		CHECK_EQ(pf[i].revents, (i % 7 == 0) ? POLLIN : 0);
}

static void select_reports_exactly_ready(void)
{
	CHECK_EQ(open_pipes(), 0);
	for (int i = 0; i < N; i += 5)
		CHECK_EQ(write(wr[i], "x", 1), 1);
	fd_set r;
	FD_ZERO(&r);
	int maxfd = 0;
	for (int i = 0; i < N; i++) {
		FD_SET(rd[i], &r);
		if (rd[i] > maxfd)
			maxfd = rd[i];
	}
	struct timeval tv = {0, 0};
	CHECK_EQ(select(maxfd + 1, &r, NULL, NULL, &tv), N / 5);
	for (int i = 0; i < N; i++)
		CHECK_EQ(!!FD_ISSET(rd[i], &r), i % 5 == 0);
}

static void select_top_of_fd_setsize(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < FD_SETSIZE) {
		rl.rlim_cur = FD_SETSIZE;
		CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	}
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(dup2(p[0], FD_SETSIZE - 1), FD_SETSIZE - 1);
	CHECK_EQ(dup2(p[1], FD_SETSIZE - 2), FD_SETSIZE - 2);
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(FD_SETSIZE - 1, &r);
	FD_SET(FD_SETSIZE - 2, &w);
	struct timeval tv = {0, 0};
	/* Writable end ready, readable end not. */
	CHECK_EQ(select(FD_SETSIZE, &r, &w, NULL, &tv), 1);
	CHECK(FD_ISSET(FD_SETSIZE - 2, &w));
	CHECK(!FD_ISSET(FD_SETSIZE - 1, &r));
	CHECK_EQ(write(p[1], "y", 1), 1);
	FD_SET(FD_SETSIZE - 1, &r);
	FD_SET(FD_SETSIZE - 2, &w);
	CHECK_EQ(select(FD_SETSIZE, &r, &w, NULL, &tv), 2);
}

static void poll_high_fd_numbers(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 4000 && rl.rlim_max >= 4000) {
		rl.rlim_cur = 4000;
		CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	}
	if (rl.rlim_cur < 4000)
		SKIP("RLIMIT_NOFILE below 4000");
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(dup2(p[0], 3999), 3999);
	CHECK_EQ(write(p[1], "z", 1), 1);
	struct pollfd pf = {3999, POLLIN, 0};
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN);
	/* A closed high descriptor is POLLNVAL. */
	close(3999);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLNVAL);
}

static void epoll_many_ready_subset(void)
{
	CHECK_EQ(open_pipes(), 0);
	int ep = CHECK_SYS(epoll_create1(0));
	for (int i = 0; i < N; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, rd[i], &ev));
	}
	for (int i = 3; i < N; i += 10)
		CHECK_EQ(write(wr[i], "x", 1), 1);
	struct epoll_event out[N];
	int n = CHECK_SYS(epoll_wait(ep, out, N, 0));
	CHECK_EQ(n, N / 10);
	for (int i = 0; i < n; i++)
		CHECK_EQ(out[i].data.u32 % 10, 3);
}

static void poll_wakes_on_last_of_many(void)
{
	CHECK_EQ(open_pipes(), 0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		if (write(wr[N - 1], "w", 1) != 1)
			_exit(1);
		_exit(0);
	}
	struct pollfd pf[N];
	for (int i = 0; i < N; i++)
		pf[i] = (struct pollfd){rd[i], POLLIN, 0};
	CHECK_EQ(poll(pf, N, 10000), 1);
	CHECK_EQ(pf[N - 1].revents, POLLIN);
	mt_wait(pid);
}

static const struct mt_case cases[] = {
	MT_CASE(poll_reports_exactly_ready),
	MT_CASE(select_reports_exactly_ready),
	MT_CASE(select_top_of_fd_setsize),
	MT_CASE(poll_high_fd_numbers),
	MT_CASE(epoll_many_ready_subset),
	MT_CASE(poll_wakes_on_last_of_many),
};

MT_MAIN(cases)
