//go:build ignore

/* process: identity and attributes of a process: PIDs in a fresh PID
 * namespace (we are init), sessions and process groups, prctl, uname and
 * hostname, resource limits, umask, times/getrusage/sysinfo, getrandom,
 * scheduling and affinity, user/group ids and capabilities. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

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

static void pid_is_init(void)
{
	CHECK_EQ(getpid(), 1);
	CHECK_EQ(getppid(), 0);
	CHECK_EQ(syscall(SYS_gettid), 1);
}

static void proc_self_status_pid(void)
{
	char buf[4096];
	int fd = CHECK_SYS(open("/proc/self/status", O_RDONLY));
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf) - 1));
	close(fd);
	buf[n] = 0;
	CHECK(strstr(buf, "\nPid:\t1\n") != NULL);
	CHECK(strstr(buf, "\nPPid:\t0\n") != NULL);
	fd = CHECK_SYS(open("/proc/self/stat", O_RDONLY));
	n = CHECK_SYS(read(fd, buf, sizeof(buf) - 1));
	close(fd);
	buf[n] = 0;
	CHECK_EQ(atoi(buf), 1);
	char link[64];
	n = CHECK_SYS(readlink("/proc/self", link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "1");
}

static void child_pids(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(getppid() == 1);
		CHILD_CHECK(getpid() > 1);
		CHILD_CHECK(getpgid(0) == 1);
		CHILD_CHECK(getsid(0) == 1);
		_exit(0);
	}
	CHECK_GT(pid, 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void session_leader(void)
{
	CHECK_EQ(getsid(0), 1);
	CHECK_EQ(getpgid(0), 1);
	CHECK_EQ(getpgrp(), 1);
	CHECK_EQ(getsid(1), 1);
	CHECK_ERR(setsid(), EPERM);
}

static void setsid_in_child(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pid_t me = getpid();
		CHILD_CHECK(setsid() == me);
		CHILD_CHECK(getsid(0) == me);
		CHILD_CHECK(getpgid(0) == me);
		/* A session leader cannot change its group. */
		CHILD_CHECK(setpgid(0, 0) == -1 && errno == EPERM);
		CHILD_CHECK(setsid() == -1 && errno == EPERM);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* The child was in another session: we may not move it. */
}

static void setpgid_semantics(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		close(p[1]);
		(void)read(p[0], &c, 1);
		_exit(getpgid(0) == getpid() ? 0 : 1);
	}
	close(p[0]);
	CHECK_SYS(setpgid(pid, pid));
	CHECK_EQ(getpgid(pid), pid);
	/* Back into our group, then into its own again. */
	CHECK_SYS(setpgid(pid, 1));
	CHECK_EQ(getpgid(pid), 1);
	CHECK_SYS(setpgid(pid, 0));
	CHECK_EQ(getpgid(pid), pid);
	close(p[1]);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void setpgid_errors(void)
{
	CHECK_ERR(setpgid(0, -1), EINVAL);
	CHECK_ERR(setpgid(424242, 0), ESRCH);
	CHECK_ERR(getpgid(424242), ESRCH);
	CHECK_ERR(getsid(424242), ESRCH);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* A group that does not exist in our session. */
		_exit(setpgid(0, 424242) == -1 && errno == EPERM ? 0 : 1);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* A child that has exec'd may no longer be moved. The close-on-exec
	 * pipe reads EOF once the exec has happened. */
	int ep[2];
	CHECK_SYS(pipe2(ep, O_CLOEXEC));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		close(ep[0]);
		char *args[] = { "sleep-child", "sleep", NULL };
		execve("/proc/self/exe", args, (char *[]){ NULL });
		_exit(98);
	}
	close(ep[1]);
	char c;
	CHECK_EQ(read(ep[0], &c, 1), 0);
	errno = 0;
	long r = setpgid(pid, pid);
	int e = errno;
	kill(pid, SIGKILL);
	mt_wait(pid);
	CHECK_EQ(r, -1);
	CHECK_EQ(e, EACCES);
}

static void init_ignores_default_sigterm(void)
{
	/* Signals with the default action are not delivered to the PID
	 * namespace's init from inside it. */
	CHECK_SYS(raise(SIGTERM));
	CHECK_SYS(kill(1, SIGINT));
	CHECK_SYS(kill(getpid(), SIGUSR1));
	usleep(10000);
	CHECK_EQ(getpid(), 1);
}

