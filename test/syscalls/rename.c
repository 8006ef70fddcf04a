//go:build ignore

/* rename: rename/renameat/renameat2 on a writable file system: files and
 * directories within and between directories, replacing, the type and
 * emptiness rules, moving a directory below itself, RENAME_NOREPLACE and
 * RENAME_EXCHANGE, EXDEV across mounts, open files and working
 * directories that move. Works in /dev/shm. */
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

static int r2(const char *a, const char *b, unsigned flags)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

static void make_file(const char *name, const char *content)
{
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, content, strlen(content)) < 0) {
	}
	close(fd);
}

static int read_file(const char *name, char *buf, size_t n)
{
	memset(buf, 0, n);
	int fd = open(name, O_RDONLY);
	if (fd < 0)
		return -1;
	int r = read(fd, buf, n - 1);
	close(fd);
	return r;
}

static void rename_files(void)
{
	ENTER();
	make_file("a", "A");
	struct stat before, after;
	CHECK_SYS(stat("a", &before));
	CHECK_SYS(rename("a", "b"));
	CHECK_ERR(stat("a", &after), ENOENT);
	CHECK_SYS(stat("b", &after));
	CHECK_EQ(after.st_ino, before.st_ino);
	make_file("c", "C");
	CHECK_SYS(rename("b", "c")); /* replaces */
	char buf[8];
	CHECK_EQ(read_file("c", buf, sizeof(buf)), 1);
	CHECK_STREQ(buf, "A");
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(renameat(AT_FDCWD, "c", AT_FDCWD, "d/c"));
	CHECK_EQ(read_file("d/c", buf, sizeof(buf)), 1);
	int dfd = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(renameat(dfd, "c", AT_FDCWD, "back"));
	close(dfd);
	CHECK_SYS(stat("back", &after));
	/* Renaming a name onto itself, or onto another link of the same
	 * file, does nothing. */
	CHECK_SYS(rename("back", "back"));
	CHECK_SYS(link("back", "alias"));
	CHECK_SYS(rename("back", "alias"));
	CHECK_SYS(stat("back", &after));
	CHECK_SYS(stat("alias", &after));
	CHECK_EQ(after.st_nlink, 2);
}

