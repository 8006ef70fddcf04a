//go:build ignore

/* proc_pid: /proc/[pid] of the caller and its children: self and
 * thread-self links, stat, status, statm, maps, smaps, limits, cmdline,
 * environ, comm (and renaming through it), exe, cwd, root, fd/, fdinfo/,
 * task/, cgroup, oom_score_adj, uid_map, gid_map, ns/, mounts and
 * mountinfo, checked against what the syscalls say (getpid, getrlimit,
 * prctl...), never against the host's exact values. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* slurp reads a whole file into buf (NUL-terminated); -1 on error. */
static ssize_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += r;
		if (n == size - 1)
			break;
	}
	close(fd);
	buf[n] = 0;
	return n;
}

/* field returns the value of "Name:\tvalue" lines, or NULL. */
static const char *field(const char *text, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, l) == 0 && p[l] == ':') {
			p += l + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
	}
	return NULL;
}

static char big[1 << 20];

static void self_is_getpid(void)
{
	char link[64], want[64];
	ssize_t n = CHECK_SYS(readlink("/proc/self", link, sizeof(link) - 1));
	link[n] = 0;
	snprintf(want, sizeof(want), "%d", getpid());
	CHECK_STREQ(link, want);
	snprintf(want, sizeof(want), "%d/task/%d", getpid(), getpid());
	n = CHECK_SYS(readlink("/proc/thread-self", link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, want);
	struct stat a, b;
	CHECK_SYS(stat("/proc/self", &a));
	snprintf(want, sizeof(want), "/proc/%d", getpid());
	CHECK_SYS(stat(want, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK(S_ISDIR(a.st_mode));
}

static char thread_link[64];

static void *thread_self_reader(void *arg)
{
	(void)arg;
	ssize_t n = readlink("/proc/thread-self", thread_link, sizeof(thread_link) - 1);
	if (n >= 0)
		thread_link[n] = 0;
	char want[64];
	snprintf(want, sizeof(want), "%d/task/%ld", getpid(), (long)syscall(SYS_gettid));
	return (void *)(intptr_t)(strcmp(thread_link, want) == 0);
}

static void thread_self_in_thread(void)
{
	pthread_t th;
	void *ok;
	CHECK_RET0(pthread_create(&th, NULL, thread_self_reader, NULL));
	CHECK_RET0(pthread_join(th, &ok));
	if (!ok)
		FAIL("thread-self read %s in a thread", thread_link);
}

static void stat_fields(void)
{
	CHECK_SYS(slurp("/proc/self/stat", big, sizeof(big)));
	int pid, ppid, pgrp, session;
	char state;
	char *close_paren = strrchr(big, ')');
	CHECK(close_paren != NULL);
	CHECK_EQ(sscanf(big, "%d", &pid), 1);
	CHECK_EQ(pid, getpid());
	CHECK_EQ(sscanf(close_paren + 2, "%c %d %d %d", &state, &ppid, &pgrp, &session), 4);
	CHECK_EQ(state, 'R');
	CHECK_EQ(ppid, getppid());
	CHECK_EQ(pgrp, getpgrp());
	CHECK_EQ(session, getsid(0));
	/* Field 20 is num_threads: fields 4 to 20 follow ") R ". */
	char *p = close_paren + 4;
	long v = 0;
	for (int i = 4; i <= 20; i++)
		v = strtol(p, &p, 10);
	CHECK_EQ(v, 1);
	/* The comm is the program's name, at most 15 bytes. */
	char comm[32];
	CHECK_SYS(prctl(PR_GET_NAME, comm));
	char *open_paren = strchr(big, '(');
	*close_paren = 0;
	CHECK_STREQ(open_paren + 1, comm);
}

static void status_fields(void)
{
	CHECK_SYS(slurp("/proc/self/status", big, sizeof(big)));
	char comm[32];
	CHECK_SYS(prctl(PR_GET_NAME, comm));
	const char *name = field(big, "Name");
	CHECK(name != NULL);
	CHECK_EQ(strncmp(name, comm, strlen(comm)), 0);
	CHECK(field(big, "State") != NULL && field(big, "State")[0] == 'R');
	CHECK_EQ(atoi(field(big, "Pid")), getpid());
	CHECK_EQ(atoi(field(big, "Tgid")), getpid());
	CHECK_EQ(atoi(field(big, "PPid")), getppid());
	CHECK_EQ(atoi(field(big, "Threads")), 1);
	unsigned r, e, s, f;
	CHECK_EQ(sscanf(field(big, "Uid"), "%u %u %u %u", &r, &e, &s, &f), 4);
	CHECK_EQ(r, getuid());
	CHECK_EQ(e, geteuid());
	CHECK_EQ(sscanf(field(big, "Gid"), "%u %u %u %u", &r, &e, &s, &f), 4);
	CHECK_EQ(r, getgid());
	CHECK_EQ(e, getegid());
	CHECK_EQ(strtol(field(big, "Umask"), NULL, 8), 022);
	CHECK(field(big, "VmRSS") != NULL);
	CHECK(field(big, "CapEff") != NULL);
}

static void on_usr2(int sig)
{
	(void)sig;
}

static unsigned long long hexfield(const char *name)
{
	const char *v = field(big, name);
	return v ? strtoull(v, NULL, 16) : ~0ULL;
}

static void status_signals_and_cpus(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN + 1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &set, NULL));
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR2, on_usr2);
	signal(SIGUSR1, on_usr2);
	raise(SIGUSR1);
	ssize_t got = slurp("/proc/self/status", big, sizeof(big));
	/* Consume the pending signal before any check can return. */
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	struct timespec zero = {0, 0};
	int taken = sigtimedwait(&one, NULL, &zero);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	CHECK_SYS(got);
	CHECK_EQ(taken, SIGUSR1);
	/* Bit n-1 stands for signal n. */
	CHECK_EQ(hexfield("SigBlk"), (1ULL << (SIGUSR1 - 1)) | (1ULL << (SIGRTMIN + 1 - 1)));
	CHECK_EQ(hexfield("SigPnd") | hexfield("ShdPnd"), 1ULL << (SIGUSR1 - 1));
	CHECK(hexfield("SigIgn") & (1ULL << (SIGPIPE - 1)));
	CHECK(hexfield("SigCgt") & (1ULL << (SIGUSR2 - 1)));
	CHECK_EQ(hexfield("SigCgt") & (1ULL << (SIGPIPE - 1)), 0);
	CHECK_EQ(strcspn(field(big, "SigBlk"), "\n"), 16);
	CHECK_EQ(atoi(field(big, "NSpid")), getpid());
	CHECK_EQ(atoi(field(big, "NStgid")), getpid());
	/* Cpus_allowed_list names the affinity set. */
	cpu_set_t cpus;
	CHECK_SYS(sched_getaffinity(0, sizeof(cpus), &cpus));
	char want[64];
	int n = CPU_COUNT(&cpus);
	if (n == 1)
		snprintf(want, sizeof(want), "0\n");
	else
		snprintf(want, sizeof(want), "0-%d\n", n - 1);
	const char *list = field(big, "Cpus_allowed_list");
	CHECK(list != NULL);
	CHECK_EQ(strncmp(list, want, strlen(want)), 0);
	CHECK_EQ(hexfield("Cpus_allowed"), (1ULL << n) - 1);
	CHECK(field(big, "Mems_allowed_list") != NULL);
	/* The groups list ends with a space, as Linux writes it. */
	const char *g = field(big, "Groups");
	CHECK(g != NULL);
	const char *nl = strchr(g, '\n');
	CHECK(nl != NULL && nl[-1] == ' ');
}

