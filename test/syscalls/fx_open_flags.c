//go:build ignore

/* fx_open_flags: open/openat flag and dirfd rules on /dev/shm: dirfd
 * forms (bad, non-directory, ignored for absolute paths), O_DIRECTORY and
 * O_CREAT combinations, trailing slashes, O_EXCL with and without O_CREAT,
 * O_TRUNC on read-only opens, the flags F_GETFL reports, and what is
 * refused on directories. */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's O_LARGEFILE (glibc defines O_LARGEFILE as 0 on x86-64). */
#define KO_LARGEFILE 0100000

static char dir[256];

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void enter(const char *name)
{
	if (dir[0])
		nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	snprintf(dir, sizeof(dir), "/dev/shm/tfiles-%s-%d", name, (int)getpid());
	if (mkdir(dir, 0755) < 0 || chdir(dir) < 0)
		mt_fail(__FILE__, __LINE__, "enter %s: %s", dir, mt_errname(errno));
}

#define FX_ENTER()               \
	enter(__func__);         \
	MT_BAIL()

__attribute__((destructor)) static void leave_last(void)
{
	if (dir[0])
		nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static int mkfile(const char *p, const char *content)
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

static void dirfd_forms(void)
{
	FX_ENTER();
	CHECK_SYS(mkfile("f", "x"));
	int ffd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_ERR(openat(ffd, "g", O_RDONLY), ENOTDIR);
	CHECK_ERR(openat(99, "f", O_RDONLY), EBADF);
	CHECK_ERR(openat(-5, "f", O_RDONLY), EBADF);
	/* An absolute path ignores the dirfd, even an invalid one. */
	int fd = CHECK_SYS(openat(99, "/dev/null", O_RDONLY));
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(openat(ffd, "/dev/null", O_RDONLY));
	CHECK_SYS(close(fd));
	/* An empty path is ENOENT whatever the dirfd. */
	CHECK_ERR(openat(AT_FDCWD, "", O_RDONLY), ENOENT);
	CHECK_ERR(openat(ffd, "", O_RDONLY), ENOENT);
	int dfd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	fd = CHECK_SYS(openat(dfd, "f", O_RDONLY));
	char c;
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, 'x');
}

