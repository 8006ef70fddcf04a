//go:build ignore

/* timer_posix: POSIX interval timers in detail: timer_settime flags and
 * old values, intervals and overruns, TIMER_ABSTIME on several clocks,
 * disarming, SIGEV_THREAD_ID targeting and errors, CPU-time timers,
 * per-process limits on ids, and timers across fork and exec. */
#include "moattest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static timer_t mk(clockid_t c, int sig)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = sig;
	sev.sigev_value.sival_int = 77;
	timer_t t = 0;
	if (syscall(SYS_timer_create, c, &sev, &t) != 0)
		return (timer_t)-1;
	return t;
}

static void block(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static int wait_for(int sig, siginfo_t *si, int ms)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	return sigtimedwait(&s, si, &ts);
}

static void settime_old_value(void)
{
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR1);
	CHECK(t != (timer_t)-1);
	struct itimerspec a = {{1, 500}, {10, 0}}, old;
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &a, NULL));
	struct itimerspec b = {{0, 0}, {0, 0}};
	memset(&old, 0xff, sizeof(old));
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &b, &old));
	CHECK_EQ(old.it_interval.tv_sec, 1);
	CHECK_EQ(old.it_interval.tv_nsec, 500);
	CHECK_LE(old.it_value.tv_sec, 10);
	CHECK_GE(old.it_value.tv_sec, 9);
	/* Disarmed: gettime reads zero. */
	struct itimerspec cur;
	CHECK_SYS(syscall(SYS_timer_gettime, t, &cur));
	CHECK_EQ(cur.it_value.tv_sec, 0);
	CHECK_EQ(cur.it_value.tv_nsec, 0);
	CHECK_EQ(cur.it_interval.tv_sec, 0);
	syscall(SYS_timer_delete, t);
}

static void settime_errors(void)
{
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR1);
	CHECK(t != (timer_t)-1);
	struct itimerspec bad = {{0, 0}, {0, 1000000000}};
	CHECK_ERR(syscall(SYS_timer_settime, t, 0, &bad, NULL), EINVAL);
	struct itimerspec badi = {{0, -1}, {1, 0}};
	CHECK_ERR(syscall(SYS_timer_settime, t, 0, &badi, NULL), EINVAL);
	struct itimerspec ok = {{0, 0}, {1, 0}};
	CHECK_ERR(syscall(SYS_timer_settime, t, 0, NULL, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_timer_settime, t, 0, (void *)1, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_timer_settime, (timer_t)999, 0, &ok, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_timer_gettime, t, (void *)1), EFAULT);
	syscall(SYS_timer_delete, t);
}

