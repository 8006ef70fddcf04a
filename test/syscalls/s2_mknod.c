//go:build ignore

/* s2_mknod: mknod and mknodat for FIFOs and regular files: types, the
 * umask, dirfds, existing names and the path, type and permission errors. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static void mknod_fifo(void)
{
	ENTER();
	umask(022);
	CHECK_SYS(mknod("p", S_IFIFO | 0666, 0));
	struct stat st;
	CHECK_SYS(lstat("p", &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0644);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_nlink, 1);
}

static void mknod_fifo_works_as_pipe(void)
{
	ENTER();
	CHECK_SYS(mknod("p", S_IFIFO | 0600, 0));
	/* No reader yet: a non-blocking writer gets ENXIO. */
	CHECK_ERR(open("p", O_WRONLY | O_NONBLOCK), ENXIO);
	int r = CHECK_SYS(open("p", O_RDONLY | O_NONBLOCK));
	int w = CHECK_SYS(open("p", O_WRONLY | O_NONBLOCK));
	CHECK_EQ(write(w, "hi", 2), 2);
	char buf[4];
	CHECK_EQ(read(r, buf, sizeof(buf)), 2);
	CHECK_MEMEQ(buf, "hi", 2);
	CHECK_ERR(read(r, buf, sizeof(buf)), EAGAIN);
	CHECK_SYS(close(w));
	CHECK_EQ(read(r, buf, sizeof(buf)), 0);
}

static void mknod_regular(void)
{
	ENTER();
	CHECK_SYS(mknod("f", S_IFREG | 0600, 0));
	/* A type of zero also means a regular file. */
	CHECK_SYS(mknod("g", 0600, 0));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 0);
	CHECK_SYS(stat("g", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0600);
}

static void mknod_bad_type(void)
{
	ENTER();
	CHECK_ERR(mknod("d", S_IFDIR | 0755, 0), EPERM);
	CHECK_ERR(mknod("x", 0170000 | 0644, 0), EINVAL);
	CHECK_ERR(mknod("l", S_IFLNK | 0777, 0), EINVAL);
	CHECK_ERR(access("d", F_OK), ENOENT);
}

static void mknod_existing_eexist(void)
{
	ENTER();
	CHECK_SYS(mknod("p", S_IFIFO | 0600, 0));
	CHECK_ERR(mknod("p", S_IFIFO | 0600, 0), EEXIST);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(mknod("d", S_IFIFO | 0600, 0), EEXIST);
	CHECK_SYS(symlink("nowhere", "dangling"));
	/* A dangling symlink is not followed: the name exists. */
	CHECK_ERR(mknod("dangling", S_IFIFO | 0600, 0), EEXIST);
}

static void mknod_path_errors(void)
{
	ENTER();
	CHECK_SYS(mknod("f", S_IFREG | 0600, 0));
	CHECK_ERR(mknod("missing/p", S_IFIFO | 0600, 0), ENOENT);
	CHECK_ERR(mknod("f/p", S_IFIFO | 0600, 0), ENOTDIR);
	CHECK_ERR(mknod("", S_IFIFO | 0600, 0), ENOENT);
	CHECK_ERR(syscall(SYS_mknod, (void *)1, S_IFIFO | 0600, 0), EFAULT);
	/* The root is read-only in both runs. */
	CHECK_ERR(mknod("/moat-s2-p", S_IFIFO | 0600, 0), EROFS);
}

static void mknodat_dirfd(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(mknodat(d, "p", S_IFIFO | 0600, 0));
	struct stat st;
	CHECK_SYS(stat("d/p", &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_SYS(mknodat(AT_FDCWD, "q", S_IFIFO | 0600, 0));
	CHECK_ERR(mknodat(-1, "r", S_IFIFO | 0600, 0), EBADF);
	CHECK_ERR(mknodat(9999, "r", S_IFIFO | 0600, 0), EBADF);
	int f = CHECK_SYS(open("d/p", O_RDONLY | O_NONBLOCK));
	CHECK_ERR(mknodat(f, "r", S_IFIFO | 0600, 0), ENOTDIR);
}

static void mknod_permission(void)
{
	ENTER();
	CHECK_SYS(mkdir("ro", 0755));
	CHECK_SYS(mkdir("rw", 0777));
	CHECK_SYS(chmod("rw", 0777));
	AS_USER(
		CHILD_ERR(mknod("ro/p", S_IFIFO | 0600, 0), EACCES);
		CHILD_CHECK(mknod("rw/p", S_IFIFO | 0600, 0) == 0);
		/* Device nodes need CAP_MKNOD. */
		CHILD_ERR(mknod("rw/c", S_IFCHR | 0600, makedev(1, 3)), EPERM);
	);
	struct stat st;
	CHECK_SYS(stat("rw/p", &st));
	CHECK_EQ(st.st_uid, 1000);
	CHECK_EQ(st.st_gid, 1000);
}

static void mknod_fifo_unlink_and_rename(void)
{
	ENTER();
	CHECK_SYS(mknod("p", S_IFIFO | 0600, 0));
	CHECK_SYS(rename("p", "q"));
	struct stat st;
	CHECK_SYS(lstat("q", &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_SYS(unlink("q"));
	CHECK_ERR(lstat("q", &st), ENOENT);
}

static const struct mt_case cases[] = {
	MT_CASE(mknod_fifo),
	MT_CASE(mknod_fifo_works_as_pipe),
	MT_CASE(mknod_regular),
	MT_CASE(mknod_bad_type),
	MT_CASE(mknod_existing_eexist),
	MT_CASE(mknod_path_errors),
	MT_CASE(mknodat_dirfd),
	MT_CASE(mknod_permission),
	MT_CASE(mknod_fifo_unlink_and_rename),
};

MT_MAIN(cases)
