//go:build ignore

/* s3_groups: supplementary group lists: getgroups returns them sorted with
 * duplicates kept, sizes up to NGROUPS_MAX (65536) and one more (EINVAL),
 * the raw setgroups changing only the calling thread (glibc broadcasts;
 * the kernel does not), inheritance over fork and exec, /proc/self/status
 * "Groups:", group membership deciding access, and the errors (EINVAL,
 * EFAULT, EPERM). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
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
		pid_t pid = CHECK_SYS(fork());   \
		if (pid == 0) {                  \
			name##_body();           \
			_exit(0);                \
		}                                \
		int st = mt_wait(pid);           \
		CHECK_EXITED(st, 0);             \
	}                                        \
	static void name##_body(void)

static long raw_set(size_t n, const gid_t *g)
{
	return syscall(SYS_setgroups, n, g);
}

static long raw_get(int n, gid_t *g)
{
	return syscall(SYS_getgroups, n, g);
}

IN_CHILD(sorted_with_duplicates)
{
	gid_t in[5] = {30, 10, 20, 10, 5};
	CHILD_CHECK(raw_set(5, in) == 0);
	gid_t out[8];
	CHILD_CHECK(raw_get(8, out) == 5);
	/* The kernel keeps the list sorted (for its binary search); the
	 * duplicate stays. */
	CHILD_CHECK(out[0] == 5 && out[1] == 10 && out[2] == 10 && out[3] == 20 && out[4] == 30);
}

IN_CHILD(size_limits)
{
	static gid_t big[65537];
	for (int i = 0; i < 65537; i++)
		big[i] = (gid_t)(100000 + i);
	CHILD_CHECK(raw_set(65536, big) == 0);
	CHILD_CHECK(raw_get(0, NULL) == 65536);
	static gid_t back[65536];
	CHILD_CHECK(raw_get(65536, back) == 65536);
	CHILD_CHECK(back[0] == 100000 && back[65535] == 100000 + 65535);
	CHILD_CHECK(raw_set(65537, big) == -1 && errno == EINVAL);
	/* A failed call leaves the list. */
	CHILD_CHECK(raw_get(0, NULL) == 65536);
	/* Too small a buffer: EINVAL, nothing written. */
	gid_t few[2] = {7, 7};
	CHILD_CHECK(raw_get(2, few) == -1 && errno == EINVAL);
	CHILD_CHECK(few[0] == 7);
	CHILD_CHECK(raw_set(0, NULL) == 0);
	CHILD_CHECK(raw_get(0, NULL) == 0);
	/* With an empty list any size works, even with a NULL buffer. */
	CHILD_CHECK(raw_get(10, NULL) == 0);
}

struct peer {
	int ready;
	int go;
	int count;
};

static void *thread_view(void *arg)
{
	struct peer *p = arg;
	__atomic_store_n(&p->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&p->go, __ATOMIC_SEQ_CST))
		usleep(1000);
	p->count = (int)raw_get(0, NULL);
	return NULL;
}

