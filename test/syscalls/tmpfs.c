//go:build ignore

/* tmpfs: the memory file system at /dev/shm: files (sizes, sparse blocks,
 * SEEK_DATA/SEEK_HOLE, truncate, fallocate), directories (sizes, link
 * counts), rename (replace, NOREPLACE, EXCHANGE), hard links, unlinked but
 * open files, symlinks, fifos, O_TMPFILE, user xattrs, and shared and
 * private mappings of its files across fork; MADV_REMOVE and MADV_FREE;
 * memfd seals (F_SEAL_FUTURE_WRITE), names in /proc/self/maps and stat. */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <errno.h>
#include <unistd.h>

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2
#endif

/* dir is a fresh directory under /dev/shm for the current case. */
static char dir[64];

static const char *in(const char *name)
{
	static char bufs[4][128];
	static int next;
	char *b = bufs[next++ % 4];
	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* remove_dir removes the previous case's directory (even if it failed
 * half way), so native runs leave nothing in the host's /dev/shm. */
static void remove_dir(void)
{
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = 0;
}

static int fresh_dir(void)
{
	static int registered;
	if (!registered) {
		atexit(remove_dir);
		registered = 1;
	}
	remove_dir();
	strcpy(dir, "/dev/shm/moat-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		mt_skip("no writable /dev/shm: %s", mt_errname(errno));
		return -1;
	}
	return 0;
}

static void shm_is_tmpfs(void)
{
	struct statfs sf;
	CHECK_SYS(statfs("/dev/shm", &sf));
	CHECK_EQ(sf.f_type, TMPFS_MAGIC);
	CHECK_EQ(sf.f_bsize, 4096);
	CHECK_EQ(sf.f_namelen, 255);
	CHECK_GT(sf.f_blocks, 0);
	struct stat st;
	CHECK_SYS(stat("/dev/shm", &st));
	CHECK_EQ(st.st_mode & 07777, 01777);
}

static void file_sizes_and_blocks(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("f"), O_CREAT | O_EXCL | O_RDWR, 0640));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_blocks, 0);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(st.st_blksize, 4096);
	CHECK_EQ(pwrite(fd, "end", 3, 1 << 20), 3);
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, (1 << 20) + 3);
	CHECK_EQ(st.st_blocks, 8);
	char buf[8] = "xxxxxxx";
	CHECK_EQ(pread(fd, buf, 4, 4096), 4);
	CHECK_MEMEQ(buf, "\0\0\0\0", 4);
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 1 << 20);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), 0);
	CHECK_EQ(lseek(fd, 1 << 20, SEEK_HOLE), (1 << 20) + 3);
	CHECK_ERR(lseek(fd, (1 << 20) + 3, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, -1, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, -1, SEEK_HOLE), ENXIO);
	CHECK_EQ(lseek(fd, 0, SEEK_END), (1 << 20) + 3);
	CHECK_SYS(ftruncate(fd, 2));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 2);
	CHECK_EQ(st.st_blocks, 0);
	close(fd);
}

static void truncate_zeroes_the_tail(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("t"), O_CREAT | O_RDWR, 0600));
	char buf[100];
	memset(buf, 'a', sizeof(buf));
	CHECK_EQ(write(fd, buf, sizeof(buf)), 100);
	CHECK_SYS(ftruncate(fd, 10));
	CHECK_SYS(ftruncate(fd, 100));
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 100);
	CHECK_EQ(buf[9], 'a');
	CHECK_EQ(buf[10], 0);
	CHECK_EQ(buf[99], 0);
	CHECK_SYS(truncate(in("t"), 5000));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 5000);
	close(fd);
}

static void fallocate_modes(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("a"), O_CREAT | O_RDWR, 0600));
	struct stat st;
	CHECK_SYS(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 3 * 4096));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_blocks, 24);
	CHECK_SYS(fallocate(fd, 0, 0, 100));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 100);
	char buf[4096];
	memset(buf, 'b', sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, sizeof(buf), 0), 4096);
	CHECK_EQ(pwrite(fd, buf, sizeof(buf), 4096), 4096);
	CHECK_SYS(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100, 4096));
	CHECK_EQ(pread(fd, buf, 10, 95), 10);
	CHECK_MEMEQ(buf, "bbbbb\0\0\0\0\0", 10);
	CHECK_EQ(pread(fd, buf, 2, 4195), 2);
	CHECK_MEMEQ(buf, "\0b", 2);
	/* Whole pages of a hole are freed. */
	CHECK_SYS(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 8192));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 8192);
	CHECK_EQ(st.st_blocks, 8);
	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 10), EOPNOTSUPP);
	close(fd);
}

