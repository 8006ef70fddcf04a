//go:build ignore

/* s3_xattr_fd: the descriptor forms of the extended attribute calls
 * (fsetxattr, fgetxattr, flistxattr, fremovexattr) on tmpfs: read-only and
 * O_PATH descriptors, unlinked files, directories, pipes and memfds, the
 * trusted.* namespace, list sizing, name and value limits, flags, and the
 * lsetxattr/llistxattr forms on symlinks. Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int make(const char *name, int flags)
{
	return open(name, O_CREAT | flags, 0644);
}

static void fd_roundtrip_readonly(void)
{
	ENTER();
	int w = CHECK_SYS(make("f", O_WRONLY));
	CHECK_SYS(close(w));
	/* Attributes need no write access to the descriptor, only to the
	 * inode. */
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(fsetxattr(fd, "user.a", "abc", 3, 0));
	char buf[16] = {0};
	CHECK_EQ(fgetxattr(fd, "user.a", buf, sizeof buf), 3);
	CHECK_MEMEQ(buf, "abc", 3);
	CHECK_EQ(getxattr("f", "user.a", buf, sizeof buf), 3);
	CHECK_SYS(fremovexattr(fd, "user.a"));
	CHECK_ERR(fgetxattr(fd, "user.a", buf, sizeof buf), ENODATA);
	CHECK_ERR(fremovexattr(fd, "user.a"), ENODATA);
}

static void fd_flags(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	CHECK_ERR(fsetxattr(fd, "user.x", "1", 1, XATTR_REPLACE), ENODATA);
	CHECK_SYS(fsetxattr(fd, "user.x", "1", 1, XATTR_CREATE));
	CHECK_ERR(fsetxattr(fd, "user.x", "2", 1, XATTR_CREATE), EEXIST);
	CHECK_SYS(fsetxattr(fd, "user.x", "22", 2, XATTR_REPLACE));
	CHECK_EQ(fgetxattr(fd, "user.x", NULL, 0), 2);
	/* Both flags together fail whether the name exists or not. */
	CHECK_ERR(fsetxattr(fd, "user.x", "3", 1, XATTR_CREATE | XATTR_REPLACE), EEXIST);
	CHECK_ERR(fsetxattr(fd, "user.y", "3", 1, XATTR_CREATE | XATTR_REPLACE), ENODATA);
	/* Unknown flags: EINVAL. */
	CHECK_ERR(fsetxattr(fd, "user.x", "3", 1, 4), EINVAL);
	char buf[4];
	CHECK_EQ(fgetxattr(fd, "user.x", buf, sizeof buf), 2);
	CHECK_MEMEQ(buf, "22", 2);
}

static void fd_errors(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	char buf[8];
	CHECK_ERR(fsetxattr(99, "user.a", "1", 1, 0), EBADF);
	CHECK_ERR(fgetxattr(99, "user.a", buf, sizeof buf), EBADF);
	CHECK_ERR(flistxattr(99, buf, sizeof buf), EBADF);
	CHECK_ERR(fremovexattr(99, "user.a"), EBADF);
	CHECK_ERR(fsetxattr(-1, "user.a", "1", 1, 0), EBADF);
	CHECK_ERR(fsetxattr(fd, (const char *)1, "1", 1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_fsetxattr, fd, "user.a", (const void *)1, 1, 0), EFAULT);
	CHECK_ERR(fgetxattr(fd, (const char *)1, buf, sizeof buf), EFAULT);
	CHECK_SYS(fsetxattr(fd, "user.a", "1", 1, 0));
	CHECK_ERR(syscall(SYS_fgetxattr, fd, "user.a", (void *)1, sizeof buf), EFAULT);
	CHECK_ERR(syscall(SYS_flistxattr, fd, (char *)1, 64), EFAULT);
	/* Names: empty is ERANGE, no namespace prefix EOPNOTSUPP, longer
	 * than 255 bytes ERANGE. */
	CHECK_ERR(fsetxattr(fd, "", "1", 1, 0), ERANGE);
	CHECK_ERR(fsetxattr(fd, "plain", "1", 1, 0), EOPNOTSUPP);
	CHECK_ERR(fgetxattr(fd, "bogus.a", buf, sizeof buf), EOPNOTSUPP);
	char name[300];
	strcpy(name, "user.");
	memset(name + 5, 'n', 260);
	name[265] = 0;
	CHECK_ERR(fsetxattr(fd, name, "1", 1, 0), ERANGE);
	CHECK_ERR(fgetxattr(fd, name, buf, sizeof buf), ERANGE);
	/* Values above 64 KiB: E2BIG. */
	static char big[65537];
	CHECK_ERR(fsetxattr(fd, "user.big", big, sizeof big, 0), E2BIG);
	CHECK_ERR(fgetxattr(fd, "user.big", buf, sizeof buf), ENODATA);
}

