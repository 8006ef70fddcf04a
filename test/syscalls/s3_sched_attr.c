//go:build ignore

/* s3_sched_attr: sched_setattr and sched_getattr in detail: struct sizes
 * (version 0 at 48 bytes, 0 meaning version 0, larger sizes with a zero
 * tail, E2BIG for a non-zero tail with the kernel's size written back),
 * SCHED_FLAG_KEEP_POLICY and SCHED_FLAG_KEEP_PARAMS, nice through the
 * attr, SCHED_FLAG_RESET_ON_FORK, the policies a user may pick, another
 * thread's attributes, and the errors (EINVAL, EFAULT, ESRCH, EPERM). */
#include "moattest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

#define FLAG_RESET_ON_FORK 0x01
#define FLAG_KEEP_POLICY 0x08
#define FLAG_KEEP_PARAMS 0x10

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

static long setattr(pid_t pid, struct sched_attr *a, unsigned flags)
{
	return syscall(SYS_sched_setattr, pid, a, flags);
}

static long getattr(pid_t pid, void *a, unsigned size, unsigned flags)
{
	return syscall(SYS_sched_getattr, pid, a, size, flags);
}

static void getattr_sizes(void)
{
	unsigned char buf[128];
	memset(buf, 0xaa, sizeof buf);
	/* Version 0 (48 bytes) is enough; the size field says what the
	 * kernel wrote. */
	CHECK_SYS(getattr(0, buf, 48, 0));
	struct sched_attr *a = (struct sched_attr *)buf;
	CHECK_EQ(a->size, 48);
	CHECK_EQ(a->sched_policy, SCHED_OTHER);
	CHECK_EQ(buf[48], 0xaa);
	/* A larger buffer: the kernel's full size, and the rest of the
	 * buffer zeroed. */
	memset(buf, 0xaa, sizeof buf);
	CHECK_SYS(getattr(0, buf, sizeof buf, 0));
	CHECK(a->size == 56 || a->size == 48);
	for (size_t i = a->size; i < sizeof buf; i++)
		CHECK_EQ(buf[i], 0);
	CHECK_ERR(getattr(0, buf, 47, 0), EINVAL);
	CHECK_ERR(getattr(0, buf, 4096 + 1, 0), EINVAL);
}

IN_CHILD(setattr_sizes)
{
	unsigned char buf[128];
	memset(buf, 0, sizeof buf);
	struct sched_attr *a = (struct sched_attr *)buf;
	a->sched_policy = SCHED_OTHER;
	a->sched_nice = 2;
	/* Size 0 means version 0. */
	a->size = 0;
	CHILD_CHECK(setattr(0, a, 0) == 0);
	errno = 0;
	CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 2);
	/* A bigger struct with zeros past what the kernel knows. */
	a->size = sizeof buf;
	a->sched_nice = 3;
	CHILD_CHECK(setattr(0, a, 0) == 0);
	CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 3);
	/* A non-zero byte there: E2BIG, and size rewritten to the
	 * kernel's. */
	buf[100] = 1;
	a->size = sizeof buf;
	CHILD_CHECK(setattr(0, a, 0) == -1 && errno == E2BIG);
	CHILD_CHECK(a->size == 56 || a->size == 48);
	/* Between 1 and 47: E2BIG too. */
	buf[100] = 0;
	a->size = 20;
	CHILD_CHECK(setattr(0, a, 0) == -1 && errno == E2BIG);
	/* Beyond a page: E2BIG. */
	a->size = 8192;
	CHILD_CHECK(setattr(0, a, 0) == -1 && errno == E2BIG);
}

IN_CHILD(keep_policy_and_params)
{
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.sched_policy = SCHED_BATCH;
	a.sched_nice = 4;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	/* KEEP_POLICY: the policy field is ignored, nice still applies. */
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = 6;
	a.sched_flags = FLAG_KEEP_POLICY;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	CHILD_CHECK(sched_getscheduler(0) == SCHED_BATCH);
	CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 6);
	/* KEEP_PARAMS keeps the nice and, since the policy is set with
	 * the parameters, the policy as well. */
	a.sched_flags = FLAG_KEEP_PARAMS;
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = 9;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	CHILD_CHECK(sched_getscheduler(0) == SCHED_BATCH);
	CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 6);
	/* KEEP_POLICY also keeps the reset-on-fork flag as it was. */
	a.sched_flags = FLAG_KEEP_POLICY | FLAG_RESET_ON_FORK;
	a.sched_nice = 6;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	CHILD_CHECK(sched_getscheduler(0) == SCHED_BATCH);
}