static void directory_flag_rules(void)
{
	FX_ENTER();
	CHECK_SYS(mkfile("f", NULL));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(open("f", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open("missing", O_RDONLY | O_DIRECTORY), ENOENT);
	/* O_CREAT|O_DIRECTORY is refused (Linux 6.4+); older kernels create
	 * a regular file or return ENOTDIR. */
	errno = 0;
	int r = open("newdir", O_RDONLY | O_CREAT | O_DIRECTORY, 0755);
	CHECK(r == -1 && (errno == EINVAL || errno == ENOTDIR));
	CHECK_ERR(access("newdir", F_OK), ENOENT);
	/* Directories only open read-only. */
	CHECK_ERR(open("d", O_WRONLY), EISDIR);
	CHECK_ERR(open("d", O_RDWR), EISDIR);
	CHECK_ERR(open("d", O_WRONLY | O_CREAT, 0644), EISDIR);
	/* O_CREAT on an existing directory is EISDIR even read-only. */
	CHECK_ERR(open("d", O_RDONLY | O_CREAT, 0644), EISDIR);
	int fd = CHECK_SYS(open("d", O_RDONLY));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK(S_ISDIR(st.st_mode));
	char b;
	CHECK_ERR(read(fd, &b, 1), EISDIR);
	CHECK_ERR(write(fd, &b, 1), EBADF);
}

static void trailing_slashes(void)
{
	FX_ENTER();
	CHECK_SYS(mkfile("f", NULL));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(open("f/", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("new/", O_WRONLY | O_CREAT, 0644), EISDIR);
	CHECK_ERR(access("new", F_OK), ENOENT);
	int fd = CHECK_SYS(open("d/", O_RDONLY));
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(open("d//.//", O_RDONLY));
	CHECK_SYS(close(fd));
	CHECK_ERR(mkfile("d/", NULL), EISDIR);
	CHECK_SYS(symlink("d", "ld"));
	CHECK_SYS(symlink("f", "lf"));
	fd = CHECK_SYS(open("ld/", O_RDONLY | O_NOFOLLOW));
	CHECK_SYS(close(fd));
	CHECK_ERR(open("lf/", O_RDONLY), ENOTDIR);
}

static void excl_rules(void)
{
	FX_ENTER();
	CHECK_SYS(mkfile("f", NULL));
	CHECK_ERR(open("f", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
	/* O_EXCL without O_CREAT is ignored for regular files. */
	int fd = CHECK_SYS(open("f", O_RDONLY | O_EXCL));
	CHECK_SYS(close(fd));
	/* O_CREAT|O_EXCL never follows a final symlink, even a dangling one. */
	CHECK_SYS(symlink("target", "dang"));
	CHECK_ERR(open("dang", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
	CHECK_ERR(access("target", F_OK), ENOENT);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(open("d", O_RDONLY | O_CREAT | O_EXCL, 0644), EEXIST);
}

static void trunc_on_readonly_open(void)
{
	FX_ENTER();
	CHECK_SYS(mkfile("f", "hello"));
	/* Linux truncates even for O_RDONLY when the caller may write. */
	int fd = CHECK_SYS(open("f", O_RDONLY | O_TRUNC));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
	char b;
	CHECK_EQ(read(fd, &b, 1), 0);
	CHECK_ERR(write(fd, "x", 1), EBADF);
	/* ...as it needs write access: a directory gives EISDIR. */
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(open("d", O_RDONLY | O_TRUNC), EISDIR);
	/* O_TRUNC of a fifo or of /dev/null is harmless. */
	CHECK_SYS(mkfifo("p", 0644));
	fd = CHECK_SYS(open("p", O_RDWR | O_TRUNC));
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(open("/dev/null", O_WRONLY | O_TRUNC));
	CHECK_SYS(close(fd));
}

static void getfl_reports(void)
{
	FX_ENTER();
	int fd = CHECK_SYS(open("f", O_WRONLY | O_CREAT | O_EXCL, 0644));
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(open("f", O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC | O_TRUNC));
	int fl = CHECK_SYS(fcntl(fd, F_GETFL));
	/* Creation flags and O_CLOEXEC are not part of the status flags;
	 * O_LARGEFILE is always set on 64-bit. */
	CHECK_EQ(fl & ~KO_LARGEFILE, O_WRONLY | O_APPEND | O_NONBLOCK);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	/* F_SETFL changes only O_APPEND, O_NONBLOCK, O_ASYNC, O_DIRECT and
	 * O_NOATIME; the access mode stays. */
	CHECK_SYS(fcntl(fd, F_SETFL, O_RDWR));
	fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & ~KO_LARGEFILE, O_WRONLY);
	fd = CHECK_SYS(open("f", O_RDWR | O_SYNC));
	fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_SYNC, O_SYNC);
	CHECK_EQ(fl & O_ACCMODE, O_RDWR);
}

static void creat_mode_bits(void)
{
	FX_ENTER();
	umask(0);
	int fd = CHECK_SYS(open("a", O_WRONLY | O_CREAT, 07777));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	/* Root keeps setgid (it is in the group); everything is kept. */
	CHECK_EQ(st.st_mode & 07777, 07777);
	umask(077);
	fd = CHECK_SYS(open("b", O_WRONLY | O_CREAT, 0666));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0600);
	/* A mode is only applied on creation. */
	fd = CHECK_SYS(open("b", O_WRONLY | O_CREAT, 0777));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0600);
	/* creat() is open(O_CREAT|O_WRONLY|O_TRUNC). */
	fd = CHECK_SYS(creat("c", 0644));
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	/* Creating read-only still gives a writable descriptor. */
	fd = CHECK_SYS(open("d", O_RDWR | O_CREAT, 0444));
	CHECK_EQ(write(fd, "ok", 2), 2);
}

static const struct mt_case cases[] = {
	MT_CASE(dirfd_forms),
	MT_CASE(directory_flag_rules),
	MT_CASE(trailing_slashes),
	MT_CASE(excl_rules),
	MT_CASE(trunc_on_readonly_open),
	MT_CASE(getfl_reports),
	MT_CASE(creat_mode_bits),
};

MT_MAIN(cases)
