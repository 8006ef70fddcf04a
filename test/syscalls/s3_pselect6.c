//go:build ignore

/* s3_pselect6: the raw pselect6 system call: its sixth argument (a
 * {sigset pointer, size} pair, checked only when the pointer is set), the
 * timespec written back with the time left, the mask swapped in for the
 * wait only (a blocked signal let in, EINTR, the old mask restored), and
 * which sets report what: pipes, sockets, shut-down sockets in
 * exceptfds, nfds limits, EBADF, EINVAL and EFAULT. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

struct sigarg {
	const sigset_t *ss;
	size_t len;
};

static long ps6(int n, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts, struct sigarg *sa)
{
	return syscall(SYS_pselect6, n, r, w, e, ts, sa);
}

static volatile sig_atomic_t got;

static void on_sig(int s)
{
	got = s;
}

static void sixth_argument_rules(void)
{
	struct timespec ts = {0, 0};
	/* NULL, or a NULL mask pointer: no mask change. */
	CHECK_EQ(ps6(0, NULL, NULL, NULL, &ts, NULL), 0);
	struct sigarg sa = {NULL, 12345};
	CHECK_EQ(ps6(0, NULL, NULL, NULL, &ts, &sa), 0);
	/* A mask with the wrong size: EINVAL. */
	sigset_t m;
	sigemptyset(&m);
	sa.ss = &m;
	sa.len = 4;
	CHECK_ERR(ps6(0, NULL, NULL, NULL, &ts, &sa), EINVAL);
	sa.len = 8;
	CHECK_EQ(ps6(0, NULL, NULL, NULL, &ts, &sa), 0);
	/* Unreadable pair or mask: EFAULT. */
	CHECK_ERR(ps6(0, NULL, NULL, NULL, &ts, (struct sigarg *)1), EFAULT);
	sa.ss = (const sigset_t *)1;
	CHECK_ERR(ps6(0, NULL, NULL, NULL, &ts, &sa), EFAULT);
}

static void timespec_written_back(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = {0, 30 * 1000 * 1000};
	CHECK_EQ(ps6(p[0] + 1, &r, NULL, NULL, &ts, NULL), 0);
	/* Timed out: nothing left. */
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
	CHECK(!FD_ISSET(p[0], &r));
	/* Ready at once: (almost) all of it left. */
	CHECK_EQ(write(p[1], "x", 1), 1);
	FD_SET(p[0], &r);
	ts.tv_sec = 100;
	ts.tv_nsec = 0;
	CHECK_EQ(ps6(p[0] + 1, &r, NULL, NULL, &ts, NULL), 1);
	CHECK_GE(ts.tv_sec, 90);
	CHECK(FD_ISSET(p[0], &r));
}

static void mask_lets_signal_in(void)
{
	struct sigaction sa = {.sa_handler = on_sig};
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &block, &old));
	got = 0;
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(got, 0);
	/* The wait's mask unblocks SIGUSR1: it runs, the call says EINTR. */
	sigset_t empty;
	sigemptyset(&empty);
	struct sigarg a = {&empty, 8};
	struct timespec ts = {10, 0};
	CHECK_ERR(ps6(0, NULL, NULL, NULL, &ts, &a), EINTR);
	CHECK_EQ(got, SIGUSR1);
	/* The old mask is back. */
	sigset_t now;
	CHECK_SYS(sigprocmask(SIG_SETMASK, NULL, &now));
	CHECK(sigismember(&now, SIGUSR1));
}

static void mask_keeps_signal_out(void)
{
	struct sigaction sa = {.sa_handler = on_sig};
	CHECK_SYS(sigaction(SIGUSR2, &sa, NULL));
	got = 0;
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(got, SIGUSR2);
	got = 0;
	/* SIGUSR2 is unblocked but the wait's mask blocks it: a pending
	 * SIGUSR2 does not interrupt, the call times out. */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &block, NULL));
	CHECK_SYS(kill(getpid(), SIGUSR2));
	struct sigarg a = {&block, 8};
	struct timespec ts = {0, 10 * 1000 * 1000};
	CHECK_EQ(ps6(0, NULL, NULL, NULL, &ts, &a), 0);
	CHECK_EQ(got, 0);
	/* Unblocked after, it is delivered. */
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &block, NULL));
	CHECK_EQ(got, SIGUSR2);
}

