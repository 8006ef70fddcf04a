//go:build ignore

/* mx_proc_status: /proc/self/status, /proc/self/stat and /proc/self/limits
 * checked against the syscalls that report the same state: ids, thread
 * counts, signal masks and dispositions, umask, process group and session,
 * and resource limits after setrlimit. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char sbuf[8192];

static int slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, sbuf + n, sizeof(sbuf) - 1 - n);
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	sbuf[n] = 0;
	return (int)n;
}

/* field returns the text after "Name:\t" in sbuf (up to newline), or NULL. */
static const char *field(const char *name, char *out, size_t n)
{
	size_t l = strlen(name);
	for (const char *p = sbuf; p && *p;) {
		if (strncmp(p, name, l) == 0 && p[l] == ':') {
			p += l + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			size_t i = 0;
			while (p[i] && p[i] != '\n' && i + 1 < n) {
				out[i] = p[i];
				i++;
			}
			out[i] = 0;
			return out;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static long field_long(const char *path, const char *name)
{
	char v[256];
	if (slurp(path) < 0 || !field(name, v, sizeof(v)))
		return -999999;
	return strtol(v, NULL, 10);
}

static unsigned long long field_hex(const char *name)
{
	char v[256];
	if (slurp("/proc/self/status") < 0 || !field(name, v, sizeof(v)))
		return ~0ULL;
	return strtoull(v, NULL, 16);
}

static void ids_in_status(void)
{
	CHECK_EQ(field_long("/proc/self/status", "Pid"), getpid());
	CHECK_EQ(field_long("/proc/self/status", "Tgid"), getpid());
	CHECK_EQ(field_long("/proc/self/status", "PPid"), getppid());
	char v[256];
	CHECK_SYS(slurp("/proc/self/status"));
	CHECK(field("Uid", v, sizeof(v)));
	CHECK_STREQ(v, "0\t0\t0\t0");
	CHECK(field("Gid", v, sizeof(v)));
	CHECK_STREQ(v, "0\t0\t0\t0");
}

static void child_ids_after_setres(void)
{
	pid_t me = getpid();
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		CHILD_CHECK(field_long("/proc/self/status", "PPid") == me);
		CHILD_CHECK(field_long("/proc/self/status", "Pid") == getpid());
		CHILD_CHECK(setresgid(11, 12, 13) == 0);
		CHILD_CHECK(setfsgid(14) >= 0);
		CHILD_CHECK(setresuid(21, 22, 23) == 0);
		char v[256];
		CHILD_CHECK(slurp("/proc/self/status") > 0);
		CHILD_CHECK(field("Uid", v, sizeof(v)));
		/* real, effective, saved, filesystem (fsuid follows euid). */
		CHILD_CHECK(strcmp(v, "21\t22\t23\t22") == 0);
		CHILD_CHECK(field("Gid", v, sizeof(v)));
		CHILD_CHECK(strcmp(v, "11\t12\t13\t14") == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
}

static void groups_line(void)
{
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		gid_t g[] = {7, 3, 500};
		CHILD_CHECK(setgroups(3, g) == 0);
		char v[256];
		CHILD_CHECK(slurp("/proc/self/status") > 0);
		CHILD_CHECK(field("Groups", v, sizeof(v)));
		/* The kernel sorts the list; entries are space separated with
		 * a trailing space. */
		CHILD_CHECK(strcmp(v, "3 7 500 ") == 0);
		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(slurp("/proc/self/status") > 0);
		CHILD_CHECK(field("Groups", v, sizeof(v)));
		CHILD_CHECK(strcmp(v, "") == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
}

static void *sleeper(void *p)
{
	int fd = *(int *)p;
	char c;
	read(fd, &c, 1);
	return NULL;
}

static void threads_count(void)
{
	CHECK_EQ(field_long("/proc/self/status", "Threads"), 1);
	int p[2];
	CHECK_SYS(pipe(p));
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_create(&t[i], NULL, sleeper, &p[0]));
	CHECK_EQ(field_long("/proc/self/status", "Threads"), 4);
	/* The stat file's num_threads (field 20) agrees. */
	CHECK_SYS(slurp("/proc/self/stat"));
	char *rp = strrchr(sbuf, ')');
	CHECK(rp != NULL);
	long f[64];
	int nf = 0;
	char *s = rp + 2;
	char st;
	CHECK_EQ(sscanf(s, "%c", &st), 1);
	s += 2;
	while (nf < 40 && *s) {
		f[nf++] = strtol(s, &s, 10);
		while (*s == ' ')
			s++;
	}
	/* f[0] is field 4 (ppid), so field 20 is f[16]. */
	CHECK_EQ(f[16], 4);
	CHECK_EQ(write(p[1], "xxx", 3), 3);
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_join(t[i], NULL));
	/* pthread_join returns once the kernel cleared the thread's tid
	 * word, a little before the thread leaves the group: poll. */
	long n = 0;
	for (int i = 0; i < 1000; i++) {
		n = field_long("/proc/self/status", "Threads");
		if (n == 1)
			break;
		usleep(1000);
	}
	CHECK_EQ(n, 1);
	close(p[0]);
	close(p[1]);
}

static void *thread_status(void *p)
{
	long *out = p;
	out[0] = field_long("/proc/thread-self/status", "Pid");
	out[1] = field_long("/proc/thread-self/status", "Tgid");
	out[2] = syscall(SYS_gettid);
	return NULL;
}

static void thread_self_status_pid_is_tid(void)
{
	long out[3];
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_status, out));
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(out[0], out[2]);
	CHECK_EQ(out[1], getpid());
	CHECK_NE(out[0], getpid());
}

static void handler(int s)
{
	(void)s;
}

static void signal_masks(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN + 1);
	CHECK_SYS(sigprocmask(SIG_SETMASK, &set, NULL));
	signal(SIGUSR2, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	CHECK_SYS(sigaction(SIGRTMAX, &sa, NULL));
	unsigned long long blk = field_hex("SigBlk");
	unsigned long long ign = field_hex("SigIgn");
	unsigned long long cgt = field_hex("SigCgt");
#define BIT(s) (1ULL << ((s) - 1))
	CHECK_EQ(blk, BIT(SIGUSR1) | BIT(SIGRTMIN + 1));
	CHECK_EQ(ign, BIT(SIGUSR2) | BIT(SIGHUP));
	/* glibc (static) installs no handlers of its own for a program
	 * that made no threads... but this one made threads earlier:
	 * glibc uses SIGCANCEL (32) and SIGSETXID (33) for them. Mask
	 * those two out. */
	CHECK_EQ(cgt & ~(BIT(32) | BIT(33)), BIT(SIGALRM) | BIT(SIGRTMAX));
	/* A pending blocked signal shows in SigPnd / ShdPnd. */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(field_hex("ShdPnd"), BIT(SIGUSR1));
	CHECK_EQ(field_hex("SigPnd"), 0);
	CHECK_SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGRTMIN + 1));
	CHECK_EQ(field_hex("SigPnd"), BIT(SIGRTMIN + 1));
	signal(SIGUSR1, SIG_IGN); /* discards the pending one */
	CHECK_EQ(field_hex("ShdPnd"), 0);
	signal(SIGRTMIN + 1, SIG_IGN);
	CHECK_EQ(field_hex("SigPnd"), 0);
