//go:build ignore

/* timeout_updates: what the readiness and sleep calls do with their
 * timeout arguments: select and the raw pselect6 and ppoll syscalls write
 * back the time left (also on EINTR), poll treats any negative timeout as
 * infinite, and nanosleep reports its remainder after EINTR (EFAULT for a
 * bad remainder pointer). */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void noop(int sig)
{
	(void)sig;
}

static void alarm_ms(int ms)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = noop;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void select_writes_remaining_on_eintr(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {5, 0};
	alarm_ms(50);
	CHECK_ERR(select(p[0] + 1, &r, NULL, NULL, &tv), EINTR);
	long left_ms = tv.tv_sec * 1000 + tv.tv_usec / 1000;
	CHECK_LT(left_ms, 4990);
	CHECK_GT(left_ms, 3000);
}

static void select_writes_remaining_on_ready(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "x", 1), 1);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {3, 0};
	CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, &tv), 1);
	long left_ms = tv.tv_sec * 1000 + tv.tv_usec / 1000;
	CHECK_LE(left_ms, 3000);
	CHECK_GT(left_ms, 2500);
}

static void raw_pselect6_updates_timespec(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = {0, 30 * 1000 * 1000};
	CHECK_EQ(syscall(SYS_pselect6, p[0] + 1, &r, NULL, NULL, &ts, NULL), 0);
	/* The raw syscall writes back the remaining time (zero here). */
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
}

static void raw_ppoll_updates_on_eintr(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pf = {p[0], POLLIN, 0};
	struct timespec ts = {5, 0};
	alarm_ms(50);
	CHECK_ERR(syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8), EINTR);
	CHECK_LT(ts.tv_sec, 5);
	CHECK_GE(ts.tv_sec, 3);
}

static void poll_negative_timeout_infinite(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pf = {p[0], POLLIN, 0};
	/* Any negative value waits without limit: only the signal ends it. */
	alarm_ms(100);
	int64_t t0 = mt_now_ns();
	CHECK_ERR(poll(&pf, 1, -5), EINTR);
	CHECK_GE(mt_now_ns() - t0, 90 * 1000 * 1000);
}

static void nanosleep_remainder_and_null(void)
{
	struct timespec req = {3, 0}, rem = {0, 0};
	alarm_ms(50);
	CHECK_ERR(nanosleep(&req, &rem), EINTR);
	CHECK_GE(rem.tv_sec, 2);
	CHECK_LT(rem.tv_sec, 3);
	/* A NULL remainder is fine. */
	alarm_ms(20);
	CHECK_ERR(nanosleep(&req, NULL), EINTR);
	/* A bad remainder pointer: EFAULT on interruption. */
	alarm_ms(20);
	CHECK_ERR(syscall(SYS_nanosleep, &req, (void *)1), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(select_writes_remaining_on_eintr),
	MT_CASE(select_writes_remaining_on_ready),
	MT_CASE(raw_pselect6_updates_timespec),
	MT_CASE(raw_ppoll_updates_on_eintr),
	MT_CASE(poll_negative_timeout_infinite),
	MT_CASE(nanosleep_remainder_and_null),
};

MT_MAIN(cases)
