//go:build ignore

/* s3_sched_threads: scheduling attributes are per thread: nice values set
 * by thread id, inherited by new threads and forked children from the
 * creating thread, SCHED_RESET_ON_FORK (reported by sched_getscheduler and
 * sched_getattr, cleared in the child, kept by unprivileged callers),
 * sched_setparam/sched_getparam and sched_setscheduler on another thread,
 * and ioprio per thread, per process group and per user, inherited on
 * fork, with the privilege checks (EPERM) and errors (EINVAL, ESRCH). */
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

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

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
#define IOPRIO_WHO_PGRP 2
#define IOPRIO_WHO_USER 3
#define IOPRIO_CLASS_RT 1
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_PRIO(c, d) (((c) << 13) | (d))

/* IN_CHILD runs the body in a forked child so nothing leaks. */
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

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct peer {
	atomic_int tid;
	atomic_int stop;
	int nice_seen;
	int ioprio_seen;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	errno = 0;
	p->nice_seen = getpriority(PRIO_PROCESS, 0);
	p->ioprio_seen = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	atomic_store(&p->tid, gettid_());
	while (!atomic_load(&p->stop))
		usleep(1000);
	return NULL;
}

static int start_peer(pthread_t *t, struct peer *p)
{
	memset(p, 0, sizeof *p);
	if (pthread_create(t, NULL, peer_main, p) != 0)
		return -1;
	while (!atomic_load(&p->tid))
		usleep(1000);
	return 0;
}

/* stop_peer ends the peer and returns once its tid names nothing.
 * pthread_join returns when the thread's tid word is cleared, which Linux
 * does before the thread is released: wait (up to a second) for tgkill's
 * ESRCH, as calls naming the tid see only then. */
static void stop_peer(pthread_t t, struct peer *p)
{
	atomic_store(&p->stop, 1);
	pthread_join(t, NULL);
	for (int i = 0; i < 1000; i++) {
		if (syscall(SYS_tgkill, getpid(), p->tid, 0) == -1 && errno == ESRCH)
			return;
		usleep(1000);
	}
}

IN_CHILD(nice_is_per_thread)
{
	pthread_t t;
	struct peer p;
	CHILD_CHECK(start_peer(&t, &p) == 0);
	CHILD_CHECK(setpriority(PRIO_PROCESS, p.tid, 7) == 0);
	errno = 0;
	CHILD_CHECK(getpriority(PRIO_PROCESS, p.tid) == 7);
	/* The main thread (whose tid is the pid) keeps its value. */
	CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 0 && errno == 0);
	CHILD_CHECK(getpriority(PRIO_PROCESS, getpid()) == 0 && errno == 0);
	stop_peer(t, &p);
	/* A gone thread: ESRCH. */
	errno = 0;
	CHILD_CHECK(getpriority(PRIO_PROCESS, p.tid) == -1 && errno == ESRCH);
}

IN_CHILD(threads_inherit_creator_nice)
{
	CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0);
	pthread_t t;
	struct peer p;
	CHILD_CHECK(start_peer(&t, &p) == 0);
	CHILD_CHECK(p.nice_seen == 5);
	stop_peer(t, &p);
	/* So do forked children. */
	pid_t c = fork();
	if (c == 0)
		_exit(getpriority(PRIO_PROCESS, 0));
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 5);
}

IN_CHILD(reset_on_fork_reported_and_cleared)
{
	struct sched_param sp = {0};
	CHILD_CHECK(sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp) == 0);
	CHILD_CHECK(sched_getscheduler(0) == (SCHED_BATCH | SCHED_RESET_ON_FORK));
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	CHILD_CHECK(syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) == 0);
	CHILD_CHECK(a.sched_policy == SCHED_BATCH);
	CHILD_CHECK(a.sched_flags == 1);
	CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 3) == 0);
	/* The child keeps a normal policy and a positive nice, but loses
	 * the flag. */
	pid_t c = fork();
	if (c == 0) {
		if (sched_getscheduler(0) != SCHED_BATCH)
			_exit(1);
		if (getpriority(PRIO_PROCESS, 0) != 3)
			_exit(2);
		_exit(0);
	}
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

IN_CHILD(reset_on_fork_sticks_for_users)
{
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	struct sched_param sp = {0};
	CHILD_CHECK(sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp) == 0);
	/* Without CAP_SYS_NICE the flag cannot be cleared again. */
	CHILD_CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == -1 && errno == EPERM);
	CHILD_CHECK(sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp) == 0);
	CHILD_CHECK(sched_getscheduler(0) == (SCHED_BATCH | SCHED_RESET_ON_FORK));
	/* Unknown policy bits beside the flag: EINVAL. */
	CHILD_CHECK(sched_setscheduler(0, 0x100 | SCHED_RESET_ON_FORK, &sp) == -1 && errno == EINVAL);
}