#undef BIT
}

static void umask_field(void)
{
	char v[64];
	umask(027);
	CHECK_SYS(slurp("/proc/self/status"));
	CHECK(field("Umask", v, sizeof(v)));
	CHECK_STREQ(v, "0027");
	umask(0);
	CHECK_SYS(slurp("/proc/self/status"));
	CHECK(field("Umask", v, sizeof(v)));
	CHECK_STREQ(v, "0000");
	CHECK_EQ(umask(0777 | 07000), 0);
	CHECK_EQ(umask(022), 0777); /* only the permission bits are kept */
}

static int stat_fields(long *f, int max)
{
	if (slurp("/proc/self/stat") < 0)
		return -1;
	char *rp = strrchr(sbuf, ')');
	if (!rp)
		return -1;
	char *s = rp + 4; /* skip ") S " */
	int n = 0;
	while (n < max && *s) {
		f[n++] = strtol(s, &s, 10);
		while (*s == ' ')
			s++;
	}
	return n;
}

static void stat_ids_follow_setsid(void)
{
	long f[8];
	CHECK_GE(stat_fields(f, 8), 4);
	CHECK_EQ(f[0], getppid());
	CHECK_EQ(f[1], getpgrp());
	CHECK_EQ(f[2], getsid(0));
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		long g[8];
		CHILD_CHECK(stat_fields(g, 8) >= 4);
		CHILD_CHECK(g[1] == getpgrp() && g[2] == getsid(0));
		pid_t gc = fork();
		CHILD_CHECK(gc >= 0);
		if (gc == 0) {
			/* A process group leader cannot make a session. */
			CHILD_CHECK(setpgid(0, 0) == 0);
			CHILD_CHECK(stat_fields(g, 8) >= 4);
			CHILD_CHECK(g[1] == getpid() && g[2] == getsid(0));
			CHILD_CHECK(setsid() == -1 && errno == EPERM);
			_exit(0);
		}
		int st;
		CHILD_CHECK(waitpid(gc, &st, 0) == gc && WIFEXITED(st) &&
			    WEXITSTATUS(st) == 0);
		CHILD_CHECK(setsid() == getpid());
		CHILD_CHECK(stat_fields(g, 8) >= 5);
		CHILD_CHECK(g[1] == getpid() && g[2] == getpid());
		/* No controlling terminal: tty_nr is 0, tpgid is -1. */
		CHILD_CHECK(g[3] == 0 && g[4] == -1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
}

/* limit_line finds the "Max open files" style line and parses soft/hard
 * ("unlimited" as RLIM_INFINITY). */
static int limit_line(const char *name, unsigned long long *soft,
		      unsigned long long *hard)
{
	if (slurp("/proc/self/limits") < 0)
		return -1;
	char *p = strstr(sbuf, name);
	if (!p)
		return -1;
	p += 26; /* the name column is 26 wide */
	char a[32], b[32];
	if (sscanf(p, "%31s %31s", a, b) != 2)
		return -1;
	*soft = strcmp(a, "unlimited") == 0 ? RLIM_INFINITY : strtoull(a, NULL, 10);
	*hard = strcmp(b, "unlimited") == 0 ? RLIM_INFINITY : strtoull(b, NULL, 10);
	return 0;
}

static void limits_follow_setrlimit(void)
{
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		struct rlimit r = {123, 456};
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &r) == 0);
		r.rlim_cur = 4096 * 10;
		r.rlim_max = RLIM_INFINITY;
		CHILD_CHECK(setrlimit(RLIMIT_CORE, &r) == 0);
		/* Lowering a hard limit needs no privilege. */
		r.rlim_cur = 0;
		r.rlim_max = 0;
		CHILD_CHECK(setrlimit(RLIMIT_NICE, &r) == 0);
		unsigned long long s, h;
		CHILD_CHECK(limit_line("Max open files", &s, &h) == 0);
		CHILD_CHECK(s == 123 && h == 456);
		CHILD_CHECK(limit_line("Max core file size", &s, &h) == 0);
		CHILD_CHECK(s == 40960 && h == RLIM_INFINITY);
		CHILD_CHECK(limit_line("Max nice priority", &s, &h) == 0);
		CHILD_CHECK(s == 0 && h == 0);
		/* The header line names the columns. */
		CHILD_CHECK(slurp("/proc/self/limits") > 0);
		CHILD_CHECK(strncmp(sbuf, "Limit", 5) == 0);
		CHILD_CHECK(strstr(sbuf, "Soft Limit") && strstr(sbuf, "Hard Limit") &&
			    strstr(sbuf, "Units"));
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
}

