//go:build ignore

/* fx_posix_locks: POSIX record locks (F_SETLK, F_SETLKW, F_GETLK) between
 * processes and open file description locks (F_OFD_*) on a /dev/shm file:
 * conflict reports, ranges (split, SEEK_CUR, negative lengths, to EOF),
 * release on close of any descriptor, no inheritance over fork, a blocked
 * F_SETLKW woken by unlock, and the documented errors. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* scratch_file creates (truncating) a 4 KiB file for the case and returns
 * an O_RDWR descriptor; path receives its name. */
static int scratch_file(const char *name, char *path, size_t n)
{
	snprintf(path, n, "/dev/shm/tfiles-%s-%d", name, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		mt_fail(__FILE__, __LINE__, "open %s: %s", path, mt_errname(errno));
		return -1;
	}
	if (ftruncate(fd, 4096) < 0) {
		mt_fail(__FILE__, __LINE__, "ftruncate: %s", mt_errname(errno));
		return -1;
	}
	return fd;
}

#define SCRATCH(fd, path)                                              \
	char path[256];                                                \
	int fd = scratch_file(__func__, path, sizeof(path));           \
	MT_BAIL();                                                     \
	unlink_later = path

static const char *unlink_later;

static int lk(int fd, int cmd, short type, short whence, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = whence, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &fl);
}

/* getlk returns the F_GETLK (or F_OFD_GETLK) answer for a probe. */
static int getlk(int fd, int cmd, short type, off_t start, off_t len, struct flock *out)
{
	memset(out, 0, sizeof(*out));
	out->l_type = type;
	out->l_whence = SEEK_SET;
	out->l_start = start;
	out->l_len = len;
	return fcntl(fd, cmd, out);
}

static void cleanup(void)
{
	if (unlink_later)
		unlink(unlink_later);
	unlink_later = NULL;
}

/* in_child runs body in a forked child, which exits 0 on success. */
#define IN_CHILD(body)                                                       \
	do {                                                                 \
		pid_t __p = fork();                                          \
		CHECK(__p >= 0);                                             \
		if (__p == 0) {                                              \
			body;                                                \
			_exit(0);                                            \
		}                                                            \
		int __st = mt_wait(__p);                                     \
		CHECK_EXITED(__st, 0);                                       \
	} while (0)

static void getlk_reports_conflict(void)
{
	SCRATCH(fd, path);
	pid_t me = getpid();
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 10));
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g;
		CHILD_CHECK(getlk(f, F_GETLK, F_RDLCK, 5, 5, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_pid == me);
		CHILD_CHECK(g.l_whence == SEEK_SET && g.l_start == 0 && g.l_len == 10);
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 10, 5, &g) == 0);
		CHILD_CHECK(g.l_type == F_UNLCK);
		errno = 0;
		CHILD_CHECK(lk(f, F_SETLK, F_RDLCK, SEEK_SET, 9, 1) == -1 &&
			    (errno == EAGAIN || errno == EACCES));
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, SEEK_SET, 10, 1) == 0);
	});
	cleanup();
}

static void own_locks_never_conflict(void)
{
	SCRATCH(fd, path);
	int fd2 = CHECK_SYS(open(path, O_RDWR));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 100));
	/* Same process, other description: POSIX locks belong to the process. */
	CHECK_SYS(lk(fd2, F_SETLK, F_WRLCK, SEEK_SET, 50, 10));
	struct flock g;
	CHECK_SYS(getlk(fd2, F_GETLK, F_WRLCK, 0, 0, &g));
	CHECK_EQ(g.l_type, F_UNLCK);
	/* Downgrading and upgrading in place is allowed. */
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 0, 100));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 100));
	cleanup();
}

static void shared_read_locks_coexist(void)
{
	SCRATCH(fd, path);
	pid_t me = getpid();
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 0, 0));
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_RDLCK, SEEK_SET, 100, 10) == 0);
		struct flock g;
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 1000, 1, &g) == 0);
		CHILD_CHECK(g.l_type == F_RDLCK && g.l_pid == me);
		/* len 0 means "to the end of file and beyond". */
		CHILD_CHECK(g.l_start == 0 && g.l_len == 0);
		CHILD_CHECK(getlk(f, F_GETLK, F_RDLCK, 1000, 1, &g) == 0);
		CHILD_CHECK(g.l_type == F_UNLCK);
	});
	cleanup();
}

