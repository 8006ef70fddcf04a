//go:build ignore

/* s3_at_dirfds: the *at family with directory descriptors: mkdirat,
 * renameat, unlinkat (AT_REMOVEDIR), symlinkat, linkat (AT_SYMLINK_FOLLOW,
 * AT_EMPTY_PATH), fchmodat and fchownat against a dirfd, AT_FDCWD, absolute
 * paths that ignore the dirfd, descriptors of files (ENOTDIR), closed
 * descriptors (EBADF), O_PATH directory descriptors, a removed directory
 * (ENOENT) and flag errors (EINVAL). Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int make(int dfd, const char *path)
{
	int fd = openat(dfd, path, O_CREAT | O_WRONLY | O_EXCL, 0644);
	if (fd < 0)
		return -1;
	return close(fd);
}

static void mkdirat_relative_to_dirfd(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(mkdirat(d, "sub", 0700));
	struct stat st;
	CHECK_SYS(stat("d/sub", &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0700);
	CHECK_ERR(mkdirat(d, "sub", 0700), EEXIST);
	CHECK_SYS(mkdirat(AT_FDCWD, "top", 0755));
	CHECK_SYS(stat("top", &st));
	/* mkdir applies the umask; the mode's high bits except sticky go. */
	umask(077);
	CHECK_SYS(mkdirat(d, "masked", 01777));
	CHECK_SYS(stat("d/masked", &st));
	CHECK_EQ(st.st_mode & 07777, 01700);
	CHECK_ERR(mkdirat(d, "", 0755), ENOENT);
	CHECK_ERR(mkdirat(d, "nope/x", 0755), ENOENT);
}

static void absolute_path_ignores_dirfd(void)
{
	ENTER();
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	char path[PATH_MAX + 8];
	snprintf(path, sizeof path, "%s/abs", cwd);
	/* Even a bad descriptor is ignored with an absolute path. */
	CHECK_SYS(mkdirat(99, path, 0755));
	CHECK_SYS(access("abs", F_OK));
	snprintf(path, sizeof path, "%s/abs2", cwd);
	CHECK_SYS(renameat(AT_FDCWD, "abs", 99, path));
	CHECK_ERR(access("abs", F_OK), ENOENT);
}

static void file_descriptor_is_enotdir(void)
{
	ENTER();
	CHECK_SYS(make(AT_FDCWD, "f"));
	int f = CHECK_SYS(open("f", O_RDONLY));
	CHECK_ERR(mkdirat(f, "x", 0755), ENOTDIR);
	CHECK_ERR(unlinkat(f, "x", 0), ENOTDIR);
	CHECK_ERR(symlinkat("t", f, "x"), ENOTDIR);
	CHECK_ERR(renameat(f, "x", AT_FDCWD, "y"), ENOTDIR);
	CHECK_ERR(linkat(AT_FDCWD, "f", f, "x", 0), ENOTDIR);
	CHECK_ERR(fchmodat(f, "x", 0644, 0), ENOTDIR);
	CHECK_ERR(fchownat(f, "x", 0, 0, 0), ENOTDIR);
	/* A closed descriptor: EBADF. */
	CHECK_ERR(mkdirat(99, "x", 0755), EBADF);
	CHECK_ERR(unlinkat(99, "x", 0), EBADF);
	CHECK_ERR(symlinkat("t", 99, "x"), EBADF);
	CHECK_ERR(renameat(AT_FDCWD, "f", 99, "x"), EBADF);
	CHECK_ERR(fchmodat(99, "x", 0644, 0), EBADF);
}

static void opath_dirfd_works(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_PATH | O_DIRECTORY));
	CHECK_SYS(mkdirat(d, "a", 0755));
	CHECK_SYS(symlinkat("target", d, "l"));
	CHECK_SYS(make(d, "f"));
	CHECK_SYS(fchmodat(d, "f", 0600, 0));
	CHECK_SYS(renameat(d, "f", d, "g"));
	CHECK_SYS(linkat(d, "g", d, "h", 0));
	struct stat st;
	CHECK_SYS(fstatat(d, "h", &st, 0));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_EQ(st.st_mode & 07777, 0600);
	CHECK_SYS(unlinkat(d, "h", 0));
	CHECK_SYS(unlinkat(d, "a", AT_REMOVEDIR));
	char buf[16];
	CHECK_EQ(readlinkat(d, "l", buf, sizeof buf), 6);
}