static void prctl_name(void)
{
	char name[32];
	CHECK_SYS(prctl(PR_SET_NAME, "moat-test"));
	memset(name, 0, sizeof(name));
	CHECK_SYS(prctl(PR_GET_NAME, name));
	CHECK_STREQ(name, "moat-test");
	CHECK_SYS(prctl(PR_SET_NAME, "a-very-long-process-name"));
	CHECK_SYS(prctl(PR_GET_NAME, name));
	CHECK_STREQ(name, "a-very-long-pro");
	char comm[64];
	int fd = CHECK_SYS(open("/proc/self/comm", O_RDONLY));
	ssize_t n = CHECK_SYS(read(fd, comm, sizeof(comm) - 1));
	close(fd);
	comm[n] = 0;
	CHECK_STREQ(comm, "a-very-long-pro\n");
	CHECK_ERR(prctl(PR_SET_NAME, (void *)8), EFAULT);
}

static void prctl_pdeathsig(void)
{
	CHECK_ERR(prctl(PR_SET_PDEATHSIG, 65), EINVAL);
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t mid = CHECK_SYS(fork());
	if (mid == 0) {
		pid_t gc = fork();
		if (gc == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			int s = 0;
			prctl(PR_GET_PDEATHSIG, &s);
			if (s != SIGKILL)
				_exit(5);
			char c = 'r';
			if (write(p[1], &c, 1) != 1)
				_exit(6);
			for (;;)
				pause();
		}
		char c;
		(void)read(p[0], &c, 1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(mid), 0);
	close(p[0]);
	close(p[1]);
	/* The grandchild, now ours, died of its parent-death signal. */
	int st;
	pid_t r = CHECK_SYS(waitpid(-1, &st, 0));
	CHECK_GT(r, 1);
	CHECK_SIGNALED(st, SIGKILL);
}

static void prctl_dumpable(void)
{
	CHECK_EQ(prctl(PR_GET_DUMPABLE), 1);
	CHECK_SYS(prctl(PR_SET_DUMPABLE, 0));
	CHECK_EQ(prctl(PR_GET_DUMPABLE), 0);
	CHECK_SYS(prctl(PR_SET_DUMPABLE, 1));
	CHECK_EQ(prctl(PR_GET_DUMPABLE), 1);
	CHECK_ERR(prctl(PR_SET_DUMPABLE, 2), EINVAL);
}

static void prctl_no_new_privs(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
		/* It cannot be unset. */
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0) == -1 && errno == EINVAL);
		pid_t gc = fork();
		if (gc == 0)
			_exit(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 1);
		int st = mt_wait(gc);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void prctl_invalid(void)
{
	CHECK_ERR(prctl(0x7fff1234, 0, 0, 0, 0), EINVAL);
	CHECK_SYS(prctl(PR_SET_CHILD_SUBREAPER, 1));
	int v = 0;
	CHECK_SYS(prctl(PR_GET_CHILD_SUBREAPER, &v));
	CHECK_EQ(v, 1);
	CHECK_SYS(prctl(PR_SET_CHILD_SUBREAPER, 0));
}

static void uname_fields(void)
{
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.sysname, "Linux");
	CHECK_STREQ(u.machine, "x86_64");
	CHECK_GT(strlen(u.release), 0);
	CHECK_GT(strlen(u.version), 0);
	CHECK_GT(strlen(u.nodename), 0);
	char host[256];
	CHECK_SYS(gethostname(host, sizeof(host)));
	CHECK_STREQ(host, u.nodename);
	CHECK_ERR(syscall(SYS_uname, (void *)8), EFAULT);
}

static void sethostname_in_own_uts(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(sethostname("moat-box", 8) == 0);
		struct utsname u;
		uname(&u);
		CHILD_CHECK(strcmp(u.nodename, "moat-box") == 0);
		CHILD_CHECK(setdomainname("moat.dom", 8) == 0);
		uname(&u);
		CHILD_CHECK(strcmp(u.domainname, "moat.dom") == 0);
		char big[100];
		memset(big, 'x', sizeof(big));
		CHILD_CHECK(sethostname(big, sizeof(big)) == -1 && errno == EINVAL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void rlimit_nofile_enforced(void)
{
	struct rlimit old, rl;
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &old));
	rl.rlim_cur = 10;
	rl.rlim_max = old.rlim_max;
	CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	int last = -1;
	for (;;) {
		int fd = dup(0);
		if (fd < 0) {
			CHECK_EQ(errno, EMFILE);
			break;
		}
		last = fd;
	}
	CHECK_EQ(last, 9);
	CHECK_ERR(dup2(0, 10), EBADF);
	CHECK_ERR(fcntl(0, F_DUPFD, 10), EINVAL);
	CHECK_SYS(setrlimit(RLIMIT_NOFILE, &old));
}

