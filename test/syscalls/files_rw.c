//go:build ignore

/* files_rw: regular files on a writable file system: O_CREAT/O_EXCL/
 * O_TRUNC/O_APPEND opens, creat, write/pwrite/writev and reads back,
 * truncate/ftruncate, fallocate, fsync/fdatasync/syncfs/sync_file_range,
 * O_TMPFILE with linkat, umask, statfs. Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void create_excl_and_exists(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_EXCL | O_WRONLY, 0640));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode, S_IFREG | 0640);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(st.st_uid, getuid());
	close(fd);
	CHECK_ERR(open("f", O_CREAT | O_EXCL | O_WRONLY, 0640), EEXIST);
	/* O_CREAT of an existing file opens it, the mode ignored. */
	fd = CHECK_SYS(open("f", O_CREAT | O_RDONLY, 0777));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode, S_IFREG | 0640);
	close(fd);
	CHECK_ERR(open("f/", O_CREAT | O_WRONLY, 0640), EISDIR);
	CHECK_ERR(open("new/", O_CREAT | O_WRONLY, 0640), EISDIR);
	CHECK_ERR(open("nodir/f", O_CREAT | O_WRONLY, 0640), ENOENT);
	CHECK_ERR(open("f/x", O_CREAT | O_WRONLY, 0640), ENOTDIR);
	CHECK_ERR(open(".", O_CREAT | O_RDONLY, 0640), EISDIR);
	/* O_CREAT|O_DIRECTORY never creates (Linux 6.4 and later). */
	CHECK_ERR(open("newdir", O_CREAT | O_DIRECTORY | O_RDONLY, 0755), EINVAL);
	CHECK_ERR(open("f", O_CREAT | O_DIRECTORY | O_RDONLY, 0755), EINVAL);
	CHECK_SYS(unlink("f"));
}

static void create_mode_and_umask(void)
{
	ENTER();
	umask(027);
	int fd = CHECK_SYS(open("u", O_CREAT | O_WRONLY, 0777));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0750);
	close(fd);
	/* A file created without write permission is still opened for
	 * writing by the open that made it. */
	fd = CHECK_SYS(open("ro", O_CREAT | O_RDWR, 0400));
	CHECK_EQ(write(fd, "x", 1), 1);
	close(fd);
	fd = CHECK_SYS(creat("c", 0644));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	close(fd);
	unlink("u");
	unlink("ro");
	unlink("c");
}

static void write_read_back(void)
{
	ENTER();
	int fd = CHECK_SYS(open("w", O_CREAT | O_RDWR | O_TRUNC, 0644));
	CHECK_EQ(write(fd, "hello world", 11), 11);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 11);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 11);
	char buf[32] = {0};
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 11);
	CHECK_STREQ(buf, "hello world");
	CHECK_EQ(pwrite(fd, "W", 1, 6), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 11);
	/* Writing past the end leaves a hole of zeros. */
	CHECK_EQ(pwrite(fd, "!", 1, 20), 1);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 21);
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 21);
	CHECK_MEMEQ(buf, "hello World\0\0\0\0\0\0\0\0\0!", 21);
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(writev(fd, iov, 2), 4);
	CHECK_EQ(pread(fd, buf, 4, 0), 4);
	CHECK_MEMEQ(buf, "abcd", 4);
	close(fd);
	/* A second open sees the data. */
	fd = CHECK_SYS(open("w", O_RDONLY));
	CHECK_EQ(read(fd, buf, 5), 5);
	CHECK_MEMEQ(buf, "abcdo", 5);
	CHECK_ERR(write(fd, "x", 1), EBADF);
	close(fd);
	unlink("w");
}

static void append_mode(void)
{
	ENTER();
	int fd = CHECK_SYS(open("a", O_CREAT | O_RDWR | O_TRUNC, 0644));
	CHECK_EQ(write(fd, "12345", 5), 5);
	int ap = CHECK_SYS(open("a", O_WRONLY | O_APPEND));
	CHECK_EQ(lseek(ap, 0, SEEK_SET), 0);
	CHECK_EQ(write(ap, "ab", 2), 2);
	CHECK_EQ(lseek(ap, 0, SEEK_CUR), 7);
	CHECK_EQ(write(fd, "X", 1), 1); /* at offset 5 of the other fd */
	CHECK_EQ(write(ap, "c", 1), 1);
	char buf[16];
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 8);
	CHECK_MEMEQ(buf, "12345Xbc", 8);
	/* F_SETFL turns O_APPEND on. */
	CHECK_SYS(fcntl(fd, F_SETFL, O_APPEND));
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "Z", 1), 1);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 9);
	CHECK_EQ(buf[8], 'Z');
	close(fd);
	close(ap);
	unlink("a");
}