static void unlinkat_removedir_rules(void)
{
	ENTER();
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(mkdirat(d, "dir", 0755));
	CHECK_SYS(make(d, "file"));
	/* Without AT_REMOVEDIR a directory is EISDIR; with it, a file is
	 * ENOTDIR. */
	CHECK_ERR(unlinkat(d, "dir", 0), EISDIR);
	CHECK_ERR(unlinkat(d, "file", AT_REMOVEDIR), ENOTDIR);
	CHECK_SYS(make(d, "dir/inner"));
	CHECK_ERR(unlinkat(d, "dir", AT_REMOVEDIR), ENOTEMPTY);
	CHECK_ERR(unlinkat(d, "file", 0x1), EINVAL);
	CHECK_ERR(unlinkat(d, "file", AT_SYMLINK_NOFOLLOW), EINVAL);
	CHECK_ERR(unlinkat(d, ".", AT_REMOVEDIR), EINVAL);
	CHECK_ERR(unlinkat(d, "dir/..", AT_REMOVEDIR), ENOTEMPTY);
	CHECK_SYS(unlinkat(d, "dir/inner", 0));
	CHECK_SYS(unlinkat(d, "dir", AT_REMOVEDIR));
	CHECK_SYS(unlinkat(d, "file", 0));
	CHECK_ERR(unlinkat(d, "file", 0), ENOENT);
}

