//go:build ignore

/* s2_truncate: truncate and ftruncate: growing zero-fills, shrinking keeps
 * the offset, and the errors for bad lengths, descriptors not open for
 * writing, non-regular files, paths, permissions, seals and RLIMIT_FSIZE. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static off_t fsize(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	return st.st_size;
}

static void ftruncate_grow_zero_fill(void)
{
	int fd = CHECK_SYS(memfd_create("t", 0));
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_SYS(ftruncate(fd, 10));
	CHECK_EQ(fsize(fd), 10);
	char buf[16];
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 10);
	CHECK_MEMEQ(buf, "abc\0\0\0\0\0\0\0", 10);
	/* The offset is not moved by ftruncate. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);
}

static void ftruncate_shrink_keeps_offset(void)
{
	int fd = CHECK_SYS(memfd_create("t", 0));
	CHECK_EQ(write(fd, "abcdefgh", 8), 8);
	CHECK_SYS(ftruncate(fd, 2));
	CHECK_EQ(fsize(fd), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
	char buf[16];
	CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
	/* Writing past the end again leaves a zero gap. */
	CHECK_EQ(write(fd, "Z", 1), 1);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 9);
	CHECK_MEMEQ(buf, "ab\0\0\0\0\0\0Z", 9);
	CHECK_SYS(ftruncate(fd, 0));
	CHECK_EQ(fsize(fd), 0);
}

static void ftruncate_bad_fd(void)
{
	CHECK_ERR(ftruncate(-1, 0), EBADF);
	CHECK_ERR(ftruncate(9999, 0), EBADF);
	int fd = CHECK_SYS(memfd_create("t", 0));
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int rfd = CHECK_SYS(open(path, O_RDONLY));
	CHECK_ERR(ftruncate(rfd, 0), EINVAL);
	int pfd = CHECK_SYS(open(path, O_PATH));
	CHECK_ERR(ftruncate(pfd, 0), EBADF);
}

static void ftruncate_not_regular(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ftruncate(p[1], 0), EINVAL);
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	CHECK_ERR(ftruncate(s[0], 0), EINVAL);
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(ftruncate(d, 0), EINVAL);
}

static void truncate_path(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(fd, "hello", 5), 5);
	CHECK_SYS(truncate("f", 2));
	CHECK_EQ(fsize(fd), 2);
	CHECK_SYS(truncate("f", 4096));
	CHECK_EQ(fsize(fd), 4096);
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(truncate("l", 1));
	CHECK_EQ(fsize(fd), 1);
}

static void truncate_path_errors(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	(void)fd;
	CHECK_ERR(truncate("d", 0), EISDIR);
	CHECK_ERR(truncate("missing", 0), ENOENT);
	CHECK_ERR(truncate("", 0), ENOENT);
	CHECK_ERR(truncate("f/x", 0), ENOTDIR);
	CHECK_ERR(truncate("f", -1), EINVAL);
	CHECK_ERR(truncate((const char *)1, 0), EFAULT);
	CHECK_ERR(truncate("/proc/self/fd/0/x", 0), ENOTDIR);
}

static void truncate_eacces(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(fd, "hello", 5), 5);
	int w = CHECK_SYS(open("w", O_CREAT | O_RDWR, 0666));
	CHECK_SYS(fchmod(w, 0666)); /* past the umask */
	AS_USER(
		CHILD_ERR(truncate("f", 0), EACCES);
		CHILD_CHECK(truncate("w", 3) == 0);
	);
	CHECK_EQ(fsize(fd), 5);
	struct stat st;
	CHECK_SYS(stat("w", &st));
	CHECK_EQ(st.st_size, 3);
}

static void ftruncate_seals(void)
{
	int fd = CHECK_SYS(memfd_create("t", MFD_ALLOW_SEALING));
	CHECK_SYS(ftruncate(fd, 100));
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW));
	CHECK_ERR(ftruncate(fd, 101), EPERM);
	CHECK_SYS(ftruncate(fd, 100));
	CHECK_SYS(ftruncate(fd, 50));
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	CHECK_ERR(ftruncate(fd, 49), EPERM);
	CHECK_SYS(ftruncate(fd, 50));
	CHECK_EQ(fsize(fd), 50);
}

static void ftruncate_fsize_limit(void)
{
	/* In a child: the limit would outlive the case. */
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		struct rlimit rl = { 4096, 4096 };
		int fd = memfd_create("t", 0);
		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
		CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		CHILD_CHECK(ftruncate(fd, 4096) == 0);
		CHILD_ERR(ftruncate(fd, 4097), EFBIG);
		CHILD_CHECK(fsize(fd) == 4096);
		/* Shrinking is always allowed. */
		CHILD_CHECK(ftruncate(fd, 1) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void ftruncate_fsize_limit_signal(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		int fd = memfd_create("t", 0);
		struct rlimit rl = { 4096, 4096 };
		CHILD_CHECK(fd >= 0 && setrlimit(RLIMIT_FSIZE, &rl) == 0);
		ftruncate(fd, 8192);
		_exit(0);
	}
	int st = mt_wait(p);
	CHECK_SIGNALED(st, SIGXFSZ);
}

static const struct mt_case cases[] = {
	MT_CASE(ftruncate_grow_zero_fill),
	MT_CASE(ftruncate_shrink_keeps_offset),
	MT_CASE(ftruncate_bad_fd),
	MT_CASE(ftruncate_not_regular),
	MT_CASE(truncate_path),
	MT_CASE(truncate_path_errors),
	MT_CASE(truncate_eacces),
	MT_CASE(ftruncate_seals),
	MT_CASE(ftruncate_fsize_limit),
	MT_CASE(ftruncate_fsize_limit_signal),
};

MT_MAIN(cases)