static void directory_sizes_and_links(void)
{
	if (fresh_dir())
		return;
	struct stat st;
	CHECK_SYS(stat(dir, &st));
	CHECK_EQ(st.st_size, 40);
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(mkdir(in("sub"), 0755));
	close(CHECK_SYS(open(in("file"), O_CREAT | O_WRONLY, 0600)));
	CHECK_SYS(stat(dir, &st));
	CHECK_EQ(st.st_size, 80);
	CHECK_EQ(st.st_nlink, 3);
	CHECK_ERR(rmdir(dir), ENOTEMPTY);
	CHECK_ERR(unlink(in("sub")), EISDIR);
	CHECK_ERR(rmdir(in("file")), ENOTDIR);
	CHECK_SYS(rmdir(in("sub")));
	CHECK_SYS(stat(dir, &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_EQ(st.st_size, 60);
}

static void rename_variants(void)
{
	if (fresh_dir())
		return;
	int a = CHECK_SYS(open(in("a"), O_CREAT | O_RDWR, 0600));
	CHECK_EQ(write(a, "A", 1), 1);
	int b = CHECK_SYS(open(in("b"), O_CREAT | O_RDWR, 0600));
	CHECK_EQ(write(b, "B", 1), 1);
	CHECK_SYS(mkdir(in("d"), 0755));
	CHECK_SYS(mkdir(in("e"), 0755));
	CHECK_ERR(syscall(SYS_renameat2, AT_FDCWD, in("a"), AT_FDCWD, in("b"), RENAME_NOREPLACE), EEXIST);
	CHECK_SYS(syscall(SYS_renameat2, AT_FDCWD, in("a"), AT_FDCWD, in("b"), RENAME_EXCHANGE));
	char c;
	int fd = CHECK_SYS(open(in("a"), O_RDONLY));
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, 'B');
	close(fd);
	/* A file replaces a file; the replaced one lives on while open. */
	CHECK_SYS(rename(in("a"), in("b")));
	struct stat st;
	CHECK_SYS(fstat(a, &st));
	CHECK_EQ(st.st_nlink, 0);
	CHECK_ERR(access(in("a"), F_OK), ENOENT);
	/* A directory replaces an empty directory, not a non-empty one. */
	close(CHECK_SYS(open(in("e/x"), O_CREAT | O_WRONLY, 0600)));
	CHECK_ERR(rename(in("d"), in("e")), ENOTEMPTY);
	CHECK_ERR(rename(in("d"), in("b")), ENOTDIR);
	CHECK_ERR(rename(in("b"), in("d")), EISDIR);
	CHECK_SYS(rename(in("e"), in("d")));
	CHECK_SYS(stat(in("d/x"), &st));
	CHECK_SYS(stat(dir, &st));
	CHECK_EQ(st.st_nlink, 3);
	/* Moving a directory into another moves its ".." link. */
	CHECK_SYS(mkdir(in("f"), 0755));
	CHECK_SYS(rename(in("f"), in("d/f")));
	CHECK_SYS(stat(in("d"), &st));
	CHECK_EQ(st.st_nlink, 3);
	CHECK_SYS(stat(dir, &st));
	CHECK_EQ(st.st_nlink, 3);
	CHECK_ERR(rename(in("d"), in("d/f/g")), EINVAL);
	close(a);
	close(b);
}

static void hard_links_and_unlinked_files(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("orig"), O_CREAT | O_RDWR, 0600));
	CHECK_EQ(write(fd, "data", 4), 4);
	CHECK_SYS(link(in("orig"), in("second")));
	struct stat st, st2;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(stat(in("second"), &st2));
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_ERR(link(dir, in("dirlink")), EPERM);
	CHECK_ERR(link(in("orig"), in("second")), EEXIST);
	CHECK_SYS(unlink(in("orig")));
	CHECK_SYS(unlink(in("second")));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 0);
	char buf[4];
	CHECK_EQ(pread(fd, buf, 4, 0), 4);
	CHECK_MEMEQ(buf, "data", 4);
	CHECK_EQ(pwrite(fd, "more", 4, 4), 4);
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 8);
	close(fd);
}

