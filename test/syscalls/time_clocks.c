//go:build ignore

/* time_clocks: clock_gettime/clock_getres/clock_settime across clock ids,
 * CPU clocks of other processes and threads, nanosleep/clock_nanosleep
 * argument checks, gettimeofday/time, times, getitimer/setitimer/alarm
 * argument checks, and POSIX timer ids. Raw syscalls bypass the vDSO. */
#include "moattest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CPUCLOCK_PROF 0
#define CPUCLOCK_SCHED 2
/* The clock id of a process's CPU clock (see clock_getcpuclockid). */
#define MAKE_PROCESS_CPUCLOCK(pid, clock) ((int)((~(unsigned)(pid)) << 3) | (clock))
#define MAKE_THREAD_CPUCLOCK(tid, clock) (MAKE_PROCESS_CPUCLOCK(tid, clock) | 4)

static long raw_gettime(clockid_t c, struct timespec *ts)
{
	return syscall(SYS_clock_gettime, c, ts);
}

static void gettime_every_clock(void)
{
	static const clockid_t ids[] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct timespec ts = {-1, -1};
		if (raw_gettime(ids[i], &ts) != 0)
			FAIL("clock %d: %s", ids[i], mt_errname(errno));
		if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000 || ts.tv_sec < 0)
			FAIL("clock %d: bad value %ld.%09ld", ids[i], (long)ts.tv_sec, ts.tv_nsec);
	}
}

static void gettime_errors(void)
{
	struct timespec ts;
	CHECK_ERR(raw_gettime(100, &ts), EINVAL);
	CHECK_ERR(raw_gettime(-1, &ts), EINVAL);
	CHECK_ERR(raw_gettime(CLOCK_MONOTONIC, (void *)1), EFAULT);
}

static void getres_values(void)
{
	struct timespec ts;
	CHECK_EQ(syscall(SYS_clock_getres, CLOCK_MONOTONIC, &ts), 0);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 1);
	CHECK_EQ(syscall(SYS_clock_getres, CLOCK_REALTIME, &ts), 0);
	CHECK_EQ(ts.tv_nsec, 1);
	CHECK_EQ(syscall(SYS_clock_getres, CLOCK_MONOTONIC_COARSE, &ts), 0);
	CHECK_GT(ts.tv_nsec, 1);
	/* A NULL result is allowed. */
	CHECK_EQ(syscall(SYS_clock_getres, CLOCK_MONOTONIC, NULL), 0);
	CHECK_ERR(syscall(SYS_clock_getres, 100, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_getres, CLOCK_MONOTONIC, (void *)1), EFAULT);
}

static void monotonic_never_goes_back(void)
{
	struct timespec a, b;
	CHECK_EQ(raw_gettime(CLOCK_MONOTONIC, &a), 0);
	for (int i = 0; i < 1000; i++) {
		CHECK_EQ(raw_gettime(CLOCK_MONOTONIC, &b), 0);
		CHECK(b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec));
		a = b;
	}
}

static void boottime_at_least_monotonic(void)
{
	struct timespec m, bt;
	CHECK_EQ(raw_gettime(CLOCK_MONOTONIC, &m), 0);
	CHECK_EQ(raw_gettime(CLOCK_BOOTTIME, &bt), 0);
	CHECK(bt.tv_sec > m.tv_sec || (bt.tv_sec == m.tv_sec && bt.tv_nsec >= m.tv_nsec));
}

static void settime_checks(void)
{
	struct timespec ts = {0, 0};
	/* The monotonic clocks cannot be set. */
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, 100, &ts), EINVAL);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);
	/* Setting the real clock needs CAP_SYS_TIME in the initial user
	 * namespace: EPERM both natively (user namespace) and sandboxed. */
	struct timespec now;
	raw_gettime(CLOCK_REALTIME, &now);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &now), EPERM);
	struct timeval tv = {now.tv_sec, 0};
	CHECK_ERR(settimeofday(&tv, NULL), EPERM);
}

static void gettimeofday_and_time_agree(void)
{
	struct timeval tv;
	CHECK_EQ(syscall(SYS_gettimeofday, &tv, NULL), 0);
	CHECK_LT(tv.tv_usec, 1000000);
	time_t t = (time_t)syscall(SYS_time, NULL);
	CHECK_LE(tv.tv_sec, t);
	CHECK_LE(t - tv.tv_sec, 2);
	time_t out = 0;
	time_t r = (time_t)syscall(SYS_time, &out);
	CHECK_EQ(r, out);
	/* A NULL timeval with a timezone pointer is fine. */
	struct timezone tz;
	CHECK_EQ(syscall(SYS_gettimeofday, NULL, &tz), 0);
	CHECK_ERR(syscall(SYS_gettimeofday, (void *)1, NULL), EFAULT);
}

