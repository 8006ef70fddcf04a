//go:build ignore

/* rlimit_nice_rtprio: the limits that let unprivileged processes raise
 * their scheduling priority, at zero: RLIMIT_NICE 0 allows only raising
 * the nice value, RLIMIT_RTPRIO 0 forbids real-time policies. (Raising
 * these limits needs CAP_SYS_RESOURCE in the initial namespace, which the
 * native run lacks, so non-zero limits are not tested.) */
#include "moattest.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int in_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return mt_wait(pid);
}

static void drop(void)
{
	if (setresuid(1000, 1000, 1000) != 0)
		_exit(98);
}

static void nice_zero_limit_only_raises_child(void)
{
	struct rlimit rl = {0, 0};
	CHILD_CHECK(setrlimit(RLIMIT_NICE, &rl) == 0);
	CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0);
	drop();
	CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 4) == -1 && errno == EACCES);
	CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 6) == 0);
}

static void nice_zero_limit_only_raises(void)
{
	int st = in_child(nice_zero_limit_only_raises_child);
	CHECK_EXITED(st, 0);
}

static void rtprio_zero_forbids_realtime_child(void)
{
	struct rlimit rl = {0, 0};
	CHILD_CHECK(setrlimit(RLIMIT_RTPRIO, &rl) == 0);
	drop();
	struct sched_param sp = {.sched_priority = 1};
	CHILD_CHECK(sched_setscheduler(0, SCHED_FIFO, &sp) == -1 && errno == EPERM);
	CHILD_CHECK(sched_setscheduler(0, SCHED_RR, &sp) == -1 && errno == EPERM);
	CHILD_CHECK(sched_getscheduler(0) == SCHED_OTHER);
}

static void rtprio_zero_forbids_realtime(void)
{
	int st = in_child(rtprio_zero_forbids_realtime_child);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(nice_zero_limit_only_raises),
	MT_CASE(rtprio_zero_forbids_realtime),
};

MT_MAIN(cases)
