//go:build ignore

/* mlock_limits: mlock, mlock2, munlock, mlockall and munlockall against
 * RLIMIT_MEMLOCK (unprivileged callers are held to it; whether root is
 * depends on CAP_IPC_LOCK in the initial namespace, so it is not tested),
 * zero lengths, unmapped ranges, residency after locking, and the
 * locked size reported in /proc/self/status (VmLck). */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return mt_wait(pid);
}

#define IN_CHILD(body)                            \
	static void body##_child(void);           \
	static void body(void)                    \
	{                                         \
		int st = run_child(body##_child); \
		CHECK_EXITED(st, 0);              \
	}                                         \
	static void body##_child(void)

static long vmlck_kb(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strstr(buf, "VmLck:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

IN_CHILD(unprivileged_held_to_limit)
{
	struct rlimit rl = {8 * PG, 8 * PG};
	CHILD_CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	char *p = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(p != MAP_FAILED);
	CHILD_CHECK(mlock(p, 8 * PG) == 0);
	CHILD_CHECK(mlock(p + 8 * PG, PG) == -1 && errno == ENOMEM);
	/* Relocking what is locked costs nothing. */
	CHILD_CHECK(mlock(p, 8 * PG) == 0);
	CHILD_CHECK(munlock(p, 4 * PG) == 0);
	CHILD_CHECK(mlock(p + 8 * PG, 4 * PG) == 0);
}

IN_CHILD(zero_limit_eperm)
{
	struct rlimit rl = {0, 0};
	CHILD_CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	char *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(p != MAP_FAILED);
	/* No limit at all and no capability: EPERM. */
	CHILD_CHECK(mlock(p, PG) == -1 && errno == EPERM);
	CHILD_CHECK(mlockall(MCL_CURRENT) == -1 && errno == EPERM);
}

static void zero_length_and_unmapped(void)
{
	char *p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_SYS(mlock(p, 0));
	CHECK_SYS(munlock(p, 0));
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(mlock(p, 2 * PG), ENOMEM);
	CHECK_ERR(munlock(p, 2 * PG), ENOMEM);
	CHECK_ERR(syscall(SYS_mlock2, p, PG, 2), EINVAL);
	munmap(p, PG);
}

static void locked_pages_are_resident(void)
{
	char *p = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_SYS(mlock(p, 8 * PG));
	unsigned char v[8];
	CHECK_SYS(mincore(p, 8 * PG, v));
	for (int i = 0; i < 8; i++)
		CHECK_EQ(v[i] & 1, 1);
	/* MLOCK_ONFAULT does not populate. */
	char *q = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_SYS(syscall(SYS_mlock2, q, 8 * PG, 1));
	CHECK_SYS(mincore(q, 8 * PG, v));
	CHECK_EQ(v[3] & 1, 0);
	munlock(p, 8 * PG);
	munlock(q, 8 * PG);
}

IN_CHILD(vmlck_counts_locked_bytes)
{
	long base = vmlck_kb();
	CHILD_CHECK(base >= 0);
	char *p = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(p != MAP_FAILED);
	CHILD_CHECK(mlock(p, 16 * PG) == 0);
	CHILD_CHECK(vmlck_kb() == base + 64);
	CHILD_CHECK(munlock(p, 8 * PG) == 0);
	CHILD_CHECK(vmlck_kb() == base + 32);
	CHILD_CHECK(munlockall() == 0);
	CHILD_CHECK(vmlck_kb() == 0);
}

IN_CHILD(mlockall_future_locks_new_mappings)
{
	CHILD_CHECK(mlockall(MCL_CURRENT | MCL_FUTURE) == 0);
	long before = vmlck_kb();
	char *p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(p != MAP_FAILED);
	CHILD_CHECK(vmlck_kb() == before + 16);
	unsigned char v[4];
	CHILD_CHECK(mincore(p, 4 * PG, v) == 0 && (v[2] & 1));
	CHILD_CHECK(munlockall() == 0);
	CHILD_CHECK(vmlck_kb() == 0);
}

static const struct mt_case cases[] = {
	MT_CASE(unprivileged_held_to_limit),
	MT_CASE(zero_limit_eperm),
	MT_CASE(zero_length_and_unmapped),
	MT_CASE(locked_pages_are_resident),
	MT_CASE(vmlck_counts_locked_bytes),
	MT_CASE(mlockall_future_locks_new_mappings),
};

MT_MAIN(cases)