static void renameat_between_dirfds(void)
{
	ENTER();
	CHECK_SYS(mkdir("a", 0755));
	CHECK_SYS(mkdir("b", 0755));
	int a = CHECK_SYS(open("a", O_RDONLY | O_DIRECTORY));
	int b = CHECK_SYS(open("b", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(make(a, "f"));
	CHECK_SYS(renameat(a, "f", b, "g"));
	CHECK_ERR(faccessat(a, "f", F_OK, 0), ENOENT);
	CHECK_SYS(faccessat(b, "g", F_OK, 0));
	/* A directory may not move into itself. */
	CHECK_SYS(mkdirat(a, "sub", 0755));
	CHECK_ERR(renameat(AT_FDCWD, "a", a, "sub/a"), EINVAL);
	/* Over a non-empty directory: ENOTEMPTY; a directory over a file:
	 * ENOTDIR; a file over a directory: EISDIR. */
	CHECK_SYS(mkdirat(b, "full", 0755));
	CHECK_SYS(make(b, "full/x"));
	CHECK_ERR(renameat(a, "sub", b, "full"), ENOTEMPTY);
	CHECK_ERR(renameat(a, "sub", b, "g"), ENOTDIR);
	CHECK_ERR(renameat(b, "g", a, "sub"), EISDIR);
	CHECK_ERR(renameat(a, "missing", b, "x"), ENOENT);
}

static void linkat_flags(void)
{
	ENTER();
	CHECK_SYS(make(AT_FDCWD, "f"));
	CHECK_SYS(symlink("f", "l"));
	/* linkat does not follow a final symlink unless asked. */
	CHECK_SYS(linkat(AT_FDCWD, "l", AT_FDCWD, "l2", 0));
	struct stat st;
	CHECK_SYS(lstat("l2", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_SYS(linkat(AT_FDCWD, "l", AT_FDCWD, "f2", AT_SYMLINK_FOLLOW));
	CHECK_SYS(lstat("f2", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "x", 0x1), EINVAL);
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "f2", 0), EEXIST);
	CHECK_ERR(linkat(AT_FDCWD, "nope", AT_FDCWD, "x", 0), ENOENT);
	/* Directories cannot be hard linked. */
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(linkat(AT_FDCWD, "d", AT_FDCWD, "d2", 0), EPERM);
	/* AT_EMPTY_PATH links the descriptor's file (needs
	 * CAP_DAC_READ_SEARCH, which root has in both runs). */
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(linkat(fd, "", AT_FDCWD, "f3", AT_EMPTY_PATH));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_nlink, 3);
	CHECK_ERR(linkat(fd, "", AT_FDCWD, "f4", 0), ENOENT);
}

static void removed_directory_fd(void)
{
	ENTER();
	CHECK_SYS(mkdir("gone", 0755));
	int d = CHECK_SYS(open("gone", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(rmdir("gone"));
	/* Nothing may be created in a deleted directory. */
	CHECK_ERR(mkdirat(d, "x", 0755), ENOENT);
	CHECK_ERR(make(d, "f"), ENOENT);
	CHECK_ERR(symlinkat("t", d, "l"), ENOENT);
	CHECK_ERR(unlinkat(d, "x", 0), ENOENT);
	/* But "." still names it. */
	struct stat st;
	CHECK_SYS(fstatat(d, ".", &st, 0));
	CHECK_EQ(st.st_nlink, 0);
}

static void fchmodat_fchownat_flags(void)
{
	ENTER();
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(make(d, "f"));
	CHECK_SYS(symlinkat("f", d, "l"));
	CHECK_SYS(fchmodat(d, "l", 0600, 0));
	struct stat st;
	CHECK_SYS(fstatat(d, "f", &st, 0));
	CHECK_EQ(st.st_mode & 07777, 0600);
	/* The raw fchmodat has no flags argument; the fchmodat2 flags are
	 * glibc's concern. fchownat: NOFOLLOW changes the link. */
	CHECK_SYS(fchownat(d, "l", 123, 456, AT_SYMLINK_NOFOLLOW));
	CHECK_SYS(fstatat(d, "l", &st, AT_SYMLINK_NOFOLLOW));
	CHECK_EQ(st.st_uid, 123);
	CHECK_EQ(st.st_gid, 456);
	CHECK_SYS(fstatat(d, "f", &st, 0));
	CHECK_EQ(st.st_uid, 0);
	/* fchownat with AT_EMPTY_PATH changes the descriptor's file. */
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(fchownat(fd, "", 7, 8, AT_EMPTY_PATH));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_uid, 7);
	CHECK_EQ(st.st_gid, 8);
	CHECK_ERR(fchownat(fd, "", 7, 8, 0), ENOENT);
	CHECK_ERR(fchownat(d, "f", 0, 0, 0x4000000), EINVAL);
	CHECK_ERR(syscall(SYS_fchmodat, d, "missing", 0644), ENOENT);
	CHECK_ERR(syscall(SYS_fchmodat, d, (const char *)1, 0644), EFAULT);
}

static void symlinkat_targets(void)
{
	ENTER();
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	/* The target is stored as given, even if it does not exist. */
	CHECK_SYS(symlinkat("../../no/such", d, "l"));
	char buf[64];
	ssize_t n = CHECK_SYS(readlinkat(d, "l", buf, sizeof buf));
	CHECK_EQ(n, 13);
	CHECK_MEMEQ(buf, "../../no/such", 13);
	CHECK_ERR(symlinkat("", d, "e"), ENOENT);
	CHECK_ERR(symlinkat("x", d, "l"), EEXIST);
	CHECK_ERR(symlinkat("x", d, ""), ENOENT);
	CHECK_ERR(symlinkat((const char *)1, d, "z"), EFAULT);
	char longt[PATH_MAX + 10];
	memset(longt, 'a', sizeof longt - 1);
	longt[sizeof longt - 1] = 0;
	CHECK_ERR(symlinkat(longt, d, "long"), ENAMETOOLONG);
}

static const struct mt_case cases[] = {
	MT_CASE(mkdirat_relative_to_dirfd),
	MT_CASE(absolute_path_ignores_dirfd),
	MT_CASE(file_descriptor_is_enotdir),
	MT_CASE(opath_dirfd_works),
	MT_CASE(unlinkat_removedir_rules),
	MT_CASE(renameat_between_dirfds),
	MT_CASE(linkat_flags),
	MT_CASE(removed_directory_fd),
	MT_CASE(fchmodat_fchownat_flags),
	MT_CASE(symlinkat_targets),
};

MT_MAIN(cases)
