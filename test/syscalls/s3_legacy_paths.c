//go:build ignore

/* s3_legacy_paths: the old path calls glibc no longer uses, made with
 * syscall(2): open (O_CREAT/O_EXCL/O_TRUNC/O_DIRECTORY/O_NOFOLLOW, the
 * mode and umask), creat, stat, lstat and fstat (struct stat fields
 * agreeing with newfstatat and statx), and their errors: ENOENT, ENOTDIR,
 * ELOOP, ENAMETOOLONG, EFAULT, EISDIR, EEXIST, EACCES, EROFS, EBADF. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static long sys_open(const char *p, int flags, int mode)
{
	return syscall(SYS_open, p, flags, mode);
}

static void open_create_modes(void)
{
	ENTER();
	umask(027);
	int fd = CHECK_SYS(sys_open("f", O_CREAT | O_WRONLY, 0777));
	struct stat st;
	CHECK_SYS(syscall(SYS_fstat, fd, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0750);
	CHECK_EQ(st.st_size, 0);
	/* O_CREAT on an existing file keeps its mode. */
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(sys_open("f", O_CREAT | O_RDONLY, 0600));
	CHECK_SYS(syscall(SYS_fstat, fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0750);
	/* O_EXCL with O_CREAT: EEXIST. */
	CHECK_ERR(sys_open("f", O_CREAT | O_EXCL | O_RDONLY, 0600), EEXIST);
	/* O_EXCL without O_CREAT is ignored for regular files. */
	CHECK_SYS(sys_open("f", O_EXCL | O_RDONLY, 0));
}

static void open_trunc_and_append(void)
{
	ENTER();
	int fd = CHECK_SYS(sys_open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(fd, "hello", 5), 5);
	/* O_TRUNC empties it; O_APPEND writes at the end. */
	int a = CHECK_SYS(sys_open("f", O_WRONLY | O_APPEND, 0));
	CHECK_EQ(write(a, "!", 1), 1);
	struct stat st;
	CHECK_SYS(syscall(SYS_stat, "f", &st));
	CHECK_EQ(st.st_size, 6);
	int t = CHECK_SYS(sys_open("f", O_WRONLY | O_TRUNC, 0));
	CHECK_SYS(syscall(SYS_fstat, t, &st));
	CHECK_EQ(st.st_size, 0);
	/* O_TRUNC with O_RDONLY still truncates on Linux. */
	CHECK_EQ(write(t, "abc", 3), 3);
	CHECK_SYS(sys_open("f", O_RDONLY | O_TRUNC, 0));
	CHECK_SYS(syscall(SYS_stat, "f", &st));
	CHECK_EQ(st.st_size, 0);
}

