//go:build ignore

/* fx_path_edges: path-based calls at their edges on /dev/shm: renameat2
 * flag rules, linkat and unlinkat flags and errors, utimensat on symlinks
 * and descriptors, name and path length limits (ENAMETOOLONG), symlink
 * chains (ELOOP at the kernel's 40-link limit), and statx masks and fields
 * agreeing with fstat. */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

static char dir[256];

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* enter makes a fresh directory for the case and chdirs into it. */
static void enter(const char *name)
{
	snprintf(dir, sizeof(dir), "/dev/shm/tfiles-%s-%d", name, (int)getpid());
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	if (mkdir(dir, 0755) < 0 || chdir(dir) < 0)
		mt_fail(__FILE__, __LINE__, "enter %s: %s", dir, mt_errname(errno));
}

#define FX_ENTER()                \
	enter(__func__);         \
	MT_BAIL()

/* leave removes the case's directory (also from a failed case: the next
 * ENTER or the exit hook does it). */
#define LEAVE() nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS)

__attribute__((destructor)) static void leave_last(void)
{
	if (dir[0])
		nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static int touch(const char *p, const char *content)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (content && write(fd, content, strlen(content)) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static char first_byte(const char *p)
{
	char c = 0;
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c;
}

static void renameat2_flag_rules(void)
{
	FX_ENTER();
	CHECK_SYS(touch("a", "A"));
	CHECK_SYS(touch("b", "B"));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_EXCHANGE | RENAME_NOREPLACE),
		  EINVAL);
	CHECK_ERR(renameat2(AT_FDCWD, "a", AT_FDCWD, "b", 1u << 20), EINVAL);
	CHECK_ERR(renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_NOREPLACE), EEXIST);
	CHECK_ERR(renameat2(AT_FDCWD, "a", AT_FDCWD, "missing", RENAME_EXCHANGE), ENOENT);
	CHECK_ERR(renameat2(AT_FDCWD, "missing", AT_FDCWD, "a", RENAME_EXCHANGE), ENOENT);
	/* Exchange swaps a file and a directory, even non-empty ones. */
	CHECK_SYS(touch("d/in", "I"));
	CHECK_SYS(renameat2(AT_FDCWD, "a", AT_FDCWD, "d", RENAME_EXCHANGE));
	CHECK_EQ(first_byte("d"), 'A');
	CHECK_EQ(first_byte("a/in"), 'I');
	/* Exchanging a name with itself is a no-op. */
	CHECK_SYS(renameat2(AT_FDCWD, "b", AT_FDCWD, "b", RENAME_EXCHANGE));
	CHECK_EQ(first_byte("b"), 'B');
	/* NOREPLACE to a free name works like rename. */
	CHECK_SYS(renameat2(AT_FDCWD, "b", AT_FDCWD, "c", RENAME_NOREPLACE));
	CHECK_ERR(access("b", F_OK), ENOENT);
	/* A directory cannot move inside itself, exchanged or not. */
	CHECK_ERR(renameat2(AT_FDCWD, "a", AT_FDCWD, "a/in", RENAME_EXCHANGE), EINVAL);
	CHECK_ERR(rename("a", "a/sub"), EINVAL);
	LEAVE();
}

static void linkat_flags_and_errors(void)
{
	FX_ENTER();
	CHECK_SYS(touch("f", "F"));
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(symlink("nowhere", "dangling"));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "x", 0x10000000), EINVAL);
	/* Without AT_SYMLINK_FOLLOW the link itself is linked. */
	CHECK_SYS(linkat(AT_FDCWD, "l", AT_FDCWD, "l2", 0));
	struct stat st;
	CHECK_SYS(lstat("l2", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(linkat(AT_FDCWD, "l", AT_FDCWD, "f2", AT_SYMLINK_FOLLOW));
	CHECK_SYS(lstat("f2", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_ERR(linkat(AT_FDCWD, "dangling", AT_FDCWD, "x", AT_SYMLINK_FOLLOW), ENOENT);
	CHECK_ERR(linkat(AT_FDCWD, "d", AT_FDCWD, "x", 0), EPERM);
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "f2", 0), EEXIST);
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "nodir/x", 0), ENOENT);
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "f/x", 0), ENOTDIR);
	CHECK_ERR(linkat(AT_FDCWD, "", AT_FDCWD, "x", 0), ENOENT);
	LEAVE();
}

