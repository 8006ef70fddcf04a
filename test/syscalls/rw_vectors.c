//go:build ignore

/* rw_vectors: read, write, readv, writev, pread64, pwrite64, preadv,
 * pwritev, preadv2, pwritev2 and lseek on pipes, /dev files and read-only
 * regular files: zero lengths, iovec limits and overflow, bad buffers,
 * offsets on unseekable files and past the largest offset, whence
 * values. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x8
#endif
#ifndef RWF_HIPRI
#define RWF_HIPRI 0x1
#endif

static void zero_length_io(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "", 0), 0);
	/* A zero-length read of an empty pipe does not block. */
	char c;
	CHECK_EQ(read(p[0], &c, 0), 0);
	/* Even with a bad buffer. */
	CHECK_EQ(read(p[0], NULL, 0), 0);
	CHECK_EQ(write(p[1], NULL, 0), 0);
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	CHECK_EQ(read(z, NULL, 0), 0);
}

static void bad_fd_and_mode(void)
{
	char buf[4];
	CHECK_ERR(read(-1, buf, 1), EBADF);
	CHECK_ERR(write(999, buf, 1), EBADF);
	int r = CHECK_SYS(open("/dev/null", O_RDONLY));
	int w = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK_ERR(write(r, "x", 1), EBADF);
	CHECK_ERR(read(w, buf, 1), EBADF);
	CHECK_ERR(pread(w, buf, 1, 0), EBADF);
	/* A directory cannot be read. */
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(read(d, buf, 1), EISDIR);
	/* An O_PATH descriptor cannot be read or written. */
	int o = CHECK_SYS(open("/dev/null", O_PATH));
	CHECK_ERR(read(o, buf, 1), EBADF);
	CHECK_ERR(write(o, buf, 1), EBADF);
}

static void bad_buffers_efault(void)
{
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	CHECK_ERR(read(z, (void *)1, 16), EFAULT);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(write(p[1], (void *)1, 16), EFAULT);
}

static void dev_null_ignores_bad_buffer(void)
{
	int n = CHECK_SYS(open("/dev/null", O_WRONLY));
	/* /dev/null never looks at the buffer. */
	CHECK_EQ(write(n, (void *)1, 16), 16);
}

static void readv_writev_pipe(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char a[] = "abc", b[] = "defgh";
	struct iovec wv[3] = {{a, 3}, {NULL, 0}, {b, 5}};
	CHECK_EQ(writev(p[1], wv, 3), 8);
	char x[2], y[10];
	struct iovec rv[2] = {{x, 2}, {y, sizeof(y)}};
	CHECK_EQ(readv(p[0], rv, 2), 8);
	CHECK_MEMEQ(x, "ab", 2);
	CHECK_MEMEQ(y, "cdefgh", 6);
}

static void iovec_count_limits(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_WRONLY));
	static struct iovec v[IOV_MAX + 1];
	static char byte;
	for (int i = 0; i <= IOV_MAX; i++) {
		v[i].iov_base = &byte;
		v[i].iov_len = 1;
	}
	CHECK_EQ(writev(fd, v, IOV_MAX), IOV_MAX);
	CHECK_ERR(writev(fd, v, IOV_MAX + 1), EINVAL);
	CHECK_ERR(writev(fd, v, -1), EINVAL);
	CHECK_EQ(writev(fd, v, 0), 0);
	CHECK_EQ(writev(fd, NULL, 0), 0);
	CHECK_ERR(writev(fd, (void *)1, 1), EFAULT);
}

static void iovec_length_overflow(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_WRONLY));
	static char buf[8];
	/* A segment reaching past user memory: EFAULT, even for /dev/null
	 * (Linux checks every segment before the total is clamped). */
	struct iovec v[2] = {{buf, (size_t)SSIZE_MAX}, {buf, 2}};
	CHECK_ERR(writev(fd, v, 2), EFAULT);
	/* A negative length anywhere is EINVAL, checked first. */
	struct iovec mixed[2] = {{(void *)1, 8}, {buf, (size_t)-1}};
	CHECK_ERR(writev(fd, mixed, 2), EINVAL);
	struct iovec neg[1] = {{buf, (size_t)-1}};
	CHECK_ERR(writev(fd, neg, 1), EINVAL);
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	CHECK_ERR(readv(z, neg, 1), EINVAL);
}

