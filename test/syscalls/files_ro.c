//go:build ignore

/* files_ro: file syscalls on a read-only root: open/openat/openat2/close/
 * close_range, read/pread/readv/preadv, lseek (incl. SEEK_DATA/HOLE),
 * stat/fstat/lstat/newfstatat/statx, access/faccessat/faccessat2,
 * getdents64, readlink, getcwd/chdir/fchdir, dup/dup2/dup3, fcntl,
 * O_CLOEXEC across exec, statfs, and every kind of write failing with
 * EROFS. Uses /etc/passwd, / and the files in test/syscalls/data. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

extern char **environ;

static char passwd[8192];
static ssize_t passwd_len = -1;

static void load_passwd(void)
{
	if (passwd_len >= 0)
		return;
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	passwd_len = CHECK_SYS(read(fd, passwd, sizeof(passwd)));
	close(fd);
	CHECK_GT(passwd_len, 0);
}

static void open_lowest_fd_and_close(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(fd, 3);
	int fd2 = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(fd2, 4);
	CHECK_SYS(close(fd));
	CHECK_EQ(open("/etc/passwd", O_RDONLY), 3);
	CHECK_SYS(close(3));
	CHECK_SYS(close(4));
	CHECK_ERR(close(3), EBADF);
	CHECK_ERR(close(-1), EBADF);
}

static void open_errors(void)
{
	CHECK_ERR(open("/nonexistent/file", O_RDONLY), ENOENT);
	CHECK_ERR(open("/etc/passwd/x", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("/etc", O_WRONLY), EISDIR);
	CHECK_ERR(open("/etc/passwd", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open("", O_RDONLY), ENOENT);
	CHECK_ERR(syscall(SYS_open, (char *)8, O_RDONLY), EFAULT);
	char longname[300];
	memset(longname, 'x', sizeof(longname));
	longname[0] = '/';
	longname[sizeof(longname) - 1] = 0;
	CHECK_ERR(open(longname, O_RDONLY), ENAMETOOLONG);
	static char longpath[PATH_MAX + 10];
	for (size_t i = 0; i < sizeof(longpath) - 1; i += 2) {
		longpath[i] = '/';
		longpath[i + 1] = 'a';
	}
	longpath[sizeof(longpath) - 1] = 0;
	CHECK_ERR(open(longpath, O_RDONLY), ENAMETOOLONG);
}

static void open_symlinks(void)
{
	CHECK_ERR(open(mt_data("loop_a"), O_RDONLY), ELOOP);
	CHECK_ERR(open(mt_data("link_to_hello"), O_RDONLY | O_NOFOLLOW), ELOOP);
	int fd = CHECK_SYS(open(mt_data("link_to_hello"), O_RDONLY));
	char buf[32];
	CHECK_EQ(read(fd, buf, sizeof(buf)), 11);
	CHECK_MEMEQ(buf, "hello moat\n", 11);
	close(fd);
	/* An absolute symlink resolves from the root. */
	fd = CHECK_SYS(open(mt_data("abs_link_to_passwd"), O_RDONLY));
	close(fd);
	/* O_NOFOLLOW only applies to the last component. */
	fd = CHECK_SYS(open("/bin/ls", O_RDONLY | O_NOFOLLOW));
	close(fd);
	CHECK_ERR(open("/bin", O_RDONLY | O_NOFOLLOW | O_DIRECTORY), ENOTDIR);
	/* O_PATH|O_NOFOLLOW opens the link itself. */
	fd = CHECK_SYS(open("/bin", O_PATH | O_NOFOLLOW));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK(S_ISLNK(st.st_mode));
	close(fd);
}