static void statm_consistent(void)
{
	CHECK_SYS(slurp("/proc/self/statm", big, sizeof(big)));
	unsigned long size, res, shared, text, lib, data, dt;
	CHECK_EQ(sscanf(big, "%lu %lu %lu %lu %lu %lu %lu", &size, &res, &shared, &text, &lib, &data, &dt), 7);
	CHECK_GT(size, 0);
	CHECK_GT(res, 0);
	CHECK_LE(res, size);
	CHECK_LE(data, size);
	/* A fresh 4 MiB anonymous mapping grows the size by 1024 pages. */
	char *m = CHECK_MAP(mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(slurp("/proc/self/statm", big, sizeof(big)));
	unsigned long size2;
	CHECK_EQ(sscanf(big, "%lu", &size2), 1);
	CHECK_GE(size2, size + 1024);
	munmap(m, 4 << 20);
}

static void maps_and_smaps_agree(void)
{
	char *m = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	static char maps[1 << 16];
	CHECK_SYS(slurp("/proc/self/maps", maps, sizeof(maps)));
	char want[64];
	snprintf(want, sizeof(want), "%lx-%lx r--p ", (unsigned long)m, (unsigned long)m + 3 * 4096);
	CHECK(strstr(maps, want) != NULL);
	CHECK(strstr(maps, "[stack]") != NULL);
	CHECK_SYS(slurp("/proc/self/smaps", big, sizeof(big)));
	/* Every maps line heads an smaps entry with its size. */
	int nmaps = 0, nsize = 0, nflags = 0;
	for (char *p = maps; *p; p = strchr(p, '\n') + 1)
		nmaps++;
	for (char *p = big; (p = strstr(p, "\nSize:")) != NULL; p++)
		nsize++;
	for (char *p = big; (p = strstr(p, "\nVmFlags:")) != NULL; p++)
		nflags++;
	CHECK_EQ(nsize, nmaps);
	CHECK_EQ(nflags, nmaps);
	char *entry = strstr(big, want);
	CHECK(entry != NULL);
	unsigned long kb;
	CHECK_EQ(sscanf(strstr(entry, "Size:"), "Size: %lu kB", &kb), 1);
	CHECK_EQ(kb, 12);
	CHECK(strstr(entry, "Rss:") != NULL);
	munmap(m, 3 * 4096);
	/* smaps_rollup: one header spanning the mappings, then the sums. */
	CHECK_SYS(slurp("/proc/self/smaps_rollup", big, sizeof(big)));
	char *nl = strchr(big, '\n');
	CHECK(nl != NULL);
	CHECK_EQ(strncmp(nl - 8, "[rollup]", 8), 0);
	CHECK(strstr(big, " ---p 00000000 00:00 0 ") != NULL);
	CHECK_EQ(sscanf(nl + 1, "Rss: %lu kB", &kb), 1);
	CHECK_GT(kb, 0);
	CHECK(strstr(big, "\nAnonymous:") != NULL);
}

/* limit_of parses a /proc/self/limits row; -1 stands for unlimited. */
static int limit_of(const char *text, const char *name, long long *soft, long long *hard)
{
	const char *p = strstr(text, name);
	if (!p)
		return -1;
	p += 26;
	char s[32], h[32];
	if (sscanf(p, "%31s %31s", s, h) != 2)
		return -1;
	*soft = strcmp(s, "unlimited") == 0 ? -1 : atoll(s);
	*hard = strcmp(h, "unlimited") == 0 ? -1 : atoll(h);
	return 0;
}

static long long rl(rlim_t v)
{
	return v == RLIM_INFINITY ? -1 : (long long)v;
}

static void limits_match_getrlimit(void)
{
	CHECK_SYS(slurp("/proc/self/limits", big, sizeof(big)));
	CHECK_EQ(strncmp(big, "Limit                     Soft Limit           Hard Limit           Units     \n", 79), 0);
	static const struct {
		const char *name;
		int res;
	} rows[] = {
		{"Max cpu time", RLIMIT_CPU},       {"Max file size", RLIMIT_FSIZE},
		{"Max stack size", RLIMIT_STACK},   {"Max core file size", RLIMIT_CORE},
		{"Max processes", RLIMIT_NPROC},    {"Max open files", RLIMIT_NOFILE},
		{"Max locked memory", RLIMIT_MEMLOCK}, {"Max address space", RLIMIT_AS},
		{"Max pending signals", RLIMIT_SIGPENDING}, {"Max realtime timeout", RLIMIT_RTTIME},
	};
	for (size_t i = 0; i < MT_NCASES(rows); i++) {
		struct rlimit r;
		long long s, h;
		CHECK_SYS(getrlimit(rows[i].res, &r));
		CHECK_EQ(limit_of(big, rows[i].name, &s, &h), 0);
		if (s != rl(r.rlim_cur) || h != rl(r.rlim_max))
			FAIL("%s: /proc says %lld %lld, getrlimit %lld %lld", rows[i].name, s, h, rl(r.rlim_cur), rl(r.rlim_max));
	}
	/* A change shows at once. */
	struct rlimit old, r;
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &old));
	r = old;
	r.rlim_cur = 77;
	CHECK_SYS(setrlimit(RLIMIT_NOFILE, &r));
	CHECK_SYS(slurp("/proc/self/limits", big, sizeof(big)));
	CHECK_SYS(setrlimit(RLIMIT_NOFILE, &old));
	long long s, h;
	CHECK_EQ(limit_of(big, "Max open files", &s, &h), 0);
	CHECK_EQ(s, 77);
}