static void rlimit_errors(void)
{
	struct rlimit rl;
	CHECK_SYS(getrlimit(RLIMIT_STACK, &rl));
	struct rlimit bad = { .rlim_cur = 2, .rlim_max = 1 };
	CHECK_ERR(setrlimit(RLIMIT_CORE, &bad), EINVAL);
	CHECK_ERR(getrlimit(99, &rl), EINVAL);
	CHECK_ERR(setrlimit(99, &rl), EINVAL);
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_CORE, (void *)8), EFAULT);
}

static void rlimit_lower_hard_is_final(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 100, 200 };
		CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == 0);
		struct rlimit got;
		getrlimit(RLIMIT_CORE, &got);
		CHILD_CHECK(got.rlim_cur == 100 && got.rlim_max == 200);
		rl.rlim_cur = 200;
		CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void prlimit64_calls(void)
{
	struct rlimit old, got, nl = { 1000, 2000 };
	CHECK_SYS(prlimit(0, RLIMIT_CORE, NULL, &old));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(prlimit(pid, RLIMIT_CORE, &nl, &got));
	CHECK_EQ(got.rlim_cur, old.rlim_cur);
	CHECK_SYS(prlimit(pid, RLIMIT_CORE, NULL, &got));
	CHECK_EQ(got.rlim_cur, 1000);
	CHECK_EQ(got.rlim_max, 2000);
	kill(pid, SIGKILL);
	mt_wait(pid);
	CHECK_ERR(prlimit(424242, RLIMIT_CORE, NULL, &got), ESRCH);
	CHECK_ERR(prlimit(0, 99, NULL, &got), EINVAL);
	/* Ours is unchanged. */
	CHECK_SYS(prlimit(0, RLIMIT_CORE, NULL, &got));
	CHECK_EQ(got.rlim_cur, old.rlim_cur);
}

static void umask_values(void)
{
	CHECK_EQ(umask(077), 022);
	CHECK_EQ(umask(0777 | 01000), 077);
	CHECK_EQ(umask(022), 0777);
	int fd = CHECK_SYS(open("/proc/self/status", O_RDONLY));
	char buf[4096];
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf) - 1));
	close(fd);
	buf[n] = 0;
	CHECK(strstr(buf, "Umask:\t0022") != NULL);
}

static void times_and_children(void)
{
	struct tms t0, t1;
	clock_t c0 = times(&t0);
	CHECK_NE(c0, (clock_t)-1);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		burn(60);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	clock_t c1 = times(&t1);
	CHECK_GE(c1 - c0, 5);
	CHECK_GE(t1.tms_cutime + t1.tms_cstime - t0.tms_cutime - t0.tms_cstime, 3);
	CHECK_GE(t1.tms_utime, t0.tms_utime);
	CHECK_ERR(syscall(SYS_times, (void *)8), EFAULT);
}

static void getrusage_who(void)
{
	struct rusage ru;
	burn(20);
	CHECK_SYS(getrusage(RUSAGE_SELF, &ru));
	/* The burn loop reads a CPU clock (a syscall): count user + system. */
	CHECK_GT(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
			 ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
		 10000);
	CHECK_GT(ru.ru_maxrss, 0);
	CHECK_SYS(getrusage(RUSAGE_THREAD, &ru));
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &ru));
	CHECK_ERR(getrusage(42, &ru), EINVAL);
	CHECK_ERR(getrusage(RUSAGE_SELF, (struct rusage *)8), EFAULT);
}

static void sysinfo_fields(void)
{
	struct sysinfo si;
	CHECK_SYS(sysinfo(&si));
	CHECK_GT(si.uptime, 0);
	CHECK_GT(si.totalram, 0);
	CHECK_LE(si.freeram, si.totalram);
	CHECK_GE(si.mem_unit, 1);
	CHECK_GE(si.procs, 1);
	CHECK_ERR(sysinfo((struct sysinfo *)8), EFAULT);
}

