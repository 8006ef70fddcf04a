//go:build ignore

/* sx_sigtimedwait: rt_sigtimedwait timeouts and argument checks (zero and
 * elapsing timeouts, bad timespec, sigsetsize, EFAULT, SIGKILL and SIGSTOP
 * silently dropped from the set, the timeout left unchanged), waking from
 * another thread, and which queue is taken first (the thread's own pending
 * signals before the process's). */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static sigset_t just(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	return s;
}

static void block(int sig)
{
	sigset_t s = just(sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static long raw_wait(const void *set, void *info, const struct timespec *ts, size_t sz)
{
	return syscall(SYS_rt_sigtimedwait, set, info, ts, sz);
}

static void zero_timeout_eagain(void)
{
	block(SIGUSR1);
	sigset_t s = just(SIGUSR1);
	struct timespec ts = { 0, 0 };
	siginfo_t si;
	int64_t t0 = mt_now_ns();
	CHECK_ERR(sigtimedwait(&s, &si, &ts), EAGAIN);
	CHECK_LT(mt_now_ns() - t0, 2000000000LL);
	/* And with a signal pending it is taken at once. */
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(sigtimedwait(&s, NULL, &ts), SIGUSR1);
}

static void timeout_elapses_and_is_not_written(void)
{
	block(SIGUSR1);
	sigset_t s = just(SIGUSR1);
	struct timespec ts = { 0, 30000000 };
	int64_t t0 = mt_now_ns();
	CHECK_ERR(raw_wait(&s, NULL, &ts, 8), EAGAIN);
	int64_t el = mt_now_ns() - t0;
	CHECK_GE(el, 30000000LL);
	CHECK_LT(el, 10000000000LL);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 30000000);
}

static void argument_errors(void)
{
	block(SIGUSR1);
	sigset_t s = just(SIGUSR1);
	struct timespec bad = { 0, 1000000000 };
	CHECK_ERR(raw_wait(&s, NULL, &bad, 8), EINVAL);
	struct timespec neg = { -1, 0 };
	CHECK_ERR(raw_wait(&s, NULL, &neg, 8), EINVAL);
	struct timespec z = { 0, 0 };
	CHECK_ERR(raw_wait(&s, NULL, &z, 4), EINVAL);
	CHECK_ERR(raw_wait(&s, NULL, &z, 16), EINVAL);
	CHECK_ERR(raw_wait((void *)8, NULL, &z, 8), EFAULT);
	CHECK_ERR(raw_wait(&s, NULL, (void *)8, 8), EFAULT);
}

static void bad_info_pointer_efault(void)
{
	block(SIGUSR2);
	sigset_t s = just(SIGUSR2);
	struct timespec z = { 0, 0 };
	CHECK_SYS(raise(SIGUSR2));
	CHECK_ERR(raw_wait(&s, (void *)8, &z, 8), EFAULT);
}

static void sigkill_sigstop_dropped_from_set(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGKILL);
	sigaddset(&s, SIGSTOP);
	struct timespec z = { 0, 0 };
	/* Not EINVAL: the two are just removed from the set. */
	CHECK_ERR(raw_wait(&s, NULL, &z, 8), EAGAIN);
	sigemptyset(&s);
	CHECK_ERR(raw_wait(&s, NULL, &z, 8), EAGAIN);
}

static atomic_int waiter_tid;
static siginfo_t waiter_info;
static void *waiter(void *arg)
{
	(void)arg;
	sigset_t s = just(SIGRTMIN + 3);
	atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
	struct timespec ts = { 30, 0 };
	return (void *)(long)sigtimedwait(&s, &waiter_info, &ts);
}

static void woken_by_sigqueue_from_other_thread(void)
{
	block(SIGRTMIN + 3); /* inherited by the waiter */
	atomic_store(&waiter_tid, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, waiter, NULL));
	while (atomic_load(&waiter_tid) == 0)
		sched_yield();
	if (mt_wait_blocked(atomic_load(&waiter_tid), 5000) != 0)
		FAIL("waiter never blocked");
	union sigval v = { .sival_int = 99 };
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 3, v));
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK_EQ((long)res, SIGRTMIN + 3);
	CHECK_EQ(waiter_info.si_code, SI_QUEUE);
	CHECK_EQ(waiter_info.si_value.sival_int, 99);
	CHECK_EQ(waiter_info.si_pid, getpid());
}

static int tgsigqueue_self(int sig, int val)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = val;
	return (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), sig, &si);
}

static void thread_queue_taken_before_process_queue(void)
{
	int lo = SIGRTMIN + 1, hi = SIGRTMIN + 7;
	block(lo);
	block(hi);
	union sigval v = { .sival_int = 1 };
	/* Same signal: process-wide first, then thread-directed. */
	CHECK_SYS(sigqueue(getpid(), lo, v));
	CHECK_SYS(tgsigqueue_self(lo, 2));
	/* A higher signal directed at this thread. */
	CHECK_SYS(tgsigqueue_self(hi, 3));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, lo);
	sigaddset(&s, hi);
	struct timespec z = { 0, 0 };
	siginfo_t si;
	int order[3], vals[3];
	for (int i = 0; i < 3; i++) {
		memset(&si, 0, sizeof(si));
		order[i] = CHECK_SYS(sigtimedwait(&s, &si, &z));
		vals[i] = si.si_value.sival_int;
	}
	CHECK_ERR(sigtimedwait(&s, NULL, &z), EAGAIN);
	/* The thread's queue first (lowest signal first within it), then
	 * the process queue. */
	CHECK_EQ(order[0], lo);
	CHECK_EQ(vals[0], 2);
	CHECK_EQ(order[1], hi);
	CHECK_EQ(vals[1], 3);
	CHECK_EQ(order[2], lo);
	CHECK_EQ(vals[2], 1);
}

static void waits_only_for_the_set(void)
{
	block(SIGUSR1);
	block(SIGUSR2);
	CHECK_SYS(raise(SIGUSR2));
	sigset_t s = just(SIGUSR1);
	struct timespec ts = { 0, 10000000 };
	CHECK_ERR(sigtimedwait(&s, NULL, &ts), EAGAIN);
	/* SIGUSR2 is still pending. */
	sigset_t p;
	CHECK_SYS(sigpending(&p));
	CHECK_EQ(sigismember(&p, SIGUSR2), 1);
	CHECK_EQ(sigismember(&p, SIGUSR1), 0);
	s = just(SIGUSR2);
	CHECK_EQ(sigtimedwait(&s, NULL, &ts), SIGUSR2);
}

static const struct mt_case cases[] = {
	MT_CASE(zero_timeout_eagain),
	MT_CASE(timeout_elapses_and_is_not_written),
	MT_CASE(argument_errors),
	MT_CASE(bad_info_pointer_efault),
	MT_CASE(sigkill_sigstop_dropped_from_set),
	MT_CASE(woken_by_sigqueue_from_other_thread),
	MT_CASE(thread_queue_taken_before_process_queue),
	MT_CASE(waits_only_for_the_set),
};

MT_MAIN(cases)
