//go:build ignore

/* fd_dup_fcntl: descriptor-table calls: dup/dup2/dup3, fcntl F_DUPFD,
 * F_DUPFD_CLOEXEC, F_GETFD/F_SETFD, F_GETFL/F_SETFL, close, close_range
 * and the ioctls FIONREAD, FIONBIO, FIOCLEX, FIONCLEX, with their errors. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void dup_lowest_free(void)
{
	int a = CHECK_SYS(dup(1));
	CHECK_EQ(a, 3);
	int b = CHECK_SYS(dup(1));
	CHECK_EQ(b, 4);
	close(a);
	CHECK_EQ(dup(1), 3);
	/* The copy does not inherit FD_CLOEXEC. */
	int c = CHECK_SYS(fcntl(1, F_DUPFD_CLOEXEC, 10));
	CHECK_EQ(fcntl(c, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(dup(c), F_GETFD), 0);
}

static void dup_errors(void)
{
	CHECK_ERR(dup(-1), EBADF);
	CHECK_ERR(dup(999), EBADF);
	CHECK_ERR(dup2(-1, 5), EBADF);
	CHECK_ERR(dup2(1, -1), EBADF);
	CHECK_ERR(dup2(999, 5), EBADF);
	CHECK_ERR(dup3(1, 1, 0), EINVAL);
	CHECK_ERR(dup3(1, 5, O_NONBLOCK), EINVAL);
	CHECK_ERR(dup3(999, 5, 0), EBADF);
	CHECK_ERR(dup2(1, 1 << 30), EBADF);
}

static void dup2_same_fd(void)
{
	/* dup2 onto itself returns it if it is open, EBADF if not. */
	CHECK_EQ(dup2(1, 1), 1);
	CHECK_ERR(dup2(50, 50), EBADF);
	int fd = CHECK_SYS(open("/dev/null", O_RDONLY | O_CLOEXEC));
	CHECK_EQ(dup2(fd, fd), fd);
	/* ... and leaves FD_CLOEXEC alone. */
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
}