static void symlinks(void)
{
	if (fresh_dir())
		return;
	CHECK_SYS(symlink("target/path", in("l")));
	struct stat st;
	CHECK_SYS(lstat(in("l"), &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0777);
	CHECK_EQ(st.st_size, 11);
	CHECK_EQ(st.st_blocks, 0);
	char longt[200];
	memset(longt, 't', sizeof(longt) - 1);
	longt[sizeof(longt) - 1] = 0;
	CHECK_SYS(symlink(longt, in("long")));
	CHECK_SYS(lstat(in("long"), &st));
	CHECK_EQ(st.st_size, 199);
	CHECK_EQ(st.st_blocks, 8);
	char buf[64];
	ssize_t n = CHECK_SYS(readlink(in("l"), buf, sizeof(buf)));
	CHECK_EQ(n, 11);
	CHECK_MEMEQ(buf, "target/path", 11);
	CHECK_ERR(stat(in("l"), &st), ENOENT);
	CHECK_ERR(symlink("x", in("l")), EEXIST);
	close(CHECK_SYS(open(in("real"), O_CREAT | O_WRONLY, 0600)));
	CHECK_SYS(symlink("real", in("l2")));
	CHECK_SYS(stat(in("l2"), &st));
	CHECK(S_ISREG(st.st_mode));
}

static void fifo_and_nodes(void)
{
	if (fresh_dir())
		return;
	CHECK_SYS(mkfifo(in("p"), 0600));
	struct stat st;
	CHECK_SYS(stat(in("p"), &st));
	CHECK(S_ISFIFO(st.st_mode));
	int fd = CHECK_SYS(open(in("p"), O_RDWR));
	CHECK_EQ(write(fd, "fifo", 4), 4);
	char buf[4];
	CHECK_EQ(read(fd, buf, 4), 4);
	CHECK_MEMEQ(buf, "fifo", 4);
	close(fd);
	CHECK_SYS(mknod(in("s"), S_IFSOCK | 0600, 0));
	CHECK_SYS(stat(in("s"), &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_ERR(open(in("s"), O_RDONLY), ENXIO);
	CHECK_ERR(mknod(in("bad"), S_IFDIR | 0700, 0), EPERM);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void fifo_open_waits_for_partner(void)
{
	if (fresh_dir())
		return;
	const char *p = in("fifo");
	CHECK_SYS(mkfifo(p, 0600));
	CHECK_ERR(open(p, O_WRONLY | O_NONBLOCK), ENXIO);
	int r = CHECK_SYS(open(p, O_RDONLY | O_NONBLOCK));
	int w = CHECK_SYS(open(p, O_WRONLY | O_NONBLOCK));
	close(r);
	close(w);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* Waits until the parent opens for reading. */
		int fd = open(p, O_WRONLY);
		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(write(fd, "x", 1) == 1);
		_exit(0);
	}
	int rd = CHECK_SYS(open(p, O_RDONLY));
	char c;
	CHECK_EQ(read(rd, &c, 1), 1);
	CHECK_EQ(c, 'x');
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(read(rd, &c, 1), 0);
	close(rd);
	/* A blocked open is interrupted by a signal without SA_RESTART. */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	struct itimerval it = {{0, 0}, {0, 50000}};
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	CHECK_ERR(open(p, O_RDONLY), EINTR);
}

static void concurrent_appends_keep_every_byte(void)
{
	if (fresh_dir())
		return;
	const char *p = in("log");
	close(CHECK_SYS(open(p, O_CREAT | O_WRONLY, 0600)));
	pid_t pids[2];
	for (int i = 0; i < 2; i++) {
		pids[i] = CHECK_SYS(fork());
		if (pids[i] == 0) {
			int fd = open(p, O_WRONLY | O_APPEND);
			CHILD_CHECK(fd >= 0);
			for (int j = 0; j < 500; j++)
				CHILD_CHECK(write(fd, i ? "bbbbbbbbb\n" : "aaaaaaaaa\n", 10) == 10);
			/* pwrite appends too on an O_APPEND file. */
			CHILD_CHECK(pwrite(fd, "zzzzzzzzz\n", 10, 0) == 10);
			_exit(0);
		}
	}
	for (int i = 0; i < 2; i++)
		CHECK_EXITED(mt_wait(pids[i]), 0);
	struct stat st;
	CHECK_SYS(stat(p, &st));
	CHECK_EQ(st.st_size, 2 * 501 * 10);
}

static void o_tmpfile_then_link(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(dir, O_TMPFILE | O_RDWR, 0600));
	CHECK_EQ(write(fd, "tmp", 3), 3);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 0);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_SYS(linkat(AT_FDCWD, path, AT_FDCWD, in("named"), AT_SYMLINK_FOLLOW));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 1);
	CHECK_SYS(stat(in("named"), &st));
	CHECK_EQ(st.st_size, 3);
	close(fd);
	fd = CHECK_SYS(open(dir, O_TMPFILE | O_RDWR | O_EXCL, 0600));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_ERR(linkat(AT_FDCWD, path, AT_FDCWD, in("excl"), AT_SYMLINK_FOLLOW), ENOENT);
	close(fd);
}

