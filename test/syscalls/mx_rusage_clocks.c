//go:build ignore

/* mx_rusage_clocks: resource usage and clock queries checked for internal
 * consistency: getrusage for self, threads and waited-for children, times,
 * clock_getres for every clock id (including CPU clocks of processes and
 * threads), and uname against /proc/sys/kernel. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long tv_us(struct timeval tv)
{
	return tv.tv_sec * 1000000L + tv.tv_usec;
}

static void burn_ms(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (;;) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		long d = (b.tv_sec - a.tv_sec) * 1000L +
			 (b.tv_nsec - a.tv_nsec) / 1000000L;
		if (d >= ms)
			return;
	}
}

static int read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	if (r > 0 && buf[r - 1] == '\n')
		buf[r - 1] = 0;
	return 0;
}

static void getres_realtime_family(void)
{
	clockid_t ids[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
			   CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE,
			   CLOCK_BOOTTIME, CLOCK_PROCESS_CPUTIME_ID,
			   CLOCK_THREAD_CPUTIME_ID};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct timespec ts = {-1, -1};
		CHECK_EQ(clock_getres(ids[i], &ts), 0);
		CHECK_EQ(ts.tv_sec, 0);
		CHECK_GT(ts.tv_nsec, 0);
		CHECK_LE(ts.tv_nsec, 10000000); /* at most a 100 Hz tick */
		/* A NULL result pointer is allowed. */
		CHECK_EQ(clock_getres(ids[i], NULL), 0);
	}
	/* The coarse clocks are never finer than the fine ones. */
	struct timespec fine, coarse;
	CHECK_SYS(clock_getres(CLOCK_MONOTONIC, &fine));
	CHECK_SYS(clock_getres(CLOCK_MONOTONIC_COARSE, &coarse));
	CHECK_GE(coarse.tv_nsec, fine.tv_nsec);
}

static void getres_invalid_ids(void)
{
	struct timespec ts;
	CHECK_ERR(syscall(SYS_clock_getres, 16, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_getres, 100, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, 100, &ts), EINVAL);
	/* Bad pointer: EFAULT. */
	CHECK_ERR(syscall(SYS_clock_getres, CLOCK_MONOTONIC, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *)1), EFAULT);
}

static void cpu_clock_of_pid_and_thread(void)
{
	clockid_t pc, tc;
	CHECK_RET0(clock_getcpuclockid(getpid(), &pc));
	CHECK_RET0(pthread_getcpuclockid(pthread_self(), &tc));
	struct timespec a, b;
	CHECK_SYS(clock_getres(pc, &a));
	CHECK_EQ(a.tv_sec, 0);
	CHECK_GT(a.tv_nsec, 0);
	CHECK_SYS(clock_getres(tc, &b));
	CHECK_GT(b.tv_nsec, 0);
	burn_ms(20);
	CHECK_SYS(clock_gettime(pc, &a));
	CHECK_SYS(clock_gettime(tc, &b));
	CHECK_GE(a.tv_sec * 1000000000LL + a.tv_nsec, 20000000LL);
	CHECK_GE(b.tv_sec * 1000000000LL + b.tv_nsec, 20000000LL);
	/* The CPU clock of a process that does not exist: ESRCH from
	 * clock_getcpuclockid, EINVAL from clock_gettime on its id. */
	pid_t child = CHECK_SYS(fork());
	if (child == 0)
		_exit(0);
	CHECK_EXITED(mt_wait(child), 0);
	clockid_t dead;
	CHECK_RET(clock_getcpuclockid(child, &dead), ESRCH);
	/* Encode the clock id by hand (CPUCLOCK_SCHED of pid): ~pid << 3 | 2. */
	clockid_t manual = (clockid_t)((~(unsigned)child) << 3 | 2);
	CHECK_ERR(syscall(SYS_clock_gettime, manual, &a), EINVAL);
}

