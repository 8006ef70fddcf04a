//go:build ignore

/* s3_prctl_misc: prctl options no other program covers: PR_MCE_KILL and
 * PR_MCE_KILL_GET (policies, inheritance by fork, argument checks),
 * PR_GET_SECUREBITS/PR_SET_SECUREBITS with SECBIT_KEEP_CAPS tied to
 * PR_GET_KEEPCAPS (kept over fork, cleared by exec), PR_GET_TSC, PR_GET_TIMING/PR_SET_TIMING,
 * PR_TASK_PERF_EVENTS_DISABLE/ENABLE, PR_SET_MM without CAP_SYS_RESOURCE
 * (EPERM), PR_GET_SPECULATION_CTRL's answers, and unknown options. */
#include "moattest.h"

#include <linux/securebits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define IN_CHILD(name)                           \
	static void name##_body(void);           \
	static void name(void)                   \
	{                                        \
		pid_t pid = CHECK_SYS(fork());   \
		if (pid == 0) {                  \
			name##_body();           \
			_exit(0);                \
		}                                \
		int st = mt_wait(pid);           \
		CHECK_EXITED(st, 0);             \
	}                                        \
	static void name##_body(void)

IN_CHILD(mce_kill_policies)
{
	CHILD_CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_DEFAULT);
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_EARLY);
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_LATE);
	/* A forked child keeps the policy. */
	pid_t c = fork();
	if (c == 0)
		_exit(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_LATE ? 0 : 1);
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_DEFAULT);
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_DEFAULT, 0, 0) == 0);
}

IN_CHILD(mce_kill_errors)
{
	CHILD_CHECK(prctl(PR_MCE_KILL, 5, 0, 0, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 1, 0, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 1, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(prctl(PR_MCE_KILL_GET, 1, 0, 0, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_DEFAULT);
	/* An unknown policy is EINVAL (Linux has by then already marked the
	 * task as having a policy, so what GET says next is not checked). */
	CHILD_CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, 7, 0, 0) == -1 && errno == EINVAL);
}

IN_CHILD(securebits_keep_caps)
{
	CHILD_CHECK(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
	/* PR_SET_KEEPCAPS is SECBIT_KEEP_CAPS. */
	CHILD_CHECK(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) == SECBIT_KEEP_CAPS);
	CHILD_CHECK(prctl(PR_SET_SECUREBITS, 0, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 1);
	CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0) == -1 && errno == EINVAL);
	/* Without CAP_SETPCAP securebits cannot change. */
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	CHILD_CHECK(prctl(PR_SET_SECUREBITS, 0, 0, 0, 0) == -1 && errno == EPERM);
	/* After setresuid with keep-caps, the bit is still reported. */
	CHILD_CHECK(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) == SECBIT_KEEP_CAPS);
}

IN_CHILD(keep_caps_survives_fork_not_exec)
{
	/* The keep-caps flag survives fork... */
	CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
	pid_t c = fork();
	if (c == 0)
		_exit(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 1 ? 0 : 1);
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	c = fork();
	if (c == 0) {
		/* ...but execve clears it: the re-executed program checks. */
		execl(mt_argv0, mt_argv0, "--keepcaps-probe", (char *)NULL);
		_exit(2);
	}
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void tsc_and_timing(void)
{
	int v = -1;
	CHECK_SYS(prctl(PR_GET_TSC, &v, 0, 0, 0));
	CHECK_EQ(v, PR_TSC_ENABLE);
	CHECK_SYS(prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0));
	CHECK_ERR(prctl(PR_GET_TSC, (int *)1, 0, 0, 0), EFAULT);
	CHECK_EQ(prctl(PR_GET_TIMING, 0, 0, 0, 0), PR_TIMING_STATISTICAL);
	CHECK_SYS(prctl(PR_SET_TIMING, PR_TIMING_STATISTICAL, 0, 0, 0));
	CHECK_ERR(prctl(PR_SET_TIMING, PR_TIMING_TIMESTAMP, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_SET_TIMING, 5, 0, 0, 0), EINVAL);
}

static void perf_events_toggle(void)
{
	CHECK_EQ(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), 0);
}

static void set_mm_needs_privilege(void)
{
	/* Neither run has CAP_SYS_RESOURCE over the initial namespace. */
	CHECK_ERR(prctl(PR_SET_MM, PR_SET_MM_START_BRK, 0x10000, 0, 0), EPERM);
	CHECK_ERR(prctl(PR_SET_MM, PR_SET_MM_ARG_START, 0x10000, 0, 0), EPERM);
}

static void speculation_queries(void)
{
	/* The answers depend on the CPU and the host's mitigations: a
	 * query succeeds with a mask of PR_SPEC_* bits or says ENODEV,
	 * EINVAL for unused arguments. */
	int r = prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0, 0);
	CHECK(r >= 0 || errno == ENODEV);
	if (r >= 0)
		CHECK_EQ(r & ~0x1f, 0);
	r = prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH, 0, 0, 0);
	CHECK(r >= 0 || errno == ENODEV);
	CHECK_ERR(prctl(PR_GET_SPECULATION_CTRL, 99, 0, 0, 0), ENODEV);
	CHECK_ERR(prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 1, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_SET_SPECULATION_CTRL, 99, PR_SPEC_ENABLE, 0, 0), ENODEV);
	CHECK_ERR(prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_ENABLE, 1, 0), EINVAL);
}

static void unknown_options(void)
{
	CHECK_ERR(prctl(0x7fff0000, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(-1, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(0, 0, 0, 0, 0), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(mce_kill_policies),
	MT_CASE(mce_kill_errors),
	MT_CASE(securebits_keep_caps),
	MT_CASE(keep_caps_survives_fork_not_exec),
	MT_CASE(tsc_and_timing),
	MT_CASE(perf_events_toggle),
	MT_CASE(set_mm_needs_privilege),
	MT_CASE(speculation_queries),
	MT_CASE(unknown_options),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--keepcaps-probe") == 0)
		return prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 0 ? 0 : 1;
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
