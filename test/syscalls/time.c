//go:build ignore

/* time: clock_gettime for every clock id, clock_getres, gettimeofday,
 * time, monotonic progress, CPU clocks, invalid clocks and bad pointers
 * (raw syscalls, so the vDSO does not turn EFAULT into a crash), and the
 * privileged setters failing with EPERM. */
#include "moattest.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* burn spins until this thread has used ms milliseconds of CPU (wall time
 * would under-count on a loaded machine). */
static void burn(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	volatile uint64_t x = 0;
	for (;;) {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		if ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) >= ms * 1000000LL)
			return;
	}
}

/* check_clock reads clk through libc and the raw syscall. */
static void check_clock(clockid_t clk)
{
	struct timespec a, b;
	CHECK_SYS(clock_gettime(clk, &a));
	CHECK_GE(a.tv_nsec, 0);
	CHECK_LT(a.tv_nsec, 1000000000L);
	CHECK_GE(a.tv_sec, 0);
	CHECK_SYS(syscall(SYS_clock_gettime, clk, &b));
	CHECK_GE(b.tv_nsec, 0);
	CHECK_LT(b.tv_nsec, 1000000000L);
	struct timespec res;
	CHECK_SYS(clock_getres(clk, &res));
	CHECK_EQ(res.tv_sec, 0);
	CHECK_GT(res.tv_nsec, 0);
}

static void clock_realtime(void)
{
	check_clock(CLOCK_REALTIME);
	MT_BAIL();
	struct timespec ts;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	/* After 2020-01-01. */
	CHECK_GT(ts.tv_sec, 1577836800L);
}

static void clock_monotonic(void) { check_clock(CLOCK_MONOTONIC); }
static void clock_monotonic_raw(void) { check_clock(CLOCK_MONOTONIC_RAW); }
static void clock_realtime_coarse(void) { check_clock(CLOCK_REALTIME_COARSE); }
static void clock_monotonic_coarse(void) { check_clock(CLOCK_MONOTONIC_COARSE); }
static void clock_boottime(void) { check_clock(CLOCK_BOOTTIME); }
static void clock_process_cputime(void) { check_clock(CLOCK_PROCESS_CPUTIME_ID); }
static void clock_thread_cputime(void) { check_clock(CLOCK_THREAD_CPUTIME_ID); }

static void clock_tai(void)
{
	check_clock(CLOCK_TAI);
	MT_BAIL();
	struct timespec rt, tai;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &rt));
	CHECK_SYS(clock_gettime(CLOCK_TAI, &tai));
	/* TAI = UTC + offset (0 unless set, at most a minute). */
	CHECK_GE(tai.tv_sec - rt.tv_sec, -1);
	CHECK_LE(tai.tv_sec - rt.tv_sec, 60);
}

static void clock_getres_values(void)
{
	struct timespec res;
	CHECK_SYS(clock_getres(CLOCK_MONOTONIC, &res));
	CHECK_EQ(res.tv_nsec, 1);
	CHECK_SYS(clock_getres(CLOCK_REALTIME, &res));
	CHECK_EQ(res.tv_nsec, 1);
	CHECK_SYS(clock_getres(CLOCK_MONOTONIC_COARSE, &res));
	CHECK_GE(res.tv_nsec, 1000000L);
	CHECK_LE(res.tv_nsec, 10000000L);
	/* A NULL result pointer is allowed. */
	CHECK_SYS(clock_getres(CLOCK_MONOTONIC, NULL));
	CHECK_SYS(syscall(SYS_clock_getres, CLOCK_MONOTONIC, NULL));
}

static void monotonic_never_goes_back(void)
{
	struct timespec prev, cur;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &prev));
	for (int i = 0; i < 20000; i++) {
		CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &cur));
		CHECK_GE(ns(&cur), ns(&prev));
		prev = cur;
	}
}

