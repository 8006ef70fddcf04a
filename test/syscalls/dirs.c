//go:build ignore

/* dirs: directories on a writable file system: mkdir/mkdirat modes and
 * errors, rmdir/unlinkat(AT_REMOVEDIR) errors, nlink counts, getdents
 * after changes, mknod(at) of fifos, sockets and regular files, setgid
 * directory inheritance, sticky directories, removed working directories.
 * Works in /dev/shm. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static void mkdir_modes(void)
{
	ENTER();
	CHECK_SYS(mkdir("a", 0777));
	struct stat st;
	CHECK_SYS(stat("a", &st));
	CHECK_EQ(st.st_mode, S_IFDIR | 0755); /* umask 022 */
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(mkdir("b", 07777));
	CHECK_SYS(stat("b", &st));
	CHECK_EQ(st.st_mode, S_IFDIR | 01755); /* setuid/setgid dropped */
	umask(0);
	CHECK_SYS(mkdirat(AT_FDCWD, "c", 0700));
	CHECK_SYS(stat("c", &st));
	CHECK_EQ(st.st_mode, S_IFDIR | 0700);
	int dfd = CHECK_SYS(open("a", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(mkdirat(dfd, "sub", 0755));
	close(dfd);
	CHECK_SYS(stat("a/sub", &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_SYS(stat("a", &st));
	CHECK_EQ(st.st_nlink, 3);
	CHECK_SYS(mkdir("d/", 0755)); /* a trailing slash is fine */
	CHECK_SYS(rmdir("a/sub"));
	CHECK_SYS(stat("a", &st));
	CHECK_EQ(st.st_nlink, 2);
}

static void mkdir_errors(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(mkdir("d", 0755), EEXIST);
	CHECK_ERR(mkdir(".", 0755), EEXIST);
	CHECK_ERR(mkdir("..", 0755), EEXIST);
	CHECK_ERR(mkdir("nope/x", 0755), ENOENT);
	CHECK_ERR(mkdir("", 0755), ENOENT);
	int fd = CHECK_SYS(open("f", O_CREAT | O_WRONLY, 0644));
	close(fd);
	CHECK_ERR(mkdir("f", 0755), EEXIST);
	CHECK_ERR(mkdir("f/x", 0755), ENOTDIR);
	CHECK_SYS(symlink("dangling-target", "ln"));
	CHECK_ERR(mkdir("ln", 0755), EEXIST);
	char name[300];
	memset(name, 'n', 256);
	name[256] = 0;
	CHECK_ERR(mkdir(name, 0755), ENAMETOOLONG);
	CHECK_ERR(mkdirat(-1, "x", 0755), EBADF);
	CHECK_ERR(mkdirat(fd, "x", 0755), EBADF);
	int ffd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_ERR(mkdirat(ffd, "x", 0755), ENOTDIR);
	close(ffd);
	CHECK_ERR(mkdir("/moat-ro-dir", 0755), EROFS);
	/* proc's lookups fail outright: nothing is created there. */
	CHECK_ERR(mkdir("/proc/moat-x", 0755), ENOENT);
	CHECK_ERR(open("/proc/moat-x", O_CREAT | O_WRONLY, 0644), ENOENT);
	CHECK_ERR(symlink("x", "/proc/moat-x"), ENOENT);
	CHECK_ERR(mknod("/proc/moat-x", S_IFIFO | 0644, 0), ENOENT);
}

static void rmdir_errors(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(mkdir("d/e", 0755));
	CHECK_ERR(rmdir("d"), ENOTEMPTY);
	CHECK_ERR(rmdir("d/e/."), EINVAL);
	CHECK_ERR(rmdir("d/e/.."), ENOTEMPTY);
	CHECK_ERR(rmdir("nope"), ENOENT);
	int fd = CHECK_SYS(open("f", O_CREAT | O_WRONLY, 0644));
	close(fd);
	CHECK_ERR(rmdir("f"), ENOTDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "f", AT_REMOVEDIR), ENOTDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "d/e", 0x1), EINVAL);
	CHECK_SYS(unlinkat(AT_FDCWD, "d/e/", AT_REMOVEDIR));
	CHECK_SYS(rmdir("d"));
	CHECK_ERR(rmdir("d"), ENOENT);
	CHECK_ERR(rmdir("/"), EBUSY);
}

static void removed_cwd(void)
{
	ENTER();
	CHECK_SYS(mkdir("gone", 0755));
	CHECK_SYS(chdir("gone"));
	CHECK_SYS(rmdir("../gone"));
	char buf[256];
	CHECK(getcwd(buf, sizeof(buf)) == NULL && errno == ENOENT);
	CHECK_ERR(mkdir("x", 0755), ENOENT);
	CHECK_ERR(open("f", O_CREAT | O_WRONLY, 0644), ENOENT);
	struct stat st;
	CHECK_SYS(stat(".", &st));
	CHECK_EQ(st.st_nlink, 0);
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char dents[512];
	/* A removed directory cannot be listed. */
	CHECK_ERR(syscall(SYS_getdents64, fd, dents, sizeof(dents)), ENOENT);
	close(fd);
}

static int count_entries(const char *path, const char *want, int *found)
{
	DIR *d = opendir(path);
	if (d == NULL)
		return -1;
	int n = 0;
	*found = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		n++;
		if (strcmp(e->d_name, want) == 0)
			*found = e->d_type;
	}
	closedir(d);
	return n;
}