static void cmdline_and_environ(void)
{
	ssize_t n = CHECK_SYS(slurp("/proc/self/cmdline", big, sizeof(big)));
	CHECK_GT(n, 0);
	CHECK_STREQ(big, mt_argv0);
	CHECK_EQ(big[n - 1], 0);
	n = CHECK_SYS(slurp("/proc/self/environ", big, sizeof(big)));
	int found = 0;
	for (char *p = big; p < big + n; p += strlen(p) + 1)
		if (strcmp(p, "LANG=C") == 0)
			found = 1;
	CHECK(found);
}

static void cmdline_after_setproctitle(void)
{
	ssize_t n = CHECK_SYS(slurp("/proc/self/cmdline", big, sizeof(big)));
	int ready[2], done[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(pipe(done));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* Overwrite the arguments and their final NUL, running on
		 * into the environment area that follows them. */
		char *start = (char *)mt_argv0;
		memset(start, 'A', n);
		memcpy(start + n, "BC", 3);
		write(ready[1], "r", 1);
		char c;
		read(done[0], &c, 1);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	ssize_t got = slurp(path, big, sizeof(big));
	write(done[1], "x", 1);
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EXITED(st, 0);
	CHECK_EQ(got, n + 3);
	for (ssize_t i = 0; i < n; i++)
		CHECK_EQ(big[i], 'A');
	CHECK_MEMEQ(big + n, "BC", 3);
}

static void comm_rename(void)
{
	char old[32], got[32];
	CHECK_SYS(prctl(PR_GET_NAME, old));
	CHECK_SYS(prctl(PR_SET_NAME, "via-prctl"));
	CHECK_SYS(slurp("/proc/self/comm", big, sizeof(big)));
	CHECK_STREQ(big, "via-prctl\n");
	int fd = CHECK_SYS(open("/proc/self/comm", O_WRONLY));
	CHECK_EQ(write(fd, "via-proc-file-and-longer", 24), 24);
	close(fd);
	CHECK_SYS(prctl(PR_GET_NAME, got));
	CHECK_SYS(prctl(PR_SET_NAME, old));
	CHECK_STREQ(got, "via-proc-file-a");
}

static void comm_of_other_process_einval(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		read(p[0], &c, 1);
		_exit(0);
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	int fd = CHECK_SYS(open(path, O_WRONLY));
	CHECK_ERR(write(fd, "x", 1), EINVAL);
	close(fd);
	write(p[1], "x", 1);
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EXITED(st, 0);
}

static void exe_cwd_root_links(void)
{
	char link[4096];
	ssize_t n = CHECK_SYS(readlink("/proc/self/exe", link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_EQ(link[0], '/');
	struct stat a, b;
	CHECK_SYS(stat(link, &a));
	CHECK_SYS(stat("/proc/self/exe", &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_size, b.st_size);
	CHECK_SYS(chdir("/dev"));
	n = CHECK_SYS(readlink("/proc/self/cwd", link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "/dev");
	n = CHECK_SYS(readlink("/proc/self/root", link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "/");
	/* Walking through cwd reaches the directory. */
	CHECK_SYS(stat("/proc/self/cwd/null", &a));
	CHECK(S_ISCHR(a.st_mode));
}

static void fd_and_fdinfo(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDWR | O_CLOEXEC));
	char path[64], link[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "/dev/null");
	DIR *d = opendir("/proc/self/fd");
	CHECK(d != NULL);
	int seen = 0, total = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		total++;
		if (atoi(e->d_name) == fd)
			seen = 1;
	}
	closedir(d);
	CHECK(seen);
	CHECK_GE(total, 4); /* 0, 1, 2, fd and the directory's own */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	CHECK_SYS(slurp(path, big, sizeof(big)));
	CHECK_EQ(atoi(field(big, "pos")), 0);
	long flags = strtol(field(big, "flags"), NULL, 8);
	CHECK_EQ(flags & O_ACCMODE, O_RDWR);
	CHECK(flags & O_CLOEXEC);
	CHECK(field(big, "mnt_id") != NULL);
	/* The link's mode tells how the file is open: r-x read, -wx write. */
	struct stat st;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_SYS(lstat(path, &st));
	CHECK_EQ(st.st_mode & 0777, 0700);
	int wfd = CHECK_SYS(open("/dev/null", O_WRONLY));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", wfd);
	CHECK_SYS(lstat(path, &st));
	CHECK_EQ(st.st_mode & 0777, 0300);
	CHECK(S_ISLNK(st.st_mode));
	close(wfd);
	int rfd = CHECK_SYS(open("/dev/null", O_RDONLY));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
	CHECK_SYS(lstat(path, &st));
	CHECK_EQ(st.st_mode & 0777, 0500);
	close(rfd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", 999);
	CHECK_ERR(readlink(path, link, sizeof(link)), ENOENT);
}

static void *sleeper(void *arg)
{
	int *p = arg;
	char c;
	read(p[0], &c, 1);
	return NULL;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void task_dir_lists_threads(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d", getpid());
	struct stat st;
	CHECK_SYS(stat(path, &st));
	CHECK_EQ(count_entries("/proc/self/task"), 1);
	int p[2];
	CHECK_SYS(pipe(p));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, sleeper, p));
	int n = count_entries("/proc/self/task");
	CHECK_SYS(slurp("/proc/self/status", big, sizeof(big)));
	write(p[1], "x", 1);
	pthread_join(th, NULL);
	CHECK_EQ(n, 2);
	CHECK_EQ(atoi(field(big, "Threads")), 2);
}

/* owner_of returns the owner of path as uid*100000+gid, or -1. */
static long owner_of(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	return (long)st.st_uid * 100000 + st.st_gid;
}

static void non_dumpable_files_belong_to_root(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setresgid(1000, 1000, 1000) == 0);
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		/* Changing ids made us non-dumpable. */
		CHILD_CHECK(prctl(PR_GET_DUMPABLE) == 0);
		CHILD_CHECK(owner_of("/proc/self/status") == 0);
		CHILD_CHECK(owner_of("/proc/self/fd") == 0);
		/* The directory keeps the effective owner: tools stat it. */
		CHILD_CHECK(owner_of("/proc/self") == 1000L * 100000 + 1000);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(owner_of("/proc/self/status") == 1000L * 100000 + 1000);
		CHILD_CHECK(owner_of("/proc/self/fd") == 1000L * 100000 + 1000);
		CHILD_CHECK(owner_of("/proc/self") == 1000L * 100000 + 1000);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 0) == 0);
		CHILD_CHECK(owner_of("/proc/self/environ") == 0);
		_exit(0);
	}
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EXITED(st, 0);
}