static void burn_ms(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void cpu_clock_of_child(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		burn_ms(60);
		char c = 1;
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	clockid_t cid;
	CHECK_RET0(clock_getcpuclockid(pid, &cid));
	CHECK_EQ(cid, MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED));
	struct timespec ts;
	CHECK_EQ(raw_gettime(cid, &ts), 0);
	CHECK_GE(ts.tv_sec * 1000 + ts.tv_nsec / 1000000, 50);
	CHECK_EQ(raw_gettime(MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_PROF), &ts), 0);
	CHECK_GE(ts.tv_sec * 1000 + ts.tv_nsec / 1000000, 50);
	kill(pid, SIGKILL);
	mt_wait(pid);
	/* Gone: EINVAL. */
	CHECK_ERR(raw_gettime(cid, &ts), EINVAL);
}

static void *burn_thread(void *arg)
{
	int *tid = arg;
	burn_ms(40);
	__atomic_store_n(tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void cpu_clock_of_thread(void)
{
	static int tid;
	tid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, burn_thread, &tid));
	while (__atomic_load_n(&tid, __ATOMIC_SEQ_CST) == 0)
		sched_yield();
	clockid_t cid;
	CHECK_RET0(pthread_getcpuclockid(th, &cid));
	CHECK_EQ(cid, MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED));
	struct timespec ts;
	CHECK_EQ(raw_gettime(cid, &ts), 0);
	CHECK_GE(ts.tv_sec * 1000 + ts.tv_nsec / 1000000, 30);
	/* Our own thread clock has not burnt that much. */
	struct timespec mine;
	CHECK_EQ(raw_gettime(CLOCK_THREAD_CPUTIME_ID, &mine), 0);
	/* The process clock includes the thread's time. */
	struct timespec proc;
	CHECK_EQ(raw_gettime(CLOCK_PROCESS_CPUTIME_ID, &proc), 0);
	CHECK(proc.tv_sec > ts.tv_sec || (proc.tv_sec == ts.tv_sec && proc.tv_nsec >= ts.tv_nsec));
	pthread_cancel(th);
	pthread_join(th, NULL);
	/* A thread clock of a tid that does not exist. */
	CHECK_ERR(raw_gettime(MAKE_THREAD_CPUCLOCK(99999, CPUCLOCK_SCHED), &ts), EINVAL);
}

static void nanosleep_arg_checks(void)
{
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(syscall(SYS_nanosleep, &bad, NULL), EINVAL);
	struct timespec neg = {0, -1};
	CHECK_ERR(syscall(SYS_nanosleep, &neg, NULL), EINVAL);
	struct timespec negs = {-1, 0};
	CHECK_ERR(syscall(SYS_nanosleep, &negs, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_nanosleep, NULL, NULL), EFAULT);
	struct timespec zero = {0, 0};
	CHECK_EQ(syscall(SYS_nanosleep, &zero, NULL), 0);
}

static void clock_nanosleep_arg_checks(void)
{
	struct timespec ts = {0, 1000};
	/* The thread CPU clock has no sleep: EOPNOTSUPP (Linux 6.x). */
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL), EOPNOTSUPP);
	CHECK_ERR(syscall(SYS_clock_nanosleep, 100, 0, &ts, NULL), EINVAL);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, NULL, NULL), EFAULT);
	/* Unknown flag bits are ignored (only TIMER_ABSTIME means
	 * something). */
	CHECK_EQ(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0x10, &ts, NULL), 0);
	CHECK_EQ(syscall(SYS_clock_nanosleep, CLOCK_BOOTTIME, 0, &ts, NULL), 0);
	CHECK_EQ(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, NULL), 0);
}

static void noop(int s)
{
	(void)s;
}

static void clock_nanosleep_abs_not_updated(void)
{
	/* An interrupted absolute sleep does not write the remainder. */
	signal(SIGALRM, noop);
	struct itimerval it = {{0, 0}, {0, 50000}};
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	struct timespec now, rem = {-7, -7};
	clock_gettime(CLOCK_MONOTONIC, &now);
	now.tv_sec += 10;
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &now, &rem), EINTR);
	CHECK_EQ(rem.tv_sec, -7);
	CHECK_EQ(rem.tv_nsec, -7);
}

static void times_counts_and_clock(void)
{
	struct tms t;
	clock_t c1 = (clock_t)syscall(SYS_times, &t);
	CHECK_NE(c1, (clock_t)-1);
	burn_ms(30);
	clock_t c2 = (clock_t)syscall(SYS_times, &t);
	CHECK_GE(c2, c1);
	CHECK_GE(t.tms_utime + t.tms_stime, 2);
	/* NULL is allowed. */
	CHECK_NE(syscall(SYS_times, NULL), -1);
	CHECK_ERR(syscall(SYS_times, (void *)1), EFAULT);
}