static void getdents_follows_changes(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int found;
	CHECK_EQ(count_entries("d", "x", &found), 2);
	int fd = CHECK_SYS(open("d/x", O_CREAT | O_WRONLY, 0644));
	close(fd);
	CHECK_SYS(mkdir("d/sub", 0755));
	CHECK_SYS(symlink("x", "d/ln"));
	CHECK_SYS(mkfifo("d/p", 0644));
	CHECK_EQ(count_entries("d", "x", &found), 6);
	CHECK_EQ(found, DT_REG);
	CHECK_EQ(count_entries("d", "sub", &found), 6);
	CHECK_EQ(found, DT_DIR);
	CHECK_EQ(count_entries("d", "ln", &found), 6);
	CHECK_EQ(found, DT_LNK);
	CHECK_EQ(count_entries("d", "p", &found), 6);
	CHECK_EQ(found, DT_FIFO);
	CHECK_SYS(unlink("d/x"));
	CHECK_EQ(count_entries("d", "x", &found), 5);
	CHECK_EQ(found, 0);
	/* Inode numbers agree with stat. */
	struct stat st;
	CHECK_SYS(lstat("d/sub", &st));
	DIR *dir = opendir("d");
	CHECK(dir != NULL);
	struct dirent *e;
	ino_t ino = 0;
	while ((e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, "sub") == 0)
			ino = e->d_ino;
	closedir(dir);
	CHECK_EQ(ino, st.st_ino);
}