static void rusage_self_grows_with_cpu(void)
{
	struct rusage a, b;
	CHECK_SYS(getrusage(RUSAGE_SELF, &a));
	burn_ms(30);
	CHECK_SYS(getrusage(RUSAGE_SELF, &b));
	long da = tv_us(a.ru_utime) + tv_us(a.ru_stime);
	long db = tv_us(b.ru_utime) + tv_us(b.ru_stime);
	CHECK_GE(db - da, 20000); /* generous: tick accounting is coarse */
	CHECK_GT(b.ru_maxrss, 0);
	CHECK_GE(b.ru_maxrss, a.ru_maxrss);
	CHECK_ERR(getrusage(5, &a), EINVAL);
	CHECK_ERR(getrusage(-3, &a), EINVAL);
	CHECK_ERR(syscall(SYS_getrusage, RUSAGE_SELF, (void *)1), EFAULT);
}

struct thr_arg {
	struct rusage ru;
	int rc;
};

static void *thread_burn(void *p)
{
	struct thr_arg *a = p;
	struct rusage before;
	getrusage(RUSAGE_THREAD, &before);
	burn_ms(40);
	a->rc = getrusage(RUSAGE_THREAD, &a->ru);
	long d = tv_us(a->ru.ru_utime) + tv_us(a->ru.ru_stime) -
		 tv_us(before.ru_utime) - tv_us(before.ru_stime);
	if (d < 30000)
		a->rc = -2;
	return NULL;
}

static void rusage_thread_vs_self(void)
{
	struct rusage main_before;
	CHECK_SYS(getrusage(RUSAGE_THREAD, &main_before));
	pthread_t t;
	struct thr_arg arg = {0};
	CHECK_RET0(pthread_create(&t, NULL, thread_burn, &arg));
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(arg.rc, 0);
	struct rusage self, main_after;
	CHECK_SYS(getrusage(RUSAGE_SELF, &self));
	CHECK_SYS(getrusage(RUSAGE_THREAD, &main_after));
	long thr = tv_us(arg.ru.ru_utime) + tv_us(arg.ru.ru_stime);
	long all = tv_us(self.ru_utime) + tv_us(self.ru_stime);
	long mine = tv_us(main_after.ru_utime) + tv_us(main_after.ru_stime);
	/* The process total includes the exited thread's time. */
	CHECK_GE(all, thr);
	/* The main thread did not burn the other thread's 40 ms. */
	CHECK_LT(mine - (tv_us(main_before.ru_utime) + tv_us(main_before.ru_stime)),
		 30000);
}

static void rusage_children_only_after_wait(void)
{
	struct rusage c0, c1, c2;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &c0));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		burn_ms(60);
		write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	/* Still running (and then a zombie): not counted yet. */
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &c1));
	CHECK_EQ(tv_us(c1.ru_utime) + tv_us(c1.ru_stime),
		 tv_us(c0.ru_utime) + tv_us(c0.ru_stime));
	CHECK_SYS(kill(child, SIGKILL));
	siginfo_t si;
	CHECK_SYS(waitid(P_PID, child, &si, WEXITED | WNOWAIT));
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &c1));
	CHECK_EQ(tv_us(c1.ru_utime) + tv_us(c1.ru_stime),
		 tv_us(c0.ru_utime) + tv_us(c0.ru_stime));
	CHECK_SIGNALED(mt_wait(child), SIGKILL);
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &c2));
	long d = tv_us(c2.ru_utime) + tv_us(c2.ru_stime) -
		 tv_us(c0.ru_utime) - tv_us(c0.ru_stime);
	CHECK_GE(d, 40000);
	CHECK_GT(c2.ru_maxrss, 0);
	close(p[0]);
	close(p[1]);
}

static void wait4_rusage_is_the_childs(void)
{
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		burn_ms(50);
		_exit(7);
	}
	int st;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	CHECK_EQ(wait4(child, &st, 0, &ru), child);
	CHECK_EXITED(st, 7);
	CHECK_GE(tv_us(ru.ru_utime) + tv_us(ru.ru_stime), 40000);
	CHECK_GT(ru.ru_maxrss, 0);
}

static void grandchildren_counted_via_child(void)
{
	struct rusage c0, c1;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &c0));
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		pid_t g = fork();
		CHILD_CHECK(g >= 0);
		if (g == 0) {
			burn_ms(50);
			_exit(0);
		}
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &c1));
	/* The child waited for the grandchild, so its time rolls up. */
	CHECK_GE(tv_us(c1.ru_utime) + tv_us(c1.ru_stime) -
			 tv_us(c0.ru_utime) - tv_us(c0.ru_stime),
		 40000);
}

