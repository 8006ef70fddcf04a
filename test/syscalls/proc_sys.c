//go:build ignore

/* proc_sys: the system files of /proc (cpuinfo, meminfo, stat, uptime,
 * loadavg, version, filesystems, mounts) and /proc/sys tunables, checked
 * for shape and against what the syscalls say (uname, sysinfo,
 * sched_getaffinity, getrlimit), never against the host's exact values. */
#include "moattest.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

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
		if (r == 0 || (n += r) == size - 1)
			break;
	}
	close(fd);
	buf[n] = 0;
	return n;
}

static char big[1 << 18];

/* ncpus is how many CPUs this process may run on. */
static int ncpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	return CPU_COUNT(&set);
}

static int count_prefix(const char *text, const char *prefix)
{
	int n = 0;
	size_t l = strlen(prefix);
	for (const char *p = text; *p;) {
		if (strncmp(p, prefix, l) == 0)
			n++;
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

/* value returns what follows "name" and its separator on a line. */
static const char *value(const char *text, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = text; *p;) {
		if (strncmp(p, name, l) == 0 && (p[l] == ':' || p[l] == '\t' || p[l] == ' ')) {
			p += l;
			while (*p == ' ' || *p == '\t' || *p == ':')
				p++;
			return p;
		}
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	return NULL;
}

static void cpuinfo_one_entry_per_cpu(void)
{
	CHECK_SYS(slurp("/proc/cpuinfo", big, sizeof(big)));
	CHECK_EQ(count_prefix(big, "processor\t: "), ncpus());
	CHECK_EQ(count_prefix(big, "flags\t\t: "), ncpus());
	CHECK(value(big, "vendor_id") != NULL);
	CHECK(value(big, "model name") != NULL);
	CHECK_GT(atoi(value(big, "cpu family")), 0);
	CHECK_GT(atof(value(big, "cpu MHz")), 0);
	CHECK_GT(atof(value(big, "bogomips")), 0);
	/* Every CPU has SSE2 on x86-64. */
	const char *flags = value(big, "flags");
	CHECK(strstr(flags, " sse2 ") != NULL);
	CHECK_EQ(atoi(value(big, "siblings")), ncpus());
	CHECK_EQ(sysconf(_SC_NPROCESSORS_ONLN), ncpus());
}

static unsigned long long meminfo_kb(const char *name)
{
	const char *v = value(big, name);
	return v ? strtoull(v, NULL, 10) : 0;
}

static void meminfo_matches_sysinfo(void)
{
	CHECK_SYS(slurp("/proc/meminfo", big, sizeof(big)));
	struct sysinfo si;
	CHECK_SYS(sysinfo(&si));
	CHECK_EQ(strncmp(big, "MemTotal:", 9), 0);
	unsigned long long total = meminfo_kb("MemTotal");
	CHECK_EQ(total, (unsigned long long)si.totalram * si.mem_unit / 1024);
	CHECK_LE(meminfo_kb("MemFree"), total);
	CHECK_LE(meminfo_kb("MemAvailable"), total);
	CHECK(value(big, "SwapTotal") != NULL);
	CHECK_EQ(meminfo_kb("SwapTotal"), (unsigned long long)si.totalswap * si.mem_unit / 1024);
	/* Lines are "Name:" padded to 16 columns, 8 digits, " kB". */
	char *nl = strchr(big, '\n');
	CHECK_EQ(nl - big, 27);
	CHECK_EQ(strncmp(nl - 3, " kB", 3), 0);
	CHECK_EQ(sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 1024, (long)total);
}

static void stat_has_cpus_and_btime(void)
{
	CHECK_SYS(slurp("/proc/stat", big, sizeof(big)));
	CHECK_EQ(strncmp(big, "cpu  ", 5), 0);
	unsigned long long v[10];
	CHECK_EQ(sscanf(big + 5, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			&v[4], &v[5], &v[6], &v[7], &v[8], &v[9]),
		 10);
	char name[16];
	snprintf(name, sizeof(name), "cpu%d ", ncpus() - 1);
	CHECK(strstr(big, name) != NULL);
	snprintf(name, sizeof(name), "cpu%d ", ncpus());
	CHECK(strstr(big, name) == NULL);
	CHECK_EQ(count_prefix(big, "cpu"), ncpus() + 1);
	/* btime + uptime is now. */
	long long btime = atoll(value(big, "btime"));
	struct sysinfo si;
	CHECK_SYS(sysinfo(&si));
	long long now = time(NULL);
	CHECK_LE(btime + si.uptime, now + 2);
	CHECK_GE(btime + si.uptime, now - 2);
	CHECK_GE(atoi(value(big, "processes")), 1);
	CHECK_GE(atoi(value(big, "procs_running")), 1);
	CHECK(value(big, "ctxt") != NULL);
}

static void vmstat_format(void)
{
	CHECK_SYS(slurp("/proc/vmstat", big, sizeof(big)));
	/* "name value" lines; free pages within the memory total. */
	for (char *p = big; *p; p = strchr(p, '\n') + 1) {
		char name[64];
		unsigned long long v;
		CHECK_EQ(sscanf(p, "%63s %llu", name, &v), 2);
	}
	struct sysinfo si;
	CHECK_SYS(sysinfo(&si));
	unsigned long long free_pages = strtoull(value(big, "nr_free_pages"), NULL, 10);
	CHECK_GT(free_pages, 0);
	CHECK_LE(free_pages, (unsigned long long)si.totalram * si.mem_unit / 4096);
	CHECK(value(big, "pgfault") != NULL);
	CHECK(value(big, "pswpin") != NULL);
}

static void uptime_matches_sysinfo(void)
{
	CHECK_SYS(slurp("/proc/uptime", big, sizeof(big)));
	double up, idle;
	CHECK_EQ(sscanf(big, "%lf %lf", &up, &idle), 2);
	struct sysinfo si;
	CHECK_SYS(sysinfo(&si));
	CHECK_LE(up, si.uptime + 1.0);
	CHECK_GE(up, si.uptime - 2.0);
	CHECK_GE(idle, 0);
	/* Two decimals, then a newline. */
	char *dot = strchr(big, '.');
	CHECK(dot != NULL && dot[3] == ' ');
	CHECK_EQ(big[strlen(big) - 1], '\n');
}

static void loadavg_format(void)
{
	CHECK_SYS(slurp("/proc/loadavg", big, sizeof(big)));
	double a, b, c;
	int running, total, last;
	CHECK_EQ(sscanf(big, "%lf %lf %lf %d/%d %d", &a, &b, &c, &running, &total, &last), 6);
	CHECK_GE(running, 1);
	CHECK_LE(running, total);
	CHECK_GE(last, getpid());
	double la[3];
	CHECK_EQ(getloadavg(la, 3), 3);
}

static void version_names_release(void)
{
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_SYS(slurp("/proc/version", big, sizeof(big)));
	char want[256];
	snprintf(want, sizeof(want), "Linux version %s ", u.release);
	CHECK_EQ(strncmp(big, want, strlen(want)), 0);
	CHECK(strstr(big, u.version) != NULL);
}

static void filesystems_lists_proc_and_sysfs(void)
{
	CHECK_SYS(slurp("/proc/filesystems", big, sizeof(big)));
	CHECK(strstr(big, "nodev\tproc\n") != NULL);
	CHECK(strstr(big, "nodev\tsysfs\n") != NULL);
	CHECK(strstr(big, "nodev\ttmpfs\n") != NULL);
}

static void swaps_and_cmdline(void)
{
	CHECK_SYS(slurp("/proc/swaps", big, sizeof(big)));
	CHECK_EQ(strncmp(big, "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n", 38), 0);
	/* Each swap area is a line after the header; none means no swap. */
	struct sysinfo si;
	CHECK_SYS(sysinfo(&si));
	CHECK_EQ(count_prefix(big, "/") == 0, si.totalswap == 0);
	ssize_t n = CHECK_SYS(slurp("/proc/cmdline", big, sizeof(big)));
	CHECK_GT(n, 1);
	CHECK_EQ(big[n - 1], '\n');
	CHECK_SYS(slurp("/proc/partitions", big, sizeof(big)));
	CHECK_EQ(strncmp(big, "major minor  #blocks  name\n\n", 28), 0);
}

static void mounts_is_self_mounts(void)
{
	char link[64];
	ssize_t n = CHECK_SYS(readlink("/proc/mounts", link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "self/mounts");
	static char a[1 << 16];
	CHECK_SYS(slurp("/proc/mounts", a, sizeof(a)));
	CHECK_SYS(slurp("/proc/self/mounts", big, sizeof(big)));
	CHECK_STREQ(a, big);
}

static void read_line(const char *path, char *buf, size_t n)
{
	buf[0] = 0;
	if (slurp(path, buf, n) > 0 && buf[strlen(buf) - 1] == '\n')
		buf[strlen(buf) - 1] = 0;
}

static void kernel_names_match_uname(void)
{
	struct utsname u;
	CHECK_SYS(uname(&u));
	char buf[256];
	read_line("/proc/sys/kernel/hostname", buf, sizeof(buf));
	CHECK_STREQ(buf, u.nodename);
	read_line("/proc/sys/kernel/domainname", buf, sizeof(buf));
	CHECK_STREQ(buf, u.domainname);
	read_line("/proc/sys/kernel/ostype", buf, sizeof(buf));
	CHECK_STREQ(buf, u.sysname);
	read_line("/proc/sys/kernel/osrelease", buf, sizeof(buf));
	CHECK_STREQ(buf, u.release);
	read_line("/proc/sys/kernel/version", buf, sizeof(buf));
	CHECK_STREQ(buf, u.version);
}

static void hostname_written_through_proc(void)
{
	struct utsname u;
	CHECK_SYS(uname(&u));
	int fd = CHECK_SYS(open("/proc/sys/kernel/hostname", O_WRONLY));
	CHECK_EQ(write(fd, "proc-named\n", 11), 11);
	close(fd);
	struct utsname after;
	CHECK_SYS(uname(&after));
	CHECK_SYS(sethostname(u.nodename, strlen(u.nodename)));
	CHECK_STREQ(after.nodename, "proc-named");
}

static int is_uuid(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n";
	if (strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; i < sizeof(shape) - 1; i++) {
		if (shape[i] == 'x' ? !strchr("0123456789abcdef", s[i]) : s[i] != shape[i])
			return 0;
	}
	return 1;
}

static void random_ids(void)
{
	char a[64], b[64];
	CHECK_SYS(slurp("/proc/sys/kernel/random/boot_id", a, sizeof(a)));
	CHECK_SYS(slurp("/proc/sys/kernel/random/boot_id", b, sizeof(b)));
	CHECK(is_uuid(a));
	CHECK_STREQ(a, b);
	CHECK_SYS(slurp("/proc/sys/kernel/random/uuid", a, sizeof(a)));
	CHECK_SYS(slurp("/proc/sys/kernel/random/uuid", b, sizeof(b)));
	CHECK(is_uuid(a));
	CHECK(is_uuid(b));
	CHECK(strcmp(a, b) != 0);
	/* Version 4, RFC 4122 variant. */
	CHECK_EQ(a[14], '4');
	CHECK(strchr("89ab", a[19]) != NULL);
}

static long read_long(const char *path)
{
	char buf[64];
	if (slurp(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atol(buf);
}

static void kernel_limits(void)
{
	CHECK_GE(read_long("/proc/sys/kernel/pid_max"), 32768);
	CHECK_GE(read_long("/proc/sys/kernel/pid_max"), getpid());
	CHECK_EQ(read_long("/proc/sys/kernel/ngroups_max"), sysconf(_SC_NGROUPS_MAX));
	CHECK_EQ(read_long("/proc/sys/kernel/overflowuid"), 65534);
	CHECK_EQ(read_long("/proc/sys/kernel/overflowgid"), 65534);
	long last = read_long("/proc/sys/kernel/cap_last_cap");
	CHECK_GE(last, 37);
	/* Every capability up to cap_last_cap is in the bounding set's
	 * range; the next one is not. */
	CHECK_GE(prctl(PR_CAPBSET_READ, last, 0, 0, 0), 0);
	CHECK_ERR(prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0), EINVAL);
	CHECK_GT(read_long("/proc/sys/kernel/threads-max"), 0);
}

static void vm_and_fs_tunables(void)
{
	long oc = read_long("/proc/sys/vm/overcommit_memory");
	CHECK(oc >= 0 && oc <= 2);
	CHECK_GT(read_long("/proc/sys/vm/max_map_count"), 0);
	/* Nothing can be mapped below mmap_min_addr. */
	long min_addr = read_long("/proc/sys/vm/mmap_min_addr");
	CHECK_GT(min_addr, 0);
	CHECK(mmap((void *)(min_addr - 4096), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED);
	void *p = mmap((void *)min_addr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(p == (void *)min_addr || (p == MAP_FAILED && errno == EEXIST));
	if (p != MAP_FAILED)
		munmap(p, 4096);
	CHECK_GT(read_long("/proc/sys/fs/file-max"), 0);
	/* nr_open bounds RLIMIT_NOFILE's hard limit. */
	long nr_open = read_long("/proc/sys/fs/nr_open");
	CHECK_GE(nr_open, 1024);
	struct rlimit r;
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &r));
	CHECK_LE(r.rlim_max, (rlim_t)nr_open);
	struct rlimit big_r = {nr_open + 1, nr_open + 1};
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &big_r), EPERM);
	/* pipe-max-size is the largest F_SETPIPE_SZ. */
	long pmax = read_long("/proc/sys/fs/pipe-max-size");
	CHECK_GE(pmax, 65536);
	CHECK_GT(read_long("/proc/sys/net/core/somaxconn"), 0);
}

static void sysctl_files_are_regular(void)
{
	struct stat st;
	CHECK_SYS(stat("/proc/sys/kernel/ostype", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 0);
	CHECK_SYS(stat("/proc/sys/kernel", &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_ERR(open("/proc/sys/kernel/no-such-tunable", O_RDONLY), ENOENT);
	/* Read-only tunables refuse writers, root included. */
	CHECK_ERR(open("/proc/sys/kernel/ostype", O_WRONLY), EACCES);
	CHECK_ERR(open("/proc/sys/kernel/random/boot_id", O_RDWR), EACCES);
}

static const struct mt_case cases[] = {
	MT_CASE(cpuinfo_one_entry_per_cpu),
	MT_CASE(meminfo_matches_sysinfo),
	MT_CASE(stat_has_cpus_and_btime),
	MT_CASE(vmstat_format),
	MT_CASE(uptime_matches_sysinfo),
	MT_CASE(loadavg_format),
	MT_CASE(version_names_release),
	MT_CASE(filesystems_lists_proc_and_sysfs),
	MT_CASE(swaps_and_cmdline),
	MT_CASE(mounts_is_self_mounts),
	MT_CASE(kernel_names_match_uname),
	MT_CASE(hostname_written_through_proc),
	MT_CASE(random_ids),
	MT_CASE(kernel_limits),
	MT_CASE(vm_and_fs_tunables),
	MT_CASE(sysctl_files_are_regular),
};

MT_MAIN(cases)