static void mknod_kinds(void)
{
	ENTER();
	struct stat st;
	CHECK_SYS(mknod("fifo", S_IFIFO | 0666, 0));
	CHECK_SYS(stat("fifo", &st));
	CHECK_EQ(st.st_mode, S_IFIFO | 0644);
	CHECK_SYS(mknod("reg", 0600, 0));
	CHECK_SYS(stat("reg", &st));
	CHECK_EQ(st.st_mode, S_IFREG | 0600);
	CHECK_EQ(st.st_size, 0);
	CHECK_SYS(mknodat(AT_FDCWD, "sock", S_IFSOCK | 0600, 0));
	CHECK_SYS(stat("sock", &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_ERR(open("sock", O_RDONLY), ENXIO);
	CHECK_ERR(mknod("dir", S_IFDIR | 0755, 0), EPERM);
	CHECK_ERR(mknod("bad", 0170000 | 0644, 0), EINVAL);
	CHECK_ERR(mknod("fifo", S_IFIFO | 0644, 0), EEXIST);
	CHECK_ERR(mknod("x/", S_IFIFO | 0644, 0), ENOENT);
	AS_USER({
		CHILD_ERR(mknod("/dev/shm/moat-mknod-chr", S_IFCHR | 0600, makedev(1, 3)), EPERM);
	});
}

static void fifo_open_nonblock(void)
{
	ENTER();
	CHECK_SYS(mkfifo("fifo2", 0600));
	/* A fifo opened non-blocking for reading needs no writer; one opened
	 * non-blocking for writing needs a reader. */
	CHECK_ERR(open("fifo2", O_WRONLY | O_NONBLOCK), ENXIO);
	int fd = CHECK_SYS(open("fifo2", O_RDONLY | O_NONBLOCK));
	char c;
	CHECK_EQ(read(fd, &c, 1), 0);
	int w = CHECK_SYS(open("fifo2", O_WRONLY | O_NONBLOCK));
	CHECK_EQ(write(w, "z", 1), 1);
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, 'z');
	close(w);
	close(fd);
}

static void setgid_directory(void)
{
	ENTER();
	CHECK_SYS(mkdir("sg", 0777));
	CHECK_SYS(chown("sg", 0, 4242));
	CHECK_SYS(chmod("sg", 02777));
	CHECK_SYS(mkdir("sg/sub", 0755));
	struct stat st;
	CHECK_SYS(stat("sg/sub", &st));
	CHECK_EQ(st.st_gid, 4242);
	CHECK(st.st_mode & S_ISGID);
	int fd = CHECK_SYS(open("sg/f", O_CREAT | O_WRONLY, 0644));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_gid, 4242);
	CHECK_EQ(st.st_mode & S_ISGID, 0);
	close(fd);
	/* Outside it, the creator's group. */
	fd = CHECK_SYS(open("f", O_CREAT | O_WRONLY, 0644));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_gid, getegid());
	close(fd);
	/* A non-member's group-executable setgid file loses the bit. */
	AS_USER({
		int f = open("sg/u", O_CREAT | O_WRONLY, 02775);
		CHILD_CHECK(f >= 0);
		struct stat s;
		CHILD_CHECK(fstat(f, &s) == 0);
		CHILD_CHECK(s.st_gid == 4242);
		CHILD_CHECK((s.st_mode & S_ISGID) == 0);
		CHILD_CHECK(s.st_uid == 1000);
	});
}

static void sticky_directory(void)
{
	ENTER();
	CHECK_SYS(mkdir("t", 01777));
	CHECK_SYS(chmod("t", 01777));
	int fd = CHECK_SYS(open("t/root-file", O_CREAT | O_WRONLY, 0666));
	close(fd);
	CHECK_SYS(mkdir("t/root-dir", 0777));
	AS_USER({
		CHILD_ERR(unlink("t/root-file"), EPERM);
		CHILD_ERR(rmdir("t/root-dir"), EPERM);
		CHILD_ERR(rename("t/root-file", "t/mine"), EPERM);
		int f = open("t/mine", O_CREAT | O_WRONLY, 0644);
		CHILD_CHECK(f >= 0);
		close(f);
		CHILD_CHECK(rename("t/mine", "t/mine2") == 0);
		CHILD_CHECK(unlink("t/mine2") == 0);
	});
	CHECK_SYS(unlink("t/root-file"));
}

static void permission_to_create(void)
{
	ENTER();
	CHECK_SYS(mkdir("ro", 0755));
	CHECK_SYS(mkdir("nox", 0777));
	CHECK_SYS(chmod("nox", 0666));
	AS_USER({
		CHILD_ERR(mkdir("ro/x", 0755), EACCES);
		CHILD_ERR(open("ro/f", O_CREAT | O_WRONLY, 0644), EACCES);
		CHILD_ERR(mknod("ro/p", S_IFIFO | 0644, 0), EACCES);
		CHILD_ERR(symlink("x", "ro/l"), EACCES);
		CHILD_ERR(mkdir("nox/x", 0755), EACCES);
		/* EEXIST wins over EACCES. */
		CHILD_ERR(mkdir("ro", 0755), EEXIST);
	});
	CHECK_SYS(mkdir("ro/sub", 0755));
	AS_USER({
		CHILD_ERR(rmdir("ro/sub"), EACCES);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(mkdir_modes),
	MT_CASE(mkdir_errors),
	MT_CASE(rmdir_errors),
	MT_CASE(removed_cwd),
	MT_CASE(getdents_follows_changes),
	MT_CASE(mknod_kinds),
	MT_CASE(fifo_open_nonblock),
	MT_CASE(setgid_directory),
	MT_CASE(sticky_directory),
	MT_CASE(permission_to_create),
};

MT_MAIN(cases)