static void close_of_any_descriptor_releases(void)
{
	SCRATCH(fd, path);
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 10));
	/* Opening and closing an unrelated descriptor of the same file drops
	 * every POSIX lock this process holds on it. */
	int other = CHECK_SYS(open(path, O_RDONLY));
	CHECK_SYS(close(other));
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, SEEK_SET, 0, 10) == 0);
	});
	cleanup();
}

static void unlock_splits_a_range(void)
{
	SCRATCH(fd, path);
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 100));
	CHECK_SYS(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 40, 20));
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g;
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 40, 20, &g) == 0);
		CHILD_CHECK(g.l_type == F_UNLCK);
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 30, 40, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_start == 0 && g.l_len == 40);
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 50, 50, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_start == 60 && g.l_len == 40);
	});
	cleanup();
}

static void whence_and_negative_length(void)
{
	SCRATCH(fd, path);
	CHECK_EQ(lseek(fd, 50, SEEK_SET), 50);
	/* SEEK_CUR -10 for 20 bytes: [40, 60). */
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_CUR, -10, 20));
	/* Negative length: [start+len, start) = [200, 210). */
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 210, -10));
	/* SEEK_END -1 for 1 byte: the last byte of the 4096-byte file. */
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_END, -1, 1));
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g;
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 0, 100, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_whence == SEEK_SET);
		CHILD_CHECK(g.l_start == 40 && g.l_len == 20);
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 100, 200, &g) == 0);
		CHILD_CHECK(g.l_type == F_RDLCK && g.l_start == 200 && g.l_len == 10);
		CHILD_CHECK(getlk(f, F_GETLK, F_RDLCK, 4000, 0, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_start == 4095 && g.l_len == 1);
	});
	cleanup();
}

static void setlk_errors(void)
{
	SCRATCH(fd, path);
	int ro = CHECK_SYS(open(path, O_RDONLY));
	int wo = CHECK_SYS(open(path, O_WRONLY));
	CHECK_ERR(lk(ro, F_SETLK, F_WRLCK, SEEK_SET, 0, 1), EBADF);
	CHECK_ERR(lk(wo, F_SETLK, F_RDLCK, SEEK_SET, 0, 1), EBADF);
	CHECK_ERR(lk(fd, F_SETLK, 77, SEEK_SET, 0, 1), EINVAL);
	CHECK_ERR(lk(fd, F_SETLK, F_WRLCK, 9, 0, 1), EINVAL);
	CHECK_ERR(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, -1, 1), EINVAL);
	CHECK_ERR(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 5, -10), EINVAL);
	/* F_GETLK only probes read or write locks. */
	struct flock g;
	CHECK_ERR(getlk(fd, F_GETLK, F_UNLCK, 0, 1, &g), EINVAL);
	CHECK_ERR(lk(99, F_SETLK, F_WRLCK, SEEK_SET, 0, 1), EBADF);
	CHECK_ERR(fcntl(fd, F_SETLK, (struct flock *)8), EFAULT);
	/* Unlocking a range that holds no lock is fine. */
	CHECK_SYS(lk(ro, F_SETLK, F_UNLCK, SEEK_SET, 0, 0));
	cleanup();
}

static void fork_does_not_inherit(void)
{
	SCRATCH(fd, path);
	pid_t me = getpid();
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
	IN_CHILD({
		/* The inherited descriptor does not carry the parent's lock. */
		struct flock g;
		CHILD_CHECK(getlk(fd, F_GETLK, F_WRLCK, 0, 1, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_pid == me);
		errno = 0;
		CHILD_CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1) == -1 &&
			    (errno == EAGAIN || errno == EACCES));
		/* Closing it in the child does not release the parent's lock. */
		close(fd);
	});
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g;
		CHILD_CHECK(getlk(f, F_GETLK, F_WRLCK, 0, 1, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK);
	});
	cleanup();
}

/* A process that exits holding locks, without closing, releases them. */
static void exit_releases_locks(void)
{
	SCRATCH(fd, path);
	IN_CHILD({
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, SEEK_SET, 0, 100) == 0);
		/* _exit without close. */
	});
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 100));
	cleanup();
}

