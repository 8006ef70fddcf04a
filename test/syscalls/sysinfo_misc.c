//go:build ignore

/* sysinfo_misc: small system-information and per-process syscalls: uname,
 * sysinfo, umask, getrusage (who values, accumulation of children),
 * getrandom (flags, sizes, errors), personality, set_tid_address and the
 * id getters. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void uname_fields_terminated(void)
{
	struct utsname u;
	memset(&u, 0x7f, sizeof(u));
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.sysname, "Linux");
	CHECK_STREQ(u.machine, "x86_64");
	CHECK(memchr(u.release, 0, sizeof(u.release)) != NULL);
	CHECK(memchr(u.version, 0, sizeof(u.version)) != NULL);
	CHECK(memchr(u.nodename, 0, sizeof(u.nodename)) != NULL);
	CHECK(memchr(u.domainname, 0, sizeof(u.domainname)) != NULL);
	/* The release starts with a major version >= 4. */
	CHECK_GE(atoi(u.release), 4);
	CHECK_ERR(syscall(SYS_uname, (void *)1), EFAULT);
}

static void hostname_matches_uname(void)
{
	struct utsname u;
	CHECK_SYS(uname(&u));
	char h[128];
	CHECK_SYS(gethostname(h, sizeof(h)));
	CHECK_STREQ(h, u.nodename);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* In our own UTS namespace root may change it. */
		CHILD_CHECK(sethostname("fuzzy", 5) == 0);
		struct utsname v;
		CHILD_CHECK(uname(&v) == 0 && strcmp(v.nodename, "fuzzy") == 0);
		CHILD_CHECK(sethostname("x", 65) == -1 && errno == EINVAL);
		CHILD_CHECK(sethostname("x", -1) == -1 && errno == EINVAL);
		CHILD_CHECK(setdomainname("dom", 3) == 0);
		CHILD_CHECK(uname(&v) == 0 && strcmp(v.domainname, "dom") == 0);
		CHILD_CHECK(setdomainname("x", 65) == -1 && errno == EINVAL);
		CHILD_CHECK(syscall(SYS_sethostname, (void *)1, 4) == -1 && errno == EFAULT);
		CHILD_CHECK(sethostname(u.nodename, strlen(u.nodename)) == 0);
		CHILD_CHECK(setdomainname(u.domainname, strlen(u.domainname)) == 0);
		/* Unprivileged: EPERM. */
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(sethostname("y", 1) == -1 && errno == EPERM);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void sysinfo_consistent(void)
{
	struct sysinfo si;
	memset(&si, 0xff, sizeof(si));
	CHECK_SYS(sysinfo(&si));
	CHECK_GT(si.totalram, 0);
	CHECK_LE(si.freeram, si.totalram);
	CHECK_GE(si.mem_unit, 1);
	CHECK_GE(si.procs, 1);
	CHECK_GE(si.uptime, 0);
	struct timespec bt;
	clock_gettime(CLOCK_BOOTTIME, &bt);
	/* Uptime is the boot-time clock in seconds. */
	CHECK_LE(si.uptime - bt.tv_sec, 1);
	CHECK_LE(bt.tv_sec - si.uptime, 1);
	CHECK_ERR(syscall(SYS_sysinfo, (void *)1), EFAULT);
}

static void sysinfo_counts_processes(void)
{
	/* Natively the whole machine counts, and other processes come and go
	 * while the suite runs: the 4 children must show up in one of a few
	 * attempts. */
	int seen = 0;
	for (int attempt = 0; attempt < 10 && !seen; attempt++) {
		struct sysinfo a, b;
		CHECK_SYS(sysinfo(&a));
		int p[2];
		CHECK_SYS(pipe(p));
		pid_t kids[4];
		for (int i = 0; i < 4; i++) {
			kids[i] = CHECK_SYS(fork());
			if (kids[i] == 0) {
				char c;
				close(p[1]);
				if (read(p[0], &c, 1) < 0)
					_exit(1);
				_exit(0);
			}
		}
		CHECK_SYS(sysinfo(&b));
		close(p[1]);
		close(p[0]);
		for (int i = 0; i < 4; i++)
			mt_wait(kids[i]);
		seen = b.procs >= a.procs + 4;
	}
	CHECK(seen);
}

static void umask_semantics(void)
{
	CHECK_EQ(umask(0777), 022);
	CHECK_EQ(umask(01777), 0777);
	/* Only the permission bits are kept. */
	CHECK_EQ(umask(022), 0777);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		umask(0);
		_exit(0);
	}
	mt_wait(pid);
	/* A child's umask is its own. */
	CHECK_EQ(umask(022), 022);
	/* /proc/self/status shows it. */
	umask(0027);
	char buf[4096];
	int fd = CHECK_SYS(open("/proc/self/status", O_RDONLY));
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf) - 1));
	close(fd);
	buf[n] = 0;
	CHECK(strstr(buf, "Umask:\t0027\n") != NULL);
}

