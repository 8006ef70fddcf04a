//go:build ignore

/* pipe_sizes: pipe and pipe2 details: flags (O_CLOEXEC, O_NONBLOCK,
 * O_DIRECT packet mode, invalid flags), EFAULT, capacity changes with
 * F_SETPIPE_SZ/F_GETPIPE_SZ (rounding, limits, shrinking below the
 * content), PIPE_BUF atomicity for non-blocking writes, and read sizes. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void pipe2_flags_applied(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_CLOEXEC | O_NONBLOCK));
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(fcntl(p[i], F_GETFD), FD_CLOEXEC);
		CHECK(fcntl(p[i], F_GETFL) & O_NONBLOCK);
	}
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
	char c;
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);
}

static void pipe2_invalid_flags(void)
{
	int p[2];
	CHECK_ERR(pipe2(p, O_APPEND), EINVAL);
	CHECK_ERR(pipe2(p, O_RDWR), EINVAL);
	CHECK_ERR(pipe2(p, 0x1), EINVAL);
	CHECK_ERR(syscall(SYS_pipe2, (void *)1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_pipe, (void *)1), EFAULT);
	/* A failed copy-out leaves no descriptors behind. */
	CHECK_ERR(fcntl(3, F_GETFD), EBADF);
}

static void pipe_stat_is_fifo(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct stat a, b;
	CHECK_SYS(fstat(p[0], &a));
	CHECK_SYS(fstat(p[1], &b));
	CHECK(S_ISFIFO(a.st_mode));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_size, 0);
	CHECK_EQ(write(p[1], "abc", 3), 3);
	/* Linux reports 0 as the size of a pipe even with data. */
	CHECK_SYS(fstat(p[0], &a));
	CHECK_EQ(a.st_size, 0);
}

static void o_direct_packets(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_DIRECT));
	CHECK(fcntl(p[1], F_GETFL) & O_DIRECT);
	CHECK_EQ(write(p[1], "first", 5), 5);
	CHECK_EQ(write(p[1], "second!", 7), 7);
	char buf[64];
	/* Each read returns one packet, even with room for more. */
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	/* A short read of a packet discards its rest. */
	CHECK_EQ(read(p[0], buf, 3), 3);
	CHECK_MEMEQ(buf, "sec", 3);
	CHECK_SYS(fcntl(p[0], F_SETFL, O_NONBLOCK));
	CHECK_ERR(read(p[0], buf, sizeof(buf)), EAGAIN);
	/* O_DIRECT can be switched on with F_SETFL. */
	int q[2];
	CHECK_SYS(pipe(q));
	CHECK_SYS(fcntl(q[1], F_SETFL, O_DIRECT));
	CHECK(fcntl(q[1], F_GETFL) & O_DIRECT);
}

static void setpipe_sz_rounding(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 65536);
	/* Rounded up to a power-of-two number of pages. */
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 5000), 8192);
	CHECK_EQ(fcntl(p[1], F_GETPIPE_SZ), 8192);
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 1), 4096);
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 0), 4096);
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 3 * 65536), 262144);
	CHECK_ERR(fcntl(p[0], F_SETPIPE_SZ, -1), EINVAL);
	/* Not a pipe. */
	int n = CHECK_SYS(open("/dev/null", O_RDONLY));
	CHECK_ERR(fcntl(n, F_GETPIPE_SZ), EBADF);
	CHECK_ERR(fcntl(n, F_SETPIPE_SZ, 4096), EBADF);
}

static void setpipe_sz_limits(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	/* Above /proc/sys/fs/pipe-max-size (1 MiB): root may, others get
	 * EPERM; beyond 2^31: EINVAL for everyone. */
	CHECK_ERR(fcntl(p[0], F_SETPIPE_SZ, 0x80001000U), EINVAL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(fcntl(p[0], F_SETPIPE_SZ, 2 << 20) == -1 && errno == EPERM);
		CHILD_CHECK(fcntl(p[0], F_SETPIPE_SZ, 1 << 20) == 1 << 20);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void setpipe_sz_below_content(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	static char buf[20000];
	CHECK_EQ(write(p[1], buf, sizeof(buf)), (long)sizeof(buf));
	/* Shrinking below what is buffered: EBUSY. */
	CHECK_ERR(fcntl(p[0], F_SETPIPE_SZ, 4096), EBUSY);
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 32768), 32768);
}

static void capacity_limits_nonblocking_writes(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 4096), 4096);
	static char buf[8192];
	/* One page of room: a larger write is partial. */
	CHECK_EQ(write(p[1], buf, sizeof(buf)), 4096);
	CHECK_ERR(write(p[1], buf, 1), EAGAIN);
	int n;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 4096);
}

static void pipe_buf_writes_all_or_nothing(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	static char buf[65536];
	/* Fill all but 100 bytes. */
	CHECK_EQ(write(p[1], buf, 65536 - 100), 65536 - 100);
	/* A write of at most PIPE_BUF that does not fit: EAGAIN, nothing
	 * written. */
	CHECK_ERR(write(p[1], buf, 200), EAGAIN);
	int n;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	/* Linux counts in pages: a partially filled last page may still
	 * take small writes; either way no partial 200-byte write. */
	CHECK(n == 65536 - 100 || n == 65536 - 100 + 200);
	/* A larger than PIPE_BUF write may be partial. */
	char drain[65536];
	CHECK_GT(read(p[0], drain, sizeof(drain)), 0);
}

static void read_returns_available(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "abc", 3), 3);
	CHECK_EQ(write(p[1], "de", 2), 2);
	char buf[64];
	/* A blocking read returns what is there without waiting for more. */
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "abcde", 5);
}

static void pipe_fd_numbers_lowest(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(p[0], 3);
	CHECK_EQ(p[1], 4);
	close(3);
	int q[2];
	CHECK_SYS(pipe(q));
	CHECK_EQ(q[0], 3);
	CHECK_EQ(q[1], 5);
}

static void write_end_readable_via_proc(void)
{
	/* Opening /proc/self/fd/N of a pipe end for reading gives a new
	 * description of the same pipe. */
	int p[2];
	CHECK_SYS(pipe(p));
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	int r = CHECK_SYS(open(path, O_RDONLY | O_NONBLOCK));
	CHECK_EQ(write(p[1], "q", 1), 1);
	char c;
	CHECK_EQ(read(r, &c, 1), 1);
	CHECK_EQ(c, 'q');
}

static const struct mt_case cases[] = {
	MT_CASE(pipe2_flags_applied),
	MT_CASE(pipe2_invalid_flags),
	MT_CASE(pipe_stat_is_fifo),
	MT_CASE(o_direct_packets),
	MT_CASE(setpipe_sz_rounding),
	MT_CASE(setpipe_sz_limits),
	MT_CASE(setpipe_sz_below_content),
	MT_CASE(capacity_limits_nonblocking_writes),
	MT_CASE(pipe_buf_writes_all_or_nothing),
	MT_CASE(read_returns_available),
	MT_CASE(pipe_fd_numbers_lowest),
	MT_CASE(write_end_readable_via_proc),
};

MT_MAIN(cases)