static void readv_partial_efault(void)
{
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	char buf[8];
	/* A bad second iovec after a good first: a short count. */
	struct iovec v[2] = {{buf, 8}, {(void *)1, 8}};
	CHECK_EQ(readv(z, v, 2), 8);
	/* A bad first one: EFAULT. */
	struct iovec w[1] = {{(void *)1, 8}};
	CHECK_ERR(readv(z, w, 1), EFAULT);
}

static void pread_pwrite_unseekable(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char buf[4];
	CHECK_ERR(pread(p[0], buf, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(p[1], "x", 1, 0), ESPIPE);
	struct iovec v = {buf, 1};
	CHECK_ERR(preadv(p[0], &v, 1, 0), ESPIPE);
	CHECK_ERR(pwritev(p[1], &v, 1, 0), ESPIPE);
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
}

static void pread_file_offsets(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	char buf[16];
	CHECK_EQ(pread(fd, buf, 5, 6), 5);
	CHECK_MEMEQ(buf, "moat\n", 5);
	/* pread does not move the offset. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
	/* At and past the end: 0. */
	CHECK_EQ(pread(fd, buf, 5, 11), 0);
	CHECK_EQ(pread(fd, buf, 5, 1000), 0);
	CHECK_ERR(pread(fd, buf, 5, -1), EINVAL);
	struct iovec v[2] = {{buf, 2}, {buf + 2, 3}};
	CHECK_EQ(preadv(fd, v, 2, 0), 5);
	CHECK_MEMEQ(buf, "hello", 5);
	CHECK_ERR(preadv(fd, v, 2, -5), EINVAL);
	CHECK_ERR(pwrite(fd, "x", 1, 0), EBADF);
}

static void pread_pwrite_range_overflow(void)
{
	/* An offset plus count past the largest file offset is EINVAL
	 * (rw_verify_area), checked on the whole count. */
	int fd = CHECK_SYS(memfd_create("ovf", 0));
	char buf[16];
	CHECK_ERR(pread(fd, buf, 16, LLONG_MAX - 8), EINVAL);
	CHECK_ERR(pwrite(fd, buf, 1, LLONG_MAX), EINVAL);
	CHECK_ERR(pwrite(fd, buf, 16, LLONG_MAX - 15 + 1), EINVAL);
	/* Ending exactly at the largest offset is fine: past the end, 0. */
	CHECK_EQ(pread(fd, buf, 8, LLONG_MAX - 8), 0);
	CHECK_EQ(pread(fd, buf, 0, LLONG_MAX), 0);
	struct iovec v[2] = {{buf, 8}, {buf + 8, 8}};
	CHECK_ERR(preadv(fd, v, 2, LLONG_MAX - 8), EINVAL);
	CHECK_ERR(pwritev(fd, v, 2, LLONG_MAX - 8), EINVAL);
	CHECK_ERR(syscall(SYS_preadv2, fd, v, 2, LLONG_MAX - 8, 0L, 0), EINVAL);
	CHECK_EQ(preadv(fd, v, 1, LLONG_MAX - 8), 0);
	/* Other checks come first: ESPIPE for a pipe, EBADF for the mode. */
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(pread(p[0], buf, 16, LLONG_MAX - 8), ESPIPE);
	int ro = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(pwrite(ro, buf, 16, LLONG_MAX - 8), EBADF);
	CHECK_ERR(pwritev(ro, v, 2, LLONG_MAX - 8), EBADF);
	/* Nothing was written. */
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
}

static void preadv2_flags(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	char buf[16];
	struct iovec v = {buf, 5};
	/* Offset -1 means the current offset, which advances. */
	CHECK_EQ(syscall(SYS_preadv2, fd, &v, 1, -1L, -1L, 0), 5);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(syscall(SYS_preadv2, fd, &v, 1, 0L, 0L, 0), 5);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_ERR(syscall(SYS_preadv2, fd, &v, 1, 0L, 0L, 0x1000), EOPNOTSUPP);
	CHECK_ERR(syscall(SYS_preadv2, fd, &v, 1, -2L, -1L, 0), EINVAL);
	/* pwritev2 at -1 on a pipe is a plain write. */
	int p[2];
	CHECK_SYS(pipe(p));
	struct iovec w = {"hey", 3};
	CHECK_EQ(syscall(SYS_pwritev2, p[1], &w, 1, -1L, -1L, 0), 3);
	CHECK_ERR(syscall(SYS_pwritev2, p[1], &w, 1, 0L, 0L, 0), ESPIPE);
	CHECK_EQ(syscall(SYS_preadv2, p[0], &v, 1, -1L, -1L, 0), 3);
	/* RWF_NOWAIT on an empty pipe: EAGAIN instead of blocking. */
	CHECK_ERR(syscall(SYS_preadv2, p[0], &v, 1, -1L, -1L, RWF_NOWAIT), EAGAIN);
}

static void lseek_whence_values(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
	CHECK_EQ(lseek(fd, 2, SEEK_CUR), 5);
	CHECK_EQ(lseek(fd, -1, SEEK_END), 10);
	CHECK_EQ(lseek(fd, 100, SEEK_SET), 100);
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CHECK_ERR(lseek(fd, -200, SEEK_CUR), EINVAL);
	CHECK_ERR(lseek(fd, 0, 7), EINVAL);
	CHECK_ERR(lseek(fd, 0, -1), EINVAL);
	/* SEEK_DATA and SEEK_HOLE on a file without holes. */
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), 11);
	CHECK_ERR(lseek(fd, 11, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, 50, SEEK_HOLE), ENXIO);
	CHECK_ERR(lseek(999, 0, SEEK_SET), EBADF);
}

