//go:build ignore

/* xattr: extended attributes on a writable file system: the user.*
 * namespace through getxattr/setxattr/listxattr/removexattr and their l*
 * and f* forms, XATTR_CREATE/XATTR_REPLACE, buffer sizes, name and flag
 * errors, node types, permissions. Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static void make_file(const char *name, mode_t mode)
{
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd >= 0)
		close(fd);
	chmod(name, mode);
}

static void set_get_remove(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_EQ(listxattr("f", NULL, 0), 0);
	CHECK_ERR(getxattr("f", "user.a", NULL, 0), ENODATA);
	CHECK_SYS(setxattr("f", "user.a", "value", 5, 0));
	CHECK_EQ(getxattr("f", "user.a", NULL, 0), 5);
	char buf[64] = {0};
	CHECK_EQ(getxattr("f", "user.a", buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "value", 5);
	CHECK_ERR(getxattr("f", "user.a", buf, 4), ERANGE);
	CHECK_SYS(setxattr("f", "user.a", "v2", 2, 0));
	CHECK_EQ(getxattr("f", "user.a", buf, sizeof(buf)), 2);
	CHECK_SYS(setxattr("f", "user.empty", "", 0, 0));
	CHECK_EQ(getxattr("f", "user.empty", buf, sizeof(buf)), 0);
	CHECK_SYS(removexattr("f", "user.a"));
	CHECK_ERR(getxattr("f", "user.a", buf, sizeof(buf)), ENODATA);
	CHECK_ERR(removexattr("f", "user.a"), ENODATA);
	/* Attributes belong to the file, whatever its name. */
	CHECK_SYS(setxattr("f", "user.k", "1", 1, 0));
	CHECK_SYS(link("f", "g"));
	CHECK_EQ(getxattr("g", "user.k", buf, sizeof(buf)), 1);
	CHECK_SYS(rename("g", "h"));
	CHECK_EQ(getxattr("h", "user.k", buf, sizeof(buf)), 1);
}

static void create_replace(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_ERR(setxattr("f", "user.x", "1", 1, XATTR_REPLACE), ENODATA);
	CHECK_SYS(setxattr("f", "user.x", "1", 1, XATTR_CREATE));
	CHECK_ERR(setxattr("f", "user.x", "2", 1, XATTR_CREATE), EEXIST);
	CHECK_SYS(setxattr("f", "user.x", "3", 1, XATTR_REPLACE));
	char c;
	CHECK_EQ(getxattr("f", "user.x", &c, 1), 1);
	CHECK_EQ(c, '3');
	CHECK_ERR(setxattr("f", "user.x", "4", 1, 0x4), EINVAL);
}

static int has_name(const char *list, ssize_t n, const char *name)
{
	for (ssize_t i = 0; i < n; i += strlen(list + i) + 1)
		if (strcmp(list + i, name) == 0)
			return 1;
	return 0;
}

static void list_names(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_SYS(setxattr("f", "user.one", "1", 1, 0));
	CHECK_SYS(setxattr("f", "user.two", "22", 2, 0));
	ssize_t want = strlen("user.one") + 1 + strlen("user.two") + 1;
	CHECK_EQ(listxattr("f", NULL, 0), want);
	char list[256];
	CHECK_EQ(listxattr("f", list, sizeof(list)), want);
	CHECK(has_name(list, want, "user.one"));
	CHECK(has_name(list, want, "user.two"));
	CHECK_ERR(listxattr("f", list, want - 1), ERANGE);
	CHECK_SYS(removexattr("f", "user.one"));
	CHECK_EQ(listxattr("f", list, sizeof(list)), (ssize_t)strlen("user.two") + 1);
}

