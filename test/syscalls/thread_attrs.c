//go:build ignore

/* thread_attrs: attributes Linux keeps per thread, not per process: the
 * nice value (setpriority on a tid), the name (PR_SET_NAME and
 * /proc/self/task/TID/comm), the CPU affinity, the credentials changed by
 * a raw setresuid syscall (glibc's wrapper broadcasts; the syscall does
 * not), and the capability sets changed by capset. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int go, done_flag;
static atomic_int worker_tid;

/* worker publishes its tid, waits for go, runs fn, sets done, then waits
 * until released. */
struct job {
	void (*fn)(void);
	int result;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	atomic_store(&worker_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&go))
		sched_yield();
	if (j->fn)
		j->fn();
	atomic_store(&done_flag, 1);
	while (atomic_load(&go) != 2)
		sched_yield();
	return NULL;
}

static pthread_t start(struct job *j)
{
	atomic_store(&go, 0);
	atomic_store(&done_flag, 0);
	atomic_store(&worker_tid, 0);
	pthread_t th;
	pthread_create(&th, NULL, worker, j);
	while (atomic_load(&worker_tid) == 0)
		sched_yield();
	return th;
}

static void run_and_wait(void)
{
	atomic_store(&go, 1);
	while (!atomic_load(&done_flag))
		sched_yield();
}

static void finish(pthread_t th)
{
	atomic_store(&go, 2);
	pthread_join(th, NULL);
}

static void nice_is_per_thread(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct job j = {0};
		pthread_t th = start(&j);
		int tid = atomic_load(&worker_tid);
		CHILD_CHECK(setpriority(PRIO_PROCESS, tid, 7) == 0);
		errno = 0;
		CHILD_CHECK(getpriority(PRIO_PROCESS, tid) == 7);
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 0 && errno == 0);
		run_and_wait();
		finish(th);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void set_name_in_thread(void)
{
	prctl(PR_SET_NAME, "workername", 0, 0, 0);
}

static void name_is_per_thread(void)
{
	char before[16], after[16];
	CHECK_SYS(prctl(PR_GET_NAME, before, 0, 0, 0));
	struct job j = {set_name_in_thread, 0};
	pthread_t th = start(&j);
	run_and_wait();
	CHECK_SYS(prctl(PR_GET_NAME, after, 0, 0, 0));
	CHECK_STREQ(after, before);
	char path[64], buf[32];
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", atomic_load(&worker_tid));
	int fd = CHECK_SYS(open(path, O_RDONLY));
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf) - 1));
	close(fd);
	buf[n] = 0;
	finish(th);
	CHECK_STREQ(buf, "workername\n");
}

static void affinity_is_per_thread(void)
{
	cpu_set_t all;
	CHECK_SYS(sched_getaffinity(0, sizeof(all), &all));
	if (CPU_COUNT(&all) < 2)
		SKIP("one CPU only");
	int first = 0;
	while (!CPU_ISSET(first, &all))
		first++;
	struct job j = {0};
	pthread_t th = start(&j);
	int tid = atomic_load(&worker_tid);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	CHECK_SYS(sched_setaffinity(tid, sizeof(one), &one));
	cpu_set_t got;
	CHECK_SYS(sched_getaffinity(tid, sizeof(got), &got));
	CHECK_EQ(CPU_COUNT(&got), 1);
	CHECK_SYS(sched_getaffinity(0, sizeof(got), &got));
	CHECK_EQ(CPU_COUNT(&got), CPU_COUNT(&all));
	run_and_wait();
	finish(th);
}

static atomic_int seen_uid;

static void raw_setresuid(void)
{
	syscall(SYS_setresuid, 1000, 1000, 1000);
	atomic_store(&seen_uid, (int)syscall(SYS_getuid));
}

static void raw_setresuid_is_per_thread(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct job j = {raw_setresuid, 0};
		pthread_t th = start(&j);
		run_and_wait();
		CHILD_CHECK(atomic_load(&seen_uid) == 1000);
		/* This thread is still root. */
		CHILD_CHECK(syscall(SYS_getuid) == 0);
		finish(th);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void drop_caps_in_thread(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	syscall(SYS_capget, &h, d);
	d[0].effective = 0;
	d[1].effective = 0;
	syscall(SYS_capset, &h, d);
}

static void capset_is_per_thread(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct job j = {drop_caps_in_thread, 0};
		pthread_t th = start(&j);
		run_and_wait();
		struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(syscall(SYS_capget, &h, d) == 0 && d[0].effective != 0);
		h.pid = atomic_load(&worker_tid);
		CHILD_CHECK(syscall(SYS_capget, &h, d) == 0 && d[0].effective == 0);
		finish(th);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(nice_is_per_thread),
	MT_CASE(name_is_per_thread),
	MT_CASE(affinity_is_per_thread),
	MT_CASE(raw_setresuid_is_per_thread),
	MT_CASE(capset_is_per_thread),
};

MT_MAIN(cases)