static void opath_descriptor(void)
{
	ENTER();
	int w = CHECK_SYS(make("f", O_WRONLY));
	CHECK_SYS(fsetxattr(w, "user.a", "1", 1, 0));
	int fd = CHECK_SYS(open("f", O_PATH));
	char buf[8];
	/* Since Linux 6.? O_PATH descriptors may be used; before, EBADF.
	 * Accept both, but the four calls must agree. */
	errno = 0;
	ssize_t r = fgetxattr(fd, "user.a", buf, sizeof buf);
	if (r == -1) {
		CHECK_EQ(errno, EBADF);
		CHECK_ERR(fsetxattr(fd, "user.b", "1", 1, 0), EBADF);
		CHECK_ERR(flistxattr(fd, buf, sizeof buf), EBADF);
		CHECK_ERR(fremovexattr(fd, "user.a"), EBADF);
	} else {
		CHECK_EQ(r, 1);
		CHECK_SYS(fsetxattr(fd, "user.b", "2", 1, 0));
		CHECK_EQ(flistxattr(fd, NULL, 0), 14);
		CHECK_SYS(fremovexattr(fd, "user.b"));
	}
}

static void list_sizing(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	CHECK_EQ(flistxattr(fd, NULL, 0), 0);
	CHECK_SYS(fsetxattr(fd, "user.one", "1", 1, 0));
	CHECK_SYS(fsetxattr(fd, "user.three", "333", 3, 0));
	/* The list is the NUL-terminated names: 9 + 11 bytes. */
	CHECK_EQ(flistxattr(fd, NULL, 0), 20);
	char buf[64];
	CHECK_ERR(flistxattr(fd, buf, 19), ERANGE);
	memset(buf, 'x', sizeof buf);
	CHECK_EQ(flistxattr(fd, buf, 20), 20);
	int seen_one = 0, seen_three = 0;
	for (char *p = buf; p < buf + 20; p += strlen(p) + 1) {
		if (strcmp(p, "user.one") == 0)
			seen_one++;
		else if (strcmp(p, "user.three") == 0)
			seen_three++;
		else
			FAIL("unexpected name %s", p);
	}
	CHECK_EQ(seen_one, 1);
	CHECK_EQ(seen_three, 1);
	CHECK_EQ(buf[20], 'x');
}

static void unlinked_and_memfd(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	CHECK_SYS(unlink("f"));
	/* An unlinked file keeps its attributes reachable through fds. */
	CHECK_SYS(fsetxattr(fd, "user.gone", "yes", 3, 0));
	char buf[8];
	CHECK_EQ(fgetxattr(fd, "user.gone", buf, sizeof buf), 3);
	/* memfds live on tmpfs and take user attributes too. */
	int m = CHECK_SYS(memfd_create("x", 0));
	CHECK_SYS(fsetxattr(m, "user.m", "v", 1, 0));
	CHECK_EQ(fgetxattr(m, "user.m", buf, sizeof buf), 1);
	CHECK_EQ(flistxattr(m, NULL, 0), 7);
}

