//go:build ignore

/* sched_calls: scheduling syscalls: affinity masks and their size rules,
 * policies and priority ranges, sched_param/sched_attr round trips and
 * errors, sched_yield, nice values through get/setpriority, ioprio, and
 * getcpu. */
#include "moattest.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* struct sched_attr, as <linux/sched/types.h> (which clashes with
 * <sched.h>) defines it. */
struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_PRIO(c, d) (((c) << 13) | (d))

static void getaffinity_sizes(void)
{
	unsigned long mask[16];
	memset(mask, 0, sizeof(mask));
	long n = CHECK_SYS(syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask));
	/* The kernel returns the size of its cpumask (a multiple of 8). */
	CHECK_GT(n, 0);
	CHECK_EQ(n % 8, 0);
	CHECK_NE(mask[0], 0);
	/* Too small for the kernel's mask: EINVAL; not a multiple of the
	 * word size: EINVAL. */
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 0, mask), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 7, mask), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, sizeof(mask), (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 99999, sizeof(mask), mask), ESRCH);
}

static void setaffinity_rules(void)
{
	cpu_set_t old, set;
	CHECK_SYS(sched_getaffinity(0, sizeof(old), &old));
	int first = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &old)) {
			first = i;
			break;
		}
	CHECK_GE(first, 0);
	CPU_ZERO(&set);
	CPU_SET(first, &set);
	CHECK_SYS(sched_setaffinity(0, sizeof(set), &set));
	cpu_set_t got;
	CHECK_SYS(sched_getaffinity(0, sizeof(got), &got));
	CHECK_EQ(CPU_COUNT(&got), 1);
	CHECK(CPU_ISSET(first, &got));
	/* No CPU at all: EINVAL. */
	CPU_ZERO(&set);
	CHECK_ERR(sched_setaffinity(0, sizeof(set), &set), EINVAL);
	/* Only CPUs that do not exist: EINVAL. */
	CPU_SET(CPU_SETSIZE - 1, &set);
	CHECK_ERR(sched_setaffinity(0, sizeof(set), &set), EINVAL);
	CHECK_ERR(sched_setaffinity(99999, sizeof(old), &old), ESRCH);
	CHECK_SYS(sched_setaffinity(0, sizeof(old), &old));
}

static void affinity_inherited_by_fork(void)
{
	cpu_set_t old, set;
	CHECK_SYS(sched_getaffinity(0, sizeof(old), &old));
	int first = 0;
	while (!CPU_ISSET(first, &old))
		first++;
	CPU_ZERO(&set);
	CPU_SET(first, &set);
	CHECK_SYS(sched_setaffinity(0, sizeof(set), &set));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		cpu_set_t c;
		sched_getaffinity(0, sizeof(c), &c);
		_exit(CPU_COUNT(&c) == 1 && CPU_ISSET(first, &c) ? 0 : 1);
	}
	int st = mt_wait(pid);
	sched_setaffinity(0, sizeof(old), &old);
	CHECK_EXITED(st, 0);
}

static void priority_ranges(void)
{
	CHECK_EQ(sched_get_priority_max(SCHED_OTHER), 0);
	CHECK_EQ(sched_get_priority_min(SCHED_OTHER), 0);
	CHECK_EQ(sched_get_priority_max(SCHED_BATCH), 0);
	CHECK_EQ(sched_get_priority_max(SCHED_IDLE), 0);
	CHECK_EQ(sched_get_priority_max(SCHED_FIFO), 99);
	CHECK_EQ(sched_get_priority_min(SCHED_FIFO), 1);
	CHECK_EQ(sched_get_priority_max(SCHED_RR), 99);
	CHECK_EQ(sched_get_priority_min(SCHED_RR), 1);
	CHECK_EQ(sched_get_priority_max(SCHED_DEADLINE), 0);
	CHECK_ERR(sched_get_priority_max(42), EINVAL);
	CHECK_ERR(sched_get_priority_min(-1), EINVAL);
}

