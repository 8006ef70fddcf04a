//go:build ignore

/* sx_restart_more: which blocking calls come back after a caught signal
 * (SA_RESTART) and which return EINTR anyway: futex waits with and without
 * a timeout, epoll_wait, ppoll, pselect, clock_nanosleep TIMER_ABSTIME,
 * sigtimedwait, wait4; and that ignored or blocked signals interrupt
 * nothing. The blocking call runs in a thread; the main thread waits until
 * it sleeps in the kernel, signals it with tgkill, then releases it. */
#include "moattest.h"

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int handled;
static void on_sig(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void catch_usr1(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = flags;
	sigaction(SIGUSR1, &sa, NULL);
	atomic_store(&handled, 0);
}

struct blk {
	long (*op)(struct blk *);
	atomic_int tid;
	atomic_int done;
	long ret;
	int err;
	int fds[2];
	atomic_int word;
	pid_t child;
	struct timespec ts;
};

static void *blk_main(void *arg)
{
	struct blk *b = arg;
	atomic_store(&b->tid, (int)syscall(SYS_gettid));
	errno = 0;
	b->ret = b->op(b);
	b->err = errno;
	atomic_store(&b->done, 1);
	return NULL;
}

/* interrupt starts b's op in a thread, waits until it blocks, sends SIGUSR1
 * to it and waits for the handler (when want_handler). It returns 0 or -1
 * after recording a failure. */
static int start_and_signal(struct blk *b, pthread_t *th, int want_handler)
{
	if (pthread_create(th, NULL, blk_main, b) != 0) {
		mt_fail(__FILE__, __LINE__, "pthread_create failed");
		return -1;
	}
	while (atomic_load(&b->tid) == 0)
		sched_yield();
	if (mt_wait_blocked(atomic_load(&b->tid), 5000) != 0) {
		mt_fail(__FILE__, __LINE__, "thread never blocked");
		return -1;
	}
	if (syscall(SYS_tgkill, getpid(), atomic_load(&b->tid), SIGUSR1) != 0) {
		mt_fail(__FILE__, __LINE__, "tgkill: %s", mt_errname(errno));
		return -1;
	}
	if (want_handler) {
		int64_t end = mt_now_ns() + 5000000000LL;
		while (atomic_load(&handled) == 0 && mt_now_ns() < end)
			usleep(1000);
		if (atomic_load(&handled) == 0) {
			mt_fail(__FILE__, __LINE__, "handler never ran");
			return -1;
		}
	}
	return 0;
}

/* settle waits until the thread either returned or is asleep again. */
static void settle(struct blk *b)
{
	int64_t end = mt_now_ns() + 5000000000LL;
	while (!atomic_load(&b->done) && mt_now_ns() < end) {
		if (mt_wait_blocked(atomic_load(&b->tid), 100) == 0)
			break;
	}
}

static long op_futex(struct blk *b)
{
	return syscall(SYS_futex, &b->word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static long op_futex_timed(struct blk *b)
{
	b->ts.tv_sec = 30;
	b->ts.tv_nsec = 0;
	return syscall(SYS_futex, &b->word, FUTEX_WAIT_PRIVATE, 0, &b->ts, NULL, 0);
}

static void wake_futex(struct blk *b)
{
	atomic_store(&b->word, 1);
	syscall(SYS_futex, &b->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait_restarts_with_sa_restart(void)
{
	catch_usr1(SA_RESTART);
	struct blk b = { .op = op_futex };
	pthread_t th;
	if (start_and_signal(&b, &th, 1))
		return;
	settle(&b);
	/* Restarted: still waiting after the handler. */
	CHECK_EQ(atomic_load(&b.done), 0);
	wake_futex(&b);
	pthread_join(th, NULL);
	CHECK_EQ(b.ret, 0);
}

static void futex_wait_eintr_without_sa_restart(void)
{
	catch_usr1(0);
	struct blk b = { .op = op_futex };
	pthread_t th;
	if (start_and_signal(&b, &th, 1))
		return;
	pthread_join(th, NULL);
	CHECK_EQ(b.ret, -1);
	CHECK_EQ(b.err, EINTR);
}

static void futex_timed_wait_eintr_even_with_sa_restart(void)
{
	/* A timed FUTEX_WAIT restarts only through restart_syscall, which a
	 * handler turns into EINTR whatever SA_RESTART says. */
	catch_usr1(SA_RESTART);
	struct blk b = { .op = op_futex_timed };
	pthread_t th;
	if (start_and_signal(&b, &th, 1))
		return;
	pthread_join(th, NULL);
	CHECK_EQ(b.ret, -1);
	CHECK_EQ(b.err, EINTR);
}

static long op_epoll(struct blk *b)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };
	epoll_ctl(ep, EPOLL_CTL_ADD, b->fds[0], &ev);
	long r = epoll_wait(ep, &ev, 1, -1);
	int e = errno;
	close(ep);
	errno = e;
	return r;
}

static long op_ppoll(struct blk *b)
{
	struct pollfd p = { .fd = b->fds[0], .events = POLLIN };
	return ppoll(&p, 1, NULL, NULL);
}

static long op_pselect(struct blk *b)
{
	fd_set r;
	FD_ZERO(&r);
	FD_SET(b->fds[0], &r);
	return pselect(b->fds[0] + 1, &r, NULL, NULL, NULL, NULL);
}

static long op_read(struct blk *b)
{
	char c;
	return read(b->fds[0], &c, 1);
}

static void run_pipe_op(long (*op)(struct blk *), int flags, long *ret, int *err)
{
	struct blk b = { .op = op };
	*ret = -2;
	if (pipe(b.fds) != 0) {
		mt_fail(__FILE__, __LINE__, "pipe: %s", mt_errname(errno));
		return;
	}
	catch_usr1(flags);
	pthread_t th;
	if (start_and_signal(&b, &th, 1)) {
		/* Release the thread before failing. */
		write(b.fds[1], "x", 1);
		return;
	}
	settle(&b);
	write(b.fds[1], "x", 1);
	pthread_join(th, NULL);
	*ret = b.ret;
	*err = b.err;
	close(b.fds[0]);
	close(b.fds[1]);
}

static void never_restarted_waits_eintr(void)
{
	struct {
		const char *name;
		long (*op)(struct blk *);
	} tests[] = {
		{ "epoll_wait", op_epoll },
		{ "ppoll", op_ppoll },
		{ "pselect", op_pselect },
	};
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		long ret;
		int err = 0;
		run_pipe_op(tests[i].op, SA_RESTART, &ret, &err);
		MT_BAIL();
		if (ret != -1 || err != EINTR)
			FAIL("%s with SA_RESTART: got %ld (%s), want EINTR",
			     tests[i].name, ret, mt_errname(err));
	}
}

static void pipe_read_restart_and_eintr(void)
{
	long ret;
	int err = 0;
	run_pipe_op(op_read, SA_RESTART, &ret, &err);
	MT_BAIL();
	CHECK_EQ(ret, 1);
	run_pipe_op(op_read, 0, &ret, &err);
	MT_BAIL();
	CHECK_EQ(ret, -1);
	CHECK_EQ(err, EINTR);
}

static void ignored_signal_interrupts_nothing(void)
{
	struct blk b = { .op = op_read };
	CHECK_SYS(pipe(b.fds));
	signal(SIGUSR1, SIG_IGN);
	pthread_t th;
	if (start_and_signal(&b, &th, 0)) {
		write(b.fds[1], "x", 1);
		return;
	}
	/* Also a default-ignored one. */
	syscall(SYS_tgkill, getpid(), atomic_load(&b.tid), SIGWINCH);
	settle(&b);
	int early = atomic_load(&b.done);
	write(b.fds[1], "x", 1);
	pthread_join(th, NULL);
	CHECK_EQ(early, 0);
	CHECK_EQ(b.ret, 1);
}

static void blocked_signal_interrupts_nothing(void)
{
	catch_usr1(0);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	/* The thread inherits the blocked mask. */
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	struct blk b = { .op = op_read };
	CHECK_SYS(pipe(b.fds));
	pthread_t th;
	int rc = start_and_signal(&b, &th, 0);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	if (rc) {
		write(b.fds[1], "x", 1);
		return;
	}
	settle(&b);
	int early = atomic_load(&b.done);
	write(b.fds[1], "x", 1);
	pthread_join(th, NULL);
	CHECK_EQ(early, 0);
	CHECK_EQ(b.ret, 1);
	CHECK_EQ(atomic_load(&handled), 0);
}

static long op_abs_sleep(struct blk *b)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct timespec until = { now.tv_sec + 30, now.tv_nsec };
	b->ts.tv_sec = 777;
	b->ts.tv_nsec = 5;
	int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, &b->ts);
	/* clock_nanosleep returns the error number itself. */
	if (r != 0) {
		errno = r;
		return -1;
	}
	return 0;
}

