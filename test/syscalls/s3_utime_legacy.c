//go:build ignore

/* s3_utime_legacy: the old time-setting calls made raw: utime (whole
 * seconds, NULL for now), utimes and futimesat (microseconds, range
 * checks, times before 1970 and past 2038), futimesat and utimensat on a
 * descriptor with a NULL path, ctime moving on every change, directories,
 * permission rules for owners, writers and others, and the errors
 * (EINVAL, ENOENT, ENOTDIR, EBADF, EFAULT, EPERM, EACCES). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static int make(const char *p, mode_t mode)
{
	int fd = open(p, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return -1;
	fchmod(fd, mode);
	return close(fd);
}

static void utime_whole_seconds(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	struct utimbuf ub = {1000, 2000};
	CHECK_SYS(syscall(SYS_utime, "f", &ub));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_sec, 1000);
	CHECK_EQ(st.st_atim.tv_nsec, 0);
	CHECK_EQ(st.st_mtim.tv_sec, 2000);
	/* NULL: both become the current time. */
	struct timespec before;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &before));
	CHECK_SYS(syscall(SYS_utime, "f", NULL));
	CHECK_SYS(stat("f", &st));
	CHECK_GE(st.st_mtim.tv_sec, before.tv_sec - 1);
	CHECK_EQ(st.st_atim.tv_sec, st.st_mtim.tv_sec);
}

static void utimes_microseconds_and_range(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	struct timeval tv[2] = {{5, 1}, {6, 999999}};
	CHECK_SYS(syscall(SYS_utimes, "f", tv));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_nsec, 1000);
	CHECK_EQ(st.st_mtim.tv_nsec, 999999000);
	struct timeval bad[2] = {{5, -1}, {6, 0}};
	CHECK_ERR(syscall(SYS_utimes, "f", bad), EINVAL);
	struct timeval bad2[2] = {{5, 0}, {6, 1000000}};
	CHECK_ERR(syscall(SYS_utimes, "f", bad2), EINVAL);
	/* The failed calls changed nothing. */
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 6);
}

static void times_outside_32_bits(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	/* Before 1970 and after 2038 (tmpfs keeps 64-bit times). */
	struct timeval tv[2] = {{-86400, 0}, {4102444800LL, 0}};
	CHECK_SYS(syscall(SYS_utimes, "f", tv));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_sec, -86400);
	CHECK_EQ(st.st_mtim.tv_sec, 4102444800LL);
}