static void directory_and_pipe(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fsetxattr(d, "user.dir", "1", 1, 0));
	char buf[8];
	CHECK_EQ(getxattr("d", "user.dir", buf, sizeof buf), 1);
	/* user.* is allowed only on regular files and directories: a pipe
	 * says EPERM (setting) and ENODATA (getting). */
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(fsetxattr(p[0], "user.p", "1", 1, 0), EPERM);
	CHECK_ERR(fgetxattr(p[0], "user.p", buf, sizeof buf), ENODATA);
}

static void trusted_namespace(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	/* trusted.* needs CAP_SYS_ADMIN in the initial user namespace; the
	 * native run is in a user namespace, so accept EPERM there but the
	 * call must then leave nothing behind. */
	errno = 0;
	int r = fsetxattr(fd, "trusted.t", "1", 1, 0);
	char buf[8];
	if (r == 0) {
		CHECK_EQ(fgetxattr(fd, "trusted.t", buf, sizeof buf), 1);
	} else {
		CHECK_EQ(errno, EPERM);
		CHECK_ERR(fgetxattr(fd, "trusted.t", buf, sizeof buf), ENODATA);
	}
	/* Without the capability, trusted.* names are hidden from lists and
	 * cannot be read. */
	CHECK_SYS(fsetxattr(fd, "user.u", "1", 1, 0));
	CHECK_SYS(fchmod(fd, 0666));
	int fd2 = fd;
	AS_USER({
		if (flistxattr(fd2, buf, sizeof buf) != 7 || strcmp(buf, "user.u") != 0)
			_exit(1);
		if (fsetxattr(fd2, "trusted.x", "1", 1, 0) != -1 || errno != EPERM)
			_exit(2);
	});
}

static void user_needs_ownership_or_write(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	CHECK_SYS(fchmod(fd, 0644));
	CHECK_SYS(fsetxattr(fd, "user.a", "1", 1, 0));
	int ro = CHECK_SYS(open("f", O_RDONLY));
	/* Another user with read permission may read attributes but not
	 * write them (no write permission on the inode). */
	AS_USER({
		char b[4];
		if (fgetxattr(ro, "user.a", b, sizeof b) != 1)
			_exit(1);
		if (fsetxattr(ro, "user.b", "1", 1, 0) != -1 || errno != EACCES)
			_exit(2);
		if (fremovexattr(ro, "user.a") != -1 || errno != EACCES)
			_exit(3);
	});
	CHECK_SYS(fchmod(fd, 0600));
	/* Without read permission, reading is EACCES too. */
	AS_USER({
		char b[4];
		if (fgetxattr(ro, "user.a", b, sizeof b) != -1 || errno != EACCES)
			_exit(1);
	});
}

static void symlink_forms(void)
{
	ENTER();
	int fd = CHECK_SYS(make("f", O_RDWR));
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(symlink("missing", "dangling"));
	/* user.* attributes are not allowed on symlinks themselves. */
	CHECK_ERR(lsetxattr("l", "user.a", "1", 1, 0), EPERM);
	CHECK_EQ(llistxattr("l", NULL, 0), 0);
	/* The followed forms reach the target; a dangling link is ENOENT. */
	CHECK_SYS(setxattr("l", "user.a", "1", 1, 0));
	char buf[8];
	CHECK_EQ(fgetxattr(fd, "user.a", buf, sizeof buf), 1);
	CHECK_ERR(setxattr("dangling", "user.a", "1", 1, 0), ENOENT);
	CHECK_ERR(lgetxattr("dangling", "user.a", buf, sizeof buf), ENODATA);
	CHECK_ERR(lsetxattr("missing", "user.a", "1", 1, 0), ENOENT);
	CHECK_ERR(llistxattr("f/x", buf, sizeof buf), ENOTDIR);
}

static const struct mt_case cases[] = {
	MT_CASE(fd_roundtrip_readonly),
	MT_CASE(fd_flags),
	MT_CASE(fd_errors),
	MT_CASE(opath_descriptor),
	MT_CASE(list_sizing),
	MT_CASE(unlinked_and_memfd),
	MT_CASE(directory_and_pipe),
	MT_CASE(trusted_namespace),
	MT_CASE(user_needs_ownership_or_write),
	MT_CASE(symlink_forms),
};

MT_MAIN(cases)