static void abstime_sleep_eintr_leaves_remain(void)
{
	catch_usr1(SA_RESTART);
	struct blk b = { .op = op_abs_sleep };
	pthread_t th;
	if (start_and_signal(&b, &th, 1))
		return;
	pthread_join(th, NULL);
	CHECK_EQ(b.ret, -1);
	CHECK_EQ(b.err, EINTR);
	/* An absolute sleep never writes the remainder. */
	CHECK_EQ(b.ts.tv_sec, 777);
	CHECK_EQ(b.ts.tv_nsec, 5);
}

static long op_sigtimedwait(struct blk *b)
{
	(void)b;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	struct timespec ts = { 30, 0 };
	return sigtimedwait(&s, NULL, &ts);
}

static void sigtimedwait_interrupted_by_other_signal(void)
{
	catch_usr1(SA_RESTART);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	struct blk b = { .op = op_sigtimedwait };
	pthread_t th;
	int rc = start_and_signal(&b, &th, 1);
	if (rc) {
		syscall(SYS_tgkill, getpid(), atomic_load(&b.tid), SIGUSR2);
		pthread_join(th, NULL);
		return;
	}
	pthread_join(th, NULL);
	CHECK_EQ(b.ret, -1);
	CHECK_EQ(b.err, EINTR);
}