static void append_pwrite_and_rwf(void)
{
	ENTER();
	int fd = CHECK_SYS(open("a", O_CREAT | O_RDWR | O_TRUNC, 0644));
	CHECK_EQ(write(fd, "12345", 5), 5);
	CHECK_EQ(lseek(fd, 1, SEEK_SET), 1);
	/* RWF_APPEND writes at the end; with offset -1 the file offset moves
	 * there, with an explicit one it stays. */
	struct iovec v = {"ab", 2};
	CHECK_EQ(pwritev2(fd, &v, 1, -1, RWF_APPEND), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 7);
	CHECK_EQ(lseek(fd, 1, SEEK_SET), 1);
	CHECK_EQ(pwritev2(fd, &v, 1, 0, RWF_APPEND), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 1);
	char buf[16];
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 9);
	CHECK_MEMEQ(buf, "12345abab", 9);
	close(fd);
	/* On Linux, pwrite to an O_APPEND file appends whatever the offset. */
	int ap = CHECK_SYS(open("a", O_WRONLY | O_APPEND));
	CHECK_EQ(pwrite(ap, "Z", 1, 0), 1);
	close(ap);
	fd = CHECK_SYS(open("a", O_RDONLY));
	CHECK_EQ(read(fd, buf, sizeof(buf)), 10);
	CHECK_MEMEQ(buf, "12345ababZ", 10);
	close(fd);
	unlink("a");
}

static void trunc_on_open(void)
{
	ENTER();
	int fd = CHECK_SYS(open("t", O_CREAT | O_WRONLY, 0644));
	CHECK_EQ(write(fd, "data", 4), 4);
	close(fd);
	struct stat st;
	CHECK_SYS(stat("t", &st));
	CHECK_EQ(st.st_size, 4);
	fd = CHECK_SYS(open("t", O_WRONLY | O_TRUNC));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
	close(fd);
	/* O_RDONLY|O_TRUNC truncates too (it needs write permission). */
	fd = CHECK_SYS(open("t", O_WRONLY));
	CHECK_EQ(write(fd, "data", 4), 4);
	close(fd);
	fd = CHECK_SYS(open("t", O_RDONLY | O_TRUNC));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
	close(fd);
	CHECK_SYS(chmod("t", 0444));
	AS_USER({
		CHILD_ERR(open("t", O_RDONLY | O_TRUNC), EACCES);
	});
	unlink("t");
}