static void interval_fires_repeatedly(void)
{
	block(SIGUSR1);
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR1);
	CHECK(t != (timer_t)-1);
	struct itimerspec its = {{0, 10 * 1000 * 1000}, {0, 10 * 1000 * 1000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	for (int i = 0; i < 3; i++) {
		siginfo_t si;
		CHECK_EQ(wait_for(SIGUSR1, &si, 5000), SIGUSR1);
		CHECK_EQ(si.si_code, SI_TIMER);
		CHECK_EQ(si.si_value.sival_int, 77);
	}
	syscall(SYS_timer_delete, t);
}

static void overrun_counts_missed_expiries(void)
{
	block(SIGUSR2);
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR2);
	CHECK(t != (timer_t)-1);
	struct itimerspec its = {{0, 1000 * 1000}, {0, 1000 * 1000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	struct timespec ts = {0, 60 * 1000 * 1000};
	nanosleep(&ts, NULL);
	siginfo_t si;
	CHECK_EQ(wait_for(SIGUSR2, &si, 5000), SIGUSR2);
	/* About 60 expiries folded into one signal. */
	CHECK_GE(si.si_overrun, 20);
	/* timer_getoverrun reports the count of the last delivered one. */
	long ov = CHECK_SYS(syscall(SYS_timer_getoverrun, t));
	CHECK_EQ(ov, si.si_overrun);
	syscall(SYS_timer_delete, t);
}

static void abstime_on_realtime_and_boottime(void)
{
	static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC};
	block(SIGUSR1);
	for (size_t i = 0; i < 3; i++) {
		timer_t t = mk(clocks[i], SIGUSR1);
		if (t == (timer_t)-1)
			FAIL("timer_create(%d): %s", clocks[i], mt_errname(errno));
		struct timespec now;
		clock_gettime(clocks[i], &now);
		now.tv_nsec += 20 * 1000 * 1000;
		if (now.tv_nsec >= 1000000000) {
			now.tv_sec++;
			now.tv_nsec -= 1000000000;
		}
		struct itimerspec its = {{0, 0}, now};
		CHECK_SYS(syscall(SYS_timer_settime, t, TIMER_ABSTIME, &its, NULL));
		siginfo_t si;
		if (wait_for(SIGUSR1, &si, 5000) != SIGUSR1)
			FAIL("clock %d: no expiry", clocks[i]);
		syscall(SYS_timer_delete, t);
	}
}

static void oneshot_fires_once(void)
{
	block(SIGUSR1);
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR1);
	CHECK(t != (timer_t)-1);
	struct itimerspec its = {{0, 0}, {0, 5 * 1000 * 1000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	siginfo_t si;
	CHECK_EQ(wait_for(SIGUSR1, &si, 5000), SIGUSR1);
	CHECK_ERR(wait_for(SIGUSR1, &si, 50), EAGAIN);
	struct itimerspec cur;
	CHECK_SYS(syscall(SYS_timer_gettime, t, &cur));
	CHECK_EQ(cur.it_value.tv_sec, 0);
	CHECK_EQ(cur.it_value.tv_nsec, 0);
	syscall(SYS_timer_delete, t);
}

static void delete_discards_pending_signal(void)
{
	block(SIGUSR1);
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR1);
	CHECK(t != (timer_t)-1);
	struct itimerspec its = {{0, 0}, {0, 1000 * 1000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	struct timespec ts = {0, 30 * 1000 * 1000};
	nanosleep(&ts, NULL);
	sigset_t p;
	sigpending(&p);
	CHECK(sigismember(&p, SIGUSR1));
	CHECK_SYS(syscall(SYS_timer_delete, t));
	/* The queued signal of a deleted timer is never delivered (Linux
	 * 6.10+ drops it when it would be dequeued; earlier ones at
	 * deletion). */
	siginfo_t si;
	CHECK_ERR(wait_for(SIGUSR1, &si, 0), EAGAIN);
}

static volatile pid_t thread_tid;

static void *waiting_thread(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	siginfo_t si;
	int r = wait_for(SIGUSR2, &si, 5000);
	return (void *)(long)r;
}

static void sigev_thread_id_targets(void)
{
	block(SIGUSR2);
	thread_tid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, waiting_thread, NULL));
	while (thread_tid == 0)
		sched_yield();
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR2;
	sev.sigev_notify_thread_id = thread_tid;
	timer_t t;
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = {{0, 0}, {0, 5 * 1000 * 1000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	void *ret;
	pthread_join(th, &ret);
	CHECK_EQ((long)ret, SIGUSR2);
	syscall(SYS_timer_delete, t);
	/* A tid outside the process: EINVAL. */
	sev.sigev_notify_thread_id = 99999;
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &t), EINVAL);
	/* SIGEV_THREAD_ID without SIGEV_SIGNAL's signal number: EINVAL. */
	sev.sigev_notify_thread_id = getpid();
	sev.sigev_signo = 0;
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &t), EINVAL);
}

static void cputime_timer_fires_on_cpu(void)
{
	block(SIGUSR1);
	timer_t t = mk(CLOCK_PROCESS_CPUTIME_ID, SIGUSR1);
	CHECK(t != (timer_t)-1);
	struct itimerspec its = {{0, 0}, {0, 30 * 1000 * 1000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	/* Sleeping does not move it. */
	siginfo_t si;
	CHECK_ERR(wait_for(SIGUSR1, &si, 100), EAGAIN);
	volatile unsigned long x = 0;
	sigset_t p;
	int64_t t0 = mt_now_ns();
	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		sigpending(&p);
	} while (!sigismember(&p, SIGUSR1) && mt_now_ns() - t0 < 10LL * 1000000000);
	CHECK(sigismember(&p, SIGUSR1));
	syscall(SYS_timer_delete, t);
}

static void timers_not_inherited(void)
{
	timer_t t = mk(CLOCK_MONOTONIC, SIGUSR1);
	CHECK(t != (timer_t)-1);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct itimerspec cur;
		_exit(syscall(SYS_timer_gettime, t, &cur) == -1 && errno == EINVAL ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	syscall(SYS_timer_delete, t);
}

static void many_timers_distinct_ids(void)
{
	timer_t ids[64];
	for (int i = 0; i < 64; i++) {
		ids[i] = mk(CLOCK_MONOTONIC, SIGUSR1);
		if (ids[i] == (timer_t)-1)
			FAIL("timer %d: %s", i, mt_errname(errno));
		for (int j = 0; j < i; j++)
			if (ids[j] == ids[i])
				FAIL("duplicate id %ld", (long)ids[i]);
	}
	for (int i = 0; i < 64; i++)
		CHECK_SYS(syscall(SYS_timer_delete, ids[i]));
	for (int i = 0; i < 64; i++)
		CHECK_ERR(syscall(SYS_timer_delete, ids[i]), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(settime_old_value),
	MT_CASE(settime_errors),
	MT_CASE(interval_fires_repeatedly),
	MT_CASE(overrun_counts_missed_expiries),
	MT_CASE(abstime_on_realtime_and_boottime),
	MT_CASE(oneshot_fires_once),
	MT_CASE(delete_discards_pending_signal),
	MT_CASE(sigev_thread_id_targets),
	MT_CASE(cputime_timer_fires_on_cpu),
	MT_CASE(timers_not_inherited),
	MT_CASE(many_timers_distinct_ids),
};

MT_MAIN(cases)