static void times_matches_rusage(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	CHECK_EQ(hz, 100);
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		burn_ms(60);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
	burn_ms(30);
	struct tms t;
	errno = 0;
	clock_t r = times(&t);
	CHECK(r != (clock_t)-1);
	struct rusage self, ch;
	CHECK_SYS(getrusage(RUSAGE_SELF, &self));
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &ch));
	long self_ticks = t.tms_utime + t.tms_stime;
	long ch_ticks = t.tms_cutime + t.tms_cstime;
	long self_rt = (tv_us(self.ru_utime) + tv_us(self.ru_stime)) / 10000;
	long ch_rt = (tv_us(ch.ru_utime) + tv_us(ch.ru_stime)) / 10000;
	CHECK_GE(ch_ticks, 4);
	CHECK_GE(self_ticks, 2);
	/* Same accounting, different rounding: within two ticks each. */
	CHECK_LE(labs(self_ticks - self_rt), 3);
	CHECK_LE(labs(ch_ticks - ch_rt), 3);
	/* NULL buffer is allowed and returns the same clock. */
	clock_t r2 = times(NULL);
	CHECK_GE(r2, r);
	CHECK_ERR(syscall(SYS_times, (void *)1), EFAULT);
}

static void uname_vs_proc_sys_kernel(void)
{
	struct utsname u;
	CHECK_SYS(uname(&u));
	char buf[256];
	CHECK_SYS(read_file("/proc/sys/kernel/ostype", buf, sizeof(buf)));
	CHECK_STREQ(buf, u.sysname);
	CHECK_STREQ(u.sysname, "Linux");
	CHECK_SYS(read_file("/proc/sys/kernel/osrelease", buf, sizeof(buf)));
	CHECK_STREQ(buf, u.release);
	CHECK_SYS(read_file("/proc/sys/kernel/hostname", buf, sizeof(buf)));
	CHECK_STREQ(buf, u.nodename);
	CHECK_SYS(read_file("/proc/sys/kernel/domainname", buf, sizeof(buf)));
	CHECK_STREQ(buf, u.domainname);
	CHECK_SYS(read_file("/proc/sys/kernel/version", buf, sizeof(buf)));
	CHECK_STREQ(buf, u.version);
	CHECK_STREQ(u.machine, "x86_64");
	CHECK_ERR(syscall(SYS_uname, (void *)1), EFAULT);
}

static void sethostname_shows_in_proc(void)
{
	struct utsname u;
	char old[65];
	CHECK_SYS(uname(&u));
	strcpy(old, u.nodename);
	CHECK_SYS(sethostname("mx-tmisc", 8));
	char buf[128];
	CHECK_SYS(read_file("/proc/sys/kernel/hostname", buf, sizeof(buf)));
	CHECK_STREQ(buf, "mx-tmisc");
	CHECK_SYS(setdomainname("mxdom", 5));
	CHECK_SYS(read_file("/proc/sys/kernel/domainname", buf, sizeof(buf)));
	CHECK_STREQ(buf, "mxdom");
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.domainname, "mxdom");
	char big[70];
	memset(big, 'a', sizeof(big));
	CHECK_ERR(sethostname(big, 65), EINVAL);
	CHECK_ERR(setdomainname(big, 65), EINVAL);
	CHECK_ERR(sethostname(big, (size_t)-1), EINVAL);
	CHECK_SYS(sethostname(old, strlen(old)));
	CHECK_SYS(setdomainname("(none)", 6));
}

static const struct mt_case cases[] = {
	MT_CASE(getres_realtime_family),
	MT_CASE(getres_invalid_ids),
	MT_CASE(cpu_clock_of_pid_and_thread),
	MT_CASE(rusage_self_grows_with_cpu),
	MT_CASE(rusage_thread_vs_self),
	MT_CASE(rusage_children_only_after_wait),
	MT_CASE(wait4_rusage_is_the_childs),
	MT_CASE(grandchildren_counted_via_child),
	MT_CASE(times_matches_rusage),
	MT_CASE(uname_vs_proc_sys_kernel),
	MT_CASE(sethostname_shows_in_proc),
};

MT_MAIN(cases)
