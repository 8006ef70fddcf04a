//go:build ignore

/* s3_cred_threads: credentials belong to threads: the raw setresuid,
 * setresgid and capset change only the calling thread (glibc's wrappers
 * broadcast to every thread), a thread's ids decide the owner of files it
 * creates and its permission to signal and open, new threads start with
 * their creator's credentials, and /proc/self/task/TID/status shows each
 * thread's ids. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define IN_CHILD(name)                           \
	static void name##_body(void);           \
	static void name(void)                   \
	{                                        \
		ENTER();                         \
		CHECK_SYS(chmod(".", 0777));     \
		pid_t pid = CHECK_SYS(fork());   \
		if (pid == 0) {                  \
			name##_body();           \
			_exit(0);                \
		}                                \
		int st = mt_wait(pid);           \
		CHECK_EXITED(st, 0);             \
	}                                        \
	static void name##_body(void)

static long raw_getuid(void)
{
	return syscall(SYS_getuid);
}

/* run_in_thread runs fn(arg) in a new thread and waits for it. */
static int run_in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg) != 0)
		return -1;
	return pthread_join(t, NULL);
}

struct probe {
	long uid, euid, gid;
	int created_uid;
	int kill_err;
	int open_err;
	int chown_err;
	int child_uid;
	char status_uid[64];
};

static void *become_user(void *arg)
{
	struct probe *p = arg;
	syscall(SYS_setresgid, 2000, 2000, 2000);
	syscall(SYS_setresuid, 1000, 1000, 1000);
	p->uid = syscall(SYS_getuid);
	p->euid = syscall(SYS_geteuid);
	p->gid = syscall(SYS_getgid);
	int fd = open("by-thread", O_CREAT | O_WRONLY, 0644);
	struct stat st;
	p->created_uid = fd >= 0 && fstat(fd, &st) == 0 ? (int)st.st_uid : -1;
	errno = 0;
	p->kill_err = kill(1, 0) == -1 ? errno : 0;
	errno = 0;
	int r = open("root-only", O_RDONLY);
	p->open_err = r == -1 ? errno : 0;
	return NULL;
}

IN_CHILD(raw_setresuid_is_per_thread)
{
	struct probe p = {0};
	CHILD_CHECK(close(open("root-only", O_CREAT | O_WRONLY, 0600)) == 0);
	CHILD_CHECK(run_in_thread(become_user, &p) == 0);
	/* The thread had the new ids... */
	CHILD_CHECK(p.uid == 1000 && p.euid == 1000 && p.gid == 2000);
	CHILD_CHECK(p.created_uid == 1000);
	CHILD_CHECK(p.open_err == EACCES);
	/* ...while this thread is still root. */
	CHILD_CHECK(raw_getuid() == 0);
	CHILD_CHECK(syscall(SYS_getgid) == 0);
	int fd = open("root-only", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	struct stat st;
	CHILD_CHECK(close(open("by-main", O_CREAT | O_WRONLY, 0644)) == 0);
	CHILD_CHECK(stat("by-main", &st) == 0 && st.st_uid == 0);
}

static void *report_ids(void *arg)
{
	struct probe *p = arg;
	p->uid = syscall(SYS_getuid);
	p->gid = syscall(SYS_getgid);
	return NULL;
}

static void *become_user_then_spawn(void *arg)
{
	struct probe *p = arg;
	syscall(SYS_setresuid, 1234, 1234, 1234);
	struct probe inner = {0};
	run_in_thread(report_ids, &inner);
	p->child_uid = (int)inner.uid;
	return NULL;
}

IN_CHILD(new_thread_inherits_creator)
{
	struct probe p = {0};
	CHILD_CHECK(run_in_thread(become_user_then_spawn, &p) == 0);
	CHILD_CHECK(p.child_uid == 1234);
	/* A thread made by the (still root) main thread is root. */
	struct probe q = {0};
	CHILD_CHECK(run_in_thread(report_ids, &q) == 0);
	CHILD_CHECK(q.uid == 0);
}

struct waiter {
	int stage;
	long uid;
};

static void *wait_and_report(void *arg)
{
	struct waiter *w = arg;
	__atomic_store_n(&w->stage, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&w->stage, __ATOMIC_SEQ_CST) != 2)
		sched_yield();
	w->uid = syscall(SYS_getuid);
	return NULL;
}

IN_CHILD(glibc_setresuid_covers_all_threads)
{
	struct waiter w = {0};
	pthread_t t;
	CHILD_CHECK(pthread_create(&t, NULL, wait_and_report, &w) == 0);
	while (__atomic_load_n(&w.stage, __ATOMIC_SEQ_CST) != 1)
		sched_yield();
	/* glibc signals every thread to make the same call. */
	CHILD_CHECK(setresuid(1500, 1500, 1500) == 0);
	__atomic_store_n(&w.stage, 2, __ATOMIC_SEQ_CST);
	CHILD_CHECK(pthread_join(t, NULL) == 0);
	CHILD_CHECK(w.uid == 1500);
}

