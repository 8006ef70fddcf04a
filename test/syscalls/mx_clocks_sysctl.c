//go:build ignore

/* mx_clocks_sysctl: how the clocks relate to each other (ordering of fine,
 * coarse and wall clocks, CPU clocks of live and exited threads),
 * clock_settime/settimeofday error paths, and /proc/sys/kernel and fs values
 * checked against the syscalls they bound (cap_last_cap, ngroups_max,
 * nr_open, random uuid and boot_id). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c)
{
	struct timespec ts;
	if (clock_gettime(c, &ts) != 0)
		return -1;
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int read_str(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return (int)r;
}

static long read_long(const char *path)
{
	char buf[64];
	if (read_str(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static void coarse_clocks_lag_fine_ones(void)
{
	struct timespec res;
	CHECK_SYS(clock_getres(CLOCK_MONOTONIC_COARSE, &res));
	long long tick = res.tv_nsec;
	for (int i = 0; i < 100; i++) {
		long long c = ns(CLOCK_MONOTONIC_COARSE);
		long long f = ns(CLOCK_MONOTONIC);
		CHECK_LE(c, f);
		/* Coarse is at most a tick (plus scheduling slack) behind. */
		CHECK_LE(f - c, tick + 100000000LL);
		long long rc = ns(CLOCK_REALTIME_COARSE);
		long long rf = ns(CLOCK_REALTIME);
		CHECK_LE(rc, rf);
	}
}

static void wall_clock_interfaces_agree(void)
{
	for (int i = 0; i < 50; i++) {
		long long before = ns(CLOCK_REALTIME);
		struct timeval tv;
		CHECK_SYS(gettimeofday(&tv, NULL));
		time_t t = time(NULL);
		long long after = ns(CLOCK_REALTIME);
		long long g = tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
		/* gettimeofday truncates to microseconds. */
		CHECK_GE(g, before - 1000);
		CHECK_LE(g, after);
		/* time() reads the coarse clock: never ahead of now, at
		 * most a second behind. */
		CHECK_LE((long long)t, after / 1000000000LL);
		CHECK_GE((long long)t, before / 1000000000LL - 1);
		/* The raw syscalls agree with the vDSO ones. */
		struct timespec ts;
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts));
		CHECK_GE(ts.tv_sec * 1000000000LL + ts.tv_nsec, before);
		long st = syscall(SYS_time, NULL);
		CHECK_GE(st, (long)t);
	}
	/* A NULL timeval is fine; time() stores through its argument. */
	CHECK_SYS(gettimeofday(NULL, NULL));
	time_t out = 0;
	time_t r = time(&out);
	CHECK_EQ(out, r);
	CHECK_ERR(syscall(SYS_gettimeofday, (void *)1, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_time, (void *)1), EFAULT);
}

static void *spin_then_report(void *p)
{
	clockid_t *out = p;
	pthread_getcpuclockid(pthread_self(), out);
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec < 20000000LL);
	return NULL;
}

static void thread_cpu_clock_of_other_thread(void)
{
	clockid_t cid = 0;
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, spin_then_report, &cid));
	CHECK_RET0(pthread_join(t, NULL));
	/* The thread has exited: its CPU clock is gone. */
	struct timespec ts;
	CHECK_ERR(clock_gettime(cid, &ts), EINVAL);
	CHECK_ERR(clock_getres(cid, &ts), EINVAL);
	/* Our own thread clock read through the encoded id. */
	clockid_t me;
	CHECK_RET0(pthread_getcpuclockid(pthread_self(), &me));
	long long a = ns(CLOCK_THREAD_CPUTIME_ID);
	long long b = ns(me);
	long long c = ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK_LE(a, b);
	CHECK_LE(b, c);
	/* The process clock covers the dead thread's 20 ms. */
	CHECK_GE(ns(CLOCK_PROCESS_CPUTIME_ID), 20000000LL);
}

