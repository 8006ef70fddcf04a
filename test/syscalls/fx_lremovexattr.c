//go:build ignore

/* fx_lremovexattr: removing extended attributes with lremovexattr(2)
 * (and removexattr/fremovexattr beside it): removal from files and
 * directories, not following symlinks, user attributes refused on
 * symlinks, ENODATA for absent names, name checks (ERANGE, EOPNOTSUPP),
 * permissions (EACCES, EPERM for trusted names), and path errors
 * (ENOENT, ENOTDIR, EFAULT, EROFS, EBADF). */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

__attribute__((destructor)) static void cleanup(void)
{
	char p[256];
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_lremovexattr-%d", (int)getpid());
	nftw(p, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* scratch enters a fresh directory for the case, with a file f (0644)
 * and a directory d, each with user.a and user.b set, and a symlink l
 * to f. */
static int scratch(const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_lremovexattr-%d", (int)getpid());
	mkdir(p, 0777);
	chmod(p, 0755);
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_lremovexattr-%d/%s", (int)getpid(), name);
	if (mkdir(p, 0755) < 0 || chdir(p) < 0 || chmod(p, 0755) < 0) {
		mt_fail(__FILE__, __LINE__, "scratch %s: %s", p, mt_errname(errno));
		return -1;
	}
	int fd = open("f", O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || fchmod(fd, 0644) < 0 || mkdir("d", 0755) < 0 || symlink("f", "l") < 0 ||
	    setxattr("f", "user.a", "1", 1, 0) < 0 || setxattr("f", "user.b", "2", 1, 0) < 0 ||
	    setxattr("d", "user.a", "1", 1, 0) < 0 || setxattr("d", "user.b", "2", 1, 0) < 0) {
		mt_fail(__FILE__, __LINE__, "scratch files: %s", mt_errname(errno));
		return -1;
	}
	close(fd);
	return 0;
}

#define SCRATCH()                        \
	do {                             \
		if (scratch(__func__) < 0) \
			return;          \
	} while (0)

static int has(const char *path, const char *name)
{
	char v[16];
	return lgetxattr(path, name, v, sizeof(v)) >= 0;
}

static void removes_from_file_and_directory(void)
{
	SCRATCH();
	CHECK_SYS(lremovexattr("f", "user.a"));
	CHECK(!has("f", "user.a"));
	CHECK(has("f", "user.b"));
	CHECK_SYS(lremovexattr("d", "user.b"));
	CHECK(!has("d", "user.b"));
	CHECK(has("d", "user.a"));
	/* The list shrinks accordingly. */
	char list[64];
	ssize_t n = CHECK_SYS(llistxattr("f", list, sizeof(list)));
	CHECK_EQ(n, 7);
	CHECK_STREQ(list, "user.b");
}

static void absent_name_enodata(void)
{
	SCRATCH();
	CHECK_SYS(lremovexattr("f", "user.a"));
	CHECK_ERR(lremovexattr("f", "user.a"), ENODATA);
	CHECK_ERR(lremovexattr("f", "user.never"), ENODATA);
}

static void does_not_follow_symlinks(void)
{
	SCRATCH();
	/* The link itself may not have user attributes: removing one from
	 * it is EPERM, and the target keeps its own. */
	CHECK_ERR(lremovexattr("l", "user.a"), EPERM);
	CHECK(has("f", "user.a"));
	/* removexattr follows the link. */
	CHECK_SYS(removexattr("l", "user.a"));
	CHECK(!has("f", "user.a"));
}

static void user_names_refused_on_symlinks(void)
{
	SCRATCH();
	CHECK_ERR(lsetxattr("l", "user.x", "1", 1, 0), EPERM);
	char v[4];
	CHECK_ERR(lgetxattr("l", "user.x", v, sizeof(v)), ENODATA);
}

static void name_checks(void)
{
	SCRATCH();
	CHECK_ERR(lremovexattr("f", ""), ERANGE);
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	memcpy(longname, "user.", 5);
	longname[sizeof(longname) - 1] = 0;
	CHECK_ERR(lremovexattr("f", longname), ERANGE);
	/* A name outside every namespace is not supported. */
	CHECK_ERR(lremovexattr("f", "nonamespace"), EOPNOTSUPP);
	CHECK_ERR(lremovexattr("f", (const char *)1), EFAULT);
}

static void fremovexattr_on_descriptors(void)
{
	SCRATCH();
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(fremovexattr(fd, "user.a"));
	CHECK(!has("f", "user.a"));
	CHECK_ERR(fremovexattr(fd, "user.a"), ENODATA);
	int p = CHECK_SYS(open("f", O_PATH));
	CHECK_ERR(fremovexattr(p, "user.b"), EBADF);
	CHECK_ERR(fremovexattr(99, "user.b"), EBADF);
	CHECK(has("f", "user.b"));
}

static void needs_write_permission(void)
{
	SCRATCH();
	/* user.* follows the file's write permission: others may not. */
	AS_USER({
		if (lremovexattr("f", "user.a") != -1 || errno != EACCES)
			_exit(1);
		if (lremovexattr("d", "user.a") != -1 || errno != EACCES)
			_exit(2);
	});
	CHECK(has("f", "user.a"));
	/* Once writable, a user may remove it. */
	CHECK_SYS(chmod("f", 0666));
	AS_USER({
		if (lremovexattr("f", "user.a") != 0)
			_exit(3);
	});
	CHECK(!has("f", "user.a"));
}

static void trusted_names_need_privilege(void)
{
	SCRATCH();
	CHECK_SYS(chmod("f", 0666));
	AS_USER({
		if (lremovexattr("f", "trusted.x") != -1 || errno != EPERM)
			_exit(1);
	});
}

static void path_errors(void)
{
	SCRATCH();
	CHECK_ERR(lremovexattr("missing", "user.a"), ENOENT);
	CHECK_ERR(lremovexattr("f/x", "user.a"), ENOTDIR);
	CHECK_ERR(lremovexattr("", "user.a"), ENOENT);
	CHECK_ERR(lremovexattr((const char *)1, "user.a"), EFAULT);
	/* A dangling link is itself found (and refused); followed, nothing
	 * is found. */
	CHECK_SYS(symlink("nowhere", "dl"));
	CHECK_ERR(lremovexattr("dl", "user.a"), EPERM);
	CHECK_ERR(removexattr("dl", "user.a"), ENOENT);
}

static void read_only_root_erofs(void)
{
	CHECK_ERR(lremovexattr(mt_data("hello.txt"), "user.a"), EROFS);
	CHECK_ERR(lremovexattr("/", "user.a"), EROFS);
}

static const struct mt_case cases[] = {
	MT_CASE(removes_from_file_and_directory),
	MT_CASE(absent_name_enodata),
	MT_CASE(does_not_follow_symlinks),
	MT_CASE(user_names_refused_on_symlinks),
	MT_CASE(name_checks),
	MT_CASE(fremovexattr_on_descriptors),
	MT_CASE(needs_write_permission),
	MT_CASE(trusted_names_need_privilege),
	MT_CASE(path_errors),
	MT_CASE(read_only_root_erofs),
};

MT_MAIN(cases)