static void getrandom_flags(void)
{
	unsigned char a[64], b[64];
	CHECK_EQ(getrandom(a, sizeof(a), 0), 64);
	CHECK_EQ(getrandom(b, sizeof(b), 0), 64);
	CHECK(memcmp(a, b, sizeof(a)) != 0);
	CHECK_EQ(getrandom(a, 16, GRND_NONBLOCK), 16);
	CHECK_EQ(getrandom(a, 16, GRND_RANDOM), 16);
	CHECK_EQ(getrandom(a, 16, GRND_INSECURE), 16);
	CHECK_EQ(getrandom(a, 0, 0), 0);
	CHECK_ERR(getrandom(a, 16, 0x40), EINVAL);
	CHECK_ERR(getrandom(a, 16, GRND_RANDOM | GRND_INSECURE), EINVAL);
	CHECK_ERR(syscall(SYS_getrandom, (void *)8, 16, 0), EFAULT);
}

static void affinity_and_yield(void)
{
	cpu_set_t set;
	CHECK_SYS(sched_getaffinity(0, sizeof(set), &set));
	int n = CPU_COUNT(&set);
	CHECK_GE(n, 1);
	CHECK_LE(n, sysconf(_SC_NPROCESSORS_CONF));
	CHECK_SYS(sched_setaffinity(0, sizeof(set), &set));
	CHECK_SYS(sched_yield());
	unsigned cpu = 99999;
	CHECK_SYS(syscall(SYS_getcpu, &cpu, NULL, NULL));
	CHECK(CPU_ISSET(cpu, &set));
	/* The raw syscall returns the mask size it copied. */
	long r = CHECK_SYS(syscall(SYS_sched_getaffinity, 0, sizeof(set), &set));
	CHECK_GT(r, 0);
	CHECK_EQ(r % 8, 0);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 1, &set), EINVAL);
	CHECK_ERR(sched_getaffinity(424242, sizeof(set), &set), ESRCH);
	cpu_set_t empty;
	CPU_ZERO(&empty);
	CHECK_ERR(sched_setaffinity(0, sizeof(empty), &empty), EINVAL);
}

static void scheduler_queries(void)
{
	CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
	struct sched_param sp;
	CHECK_SYS(sched_getparam(0, &sp));
	CHECK_EQ(sp.sched_priority, 0);
	CHECK_EQ(sched_get_priority_max(SCHED_FIFO), 99);
	CHECK_EQ(sched_get_priority_min(SCHED_FIFO), 1);
	CHECK_EQ(sched_get_priority_max(SCHED_OTHER), 0);
	CHECK_ERR(sched_get_priority_max(42), EINVAL);
	CHECK_ERR(sched_getscheduler(424242), ESRCH);
	struct timespec ts;
	CHECK_SYS(sched_rr_get_interval(0, &ts));
}

static void nice_in_child(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		errno = 0;
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 0 && errno == 0);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0);
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 5);
		CHILD_CHECK(nice(2) == 7);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 100) == 0);
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 19);
		CHILD_CHECK(setpriority(42, 0, 1) == -1 && errno == EINVAL);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 424242, 1) == -1 && errno == ESRCH);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void ids_root(void)
{
	CHECK_EQ(getuid(), 0);
	CHECK_EQ(geteuid(), 0);
	CHECK_EQ(getgid(), 0);
	CHECK_EQ(getegid(), 0);
	uid_t r, e, s;
	CHECK_SYS(getresuid(&r, &e, &s));
	CHECK_EQ(r + e + s, 0);
	gid_t gr, ge, gs;
	CHECK_SYS(getresgid(&gr, &ge, &gs));
	CHECK_EQ(gr + ge + gs, 0);
	int n = CHECK_SYS(getgroups(0, NULL));
	CHECK_GE(n, 0);
	CHECK_SYS(setresuid(-1, -1, -1));
}