IN_CHILD(raw_setgroups_is_per_thread)
{
	CHILD_CHECK(raw_set(0, NULL) == 0);
	struct peer p = {0};
	pthread_t t;
	CHILD_CHECK(pthread_create(&t, NULL, thread_view, &p) == 0);
	while (!__atomic_load_n(&p.ready, __ATOMIC_SEQ_CST))
		usleep(1000);
	gid_t g[3] = {1, 2, 3};
	CHILD_CHECK(raw_set(3, g) == 0);
	__atomic_store_n(&p.go, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	/* The other thread still has the empty list. */
	CHILD_CHECK(p.count == 0);
	CHILD_CHECK(raw_get(0, NULL) == 3);
}

IN_CHILD(glibc_setgroups_covers_all_threads)
{
	CHILD_CHECK(setgroups(0, NULL) == 0);
	struct peer p = {0};
	pthread_t t;
	CHILD_CHECK(pthread_create(&t, NULL, thread_view, &p) == 0);
	while (!__atomic_load_n(&p.ready, __ATOMIC_SEQ_CST))
		usleep(1000);
	gid_t g[2] = {8, 9};
	/* glibc's setgroups signals every thread to make the same call. */
	CHILD_CHECK(setgroups(2, g) == 0);
	__atomic_store_n(&p.go, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	CHILD_CHECK(p.count == 2);
}

IN_CHILD(inherited_by_fork_and_exec)
{
	gid_t g[2] = {77, 66};
	CHILD_CHECK(raw_set(2, g) == 0);
	pid_t c = fork();
	if (c == 0) {
		gid_t o[4];
		_exit(raw_get(4, o) == 2 && o[0] == 66 && o[1] == 77 ? 0 : 1);
	}
	int st;
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	c = fork();
	if (c == 0) {
		/* /proc/self/status of an exec'd program lists them. */
		execl("/bin/grep", "grep", "-q", "^Groups:\t66 77 *$", "/proc/self/status", (char *)NULL);
		_exit(2);
	}
	CHILD_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

IN_CHILD(proc_status_line)
{
	gid_t g[3] = {300, 100, 200};
	CHILD_CHECK(raw_set(3, g) == 0);
	FILE *f = fopen("/proc/self/status", "r");
	CHILD_CHECK(f != NULL);
	char line[256];
	int seen = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "Groups:", 7) == 0) {
			CHILD_CHECK(strcmp(line, "Groups:\t100 200 300 \n") == 0);
			seen = 1;
		}
	}
	CHILD_CHECK(seen);
	fclose(f);
	CHILD_CHECK(raw_set(0, NULL) == 0);
	f = fopen("/proc/self/status", "r");
	CHILD_CHECK(f != NULL);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "Groups:", 7) == 0)
			/* The kernel always ends the list with a space. */
			CHILD_CHECK(strcmp(line, "Groups:\t \n") == 0);
	fclose(f);
}

static void membership_grants_access(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	int fd = CHECK_SYS(open("g", O_CREAT | O_WRONLY, 0600));
	CHECK_SYS(fchmod(fd, 0070));
	CHECK_SYS(fchown(fd, 0, 4444));
	CHECK_SYS(close(fd));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		gid_t g[2] = {4444, 5555};
		CHILD_CHECK(setgroups(2, g) == 0);
		CHILD_CHECK(setresgid(1000, 1000, 1000) == 0);
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		int f = open("g", O_RDWR);
		CHILD_CHECK(f >= 0);
		/* The user cannot add groups to itself any more. */
		gid_t more[3] = {4444, 5555, 6666};
		CHILD_ERR(raw_set(3, more), EPERM);
		/* Nor drop them (setgroups needs CAP_SETGID either way). */
		CHILD_ERR(raw_set(0, NULL), EPERM);
		/* A file whose group it is in may be given to that group. */
		CHILD_CHECK(close(open("mine", O_CREAT | O_WRONLY, 0644)) == 0);
		CHILD_CHECK(chown("mine", -1, 5555) == 0);
		CHILD_ERR(chown("mine", -1, 6666), EPERM);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

IN_CHILD(argument_errors)
{
	gid_t g[2] = {1, 2};
	CHILD_CHECK(raw_set(2, (gid_t *)1) == -1 && errno == EFAULT);
	CHILD_CHECK(raw_set(-1, g) == -1 && errno == EINVAL);
	CHILD_CHECK(raw_set(2, g) == 0);
	CHILD_CHECK(raw_get(-1, g) == -1 && errno == EINVAL);
	CHILD_CHECK(raw_get(2, (gid_t *)1) == -1 && errno == EFAULT);
	/* An invalid gid (-1) cannot be a member. */
	gid_t bad[1] = {(gid_t)-1};
	CHILD_CHECK(raw_set(1, bad) == -1 && errno == EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(sorted_with_duplicates),
	MT_CASE(size_limits),
	MT_CASE(raw_setgroups_is_per_thread),
	MT_CASE(glibc_setgroups_covers_all_threads),
	MT_CASE(inherited_by_fork_and_exec),
	MT_CASE(proc_status_line),
	MT_CASE(membership_grants_access),
	MT_CASE(argument_errors),
};

MT_MAIN(cases)