IN_CHILD(policy_of_another_thread)
{
	pthread_t t;
	struct peer p;
	CHILD_CHECK(start_peer(&t, &p) == 0);
	struct sched_param sp = {0};
	CHILD_CHECK(sched_setscheduler(p.tid, SCHED_IDLE, &sp) == 0);
	CHILD_CHECK(sched_getscheduler(p.tid) == SCHED_IDLE);
	CHILD_CHECK(sched_getscheduler(0) == SCHED_OTHER);
	sp.sched_priority = 5;
	CHILD_CHECK(sched_getparam(p.tid, &sp) == 0 && sp.sched_priority == 0);
	/* sched_setparam keeps the thread's policy and checks the priority
	 * against it. */
	sp.sched_priority = 0;
	CHILD_CHECK(sched_setparam(p.tid, &sp) == 0);
	CHILD_CHECK(sched_getscheduler(p.tid) == SCHED_IDLE);
	sp.sched_priority = 1;
	CHILD_CHECK(sched_setparam(p.tid, &sp) == -1 && errno == EINVAL);
	struct sched_attr a;
	memset(&a, 0, sizeof a);
	CHILD_CHECK(syscall(SYS_sched_getattr, p.tid, &a, sizeof a, 0) == 0);
	CHILD_CHECK(a.sched_policy == SCHED_IDLE);
	stop_peer(t, &p);
	CHILD_CHECK(sched_getscheduler(p.tid) == -1 && errno == ESRCH);
	CHILD_CHECK(sched_setparam(p.tid, &sp) == -1 && errno == ESRCH);
}

IN_CHILD(ioprio_per_thread_and_inherited)
{
	long mine = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	CHILD_CHECK(mine >= 0);
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(IOPRIO_CLASS_BE, 6)) == 0);
	pthread_t t;
	struct peer p;
	CHILD_CHECK(start_peer(&t, &p) == 0);
	/* A new thread starts with its creator's io priority. */
	CHILD_CHECK(p.ioprio_seen == IOPRIO_PRIO(IOPRIO_CLASS_BE, 6));
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, p.tid, IOPRIO_PRIO(IOPRIO_CLASS_BE, 1)) == 0);
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, p.tid) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 1));
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 6));
	stop_peer(t, &p);
	pid_t c = fork();
	if (c == 0)
		_exit(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 6) ? 0 : 1);
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

IN_CHILD(ioprio_group_and_user)
{
	CHILD_CHECK(setpgid(0, 0) == 0);
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PGRP, 0, IOPRIO_PRIO(IOPRIO_CLASS_BE, 2)) == 0);
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PGRP, 0) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 2));
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 2));
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PGRP, 99999) == -1 && errno == ESRCH);
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PGRP, 99999, IOPRIO_PRIO(IOPRIO_CLASS_BE, 2)) == -1 && errno == ESRCH);
	/* A user without processes: ESRCH. */
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_USER, 54321) == -1 && errno == ESRCH);
	CHILD_CHECK(setresuid(4321, 4321, 4321) == 0);
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_USER, 4321, IOPRIO_PRIO(IOPRIO_CLASS_BE, 7)) == 0);
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_USER, 4321) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 7));
	CHILD_CHECK(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) == IOPRIO_PRIO(IOPRIO_CLASS_BE, 7));
}

IN_CHILD(ioprio_privilege_and_errors)
{
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(5, 0)) == -1 && errno == EINVAL);
	/* The class NONE takes no level. */
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(0, 3)) == -1 && errno == EINVAL);
	CHILD_CHECK(syscall(SYS_ioprio_set, 9, 0, IOPRIO_PRIO(IOPRIO_CLASS_BE, 1)) == -1 && errno == EINVAL);
	CHILD_CHECK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 99999, IOPRIO_PRIO(IOPRIO_CLASS_BE, 1)) == -1 && errno == ESRCH);
	/* IDLE is open to everyone. */
	pid_t c = fork();
	if (c == 0) {
		if (setresuid(1000, 1000, 1000) != 0)
			_exit(9);
		/* The realtime class needs CAP_SYS_ADMIN or CAP_SYS_NICE. */
		if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(IOPRIO_CLASS_RT, 0)) != -1 || errno != EPERM)
			_exit(1);
		if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(IOPRIO_CLASS_IDLE, 0)) != 0)
			_exit(2);
		/* Another user's process: EPERM. */
		if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, getppid(), IOPRIO_PRIO(IOPRIO_CLASS_BE, 4)) != -1 || errno != EPERM)
			_exit(3);
		_exit(0);
	}
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

IN_CHILD(setpriority_other_user_eperm)
{
	pid_t c = fork();
	if (c == 0) {
		if (setresuid(1000, 1000, 1000) != 0)
			_exit(9);
		if (setpriority(PRIO_PROCESS, getppid(), 10) != -1 || errno != EPERM)
			_exit(1);
		/* Reading another user's nice is allowed. */
		errno = 0;
		if (getpriority(PRIO_PROCESS, getppid()) != 0 || errno != 0)
			_exit(2);
		struct sched_param sp = {0};
		if (sched_setscheduler(getppid(), SCHED_BATCH, &sp) != -1 || errno != EPERM)
			_exit(3);
		_exit(0);
	}
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static const struct mt_case cases[] = {
	MT_CASE(nice_is_per_thread),
	MT_CASE(threads_inherit_creator_nice),
	MT_CASE(reset_on_fork_reported_and_cleared),
	MT_CASE(reset_on_fork_sticks_for_users),
	MT_CASE(policy_of_another_thread),
	MT_CASE(ioprio_per_thread_and_inherited),
	MT_CASE(ioprio_group_and_user),
	MT_CASE(ioprio_privilege_and_errors),
	MT_CASE(setpriority_other_user_eperm),
};

MT_MAIN(cases)