static void rename_dirs(void)
{
	ENTER();
	CHECK_SYS(mkdir("a", 0755));
	CHECK_SYS(mkdir("a/sub", 0755));
	make_file("a/sub/f", "F");
	CHECK_SYS(mkdir("b", 0755));
	CHECK_SYS(rename("a/sub", "b/moved"));
	struct stat st;
	CHECK_SYS(stat("a", &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(stat("b", &st));
	CHECK_EQ(st.st_nlink, 3);
	char buf[8];
	CHECK_EQ(read_file("b/moved/f", buf, sizeof(buf)), 1);
	/* ".." of the moved directory is its new parent. */
	struct stat dotdot;
	CHECK_SYS(stat("b/moved/..", &dotdot));
	CHECK_SYS(stat("b", &st));
	CHECK_EQ(dotdot.st_ino, st.st_ino);
	/* A directory may replace an empty one. */
	CHECK_SYS(mkdir("empty", 0755));
	CHECK_SYS(rename("a", "empty"));
	CHECK_ERR(stat("a", &st), ENOENT);
	CHECK_SYS(rename("empty/", "again/"));
	CHECK_SYS(stat("again", &st));
}

static void rename_errors(void)
{
	ENTER();
	make_file("f", "F");
	make_file("g", "G");
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(mkdir("full", 0755));
	make_file("full/x", "X");
	CHECK_SYS(mkdir("d/sub", 0755));
	CHECK_ERR(rename("nope", "x"), ENOENT);
	CHECK_ERR(rename("f", "nodir/x"), ENOENT);
	CHECK_ERR(rename("f", "d"), EISDIR);
	CHECK_ERR(rename("d", "f"), ENOTDIR);
	CHECK_ERR(rename("d", "full"), ENOTEMPTY);
	CHECK_ERR(rename("d", "d/sub/x"), EINVAL);
	CHECK_ERR(rename("d", "d/x"), EINVAL);
	CHECK_ERR(rename("d/sub", "d"), ENOTEMPTY);
	CHECK_ERR(rename("f/", "x"), ENOTDIR);
	CHECK_ERR(rename("f", "x/"), ENOTDIR);
	CHECK_ERR(rename(".", "x"), EBUSY);
	CHECK_ERR(rename("d/..", "x"), EBUSY);
	CHECK_ERR(rename("f", "."), EBUSY);
	CHECK_ERR(rename("f", "/dev/shm/../moat-x"), EXDEV);
	CHECK_ERR(rename("f", "/moat-x"), EXDEV);
	CHECK_ERR(rename("/etc/passwd", "/etc/moat-x"), EROFS);
	CHECK_ERR(renameat2(AT_FDCWD, "f", AT_FDCWD, "x", 0x100), EINVAL);
	CHECK_ERR(r2("f", "g", RENAME_EXCHANGE | RENAME_NOREPLACE), EINVAL);
	char buf[8];
	CHECK_EQ(read_file("f", buf, sizeof(buf)), 1);
	CHECK_STREQ(buf, "F");
}

static void rename_noreplace(void)
{
	ENTER();
	make_file("f", "F");
	make_file("g", "G");
	CHECK_ERR(r2("f", "g", RENAME_NOREPLACE), EEXIST);
	CHECK_ERR(r2("f", ".", RENAME_NOREPLACE), EEXIST);
	CHECK_SYS(r2("f", "h", RENAME_NOREPLACE));
	struct stat st;
	CHECK_ERR(stat("f", &st), ENOENT);
	CHECK_SYS(stat("h", &st));
}

static void rename_exchange(void)
{
	ENTER();
	make_file("f", "F");
	CHECK_SYS(mkdir("d", 0755));
	make_file("d/in", "I");
	CHECK_SYS(mkdir("other", 0755));
	CHECK_SYS(r2("f", "d", RENAME_EXCHANGE));
	struct stat st;
	CHECK_SYS(stat("f/in", &st));
	char buf[8];
	CHECK_EQ(read_file("d", buf, sizeof(buf)), 1);
	CHECK_STREQ(buf, "F");
	CHECK_ERR(r2("d", "nope", RENAME_EXCHANGE), ENOENT);
	/* Across directories: both parents' link counts follow. */
	CHECK_SYS(r2("f", "other/x", 0));
	CHECK_SYS(stat(".", &st));
	nlink_t here = st.st_nlink;
	CHECK_SYS(r2("d", "other/x", RENAME_EXCHANGE));
	CHECK_SYS(stat(".", &st));
	CHECK_EQ(st.st_nlink, here + 1);
	CHECK_SYS(stat("other", &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(stat("d/in", &st));
	CHECK_ERR(r2("d", "d/in", RENAME_EXCHANGE), EINVAL);
}

static void open_files_follow(void)
{
	ENTER();
	CHECK_SYS(mkdir("old", 0755));
	make_file("old/f", "F");
	int fd = CHECK_SYS(open("old/f", O_RDONLY));
	CHECK_SYS(chdir("old"));
	CHECK_SYS(rename("../old", "../new"));
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	const char *tail = "/new";
	CHECK_STREQ(cwd + strlen(cwd) - strlen(tail), tail);
	char path[64], link[PATH_MAX] = {0};
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	const char *ftail = "/new/f";
	CHECK(n > (ssize_t)strlen(ftail));
	CHECK_STREQ(link + n - strlen(ftail), ftail);
	/* Replacing a file leaves open descriptors on the old one. */
	make_file("g", "G");
	CHECK_SYS(rename("g", "f"));
	char buf[4] = {0};
	CHECK_EQ(read(fd, buf, 3), 1);
	CHECK_STREQ(buf, "F");
	n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	CHECK(strstr(link, "(deleted)") != NULL);
	close(fd);
}

static void rename_permissions(void)
{
	ENTER();
	CHECK_SYS(mkdir("mine", 0777));
	CHECK_SYS(chmod("mine", 0777));
	CHECK_SYS(mkdir("ro", 0755));
	make_file("mine/f", "F");
	CHECK_SYS(mkdir("mine/sub", 0755));
	AS_USER({
		CHILD_ERR(rename("mine/f", "ro/f"), EACCES);
		CHILD_ERR(rename("ro", "mine/ro"), EACCES);
		/* In the same parent a directory needs no permission on
		 * itself; moving it to another parent needs write permission
		 * on it (its ".." changes). */
		CHILD_CHECK(rename("mine/sub", "mine/sub2") == 0);
		CHILD_CHECK(mkdir("mine/dest", 0755) == 0);
		CHILD_CHECK(rename("mine/sub2", "mine/dest/sub") == -1 && errno == EACCES);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(rename_files),
	MT_CASE(rename_dirs),
	MT_CASE(rename_errors),
	MT_CASE(rename_noreplace),
	MT_CASE(rename_exchange),
	MT_CASE(open_files_follow),
	MT_CASE(rename_permissions),
};

MT_MAIN(cases)