static void unlinkat_rules(void)
{
	FX_ENTER();
	CHECK_SYS(touch("f", NULL));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(mkdir("full", 0755));
	CHECK_SYS(touch("full/x", NULL));
	CHECK_SYS(symlink("d", "ld"));
	CHECK_ERR(unlinkat(AT_FDCWD, "f", 0x1), EINVAL);
	CHECK_ERR(unlinkat(AT_FDCWD, "f", AT_REMOVEDIR), ENOTDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "d", 0), EISDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "full", AT_REMOVEDIR), ENOTEMPTY);
	CHECK_ERR(unlinkat(AT_FDCWD, ".", AT_REMOVEDIR), EINVAL);
	CHECK_ERR(unlinkat(AT_FDCWD, "d/.", AT_REMOVEDIR), EINVAL);
	CHECK_ERR(unlinkat(AT_FDCWD, "d/..", AT_REMOVEDIR), ENOTEMPTY);
	/* A symlink to a directory is removed as a link, never followed. */
	CHECK_ERR(unlinkat(AT_FDCWD, "ld", AT_REMOVEDIR), ENOTDIR);
	CHECK_SYS(unlinkat(AT_FDCWD, "ld", 0));
	CHECK_SYS(access("d", F_OK));
	/* A trailing slash demands a directory. */
	CHECK_ERR(unlinkat(AT_FDCWD, "f/", 0), ENOTDIR);
	int dfd = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(unlinkat(AT_FDCWD, "d", AT_REMOVEDIR));
	/* Creating in a removed directory through its descriptor fails. */
	CHECK_ERR(openat(dfd, "new", O_CREAT | O_WRONLY, 0644), ENOENT);
	CHECK_ERR(unlinkat(dfd, "x", 0), ENOENT);
	CHECK_ERR(unlinkat(99, "x", 0), EBADF);
	int ffd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_ERR(unlinkat(ffd, "x", 0), ENOTDIR);
	LEAVE();
}

static void utimensat_symlinks_and_fds(void)
{
	FX_ENTER();
	CHECK_SYS(touch("f", NULL));
	CHECK_SYS(symlink("f", "l"));
	struct timespec t[2] = { { 1000, 5 }, { 2000, 7 } };
	CHECK_SYS(utimensat(AT_FDCWD, "l", t, AT_SYMLINK_NOFOLLOW));
	struct stat ls, fs;
	CHECK_SYS(lstat("l", &ls));
	CHECK_SYS(stat("f", &fs));
	CHECK_EQ(ls.st_atim.tv_sec, 1000);
	CHECK_EQ(ls.st_atim.tv_nsec, 5);
	CHECK_EQ(ls.st_mtim.tv_sec, 2000);
	CHECK_EQ(ls.st_mtim.tv_nsec, 7);
	CHECK_NE(fs.st_mtim.tv_sec, 2000);
	/* Following the link changes the target. */
	struct timespec u[2] = { { 3000, 0 }, { UTIME_OMIT, UTIME_OMIT } };
	u[1].tv_sec = 0;
	u[1].tv_nsec = UTIME_OMIT;
	CHECK_SYS(utimensat(AT_FDCWD, "l", u, 0));
	CHECK_SYS(stat("f", &fs));
	CHECK_EQ(fs.st_atim.tv_sec, 3000);
	CHECK_NE(fs.st_mtim.tv_sec, 2000);
	CHECK_SYS(lstat("l", &ls));
	CHECK_EQ(ls.st_mtim.tv_sec, 2000);
	/* A NULL path with a descriptor works on the descriptor's file. */
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(syscall(SYS_utimensat, fd, NULL, t, 0));
	CHECK_SYS(fstat(fd, &fs));
	CHECK_EQ(fs.st_mtim.tv_sec, 2000);
	/* Errors: a bad nanosecond value, unknown flags, NULL path with
	 * AT_SYMLINK_NOFOLLOW, an empty path. */
	struct timespec bad[2] = { { 0, 1000000000 }, { 0, 0 } };
	CHECK_ERR(utimensat(AT_FDCWD, "f", bad, 0), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "f", t, 0x8000), EINVAL);
	CHECK_ERR(syscall(SYS_utimensat, fd, NULL, t, AT_SYMLINK_NOFOLLOW), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "", t, 0), ENOENT);
	CHECK_SYS(utimensat(fd, "", t, AT_EMPTY_PATH));
	LEAVE();
}

