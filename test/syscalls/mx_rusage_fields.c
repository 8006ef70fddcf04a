//go:build ignore

/* mx_rusage_fields: getrusage counters (CPU time, max RSS, faults,
 * voluntary context switches, for self, thread and children) and
 * /proc/self/stat, statm and status reporting the same counters, sizes,
 * scheduling values and start times as the syscalls. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char sbuf[8192];

static int slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, sbuf, sizeof(sbuf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	sbuf[n] = 0;
	return (int)n;
}

/* stat_field returns field number n (1-based, n >= 4) of /proc/PATH/stat. */
static long long stat_field(const char *path, int n)
{
	if (slurp(path) < 0)
		return -1;
	char *p = strrchr(sbuf, ')');
	if (!p)
		return -1;
	p += 4; /* ") S " */
	for (int i = 4; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	return strtoll(p, NULL, 10);
}

static long long status_kb(const char *name)
{
	if (slurp("/proc/self/status") < 0)
		return -1;
	char *p = strstr(sbuf, name);
	if (!p)
		return -1;
	p += strlen(name) + 1;
	return strtoll(p, NULL, 10);
}

static void stat_minflt_matches_rusage(void)
{
	struct rusage r1, r2;
	CHECK_SYS(getrusage(RUSAGE_SELF, &r1));
	long long f = stat_field("/proc/self/stat", 10);
	CHECK_SYS(getrusage(RUSAGE_SELF, &r2));
	CHECK_GE(f, r1.ru_minflt);
	CHECK_LE(f, r2.ru_minflt);
	/* Field 12 (majflt) is the rusage majflt too. */
	long long maj = stat_field("/proc/self/stat", 12);
	CHECK_EQ(maj, r2.ru_majflt);
}

static void minflt_counts_touched_pages(void)
{
	/* Touching fresh memory faults; Linux counts one minor fault per
	 * page, the Sentry one per chunk it fills, so only "some" is
	 * checked, and that touching the same pages again costs less. */
	size_t n = 256 * 4096;
	char *p = CHECK_MAP(mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	struct rusage a, b, c;
	CHECK_SYS(getrusage(RUSAGE_SELF, &a));
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	CHECK_SYS(getrusage(RUSAGE_SELF, &b));
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 2;
	CHECK_SYS(getrusage(RUSAGE_SELF, &c));
	CHECK_GT(b.ru_minflt, a.ru_minflt);
	CHECK_LT(c.ru_minflt - b.ru_minflt, b.ru_minflt - a.ru_minflt);
	/* The thread's own count saw them too. */
	struct rusage th;
	CHECK_SYS(getrusage(RUSAGE_THREAD, &th));
	CHECK_GE(th.ru_minflt, b.ru_minflt - a.ru_minflt);
	munmap(p, n);
}

static void voluntary_switches_count_sleeps(void)
{
	/* Each sleep gives up the CPU: a voluntary context switch, counted
	 * for the thread and the process; /proc/self/status shows the
	 * (main) thread's count. */
	struct rusage a, b;
	CHECK_SYS(getrusage(RUSAGE_THREAD, &a));
	for (int i = 0; i < 5; i++) {
		struct timespec ts = {0, 1000000};
		CHECK_SYS(nanosleep(&ts, NULL));
	}
	CHECK_SYS(getrusage(RUSAGE_THREAD, &b));
	CHECK_GE(b.ru_nvcsw - a.ru_nvcsw, 5);
	struct rusage self;
	CHECK_SYS(getrusage(RUSAGE_SELF, &self));
	CHECK_GE(self.ru_nvcsw, b.ru_nvcsw);
	CHECK_GE(slurp("/proc/self/status"), 0);
	char *v = strstr(sbuf, "voluntary_ctxt_switches:");
	CHECK(v != NULL);
	CHECK_GE(strtoll(v + strlen("voluntary_ctxt_switches:"), NULL, 10), b.ru_nvcsw);
}

static void children_counters_after_wait(void)
{
	/* A reaped child's faults and switches move to RUSAGE_CHILDREN, and
	 * wait4 reports them for the child. */
	struct rusage before;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &before));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		size_t n = 128 * 4096;
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(p != MAP_FAILED);
		for (size_t i = 0; i < n; i += 4096)
			p[i] = 1;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
		_exit(0);
	}
	int st;
	struct rusage w;
	CHECK_EQ(wait4(pid, &st, 0, &w), pid);
	CHECK_EXITED(st, 0);
	CHECK_GT(w.ru_minflt, 0);
	CHECK_GT(w.ru_nvcsw, 0);
	struct rusage after;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &after));
	CHECK_GE(after.ru_minflt - before.ru_minflt, w.ru_minflt);
	CHECK_GE(after.ru_nvcsw - before.ru_nvcsw, w.ru_nvcsw);
	/* /proc/self/stat's cminflt (field 11) is the same count. */
	CHECK_EQ(stat_field("/proc/self/stat", 11), after.ru_minflt);
}