static void lseek_devices(void)
{
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	/* /dev/zero and /dev/null accept any seek and stay at 0. */
	CHECK_EQ(lseek(z, 1000, SEEK_SET), 0);
	CHECK_EQ(lseek(z, 5, SEEK_CUR), 0);
	int n = CHECK_SYS(open("/dev/null", O_RDWR));
	CHECK_EQ(lseek(n, 123, SEEK_SET), 0);
	CHECK_EQ(lseek(n, 0, SEEK_END), 0);
}

static void lseek_directory(void)
{
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_EQ(lseek(d, 0, SEEK_SET), 0);
	char buf[4096];
	CHECK_GT(syscall(SYS_getdents64, d, buf, sizeof(buf)), 0);
	/* Rewinding a directory restarts the listing. */
	CHECK_EQ(lseek(d, 0, SEEK_SET), 0);
	CHECK_GT(syscall(SYS_getdents64, d, buf, sizeof(buf)), 0);
}

static void urandom_and_full_sizes(void)
{
	int u = CHECK_SYS(open("/dev/urandom", O_RDONLY));
	static char big[1 << 20];
	CHECK_EQ(read(u, big, sizeof(big)), (long)sizeof(big));
	int f = CHECK_SYS(open("/dev/full", O_RDWR));
	CHECK_ERR(write(f, "x", 1), ENOSPC);
	/* Even an empty write fails on /dev/full. */
	CHECK_ERR(write(f, "x", 0), ENOSPC);
	CHECK_EQ(read(f, big, 100), 100);
	CHECK_EQ(big[0], 0);
}

static void append_flag_and_pwrite_pipe_ignored(void)
{
	/* O_APPEND on a pipe changes nothing. */
	int p[2];
	CHECK_SYS(pipe2(p, 0));
	CHECK_SYS(fcntl(p[1], F_SETFL, O_APPEND));
	CHECK_EQ(write(p[1], "ab", 2), 2);
	char buf[2];
	CHECK_EQ(read(p[0], buf, 2), 2);
}

static void sigpipe_on_write_to_closed_pipe(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	struct iovec v = {"x", 1};
	CHECK_ERR(writev(p[1], &v, 1), EPIPE);
	/* A zero-length write to a widowed pipe is 0 (Linux checks readers
	 * only when there is data). */
	CHECK_EQ(write(p[1], "", 0), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(zero_length_io),
	MT_CASE(bad_fd_and_mode),
	MT_CASE(bad_buffers_efault),
	MT_CASE(dev_null_ignores_bad_buffer),
	MT_CASE(readv_writev_pipe),
	MT_CASE(iovec_count_limits),
	MT_CASE(iovec_length_overflow),
	MT_CASE(readv_partial_efault),
	MT_CASE(pread_pwrite_unseekable),
	MT_CASE(pread_file_offsets),
	MT_CASE(preadv2_flags),
	MT_CASE(pread_pwrite_range_overflow),
	MT_CASE(lseek_whence_values),
	MT_CASE(lseek_devices),
	MT_CASE(lseek_directory),
	MT_CASE(urandom_and_full_sizes),
	MT_CASE(append_flag_and_pwrite_pipe_ignored),
	MT_CASE(sigpipe_on_write_to_closed_pipe),
};

MT_MAIN(cases)