static void truncate_family(void)
{
	ENTER();
	int fd = CHECK_SYS(open("t", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_SYS(ftruncate(fd, 4));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 4);
	CHECK_SYS(truncate("t", 100));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 100);
	char buf[8];
	CHECK_EQ(pread(fd, buf, 8, 2), 8);
	CHECK_MEMEQ(buf, "23\0\0\0\0\0\0", 8);
	/* The offset stays past the new end. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 10);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	CHECK_ERR(truncate("t", -1), EINVAL);
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(truncate("d", 0), EISDIR);
	CHECK_ERR(truncate("nope", 0), ENOENT);
	int ro = CHECK_SYS(open("t", O_RDONLY));
	CHECK_ERR(ftruncate(ro, 0), EINVAL);
	close(ro);
	int dfd = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(ftruncate(dfd, 0), EINVAL);
	close(dfd);
	CHECK_SYS(mkfifo("p", 0644));
	CHECK_ERR(truncate("p", 0), EINVAL);
	CHECK_SYS(chmod("t", 0444));
	AS_USER({
		CHILD_ERR(truncate("t", 0), EACCES);
	});
	close(fd);
	unlink("t");
	unlink("p");
	rmdir("d");
}

static void fallocate_modes(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_SYS(fallocate(fd, 0, 0, 8192));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 8192);
	CHECK_SYS(fallocate(fd, FALLOC_FL_KEEP_SIZE, 8192, 4096));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 8192);
	CHECK_ERR(fallocate(fd, 0, -1, 10), EINVAL);
	CHECK_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE, 0, 4096), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, 0x1000, 0, 10), EOPNOTSUPP);
	int ro = CHECK_SYS(open("f", O_RDONLY));
	CHECK_ERR(fallocate(ro, 0, 0, 10), EBADF);
	close(ro);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(fallocate(p[1], 0, 0, 10), ESPIPE);
	close(fd);
	unlink("f");
}

static void sync_family(void)
{
	ENTER();
	int fd = CHECK_SYS(open("s", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(fd, "x", 1), 1);
	CHECK_SYS(fsync(fd));
	CHECK_SYS(fdatasync(fd));
	CHECK_SYS(syncfs(fd));
	CHECK_SYS(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	CHECK_ERR(sync_file_range(fd, -1, 0, 0), EINVAL);
	CHECK_ERR(sync_file_range(fd, 0, 0, 0x100), EINVAL);
	sync();
	int dfd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fsync(dfd));
	close(dfd);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(fsync(p[0]), EINVAL);
	CHECK_ERR(sync_file_range(p[0], 0, 0, 0), ESPIPE);
	CHECK_ERR(fsync(-1), EBADF);
	close(fd);
	unlink("s");
}

static void tmpfile_and_linkat(void)
{
	ENTER();
	int fd = open(".", O_TMPFILE | O_RDWR, 0600);
	if (fd < 0 && errno == EOPNOTSUPP)
		SKIP("O_TMPFILE unsupported here");
	CHECK(fd >= 0);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(write(fd, "tmp", 3), 3);
	CHECK_SYS(linkat(fd, "", AT_FDCWD, "named", AT_EMPTY_PATH));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 1);
	char buf[4] = {0};
	int r = CHECK_SYS(open("named", O_RDONLY));
	CHECK_EQ(read(r, buf, 3), 3);
	CHECK_STREQ(buf, "tmp");
	close(r);
	close(fd);
	fd = CHECK_SYS(open(".", O_TMPFILE | O_RDWR | O_EXCL, 0600));
	CHECK_ERR(linkat(fd, "", AT_FDCWD, "named2", AT_EMPTY_PATH), ENOENT);
	close(fd);
	/* Linux 6.10 and later: a caller may name its own O_TMPFILE file
	 * without CAP_DAC_READ_SEARCH. */
	CHECK_SYS(chmod(".", 0777));
	AS_USER({
		int t = open(".", O_TMPFILE | O_RDWR, 0600);
		CHILD_CHECK(t >= 0);
		CHILD_CHECK(linkat(t, "", AT_FDCWD, "user-named", AT_EMPTY_PATH) == 0);
	});
	struct stat ust;
	CHECK_SYS(stat("user-named", &ust));
	CHECK_EQ(ust.st_uid, 1000);
	CHECK_ERR(open(".", O_TMPFILE | O_RDONLY, 0600), EINVAL);
	CHECK_ERR(open("named", O_TMPFILE | O_RDWR, 0600), ENOTDIR);
	unlink("named");
}

/* A process that changed its uids (non-dumpable) still reaches its own
 * /proc/self/fd, and can name an O_TMPFILE file through it. */
static void tmpfile_link_via_proc(void)
{
	ENTER();
	CHECK_SYS(chmod(".", 0777));
	AS_USER({
		int t = open(".", O_TMPFILE | O_RDWR, 0600);
		CHILD_CHECK(t >= 0);
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", t);
		CHILD_CHECK(linkat(AT_FDCWD, p, AT_FDCWD, "proc-named", AT_SYMLINK_FOLLOW) == 0);
	});
	struct stat st;
	CHECK_SYS(stat("proc-named", &st));
	CHECK_EQ(st.st_nlink, 1);
}

static void statfs_shm(void)
{
	ENTER();
	struct statfs sf;
	CHECK_SYS(statfs(".", &sf));
	CHECK_EQ(sf.f_type, 0x01021994); /* TMPFS_MAGIC */
	CHECK_EQ(sf.f_flags & (ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_RELATIME),
		 ST_NOSUID | ST_NODEV | ST_RELATIME);
	int fd = CHECK_SYS(open(".", O_RDONLY));
	CHECK_SYS(fstatfs(fd, &sf));
	CHECK_EQ(sf.f_type, 0x01021994);
	close(fd);
}

static void times_follow_writes(void)
{
	ENTER();
	int fd = CHECK_SYS(open("m", O_CREAT | O_RDWR, 0644));
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	CHECK_SYS(futimens(fd, old));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mtim.tv_sec, 1000);
	CHECK_EQ(write(fd, "x", 1), 1);
	CHECK_SYS(fstat(fd, &st));
	CHECK_GT(st.st_mtim.tv_sec, 1000);
	CHECK_GT(st.st_ctim.tv_sec, 1000);
	CHECK_SYS(futimens(fd, old));
	CHECK_SYS(ftruncate(fd, 0));
	CHECK_SYS(fstat(fd, &st));
	CHECK_GT(st.st_mtim.tv_sec, 1000);
	close(fd);
	unlink("m");
}