static void getscheduler_and_param(void)
{
	CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
	CHECK_ERR(sched_getscheduler(-1), EINVAL);
	CHECK_ERR(sched_getscheduler(99999), ESRCH);
	struct sched_param sp = {.sched_priority = 5};
	CHECK_SYS(sched_getparam(0, &sp));
	CHECK_EQ(sp.sched_priority, 0);
	CHECK_ERR(sched_getparam(-1, &sp), EINVAL);
	CHECK_ERR(sched_getparam(99999, &sp), ESRCH);
	CHECK_ERR(syscall(SYS_sched_getparam, 0, NULL), EINVAL);
}

static void setscheduler_normal_policies(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct sched_param sp = {.sched_priority = 0};
		CHILD_CHECK(sched_setscheduler(0, SCHED_BATCH, &sp) == 0);
		CHILD_CHECK(sched_getscheduler(0) == SCHED_BATCH);
		CHILD_CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == 0);
		CHILD_CHECK(sched_getscheduler(0) == SCHED_OTHER);
		/* A priority outside the policy's range. */
		sp.sched_priority = 1;
		CHILD_CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == -1 && errno == EINVAL);
		sp.sched_priority = 100;
		CHILD_CHECK(sched_setscheduler(0, SCHED_FIFO, &sp) == -1 && errno == EINVAL);
		CHILD_CHECK(sched_setscheduler(0, 42, &sp) == -1 && errno == EINVAL);
		CHILD_CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, NULL) == -1 && errno == EINVAL);
		CHILD_CHECK(sched_setscheduler(-1, SCHED_OTHER, &sp) == -1 && errno == EINVAL);
		/* sched_setparam on a normal policy: only 0 is valid. */
		sp.sched_priority = 0;
		CHILD_CHECK(sched_setparam(0, &sp) == 0);
		sp.sched_priority = 3;
		CHILD_CHECK(sched_setparam(0, &sp) == -1 && errno == EINVAL);
		/* Last: leaving SCHED_IDLE needs privilege in the initial
		 * namespace. */
		sp.sched_priority = 0;
		CHILD_CHECK(sched_setscheduler(0, SCHED_IDLE, &sp) == 0);
		CHILD_CHECK(sched_getscheduler(0) == SCHED_IDLE);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void sched_attr_roundtrip(void)
{
	struct sched_attr a;
	memset(&a, 0xff, sizeof(a));
	CHECK_SYS(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0));
	CHECK_EQ(a.size, sizeof(a));
	CHECK_EQ(a.sched_policy, SCHED_OTHER);
	CHECK_EQ(a.sched_nice, 0);
	/* Size below the first version (48 bytes): EINVAL. */
	CHECK_ERR(syscall(SYS_sched_getattr, 0, &a, 16, 0), EINVAL);
	/* Flags must be zero. */
	CHECK_ERR(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 1), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getattr, 99999, &a, sizeof(a), 0), ESRCH);
	CHECK_ERR(syscall(SYS_sched_getattr, 0, NULL, sizeof(a), 0), EINVAL);
}

static void sched_setattr_nice(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct sched_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.sched_policy = SCHED_OTHER;
		a.sched_nice = 7;
		CHILD_CHECK(syscall(SYS_sched_setattr, 0, &a, 0) == 0);
		errno = 0;
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 7 && errno == 0);
		memset(&a, 0, sizeof(a));
		CHILD_CHECK(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) == 0);
		CHILD_CHECK(a.sched_nice == 7);
		/* A size below the first version: E2BIG, with the kernel's
		 * size written back. */
		a.size = 8;
		CHILD_CHECK(syscall(SYS_sched_setattr, 0, &a, 0) == -1 && errno == E2BIG);
		CHILD_CHECK(a.size == 56 || a.size == sizeof(a));
		a.size = sizeof(a);
		a.sched_policy = 42;
		CHILD_CHECK(syscall(SYS_sched_setattr, 0, &a, 0) == -1 && errno == EINVAL);
		a.sched_policy = SCHED_OTHER;
		CHILD_CHECK(syscall(SYS_sched_setattr, 0, &a, 1) == -1 && errno == EINVAL);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void rr_interval(void)
{
	struct timespec ts = {-1, -1};
	CHECK_SYS(sched_rr_get_interval(0, &ts));
	CHECK_GE(ts.tv_sec, 0);
	CHECK_GE(ts.tv_nsec, 0);
	CHECK_ERR(sched_rr_get_interval(-1, &ts), EINVAL);
	CHECK_ERR(sched_rr_get_interval(99999, &ts), ESRCH);
	CHECK_ERR(syscall(SYS_sched_rr_get_interval, 0, (void *)1), EFAULT);
}