static void fd_and_symlink_forms(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_SYS(symlink("f", "ln"));
	int fd = CHECK_SYS(open("f", O_RDWR));
	CHECK_SYS(fsetxattr(fd, "user.fd", "F", 1, 0));
	char buf[8];
	CHECK_EQ(fgetxattr(fd, "user.fd", buf, sizeof(buf)), 1);
	CHECK_EQ(flistxattr(fd, buf, sizeof(buf)), 8);
	CHECK_SYS(fremovexattr(fd, "user.fd"));
	/* getxattr follows the symlink; the l* forms act on the link, which
	 * takes no user.* attributes. */
	CHECK_SYS(setxattr("ln", "user.via", "V", 1, 0));
	CHECK_EQ(getxattr("f", "user.via", buf, sizeof(buf)), 1);
	CHECK_ERR(lsetxattr("ln", "user.l", "L", 1, 0), EPERM);
	CHECK_ERR(lgetxattr("ln", "user.via", buf, sizeof(buf)), ENODATA);
	CHECK_EQ(llistxattr("ln", buf, sizeof(buf)), 0);
	int pfd = CHECK_SYS(open("f", O_PATH));
	CHECK_ERR(fgetxattr(pfd, "user.via", buf, sizeof(buf)), EBADF);
	CHECK_ERR(fsetxattr(pfd, "user.via", "x", 1, 0), EBADF);
	close(pfd);
	CHECK_ERR(fgetxattr(-1, "user.via", buf, sizeof(buf)), EBADF);
	CHECK_SYS(mkfifo("p", 0644));
	CHECK_ERR(setxattr("p", "user.p", "P", 1, 0), EPERM);
	CHECK_ERR(getxattr("p", "user.p", buf, sizeof(buf)), ENODATA);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(setxattr("d", "user.dir", "D", 1, 0));
	CHECK_EQ(getxattr("d", "user.dir", buf, sizeof(buf)), 1);
	close(fd);
}

static void name_and_size_errors(void)
{
	ENTER();
	make_file("f", 0644);
	char buf[8];
	CHECK_ERR(setxattr("f", "", "x", 1, 0), ERANGE);
	CHECK_ERR(getxattr("f", "", buf, sizeof(buf)), ERANGE);
	char longname[300] = "user.";
	memset(longname + 5, 'n', 251);
	longname[256] = 0;
	CHECK_ERR(setxattr("f", longname, "x", 1, 0), ERANGE);
	longname[255] = 0;
	CHECK_SYS(setxattr("f", longname, "x", 1, 0));
	CHECK_ERR(setxattr("f", "foo.bar", "x", 1, 0), EOPNOTSUPP);
	CHECK_ERR(getxattr("f", "foo.bar", buf, sizeof(buf)), EOPNOTSUPP);
	static char big[65537];
	CHECK_ERR(setxattr("f", "user.big", big, sizeof(big), 0), E2BIG);
	CHECK_ERR(syscall(SYS_setxattr, "f", "user.a", 8L, 1L, 0), EFAULT);
	CHECK_ERR(setxattr("nope", "user.a", "x", 1, 0), ENOENT);
	CHECK_ERR(setxattr("/etc/passwd", "user.a", "x", 1, 0), EROFS);
	CHECK_ERR(removexattr("/etc/passwd", "user.a"), EROFS);
}

static void permissions(void)
{
	ENTER();
	make_file("ro", 0644);
	make_file("secret", 0600);
	CHECK_SYS(setxattr("secret", "user.s", "S", 1, 0));
	CHECK_SYS(setxattr("ro", "user.r", "R", 1, 0));
	CHECK_SYS(mkdir("sticky", 0777));
	CHECK_SYS(chmod("sticky", 01777));
	CHECK_SYS(chmod(".", 0777));
	AS_USER({
		char b[4];
		CHILD_ERR(setxattr("ro", "user.r", "x", 1, 0), EACCES);
		CHILD_ERR(removexattr("ro", "user.r"), EACCES);
		CHILD_CHECK(getxattr("ro", "user.r", b, sizeof(b)) == 1);
		CHILD_ERR(getxattr("secret", "user.s", b, sizeof(b)), EACCES);
		/* listxattr needs no permission on the file. */
		CHILD_CHECK(listxattr("secret", b, sizeof(b)) == 0 || errno == ERANGE);
		CHILD_ERR(setxattr("sticky", "user.x", "x", 1, 0), EPERM);
		CHILD_ERR(setxattr("ro", "trusted.x", "x", 1, 0), EPERM);
		CHILD_ERR(getxattr("ro", "trusted.x", b, sizeof(b)), ENODATA);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(set_get_remove),
	MT_CASE(create_replace),
	MT_CASE(list_names),
	MT_CASE(fd_and_symlink_forms),
	MT_CASE(name_and_size_errors),
	MT_CASE(permissions),
};

MT_MAIN(cases)