static void setlkw_waits_for_unlock(void)
{
	SCRATCH(fd, path);
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 10));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLKW, F_WRLCK, SEEK_SET, 5, 1) == 0);
		CHILD_CHECK(write(p[1], "x", 1) == 1);
		_exit(0);
	}
	/* Whatever the timing, the child cannot own the lock yet. */
	usleep(20000);
	char b;
	CHECK_ERR(read(p[0], &b, 1), EAGAIN);
	CHECK_SYS(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 10));
	CHECK_EXITED(mt_wait(c), 0);
	CHECK_EQ(read(p[0], &b, 1), 1);
	cleanup();
}

static void ofd_locks_belong_to_the_description(void)
{
	SCRATCH(fd, path);
	int fd2 = CHECK_SYS(open(path, O_RDWR));
	CHECK_SYS(lk(fd, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 10));
	/* Another description in the same process conflicts. */
	CHECK_ERR(lk(fd2, F_OFD_SETLK, F_WRLCK, SEEK_SET, 5, 1), EAGAIN);
	/* And so does a classic POSIX lock through it. */
	CHECK_ERR(lk(fd2, F_SETLK, F_RDLCK, SEEK_SET, 5, 1), EAGAIN);
	struct flock g;
	CHECK_SYS(getlk(fd2, F_OFD_GETLK, F_RDLCK, 0, 0, &g));
	CHECK_EQ(g.l_type, F_WRLCK);
	CHECK_EQ(g.l_pid, -1);
	CHECK_EQ(g.l_start, 0);
	CHECK_EQ(g.l_len, 10);
	/* Closing another descriptor of the file keeps an OFD lock; closing
	 * a dup keeps it too while the description stays open. */
	int d = CHECK_SYS(dup(fd));
	CHECK_SYS(close(d));
	CHECK_SYS(close(fd2));
	fd2 = CHECK_SYS(open(path, O_RDWR));
	CHECK_ERR(lk(fd2, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 1), EAGAIN);
	/* The last close of the description releases it. */
	CHECK_SYS(close(fd));
	CHECK_SYS(lk(fd2, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 1));
	cleanup();
}

static void ofd_lock_shared_over_fork(void)
{
	SCRATCH(fd, path);
	CHECK_SYS(lk(fd, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 10));
	IN_CHILD({
		/* Same description: no conflict, and the child may change it. */
		CHILD_CHECK(lk(fd, F_OFD_SETLK, F_RDLCK, SEEK_SET, 0, 10) == 0);
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g;
		CHILD_CHECK(getlk(f, F_OFD_GETLK, F_WRLCK, 0, 1, &g) == 0);
		CHILD_CHECK(g.l_type == F_RDLCK && g.l_pid == -1);
	});
	/* The child's downgrade is visible to the parent's description. */
	int f = CHECK_SYS(open(path, O_RDWR));
	CHECK_SYS(lk(f, F_OFD_SETLK, F_RDLCK, SEEK_SET, 0, 10));
	CHECK_ERR(lk(f, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 10), EAGAIN);
	cleanup();
}

static void ofd_errors(void)
{
	SCRATCH(fd, path);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1,
			    .l_pid = 1 };
	/* l_pid must be 0 for OFD commands. */
	CHECK_ERR(fcntl(fd, F_OFD_SETLK, &fl), EINVAL);
	CHECK_ERR(fcntl(fd, F_OFD_SETLKW, &fl), EINVAL);
	CHECK_ERR(fcntl(fd, F_OFD_GETLK, &fl), EINVAL);
	int ro = CHECK_SYS(open(path, O_RDONLY));
	CHECK_ERR(lk(ro, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 1), EBADF);
	CHECK_SYS(lk(ro, F_OFD_SETLK, F_RDLCK, SEEK_SET, 0, 1));
	cleanup();
}

static const struct mt_case cases[] = {
	MT_CASE(getlk_reports_conflict),
	MT_CASE(own_locks_never_conflict),
	MT_CASE(shared_read_locks_coexist),
	MT_CASE(close_of_any_descriptor_releases),
	MT_CASE(unlock_splits_a_range),
	MT_CASE(whence_and_negative_length),
	MT_CASE(setlk_errors),
	MT_CASE(fork_does_not_inherit),
	MT_CASE(exit_releases_locks),
	MT_CASE(setlkw_waits_for_unlock),
	MT_CASE(ofd_locks_belong_to_the_description),
	MT_CASE(ofd_lock_shared_over_fork),
	MT_CASE(ofd_errors),
};

MT_MAIN(cases)
