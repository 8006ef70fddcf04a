//go:build ignore

/* links: symlinks and hard links on a writable file system: symlink(at)/
 * readlink, link(at) with AT_SYMLINK_FOLLOW and AT_EMPTY_PATH, nlink,
 * unlink(at) errors, files open after unlink, /proc/self/fd names of
 * removed files, O_CREAT through symlinks. Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void make_file(const char *name, const char *content)
{
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, content, strlen(content)) < 0) {
	}
	close(fd);
}

static void symlink_and_readlink(void)
{
	ENTER();
	make_file("target", "T");
	CHECK_SYS(symlink("target", "ln"));
	char buf[64] = {0};
	CHECK_EQ(readlink("ln", buf, sizeof(buf)), 6);
	CHECK_MEMEQ(buf, "target", 6);
	struct stat st, tst;
	CHECK_SYS(lstat("ln", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0777);
	CHECK_EQ(st.st_size, 6);
	CHECK_SYS(stat("ln", &st));
	CHECK_SYS(stat("target", &tst));
	CHECK_EQ(st.st_ino, tst.st_ino);
	CHECK_SYS(symlinkat("/nonexistent/x", AT_FDCWD, "dangling"));
	CHECK_ERR(stat("dangling", &st), ENOENT);
	CHECK_SYS(lstat("dangling", &st));
	CHECK_ERR(symlink("", "empty"), ENOENT);
	CHECK_ERR(symlink("x", "ln"), EEXIST);
	CHECK_ERR(symlink("x", "nodir/ln"), ENOENT);
	CHECK_ERR(symlink("x", "ln2/"), ENOENT);
	CHECK_ERR(readlink("target", buf, sizeof(buf)), EINVAL);
	/* A long target is kept whole. */
	static char longt[PATH_MAX + 1];
	memset(longt, 'a', PATH_MAX);
	longt[PATH_MAX] = 0;
	CHECK_ERR(symlink(longt, "long"), ENAMETOOLONG);
	longt[1000] = 0;
	CHECK_SYS(symlink(longt, "long"));
	char back[PATH_MAX];
	CHECK_EQ(readlink("long", back, sizeof(back)), 1000);
	/* A symlink loop. */
	CHECK_SYS(symlink("loop2", "loop1"));
	CHECK_SYS(symlink("loop1", "loop2"));
	CHECK_ERR(open("loop1", O_RDONLY), ELOOP);
}

static void hard_links(void)
{
	ENTER();
	make_file("a", "data");
	CHECK_SYS(link("a", "b"));
	struct stat sa, sb;
	CHECK_SYS(stat("a", &sa));
	CHECK_SYS(stat("b", &sb));
	CHECK_EQ(sa.st_ino, sb.st_ino);
	CHECK_EQ(sa.st_nlink, 2);
	CHECK_SYS(linkat(AT_FDCWD, "a", AT_FDCWD, "c", 0));
	CHECK_SYS(stat("a", &sa));
	CHECK_EQ(sa.st_nlink, 3);
	CHECK_SYS(unlink("a"));
	CHECK_SYS(stat("b", &sb));
	CHECK_EQ(sb.st_nlink, 2);
	char buf[8] = {0};
	int fd = CHECK_SYS(open("c", O_RDONLY));
	CHECK_EQ(read(fd, buf, 8), 4);
	CHECK_STREQ(buf, "data");
	close(fd);
	CHECK_ERR(link("b", "c"), EEXIST);
	CHECK_ERR(link("nope", "d"), ENOENT);
	CHECK_ERR(link("b", "nodir/d"), ENOENT);
	CHECK_ERR(link("b", "d/"), ENOENT);
	CHECK_SYS(mkdir("dir", 0755));
	CHECK_ERR(link("dir", "dir2"), EPERM);
	CHECK_ERR(link("b", "/moat-l"), EROFS);
	CHECK_ERR(linkat(AT_FDCWD, "b", AT_FDCWD, "e", 0x1), EINVAL);
}

