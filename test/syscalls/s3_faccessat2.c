//go:build ignore

/* s3_faccessat2: permission queries in detail: faccessat2 flags
 * (AT_EACCESS, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH) and the legacy access
 * and faccessat, root's rules (X_OK needs some execute bit, R/W always),
 * the owner/group/other classes, read-only file systems (EROFS for W_OK
 * only on writable node types), directories' search bits along the path,
 * O_PATH and file dirfds, and the errors (EINVAL for bad modes and flags,
 * ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, EFAULT, EBADF). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long fa2(int dfd, const char *p, int mode, int flags)
{
	return syscall(SYS_faccessat2, dfd, p, mode, flags);
}

static int make(const char *p, mode_t mode)
{
	int fd = open(p, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return -1;
	fchmod(fd, mode);
	return close(fd);
}

static void root_rules(void)
{
	ENTER();
	CHECK_SYS(make("none", 0000));
	CHECK_SYS(make("x", 0001));
	/* Root may read and write anything, but X_OK needs an execute bit
	 * somewhere. */
	CHECK_SYS(fa2(AT_FDCWD, "none", R_OK | W_OK, 0));
	CHECK_ERR(fa2(AT_FDCWD, "none", X_OK, 0), EACCES);
	CHECK_SYS(fa2(AT_FDCWD, "x", R_OK | W_OK | X_OK, 0));
	CHECK_SYS(access("none", R_OK | W_OK));
	CHECK_ERR(access("none", X_OK), EACCES);
	/* Directories are searchable by root regardless. */
	CHECK_SYS(mkdir("d", 0000));
	CHECK_SYS(fa2(AT_FDCWD, "d", X_OK | R_OK | W_OK, 0));
}

static void classes_for_users(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	CHECK_SYS(make("own", 0400));
	CHECK_SYS(chown("own", 1000, 5000));
	CHECK_SYS(make("grp", 0040));
	CHECK_SYS(chown("grp", 5000, 1000));
	CHECK_SYS(make("oth", 0004));
	CHECK_SYS(chown("oth", 5000, 5000));
	CHECK_SYS(make("ownx", 0100));
	CHECK_SYS(chown("ownx", 1000, 1000));
	AS_USER({
		if (fa2(AT_FDCWD, "own", R_OK, 0) != 0)
			_exit(1);
		if (fa2(AT_FDCWD, "own", W_OK, 0) != -1 || errno != EACCES)
			_exit(2);
		if (fa2(AT_FDCWD, "grp", R_OK, 0) != 0)
			_exit(3);
		if (fa2(AT_FDCWD, "oth", R_OK, 0) != 0)
			_exit(4);
		if (fa2(AT_FDCWD, "ownx", X_OK, 0) != 0)
			_exit(5);
		if (fa2(AT_FDCWD, "ownx", R_OK | X_OK, 0) != -1 || errno != EACCES)
			_exit(6);
		/* F_OK ignores the mode bits. */
		if (fa2(AT_FDCWD, "ownx", F_OK, 0) != 0)
			_exit(7);
	});
}