static char mem_target[64] = "before";

static void mem_file_reads_and_writes(void)
{
	int fd = CHECK_SYS(open("/proc/self/mem", O_RDWR));
	char buf[16];
	CHECK_EQ(pread(fd, buf, 7, (off_t)(uintptr_t)mem_target), 7);
	CHECK_MEMEQ(buf, "before", 7);
	CHECK_EQ(pwrite(fd, "after!", 7, (off_t)(uintptr_t)mem_target), 7);
	CHECK_STREQ(mem_target, "after!");
	/* The offset is an address: lseek there, then read. */
	CHECK_EQ(lseek(fd, (off_t)(uintptr_t)mem_target, SEEK_SET), (off_t)(uintptr_t)mem_target);
	CHECK_EQ(read(fd, buf, 3), 3);
	CHECK_MEMEQ(buf, "aft", 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)(uintptr_t)mem_target + 3);
	/* Nothing mapped there: EIO. */
	char *hole = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(munmap(hole + 4096, 4096));
	CHECK_ERR(pread(fd, buf, 4, (off_t)(uintptr_t)(hole + 4096)), EIO);
	/* A read running into the hole stops at it. */
	CHECK_EQ(pread(fd, buf, 8, (off_t)(uintptr_t)(hole + 4092)), 4);
	munmap(hole, 4096);
	close(fd);
	/* A parent reads its child's memory. */
	int ready[2], done[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(pipe(done));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		strcpy(mem_target, "child");
		write(ready[1], "r", 1);
		char c;
		read(done[0], &c, 1);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? pread(fd, buf, 6, (off_t)(uintptr_t)mem_target) : -1;
	if (fd >= 0)
		close(fd);
	write(done[1], "x", 1);
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EQ(n, 6);
	CHECK_MEMEQ(buf, "child", 6);
	CHECK_STREQ(mem_target, "after!");
}

