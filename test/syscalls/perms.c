//go:build ignore

/* perms: chmod/fchmod/fchmodat/fchmodat2 and chown/fchown/lchown/
 * fchownat on a writable file system: who may change what, the setuid and
 * setgid bits chown and chmod drop, access() after changes, O_PATH and
 * AT_EMPTY_PATH targets. Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void make_file(const char *name, mode_t mode)
{
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd >= 0)
		close(fd);
	chmod(name, mode);
}

static mode_t mode_of(const char *name)
{
	struct stat st;
	if (lstat(name, &st) < 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

static void chmod_family(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_SYS(chmod("f", 0600));
	CHECK_EQ(mode_of("f"), 0600);
	CHECK_SYS(chmod("f", 0177777)); /* type bits ignored */
	CHECK_EQ(mode_of("f"), 07777);
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(fchmod(fd, 0640));
	CHECK_EQ(mode_of("f"), 0640);
	close(fd);
	CHECK_SYS(fchmodat(AT_FDCWD, "f", 0604, 0));
	CHECK_EQ(mode_of("f"), 0604);
	CHECK_ERR(chmod("nope", 0644), ENOENT);
	CHECK_ERR(fchmod(-1, 0644), EBADF);
	int pfd = CHECK_SYS(open("f", O_PATH));
	CHECK_ERR(fchmod(pfd, 0600), EBADF);
	close(pfd);
	/* chmod follows symlinks; fchmodat2 with AT_SYMLINK_NOFOLLOW refuses
	 * symlinks. */
	CHECK_SYS(symlink("f", "ln"));
	CHECK_SYS(chmod("ln", 0600));
	CHECK_EQ(mode_of("f"), 0600);
	CHECK_ERR(syscall(452 /* fchmodat2 */, AT_FDCWD, "ln", 0600, AT_SYMLINK_NOFOLLOW), EOPNOTSUPP);
	CHECK_SYS(syscall(452 /* fchmodat2 */, AT_FDCWD, "f", 0640, AT_SYMLINK_NOFOLLOW));
	CHECK_EQ(mode_of("f"), 0640);
	CHECK_ERR(chmod("/etc/passwd", 0644), EROFS);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(chmod("d", 01777));
	CHECK_EQ(mode_of("d"), 01777);
}

static void chmod_ctime(void)
{
	ENTER();
	make_file("f", 0644);
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", old, 0));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	time_t before = st.st_ctim.tv_sec;
	CHECK_SYS(chmod("f", 0600));
	CHECK_SYS(stat("f", &st));
	CHECK_GE(st.st_ctim.tv_sec, before);
	CHECK_EQ(st.st_mtim.tv_sec, 1000);
}

static void chmod_permissions(void)
{
	ENTER();
	make_file("root", 0666);
	CHECK_SYS(chmod(".", 0777));
	AS_USER({
		CHILD_ERR(chmod("root", 0600), EPERM);
		int f = open("mine", O_CREAT | O_WRONLY, 0644);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(fchmod(f, 0600) == 0);
		CHILD_CHECK(fchown(f, -1, 1000) == 0);
		close(f);
	});
	CHECK_SYS(chown("mine", 1000, 4242));
	AS_USER({
		/* A non-member setting setgid: the bit is dropped silently. */
		CHILD_CHECK(chmod("mine", 02755) == 0);
		struct stat s;
		CHILD_CHECK(stat("mine", &s) == 0);
		CHILD_CHECK((s.st_mode & 07777) == 0755);
		CHILD_CHECK(chmod("mine", 04755) == 0);
		CHILD_CHECK(stat("mine", &s) == 0);
		CHILD_CHECK((s.st_mode & 07777) == 04755);
	});
}

static void chown_family(void)
{
	ENTER();
	make_file("f", 0644);
	CHECK_SYS(chown("f", 1234, 5678));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 5678);
	CHECK_SYS(chown("f", -1, 42));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 42);
	CHECK_SYS(symlink("f", "ln"));
	CHECK_SYS(lchown("ln", 77, 88));
	CHECK_SYS(lstat("ln", &st));
	CHECK_EQ(st.st_uid, 77);
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_SYS(fchownat(AT_FDCWD, "ln", 99, -1, AT_SYMLINK_NOFOLLOW));
	CHECK_SYS(lstat("ln", &st));
	CHECK_EQ(st.st_uid, 99);
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(fchown(fd, 0, 0));
	close(fd);
	int pfd = CHECK_SYS(open("f", O_PATH));
	CHECK_ERR(fchown(pfd, 1, 1), EBADF);
	CHECK_SYS(fchownat(pfd, "", 3, 3, AT_EMPTY_PATH));
	close(pfd);
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(st.st_uid, 3);
	CHECK_ERR(fchownat(AT_FDCWD, "f", 0, 0, 0x4), EINVAL);
	CHECK_ERR(chown("/etc/passwd", 0, 0), EROFS);
}

