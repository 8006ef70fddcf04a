//go:build ignore

/* utimes: utimensat/futimens/utimes/futimesat/utime on a writable file
 * system: explicit times, UTIME_NOW and UTIME_OMIT, symlinks with
 * AT_SYMLINK_NOFOLLOW, who may set times, argument errors. Works in
 * /dev/shm. */
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

static void make_file(const char *name, mode_t mode)
{
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd >= 0)
		close(fd);
	chmod(name, mode);
}

static void explicit_times(void)
{
	ENTER();
	make_file("f", 0644);
	struct timespec ts[2] = {{1000, 123456789}, {2000, 5}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", ts, 0));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_sec, 1000);
	CHECK_EQ(st.st_atim.tv_nsec, 123456789);
	CHECK_EQ(st.st_mtim.tv_sec, 2000);
	CHECK_EQ(st.st_mtim.tv_nsec, 5);
	/* Times before 1970 are fine. */
	struct timespec neg[2] = {{-100, 0}, {-200, 0}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", neg, 0));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, -200);
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(futimens(fd, ts));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mtim.tv_sec, 2000);
	close(fd);
}

static void now_and_omit(void)
{
	ENTER();
	make_file("f", 0644);
	struct timespec ts[2] = {{1000, 0}, {2000, 0}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", ts, 0));
	time_t now = time(NULL);
	struct timespec om[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", om, 0));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_sec, 1000);
	CHECK_GE(st.st_mtim.tv_sec, now - 1);
	struct timespec both[2] = {{5, UTIME_OMIT}, {6, UTIME_OMIT}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", both, 0));
	/* Both omitted: nothing is looked at, not even the path. */
	CHECK_SYS(utimensat(AT_FDCWD, "nope", both, 0));
	CHECK_SYS(utimensat(AT_FDCWD, "f", NULL, 0));
	CHECK_SYS(stat("f", &st));
	CHECK_GE(st.st_atim.tv_sec, now - 1);
}

static void symlink_times(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_SYS(symlink("f", "ln"));
	struct timespec ts[2] = {{1000, 0}, {3000, 0}};
	CHECK_SYS(utimensat(AT_FDCWD, "ln", ts, AT_SYMLINK_NOFOLLOW));
	struct stat st;
	CHECK_SYS(lstat("ln", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 3000);
	CHECK_SYS(stat("f", &st));
	CHECK_NE(st.st_mtim.tv_sec, 3000);
	CHECK_SYS(utimensat(AT_FDCWD, "ln", ts, 0));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 3000);
}

static void old_interfaces(void)
{
	ENTER();
	make_file("f", 0644);
	struct timeval tv[2] = {{100, 7}, {200, 999999}};
	CHECK_SYS(utimes("f", tv));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_sec, 100);
	CHECK_EQ(st.st_atim.tv_nsec, 7000);
	CHECK_EQ(st.st_mtim.tv_nsec, 999999000);
	struct utimbuf ub = {300, 400};
	CHECK_SYS(utime("f", &ub));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_atim.tv_sec, 300);
	CHECK_EQ(st.st_mtim.tv_sec, 400);
	CHECK_EQ(st.st_mtim.tv_nsec, 0);
	CHECK_SYS(futimesat(AT_FDCWD, "f", tv));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_mtim.tv_sec, 200);
	CHECK_SYS(utime("f", NULL));
	struct timeval bad[2] = {{1, 1000000}, {1, 0}};
	CHECK_ERR(utimes("f", bad), EINVAL);
}

static void argument_errors(void)
{
	ENTER();
	make_file("f", 0644);
	struct timespec bad[2] = {{1, 1000000000}, {1, 0}};
	CHECK_ERR(utimensat(AT_FDCWD, "f", bad, 0), EINVAL);
	struct timespec ok[2] = {{1, 0}, {1, 0}};
	CHECK_ERR(utimensat(AT_FDCWD, "f", ok, 0x1), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "nope", ok, 0), ENOENT);
	CHECK_ERR(syscall(SYS_utimensat, AT_FDCWD, NULL, ok, 0), EFAULT);
	CHECK_ERR(futimens(-1, ok), EBADF);
	CHECK_ERR(utimensat(AT_FDCWD, "/etc/passwd", ok, 0), EROFS);
	CHECK_ERR(utimensat(AT_FDCWD, "/etc/passwd", NULL, 0), EROFS);
	CHECK_ERR(syscall(SYS_utimensat, AT_FDCWD, "f", 8L, 0), EFAULT);
}

static void who_may_set(void)
{
	ENTER();
	make_file("ro", 0644);
	make_file("rw", 0666);
	CHECK_SYS(chmod(".", 0777));
	AS_USER({
		struct timespec ts[2] = {{1, 0}, {1, 0}};
		CHILD_ERR(utimensat(AT_FDCWD, "ro", ts, 0), EPERM);
		CHILD_ERR(utimensat(AT_FDCWD, "ro", NULL, 0), EACCES);
		CHILD_ERR(utimensat(AT_FDCWD, "rw", ts, 0), EPERM);
		/* "Now" needs only write access. */
		CHILD_CHECK(utimensat(AT_FDCWD, "rw", NULL, 0) == 0);
		struct timespec nows[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
		CHILD_CHECK(utimensat(AT_FDCWD, "rw", nows, 0) == 0);
		struct timespec half[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
		CHILD_ERR(utimensat(AT_FDCWD, "rw", half, 0), EPERM);
		int f = open("mine", O_CREAT | O_WRONLY, 0400);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(futimens(f, ts) == 0);
	});
}

/* Synthetic files keep no times but take a change of them (touch
 * /dev/null works as root). */
static void synthetic_files(void)
{
	CHECK_SYS(utimensat(AT_FDCWD, "/dev/null", NULL, 0));
	CHECK_SYS(utimensat(AT_FDCWD, "/proc/self/status", NULL, 0));
	CHECK_ERR(chmod("/proc/self/status", 0600), EPERM);
}

static const struct mt_case cases[] = {
	MT_CASE(explicit_times),
	MT_CASE(now_and_omit),
	MT_CASE(symlink_times),
	MT_CASE(old_interfaces),
	MT_CASE(argument_errors),
	MT_CASE(who_may_set),
	MT_CASE(synthetic_files),
};

MT_MAIN(cases)