static void user_xattrs(void)
{
	if (fresh_dir())
		return;
	const char *f = in("x");
	close(CHECK_SYS(open(f, O_CREAT | O_WRONLY, 0600)));
	CHECK_ERR(getxattr(f, "user.missing", NULL, 0), ENODATA);
	CHECK_SYS(setxattr(f, "user.k", "value", 5, XATTR_CREATE));
	CHECK_ERR(setxattr(f, "user.k", "v", 1, XATTR_CREATE), EEXIST);
	CHECK_ERR(setxattr(f, "user.other", "v", 1, XATTR_REPLACE), ENODATA);
	char buf[64];
	CHECK_EQ(getxattr(f, "user.k", NULL, 0), 5);
	CHECK_EQ(getxattr(f, "user.k", buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "value", 5);
	CHECK_ERR(getxattr(f, "user.k", buf, 2), ERANGE);
	CHECK_EQ(listxattr(f, buf, sizeof(buf)), 7);
	CHECK_MEMEQ(buf, "user.k", 7);
	CHECK_SYS(removexattr(f, "user.k"));
	CHECK_ERR(removexattr(f, "user.k"), ENODATA);
	CHECK_EQ(listxattr(f, buf, sizeof(buf)), 0);
}

static void times_change(void)
{
	if (fresh_dir())
		return;
	const char *f = in("t");
	int fd = CHECK_SYS(open(f, O_CREAT | O_RDWR, 0600));
	struct timespec old[2] = {{1000, 0}, {2000, 0}};
	CHECK_SYS(futimens(fd, old));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_atim.tv_sec, 1000);
	CHECK_EQ(st.st_mtim.tv_sec, 2000);
	CHECK_EQ(write(fd, "x", 1), 1);
	CHECK_SYS(fstat(fd, &st));
	CHECK_GT(st.st_mtim.tv_sec, 2000);
	CHECK_GT(st.st_ctim.tv_sec, 2000);
	CHECK_SYS(fchmod(fd, 0640));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0640);
	struct stat dst, dst2;
	CHECK_SYS(stat(dir, &dst));
	struct timespec dold[2] = {{1, 0}, {1, 0}};
	CHECK_SYS(utimensat(AT_FDCWD, dir, dold, 0));
	CHECK_SYS(unlink(f));
	CHECK_SYS(stat(dir, &dst2));
	CHECK_GT(dst2.st_mtim.tv_sec, 1);
	close(fd);
}

