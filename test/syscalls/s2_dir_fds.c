//go:build ignore

/* s2_dir_fds: what file operations do on directory descriptors: read,
 * pread and readv are EISDIR, opening for writing, O_CREAT and O_TRUNC are
 * refused, mmap is ENODEV, and fstat, fchdir, lseek and getdents work. */
#include "moattest.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void read_family_eisdir(void)
{
	int d = CHECK_SYS(open("/proc", O_RDONLY | O_DIRECTORY));
	char buf[16];
	CHECK_ERR(read(d, buf, sizeof(buf)), EISDIR);
	CHECK_ERR(pread(d, buf, sizeof(buf), 0), EISDIR);
	struct iovec iov = { buf, sizeof(buf) };
	CHECK_ERR(readv(d, &iov, 1), EISDIR);
	CHECK_ERR(preadv(d, &iov, 1, 0), EISDIR);
}

static void tmpfs_read_eisdir(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY));
	char buf[4];
	CHECK_ERR(read(d, buf, sizeof(buf)), EISDIR);
	/* A zero-length read is refused as well. */
	CHECK_ERR(read(d, buf, 0), EISDIR);
}

static void write_opens_refused(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(open("d", O_WRONLY), EISDIR);
	CHECK_ERR(open("d", O_RDWR), EISDIR);
	CHECK_ERR(open("d", O_RDONLY | O_TRUNC), EISDIR);
	CHECK_ERR(open("d", O_RDONLY | O_CREAT, 0644), EISDIR);
	CHECK_ERR(open("d", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
	/* O_DIRECTORY on a file. (O_CREAT | O_DIRECTORY is EINVAL only since
	 * Linux 6.4, so it is not checked here.) */
	CHECK_SYS(close(CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_ERR(open("f", O_RDONLY | O_DIRECTORY), ENOTDIR);
}

static void write_on_dir_fd_ebadf(void)
{
	int d = CHECK_SYS(open("/proc", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(write(d, "x", 1), EBADF);
	CHECK_ERR(pwrite(d, "x", 1, 0), EBADF);
}

static void mmap_enodev(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY));
	errno = 0;
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, d, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENODEV);
}

static void sendfile_from_dir(void)
{
	int d = CHECK_SYS(open("/proc", O_RDONLY | O_DIRECTORY));
	int out = CHECK_SYS(memfd_create("o", 0));
	errno = 0;
	CHECK_EQ(sendfile(out, d, NULL, 10), -1);
	/* EISDIR on current kernels (the read fails); EINVAL on older. */
	CHECK(errno == EISDIR || errno == EINVAL);
}

static void lseek_and_getdents(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(mkdir("d/a", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	char buf[4096];
	long n = CHECK_SYS(syscall(SYS_getdents64, d, buf, sizeof(buf)));
	CHECK_GT(n, 0);
	CHECK_EQ(syscall(SYS_getdents64, d, buf, sizeof(buf)), 0);
	CHECK_EQ(lseek(d, 0, SEEK_SET), 0);
	CHECK_EQ(syscall(SYS_getdents64, d, buf, sizeof(buf)), n);
	CHECK_ERR(lseek(d, -1, SEEK_SET), EINVAL);
}

static void fstat_and_fchdir(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0710));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	struct stat st;
	CHECK_SYS(fstat(d, &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0710);
	CHECK_EQ(st.st_nlink, 2);
	CHECK_SYS(fchdir(d));
	CHECK_SYS(mkdir("inner", 0755));
	CHECK_SYS(fstat(d, &st));
	CHECK_EQ(st.st_nlink, 3);
}

static void getdents_on_file_enotdir(void)
{
	int fd = CHECK_SYS(memfd_create("f", 0));
	char buf[256];
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOTDIR);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(syscall(SYS_getdents64, p[0], buf, sizeof(buf)), ENOTDIR);
}

static const struct mt_case cases[] = {
	MT_CASE(read_family_eisdir),
	MT_CASE(tmpfs_read_eisdir),
	MT_CASE(write_opens_refused),
	MT_CASE(write_on_dir_fd_ebadf),
	MT_CASE(mmap_enodev),
	MT_CASE(sendfile_from_dir),
	MT_CASE(lseek_and_getdents),
	MT_CASE(fstat_and_fchdir),
	MT_CASE(getdents_on_file_enotdir),
};

MT_MAIN(cases)