IN_CHILD(reset_on_fork_via_attr)
{
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.sched_policy = SCHED_OTHER;
	a.sched_flags = FLAG_RESET_ON_FORK;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	memset(&a, 0, sizeof a);
	CHILD_CHECK(getattr(0, &a, sizeof a, 0) == 0);
	CHILD_CHECK(a.sched_flags == FLAG_RESET_ON_FORK);
	CHILD_CHECK(sched_getscheduler(0) == (SCHED_OTHER | SCHED_RESET_ON_FORK));
}

IN_CHILD(nice_range_in_attr)
{
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.sched_policy = SCHED_OTHER;
	/* Out of [-20, 19]: clamped to the range, as setpriority does. */
	a.sched_nice = 50;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 19);
	memset(&a, 0, sizeof a);
	CHILD_CHECK(getattr(0, &a, sizeof a, 0) == 0);
	CHILD_CHECK(a.sched_nice == 19);
	/* Lowering it as a user: EPERM. */
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	a.sched_nice = 10;
	a.sched_flags = 0;
	CHILD_CHECK(setattr(0, &a, 0) == -1 && errno == EPERM);
}

IN_CHILD(user_policies)
{
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.sched_policy = SCHED_BATCH;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	a.sched_policy = SCHED_IDLE;
	CHILD_CHECK(setattr(0, &a, 0) == 0);
	/* Realtime and deadline need privilege (RLIMIT_RTPRIO is 0 for
	 * the realtime ones). */
	a.sched_policy = SCHED_FIFO;
	a.sched_priority = 1;
	CHILD_CHECK(setattr(0, &a, 0) == -1 && errno == EPERM);
	a.sched_policy = SCHED_RR;
	CHILD_CHECK(setattr(0, &a, 0) == -1 && errno == EPERM);
}

struct peer {
	atomic_int tid;
	atomic_int stop;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	atomic_store(&p->tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&p->stop))
		usleep(1000);
	return NULL;
}

IN_CHILD(another_thread)
{
	struct peer p = {0};
	pthread_t t;
	CHILD_CHECK(pthread_create(&t, NULL, peer_main, &p) == 0);
	while (!atomic_load(&p.tid))
		usleep(1000);
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.sched_policy = SCHED_BATCH;
	a.sched_nice = 8;
	CHILD_CHECK(setattr(p.tid, &a, 0) == 0);
	memset(&a, 0, sizeof a);
	CHILD_CHECK(getattr(p.tid, &a, sizeof a, 0) == 0);
	CHILD_CHECK(a.sched_policy == SCHED_BATCH && a.sched_nice == 8);
	memset(&a, 0, sizeof a);
	CHILD_CHECK(getattr(0, &a, sizeof a, 0) == 0);
	CHILD_CHECK(a.sched_policy == SCHED_OTHER && a.sched_nice == 0);
	atomic_store(&p.stop, 1);
	pthread_join(t, NULL);
	/* pthread_join returns when the tid word is cleared, which Linux does
	 * before the thread is released: wait (up to a second) until tgkill
	 * no longer finds it. */
	for (int i = 0; i < 1000; i++) {
		if (syscall(SYS_tgkill, getpid(), p.tid, 0) == -1 && errno == ESRCH)
			break;
		usleep(1000);
	}
	CHILD_CHECK(getattr(p.tid, &a, sizeof a, 0) == -1 && errno == ESRCH);
	a.size = sizeof a;
	CHILD_CHECK(setattr(p.tid, &a, 0) == -1 && errno == ESRCH);
}

static void argument_errors(void)
{
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	CHECK_ERR(setattr(-1, &a, 0), EINVAL);
	CHECK_ERR(setattr(0, NULL, 0), EINVAL);
	CHECK_ERR(setattr(0, (struct sched_attr *)1, 0), EFAULT);
	CHECK_ERR(getattr(-1, &a, sizeof a, 0), EINVAL);
	CHECK_ERR(getattr(0, (void *)1, sizeof a, 0), EFAULT);
	/* Unknown sched_flags bits: EINVAL. */
	a.sched_flags = 0x1000;
	CHECK_ERR(setattr(0, &a, 0), EINVAL);
	a.sched_flags = 0;
	/* A priority outside a normal policy's range. */
	a.sched_priority = 1;
	CHECK_ERR(setattr(0, &a, 0), EINVAL);
	/* Nothing changed. */
	CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
}

static const struct mt_case cases[] = {
	MT_CASE(getattr_sizes),
	MT_CASE(setattr_sizes),
	MT_CASE(keep_policy_and_params),
	MT_CASE(reset_on_fork_via_attr),
	MT_CASE(nice_range_in_attr),
	MT_CASE(user_policies),
	MT_CASE(another_thread),
	MT_CASE(argument_errors),
};

MT_MAIN(cases)