static void *drop_chown(void *arg)
{
	struct probe *p = arg;
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	syscall(SYS_capget, &h, d);
	d[0].effective &= ~(1u << CAP_CHOWN);
	syscall(SYS_capset, &h, d);
	errno = 0;
	p->chown_err = chown("f", 4321, -1) == -1 ? errno : 0;
	return NULL;
}

IN_CHILD(capabilities_per_thread)
{
	CHILD_CHECK(close(open("f", O_CREAT | O_WRONLY, 0644)) == 0);
	struct probe p = {0};
	CHILD_CHECK(run_in_thread(drop_chown, &p) == 0);
	/* Without CAP_CHOWN the thread could not give the file away... */
	CHILD_CHECK(p.chown_err == EPERM);
	/* ...this thread still can. */
	CHILD_CHECK(chown("f", 4321, -1) == 0);
}

static void *signal_as_user(void *arg)
{
	struct probe *p = arg;
	syscall(SYS_setresuid, 1000, 1000, 1000);
	errno = 0;
	p->kill_err = kill(getppid(), 0) == -1 ? errno : 0;
	return NULL;
}

IN_CHILD(signal_permission_per_thread)
{
	struct probe p = {0};
	CHILD_CHECK(run_in_thread(signal_as_user, &p) == 0);
	/* The parent runs as root: a uid 1000 thread may not signal it. */
	CHILD_CHECK(p.kill_err == EPERM);
	CHILD_CHECK(kill(getppid(), 0) == 0);
}

struct statusprobe {
	int stage;
	pid_t tid;
};

static void *hold_user(void *arg)
{
	struct statusprobe *s = arg;
	syscall(SYS_setresuid, 1111, 2222, 3333);
	s->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&s->stage, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&s->stage, __ATOMIC_SEQ_CST) != 2)
		sched_yield();
	return NULL;
}

static int uid_line(const char *path, unsigned *r, unsigned *e, unsigned *sv)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	int ok = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Uid: %u %u %u", r, e, sv) == 3)
			ok = 0;
	fclose(f);
	return ok;
}

IN_CHILD(task_status_per_thread)
{
	struct statusprobe s = {0};
	pthread_t t;
	CHILD_CHECK(pthread_create(&t, NULL, hold_user, &s) == 0);
	while (__atomic_load_n(&s.stage, __ATOMIC_SEQ_CST) != 1)
		sched_yield();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)s.tid);
	unsigned r = 9, e = 9, sv = 9;
	int got = uid_line(path, &r, &e, &sv);
	unsigned mr = 9, me = 9, ms = 9;
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)getpid());
	int got2 = uid_line(path, &mr, &me, &ms);
	__atomic_store_n(&s.stage, 2, __ATOMIC_SEQ_CST);
	CHILD_CHECK(pthread_join(t, NULL) == 0);
	CHILD_CHECK(got == 0 && r == 1111 && e == 2222 && sv == 3333);
	CHILD_CHECK(got2 == 0 && mr == 0 && me == 0 && ms == 0);
}

IN_CHILD(raw_setresgid_is_per_thread)
{
	struct probe p = {0};
	CHILD_CHECK(run_in_thread(become_user, &p) == 0);
	CHILD_CHECK(p.gid == 2000);
	CHILD_CHECK(syscall(SYS_getgid) == 0);
	CHILD_CHECK(syscall(SYS_getegid) == 0);
	/* The file the thread made belongs to its gid. */
	struct stat st;
	CHILD_CHECK(stat("by-thread", &st) == 0 && st.st_gid == 2000);
}

static void *access_as_real_user(void *arg)
{
	struct probe *p = arg;
	/* Real uid 1000, effective still 0. */
	syscall(SYS_setresuid, 1000, 0, 0);
	errno = 0;
	p->open_err = access("root-only", R_OK) == -1 ? errno : 0;
	int fd = open("root-only", O_RDONLY);
	p->kill_err = fd >= 0 ? 0 : errno;
	return NULL;
}

IN_CHILD(access_uses_thread_real_ids)
{
	CHILD_CHECK(close(open("root-only", O_CREAT | O_WRONLY, 0600)) == 0);
	struct probe p = {0};
	CHILD_CHECK(run_in_thread(access_as_real_user, &p) == 0);
	/* access() asked about the thread's real uid; open used its
	 * effective uid 0. */
	CHILD_CHECK(p.open_err == EACCES);
	CHILD_CHECK(p.kill_err == 0);
	CHILD_CHECK(access("root-only", R_OK) == 0);
}

static const struct mt_case cases[] = {
	MT_CASE(raw_setresuid_is_per_thread),
	MT_CASE(new_thread_inherits_creator),
	MT_CASE(glibc_setresuid_covers_all_threads),
	MT_CASE(capabilities_per_thread),
	MT_CASE(signal_permission_per_thread),
	MT_CASE(task_status_per_thread),
	MT_CASE(raw_setresgid_is_per_thread),
	MT_CASE(access_uses_thread_real_ids),
};

MT_MAIN(cases)