static void futimesat_dirfd_and_null_path(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(make("d/f", 0644));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	struct timeval tv[2] = {{11, 0}, {12, 0}};
	CHECK_SYS(syscall(SYS_futimesat, d, "f", tv));
	struct stat st;
	CHECK_SYS(stat("d/f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 12);
	/* A NULL path sets the times of the descriptor's own file. */
	int f = CHECK_SYS(open("d/f", O_RDONLY));
	tv[1].tv_sec = 13;
	CHECK_SYS(syscall(SYS_futimesat, f, NULL, tv));
	CHECK_SYS(fstat(f, &st));
	CHECK_EQ(st.st_mtim.tv_sec, 13);
	/* So does utimensat, but not with AT_SYMLINK_NOFOLLOW. */
	struct timespec ts[2] = {{21, 0}, {22, 0}};
	CHECK_SYS(syscall(SYS_utimensat, f, NULL, ts, 0));
	CHECK_SYS(fstat(f, &st));
	CHECK_EQ(st.st_mtim.tv_sec, 22);
	CHECK_ERR(syscall(SYS_utimensat, f, NULL, ts, AT_SYMLINK_NOFOLLOW), EINVAL);
	/* The directory's own times. */
	CHECK_SYS(syscall(SYS_futimesat, d, NULL, tv));
	CHECK_SYS(stat("d", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 13);
	/* A NULL path with AT_FDCWD: EFAULT; a bad descriptor: EBADF. */
	CHECK_ERR(syscall(SYS_futimesat, AT_FDCWD, NULL, tv), EFAULT);
	CHECK_ERR(syscall(SYS_futimesat, 99, NULL, tv), EBADF);
	CHECK_ERR(syscall(SYS_futimesat, 99, "f", tv), EBADF);
	CHECK_ERR(syscall(SYS_futimesat, f, "x", tv), ENOTDIR);
}

static void ctime_moves(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	struct timeval tv[2] = {{1, 0}, {2, 0}};
	CHECK_SYS(syscall(SYS_utimes, "f", tv));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	/* Setting old times does not set an old ctime: it is now. */
	struct timespec now;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &now));
	CHECK_GE(st.st_ctim.tv_sec, now.tv_sec - 5);
	CHECK_LE(st.st_ctim.tv_sec, now.tv_sec + 1);
	struct timespec first = st.st_ctim;
	/* Another change moves it again (or leaves it equal within the
	 * clock's granularity, never backwards). */
	CHECK_SYS(syscall(SYS_utime, "f", NULL));
	CHECK_SYS(stat("f", &st));
	CHECK(st.st_ctim.tv_sec > first.tv_sec ||
	      (st.st_ctim.tv_sec == first.tv_sec && st.st_ctim.tv_nsec >= first.tv_nsec));
}

static void permission_rules(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	CHECK_SYS(make("writable", 0666));
	CHECK_SYS(make("readonly", 0644));
	CHECK_SYS(make("owned", 0400));
	CHECK_SYS(chown("owned", 1000, 1000));
	AS_USER({
		struct utimbuf ub = {1, 2};
		/* Not the owner but may write: only "now" is allowed. */
		if (syscall(SYS_utime, "writable", NULL) != 0)
			_exit(1);
		if (syscall(SYS_utime, "writable", &ub) != -1 || errno != EPERM)
			_exit(2);
		/* May not write either: EACCES for now, EPERM for times. */
		if (syscall(SYS_utimes, "readonly", NULL) != -1 || errno != EACCES)
			_exit(3);
		if (syscall(SYS_utime, "readonly", &ub) != -1 || errno != EPERM)
			_exit(4);
		/* The owner may do both, even without write permission. */
		if (syscall(SYS_utime, "owned", &ub) != 0)
			_exit(5);
		if (syscall(SYS_utime, "owned", NULL) != 0)
			_exit(6);
	});
	struct stat st;
	CHECK_SYS(stat("owned", &st));
	CHECK_EQ(st.st_uid, 1000);
}

static void symlinks_followed(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(symlink("missing", "dangling"));
	struct stat before;
	CHECK_SYS(lstat("l", &before));
	/* All three old calls follow a final symlink. */
	struct utimbuf ub = {31, 32};
	CHECK_SYS(syscall(SYS_utime, "l", &ub));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 32);
	struct timeval tv[2] = {{41, 0}, {42, 0}};
	CHECK_SYS(syscall(SYS_utimes, "l", tv));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 42);
	tv[1].tv_sec = 43;
	CHECK_SYS(syscall(SYS_futimesat, AT_FDCWD, "l", tv));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 43);
	/* The link itself is untouched. */
	CHECK_SYS(lstat("l", &st));
	CHECK_EQ(st.st_mtim.tv_sec, before.st_mtim.tv_sec);
	CHECK_ERR(syscall(SYS_utime, "dangling", &ub), ENOENT);
	CHECK_ERR(syscall(SYS_utimes, "dangling", NULL), ENOENT);
}

static void path_errors(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	struct utimbuf ub = {1, 2};
	CHECK_ERR(syscall(SYS_utime, "missing", &ub), ENOENT);
	CHECK_ERR(syscall(SYS_utime, "", &ub), ENOENT);
	CHECK_ERR(syscall(SYS_utime, "f/x", &ub), ENOTDIR);
	CHECK_ERR(syscall(SYS_utime, (const char *)1, &ub), EFAULT);
	CHECK_ERR(syscall(SYS_utime, "f", (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_utimes, "f", (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_futimesat, AT_FDCWD, "f", (void *)1), EFAULT);
	/* The read-only root. */
	CHECK_ERR(syscall(SYS_utime, "/etc/passwd", &ub), EROFS);
	CHECK_ERR(syscall(SYS_utimes, "/etc/passwd", NULL), EROFS);
}

static const struct mt_case cases[] = {
	MT_CASE(utime_whole_seconds),
	MT_CASE(utimes_microseconds_and_range),
	MT_CASE(times_outside_32_bits),
	MT_CASE(futimesat_dirfd_and_null_path),
	MT_CASE(ctime_moves),
	MT_CASE(permission_rules),
	MT_CASE(symlinks_followed),
	MT_CASE(path_errors),
};

MT_MAIN(cases)