static void shared_mapping_sees_writes(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("m"), O_CREAT | O_RDWR, 0600));
	CHECK_SYS(ftruncate(fd, 3 * 4096));
	char *p = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	char *q = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, fd, 0));
	p[5000] = 'p';
	CHECK_EQ(q[5000], 'p');
	char c;
	CHECK_EQ(pread(fd, &c, 1, 5000), 1);
	CHECK_EQ(c, 'p');
	CHECK_EQ(pwrite(fd, "w", 1, 9000), 1);
	CHECK_EQ(p[9000], 'w');
	/* A child's writes through its inherited mapping reach the parent. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		p[100] = 'c';
		CHILD_CHECK(q[9000] == 'w');
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[100], 'c');
	/* And another process's own mapping of the file sees them too. */
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		int cfd = open(in("m"), O_RDWR);
		CHILD_CHECK(cfd >= 0);
		char *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 4096);
		CHILD_CHECK(r != MAP_FAILED);
		CHILD_CHECK(r[5000 - 4096] == 'p');
		r[1] = 'r';
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[4097], 'r');
	/* Truncation and regrowth: the mapping reads zeros. */
	CHECK_SYS(ftruncate(fd, 0));
	CHECK_SYS(ftruncate(fd, 3 * 4096));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_blocks, 0);
	CHECK_EQ(p[5000], 0);
	CHECK_EQ(q[100], 0);
	/* A fault allocates the page it touches, even a read. */
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_blocks, 16);
	p[0] = 'z';
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_blocks, 16);
	munmap(p, 3 * 4096);
	munmap(q, 3 * 4096);
	close(fd);
}

static void private_mapping_copies_on_write(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("p"), O_CREAT | O_RDWR, 0600));
	CHECK_EQ(pwrite(fd, "file", 4, 0), 4);
	CHECK_EQ(pwrite(fd, "page2", 5, 4096), 5);
	char *p = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	CHECK_MEMEQ(p, "file", 4);
	/* Before a private write, the file's changes show through. */
	CHECK_EQ(pwrite(fd, "FILE", 4, 0), 4);
	CHECK_MEMEQ(p, "FILE", 4);
	p[0] = 'x';
	char buf[4];
	CHECK_EQ(pread(fd, buf, 4, 0), 4);
	CHECK_MEMEQ(buf, "FILE", 4);
	CHECK_EQ(pwrite(fd, "again", 5, 0), 5);
	CHECK_MEMEQ(p, "xILE", 4);
	CHECK_MEMEQ(p + 4096, "page2", 5);
	munmap(p, 8192);
	close(fd);
}

static void mmap_unlinked_file_outlives_close(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("u"), O_CREAT | O_RDWR, 0600));
	CHECK_SYS(ftruncate(fd, 4096));
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	CHECK_SYS(unlink(in("u")));
	close(fd);
	p[10] = 'k';
	CHECK_EQ(p[10], 'k');
	munmap(p, 4096);
}

static void madvise_remove_and_free(void)
{
	if (fresh_dir())
		return;
	int fd = CHECK_SYS(open(in("r"), O_CREAT | O_RDWR, 0600));
	CHECK_SYS(ftruncate(fd, 2 * 4096));
	char *p = CHECK_MAP(mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	memset(p, 'm', 2 * 4096);
	CHECK_SYS(madvise(p, 4096, MADV_REMOVE));
	CHECK_EQ(p[0], 0);
	CHECK_EQ(p[4096], 'm');
	char c;
	CHECK_EQ(pread(fd, &c, 1, 10), 1);
	CHECK_EQ(c, 0);
	CHECK_ERR(madvise(p, 4096, MADV_FREE), EINVAL);
	char *priv = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	CHECK_ERR(madvise(priv, 4096, MADV_REMOVE), EACCES);
	char *anon = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_ERR(madvise(anon, 4096, MADV_REMOVE), EINVAL);
	anon[0] = 1;
	CHECK_SYS(madvise(anon, 4096, MADV_FREE));
	char *sh = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	sh[0] = 's';
	CHECK_SYS(madvise(sh, 4096, MADV_REMOVE));
	CHECK_EQ(sh[0], 0);
	munmap(p, 2 * 4096);
	munmap(priv, 4096);
	munmap(anon, 4096);
	munmap(sh, 4096);
	close(fd);
}

static void memfd_future_write_seal(void)
{
	int fd = CHECK_SYS(memfd_create("moat-future", MFD_ALLOW_SEALING));
	CHECK_SYS(ftruncate(fd, 4096));
	char *w = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	/* Unlike F_SEAL_WRITE, an existing writable mapping is no obstacle,
	 * and it may still write. */
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE));
	w[0] = 'w';
	CHECK_ERR(pwrite(fd, "x", 1, 0), EPERM);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EPERM);
	char *r = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	CHECK_EQ(r[0], 'w');
	CHECK_ERR(mprotect(r, 4096, PROT_READ | PROT_WRITE), EACCES);
	char *pv = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	pv[0] = 'p';
	CHECK_EQ(r[0], 'w');
	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096), EPERM);
	/* F_SEAL_WRITE is still refused while w exists. */
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_FUTURE_WRITE);
	int ro = CHECK_SYS(open("/dev/null", O_RDONLY));
	CHECK_ERR(fcntl(ro, F_GET_SEALS), EINVAL);
	munmap(w, 4096);
	munmap(r, 4096);
	munmap(pv, 4096);
	close(fd);
}