static void clock_settime_errors(void)
{
	struct timespec ts = {0, 0};
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	/* Clocks that can never be set. */
	CHECK_ERR(clock_settime(CLOCK_MONOTONIC, &ts), EINVAL);
	CHECK_ERR(clock_settime(CLOCK_BOOTTIME, &ts), EINVAL);
	CHECK_ERR(clock_settime(CLOCK_MONOTONIC_RAW, &ts), EINVAL);
	CHECK_ERR(clock_settime(CLOCK_REALTIME_COARSE, &ts), EINVAL);
	CHECK_ERR(clock_settime(100, &ts), EINVAL);
	/* CPU clocks cannot be set either: EPERM on older kernels
	 * ("you can never reset a CPU clock"), EINVAL on recent ones (6.18
	 * here). Accept both. */
	clockid_t cpu[] = {CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
	for (int i = 0; i < 2; i++) {
		errno = 0;
		CHECK_EQ(clock_settime(cpu[i], &ts), -1);
		CHECK(errno == EINVAL || errno == EPERM);
	}
	/* The value is copied in before the privilege check. */
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)1), EFAULT);
}

static void realtime_set_needs_host_privilege(void)
{
	/* Both runs lack CAP_SYS_TIME over the real clock (natively we are
	 * root only in a user namespace): EPERM, checked after the value. */
	struct timespec ts;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EPERM);
	struct timeval tv = {ts.tv_sec, 0};
	CHECK_ERR(settimeofday(&tv, NULL), EPERM);
	struct timespec bad = {ts.tv_sec, 1000000000};
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &bad), EINVAL);
	bad.tv_nsec = -1;
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &bad), EINVAL);
	struct timeval badtv = {ts.tv_sec, 1000000};
	CHECK_ERR(settimeofday(&badtv, NULL), EINVAL);
}

static void adjtimex_queries(void)
{
	/* A query (modes 0) needs no privilege; its answer depends on
	 * whether NTP steers the host clock, so only what holds either way
	 * is checked: a clock state from TIME_OK to TIME_ERROR, the fixed
	 * tolerance (500 ppm scaled by 2^16), a tick, and the time. */
	struct timex tx;
	memset(&tx, 0, sizeof(tx));
	struct timespec before, after;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &before));
	int r = CHECK_SYS(adjtimex(&tx));
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &after));
	CHECK(r >= TIME_OK && r <= TIME_ERROR);
	CHECK_EQ(tx.tolerance, 32768000);
	CHECK_GT(tx.tick, 0);
	CHECK_GT(tx.precision, 0);
	CHECK_GE(tx.time.tv_sec, before.tv_sec);
	CHECK_LE(tx.time.tv_sec, after.tv_sec);
	/* clock_adjtime of CLOCK_REALTIME is the same query. */
	memset(&tx, 0, sizeof(tx));
	r = CHECK_SYS(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
	CHECK(r >= TIME_OK && r <= TIME_ERROR);
	/* Reading the single-shot offset is a query too. */
	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_OFFSET_SS_READ;
	CHECK_SYS(adjtimex(&tx));
	/* Changes need CAP_SYS_TIME over the host clock, which neither run
	 * has; the single-shot bit without ADJ_OFFSET is invalid first. */
	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_FREQUENCY;
	CHECK_ERR(adjtimex(&tx), EPERM);
	tx.modes = ADJ_OFFSET_SINGLESHOT;
	CHECK_ERR(adjtimex(&tx), EPERM);
	tx.modes = 0x8000;
	CHECK_ERR(adjtimex(&tx), EINVAL);
	tx.modes = ADJ_STATUS;
	CHECK_ERR(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx), EPERM);
	/* Other clocks cannot be adjusted; unknown ones do not exist. */
	memset(&tx, 0, sizeof(tx));
	CHECK_ERR(syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, &tx), EOPNOTSUPP);
	CHECK_ERR(syscall(SYS_clock_adjtime, CLOCK_BOOTTIME, &tx), EOPNOTSUPP);
	CHECK_ERR(syscall(SYS_clock_adjtime, CLOCK_PROCESS_CPUTIME_ID, &tx), EOPNOTSUPP);
	CHECK_ERR(syscall(SYS_clock_adjtime, 100, &tx), EINVAL);
	/* The structure is read before anything else. */
	CHECK_ERR(syscall(SYS_adjtimex, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, (void *)1), EFAULT);
}