static void monotonic_tracks_sleep(void)
{
	struct timespec a, b, ba, bb;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &a));
	CHECK_SYS(clock_gettime(CLOCK_BOOTTIME, &ba));
	usleep(30000);
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &b));
	CHECK_SYS(clock_gettime(CLOCK_BOOTTIME, &bb));
	CHECK_GE(ns(&b) - ns(&a), 30 * 1000000LL);
	CHECK_LT(ns(&b) - ns(&a), 5000 * 1000000LL);
	CHECK_GE(ns(&bb) - ns(&ba), 30 * 1000000LL);
	/* Boot time includes suspend: never behind monotonic. */
	CHECK_GE(ns(&bb), ns(&b) - 1000000);
}

static void coarse_close_to_fine(void)
{
	struct timespec c, f;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &f));
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC_COARSE, &c));
	CHECK_LE(ns(&c), ns(&f) + 100000000);
	CHECK_GE(ns(&c), ns(&f) - 100000000);
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &f));
	CHECK_SYS(clock_gettime(CLOCK_REALTIME_COARSE, &c));
	CHECK_LE(ns(&c), ns(&f) + 100000000);
	CHECK_GE(ns(&c), ns(&f) - 100000000);
}

static void monotonic_raw_close_to_monotonic(void)
{
	struct timespec m0, r0, m1, r1;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &m0));
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC_RAW, &r0));
	usleep(50000);
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &m1));
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC_RAW, &r1));
	int64_t dm = ns(&m1) - ns(&m0), dr = ns(&r1) - ns(&r0);
	/* Loose: a preemption between the paired reads skews them. */
	CHECK_LT(dm - dr, 20000000);
	CHECK_GT(dm - dr, -20000000);
}

static void gettimeofday_matches_realtime(void)
{
	struct timeval tv;
	struct timespec ts;
	struct timezone tz;
	CHECK_SYS(gettimeofday(&tv, &tz));
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	CHECK_GE(tv.tv_usec, 0);
	CHECK_LT(tv.tv_usec, 1000000);
	int64_t d = ns(&ts) - ((int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000);
	CHECK_GE(d, 0);
	CHECK_LT(d, 1000000000LL);
	CHECK_SYS(syscall(SYS_gettimeofday, &tv, NULL));
	CHECK_SYS(syscall(SYS_gettimeofday, NULL, NULL));
}

static void time_matches_realtime(void)
{
	time_t t1 = time(NULL);
	struct timespec ts;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	time_t t2;
	CHECK_EQ(time(&t2), t2);
	CHECK_GE(ts.tv_sec, t1);
	/* time() reads the coarse clock, which may lag a tick behind. */
	CHECK_LE(ts.tv_sec, t2 + 1);
	time_t t3 = 0;
	long r = syscall(SYS_time, &t3);
	CHECK_EQ(r, t3);
	CHECK_GE(t3, t2);
}

static void invalid_clock_einval(void)
{
	struct timespec ts;
	CHECK_ERR(clock_gettime(100, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, 16, &ts), EINVAL);
	CHECK_ERR(clock_getres(100, &ts), EINVAL);
	/* A CPU clock id for a process that does not exist. */
	clockid_t cid = (clockid_t)((~(unsigned)424242 << 3) | 2);
	CHECK_ERR(clock_gettime(cid, &ts), EINVAL);
}

static void bad_pointer_efault(void)
{
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *)8), EFAULT);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_REALTIME, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_clock_getres, CLOCK_MONOTONIC, (void *)8), EFAULT);
	CHECK_ERR(syscall(SYS_gettimeofday, (void *)8, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_time, (void *)8), EFAULT);
}

static void process_cputime_advances(void)
{
	struct timespec a, b, wa, wb;
	CHECK_SYS(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a));
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &wa));
	burn(30);
	CHECK_SYS(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b));
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &wb));
	CHECK_GE(ns(&b) - ns(&a), 30 * 1000000LL);
	CHECK_LE(ns(&b) - ns(&a), ns(&wb) - ns(&wa) + 5000000);
	/* Sleeping uses no CPU. */
	CHECK_SYS(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a));
	usleep(50000);
	CHECK_SYS(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b));
	CHECK_LT(ns(&b) - ns(&a), 20 * 1000000LL);
}