static long op_wait4(struct blk *b)
{
	int st;
	long r = wait4(b->child, &st, 0, NULL);
	if (r > 0)
		b->word = st;
	return r;
}

static void run_wait4(int flags, long *ret, int *err, int *status)
{
	int p[2];
	*ret = -2;
	if (pipe(p) != 0) {
		mt_fail(__FILE__, __LINE__, "pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		_exit(read(p[0], &c, 1) == 0 ? 7 : 8);
	}
	close(p[0]);
	struct blk b = { .op = op_wait4, .child = pid };
	catch_usr1(flags);
	pthread_t th;
	if (start_and_signal(&b, &th, 1)) {
		close(p[1]);
		return;
	}
	settle(&b);
	close(p[1]);
	pthread_join(th, NULL);
	*ret = b.ret;
	*err = b.err;
	*status = atomic_load(&b.word);
	if (b.ret != pid)
		mt_wait(pid);
	else
		*ret = 1;
}

static void wait4_restart_and_eintr(void)
{
	long ret;
	int err = 0, st = 0;
	run_wait4(SA_RESTART, &ret, &err, &st);
	MT_BAIL();
	CHECK_EQ(ret, 1);
	CHECK_EXITED(st, 7);
	run_wait4(0, &ret, &err, &st);
	MT_BAIL();
	CHECK_EQ(ret, -1);
	CHECK_EQ(err, EINTR);
}

static const struct mt_case cases[] = {
	MT_CASE(futex_wait_restarts_with_sa_restart),
	MT_CASE(futex_wait_eintr_without_sa_restart),
	MT_CASE(futex_timed_wait_eintr_even_with_sa_restart),
	MT_CASE(never_restarted_waits_eintr),
	MT_CASE(pipe_read_restart_and_eintr),
	MT_CASE(ignored_signal_interrupts_nothing),
	MT_CASE(blocked_signal_interrupts_nothing),
	MT_CASE(abstime_sleep_eintr_leaves_remain),
	MT_CASE(sigtimedwait_interrupted_by_other_signal),
	MT_CASE(wait4_restart_and_eintr),
};

MT_MAIN(cases)