static void fsize_limit(void)
{
	ENTER();
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, rl = {10, RLIM_INFINITY};
	CHECK_SYS(getrlimit(RLIMIT_FSIZE, &old));
	CHECK_SYS(setrlimit(RLIMIT_FSIZE, &rl));
	int fd = open("big", O_CREAT | O_RDWR | O_TRUNC, 0644);
	ssize_t a = write(fd, "0123456789abcdef", 16);
	errno = 0;
	ssize_t b = write(fd, "x", 1);
	int berr = errno;
	int terr = ftruncate(fd, 100) < 0 ? errno : 0;
	ssize_t c = pwrite(fd, "xy", 2, 9);
	setrlimit(RLIMIT_FSIZE, &old);
	close(fd);
	unlink("big");
	CHECK_EQ(a, 10);
	CHECK_EQ(b, -1);
	CHECK_EQ(berr, EFBIG);
	CHECK_EQ(terr, EFBIG);
	CHECK_EQ(c, 1);
}

static void copy_file_range_cases(void)
{
	ENTER();
	int in = CHECK_SYS(open("in", O_CREAT | O_RDWR | O_TRUNC, 0644));
	CHECK_EQ(write(in, "0123456789", 10), 10);
	int out = CHECK_SYS(open("out", O_CREAT | O_RDWR | O_TRUNC, 0644));
	CHECK_EQ(lseek(in, 2, SEEK_SET), 2);
	CHECK_EQ(copy_file_range(in, NULL, out, NULL, 3, 0), 3);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 5);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 3);
	loff_t oin = 8, oout = 100;
	/* Stops at the input's end; explicit offsets move, the files' not. */
	CHECK_EQ(copy_file_range(in, &oin, out, &oout, 50, 0), 2);
	CHECK_EQ(oin, 10);
	CHECK_EQ(oout, 102);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 5);
	char buf[128];
	CHECK_EQ(pread(out, buf, sizeof(buf), 0), 102);
	CHECK_MEMEQ(buf, "234", 3);
	CHECK_MEMEQ(buf + 100, "89", 2);
	oin = 20;
	CHECK_EQ(copy_file_range(in, &oin, out, NULL, 5, 0), 0);
	CHECK_ERR(copy_file_range(in, NULL, out, NULL, 1, 1), EINVAL);
	loff_t a = 0, b = 2;
	CHECK_ERR(copy_file_range(in, &a, in, &b, 5, 0), EINVAL);
	int ro = CHECK_SYS(open("out", O_RDONLY));
	CHECK_ERR(copy_file_range(in, NULL, ro, NULL, 1, 0), EBADF);
	close(ro);
	int ap = CHECK_SYS(open("out", O_WRONLY | O_APPEND));
	CHECK_ERR(copy_file_range(in, NULL, ap, NULL, 1, 0), EBADF);
	close(ap);
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(copy_file_range(d, NULL, out, NULL, 1, 0), EISDIR);
	close(d);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(copy_file_range(in, NULL, p[1], NULL, 1, 0), EINVAL);
	CHECK_ERR(copy_file_range(-1, NULL, out, NULL, 1, 0), EBADF);
	/* Another file system: EXDEV (callers fall back to read/write). */
	int pw = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(copy_file_range(pw, NULL, out, NULL, 1, 0), EXDEV);
	close(pw);
	close(in);
	close(out);
}

static void fadvise_readahead(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_RET0(posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL));
	CHECK_RET0(posix_fadvise(fd, 0, 100, POSIX_FADV_DONTNEED));
	CHECK_RET(posix_fadvise(fd, 0, 0, 99), EINVAL);
	CHECK_RET(posix_fadvise(fd, 0, -1, POSIX_FADV_NORMAL), EINVAL);
	CHECK_RET(posix_fadvise(-1, 0, 0, POSIX_FADV_NORMAL), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_RET(posix_fadvise(p[0], 0, 0, POSIX_FADV_NORMAL), ESPIPE);
	CHECK_SYS(readahead(fd, 0, 4096));
	CHECK_ERR(readahead(p[0], 0, 10), EINVAL);
	int w = CHECK_SYS(open("f", O_WRONLY));
	CHECK_ERR(readahead(w, 0, 10), EBADF);
	close(w);
	close(fd);
}

static const struct mt_case cases[] = {
	MT_CASE(create_excl_and_exists),
	MT_CASE(create_mode_and_umask),
	MT_CASE(write_read_back),
	MT_CASE(append_mode),
	MT_CASE(append_pwrite_and_rwf),
	MT_CASE(trunc_on_open),
	MT_CASE(truncate_family),
	MT_CASE(fallocate_modes),
	MT_CASE(sync_family),
	MT_CASE(tmpfile_and_linkat),
	MT_CASE(tmpfile_link_via_proc),
	MT_CASE(statfs_shm),
	MT_CASE(times_follow_writes),
	MT_CASE(fsize_limit),
	MT_CASE(copy_file_range_cases),
	MT_CASE(fadvise_readahead),
};

MT_MAIN(cases)