static void name_length_limits(void)
{
	FX_ENTER();
	char name[300];
	memset(name, 'n', sizeof(name));
	name[255] = 0;
	CHECK_SYS(touch(name, NULL));
	CHECK_SYS(access(name, F_OK));
	name[255] = 'n';
	name[256] = 0;
	CHECK_ERR(open(name, O_WRONLY | O_CREAT, 0644), ENAMETOOLONG);
	CHECK_ERR(access(name, F_OK), ENAMETOOLONG);
	CHECK_ERR(mkdir(name, 0755), ENAMETOOLONG);
	CHECK_ERR(symlink("x", name), ENAMETOOLONG);
	name[255] = 0;
	char longer[320];
	snprintf(longer, sizeof(longer), "%sn", name);
	CHECK_ERR(rename(name, longer), ENAMETOOLONG);
	CHECK_ERR(link(name, longer), ENAMETOOLONG);
	CHECK_ERR(unlink(longer), ENAMETOOLONG);
	/* A whole path of PATH_MAX bytes (no room for the NUL). */
	char *p = malloc(PATH_MAX + 2);
	CHECK(p != NULL);
	for (int i = 0; i < PATH_MAX + 1; i++)
		p[i] = (i % 2) ? '/' : '.';
	p[PATH_MAX] = 0;
	CHECK_ERR(access(p, F_OK), ENAMETOOLONG);
	p[PATH_MAX - 1] = 0;
	p[PATH_MAX - 2] = '.';
	CHECK_SYS(access(p, F_OK));
	/* A symlink target of PATH_MAX bytes is too long; PATH_MAX-1 fits. */
	memset(p, 'x', PATH_MAX);
	p[PATH_MAX] = 0;
	CHECK_ERR(symlink(p, "l"), ENAMETOOLONG);
	p[PATH_MAX - 1] = 0;
	CHECK_SYS(symlink(p, "l"));
	char *r = malloc(PATH_MAX + 1);
	CHECK(r != NULL);
	CHECK_EQ(readlink("l", r, PATH_MAX + 1), PATH_MAX - 1);
	free(r);
	free(p);
	LEAVE();
}