static void chown_drops_setid(void)
{
	ENTER();
	make_file("f", 06755);
	CHECK_EQ(mode_of("f"), 06755);
	CHECK_SYS(chown("f", 0, 0));
	CHECK_EQ(mode_of("f"), 0755);
	/* setgid without group execute (mandatory locking) stays. */
	CHECK_SYS(chmod("f", 02745));
	CHECK_SYS(chown("f", -1, 0));
	CHECK_EQ(mode_of("f"), 02745);
	/* Directories keep theirs. */
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(chmod("d", 06755));
	CHECK_SYS(chown("d", 1, 1));
	CHECK_EQ(mode_of("d"), 06755);
}

static void chown_permissions(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	make_file("root", 0666);
	make_file("suid", 04755);
	make_file("plain", 0755);
	AS_USER({
		CHILD_ERR(chown("root", 1000, 1000), EPERM);
		int f = open("mine", O_CREAT | O_WRONLY, 0644);
		CHILD_CHECK(f >= 0);
		close(f);
		CHILD_ERR(chown("mine", 0, -1), EPERM);
		CHILD_CHECK(chown("mine", 1000, -1) == 0); /* no change */
		CHILD_CHECK(chown("mine", -1, 1000) == 0);
		CHILD_ERR(chown("mine", -1, 0), EPERM);
		/* Even a no-op chown drops setuid, which only the owner may. */
		CHILD_ERR(chown("suid", -1, -1), EPERM);
		CHILD_CHECK(chown("plain", -1, -1) == 0);
	});
}

static void writes_drop_setid(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	make_file("w", 06775);
	make_file("t", 06775);
	make_file("o", 06775);
	make_file("m", 02664);
	CHECK_SYS(chown("w", 1000, 1000));
	CHECK_SYS(chown("t", 1000, 1000));
	CHECK_SYS(chown("o", 1000, 1000));
	CHECK_SYS(chown("m", 1000, 1000));
	CHECK_SYS(chmod("w", 06775));
	CHECK_SYS(chmod("t", 06775));
	CHECK_SYS(chmod("o", 06775));
	CHECK_SYS(chmod("m", 02664));
	AS_USER({
		int f = open("w", O_WRONLY);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(write(f, "x", 1) == 1);
		close(f);
		CHILD_CHECK(truncate("t", 10) == 0);
		f = open("o", O_WRONLY | O_TRUNC);
		CHILD_CHECK(f >= 0);
		close(f);
		f = open("m", O_WRONLY);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(write(f, "x", 1) == 1);
		close(f);
	});
	CHECK_EQ(mode_of("w"), 0775);
	CHECK_EQ(mode_of("t"), 0775);
	CHECK_EQ(mode_of("o"), 0775);
	/* setgid without group execute is a locking mark, kept. */
	CHECK_EQ(mode_of("m"), 02664);
}

static void access_after_chmod(void)
{
	ENTER();
	make_file("f", 0600);
	CHECK_SYS(chmod(".", 0755));
	AS_USER({
		CHILD_ERR(access("f", R_OK), EACCES);
	});
	CHECK_SYS(chmod("f", 0604));
	AS_USER({
		CHILD_CHECK(access("f", R_OK) == 0);
		CHILD_ERR(access("f", W_OK), EACCES);
		int f = open("f", O_RDONLY);
		CHILD_CHECK(f >= 0);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(chmod_family),
	MT_CASE(chmod_ctime),
	MT_CASE(chmod_permissions),
	MT_CASE(chown_family),
	MT_CASE(chown_drops_setid),
	MT_CASE(chown_permissions),
	MT_CASE(writes_drop_setid),
	MT_CASE(access_after_chmod),
};

MT_MAIN(cases)
