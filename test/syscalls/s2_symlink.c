//go:build ignore

/* s2_symlink: symlink and symlinkat: stored targets (any bytes, not
 * checked), lstat sizes and modes, ownership, dirfds, and the errors for
 * empty targets, existing names, missing parents, read-only file systems,
 * permission, bad pointers and overlong targets. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void target_stored_verbatim(void)
{
	ENTER();
	static const char *targets[] = { "plain", "/abs/path", "../up", "a//b/./c/",
					 "with space", "\x01\xff" };
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		char name[16], buf[64];
		snprintf(name, sizeof(name), "l%zu", i);
		CHECK_SYS(symlink(targets[i], name));
		ssize_t n = CHECK_SYS(readlink(name, buf, sizeof(buf)));
		CHECK_EQ(n, (ssize_t)strlen(targets[i]));
		CHECK_MEMEQ(buf, targets[i], n);
	}
}

static void lstat_size_and_mode(void)
{
	ENTER();
	umask(077);
	CHECK_SYS(symlink("twelve-bytes", "l"));
	struct stat st;
	CHECK_SYS(lstat("l", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0777);
	CHECK_EQ(st.st_size, 12);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(st.st_uid, getuid());
}

static void owner_is_creator(void)
{
	ENTER();
	CHECK_SYS(mkdir("w", 0777));
	CHECK_SYS(chmod("w", 0777));
	AS_USER(CHILD_CHECK(symlink("t", "w/l") == 0););
	struct stat st;
	CHECK_SYS(lstat("w/l", &st));
	CHECK_EQ(st.st_uid, 1000);
	CHECK_EQ(st.st_gid, 1000);
}

static void empty_target_enoent(void)
{
	ENTER();
	CHECK_ERR(symlink("", "l"), ENOENT);
	CHECK_ERR(lstat("l", &(struct stat){ 0 }), ENOENT);
}

static void existing_name_eexist(void)
{
	ENTER();
	CHECK_SYS(symlink("a", "l"));
	CHECK_ERR(symlink("b", "l"), EEXIST);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(symlink("b", "d"), EEXIST);
	/* A trailing slash on the new name is refused too. */
	CHECK_ERR(symlink("b", "d/"), EEXIST);
	CHECK_SYS(symlink("nowhere", "dangling"));
	CHECK_ERR(symlink("b", "dangling"), EEXIST);
}

static void path_errors(void)
{
	ENTER();
	CHECK_SYS(close(CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_ERR(symlink("t", "missing/l"), ENOENT);
	CHECK_ERR(symlink("t", "f/l"), ENOTDIR);
	CHECK_ERR(symlink("t", ""), ENOENT);
	CHECK_ERR(symlink("t", "/moat-s2-symlink"), EROFS);
	CHECK_ERR(syscall(SYS_symlink, (void *)1, "l"), EFAULT);
	CHECK_ERR(syscall(SYS_symlink, "t", (void *)1), EFAULT);
}

static void target_length_limit(void)
{
	ENTER();
	static char t[PATH_MAX + 2];
	memset(t, 'x', PATH_MAX - 1);
	t[PATH_MAX - 1] = 0;
	CHECK_SYS(symlink(t, "max"));
	t[PATH_MAX - 1] = 'x';
	t[PATH_MAX] = 0;
	CHECK_ERR(symlink(t, "over"), ENAMETOOLONG);
}

static void symlinkat_dirfd(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(symlinkat("t", d, "l"));
	char buf[8];
	CHECK_EQ(readlink("d/l", buf, sizeof(buf)), 1);
	CHECK_SYS(symlinkat("t", AT_FDCWD, "l2"));
	CHECK_ERR(symlinkat("t", -1, "l3"), EBADF);
	CHECK_ERR(symlinkat("t", 9999, "l3"), EBADF);
	int f = CHECK_SYS(open("d/x", O_CREAT | O_RDWR, 0644));
	CHECK_ERR(symlinkat("t", f, "l3"), ENOTDIR);
	int p = CHECK_SYS(open("d", O_PATH));
	CHECK_SYS(symlinkat("t", p, "l4"));
	CHECK_EQ(readlink("d/l4", buf, sizeof(buf)), 1);
}

static void needs_write_permission(void)
{
	ENTER();
	CHECK_SYS(mkdir("ro", 0755));
	AS_USER(CHILD_ERR(symlink("t", "ro/l"), EACCES););
	CHECK_ERR(lstat("ro/l", &(struct stat){ 0 }), ENOENT);
}

static const struct mt_case cases[] = {
	MT_CASE(target_stored_verbatim),
	MT_CASE(lstat_size_and_mode),
	MT_CASE(owner_is_creator),
	MT_CASE(empty_target_enoent),
	MT_CASE(existing_name_eexist),
	MT_CASE(path_errors),
	MT_CASE(target_length_limit),
	MT_CASE(symlinkat_dirfd),
	MT_CASE(needs_write_permission),
};

MT_MAIN(cases)