static void openat_dirfd(void)
{
	int dfd = CHECK_SYS(open("/etc", O_RDONLY | O_DIRECTORY));
	int fd = CHECK_SYS(openat(dfd, "passwd", O_RDONLY));
	close(fd);
	fd = CHECK_SYS(openat(AT_FDCWD, "/etc/passwd", O_RDONLY));
	close(fd);
	/* An absolute path ignores the dirfd, even a bad one. */
	fd = CHECK_SYS(openat(999, "/etc/passwd", O_RDONLY));
	close(fd);
	CHECK_ERR(openat(999, "passwd", O_RDONLY), EBADF);
	int ffd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(openat(ffd, "x", O_RDONLY), ENOTDIR);
	fd = CHECK_SYS(openat(dfd, "..", O_RDONLY | O_DIRECTORY));
	struct stat a, b;
	CHECK_SYS(fstat(fd, &a));
	CHECK_SYS(stat("/", &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
	close(fd);
	close(ffd);
	close(dfd);
}

static void openat2_resolve(void)
{
	struct open_how how;
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY;
	how.resolve = RESOLVE_BENEATH;
	int dfd = CHECK_SYS(open("/etc", O_RDONLY | O_DIRECTORY));
	long fd = syscall(SYS_openat2, dfd, "passwd", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		SKIP("openat2 not available");
	CHECK_GE(fd, 0);
	close((int)fd);
	CHECK_ERR(syscall(SYS_openat2, dfd, "../etc/passwd", &how, sizeof(how)), EXDEV);
	CHECK_ERR(syscall(SYS_openat2, dfd, "/etc/passwd", &how, sizeof(how)), EXDEV);
	how.resolve = RESOLVE_NO_SYMLINKS;
	CHECK_ERR(syscall(SYS_openat2, AT_FDCWD, "/bin/sh", &how, sizeof(how)), ELOOP);
	how.resolve = 0;
	how.flags = O_RDONLY | (1ULL << 40);
	CHECK_ERR(syscall(SYS_openat2, dfd, "passwd", &how, sizeof(how)), EINVAL);
	how.flags = O_RDONLY;
	how.mode = 0644; /* mode without O_CREAT */
	CHECK_ERR(syscall(SYS_openat2, dfd, "passwd", &how, sizeof(how)), EINVAL);
	how.mode = 0;
	CHECK_ERR(syscall(SYS_openat2, dfd, "passwd", &how, 8), EINVAL);
	close(dfd);
}

static void read_pread_readv_agree(void)
{
	load_passwd();
	MT_BAIL();
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	char a[64], b[64], c1[10], c2[54];
	CHECK_EQ(pread(fd, a, 64, 5), 64);
	CHECK_MEMEQ(a, passwd + 5, 64);
	/* pread does not move the offset. */
	CHECK_EQ(read(fd, b, 64), 64);
	CHECK_MEMEQ(b, passwd, 64);
	struct iovec iov[2] = { { c1, sizeof(c1) }, { c2, sizeof(c2) } };
	CHECK_EQ(readv(fd, iov, 2), 64);
	CHECK_MEMEQ(c1, passwd + 64, 10);
	CHECK_MEMEQ(c2, passwd + 74, 54);
	CHECK_EQ(preadv(fd, iov, 2, 1), 64);
	CHECK_MEMEQ(c1, passwd + 1, 10);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 128);
	/* At EOF, read returns 0. */
	CHECK_EQ(lseek(fd, 0, SEEK_END), passwd_len);
	CHECK_EQ(read(fd, a, 64), 0);
	CHECK_EQ(pread(fd, a, 64, passwd_len + 100), 0);
	close(fd);
}

static void read_errors(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	char buf[8];
	CHECK_ERR(read(999, buf, 8), EBADF);
	CHECK_ERR(pread(fd, buf, 8, -1), EINVAL);
	struct iovec iov[1] = { { buf, 8 } };
	CHECK_ERR(syscall(SYS_readv, fd, iov, -1), EINVAL);
	CHECK_ERR(syscall(SYS_readv, fd, iov, IOV_MAX + 1), EINVAL);
	CHECK_EQ(readv(fd, iov, 0), 0);
	int dfd = CHECK_SYS(open("/etc", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(read(dfd, buf, 8), EISDIR);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(pread(p[0], buf, 8, 0), ESPIPE);
	int wfd = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK_ERR(read(wfd, buf, 8), EBADF);
	CHECK_ERR(write(fd, "x", 1), EBADF);
	close(fd);
}

static void lseek_whences(void)
{
	load_passwd();
	MT_BAIL();
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(lseek(fd, 10, SEEK_SET), 10);
	CHECK_EQ(lseek(fd, 5, SEEK_CUR), 15);
	CHECK_EQ(lseek(fd, -5, SEEK_CUR), 10);
	CHECK_EQ(lseek(fd, -1, SEEK_END), passwd_len - 1);
	char c;
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, passwd[passwd_len - 1]);
	/* Past the end is allowed. */
	CHECK_EQ(lseek(fd, 1000000, SEEK_SET), 1000000);
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CHECK_ERR(lseek(fd, 0, 42), EINVAL);
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), passwd_len);
	CHECK_ERR(lseek(fd, passwd_len, SEEK_DATA), ENXIO);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(lseek(p[0], 0, SEEK_SET), ESPIPE);
	CHECK_ERR(lseek(999, 0, SEEK_SET), EBADF);
	close(fd);
}

static void stat_regular_file(void)
{
	load_passwd();
	MT_BAIL();
	struct stat st, fst;
	CHECK_SYS(stat("/etc/passwd", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0644);
	CHECK_EQ(st.st_size, passwd_len);
	CHECK_EQ(st.st_uid, 0);
	CHECK_GE(st.st_nlink, 1);
	CHECK_GT(st.st_blksize, 0);
	CHECK_GE(st.st_blocks * 512, st.st_size);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_SYS(fstat(fd, &fst));
	CHECK_EQ(fst.st_ino, st.st_ino);
	CHECK_EQ(fst.st_dev, st.st_dev);
	CHECK_EQ(fst.st_mtim.tv_sec, st.st_mtim.tv_sec);
	CHECK_EQ(fst.st_mtim.tv_nsec, st.st_mtim.tv_nsec);
	close(fd);
}

static void stat_directories(void)
{
	struct stat root, etc, dotdot;
	CHECK_SYS(stat("/", &root));
	CHECK(S_ISDIR(root.st_mode));
	CHECK_SYS(stat("/etc", &etc));
	CHECK(S_ISDIR(etc.st_mode));
	CHECK_GE(etc.st_nlink, 2);
	CHECK_SYS(stat("/..", &dotdot));
	CHECK_EQ(dotdot.st_ino, root.st_ino);
	CHECK_SYS(stat("/etc/../etc/./", &dotdot));
	CHECK_EQ(dotdot.st_ino, etc.st_ino);
	CHECK_ERR(stat("/etc/passwd/", &dotdot), ENOTDIR);
	CHECK_ERR(stat("/nonexistent", &dotdot), ENOENT);
	CHECK_ERR(stat("/etc/passwd", (struct stat *)8), EFAULT);
}

static void lstat_symlink(void)
{
	struct stat l, s;
	CHECK_SYS(lstat("/bin", &l));
	CHECK(S_ISLNK(l.st_mode));
	CHECK_EQ(l.st_size, 7); /* "usr/bin" */
	CHECK_SYS(stat("/bin", &s));
	CHECK(S_ISDIR(s.st_mode));
	struct stat u;
	CHECK_SYS(stat("/usr/bin", &u));
	CHECK_EQ(s.st_ino, u.st_ino);
	CHECK_SYS(lstat(mt_data("link_to_hello"), &l));
	CHECK(S_ISLNK(l.st_mode));
	CHECK_EQ(l.st_size, 9);
	CHECK_ERR(stat(mt_data("loop_a"), &s), ELOOP);
	CHECK_SYS(lstat(mt_data("loop_a"), &l));
}

static void newfstatat_flags(void)
{
	int dfd = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	struct stat a, b;
	CHECK_SYS(fstatat(dfd, "bin", &a, AT_SYMLINK_NOFOLLOW));
	CHECK(S_ISLNK(a.st_mode));
	CHECK_SYS(fstatat(dfd, "bin", &b, 0));
	CHECK(S_ISDIR(b.st_mode));
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_SYS(fstatat(fd, "", &a, AT_EMPTY_PATH));
	CHECK(S_ISREG(a.st_mode));
	CHECK_ERR(fstatat(fd, "", &a, 0), ENOENT);
	CHECK_ERR(fstatat(dfd, "bin", &a, 0x40000000), EINVAL);
	CHECK_ERR(fstatat(fd, "x", &a, 0), ENOTDIR);
	CHECK_ERR(fstatat(999, "x", &a, 0), EBADF);
	close(fd);
	close(dfd);
}

static void statx_basic(void)
{
	load_passwd();
	MT_BAIL();
	struct statx sx;
	memset(&sx, 0, sizeof(sx));
	CHECK_SYS(statx(AT_FDCWD, "/etc/passwd", 0, STATX_BASIC_STATS, &sx));
	CHECK_EQ(sx.stx_mask & STATX_BASIC_STATS & ~STATX_BLOCKS, STATX_BASIC_STATS & ~STATX_BLOCKS);
	CHECK_EQ(sx.stx_size, passwd_len);
	CHECK(S_ISREG(sx.stx_mode));
	struct stat st;
	CHECK_SYS(stat("/etc/passwd", &st));
	CHECK_EQ(sx.stx_ino, st.st_ino);
	CHECK_EQ(sx.stx_mtime.tv_sec, st.st_mtim.tv_sec);
	CHECK_EQ(makedev(sx.stx_dev_major, sx.stx_dev_minor), st.st_dev);
	CHECK_SYS(statx(AT_FDCWD, "/bin", AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx));
	CHECK(S_ISLNK(sx.stx_mode));
	CHECK_ERR(statx(AT_FDCWD, "/etc/passwd", 0x40000000, STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_ERR(statx(AT_FDCWD, "/etc/passwd", 0, 0x80000000U, &sx), EINVAL);
	CHECK_ERR(statx(AT_FDCWD, "/nonexistent", 0, STATX_BASIC_STATS, &sx), ENOENT);
}

static void access_modes(void)
{
	CHECK_SYS(access("/etc/passwd", F_OK));
	CHECK_SYS(access("/etc/passwd", R_OK));
	CHECK_ERR(access("/etc/passwd", W_OK), EROFS);
	CHECK_ERR(access("/etc/passwd", X_OK), EACCES);
	CHECK_SYS(access("/bin/sh", X_OK));
	CHECK_ERR(access("/nonexistent", F_OK), ENOENT);
	CHECK_ERR(access("/etc/passwd", 0x40), EINVAL);
	CHECK_SYS(faccessat(AT_FDCWD, "/etc/passwd", R_OK, AT_EACCESS));
	int dfd = CHECK_SYS(open("/etc", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(faccessat(dfd, "passwd", R_OK, 0));
	CHECK_SYS(syscall(SYS_faccessat2, dfd, "passwd", R_OK, AT_EACCESS));
	CHECK_ERR(syscall(SYS_faccessat2, dfd, "passwd", R_OK, 0x1), EINVAL);
	CHECK_SYS(syscall(SYS_faccessat2, AT_FDCWD, "/bin", R_OK, AT_SYMLINK_NOFOLLOW));
	close(dfd);
}

static int dir_has(const char *dir, const char *name, unsigned char *type)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	char buf[4096];
	int found = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			if (strcmp(d->d_name, name) == 0) {
				found = 1;
				if (type)
					*type = d->d_type;
			}
			off += d->d_reclen;
		}
	}
	close(fd);
	return found;
}

static void getdents64_etc(void)
{
	unsigned char t = 0;
	CHECK_EQ(dir_has("/etc", "passwd", &t), 1);
	CHECK_EQ(t, DT_REG);
	CHECK_EQ(dir_has("/etc", ".", &t), 1);
	CHECK_EQ(t, DT_DIR);
	CHECK_EQ(dir_has("/etc", "..", NULL), 1);
	CHECK_EQ(dir_has("/", "bin", &t), 1);
	CHECK_EQ(t, DT_LNK);
	CHECK_EQ(dir_has("/etc", "no-such-entry", NULL), 0);
}

static void getdents64_data_dir_exact(void)
{
	int fd = CHECK_SYS(open(mt_data("dir"), O_RDONLY | O_DIRECTORY));
	char buf[4096];
	int names = 0, seen_a = 0, seen_sub = 0;
	for (;;) {
		long n = CHECK_SYS(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			names++;
			if (strcmp(d->d_name, "a.txt") == 0)
				seen_a = d->d_type == DT_REG;
			if (strcmp(d->d_name, "sub") == 0)
				seen_sub = d->d_type == DT_DIR;
			CHECK_EQ(d->d_reclen % 8, 0);
			off += d->d_reclen;
		}
	}
	CHECK_EQ(names, 4);
	CHECK_EQ(seen_a, 1);
	CHECK_EQ(seen_sub, 1);
	/* Rewinding starts over. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_GT(syscall(SYS_getdents64, fd, buf, sizeof(buf)), 0);
	close(fd);
}

static void getdents64_errors(void)
{
	char buf[4096];
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOTDIR);
	CHECK_ERR(syscall(SYS_getdents64, 999, buf, sizeof(buf)), EBADF);
	int dfd = CHECK_SYS(open("/etc", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(syscall(SYS_getdents64, dfd, buf, 8), EINVAL);
	CHECK_ERR(syscall(SYS_getdents64, dfd, (void *)8, sizeof(buf)), EFAULT);
	close(fd);
	close(dfd);
}

static void readlink_cases(void)
{
	char buf[4096];
	ssize_t n = CHECK_SYS(readlink("/proc/self/exe", buf, sizeof(buf) - 1));
	buf[n] = 0;
	char *real = realpath(mt_argv0, NULL);
	CHECK(real != NULL);
	CHECK_STREQ(buf, real);
	free(real);
	n = CHECK_SYS(readlink("/bin", buf, sizeof(buf)));
	CHECK_EQ(n, 7);
	CHECK_MEMEQ(buf, "usr/bin", 7);
	/* A short buffer truncates silently, without a NUL. */
	memset(buf, '#', 8);
	CHECK_EQ(readlink("/bin", buf, 3), 3);
	CHECK_MEMEQ(buf, "usr#", 4);
	CHECK_ERR(readlink("/etc/passwd", buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlink("/nonexistent", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlink("/bin", buf, 0), EINVAL);
	int dfd = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	n = CHECK_SYS(readlinkat(dfd, "bin", buf, sizeof(buf)));
	CHECK_EQ(n, 7);
	close(dfd);
}

static void proc_self_fd_links(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = CHECK_SYS(readlink(path, buf, sizeof(buf) - 1));
	buf[n] = 0;
	CHECK_STREQ(buf, "/etc/passwd");
	/* Opening the magic link reopens the file. */
	int fd2 = CHECK_SYS(open(path, O_RDONLY));
	struct stat a, b;
	CHECK_SYS(fstat(fd, &a));
	CHECK_SYS(fstat(fd2, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	close(fd2);
	close(fd);
	CHECK_ERR(readlink("/proc/self/fd/999", buf, sizeof(buf)), ENOENT);
}

static void cwd_changes(void)
{
	char buf[4096];
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/");
	CHECK_SYS(chdir("/etc"));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/etc");
	int fd = CHECK_SYS(open("passwd", O_RDONLY));
	close(fd);
	CHECK_SYS(chdir(".."));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/");
	CHECK_SYS(chdir("/bin"));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/usr/bin");
	int dfd = CHECK_SYS(open("/usr/share", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fchdir(dfd));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/usr/share");
	close(dfd);
	CHECK_ERR(chdir("/etc/passwd"), ENOTDIR);
	CHECK_ERR(chdir("/nonexistent"), ENOENT);
	int ffd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(fchdir(ffd), ENOTDIR);
	CHECK_ERR(fchdir(999), EBADF);
	CHECK(getcwd(buf, 3) == NULL);
	CHECK_EQ(errno, ERANGE);
	CHECK_ERR(syscall(SYS_getcwd, buf, 0), ERANGE);
	/* The raw syscall returns the length including the NUL. */
	CHECK_EQ(syscall(SYS_getcwd, buf, sizeof(buf)), (long)strlen("/usr/share") + 1);
}

static void dup_family(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(fd, 3);
	CHECK_EQ(dup(fd), 4);
	CHECK_EQ(dup2(fd, 10), 10);
	CHECK_EQ(dup2(fd, fd), fd);
	CHECK_ERR(dup2(999, 11), EBADF);
	CHECK_ERR(dup2(999, 999), EBADF);
	CHECK_ERR(dup3(fd, fd, 0), EINVAL);
	CHECK_ERR(dup3(fd, 12, 0x4), EINVAL);
	CHECK_EQ(dup3(fd, 12, O_CLOEXEC), 12);
	CHECK_EQ(fcntl(12, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(10, F_GETFD), 0);
	/* Duplicates share the offset. */
	CHECK_EQ(lseek(fd, 7, SEEK_SET), 7);
	CHECK_EQ(lseek(10, 0, SEEK_CUR), 7);
	CHECK_ERR(dup(999), EBADF);
	/* dup2 over an open fd closes it first. */
	int other = CHECK_SYS(open("/etc/group", O_RDONLY));
	CHECK_EQ(dup2(fd, other), other);
	CHECK_EQ(lseek(other, 0, SEEK_CUR), 7);
}

static void fcntl_commands(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(fcntl(fd, F_DUPFD, 20), 20);
	CHECK_EQ(fcntl(fd, F_DUPFD, 20), 21);
	CHECK_EQ(fcntl(fd, F_DUPFD_CLOEXEC, 30), 30);
	CHECK_EQ(fcntl(30, F_GETFD), FD_CLOEXEC);
	CHECK_ERR(fcntl(fd, F_DUPFD, -1), EINVAL);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_SYS(fcntl(fd, F_SETFD, FD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	int fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fl & O_NONBLOCK, 0);
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK | O_APPEND | O_WRONLY));
	fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(fl & O_APPEND, O_APPEND);
	/* The access mode cannot be changed. */
	CHECK_EQ(fl & O_ACCMODE, O_RDONLY);
	CHECK_ERR(fcntl(fd, 9999), EINVAL);
	CHECK_ERR(fcntl(999, F_GETFD), EBADF);
	CHECK_ERR(fcntl(999, F_GETFL), EBADF);
	int opath = CHECK_SYS(open("/etc/passwd", O_PATH));
	fl = CHECK_SYS(fcntl(opath, F_GETFL));
	CHECK_EQ(fl & O_PATH, O_PATH);
}

static void o_path_limits(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_PATH));
	char buf[4];
	CHECK_ERR(read(fd, buf, 4), EBADF);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_ERR(fchdir(fd), ENOTDIR);
	int dfd = CHECK_SYS(open("/etc", O_PATH | O_DIRECTORY));
	int f2 = CHECK_SYS(openat(dfd, "passwd", O_RDONLY));
	close(f2);
	CHECK_SYS(fchdir(dfd));
}

static void cloexec_across_exec(void)
{
	int keep = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	int drop = CHECK_SYS(open("/etc/passwd", O_RDONLY | O_CLOEXEC));
	int drop2 = CHECK_SYS(fcntl(keep, F_DUPFD_CLOEXEC, 0));
	CHECK_EQ(keep, 3);
	CHECK_EQ(drop, 4);
	CHECK_EQ(drop2, 5);
	CHECK_EQ(lseek(keep, 9, SEEK_SET), 9);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "files_ro", "check-cloexec", NULL };
		execve("/proc/self/exe", args, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* Fork shares descriptors, cloexec or not. */
	pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(fcntl(4, F_GETFD) == FD_CLOEXEC ? 0 : 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

static int check_cloexec_child(void)
{
	if (fcntl(3, F_GETFD) != 0)
		return 1;
	if (lseek(3, 0, SEEK_CUR) != 9)
		return 2;
	if (fcntl(4, F_GETFD) != -1 || errno != EBADF)
		return 3;
	if (fcntl(5, F_GETFD) != -1 || errno != EBADF)
		return 4;
	return 0;
}

static void close_range_cases(void)
{
	for (int i = 0; i < 6; i++)
		CHECK_EQ(open("/etc/passwd", O_RDONLY), 3 + i);
	CHECK_SYS(syscall(SYS_close_range, 4U, 5U, 0U));
	CHECK_ERR(fcntl(4, F_GETFD), EBADF);
	CHECK_ERR(fcntl(5, F_GETFD), EBADF);
	CHECK_SYS(fcntl(6, F_GETFD));
	CHECK_SYS(syscall(SYS_close_range, 6U, 8U, (unsigned)CLOSE_RANGE_CLOEXEC));
	CHECK_EQ(fcntl(6, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(8, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(3, F_GETFD), 0);
	CHECK_ERR(syscall(SYS_close_range, 5U, 4U, 0U), EINVAL);
	CHECK_ERR(syscall(SYS_close_range, 3U, 4U, 0x80U), EINVAL);
	CHECK_SYS(syscall(SYS_close_range, 3U, ~0U, 0U));
	CHECK_ERR(fcntl(3, F_GETFD), EBADF);
	CHECK_ERR(fcntl(8, F_GETFD), EBADF);
	/* Closing nothing is fine. */
	CHECK_SYS(syscall(SYS_close_range, 500U, 600U, 0U));
}

static void statfs_root_readonly(void)
{
	struct statfs sf;
	CHECK_SYS(statfs("/", &sf));
	CHECK_EQ(sf.f_flags & ST_RDONLY, ST_RDONLY);
	CHECK_GT(sf.f_bsize, 0);
	CHECK_GT(sf.f_namelen, 0);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	struct statfs f2;
	CHECK_SYS(fstatfs(fd, &f2));
	CHECK_EQ(f2.f_type, sf.f_type);
	CHECK_EQ(f2.f_flags & ST_RDONLY, ST_RDONLY);
	close(fd);
	CHECK_ERR(statfs("/nonexistent", &sf), ENOENT);
	CHECK_ERR(fstatfs(999, &sf), EBADF);
}

static void writes_fail_erofs(void)
{
	CHECK_ERR(open("/etc/passwd", O_WRONLY), EROFS);
	CHECK_ERR(open("/etc/passwd", O_RDWR), EROFS);
	CHECK_ERR(open("/etc/passwd", O_RDONLY | O_TRUNC), EROFS);
	CHECK_ERR(open("/tmp/moat-new-file", O_CREAT | O_WRONLY, 0644), EROFS);
	CHECK_ERR(creat("/moat-new-file", 0644), EROFS);
	CHECK_ERR(mkdir("/tmp/moat-dir", 0755), EROFS);
	CHECK_ERR(rmdir("/tmp"), EROFS);
	CHECK_ERR(unlink("/etc/passwd"), EROFS);
	CHECK_ERR(rename("/etc/passwd", "/etc/passwd2"), EROFS);
	CHECK_ERR(link("/etc/passwd", "/etc/passwd2"), EROFS);
	CHECK_ERR(symlink("/etc/passwd", "/tmp/moat-link"), EROFS);
	CHECK_ERR(mknod("/tmp/moat-fifo", S_IFIFO | 0644, 0), EROFS);
	CHECK_ERR(chmod("/etc/passwd", 0600), EROFS);
	CHECK_ERR(chown("/etc/passwd", 1, 1), EROFS);
	CHECK_ERR(truncate("/etc/passwd", 0), EROFS);
	CHECK_ERR(utime("/etc/passwd", NULL), EROFS);
	CHECK_ERR(setxattr("/etc/passwd", "user.moat", "x", 1, 0), EROFS);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(fchmod(fd, 0600), EROFS);
	CHECK_ERR(ftruncate(fd, 0), EINVAL);
	close(fd);
}

static void erofs_not_for_missing_parent(void)
{
	/* Lookup errors come before the read-only check. */
	CHECK_ERR(open("/nonexistent-dir/file", O_CREAT | O_WRONLY, 0644), ENOENT);
	CHECK_ERR(mkdir("/etc/passwd/x", 0755), ENOTDIR);
	/* ...but for unlink the read-only check comes before the last
	 * component is looked up. */
	CHECK_ERR(unlink("/nonexistent"), EROFS);
	/* An existing target with O_CREAT|O_EXCL: EEXIST. */
	CHECK_ERR(open("/etc/passwd", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	CHECK_ERR(mkdir("/etc", 0755), EEXIST);
}

static void sendfile_to_pipe(void)
{
	load_passwd();
	MT_BAIL();
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	int p[2];
	CHECK_SYS(pipe(p));
	off_t off = 10;
	CHECK_EQ(sendfile(p[1], fd, &off, 100), 100);
	CHECK_EQ(off, 110);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
	char buf[100];
	CHECK_EQ(read(p[0], buf, 100), 100);
	CHECK_MEMEQ(buf, passwd + 10, 100);
	CHECK_EQ(sendfile(p[1], fd, NULL, 5), 5);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_ERR(sendfile(fd, p[0], NULL, 5), EBADF);
	close(fd);
}

static void data_files_content(void)
{
	int fd = CHECK_SYS(open(mt_data("dir/sub/b.txt"), O_RDONLY));
	char buf[8];
	CHECK_EQ(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEMEQ(buf, "b\n", 2);
	close(fd);
	struct stat st;
	CHECK_SYS(stat(mt_data("script.sh"), &st));
	CHECK_EQ(st.st_mode & 0111, 0111);
	CHECK_SYS(stat(mt_data("not_exec.txt"), &st));
	CHECK_EQ(st.st_mode & 0111, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(open_lowest_fd_and_close),
	MT_CASE(open_errors),
	MT_CASE(open_symlinks),
	MT_CASE(openat_dirfd),
	MT_CASE(openat2_resolve),
	MT_CASE(read_pread_readv_agree),
	MT_CASE(read_errors),
	MT_CASE(lseek_whences),
	MT_CASE(stat_regular_file),
	MT_CASE(stat_directories),
	MT_CASE(lstat_symlink),
	MT_CASE(newfstatat_flags),
	MT_CASE(statx_basic),
	MT_CASE(access_modes),
	MT_CASE(getdents64_etc),
	MT_CASE(getdents64_data_dir_exact),
	MT_CASE(getdents64_errors),
	MT_CASE(readlink_cases),
	MT_CASE(proc_self_fd_links),
	MT_CASE(cwd_changes),
	MT_CASE(dup_family),
	MT_CASE(fcntl_commands),
	MT_CASE(o_path_limits),
	MT_CASE(cloexec_across_exec),
	MT_CASE(close_range_cases),
	MT_CASE(statfs_root_readonly),
	MT_CASE(writes_fail_erofs),
	MT_CASE(erofs_not_for_missing_parent),
	MT_CASE(sendfile_to_pipe),
	MT_CASE(data_files_content),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "check-cloexec") == 0)
		return check_cloexec_child();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