static void symlink_chains_and_eloop(void)
{
	FX_ENTER();
	CHECK_SYS(touch("target", "T"));
	/* l0 -> target, lN -> l(N-1): following lN walks N+1 links. */
	char a[16], b[16];
	CHECK_SYS(symlink("target", "l0"));
	for (int i = 1; i <= 40; i++) {
		snprintf(a, sizeof(a), "l%d", i);
		snprintf(b, sizeof(b), "l%d", i - 1);
		CHECK_SYS(symlink(b, a));
	}
	/* 40 links are allowed, 41 are ELOOP. */
	CHECK_EQ(first_byte("l39"), 'T');
	CHECK_ERR(open("l40", O_RDONLY), ELOOP);
	CHECK_ERR(access("l40", F_OK), ELOOP);
	struct stat st;
	CHECK_SYS(lstat("l40", &st));
	/* Loops. */
	CHECK_SYS(symlink("self", "self"));
	CHECK_ERR(open("self", O_RDONLY), ELOOP);
	CHECK_ERR(stat("self", &st), ELOOP);
	CHECK_SYS(symlink("pong", "ping"));
	CHECK_SYS(symlink("ping", "pong"));
	CHECK_ERR(open("ping/x", O_RDONLY), ELOOP);
	CHECK_ERR(open("ping", O_WRONLY | O_CREAT, 0644), ELOOP);
	/* O_NOFOLLOW on a trailing link is ELOOP at once. */
	CHECK_ERR(open("l0", O_RDONLY | O_NOFOLLOW), ELOOP);
	/* A dangling link with O_CREAT creates its target; with O_EXCL it
	 * fails. */
	CHECK_SYS(symlink("made", "dang"));
	CHECK_ERR(open("dang", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
	int fd = CHECK_SYS(open("dang", O_WRONLY | O_CREAT, 0644));
	CHECK_SYS(close(fd));
	CHECK_SYS(access("made", F_OK));
	LEAVE();
}

static void statx_fields_and_masks(void)
{
	FX_ENTER();
	CHECK_SYS(touch("f", "hello"));
	struct statx sx;
	struct stat st;
	CHECK_SYS(statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, &sx));
	CHECK_SYS(stat("f", &st));
	CHECK_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
	CHECK_EQ(sx.stx_ino, st.st_ino);
	CHECK_EQ(sx.stx_size, 5);
	CHECK_EQ(sx.stx_mode, S_IFREG | 0644);
	CHECK_EQ(sx.stx_nlink, 1);
	CHECK_EQ(sx.stx_blksize, st.st_blksize);
	CHECK_EQ(sx.stx_blocks, st.st_blocks);
	CHECK_EQ(sx.stx_mtime.tv_sec, st.st_mtim.tv_sec);
	CHECK_EQ(sx.stx_mtime.tv_nsec, st.st_mtim.tv_nsec);
	CHECK_EQ(makedev(sx.stx_dev_major, sx.stx_dev_minor), st.st_dev);
	/* Errors: both sync flags, the reserved mask bit, unknown flags,
	 * an empty path without AT_EMPTY_PATH. */
	CHECK_ERR(statx(AT_FDCWD, "f", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
			STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_ERR(statx(AT_FDCWD, "f", 0, STATX__RESERVED, &sx), EINVAL);
	CHECK_ERR(statx(AT_FDCWD, "f", 0x40000000, STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_ERR(statx(AT_FDCWD, "", 0, STATX_BASIC_STATS, &sx), ENOENT);
	CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "f", 0, STATX_BASIC_STATS, NULL), EFAULT);
	/* AT_EMPTY_PATH on a descriptor, and nofollow on a link. */
	int fd = CHECK_SYS(open("f", O_RDONLY));
	memset(&sx, 0, sizeof(sx));
	CHECK_SYS(statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx));
	CHECK(sx.stx_mask & STATX_SIZE);
	CHECK_EQ(sx.stx_size, 5);
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(statx(AT_FDCWD, "l", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
	CHECK(S_ISLNK(sx.stx_mode));
	CHECK_EQ(sx.stx_size, 1);
	CHECK_SYS(statx(AT_FDCWD, "l", 0, STATX_BASIC_STATS, &sx));
	CHECK(S_ISREG(sx.stx_mode));
	/* A directory: nlink 2 and the directory type. */
	CHECK_SYS(mkdir("d", 0700));
	CHECK_SYS(statx(AT_FDCWD, "d", 0, STATX_BASIC_STATS, &sx));
	CHECK_EQ(sx.stx_mode, S_IFDIR | 0700);
	CHECK_EQ(sx.stx_nlink, 2);
	LEAVE();
}

static const struct mt_case cases[] = {
	MT_CASE(renameat2_flag_rules),
	MT_CASE(linkat_flags_and_errors),
	MT_CASE(unlinkat_rules),
	MT_CASE(utimensat_symlinks_and_fds),
	MT_CASE(name_length_limits),
	MT_CASE(symlink_chains_and_eloop),
	MT_CASE(statx_fields_and_masks),
};

MT_MAIN(cases)