static void link_symlink_follow(void)
{
	ENTER();
	make_file("t", "x");
	CHECK_SYS(symlink("t", "s"));
	/* Without AT_SYMLINK_FOLLOW the link names the symlink itself. */
	CHECK_SYS(linkat(AT_FDCWD, "s", AT_FDCWD, "hs", 0));
	struct stat st;
	CHECK_SYS(lstat("hs", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(linkat(AT_FDCWD, "s", AT_FDCWD, "ht", AT_SYMLINK_FOLLOW));
	CHECK_SYS(lstat("ht", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);
	/* AT_EMPTY_PATH links the file a descriptor names. */
	int fd = CHECK_SYS(open("t", O_RDONLY));
	CHECK_SYS(linkat(fd, "", AT_FDCWD, "he", AT_EMPTY_PATH));
	close(fd);
	CHECK_SYS(stat("t", &st));
	CHECK_EQ(st.st_nlink, 3);
	CHECK_ERR(linkat(AT_FDCWD, "", AT_FDCWD, "hx", 0), ENOENT);
}

static void unlink_rules(void)
{
	ENTER();
	make_file("f", "x");
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(unlink("d"), EISDIR);
	CHECK_ERR(unlink("f/"), ENOTDIR);
	CHECK_ERR(unlink("d/"), EISDIR);
	CHECK_ERR(unlink("nope"), ENOENT);
	CHECK_ERR(unlink("nope/x"), ENOENT);
	CHECK_ERR(unlink("f/x"), ENOTDIR);
	CHECK_ERR(unlink("."), EISDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "f", 0x4), EINVAL);
	CHECK_ERR(unlink("/moat-nothing"), EROFS);
	CHECK_SYS(symlink("d", "ld"));
	CHECK_SYS(unlink("ld")); /* removes the link, not the directory */
	struct stat st;
	CHECK_SYS(stat("d", &st));
	int dfd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(unlinkat(dfd, "f", 0));
	CHECK_SYS(unlinkat(dfd, "d", AT_REMOVEDIR));
	close(dfd);
	CHECK_ERR(stat("f", &st), ENOENT);
	CHECK_ERR(stat("d", &st), ENOENT);
}

static void open_after_unlink(void)
{
	ENTER();
	make_file("f", "kept");
	int fd = CHECK_SYS(open("f", O_RDWR));
	CHECK_SYS(unlink("f"));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 0);
	char buf[16] = {0};
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 4);
	CHECK_STREQ(buf, "kept");
	CHECK_EQ(pwrite(fd, "more", 4, 4), 4);
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 8);
	char path[64], link[PATH_MAX] = {0};
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	const char *suffix = "/f (deleted)";
	CHECK(n > (ssize_t)strlen(suffix));
	CHECK_STREQ(link + n - strlen(suffix), suffix);
	/* A new file of the same name is another file. */
	make_file("f", "new");
	struct stat st2;
	CHECK_SYS(stat("f", &st2));
	CHECK_NE(st2.st_ino, st.st_ino);
	close(fd);
}

static void create_through_symlink(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(symlink("d/made", "ln"));
	int fd = CHECK_SYS(open("ln", O_CREAT | O_WRONLY, 0600));
	close(fd);
	struct stat st;
	CHECK_SYS(lstat("d/made", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_SYS(symlink("d/other", "ln2"));
	CHECK_ERR(open("ln2", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST);
	CHECK_ERR(open("ln2", O_CREAT | O_NOFOLLOW | O_WRONLY, 0600), ELOOP);
	CHECK_ERR(lstat("d/other", &st), ENOENT);
	CHECK_SYS(symlink("nodir/x", "ln3"));
	CHECK_ERR(open("ln3", O_CREAT | O_WRONLY, 0600), ENOENT);
	CHECK_SYS(symlink("/dev/shm", "ln4"));
	CHECK_ERR(open("ln4", O_CREAT | O_WRONLY, 0600), EISDIR);
}

static void protected_hardlinks(void)
{
	ENTER();
	make_file("secret", "s");
	CHECK_SYS(chmod("secret", 0600));
	CHECK_SYS(chmod(".", 0777));
	AS_USER({
		CHILD_ERR(link("secret", "mine"), EPERM);
	});
	CHECK_SYS(chmod("secret", 0666));
	AS_USER({
		CHILD_CHECK(link("secret", "mine") == 0);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(symlink_and_readlink),
	MT_CASE(hard_links),
	MT_CASE(link_symlink_follow),
	MT_CASE(unlink_rules),
	MT_CASE(open_after_unlink),
	MT_CASE(create_through_symlink),
	MT_CASE(protected_hardlinks),
};

MT_MAIN(cases)
