//go:build ignore

/* sysfs: what language runtimes read from /sys at start-up: the CPU lists
 * and per-CPU directories (agreeing with sched_getaffinity and sysconf),
 * the cgroup mount point and the transparent huge page settings. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static ssize_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

static int ncpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	return CPU_COUNT(&set);
}

/* list_count counts the CPUs of a cpulist ("0-3,5"), -1 if malformed. */
static int list_count(const char *s)
{
	int n = 0;
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10);
		if (end == s)
			return -1;
		long b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		n += b - a + 1;
		s = end;
		if (*s == ',')
			s++;
	}
	return n;
}

static void cpu_lists_match_affinity(void)
{
	char buf[256];
	static const char *files[] = {"online", "possible", "present"};
	for (size_t i = 0; i < MT_NCASES(files); i++) {
		char path[128];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", files[i]);
		CHECK_SYS(slurp(path, buf, sizeof(buf)));
		CHECK_EQ(buf[strlen(buf) - 1], '\n');
		CHECK_EQ(strncmp(buf, "0", 1), 0);
		int n = list_count(buf);
		if (i == 0)
			CHECK_EQ(n, ncpus());
		else
			CHECK_GE(n, ncpus());
	}
	CHECK_EQ(sysconf(_SC_NPROCESSORS_CONF), ncpus());
	CHECK_EQ(sysconf(_SC_NPROCESSORS_ONLN), ncpus());
}

static void cpu_directories(void)
{
	DIR *d = opendir("/sys/devices/system/cpu");
	CHECK(d != NULL);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		if (strncmp(e->d_name, "cpu", 3) == 0 && e->d_name[3] >= '0' && e->d_name[3] <= '9') {
			strtol(e->d_name + 3, &end, 10);
			if (*end == 0)
				n++;
		}
	}
	closedir(d);
	CHECK_EQ(n, ncpus());
	char path[128], buf[64];
	for (int c = 0; c < ncpus(); c++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		CHECK_SYS(slurp(path, buf, sizeof(buf)));
		CHECK_GE(atoi(buf), 0);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", c);
		CHECK_SYS(slurp(path, buf, sizeof(buf)));
		CHECK_GE(list_count(buf), 1);
	}
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", ncpus());
	struct stat st;
	CHECK_ERR(stat(path, &st), ENOENT);
}

static void numa_node_has_every_cpu(void)
{
	char buf[256];
	CHECK_SYS(slurp("/sys/devices/system/node/online", buf, sizeof(buf)));
	CHECK_GE(list_count(buf), 1);
	CHECK_SYS(slurp("/sys/devices/system/node/node0/cpulist", buf, sizeof(buf)));
	CHECK_GE(list_count(buf), 1);
	/* Each CPU links to its node. */
	struct stat st;
	CHECK_SYS(stat("/sys/devices/system/cpu/cpu0/node0", &st));
	CHECK(S_ISDIR(st.st_mode));
}

static void cgroup_mount_point(void)
{
	struct stat st;
	CHECK_SYS(stat("/sys/fs/cgroup", &st));
	CHECK(S_ISDIR(st.st_mode));
}

static void transparent_hugepage(void)
{
	char buf[256];
	CHECK_SYS(slurp("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf)));
	/* One of always, madvise, never is chosen, in brackets. */
	char *l = strchr(buf, '['), *r = strchr(buf, ']');
	CHECK(l != NULL && r != NULL && l < r);
	*r = 0;
	CHECK(strcmp(l + 1, "always") == 0 || strcmp(l + 1, "madvise") == 0 || strcmp(l + 1, "never") == 0);
	CHECK_SYS(slurp("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", buf, sizeof(buf)));
	CHECK_EQ(atol(buf), 2 << 20);
}

static void sysfs_statfs_and_readonly(void)
{
	struct statfs sf;
	CHECK_SYS(statfs("/sys/devices/system/cpu", &sf));
	CHECK_EQ(sf.f_type, 0x62656572); /* SYSFS_MAGIC */
	/* The CPU lists are read-only even for root: EACCES on a read-write
	 * sysfs, EROFS where it is mounted read-only as containers mount it
	 * (the sandbox's is). */
	int fd = open("/sys/devices/system/cpu/online", O_WRONLY);
	CHECK_EQ(fd, -1);
	CHECK(errno == EACCES || errno == EROFS);
	CHECK_ERR(open("/sys/devices/system/cpu/no-such-file", O_RDONLY), ENOENT);
}

static const struct mt_case cases[] = {
	MT_CASE(cpu_lists_match_affinity),
	MT_CASE(cpu_directories),
	MT_CASE(numa_node_has_every_cpu),
	MT_CASE(cgroup_mount_point),
	MT_CASE(transparent_hugepage),
	MT_CASE(sysfs_statfs_and_readonly),
};

MT_MAIN(cases)