static void code_and_stack_bounds_in_stat(void)
{
	/* startcode and endcode (fields 26, 27) bound the executable's
	 * text, which holds this function; startstack (28) is the initial
	 * stack pointer, above every frame of ours. */
	unsigned long long sc = stat_field("/proc/self/stat", 26);
	unsigned long long ec = stat_field("/proc/self/stat", 27);
	unsigned long long ss = stat_field("/proc/self/stat", 28);
	int local = 0;
	uintptr_t fn = (uintptr_t)code_and_stack_bounds_in_stat;
	CHECK_GT(sc, 0);
	CHECK_LE(sc, fn);
	CHECK_LT(fn, ec);
	CHECK_GT(ss, (uintptr_t)&local);
	/* It lies within the [stack] mapping of /proc/self/maps. */
	CHECK_GE(slurp("/proc/self/maps"), 0);
	char *line = strstr(sbuf, "[stack]");
	CHECK(line != NULL);
	while (line > sbuf && line[-1] != '\n')
		line--;
	unsigned long long lo, hi;
	CHECK_EQ(sscanf(line, "%llx-%llx", &lo, &hi), 2);
	CHECK(ss >= lo && ss < hi);
	/* A forked child has the same layout. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(stat_field("/proc/self/stat", 26) == (long long)sc);
		CHILD_CHECK(stat_field("/proc/self/stat", 28) == (long long)ss);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void cpu_ticks_match_rusage(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec < 50000000LL);
	long long ut = stat_field("/proc/self/stat", 14);
	long long st = stat_field("/proc/self/stat", 15);
	struct rusage r;
	CHECK_SYS(getrusage(RUSAGE_SELF, &r));
	long long rt = (r.ru_utime.tv_sec * 1000000LL + r.ru_utime.tv_usec +
			r.ru_stime.tv_sec * 1000000LL + r.ru_stime.tv_usec) / 10000;
	CHECK_GE(ut + st, 4);
	CHECK_LE(llabs(ut + st - rt), 3);
}

static void maxrss_grows_with_touched_memory(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		struct rusage a, b;
		CHILD_CHECK(getrusage(RUSAGE_SELF, &a) == 0);
		size_t len = 16 << 20;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(m != MAP_FAILED);
		memset(m, 1, len);
		CHILD_CHECK(getrusage(RUSAGE_SELF, &b) == 0);
		/* kilobytes */
		CHILD_CHECK(b.ru_maxrss - a.ru_maxrss >= 12 * 1024);
		CHILD_CHECK(status_kb("VmHWM") >= b.ru_maxrss - 64);
		CHILD_CHECK(status_kb("VmRSS") >= 16 * 1024);
		_exit(0);
	}
	int st;
	struct rusage ru;
	CHECK_EQ(wait4(c, &st, 0, &ru), c);
	CHECK_EXITED(st, 0);
	CHECK_GE(ru.ru_maxrss, 16 * 1024);
}

static void stat_sizes_match_statm(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	long long vsize = stat_field("/proc/self/stat", 23);
	long long rss = stat_field("/proc/self/stat", 24);
	CHECK_SYS(slurp("/proc/self/statm"));
	long long size, res;
	CHECK_EQ(sscanf(sbuf, "%lld %lld", &size, &res), 2);
	CHECK_EQ(vsize, size * pg);
	/* RSS counters are per-CPU and read approximately: allow 1 MiB. */
	CHECK_GT(res, 0);
	CHECK_LE(llabs(rss - res), 256);
	long long vm = status_kb("VmSize");
	long long vmrss = status_kb("VmRSS");
	CHECK_EQ(vm, size * pg / 1024);
	CHECK_LE(llabs(vmrss - res * pg / 1024), 1024);
}