static void eaccess_uses_effective_ids(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	CHECK_SYS(make("mine", 0600));
	CHECK_SYS(chown("mine", 2000, 2000));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(setresgid(1000, 2000, 2000) == 0);
		CHILD_CHECK(setresuid(1000, 2000, 2000) == 0);
		/* The real uid 1000 may not; the effective 2000 may. */
		CHILD_ERR(fa2(AT_FDCWD, "mine", R_OK, 0), EACCES);
		CHILD_CHECK(fa2(AT_FDCWD, "mine", R_OK | W_OK, AT_EACCESS) == 0);
		CHILD_ERR(syscall(SYS_faccessat, AT_FDCWD, "mine", R_OK), EACCES);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void symlink_nofollow(void)
{
	ENTER();
	CHECK_SYS(make("f", 0000));
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(symlink("missing", "dangling"));
	CHECK_SYS(symlink("loop", "loop"));
	/* Following: the target's mode; not following: the link (which
	 * root may "execute", since links are 0777). */
	CHECK_ERR(fa2(AT_FDCWD, "l", X_OK, 0), EACCES);
	CHECK_SYS(fa2(AT_FDCWD, "l", X_OK, AT_SYMLINK_NOFOLLOW));
	CHECK_ERR(fa2(AT_FDCWD, "dangling", F_OK, 0), ENOENT);
	CHECK_SYS(fa2(AT_FDCWD, "dangling", F_OK, AT_SYMLINK_NOFOLLOW));
	CHECK_ERR(fa2(AT_FDCWD, "loop", F_OK, 0), ELOOP);
	CHECK_SYS(fa2(AT_FDCWD, "loop", F_OK, AT_SYMLINK_NOFOLLOW));
	CHECK_ERR(fa2(AT_FDCWD, "loop/x", F_OK, AT_SYMLINK_NOFOLLOW), ELOOP);
}

static void empty_path_and_dirfds(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(make("d/in", 0644));
	int fd = CHECK_SYS(open("f", O_PATH));
	/* AT_EMPTY_PATH asks about the descriptor's file. */
	CHECK_SYS(fa2(fd, "", R_OK | W_OK, AT_EMPTY_PATH));
	CHECK_ERR(fa2(fd, "", X_OK, AT_EMPTY_PATH), EACCES);
	CHECK_ERR(fa2(fd, "", R_OK, 0), ENOENT);
	/* A file descriptor as dirfd with a name: ENOTDIR. */
	CHECK_ERR(fa2(fd, "x", R_OK, 0), ENOTDIR);
	int d = CHECK_SYS(open("d", O_PATH | O_DIRECTORY));
	CHECK_SYS(fa2(d, "in", R_OK, 0));
	CHECK_SYS(syscall(SYS_faccessat, d, "in", W_OK));
	CHECK_ERR(fa2(99, "in", R_OK, 0), EBADF);
	CHECK_ERR(syscall(SYS_faccessat, 99, "in", R_OK), EBADF);
	/* An absolute path ignores the dirfd. */
	CHECK_SYS(fa2(99, "/", R_OK, 0));
}

static void read_only_filesystem(void)
{
	/* The root is read-only in both runs: W_OK on a regular file or
	 * directory is EROFS, but not on a device node or a FIFO, which
	 * do not write to the file system. */
	CHECK_ERR(fa2(AT_FDCWD, "/etc/passwd", W_OK, 0), EROFS);
	CHECK_ERR(fa2(AT_FDCWD, "/etc", W_OK, 0), EROFS);
	CHECK_ERR(access("/etc/passwd", R_OK | W_OK), EROFS);
	CHECK_SYS(fa2(AT_FDCWD, "/etc/passwd", R_OK, 0));
	CHECK_SYS(fa2(AT_FDCWD, "/dev/null", W_OK, 0));
}

static void search_along_the_path(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	CHECK_SYS(mkdir("closed", 0700));
	CHECK_SYS(make("closed/f", 0666));
	CHECK_SYS(mkdir("xonly", 0711));
	CHECK_SYS(make("xonly/f", 0666));
	AS_USER({
		/* A directory without search permission hides its files. */
		if (fa2(AT_FDCWD, "closed/f", F_OK, 0) != -1 || errno != EACCES)
			_exit(1);
		/* Search alone suffices to reach a known name. */
		if (fa2(AT_FDCWD, "xonly/f", R_OK | W_OK, 0) != 0)
			_exit(2);
		if (fa2(AT_FDCWD, "xonly", R_OK, 0) != -1 || errno != EACCES)
			_exit(3);
		if (fa2(AT_FDCWD, "xonly", X_OK, 0) != 0)
			_exit(4);
	});
}

static void mode_and_flag_errors(void)
{
	CHECK_ERR(fa2(AT_FDCWD, "/", 8, 0), EINVAL);
	CHECK_ERR(fa2(AT_FDCWD, "/", -1, 0), EINVAL);
	CHECK_ERR(access("/", 0x10), EINVAL);
	CHECK_ERR(syscall(SYS_faccessat, AT_FDCWD, "/", 8), EINVAL);
	CHECK_ERR(fa2(AT_FDCWD, "/", R_OK, 0x4000000), EINVAL);
	CHECK_ERR(fa2(AT_FDCWD, "/", R_OK, AT_SYMLINK_FOLLOW), EINVAL);
	/* The flags are checked before the path. */
	CHECK_ERR(fa2(AT_FDCWD, "/nonexistent", R_OK, 0x1), EINVAL);
}

static void path_errors(void)
{
	ENTER();
	CHECK_SYS(make("f", 0644));
	CHECK_ERR(fa2(AT_FDCWD, "missing", F_OK, 0), ENOENT);
	CHECK_ERR(fa2(AT_FDCWD, "", F_OK, 0), ENOENT);
	CHECK_ERR(fa2(AT_FDCWD, "f/", F_OK, 0), ENOTDIR);
	CHECK_ERR(fa2(AT_FDCWD, "f/x", F_OK, 0), ENOTDIR);
	CHECK_ERR(fa2(AT_FDCWD, (const char *)1, F_OK, 0), EFAULT);
	CHECK_ERR(syscall(SYS_access, (const char *)1, F_OK), EFAULT);
	char name[NAME_MAX + 2];
	memset(name, 'z', sizeof name - 1);
	name[sizeof name - 1] = 0;
	CHECK_ERR(fa2(AT_FDCWD, name, F_OK, 0), ENAMETOOLONG);
	CHECK_ERR(access(name, F_OK), ENAMETOOLONG);
}

static const struct mt_case cases[] = {
	MT_CASE(root_rules),
	MT_CASE(classes_for_users),
	MT_CASE(eaccess_uses_effective_ids),
	MT_CASE(symlink_nofollow),
	MT_CASE(empty_path_and_dirfds),
	MT_CASE(read_only_filesystem),
	MT_CASE(search_along_the_path),
	MT_CASE(mode_and_flag_errors),
	MT_CASE(path_errors),
};

MT_MAIN(cases)