static void socket_sets(void)
{
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	fd_set r, w, e;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&e);
	FD_SET(s[0], &r);
	FD_SET(s[0], &w);
	FD_SET(s[0], &e);
	struct timespec ts = {0, 0};
	CHECK_EQ(ps6(s[0] + 1, &r, &w, &e, &ts, NULL), 1);
	CHECK(!FD_ISSET(s[0], &r));
	CHECK(FD_ISSET(s[0], &w));
	CHECK(!FD_ISSET(s[0], &e));
	/* After the peer closes: readable (EOF) and still "writable" (the
	 * write would fail at once); unix sockets have no exceptional
	 * condition. */
	CHECK_SYS(close(s[1]));
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&e);
	FD_SET(s[0], &r);
	FD_SET(s[0], &w);
	FD_SET(s[0], &e);
	CHECK_EQ(ps6(s[0] + 1, &r, &w, &e, &ts, NULL), 2);
	CHECK(FD_ISSET(s[0], &r));
	CHECK(FD_ISSET(s[0], &w));
	CHECK(!FD_ISSET(s[0], &e));
}

static void count_is_per_set(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "x", 1), 1);
	/* The same descriptor in two sets counts twice. */
	int d = CHECK_SYS(dup(p[1]));
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(p[0], &r);
	FD_SET(p[1], &w);
	FD_SET(d, &w);
	struct timespec ts = {0, 0};
	int n = d > p[1] ? d : p[1];
	CHECK_EQ(ps6(n + 1, &r, &w, NULL, &ts, NULL), 3);
	/* nfds below a descriptor hides it. */
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	CHECK_EQ(ps6(p[0], &r, NULL, NULL, &ts, NULL), 0);
}

static pid_t main_tid;

static void *poke(void *arg)
{
	(void)arg;
	mt_wait_blocked(main_tid, 5000);
	syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	return NULL;
}

static void null_timeout_waits_for_signal(void)
{
	struct sigaction sa = {.sa_handler = on_sig, .sa_flags = SA_RESTART};
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	got = 0;
	main_tid = (pid_t)syscall(SYS_gettid);
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, poke, NULL));
	/* No sets, no timeout: sleep until a signal; pselect is never
	 * restarted, whatever SA_RESTART says. */
	CHECK_ERR(ps6(0, NULL, NULL, NULL, NULL, NULL), EINTR);
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(got, SIGUSR1);
}

static void argument_errors(void)
{
	struct timespec ts = {0, 0};
	fd_set r;
	FD_ZERO(&r);
	FD_SET(60, &r);
	CHECK_ERR(ps6(61, &r, NULL, NULL, &ts, NULL), EBADF);
	CHECK_ERR(ps6(-1, NULL, NULL, NULL, &ts, NULL), EINVAL);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(ps6(0, NULL, NULL, NULL, &bad, NULL), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(ps6(0, NULL, NULL, NULL, &neg, NULL), EINVAL);
	CHECK_ERR(ps6(0, NULL, NULL, NULL, (struct timespec *)1, NULL), EFAULT);
	CHECK_ERR(ps6(1, (fd_set *)1, NULL, NULL, &ts, NULL), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(sixth_argument_rules),
	MT_CASE(timespec_written_back),
	MT_CASE(mask_lets_signal_in),
	MT_CASE(mask_keeps_signal_out),
	MT_CASE(socket_sets),
	MT_CASE(count_is_per_set),
	MT_CASE(null_timeout_waits_for_signal),
	MT_CASE(argument_errors),
};

MT_MAIN(cases)