static void burn(int ms)
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

static long ms_of(struct rusage *ru)
{
	return (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
	       (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
}

static void getrusage_children_accumulate(void)
{
	struct rusage before, after;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &before));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		burn(50);
		_exit(0);
	}
	/* Not counted until reaped. */
	siginfo_t si;
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &after));
	CHECK_LT(ms_of(&after) - ms_of(&before), 40);
	mt_wait(pid);
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &after));
	CHECK_GE(ms_of(&after) - ms_of(&before), 40);
}

static void getrusage_who_values(void)
{
	struct rusage ru;
	burn(20);
	CHECK_SYS(getrusage(RUSAGE_SELF, &ru));
	CHECK_GE(ms_of(&ru), 15);
	CHECK_GT(ru.ru_maxrss, 0);
	CHECK_SYS(getrusage(RUSAGE_THREAD, &ru));
	CHECK_GE(ms_of(&ru), 15);
	CHECK_ERR(getrusage(5, &ru), EINVAL);
	CHECK_ERR(getrusage(-3, &ru), EINVAL);
	CHECK_ERR(syscall(SYS_getrusage, RUSAGE_SELF, (void *)1), EFAULT);
}

static void getrandom_flags_and_sizes(void)
{
	unsigned char a[64], b[64];
	CHECK_EQ(getrandom(a, sizeof(a), 0), 64);
	CHECK_EQ(getrandom(b, sizeof(b), GRND_NONBLOCK), 64);
	CHECK(memcmp(a, b, sizeof(a)) != 0);
	CHECK_EQ(getrandom(a, sizeof(a), GRND_RANDOM | GRND_NONBLOCK), 64);
	CHECK_EQ(getrandom(a, 0, 0), 0);
	CHECK_EQ(getrandom(NULL, 0, 0), 0);
	/* GRND_INSECURE (4) exists since 5.6; with GRND_RANDOM it is EINVAL. */
	CHECK_EQ(getrandom(a, sizeof(a), 4), 64);
	CHECK_ERR(getrandom(a, sizeof(a), 4 | GRND_RANDOM), EINVAL);
	CHECK_ERR(getrandom(a, sizeof(a), 0x40), EINVAL);
	CHECK_ERR(getrandom((void *)1, 16, 0), EFAULT);
}

static void getrandom_large_request(void)
{
	size_t n = 1 << 26;
	unsigned char *p = malloc(n);
	CHECK(p != NULL);
	/* Large reads may return less than asked (33554431 on Linux). */
	ssize_t r = CHECK_SYS(getrandom(p, n, 0));
	CHECK_GT(r, 1 << 20);
	CHECK_LE((size_t)r, n);
	free(p);
}

static void personality_roundtrip(void)
{
	int old = personality(0xffffffff);
	CHECK_EQ(old & 0xff, PER_LINUX);
	CHECK_EQ(personality(ADDR_NO_RANDOMIZE), old);
	CHECK_EQ(personality(0xffffffff), ADDR_NO_RANDOMIZE);
	CHECK_EQ(personality(old), ADDR_NO_RANDOMIZE);
	CHECK_EQ(personality(0xffffffff), old);
}

static void set_tid_address_returns_tid(void)
{
	static int word;
	long tid = syscall(SYS_set_tid_address, &word);
	CHECK_EQ(tid, syscall(SYS_gettid));
	/* NULL is allowed. */
	CHECK_EQ(syscall(SYS_set_tid_address, NULL), tid);
}

static void id_getters_agree(void)
{
	CHECK_EQ(syscall(SYS_getpid), getpid());
	CHECK_EQ(syscall(SYS_gettid), getpid());
	CHECK_EQ(syscall(SYS_getuid), getuid());
	CHECK_EQ(syscall(SYS_geteuid), geteuid());
	CHECK_EQ(syscall(SYS_getgid), getgid());
	CHECK_EQ(syscall(SYS_getegid), getegid());
	CHECK_EQ(syscall(SYS_getppid), getppid());
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(getppid() == 1 ? 0 : 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(uname_fields_terminated),
	MT_CASE(hostname_matches_uname),
	MT_CASE(sysinfo_consistent),
	MT_CASE(sysinfo_counts_processes),
	MT_CASE(umask_semantics),
	MT_CASE(getrusage_children_accumulate),
	MT_CASE(getrusage_who_values),
	MT_CASE(getrandom_flags_and_sizes),
	MT_CASE(getrandom_large_request),
	MT_CASE(personality_roundtrip),
	MT_CASE(set_tid_address_returns_tid),
	MT_CASE(id_getters_agree),
};

MT_MAIN(cases)