static void cgroup_format(void)
{
	CHECK_SYS(slurp("/proc/self/cgroup", big, sizeof(big)));
	/* Lines are "hierarchy:controllers:path"; cgroup v2's is "0::/...". */
	int v2 = 0;
	for (char *p = big; *p; p = strchr(p, '\n') + 1) {
		char *nl = strchr(p, '\n');
		CHECK(nl != NULL);
		char *c1 = strchr(p, ':');
		CHECK(c1 != NULL && c1 < nl);
		char *c2 = strchr(c1 + 1, ':');
		CHECK(c2 != NULL && c2 < nl);
		CHECK_EQ(c2[1], '/');
		if (strncmp(p, "0::/", 4) == 0)
			v2 = 1;
	}
	CHECK(v2);
}

static int read_int(const char *path)
{
	char buf[32];
	if (slurp(path, buf, sizeof(buf)) < 0)
		return -99999;
	return atoi(buf);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	int r = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

static void oom_score_adj_kept_and_inherited(void)
{
	int v = read_int("/proc/self/oom_score_adj");
	CHECK_GE(v, -1000);
	CHECK_LE(v, 1000);
	int nv = v < 1000 ? v + 1 : v;
	char s[32];
	snprintf(s, sizeof(s), "%d\n", nv);
	CHECK_EQ(write_str("/proc/self/oom_score_adj", s), (int)strlen(s));
	CHECK_EQ(read_int("/proc/self/oom_score_adj"), nv);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(read_int("/proc/self/oom_score_adj") == nv ? 0 : 1);
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EXITED(st, 0);
	CHECK_ERR(write_str("/proc/self/oom_score_adj", "1001"), EINVAL);
	CHECK_ERR(write_str("/proc/self/oom_score_adj", "-1001"), EINVAL);
	CHECK_ERR(write_str("/proc/self/oom_score_adj", "ten"), EINVAL);
	CHECK_EQ(read_int("/proc/self/oom_score_adj"), nv);
}

static void id_maps(void)
{
	for (int i = 0; i < 2; i++) {
		CHECK_SYS(slurp(i ? "/proc/self/gid_map" : "/proc/self/uid_map", big, sizeof(big)));
		unsigned long inner, outer, count;
		CHECK_EQ(sscanf(big, "%lu %lu %lu", &inner, &outer, &count), 3);
		CHECK_GT(count, 0);
		/* Our own id is inside the first range. */
		unsigned long id = i ? getgid() : getuid();
		CHECK_GE(id, inner);
		CHECK_LT(id - inner, count);
		CHECK_EQ(strlen(big), 33);
	}
}

static void audit_and_misc_files(void)
{
	char buf[64];
	CHECK_EQ(slurp("/proc/self/loginuid", buf, sizeof(buf)), 10);
	CHECK_STREQ(buf, "4294967295");
	CHECK_SYS(slurp("/proc/self/setgroups", buf, sizeof(buf)));
	CHECK_STREQ(buf, "allow\n");
	CHECK_SYS(slurp("/proc/self/personality", buf, sizeof(buf)));
	char want[16];
	snprintf(want, sizeof(want), "%08x\n", personality(0xffffffff));
	CHECK_STREQ(buf, want);
	CHECK_SYS(slurp("/proc/self/coredump_filter", buf, sizeof(buf)));
	CHECK_EQ(strlen(buf), 9);
	CHECK_SYS(slurp("/proc/self/wchan", buf, sizeof(buf)));
}

static void timerslack_follows_prctl(void)
{
	char buf[64];
	CHECK_SYS(slurp("/proc/self/timerslack_ns", buf, sizeof(buf)));
	CHECK_EQ(strtoull(buf, NULL, 10), (unsigned long long)prctl(PR_GET_TIMERSLACK));
	int fd = CHECK_SYS(open("/proc/self/timerslack_ns", O_WRONLY));
	CHECK_EQ(write(fd, "123456\n", 7), 7);
	CHECK_EQ(prctl(PR_GET_TIMERSLACK), 123456);
	CHECK_ERR(write(fd, "12x", 3), EINVAL);
	CHECK_EQ(write(fd, "0", 1), 1);
	close(fd);
	CHECK_SYS(slurp("/proc/self/timerslack_ns", buf, sizeof(buf)));
	CHECK_EQ(strtoull(buf, NULL, 10), (unsigned long long)prctl(PR_GET_TIMERSLACK));
	CHECK_EQ(prctl(PR_GET_TIMERSLACK), 50000);
}

static void ns_links(void)
{
	static const char *kinds[] = {"cgroup", "ipc", "mnt", "net", "pid", "user", "uts"};
	for (size_t i = 0; i < MT_NCASES(kinds); i++) {
		char path[64], link[64], prefix[32];
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i]);
		ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
		link[n] = 0;
		snprintf(prefix, sizeof(prefix), "%s:[", kinds[i]);
		CHECK_EQ(strncmp(link, prefix, strlen(prefix)), 0);
		CHECK_EQ(link[n - 1], ']');
		unsigned long ino = strtoul(link + strlen(prefix), NULL, 10);
		struct stat st;
		CHECK_SYS(stat(path, &st));
		CHECK_EQ(st.st_ino, ino);
		/* A child shares every namespace. */
		char other[64], olink[64];
		snprintf(other, sizeof(other), "/proc/%d/ns/%s", getpid(), kinds[i]);
		n = CHECK_SYS(readlink(other, olink, sizeof(olink) - 1));
		olink[n] = 0;
		CHECK_STREQ(olink, link);
	}
	int fd = CHECK_SYS(open("/proc/self/ns/uts", O_RDONLY));
	close(fd);
}

