//go:build ignore

/* dev: the memory character devices: /dev/null, /dev/zero (incl. mmap),
 * /dev/full (ENOSPC), /dev/random and /dev/urandom; their device numbers,
 * poll readiness and errors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void check_chr(const char *path, unsigned maj, unsigned min)
{
	struct stat st;
	CHECK_SYS(stat(path, &st));
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), maj);
	CHECK_EQ(minor(st.st_rdev), min);
	CHECK_EQ(st.st_mode & 0666, 0666);
	int fd = CHECK_SYS(open(path, O_RDONLY));
	struct stat fst;
	CHECK_SYS(fstat(fd, &fst));
	CHECK_EQ(fst.st_rdev, st.st_rdev);
	close(fd);
}

static void dev_numbers(void)
{
	check_chr("/dev/null", 1, 3);
	MT_BAIL();
	check_chr("/dev/zero", 1, 5);
	MT_BAIL();
	check_chr("/dev/full", 1, 7);
	MT_BAIL();
	check_chr("/dev/random", 1, 8);
	MT_BAIL();
	check_chr("/dev/urandom", 1, 9);
}

static void null_reads_eof_writes_vanish(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDWR));
	char buf[64];
	CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
	CHECK_EQ(write(fd, "discard me", 10), 10);
	static char big[1 << 20];
	CHECK_EQ(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
	CHECK_EQ(lseek(fd, 100, SEEK_SET), 0);
	CHECK_EQ(pwrite(fd, "x", 1, 12345), 1);
	CHECK_EQ(pread(fd, buf, 1, 12345), 0);
	close(fd);
}

static void zero_reads_zeros(void)
{
	int fd = CHECK_SYS(open("/dev/zero", O_RDWR));
	static char buf[1 << 20];
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i += 4093)
		CHECK_EQ(buf[i], 0);
	CHECK_EQ(buf[sizeof(buf) - 1], 0);
	CHECK_EQ(write(fd, "ignored", 7), 7);
	close(fd);
}

static void zero_mmap_private_and_shared(void)
{
	int fd = CHECK_SYS(open("/dev/zero", O_RDWR));
	char *p = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	CHECK_EQ(p[0], 0);
	CHECK_EQ(p[8191], 0);
	p[100] = 'x';
	int *s = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	close(fd);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		s[0] = 1234;
		p[100] = 'y';
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(s[0], 1234);
	CHECK_EQ(p[100], 'x');
	munmap(p, 8192);
	munmap(s, 4096);
}

static void full_enospc(void)
{
	int fd = CHECK_SYS(open("/dev/full", O_RDWR));
	CHECK_ERR(write(fd, "x", 1), ENOSPC);
	char buf[32];
	memset(buf, 1, sizeof(buf));
	CHECK_EQ(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		CHECK_EQ(buf[i], 0);
	/* Even an empty write. */
	CHECK_ERR(write(fd, "", 0), ENOSPC);
	close(fd);
}

static int all_zero(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void urandom_reads(void)
{
	int fd = CHECK_SYS(open("/dev/urandom", O_RDONLY));
	unsigned char a[64], b[64];
	CHECK_EQ(read(fd, a, sizeof(a)), 64);
	CHECK_EQ(read(fd, b, sizeof(b)), 64);
	CHECK(!all_zero(a, sizeof(a)));
	CHECK(memcmp(a, b, sizeof(a)) != 0);
	static unsigned char big[1 << 20];
	size_t got = 0;
	while (got < sizeof(big)) {
		ssize_t n = CHECK_SYS(read(fd, big + got, sizeof(big) - got));
		CHECK_GT(n, 0);
		got += (size_t)n;
	}
	/* Crude: all 256 byte values show up in 1 MiB. */
	int seen[256] = { 0 };
	for (size_t i = 0; i < sizeof(big); i++)
		seen[big[i]] = 1;
	for (int i = 0; i < 256; i++)
		CHECK_EQ(seen[i], 1);
	CHECK_ERR(syscall(SYS_read, fd, (void *)8, 16), EFAULT);
	close(fd);
}

static void random_reads_nonblocking(void)
{
	int fd = CHECK_SYS(open("/dev/random", O_RDONLY | O_NONBLOCK));
	unsigned char a[32];
	CHECK_EQ(read(fd, a, sizeof(a)), 32);
	CHECK(!all_zero(a, sizeof(a)));
	close(fd);
	fd = CHECK_SYS(open("/dev/random", O_RDONLY));
	CHECK_EQ(read(fd, a, sizeof(a)), 32);
	close(fd);
}

static void random_write_accepted(void)
{
	int fd = CHECK_SYS(open("/dev/urandom", O_WRONLY));
	/* Mixing data into the pool is allowed for anyone. */
	CHECK_EQ(write(fd, "entropy?", 8), 8);
	close(fd);
}

static void poll_devices_ready(void)
{
	static const char *const paths[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/urandom" };
	for (size_t i = 0; i < MT_NCASES(paths); i++) {
		int fd = CHECK_SYS(open(paths[i], O_RDWR));
		struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
		CHECK_EQ(poll(&pf, 1, 0), 1);
		CHECK_EQ(pf.revents, POLLIN | POLLOUT);
		close(fd);
	}
}

static void devices_not_ttys(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDWR));
	struct termios t;
	CHECK_ERR(ioctl(fd, TCGETS, &t), ENOTTY);
	CHECK_EQ(isatty(fd), 0);
	close(fd);
	/* No controlling terminal: /dev/tty is ENXIO. */
	CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
}

static void dev_dir_lists_devices(void)
{
	static const char *const names[] = { "null", "zero", "full", "random", "urandom" };
	for (size_t i = 0; i < MT_NCASES(names); i++) {
		char path[64];
		strcpy(path, "/dev/");
		strcat(path, names[i]);
		CHECK_SYS(access(path, R_OK | W_OK));
	}
	struct stat st;
	CHECK_SYS(stat("/dev", &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_SYS(stat("/dev/shm", &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 01777, 01777);
}

static void dev_fd_links(void)
{
	char buf[64];
	ssize_t n = CHECK_SYS(readlink("/dev/fd", buf, sizeof(buf) - 1));
	buf[n] = 0;
	CHECK_STREQ(buf, "/proc/self/fd");
	int fd = CHECK_SYS(open("/dev/fd/0", O_RDONLY));
	struct stat a, b;
	CHECK_SYS(fstat(fd, &a));
	CHECK_SYS(fstat(0, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	close(fd);
}

static void stdin_is_dev_null(void)
{
	/* The harness runs programs with stdin from /dev/null. */
	struct stat a, b;
	CHECK_SYS(fstat(0, &a));
	CHECK_SYS(stat("/dev/null", &b));
	CHECK(S_ISCHR(a.st_mode));
	CHECK_EQ(a.st_rdev, b.st_rdev);
	char c;
	CHECK_EQ(read(0, &c, 1), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(dev_numbers),
	MT_CASE(null_reads_eof_writes_vanish),
	MT_CASE(zero_reads_zeros),
	MT_CASE(zero_mmap_private_and_shared),
	MT_CASE(full_enospc),
	MT_CASE(urandom_reads),
	MT_CASE(random_reads_nonblocking),
	MT_CASE(random_write_accepted),
	MT_CASE(poll_devices_ready),
	MT_CASE(devices_not_ttys),
	MT_CASE(dev_dir_lists_devices),
	MT_CASE(dev_fd_links),
	MT_CASE(stdin_is_dev_null),
};

MT_MAIN(cases)
