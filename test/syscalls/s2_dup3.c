//go:build ignore

/* s2_dup3: dup3 and the F_DUPFD family: flag handling, same-descriptor and
 * range errors against RLIMIT_NOFILE, replacing open targets and shared
 * file descriptions. */
#include "moattest.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void dup3_cloexec(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(dup3(p[0], 20, O_CLOEXEC), 20);
	CHECK_EQ(fcntl(20, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(dup3(p[0], 21, 0), 21);
	CHECK_EQ(fcntl(21, F_GETFD), 0);
}

static void dup3_clears_source_cloexec(void)
{
	int fd = CHECK_SYS(memfd_create("m", MFD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(dup3(fd, 30, 0), 30);
	CHECK_EQ(fcntl(30, F_GETFD), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
}

static void dup3_bad_flags(void)
{
	CHECK_ERR(dup3(0, 20, 1), EINVAL);
	CHECK_ERR(dup3(0, 20, O_NONBLOCK), EINVAL);
	CHECK_ERR(dup3(0, 20, O_CLOEXEC | O_RDWR), EINVAL);
	CHECK_ERR(fcntl(20, F_GETFD), EBADF);
}

static void dup3_same_fd_einval(void)
{
	CHECK_ERR(dup3(0, 0, 0), EINVAL);
	CHECK_ERR(dup3(0, 0, O_CLOEXEC), EINVAL);
	/* The same-descriptor check comes before the descriptor lookup. */
	CHECK_ERR(dup3(99, 99, 0), EINVAL);
	/* dup2 of a descriptor onto itself is fine, unlike dup3. */
	CHECK_EQ(dup2(0, 0), 0);
	CHECK_ERR(dup2(99, 99), EBADF);
}

static void dup3_bad_descriptors(void)
{
	CHECK_ERR(dup3(-1, 20, 0), EBADF);
	CHECK_ERR(dup3(99, 20, 0), EBADF);
	CHECK_ERR(syscall(SYS_dup3, 0, -1, 0), EBADF);
	CHECK_ERR(dup3(0, 1 << 30, 0), EBADF);
}

static void dup_targets_limited_by_rlimit(void)
{
	/* In a child: the limit would outlive the case. */
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		struct rlimit rl;
		CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
		rl.rlim_cur = 64;
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
		CHILD_ERR(dup3(0, 64, 0), EBADF);
		CHILD_ERR(dup2(0, 64), EBADF);
		CHILD_CHECK(dup3(0, 63, 0) == 63);
		CHILD_ERR(fcntl(0, F_DUPFD, 64), EINVAL);
		CHILD_ERR(fcntl(0, F_DUPFD_CLOEXEC, 64), EINVAL);
		/* 63 is taken, so no descriptor at or above 63 is free. */
		CHILD_ERR(fcntl(0, F_DUPFD, 63), EMFILE);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void f_dupfd_cloexec(void)
{
	int fd = CHECK_SYS(fcntl(0, F_DUPFD_CLOEXEC, 40));
	CHECK_EQ(fd, 40);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	int fd2 = CHECK_SYS(fcntl(0, F_DUPFD_CLOEXEC, 40));
	CHECK_EQ(fd2, 41);
	int fd3 = CHECK_SYS(fcntl(fd, F_DUPFD, 40));
	CHECK_EQ(fd3, 42);
	CHECK_EQ(fcntl(fd3, F_GETFD), 0);
	CHECK_ERR(fcntl(0, F_DUPFD_CLOEXEC, -1), EINVAL);
	CHECK_ERR(fcntl(99, F_DUPFD_CLOEXEC, 0), EBADF);
}

static void dup3_replaces_and_shares(void)
{
	int a = CHECK_SYS(memfd_create("a", 0));
	int b = CHECK_SYS(memfd_create("b", 0));
	CHECK_EQ(write(a, "AAAA", 4), 4);
	CHECK_EQ(write(b, "B", 1), 1);
	CHECK_EQ(dup3(a, b, O_CLOEXEC), b);
	/* b now shares a's description: same offset, same file. */
	CHECK_EQ(lseek(b, 0, SEEK_CUR), 4);
	CHECK_EQ(lseek(b, 1, SEEK_SET), 1);
	CHECK_EQ(lseek(a, 0, SEEK_CUR), 1);
	char buf[4];
	CHECK_EQ(read(b, buf, 3), 3);
	CHECK_MEMEQ(buf, "AAA", 3);
	/* Status flags are shared too. */
	CHECK_SYS(fcntl(a, F_SETFL, O_APPEND));
	CHECK(fcntl(b, F_GETFL) & O_APPEND);
}

static void dup3_onto_pipe_end_closes_it(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int m = CHECK_SYS(memfd_create("m", 0));
	/* Replacing the only write end gives the reader EOF. */
	CHECK_EQ(dup3(m, p[1], 0), p[1]);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(dup3_cloexec),
	MT_CASE(dup3_clears_source_cloexec),
	MT_CASE(dup3_bad_flags),
	MT_CASE(dup3_same_fd_einval),
	MT_CASE(dup3_bad_descriptors),
	MT_CASE(dup_targets_limited_by_rlimit),
	MT_CASE(f_dupfd_cloexec),
	MT_CASE(dup3_replaces_and_shares),
	MT_CASE(dup3_onto_pipe_end_closes_it),
};

MT_MAIN(cases)