static void nonewprivs_and_seccomp_fields(void)
{
	pid_t child = CHECK_SYS(fork());
	if (child == 0) {
		CHILD_CHECK(field_long("/proc/self/status", "NoNewPrivs") == 0);
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
		CHILD_CHECK(field_long("/proc/self/status", "NoNewPrivs") == 1);
		CHILD_CHECK(field_long("/proc/self/status", "Seccomp") == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(child), 0);
}

static void state_and_name(void)
{
	char v[64];
	CHECK_SYS(prctl(PR_SET_NAME, "mx-status-nm", 0, 0, 0));
	CHECK_SYS(slurp("/proc/self/status"));
	CHECK(field("Name", v, sizeof(v)));
	CHECK_STREQ(v, "mx-status-nm");
	CHECK(field("State", v, sizeof(v)));
	CHECK_STREQ(v, "R (running)");
	CHECK_SYS(slurp("/proc/self/stat"));
	CHECK(strstr(sbuf, "(mx-status-nm) R ") != NULL);
	char buf[32];
	int pidlen = snprintf(buf, sizeof(buf), "%d ", getpid());
	CHECK_EQ(strncmp(sbuf, buf, pidlen), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(ids_in_status),
	MT_CASE(child_ids_after_setres),
	MT_CASE(groups_line),
	MT_CASE(threads_count),
	MT_CASE(thread_self_status_pid_is_tid),
	MT_CASE(signal_masks),
	MT_CASE(umask_field),
	MT_CASE(stat_ids_follow_setsid),
	MT_CASE(limits_follow_setrlimit),
	MT_CASE(nonewprivs_and_seccomp_fields),
	MT_CASE(state_and_name),
};

MT_MAIN(cases)