static void yield_always_succeeds(void)
{
	for (int i = 0; i < 100; i++)
		CHECK_EQ(syscall(SYS_sched_yield), 0);
}

static void nice_via_priority(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		errno = 0;
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 0 && errno == 0);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0);
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 5);
		/* The raw syscall returns 20 - nice. */
		CHILD_CHECK(syscall(SYS_getpriority, PRIO_PROCESS, 0) == 15);
		/* Values are clamped to [-20, 19]. */
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 100) == 0);
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 19);
		CHILD_CHECK(setpriority(42, 0, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(getpriority(42, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 99999, 0) == -1 && errno == ESRCH);
		/* An unprivileged process cannot lower its nice value. */
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 10) == -1 && errno == EACCES);
		CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 19) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void priority_of_group_and_user(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		setpgid(0, 0);
		CHILD_CHECK(setpriority(PRIO_PGRP, 0, 4) == 0);
		CHILD_CHECK(getpriority(PRIO_PGRP, 0) == 4);
		CHILD_CHECK(getpriority(PRIO_PGRP, 99999) == -1 && errno == ESRCH);
		/* PRIO_USER 0 is the caller's uid: the best (lowest) nice of
		 * its processes, at most ours. */
		errno = 0;
		int u = getpriority(PRIO_USER, 0);
		CHILD_CHECK(errno == 0 && u <= 4);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void ioprio_get_and_set(void)
{
	long p = CHECK_SYS(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	CHECK_GE(p, 0);
	CHECK_ERR(syscall(SYS_ioprio_get, 42, 0), EINVAL);
	CHECK_ERR(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 99999), ESRCH);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(IOPRIO_CLASS_BE, 3)) == 0);
		CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 3));
		CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(IOPRIO_CLASS_IDLE, 0)) == 0);
		CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(7, 0)) == -1 && errno == EINVAL);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void getcpu_in_affinity(void)
{
	unsigned cpu = 9999, node = 9999;
	CHECK_SYS(syscall(SYS_getcpu, &cpu, &node, NULL));
	cpu_set_t set;
	CHECK_SYS(sched_getaffinity(0, sizeof(set), &set));
	CHECK(CPU_ISSET(cpu, &set));
	CHECK_EQ(node, 0);
	/* Either pointer may be NULL. */
	CHECK_SYS(syscall(SYS_getcpu, NULL, NULL, NULL));
	CHECK_ERR(syscall(SYS_getcpu, (void *)1, NULL, NULL), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(getaffinity_sizes),
	MT_CASE(setaffinity_rules),
	MT_CASE(affinity_inherited_by_fork),
	MT_CASE(priority_ranges),
	MT_CASE(getscheduler_and_param),
	MT_CASE(setscheduler_normal_policies),
	MT_CASE(sched_attr_roundtrip),
	MT_CASE(sched_setattr_nice),
	MT_CASE(rr_interval),
	MT_CASE(yield_always_succeeds),
	MT_CASE(nice_via_priority),
	MT_CASE(priority_of_group_and_user),
	MT_CASE(ioprio_get_and_set),
	MT_CASE(getcpu_in_affinity),
};

MT_MAIN(cases)