static void itimer_arg_checks(void)
{
	struct itimerval it;
	CHECK_ERR(syscall(SYS_getitimer, 5, &it), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, -1, &it), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, (void *)1), EFAULT);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 1000000;
	CHECK_ERR(setitimer(ITIMER_REAL, &it, NULL), EINVAL);
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = -1;
	CHECK_ERR(setitimer(ITIMER_REAL, &it, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_setitimer, 7, &it, NULL), EINVAL);
	/* A NULL new value disarms (Linux accepts it, with a warning). */
	struct itimerval old;
	CHECK_EQ(syscall(SYS_setitimer, ITIMER_REAL, NULL, &old), 0);
}

static void alarm_rounds_and_cancels(void)
{
	CHECK_EQ(alarm(100), 0);
	unsigned left = alarm(50);
	CHECK(left == 100 || left == 99);
	struct itimerval it;
	CHECK_SYS(getitimer(ITIMER_REAL, &it));
	CHECK_LE(it.it_value.tv_sec, 50);
	CHECK_GE(it.it_value.tv_sec, 48);
	CHECK_EQ(it.it_interval.tv_sec, 0);
	CHECK_GE(alarm(0), 49);
	CHECK_EQ(alarm(0), 0);
}

static void setitimer_old_value_and_interval(void)
{
	struct itimerval it = {{2, 500000}, {5, 0}}, old;
	CHECK_SYS(setitimer(ITIMER_VIRTUAL, &it, NULL));
	memset(&it, 0, sizeof(it));
	CHECK_SYS(setitimer(ITIMER_VIRTUAL, &it, &old));
	CHECK_EQ(old.it_interval.tv_sec, 2);
	CHECK_EQ(old.it_interval.tv_usec, 500000);
	CHECK_LE(old.it_value.tv_sec, 5);
	CHECK_GE(old.it_value.tv_sec, 4);
}

static void timer_ids_and_errors(void)
{
	timer_t a, b;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_NONE;
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &a));
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_BOOTTIME, &sev, &b));
	CHECK_NE((long)a, (long)b);
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_PROCESS_CPUTIME_ID, &sev, &b));
	sev.sigev_notify = 99;
	timer_t c;
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &c), EINVAL);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = 65;
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &c), EINVAL);
	sev.sigev_signo = SIGUSR1;
	CHECK_ERR(syscall(SYS_timer_create, 100, &sev, &c), EINVAL);
	CHECK_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_timer_delete, (timer_t)12345), EINVAL);
	CHECK_ERR(syscall(SYS_timer_getoverrun, (timer_t)12345), EINVAL);
	struct itimerspec its;
	CHECK_ERR(syscall(SYS_timer_gettime, (timer_t)12345, &its), EINVAL);
	CHECK_SYS(syscall(SYS_timer_delete, a));
	CHECK_ERR(syscall(SYS_timer_delete, a), EINVAL);
	CHECK_SYS(syscall(SYS_timer_delete, b));
}

static void timer_null_sigevent_is_sigalrm(void)
{
	timer_t t;
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, &t));
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct itimerspec its = {{0, 0}, {0, 1000000}};
	CHECK_SYS(syscall(SYS_timer_settime, t, 0, &its, NULL));
	siginfo_t si;
	struct timespec to = {5, 0};
	CHECK_EQ(sigtimedwait(&set, &si, &to), SIGALRM);
	CHECK_EQ(si.si_code, SI_TIMER);
	/* With no sigevent the value is the timer id. */
	CHECK_EQ(si.si_value.sival_int, (int)(long)t);
	syscall(SYS_timer_delete, t);
}

static const struct mt_case cases[] = {
	MT_CASE(gettime_every_clock),
	MT_CASE(gettime_errors),
	MT_CASE(getres_values),
	MT_CASE(monotonic_never_goes_back),
	MT_CASE(boottime_at_least_monotonic),
	MT_CASE(settime_checks),
	MT_CASE(gettimeofday_and_time_agree),
	MT_CASE(cpu_clock_of_child),
	MT_CASE(cpu_clock_of_thread),
	MT_CASE(nanosleep_arg_checks),
	MT_CASE(clock_nanosleep_arg_checks),
	MT_CASE(clock_nanosleep_abs_not_updated),
	MT_CASE(times_counts_and_clock),
	MT_CASE(itimer_arg_checks),
	MT_CASE(alarm_rounds_and_cancels),
	MT_CASE(setitimer_old_value_and_interval),
	MT_CASE(timer_ids_and_errors),
	MT_CASE(timer_null_sigevent_is_sigalrm),
};

MT_MAIN(cases)