static volatile int spin_stop;

static void *spinner(void *arg)
{
	(void)arg;
	volatile uint64_t x = 0;
	while (!spin_stop)
		x++;
	return NULL;
}

static void thread_cpu_clocks(void)
{
	pthread_t th;
	spin_stop = 0;
	CHECK_RET0(pthread_create(&th, NULL, spinner, NULL));
	clockid_t cid;
	CHECK_RET0(pthread_getcpuclockid(th, &cid));
	struct timespec mine0, mine1, other0, other1;
	CHECK_SYS(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mine0));
	CHECK_SYS(clock_gettime(cid, &other0));
	/* Sleep until the spinner has used 50 ms of CPU (a loaded machine
	 * may take a while to give it that much). Few, long sleeps: the
	 * sandbox counts a thread's time in application code by the wall
	 * clock, so each wake-up on a busy host adds its wait for a CPU. */
	int64_t deadline = mt_now_ns() + 10000 * 1000000LL;
	do {
		usleep(50000);
		CHECK_SYS(clock_gettime(cid, &other1));
	} while (ns(&other1) - ns(&other0) < 50 * 1000000LL && mt_now_ns() < deadline);
	CHECK_SYS(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mine1));
	spin_stop = 1;
	CHECK_RET0(pthread_join(th, NULL));
	/* The spinner used CPU while we slept; we used far less. */
	int64_t spun = ns(&other1) - ns(&other0);
	CHECK_GE(spun, 50 * 1000000LL);
	CHECK_LT(ns(&mine1) - ns(&mine0), spun / 2);
	/* The process clock covers both threads. */
	struct timespec proc;
	CHECK_SYS(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &proc));
	CHECK_GE(ns(&proc), ns(&other1));
}

static void process_cpu_clock_of_child(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		burn(30);
		if (write(p[1], "b", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	clockid_t cid;
	CHECK_RET0(clock_getcpuclockid(pid, &cid));
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	struct timespec ts;
	CHECK_SYS(clock_gettime(cid, &ts));
	kill(pid, SIGKILL);
	mt_wait(pid);
	CHECK_GT(ns(&ts), 10 * 1000000LL);
	CHECK_RET(clock_getcpuclockid(424242, &cid), ESRCH);
	CHECK_RET0(clock_getcpuclockid(0, &cid));
}

static void setters_need_privilege(void)
{
	struct timespec ts;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	/* CAP_SYS_TIME is not granted inside a user namespace or sandbox. */
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EPERM);
	CHECK_ERR(clock_settime(CLOCK_MONOTONIC, &ts), EINVAL);
	struct timeval tv = { ts.tv_sec, 0 };
	CHECK_ERR(settimeofday(&tv, NULL), EPERM);
	ts.tv_nsec = 1000000000L;
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(clock_realtime),
	MT_CASE(clock_monotonic),
	MT_CASE(clock_monotonic_raw),
	MT_CASE(clock_realtime_coarse),
	MT_CASE(clock_monotonic_coarse),
	MT_CASE(clock_boottime),
	MT_CASE(clock_process_cputime),
	MT_CASE(clock_thread_cputime),
	MT_CASE(clock_tai),
	MT_CASE(clock_getres_values),
	MT_CASE(monotonic_never_goes_back),
	MT_CASE(monotonic_tracks_sleep),
	MT_CASE(coarse_close_to_fine),
	MT_CASE(monotonic_raw_close_to_monotonic),
	MT_CASE(gettimeofday_matches_realtime),
	MT_CASE(time_matches_realtime),
	MT_CASE(invalid_clock_einval),
	MT_CASE(bad_pointer_efault),
	MT_CASE(process_cputime_advances),
	MT_CASE(thread_cpu_clocks),
	MT_CASE(process_cpu_clock_of_child),
	MT_CASE(setters_need_privilege),
};

MT_MAIN(cases)