static void stat_sched_fields_match_syscalls(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 7) == 0);
		/* 18: priority (20 + nice for normal tasks), 19: nice. */
		CHILD_CHECK(stat_field("/proc/self/stat", 19) == 7);
		CHILD_CHECK(stat_field("/proc/self/stat", 18) == 27);
		struct sched_param sp = {0};
		CHILD_CHECK(sched_setscheduler(0, SCHED_IDLE, &sp) == 0);
		/* 41: policy. */
		CHILD_CHECK(stat_field("/proc/self/stat", 41) == SCHED_IDLE);
		/* 40: rt_priority is 0 for normal policies. */
		CHILD_CHECK(stat_field("/proc/self/stat", 40) == 0);
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		CHILD_CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
		sched_yield();
		/* 39: the CPU last run on. */
		CHILD_CHECK(stat_field("/proc/self/stat", 39) == 0);
		/* 20: num_threads, 3: state (R while reading itself). */
		CHILD_CHECK(stat_field("/proc/self/stat", 20) == 1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

/* uptime_ticks reads /proc/uptime in clock ticks (hundredths). */
static long long uptime_ticks(void)
{
	if (slurp("/proc/uptime") < 0)
		return -1;
	long long sec = 0, hund = 0;
	if (sscanf(sbuf, "%lld.%2lld", &sec, &hund) != 2)
		return -1;
	return sec * 100 + hund;
}

static void starttime_is_ordered_and_bounded(void)
{
	long long mine = stat_field("/proc/self/stat", 22);
	CHECK_GE(mine, 0);
	long long before = uptime_ticks();
	CHECK_GE(before, mine);
	struct timespec ts = {0, 30000000};
	nanosleep(&ts, NULL);
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		char x;
		read(p[0], &x, 1);
		_exit(0);
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", c);
	long long child = stat_field(path, 22);
	long long now = uptime_ticks();
	/* Clock ticks since boot, on the same scale as /proc/uptime: the
	 * child started after the first uptime read (and so after us) and
	 * before the second. The 30 ms sleep in between shows up. */
	CHECK_GE(child, mine);
	CHECK_GE(child, before);
	CHECK_LE(child, now + 1);
	CHECK_GE(now - before, 2);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EXITED(mt_wait(c), 0);
	close(p[0]);
	close(p[1]);
}

static void children_ticks_in_stat(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		struct timespec a, b;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		do
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec <
		       60000000LL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
	/* 16: cutime, 17: cstime (waited-for children, clock ticks). */
	long long cu = stat_field("/proc/self/stat", 16);
	long long cs = stat_field("/proc/self/stat", 17);
	struct rusage r;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &r));
	long long rt = (r.ru_utime.tv_sec * 1000000LL + r.ru_utime.tv_usec +
			r.ru_stime.tv_sec * 1000000LL + r.ru_stime.tv_usec) / 10000;
	CHECK_GE(cu + cs, 5);
	CHECK_LE(llabs(cu + cs - rt), 3);
}

static void *thread_reads_own_stat(void *p)
{
	long long *out = p;
	char path[64];
	out[0] = syscall(SYS_gettid);
	snprintf(path, sizeof(path), "/proc/self/task/%lld/stat", out[0]);
	if (slurp(path) > 0)
		out[1] = strtoll(sbuf, NULL, 10);
	out[2] = stat_field(path, 4);
	out[3] = stat_field(path, 5);
	out[4] = stat_field(path, 6);
	out[5] = stat_field(path, 20);
	return NULL;
}

static void task_stat_fields(void)
{
	long long out[6] = {0};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_reads_own_stat, out));
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(out[1], out[0]); /* field 1 is the thread id */
	CHECK_EQ(out[2], getppid());
	CHECK_EQ(out[3], getpgrp());
	CHECK_EQ(out[4], getsid(0));
	CHECK_EQ(out[5], 2); /* the thread count of the whole process */
}

static const struct mt_case cases[] = {
	MT_CASE(stat_minflt_matches_rusage),
	MT_CASE(minflt_counts_touched_pages),
	MT_CASE(voluntary_switches_count_sleeps),
	MT_CASE(children_counters_after_wait),
	MT_CASE(code_and_stack_bounds_in_stat),
	MT_CASE(cpu_ticks_match_rusage),
	MT_CASE(maxrss_grows_with_touched_memory),
	MT_CASE(stat_sizes_match_statm),
	MT_CASE(stat_sched_fields_match_syscalls),
	MT_CASE(starttime_is_ordered_and_bounded),
	MT_CASE(children_ticks_in_stat),
	MT_CASE(task_stat_fields),
};

MT_MAIN(cases)