static void drop_uid_in_child(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		gid_t g = 1000;
		CHILD_CHECK(setgroups(1, &g) == 0);
		gid_t got[4];
		CHILD_CHECK(getgroups(4, got) == 1 && got[0] == 1000);
		CHILD_CHECK(setgid(1000) == 0);
		CHILD_CHECK(setresuid(1000, 1000, 0) == 0);
		CHILD_CHECK(getuid() == 1000 && geteuid() == 1000);
		/* The saved uid lets us back. */
		CHILD_CHECK(seteuid(0) == 0);
		CHILD_CHECK(setuid(1000) == 0);
		uid_t r, e, s;
		getresuid(&r, &e, &s);
		CHILD_CHECK(r == 1000 && e == 1000 && s == 1000);
		CHILD_CHECK(setuid(0) == -1 && errno == EPERM);
		CHILD_CHECK(setgroups(0, NULL) == -1 && errno == EPERM);
		/* Capabilities are gone with root. */
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(syscall(SYS_capget, &h, d) == 0);
		CHILD_CHECK(d[0].effective == 0 && d[0].permitted == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void capget_root(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	CHECK_SYS(syscall(SYS_capget, &h, d));
	CHECK(d[0].effective & (1u << CAP_SYS_ADMIN));
	CHECK(d[0].effective & (1u << CAP_SETUID));
	CHECK(d[0].permitted & (1u << CAP_DAC_OVERRIDE));
	/* Asking about pid 1 (ourselves) works too. */
	h.pid = 1;
	CHECK_SYS(syscall(SYS_capget, &h, d));
	h.pid = 424242;
	CHECK_ERR(syscall(SYS_capget, &h, d), ESRCH);
}

static void capget_bad_version(void)
{
	struct __user_cap_header_struct h = { 0x12345678, 0 };
	struct __user_cap_data_struct d[2];
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
	/* A NULL data pointer just probes: success, preferred version. */
	h.version = 0x12345678;
	CHECK_SYS(syscall(SYS_capget, &h, NULL));
	CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
	h.version = _LINUX_CAPABILITY_VERSION_3;
	CHECK_SYS(syscall(SYS_capget, &h, NULL));
}

static void capset_drop_in_child(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(syscall(SYS_capget, &h, d) == 0);
		d[0].effective &= ~(1u << CAP_NET_RAW);
		d[0].permitted &= ~(1u << CAP_NET_RAW);
		CHILD_CHECK(syscall(SYS_capset, &h, d) == 0);
		struct __user_cap_data_struct e[2];
		CHILD_CHECK(syscall(SYS_capget, &h, e) == 0);
		CHILD_CHECK((e[0].permitted & (1u << CAP_NET_RAW)) == 0);
		/* Adding back beyond the permitted set: EPERM. */
		e[0].permitted |= 1u << CAP_NET_RAW;
		e[0].effective |= 1u << CAP_NET_RAW;
		CHILD_CHECK(syscall(SYS_capset, &h, e) == -1 && errno == EPERM);
		/* Effective must be a subset of permitted. */
		e[0].permitted &= ~(1u << CAP_NET_RAW);
		CHILD_CHECK(syscall(SYS_capset, &h, e) == -1 && errno == EPERM);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void personality_query(void)
{
	CHECK_EQ(personality(0xffffffff), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(pid_is_init),
	MT_CASE(proc_self_status_pid),
	MT_CASE(child_pids),
	MT_CASE(session_leader),
	MT_CASE(setsid_in_child),
	MT_CASE(setpgid_semantics),
	MT_CASE(setpgid_errors),
	MT_CASE(init_ignores_default_sigterm),
	MT_CASE(prctl_name),
	MT_CASE(prctl_pdeathsig),
	MT_CASE(prctl_dumpable),
	MT_CASE(prctl_no_new_privs),
	MT_CASE(prctl_invalid),
	MT_CASE(uname_fields),
	MT_CASE(sethostname_in_own_uts),
	MT_CASE(rlimit_nofile_enforced),
	MT_CASE(rlimit_errors),
	MT_CASE(rlimit_lower_hard_is_final),
	MT_CASE(prlimit64_calls),
	MT_CASE(umask_values),
	MT_CASE(times_and_children),
	MT_CASE(getrusage_who),
	MT_CASE(sysinfo_fields),
	MT_CASE(getrandom_flags),
	MT_CASE(affinity_and_yield),
	MT_CASE(scheduler_queries),
	MT_CASE(nice_in_child),
	MT_CASE(ids_root),
	MT_CASE(drop_uid_in_child),
	MT_CASE(capget_root),
	MT_CASE(capget_bad_version),
	MT_CASE(capset_drop_in_child),
	MT_CASE(personality_query),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "sleep") == 0) {
		for (;;)
			pause();
	}
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