static void dup2_replaces_open_target(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int n = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK_EQ(dup2(p[1], n), n);
	CHECK_EQ(write(n, "z", 1), 1);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'z');
	/* dup3 with O_CLOEXEC sets it on the target. */
	CHECK_EQ(dup3(p[1], n, O_CLOEXEC), n);
	CHECK_EQ(fcntl(n, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(dup2(p[1], n), n);
	CHECK_EQ(fcntl(n, F_GETFD), 0);
}

static void dup_shares_file_description(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	int d = CHECK_SYS(dup(fd));
	char buf[4];
	CHECK_EQ(read(fd, buf, 3), 3);
	/* One offset for both. */
	CHECK_EQ(lseek(d, 0, SEEK_CUR), 3);
	CHECK_SYS(fcntl(d, F_SETFL, O_NONBLOCK));
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	/* But FD_CLOEXEC is per descriptor. */
	CHECK_SYS(fcntl(d, F_SETFD, FD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
}

static void f_dupfd_minimum(void)
{
	int a = CHECK_SYS(fcntl(1, F_DUPFD, 100));
	CHECK_EQ(a, 100);
	CHECK_EQ(fcntl(1, F_DUPFD, 100), 101);
	CHECK_EQ(fcntl(1, F_DUPFD, 0), 3);
	CHECK_ERR(fcntl(1, F_DUPFD, -1), EINVAL);
	CHECK_ERR(fcntl(1, F_DUPFD, 1 << 30), EINVAL);
	CHECK_ERR(fcntl(999, F_DUPFD, 0), EBADF);
}

static void f_getfd_setfd(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDONLY));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_SYS(fcntl(fd, F_SETFD, FD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	/* Other bits are ignored. */
	CHECK_SYS(fcntl(fd, F_SETFD, 0xfe));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_ERR(fcntl(999, F_GETFD), EBADF);
	CHECK_ERR(fcntl(999, F_SETFD, 1), EBADF);
}

static void f_getfl_access_modes(void)
{
	int r = CHECK_SYS(open("/dev/null", O_RDONLY));
	int w = CHECK_SYS(open("/dev/null", O_WRONLY | O_APPEND));
	int rw = CHECK_SYS(open("/dev/null", O_RDWR | O_NONBLOCK));
	CHECK_EQ(fcntl(r, F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(w, F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK(fcntl(w, F_GETFL) & O_APPEND);
	CHECK_EQ(fcntl(rw, F_GETFL) & O_ACCMODE, O_RDWR);
	CHECK(fcntl(rw, F_GETFL) & O_NONBLOCK);
	/* O_LARGEFILE is always reported on 64-bit. */
	CHECK(fcntl(r, F_GETFL) & 0100000); /* the kernel O_LARGEFILE (glibc defines it 0) */
	/* Creation flags are not kept. */
	CHECK_EQ(fcntl(r, F_GETFL) & (O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC), 0);
}

static void f_setfl_changes_only_status_flags(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDONLY));
	/* The access mode cannot change through F_SETFL. */
	CHECK_SYS(fcntl(fd, F_SETFL, O_RDWR | O_NONBLOCK | O_APPEND));
	int fl = fcntl(fd, F_GETFL);
	CHECK_EQ(fl & O_ACCMODE, O_RDONLY);
	CHECK(fl & O_NONBLOCK);
	CHECK(fl & O_APPEND);
	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_APPEND), 0);
	CHECK_ERR(fcntl(999, F_SETFL, 0), EBADF);
}

static void fcntl_bad_command(void)
{
	CHECK_ERR(fcntl(1, 9999), EINVAL);
	CHECK_ERR(fcntl(1, -1), EINVAL);
}

static void close_errors_and_reuse(void)
{
	CHECK_ERR(close(-1), EBADF);
	CHECK_ERR(close(999), EBADF);
	int fd = CHECK_SYS(dup(1));
	CHECK_SYS(close(fd));
	CHECK_ERR(close(fd), EBADF);
}

static void close_range_variants(void)
{
	for (int i = 10; i < 20; i++)
		CHECK_EQ(dup2(1, i), i);
	CHECK_SYS(syscall(SYS_close_range, 12, 14, 0));
	CHECK_ERR(fcntl(12, F_GETFD), EBADF);
	CHECK_ERR(fcntl(14, F_GETFD), EBADF);
	CHECK_SYS(fcntl(15, F_GETFD));
	/* CLOSE_RANGE_CLOEXEC marks instead of closing. */
	CHECK_SYS(syscall(SYS_close_range, 15, 16, CLOSE_RANGE_CLOEXEC));
	CHECK_EQ(fcntl(15, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(16, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(17, F_GETFD), 0);
	/* A range past every open descriptor is fine. */
	CHECK_SYS(syscall(SYS_close_range, 500, ~0U, 0));
	CHECK_ERR(syscall(SYS_close_range, 5, 4, 0), EINVAL);
	CHECK_ERR(syscall(SYS_close_range, 0, 1, 0x80), EINVAL);
	CHECK_SYS(syscall(SYS_close_range, 10, ~0U, 0));
	CHECK_ERR(fcntl(19, F_GETFD), EBADF);
}

static void close_range_unshare(void)
{
	CHECK_EQ(dup2(1, 30), 30);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(syscall(SYS_close_range, 30, 30, CLOSE_RANGE_UNSHARE) == 0);
		CHILD_CHECK(fcntl(30, F_GETFD) == -1 && errno == EBADF);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_SYS(fcntl(30, F_GETFD));
}

static void fionread_counts(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int n = -1;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 0);
	CHECK_EQ(write(p[1], "hello", 5), 5);
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 5);
	CHECK_ERR(ioctl(p[0], FIONREAD, (void *)1), EFAULT);
	/* A regular file reports the bytes left to read. */
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_SYS(ioctl(fd, FIONREAD, &n));
	CHECK_EQ(n, 11);
	char buf[4];
	CHECK_EQ(read(fd, buf, 4), 4);
	CHECK_SYS(ioctl(fd, FIONREAD, &n));
	CHECK_EQ(n, 7);
	/* eventfd has no FIONREAD: ENOTTY... */
	int e = CHECK_SYS(eventfd(0, 0));
	CHECK_ERR(ioctl(e, FIONREAD, &n), ENOTTY);
}

static void fionbio_and_cloexec_ioctls(void)
{
	int fd = CHECK_SYS(open("/dev/null", O_RDONLY));
	int on = 1, off = 0;
	CHECK_SYS(ioctl(fd, FIONBIO, &on));
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_SYS(ioctl(fd, FIONBIO, &off));
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_ERR(ioctl(fd, FIONBIO, (void *)1), EFAULT);
	CHECK_SYS(ioctl(fd, FIOCLEX));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_SYS(ioctl(fd, FIONCLEX));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_ERR(ioctl(999, FIOCLEX), EBADF);
	/* An unknown request on /dev/null: ENOTTY. */
	CHECK_ERR(ioctl(fd, 0x12345678, 0), ENOTTY);
}

static void cloexec_closed_on_exec(void)
{
	int keep = CHECK_SYS(dup2(1, 40));
	int drop = CHECK_SYS(fcntl(1, F_DUPFD_CLOEXEC, 41));
	CHECK_EQ(drop, 41);
	(void)keep;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *argv[] = {(char *)mt_argv0, "--probe", NULL};
		execv(mt_argv0, argv);
		_exit(127);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(dup_lowest_free),
	MT_CASE(dup_errors),
	MT_CASE(dup2_same_fd),
	MT_CASE(dup2_replaces_open_target),
	MT_CASE(dup_shares_file_description),
	MT_CASE(f_dupfd_minimum),
	MT_CASE(f_getfd_setfd),
	MT_CASE(f_getfl_access_modes),
	MT_CASE(f_setfl_changes_only_status_flags),
	MT_CASE(fcntl_bad_command),
	MT_CASE(close_errors_and_reuse),
	MT_CASE(close_range_variants),
	MT_CASE(close_range_unshare),
	MT_CASE(fionread_counts),
	MT_CASE(fionbio_and_cloexec_ioctls),
	MT_CASE(cloexec_closed_on_exec),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
		/* 40 survives the exec, 41 (close-on-exec) does not. */
		if (fcntl(40, F_GETFD) != 0)
			return 1;
		if (fcntl(41, F_GETFD) != -1 || errno != EBADF)
			return 2;
		return 0;
	}
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
