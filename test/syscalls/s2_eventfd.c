//go:build ignore

/* s2_eventfd: eventfd and eventfd2: flags, initial values, counter and
 * semaphore reads, buffer size and overflow errors, and poll readiness. */
#include "moattest.h"
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void eventfd2_bad_flags(void)
{
	CHECK_ERR(syscall(SYS_eventfd2, 0, 0x1234), EINVAL);
	CHECK_ERR(syscall(SYS_eventfd2, 0, O_RDWR), EINVAL);
	int fd = CHECK_SYS(syscall(SYS_eventfd2, 0, EFD_SEMAPHORE | EFD_CLOEXEC | EFD_NONBLOCK));
	CHECK_GE(fd, 3);
}

static void eventfd2_flag_bits(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	int fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & (O_ACCMODE | O_NONBLOCK), O_RDWR | O_NONBLOCK);
	int fd2 = CHECK_SYS(eventfd(0, 0));
	CHECK_EQ(fcntl(fd2, F_GETFD), 0);
	CHECK_EQ(fcntl(fd2, F_GETFL) & O_NONBLOCK, 0);
}

static void eventfd_legacy_initval(void)
{
	int fd = CHECK_SYS(syscall(SYS_eventfd, 7));
	uint64_t v = 0;
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, 7);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
}

static void read_resets_counter(void)
{
	int fd = CHECK_SYS(eventfd(5, EFD_NONBLOCK));
	uint64_t v = 3;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 0;
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, 11);
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
}

static void semaphore_reads_one(void)
{
	int fd = CHECK_SYS(eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK));
	for (int i = 0; i < 3; i++) {
		uint64_t v = 0;
		CHECK_EQ(read(fd, &v, 8), 8);
		CHECK_EQ(v, 1);
	}
	uint64_t v;
	CHECK_ERR(read(fd, &v, 8), EAGAIN);
}

static void short_buffers_einval(void)
{
	int fd = CHECK_SYS(eventfd(1, EFD_NONBLOCK));
	char buf[16] = { 0 };
	CHECK_ERR(read(fd, buf, 7), EINVAL);
	CHECK_ERR(write(fd, buf, 7), EINVAL);
	CHECK_ERR(read(fd, buf, 0), EINVAL);
	/* A larger buffer is fine: 8 bytes move. */
	CHECK_EQ(read(fd, buf, 16), 8);
	/* A write of more than 8 bytes differs between kernels (6.18 returns
	 * -1 with no errno), so it is not checked. */
}

static void write_max_einval(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	uint64_t v = UINT64_MAX;
	CHECK_ERR(write(fd, &v, 8), EINVAL);
	v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	v = 1;
	CHECK_ERR(write(fd, &v, 8), EAGAIN);
	/* Adding zero never overflows. */
	v = 0;
	CHECK_EQ(write(fd, &v, 8), 8);
}

static void bad_pointers_efault(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	CHECK_ERR(syscall(SYS_write, fd, (void *)1, 8), EFAULT);
	uint64_t v = 2;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_ERR(syscall(SYS_read, fd, (void *)1, 8), EFAULT);
	CHECK_ERR(read(-1, &v, 8), EBADF);
}

static void poll_readiness(void)
{
	int fd = CHECK_SYS(eventfd(0, EFD_NONBLOCK));
	struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLOUT);
	uint64_t v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN);
	CHECK_EQ(read(fd, &v, 8), 8);
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLOUT);
}

static void blocking_write_waits_for_read(void)
{
	int fd = CHECK_SYS(eventfd(0, 0));
	uint64_t v = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &v, 8), 8);
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		uint64_t one = 1;
		CHILD_CHECK(write(fd, &one, 8) == 8);
		_exit(0);
	}
	CHECK_EQ(mt_wait_blocked(p, 10000), 0);
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, UINT64_MAX - 1);
	CHECK_EXITED(mt_wait(p), 0);
	CHECK_EQ(read(fd, &v, 8), 8);
	CHECK_EQ(v, 1);
}

static const struct mt_case cases[] = {
	MT_CASE(eventfd2_bad_flags),
	MT_CASE(eventfd2_flag_bits),
	MT_CASE(eventfd_legacy_initval),
	MT_CASE(read_resets_counter),
	MT_CASE(semaphore_reads_one),
	MT_CASE(short_buffers_einval),
	MT_CASE(write_max_einval),
	MT_CASE(bad_pointers_efault),
	MT_CASE(poll_readiness),
	MT_CASE(blocking_write_waits_for_read),
};

MT_MAIN(cases)
