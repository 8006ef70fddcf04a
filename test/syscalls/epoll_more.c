//go:build ignore

/* epoll_more: epoll semantics beyond argument checks: EPOLLONESHOT re-arm
 * with MOD, edge-triggered reporting only on new data, EPOLLRDHUP and
 * EPOLLHUP on pipes, loops of epoll instances (ELOOP), interest surviving
 * dup and vanishing with the last close, maxevents truncation and
 * round-robin, EPOLLEXCLUSIVE, and epoll_pwait's mask. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void oneshot_needs_rearm(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(add(ep, p[0], EPOLLIN | EPOLLONESHOT, 1));
	CHECK_EQ(write(p[1], "a", 1), 1);
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	/* Disabled after one report, though still readable. */
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	/* The registration still exists: ADD fails, MOD re-arms. */
	CHECK_ERR(add(ep, p[0], EPOLLIN, 1), EEXIST);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 2};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev));
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	CHECK_EQ(out[0].data.u64, 2);
}

static void edge_triggered_new_data_only(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(add(ep, p[0], EPOLLIN | EPOLLET, 1));
	CHECK_EQ(write(p[1], "ab", 2), 2);
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	/* Reading part of the data does not re-trigger. */
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	/* New data does. */
	CHECK_EQ(write(p[1], "c", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 1);
}

static void hup_and_rdhup_on_pipe(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(add(ep, p[0], EPOLLIN | EPOLLRDHUP, 1));
	close(p[1]);
	struct epoll_event out[1];
	CHECK_EQ(epoll_wait(ep, out, 1, 0), 1);
	/* Pipes report EPOLLHUP (not RDHUP, a socket thing). */
	CHECK(out[0].events & EPOLLHUP);
	CHECK_EQ(out[0].events & EPOLLIN, 0);
	int q[2];
	CHECK_SYS(pipe(q));
	CHECK_SYS(add(ep, q[1], EPOLLOUT, 2));
	close(q[0]);
	int n = CHECK_SYS(epoll_wait(ep, out, 1, 0));
	CHECK_EQ(n, 1);
	/* The write end of a widowed pipe: EPOLLERR (and EPOLLOUT). */
	int found = 0;
	struct epoll_event all[4];
	n = epoll_wait(ep, all, 4, 0);
	for (int i = 0; i < n; i++)
		if (all[i].data.u64 == 2)
			found = all[i].events & EPOLLERR;
	CHECK(found);
}

static void epoll_loops_refused(void)
{
	int a = CHECK_SYS(epoll_create1(0));
	int b = CHECK_SYS(epoll_create1(0));
	CHECK_SYS(add(a, b, EPOLLIN, 1));
	CHECK_ERR(add(b, a, EPOLLIN, 2), ELOOP);
}

static void nested_epoll_reports_readiness(void)
{
	int outer = CHECK_SYS(epoll_create1(0));
	int inner = CHECK_SYS(epoll_create1(0));
	int e = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	CHECK_SYS(add(inner, e, EPOLLIN, 1));
	CHECK_SYS(add(outer, inner, EPOLLIN, 2));
	struct epoll_event out[1];
	CHECK_EQ(epoll_wait(outer, out, 1, 0), 0);
	uint64_t v = 1;
	CHECK_EQ(write(e, &v, 8), 8);
	CHECK_EQ(epoll_wait(outer, out, 1, 0), 1);
	CHECK_EQ(out[0].data.u64, 2);
}

static void registration_follows_description(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int e = CHECK_SYS(eventfd(1, EFD_NONBLOCK));
	int d = CHECK_SYS(dup(e));
	CHECK_SYS(add(ep, e, EPOLLIN, 5));
	/* Closing one descriptor keeps the registration (the description
	 * is still open through d). */
	close(e);
	struct epoll_event out[1];
	CHECK_EQ(epoll_wait(ep, out, 1, 0), 1);
	CHECK_EQ(out[0].data.u64, 5);
	/* But the number e is gone for epoll_ctl. */
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL), EBADF);
	/* Closing the last one removes it. */
	close(d);
	CHECK_EQ(epoll_wait(ep, out, 1, 0), 0);
}

static void maxevents_truncates_and_rotates(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int fds[4];
	for (int i = 0; i < 4; i++) {
		fds[i] = CHECK_SYS(eventfd(1, EFD_NONBLOCK));
		CHECK_SYS(add(ep, fds[i], EPOLLIN, i));
	}
	struct epoll_event out[4];
	int seen = 0;
	/* Level-triggered entries move to the back after being reported,
	 * so two calls of 2 see all 4. */
	for (int round = 0; round < 2; round++) {
		CHECK_EQ(epoll_wait(ep, out, 2, 0), 2);
		for (int i = 0; i < 2; i++)
			seen |= 1 << out[i].data.u64;
	}
	CHECK_EQ(seen, 0xf);
}

struct mt_epoll_params {
	uint32_t busy_poll_usecs;
	uint16_t busy_poll_budget;
	uint8_t prefer_busy_poll;
	uint8_t pad;
};
#define MT_EPIOCSPARAMS _IOW(0x8A, 0x01, struct mt_epoll_params)
#define MT_EPIOCGPARAMS _IOR(0x8A, 0x02, struct mt_epoll_params)

