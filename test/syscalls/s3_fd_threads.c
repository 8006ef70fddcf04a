//go:build ignore

/* s3_fd_threads: one descriptor table shared by threads (and by CLONE_FILES
 * children): descriptors opened, closed, flagged close-on-exec or closed by
 * close_range in one thread are seen by the others, a thread's exit closes
 * nothing, a read blocked on a descriptor another thread closes or dup2s
 * over keeps its open file and completes, concurrent dups never hand out
 * the same number, and a fork'ed child's table is a copy. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *open_null(void *arg)
{
	int *fd = arg;
	*fd = open("/dev/null", O_RDONLY);
	return NULL;
}

static void thread_opens_main_sees(void)
{
	int fd = -1;
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, open_null, &fd));
	CHECK_RET0(pthread_join(t, NULL));
	/* The thread is gone; its descriptor stays. */
	CHECK_GE(fd, 3);
	CHECK_SYS(fcntl(fd, F_GETFD));
	CHECK_SYS(close(fd));
}

struct closer {
	int fd;
	int flag_seen;
	int after_close;
	int stage;
};

static void *watch_flags(void *arg)
{
	struct closer *c = arg;
	while (__atomic_load_n(&c->stage, __ATOMIC_SEQ_CST) != 1)
		sched_yield();
	c->flag_seen = fcntl(c->fd, F_GETFD);
	__atomic_store_n(&c->stage, 2, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&c->stage, __ATOMIC_SEQ_CST) != 3)
		sched_yield();
	errno = 0;
	c->after_close = fcntl(c->fd, F_GETFD) == -1 ? errno : 0;
	return NULL;
}

static void flags_and_close_shared(void)
{
	struct closer c = {.fd = CHECK_SYS(open("/dev/null", O_RDONLY))};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, watch_flags, &c));
	CHECK_SYS(fcntl(c.fd, F_SETFD, FD_CLOEXEC));
	__atomic_store_n(&c.stage, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&c.stage, __ATOMIC_SEQ_CST) != 2)
		sched_yield();
	CHECK_SYS(close(c.fd));
	__atomic_store_n(&c.stage, 3, __ATOMIC_SEQ_CST);
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(c.flag_seen, FD_CLOEXEC);
	CHECK_EQ(c.after_close, EBADF);
}

struct reader {
	int fd;
	pid_t tid;
	ssize_t n;
	char buf[16];
};

static void *blocking_read(void *arg)
{
	struct reader *r = arg;
	r->tid = (pid_t)syscall(SYS_gettid);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r->n = read(r->fd, r->buf, sizeof r->buf);
	return NULL;
}

static void blocked_read_survives_close(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct reader r = {.fd = p[0]};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, blocking_read, &r));
	while (!__atomic_load_n(&r.tid, __ATOMIC_SEQ_CST))
		sched_yield();
	CHECK_SYS(mt_wait_blocked(r.tid, 5000));
	/* Closing the number does not end the read: it holds the file. */
	CHECK_SYS(close(p[0]));
	CHECK_EQ(write(p[1], "still", 5), 5);
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(r.n, 5);
	CHECK_MEMEQ(r.buf, "still", 5);
}

static void blocked_read_survives_dup2(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	struct reader r = {.fd = a[0]};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, blocking_read, &r));
	while (!__atomic_load_n(&r.tid, __ATOMIC_SEQ_CST))
		sched_yield();
	CHECK_SYS(mt_wait_blocked(r.tid, 5000));
	/* The number now names pipe b, but the read waits on pipe a. */
	CHECK_EQ(dup2(b[0], a[0]), a[0]);
	CHECK_EQ(write(b[1], "b", 1), 1);
	CHECK_EQ(write(a[1], "aa", 2), 2);
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(r.n, 2);
	CHECK_MEMEQ(r.buf, "aa", 2);
	char c;
	CHECK_EQ(read(a[0], &c, 1), 1);
	CHECK_EQ(c, 'b');
}

static void *range_closer(void *arg)
{
	int *base = arg;
	syscall(SYS_close_range, *base, *base + 9, 0);
	return NULL;
}

static void close_range_from_thread(void)
{
	int base = 50;
	for (int i = 0; i < 10; i++)
		CHECK_EQ(dup2(1, base + i), base + i);
	CHECK_EQ(dup2(1, base + 10), base + 10);
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, range_closer, &base));
	CHECK_RET0(pthread_join(t, NULL));
	for (int i = 0; i < 10; i++)
		CHECK_ERR(fcntl(base + i, F_GETFD), EBADF);
	CHECK_SYS(fcntl(base + 10, F_GETFD));
}

#define NDUP 200

struct duper {
	int fds[NDUP];
	int ok;
};

static void *dup_many(void *arg)
{
	struct duper *d = arg;
	d->ok = 1;
	for (int i = 0; i < NDUP; i++) {
		d->fds[i] = dup(0);
		if (d->fds[i] < 0)
			d->ok = 0;
	}
	return NULL;
}

static void concurrent_dups_distinct(void)
{
	struct duper a, b;
	pthread_t ta, tb;
	CHECK_RET0(pthread_create(&ta, NULL, dup_many, &a));
	CHECK_RET0(pthread_create(&tb, NULL, dup_many, &b));
	CHECK_RET0(pthread_join(ta, NULL));
	CHECK_RET0(pthread_join(tb, NULL));
	CHECK(a.ok && b.ok);
	static char seen[4096];
	memset(seen, 0, sizeof seen);
	for (int i = 0; i < NDUP; i++) {
		CHECK_LT(a.fds[i], 4096);
		CHECK_LT(b.fds[i], 4096);
		CHECK_EQ(seen[a.fds[i]], 0);
		seen[a.fds[i]] = 1;
		CHECK_EQ(seen[b.fds[i]], 0);
		seen[b.fds[i]] = 1;
	}
	/* Lowest numbers first: 3 .. 3+2*NDUP-1 exactly. */
	for (int i = 3; i < 3 + 2 * NDUP; i++)
		CHECK_EQ(seen[i], 1);
}

static void clone_files_child_shares(void)
{
	/* A child created with CLONE_FILES (but its own memory) shares the
	 * table: what it opens and closes, the parent sees. */
	int p[2], q[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(pipe(q));
	long pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, NULL, NULL, NULL, 0);
	CHECK_GE(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_RDONLY);
		close(p[0]);
		write(q[1], &fd, sizeof fd);
		_exit(fd >= 0 ? 0 : 1);
	}
	int st = mt_wait((pid_t)pid);
	CHECK_EXITED(st, 0);
	int fd = -1;
	CHECK_EQ(read(q[0], &fd, sizeof fd), sizeof fd);
	CHECK_GE(fd, 3);
	CHECK_SYS(fcntl(fd, F_GETFD));
	CHECK_ERR(fcntl(p[0], F_GETFD), EBADF);
}

static void fork_table_is_a_copy(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDONLY));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		close(fd);
		int n = open("/dev/null", O_RDONLY);
		_exit(n == fd ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* The parent's descriptor is untouched. */
	CHECK_SYS(fcntl(fd, F_GETFD));
}

static const struct mt_case cases[] = {
	MT_CASE(thread_opens_main_sees),
	MT_CASE(flags_and_close_shared),
	MT_CASE(blocked_read_survives_close),
	MT_CASE(blocked_read_survives_dup2),
	MT_CASE(close_range_from_thread),
	MT_CASE(concurrent_dups_distinct),
	MT_CASE(clone_files_child_shares),
	MT_CASE(fork_table_is_a_copy),
};

MT_MAIN(cases)