static void open_path_errors(void)
{
	ENTER();
	CHECK_SYS(close(CHECK_SYS(sys_open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(symlink("f", "lf"));
	CHECK_SYS(symlink("loop", "loop"));
	CHECK_ERR(sys_open("missing", O_RDONLY, 0), ENOENT);
	CHECK_ERR(sys_open("", O_RDONLY, 0), ENOENT);
	CHECK_ERR(sys_open("nodir/f", O_CREAT | O_RDWR, 0644), ENOENT);
	CHECK_ERR(sys_open("f/x", O_RDONLY, 0), ENOTDIR);
	CHECK_ERR(sys_open("f", O_RDONLY | O_DIRECTORY, 0), ENOTDIR);
	CHECK_ERR(sys_open("lf", O_RDONLY | O_NOFOLLOW, 0), ELOOP);
	CHECK_ERR(sys_open("loop", O_RDONLY, 0), ELOOP);
	CHECK_ERR(sys_open("d", O_WRONLY, 0), EISDIR);
	CHECK_ERR(sys_open("d", O_RDWR, 0), EISDIR);
	CHECK_ERR(sys_open("d", O_CREAT | O_RDONLY, 0644), EISDIR);
	CHECK_ERR(sys_open((const char *)1, O_RDONLY, 0), EFAULT);
	char longname[NAME_MAX + 2];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK_ERR(sys_open(longname, O_CREAT | O_RDWR, 0644), ENAMETOOLONG);
	static char longpath[PATH_MAX + 2];
	for (int i = 0; i < PATH_MAX; i += 2)
		memcpy(longpath + i, "./", 2);
	longpath[PATH_MAX] = 'f';
	longpath[PATH_MAX + 1] = 0;
	CHECK_ERR(sys_open(longpath, O_RDONLY, 0), ENAMETOOLONG);
}

static void open_read_only_root(void)
{
	/* The root is read-only in both runs. */
	CHECK_ERR(sys_open("/etc/passwd", O_WRONLY, 0), EROFS);
	CHECK_ERR(sys_open("/new-file-here", O_CREAT | O_WRONLY, 0644), EROFS);
	CHECK_ERR(syscall(SYS_creat, "/new-file-here", 0644), EROFS);
	/* But an existing file opens read-only, and O_CREAT on it is fine
	 * when nothing would be written. */
	int fd = CHECK_SYS(sys_open("/etc/passwd", O_RDONLY, 0));
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(sys_open("/etc/passwd", O_CREAT | O_RDONLY, 0644));
	CHECK_SYS(close(fd));
}

static void creat_is_open_trunc(void)
{
	ENTER();
	umask(0);
	int fd = CHECK_SYS(syscall(SYS_creat, "c", 0640));
	/* creat opens write-only. */
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	char b[4];
	CHECK_ERR(read(fd, b, 1), EBADF);
	CHECK_EQ(write(fd, "data", 4), 4);
	struct stat st;
	CHECK_SYS(syscall(SYS_stat, "c", &st));
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK_EQ(st.st_size, 4);
	/* A second creat truncates and keeps the mode. */
	int fd2 = CHECK_SYS(syscall(SYS_creat, "c", 0600));
	CHECK_SYS(syscall(SYS_fstat, fd2, &st));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(syscall(SYS_creat, "d", 0644), EISDIR);
	CHECK_ERR(syscall(SYS_creat, "nodir/c", 0644), ENOENT);
}

static void stat_lstat_fstat_agree(void)
{
	ENTER();
	int fd = CHECK_SYS(sys_open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(fd, "12345678", 8), 8);
	CHECK_SYS(symlink("f", "l"));
	struct stat a, b, c, d, e;
	CHECK_SYS(syscall(SYS_stat, "f", &a));
	CHECK_SYS(syscall(SYS_fstat, fd, &b));
	CHECK_SYS(syscall(SYS_stat, "l", &c));
	CHECK_SYS(syscall(SYS_newfstatat, AT_FDCWD, "f", &d, 0));
	CHECK_SYS(syscall(SYS_lstat, "l", &e));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_ino, c.st_ino);
	CHECK_EQ(a.st_ino, d.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
	CHECK_EQ(a.st_size, 8);
	CHECK_EQ(b.st_size, 8);
	CHECK_EQ(a.st_nlink, 1);
	CHECK_EQ(a.st_blksize, b.st_blksize);
	CHECK_EQ(a.st_mtim.tv_sec, d.st_mtim.tv_sec);
	CHECK_EQ(a.st_mtim.tv_nsec, d.st_mtim.tv_nsec);
	/* lstat describes the link: its own inode, the target's length. */
	CHECK(S_ISLNK(e.st_mode));
	CHECK_NE(e.st_ino, a.st_ino);
	CHECK_EQ(e.st_size, 1);
	CHECK_EQ(e.st_mode & 0777, 0777);
	/* lstat of a non-link is stat. */
	CHECK_SYS(syscall(SYS_lstat, "f", &e));
	CHECK_EQ(e.st_ino, a.st_ino);
}

static void stat_errors(void)
{
	ENTER();
	CHECK_SYS(close(CHECK_SYS(sys_open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_SYS(symlink("loop", "loop"));
	CHECK_SYS(symlink("missing", "dangling"));
	struct stat st;
	CHECK_ERR(syscall(SYS_stat, "missing", &st), ENOENT);
	CHECK_ERR(syscall(SYS_stat, "", &st), ENOENT);
	CHECK_ERR(syscall(SYS_stat, "f/x", &st), ENOTDIR);
	CHECK_ERR(syscall(SYS_stat, "loop", &st), ELOOP);
	CHECK_ERR(syscall(SYS_stat, "dangling", &st), ENOENT);
	CHECK_SYS(syscall(SYS_lstat, "dangling", &st));
	CHECK_SYS(syscall(SYS_lstat, "loop", &st));
	CHECK_ERR(syscall(SYS_lstat, "loop/x", &st), ELOOP);
	CHECK_ERR(syscall(SYS_stat, "f", (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_lstat, (void *)1, &st), EFAULT);
	CHECK_ERR(syscall(SYS_fstat, 99, &st), EBADF);
	CHECK_ERR(syscall(SYS_fstat, -1, &st), EBADF);
	int fd = CHECK_SYS(sys_open("f", O_RDONLY, 0));
	CHECK_ERR(syscall(SYS_fstat, fd, (void *)1), EFAULT);
	char longname[NAME_MAX + 2];
	memset(longname, 'y', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK_ERR(syscall(SYS_stat, longname, &st), ENAMETOOLONG);
}

static void search_permission_needed(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	CHECK_SYS(mkdir("closed", 0700));
	CHECK_SYS(close(CHECK_SYS(sys_open("closed/f", O_CREAT | O_RDWR, 0644))));
	CHECK_SYS(close(CHECK_SYS(sys_open("ro", O_CREAT | O_RDWR, 0444))));
	AS_USER({
		struct stat st;
		if (syscall(SYS_stat, "closed/f", &st) != -1 || errno != EACCES)
			_exit(1);
		if (syscall(SYS_lstat, "closed/f", &st) != -1 || errno != EACCES)
			_exit(2);
		if (sys_open("closed/f", O_RDONLY, 0) != -1 || errno != EACCES)
			_exit(3);
		if (sys_open("ro", O_WRONLY, 0) != -1 || errno != EACCES)
			_exit(4);
		if (syscall(SYS_creat, "closed/g", 0644) != -1 || errno != EACCES)
			_exit(5);
		/* stat of the directory itself needs nothing. */
		if (syscall(SYS_stat, "closed", &st) != 0)
			_exit(6);
	});
}

static void fstat_of_special_files(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct stat st;
	CHECK_SYS(syscall(SYS_fstat, p[0], &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_SYS(syscall(SYS_fstat, p[1], &st));
	CHECK(S_ISFIFO(st.st_mode));
	int n = CHECK_SYS(sys_open("/dev/null", O_RDWR, 0));
	CHECK_SYS(syscall(SYS_fstat, n, &st));
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(st.st_rdev, makedev(1, 3));
	struct stat st2;
	CHECK_SYS(syscall(SYS_stat, "/dev/null", &st2));
	CHECK_EQ(st.st_ino, st2.st_ino);
	int op = CHECK_SYS(sys_open("/dev/null", O_PATH, 0));
	CHECK_SYS(syscall(SYS_fstat, op, &st2));
	CHECK_EQ(st.st_ino, st2.st_ino);
	int m = CHECK_SYS(memfd_create("m", 0));
	CHECK_SYS(syscall(SYS_fstat, m, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_nlink, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(open_create_modes),
	MT_CASE(open_trunc_and_append),
	MT_CASE(open_path_errors),
	MT_CASE(open_read_only_root),
	MT_CASE(creat_is_open_trunc),
	MT_CASE(stat_lstat_fstat_agree),
	MT_CASE(stat_errors),
	MT_CASE(search_permission_needed),
	MT_CASE(fstat_of_special_files),
};

MT_MAIN(cases)