/* The ioctls of ioctl_ns(2). */
#define NS_GET_USERNS _IO(0xb7, 0x1)
#define NS_GET_PARENT _IO(0xb7, 0x2)
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#define NS_GET_OWNER_UID _IO(0xb7, 0x4)

static void ns_ioctls(void)
{
	static const struct {
		const char *name;
		int type;
	} kinds[] = {
		{"pid", CLONE_NEWPID}, {"uts", CLONE_NEWUTS}, {"ipc", CLONE_NEWIPC}, {"mnt", CLONE_NEWNS},
		{"net", CLONE_NEWNET}, {"user", CLONE_NEWUSER}, {"cgroup", CLONE_NEWCGROUP},
	};
	char path[64];
	for (size_t i = 0; i < MT_NCASES(kinds); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i].name);
		int fd = CHECK_SYS(open(path, O_RDONLY));
		CHECK_EQ(ioctl(fd, NS_GET_NSTYPE), kinds[i].type);
		close(fd);
	}
	/* The owner of the pid namespace is our user namespace. */
	int pidns = CHECK_SYS(open("/proc/self/ns/pid", O_RDONLY));
	int owner = CHECK_SYS(ioctl(pidns, NS_GET_USERNS));
	struct stat a, b;
	CHECK_SYS(fstat(owner, &a));
	CHECK_SYS(stat("/proc/self/ns/user", &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
	CHECK_EQ(fcntl(owner, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(ioctl(owner, NS_GET_NSTYPE), CLONE_NEWUSER);
	uid_t uid = 12345;
	CHECK_SYS(ioctl(owner, NS_GET_OWNER_UID, &uid));
	CHECK_EQ(uid, 0);
	/* Our user and pid namespaces' parents are out of sight. */
	CHECK_ERR(ioctl(owner, NS_GET_USERNS), EPERM);
	CHECK_ERR(ioctl(owner, NS_GET_PARENT), EPERM);
	CHECK_ERR(ioctl(pidns, NS_GET_OWNER_UID, &uid), EINVAL);
	int uts = CHECK_SYS(open("/proc/self/ns/uts", O_RDONLY));
	CHECK_ERR(ioctl(uts, NS_GET_PARENT), EINVAL);
	CHECK_ERR(ioctl(uts, TCGETS, &uid), ENOTTY);
	close(uts);
	close(owner);
	close(pidns);
}

static void only_own_processes(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		read(p[0], &c, 1);
		_exit(0);
	}
	DIR *d = opendir("/proc");
	CHECK(d != NULL);
	int self = 0, child = 0, n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int v = atoi(e->d_name);
		if (v <= 0)
			continue;
		n++;
		self |= v == getpid();
		child |= v == pid;
	}
	closedir(d);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	CHECK_SYS(slurp(path, big, sizeof(big)));
	int ppid;
	CHECK_EQ(sscanf(strrchr(big, ')') + 2, "%*c %d", &ppid), 1);
	write(p[1], "x", 1);
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK(self);
	CHECK(child);
	CHECK_EQ(ppid, getpid());
	/* Fresh PID namespace in both runs: just us and the child. */
	CHECK_EQ(n, 2);
	struct stat sst;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	CHECK_ERR(stat(path, &sst), ENOENT);
}

/* Lines of the host's mount tables (seen natively) can be long: overlay
 * options name every lower layer. Fields are skipped, not copied, and
 * only whole lines are looked at. */
static void mounts_show_proc(void)
{
	CHECK_SYS(slurp("/proc/self/mounts", big, sizeof(big)));
	int found = 0;
	for (char *p = big, *nl; *p && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		char dir[4096], type[256];
		int a, b;
		CHECK_EQ(sscanf(p, "%*s %4095s %255s %*s %d %d", dir, type, &a, &b), 4);
		if (strcmp(dir, "/proc") == 0 && strcmp(type, "proc") == 0)
			found = 1;
	}
	CHECK(found);
	CHECK_SYS(slurp("/proc/self/mountinfo", big, sizeof(big)));
	found = 0;
	for (char *p = big, *nl; *p && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		int id, parent;
		unsigned maj, min;
		char dir[4096];
		CHECK_EQ(sscanf(p, "%d %d %u:%u %*s %4095s", &id, &parent, &maj, &min, dir), 5);
		char *sep = strstr(p, " - ");
		CHECK(sep != NULL && sep < nl);
		if (strcmp(dir, "/proc") == 0 && strncmp(sep, " - proc ", 8) == 0)
			found = 1;
	}
	CHECK(found);
}

static const struct mt_case cases[] = {
	MT_CASE(self_is_getpid),
	MT_CASE(thread_self_in_thread),
	MT_CASE(stat_fields),
	MT_CASE(status_fields),
	MT_CASE(status_signals_and_cpus),
	MT_CASE(statm_consistent),
	MT_CASE(maps_and_smaps_agree),
	MT_CASE(limits_match_getrlimit),
	MT_CASE(cmdline_and_environ),
	MT_CASE(cmdline_after_setproctitle),
	MT_CASE(comm_rename),
	MT_CASE(comm_of_other_process_einval),
	MT_CASE(exe_cwd_root_links),
	MT_CASE(fd_and_fdinfo),
	MT_CASE(task_dir_lists_threads),
	MT_CASE(non_dumpable_files_belong_to_root),
	MT_CASE(mem_file_reads_and_writes),
	MT_CASE(cgroup_format),
	MT_CASE(oom_score_adj_kept_and_inherited),
	MT_CASE(id_maps),
	MT_CASE(audit_and_misc_files),
	MT_CASE(timerslack_follows_prctl),
	MT_CASE(ns_links),
	MT_CASE(ns_ioctls),
	MT_CASE(only_own_processes),
	MT_CASE(mounts_show_proc),
};

MT_MAIN(cases)