static void memfd_maps_name_and_stat(void)
{
	int fd = CHECK_SYS(memfd_create("moat-maps", 0));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode, S_IFREG | 0777);
	CHECK_EQ(st.st_nlink, 0);
	CHECK_EQ(write(fd, "x", 1), 1);
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_blocks, 8);
	struct statfs sf;
	CHECK_SYS(fstatfs(fd, &sf));
	CHECK_EQ(sf.f_type, TMPFS_MAGIC);
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	char line[512];
	int found = 0;
	char want[32];
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, want, strlen(want)) == 0 && strstr(line, "/memfd:moat-maps (deleted)"))
			found = 1;
	fclose(f);
	CHECK(found);
	/* A read-only open of the memfd through /proc/self/fd cannot seal. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ro = CHECK_SYS(open(path, O_RDONLY));
	CHECK_ERR(fcntl(ro, F_ADD_SEALS, F_SEAL_GROW), EPERM);
	CHECK_EQ(fcntl(ro, F_GET_SEALS), F_SEAL_SEAL);
	munmap(p, 4096);
	close(fd);
}

/* exec_from_memfd_and_shm runs a copy of this program from a memfd (by
 * descriptor and through /proc/self/fd) and from /dev/shm. */
static void exec_from_memfd_and_shm(void)
{
	if (fresh_dir())
		return;
	int src = CHECK_SYS(open("/proc/self/exe", O_RDONLY));
	int m = CHECK_SYS(memfd_create("moat-exe", MFD_CLOEXEC));
	int f = CHECK_SYS(open(in("exe"), O_CREAT | O_WRONLY, 0755));
	char buf[65536];
	ssize_t n;
	while ((n = read(src, buf, sizeof(buf))) > 0) {
		CHECK_EQ(write(m, buf, n), n);
		CHECK_EQ(write(f, buf, n), n);
	}
	close(f);
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", m);
	for (int how = 0; how < 3; how++) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
			char *argv[] = {"moat-exe", "--list", NULL};
			char *envp[] = {NULL};
			if (how == 0)
				syscall(SYS_execveat, m, "", argv, envp, AT_EMPTY_PATH);
			else if (how == 1)
				execve(proc, argv, envp);
			else
				execve(in("exe"), argv, envp);
			_exit(100 + how);
		}
		CHECK_EXITED(mt_wait(pid), 0);
	}
	close(m);
	close(src);
}

static const struct mt_case cases[] = {
	MT_CASE(shm_is_tmpfs),
	MT_CASE(file_sizes_and_blocks),
	MT_CASE(truncate_zeroes_the_tail),
	MT_CASE(fallocate_modes),
	MT_CASE(directory_sizes_and_links),
	MT_CASE(rename_variants),
	MT_CASE(hard_links_and_unlinked_files),
	MT_CASE(symlinks),
	MT_CASE(fifo_and_nodes),
	MT_CASE(fifo_open_waits_for_partner),
	MT_CASE(concurrent_appends_keep_every_byte),
	MT_CASE(o_tmpfile_then_link),
	MT_CASE(user_xattrs),
	MT_CASE(times_change),
	MT_CASE(shared_mapping_sees_writes),
	MT_CASE(private_mapping_copies_on_write),
	MT_CASE(mmap_unlinked_file_outlives_close),
	MT_CASE(madvise_remove_and_free),
	MT_CASE(memfd_future_write_seal),
	MT_CASE(memfd_maps_name_and_stat),
	MT_CASE(exec_from_memfd_and_shm),
};

MT_MAIN(cases)