static void cap_last_cap_bounds_capbset(void)
{
	long last = read_long("/proc/sys/kernel/cap_last_cap");
	CHECK_GE(last, 40);
	CHECK_EQ(prctl(PR_CAPBSET_READ, last, 0, 0, 0), 1);
	CHECK_ERR(prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_CAPBSET_READ, -1, 0, 0, 0), EINVAL);
}

static void ngroups_max_bounds_setgroups(void)
{
	long max = read_long("/proc/sys/kernel/ngroups_max");
	CHECK_EQ(max, 65536);
	CHECK_EQ(sysconf(_SC_NGROUPS_MAX), max);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		static gid_t g[65537];
		for (int i = 0; i < 65537; i++)
			g[i] = i;
		errno = 0;
		CHILD_CHECK(setgroups(65537, g) == -1 && errno == EINVAL);
		CHILD_CHECK(setgroups(65536, g) == 0);
		CHILD_CHECK(getgroups(0, NULL) == 65536);
		errno = 0;
		CHILD_CHECK(getgroups(10, g) == -1 && errno == EINVAL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void nr_open_bounds_nofile(void)
{
	long nr = read_long("/proc/sys/fs/nr_open");
	CHECK_GE(nr, 1024);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		struct rlimit r;
		CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &r) == 0);
		CHILD_CHECK(r.rlim_max <= (rlim_t)nr);
		/* Above nr_open is EPERM even for root (if the hard limit
		 * could be raised at all). */
		struct rlimit big = {nr + 1, nr + 1};
		errno = 0;
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &big) == -1 && errno == EPERM);
		/* Soft above hard is EINVAL. */
		struct rlimit inv = {r.rlim_max, r.rlim_max - 1};
		errno = 0;
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &inv) == -1 && errno == EINVAL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static int uuid_shape(const char *s)
{
	if (strlen(s) != 37 || s[36] != '\n')
		return 0;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!strchr("0123456789abcdef", s[i])) {
			return 0;
		}
	}
	return 1;
}

static void random_uuid_and_boot_id(void)
{
	char a[64], b[64], c[64], d[64];
	CHECK_EQ(read_str("/proc/sys/kernel/random/uuid", a, sizeof(a)), 37);
	CHECK_EQ(read_str("/proc/sys/kernel/random/uuid", b, sizeof(b)), 37);
	CHECK(uuid_shape(a));
	CHECK(uuid_shape(b));
	CHECK(strcmp(a, b) != 0); /* fresh every read */
	CHECK_EQ(a[14], '4');     /* version 4 */
	CHECK(strchr("89ab", a[19]) != NULL);
	CHECK_EQ(read_str("/proc/sys/kernel/random/boot_id", c, sizeof(c)), 37);
	CHECK_EQ(read_str("/proc/sys/kernel/random/boot_id", d, sizeof(d)), 37);
	CHECK(uuid_shape(c));
	CHECK_STREQ(c, d); /* fixed for the boot */
	/* Read-only for us. */
	int fd = open("/proc/sys/kernel/random/boot_id", O_WRONLY);
	CHECK_EQ(fd, -1);
}

static const struct mt_case cases[] = {
	MT_CASE(coarse_clocks_lag_fine_ones),
	MT_CASE(wall_clock_interfaces_agree),
	MT_CASE(thread_cpu_clock_of_other_thread),
	MT_CASE(clock_settime_errors),
	MT_CASE(realtime_set_needs_host_privilege),
	MT_CASE(adjtimex_queries),
	MT_CASE(cap_last_cap_bounds_capbset),
	MT_CASE(ngroups_max_bounds_setgroups),
	MT_CASE(nr_open_bounds_nofile),
	MT_CASE(random_uuid_and_boot_id),
};

MT_MAIN(cases)