static void busy_poll_params_ioctls(void)
{
	/* Linux 6.9+: an epoll file keeps busy-poll parameters. */
	int ep = CHECK_SYS(epoll_create1(0));
	struct mt_epoll_params p;
	memset(&p, 0xff, sizeof(p));
	CHECK_SYS(ioctl(ep, MT_EPIOCGPARAMS, &p));
	CHECK_EQ(p.busy_poll_usecs, 0);
	CHECK_EQ(p.busy_poll_budget, 0);
	CHECK_EQ(p.prefer_busy_poll, 0);
	struct mt_epoll_params set = {100, 8, 1, 0};
	CHECK_SYS(ioctl(ep, MT_EPIOCSPARAMS, &set));
	CHECK_SYS(ioctl(ep, MT_EPIOCGPARAMS, &p));
	CHECK_EQ(p.busy_poll_usecs, 100);
	CHECK_EQ(p.busy_poll_budget, 8);
	CHECK_EQ(p.prefer_busy_poll, 1);
	/* Bad values: padding, a boolean above 1, microseconds past
	 * INT_MAX. */
	struct mt_epoll_params bad = {1, 1, 0, 1};
	CHECK_ERR(ioctl(ep, MT_EPIOCSPARAMS, &bad), EINVAL);
	bad = (struct mt_epoll_params){1, 1, 2, 0};
	CHECK_ERR(ioctl(ep, MT_EPIOCSPARAMS, &bad), EINVAL);
	bad = (struct mt_epoll_params){0x80000000u, 1, 0, 0};
	CHECK_ERR(ioctl(ep, MT_EPIOCSPARAMS, &bad), EINVAL);
	CHECK_ERR(ioctl(ep, MT_EPIOCSPARAMS, (void *)1), EFAULT);
	CHECK_ERR(ioctl(ep, MT_EPIOCGPARAMS, (void *)1), EFAULT);
	/* A budget above 64 needs CAP_NET_ADMIN. */
	AS_USER({
		struct mt_epoll_params big = {1, 65, 0, 0};
		if (ioctl(ep, MT_EPIOCSPARAMS, &big) != -1 || errno != EPERM)
			_exit(1);
	});
	/* The failed calls changed nothing. */
	CHECK_SYS(ioctl(ep, MT_EPIOCGPARAMS, &p));
	CHECK_EQ(p.busy_poll_usecs, 100);
	/* Other requests are EINVAL (see ioctl_generic). */
	int n;
	CHECK_ERR(ioctl(ep, FIONREAD, &n), EINVAL);
}

static void exclusive_add_only(void)
{
	int ep = CHECK_SYS(epoll_create1(0));
	int e = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	CHECK_SYS(add(ep, e, EPOLLIN | EPOLLEXCLUSIVE, 1));
	/* EPOLLEXCLUSIVE with EPOLLONESHOT is invalid. */
	int f = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	CHECK_ERR(add(ep, f, EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT, 2), EINVAL);
	/* On an epoll target it is invalid too. */
	int ep2 = CHECK_SYS(epoll_create1(0));
	CHECK_ERR(add(ep, ep2, EPOLLIN | EPOLLEXCLUSIVE, 3), EINVAL);
}

static void noop(int sig)
{
	(void)sig;
}

static void pwait_mask_lets_signal_in(void)
{
	signal(SIGUSR1, noop);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	kill(getpid(), SIGUSR1);
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event out[1];
	sigset_t none;
	sigemptyset(&none);
	/* The pending signal is delivered under the temporary mask. */
	CHECK_ERR(epoll_pwait(ep, out, 1, 5000, &none), EINTR);
	/* And the old mask is back. */
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	CHECK(sigismember(&cur, SIGUSR1));
	/* A NULL mask is plain epoll_wait. */
	CHECK_EQ(epoll_pwait(ep, out, 1, 0, NULL), 0);
}

static void *writer(void *arg)
{
	struct timespec ts = {0, 30 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint64_t v = 1;
	if (write(*(int *)arg, &v, 8) != 8)
		return (void *)1;
	return NULL;
}

static void wait_woken_by_other_thread(void)
{
	static int e;
	e = CHECK_SYS(eventfd(0, 0));
	int ep = CHECK_SYS(epoll_create1(0));
	CHECK_SYS(add(ep, e, EPOLLIN, 9));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, writer, &e));
	struct epoll_event out[1];
	CHECK_EQ(epoll_wait(ep, out, 1, 10000), 1);
	CHECK_EQ(out[0].data.u64, 9);
	pthread_join(th, NULL);
}

static const struct mt_case cases[] = {
	MT_CASE(oneshot_needs_rearm),
	MT_CASE(edge_triggered_new_data_only),
	MT_CASE(hup_and_rdhup_on_pipe),
	MT_CASE(epoll_loops_refused),
	MT_CASE(nested_epoll_reports_readiness),
	MT_CASE(registration_follows_description),
	MT_CASE(maxevents_truncates_and_rotates),
	MT_CASE(exclusive_add_only),
	MT_CASE(busy_poll_params_ioctls),
	MT_CASE(pwait_mask_lets_signal_in),
	MT_CASE(wait_woken_by_other_thread),
};

MT_MAIN(cases)
