//go:build ignore

/* rlimit_nofile: getrlimit/setrlimit/prlimit64 argument rules and the
 * effects of the limits that the kernel enforces on descriptors
 * (RLIMIT_NOFILE on open, dup, dup2, fcntl, pipe, eventfd), on the stack
 * (RLIMIT_STACK), on file size (RLIMIT_FSIZE, SIGXFSZ) and on processes
 * (RLIMIT_NPROC for non-root). Every case changes limits in a child. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	if (pid < 0)
		return -1;
	return mt_wait(pid);
}

#define IN_CHILD(body)                            \
	static void body##_child(void);           \
	static void body(void)                    \
	{                                         \
		int st = run_child(body##_child); \
		CHECK_EXITED(st, 0);              \
	}                                         \
	static void body##_child(void)

static void set_nofile(rlim_t n)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = n;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		_exit(98);
}

IN_CHILD(nofile_open_emfile)
{
	set_nofile(5);
	/* 0-2 are open: 3 and 4 are the last two. */
	CHILD_CHECK(open("/dev/null", O_RDONLY) == 3);
	CHILD_CHECK(open("/dev/null", O_RDONLY) == 4);
	CHILD_CHECK(open("/dev/null", O_RDONLY) == -1 && errno == EMFILE);
	close(3);
	CHILD_CHECK(open("/dev/null", O_RDONLY) == 3);
}

IN_CHILD(nofile_dup_and_fcntl)
{
	set_nofile(5);
	CHILD_CHECK(dup(0) == 3);
	CHILD_CHECK(dup(0) == 4);
	CHILD_CHECK(dup(0) == -1 && errno == EMFILE);
	/* dup2 to a number at or above the limit: EBADF. */
	CHILD_CHECK(dup2(0, 5) == -1 && errno == EBADF);
	CHILD_CHECK(dup3(0, 7, 0) == -1 && errno == EBADF);
	/* F_DUPFD with a minimum at or above the limit: EINVAL. */
	CHILD_CHECK(fcntl(0, F_DUPFD, 5) == -1 && errno == EINVAL);
	close(4);
	CHILD_CHECK(fcntl(0, F_DUPFD, 4) == 4);
	/* Nothing free: EMFILE. */
	CHILD_CHECK(fcntl(0, F_DUPFD_CLOEXEC, 0) == -1 && errno == EMFILE);
	/* dup2 onto an existing number below the limit works. */
	CHILD_CHECK(dup2(0, 4) == 4);
}

IN_CHILD(nofile_pipe_needs_two)
{
	set_nofile(4);
	int p[2] = {-1, -1};
	CHILD_CHECK(pipe(p) == -1 && errno == EMFILE);
	CHILD_CHECK(eventfd(0, 0) == 3);
	CHILD_CHECK(eventfd(0, 0) == -1 && errno == EMFILE);
}

IN_CHILD(nofile_lowered_below_open_fds)
{
	/* Lowering below open descriptors is allowed; they stay usable. */
	CHILD_CHECK(dup2(1, 20) == 20);
	set_nofile(10);
	CHILD_CHECK(fcntl(20, F_GETFD) == 0);
	CHILD_CHECK(write(20, "", 0) == 0);
	CHILD_CHECK(dup(20) == 3);
}

IN_CHILD(nofile_zero)
{
	set_nofile(0);
	CHILD_CHECK(open("/dev/null", O_RDONLY) == -1 && errno == EMFILE);
	CHILD_CHECK(dup(1) == -1 && errno == EMFILE);
}

IN_CHILD(nofile_above_nr_open_rejected)
{
	struct rlimit rl = {1U << 30, 1U << 30};
	/* Above /proc/sys/fs/nr_open (1048576 by default): EPERM. */
	CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == -1 && errno == EPERM);
	CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
}

static void getrlimit_errors(void)
{
	struct rlimit rl;
	CHECK_ERR(getrlimit(99, &rl), EINVAL);
	CHECK_ERR(getrlimit(-1, &rl), EINVAL);
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_NOFILE, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_setrlimit, RLIMIT_NOFILE, (void *)1), EFAULT);
	CHECK_ERR(setrlimit(99, &rl), EINVAL);
}

IN_CHILD(setrlimit_soft_above_hard)
{
	struct rlimit rl;
	CHILD_CHECK(getrlimit(RLIMIT_CORE, &rl) == 0);
	rl.rlim_cur = 100;
	rl.rlim_max = 50;
	CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == -1 && errno == EINVAL);
	rl.rlim_cur = rl.rlim_max = 50;
	CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == 0);
	/* An unprivileged process may not raise the hard limit (whether
	 * namespace root may depends on CAP_SYS_RESOURCE in the initial
	 * namespace, which differs between the two worlds). */
	rl.rlim_max = 60;
	(void)setrlimit(RLIMIT_CORE, &rl);
	CHILD_CHECK(getrlimit(RLIMIT_CORE, &rl) == 0);
	CHILD_CHECK(setuid(1000) == 0);
	rlim_t hard = rl.rlim_max;
	rl.rlim_max = hard + 10;
	CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == -1 && errno == EPERM);
	rl.rlim_cur = 10;
	rl.rlim_max = hard;
	CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == 0);
}

static void prlimit64_forms(void)
{
	struct rlimit old, nw;
	CHECK_SYS(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &old));
	struct rlimit g;
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &g));
	CHECK_EQ(old.rlim_cur, g.rlim_cur);
	CHECK_EQ(old.rlim_max, g.rlim_max);
	/* On another process: a child. */
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		close(p[1]);
		char c;
		if (read(p[0], &c, 1) < 0)
			_exit(2);
		struct rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		_exit(rl.rlim_cur == 77 ? 0 : 1);
	}
	close(p[0]);
	nw = old;
	nw.rlim_cur = 77;
	struct rlimit was;
	CHECK_SYS(syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &nw, &was));
	CHECK_EQ(was.rlim_cur, old.rlim_cur);
	close(p[1]);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_ERR(syscall(SYS_prlimit64, 99999, RLIMIT_NOFILE, NULL, &old), ESRCH);
	CHECK_ERR(syscall(SYS_prlimit64, 0, 99, NULL, &old), EINVAL);
	nw.rlim_cur = nw.rlim_max + 1;
	if (nw.rlim_max != RLIM_INFINITY)
		CHECK_ERR(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &nw, NULL), EINVAL);
}

IN_CHILD(prlimit_eperm_other_uid)
{
	/* An unprivileged caller may not change a process of another user. */
	pid_t victim = fork();
	if (victim == 0) {
		pause();
		_exit(0);
	}
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	struct rlimit rl;
	CHILD_CHECK(syscall(SYS_prlimit64, victim, RLIMIT_NOFILE, NULL, &rl) == -1 && errno == EPERM);
	kill(victim, SIGKILL);
}

IN_CHILD(stack_limit_reported)
{
	struct rlimit rl;
	CHILD_CHECK(getrlimit(RLIMIT_STACK, &rl) == 0);
	CHILD_CHECK(rl.rlim_cur >= 128 * 1024);
	rl.rlim_cur = 1 << 20;
	CHILD_CHECK(setrlimit(RLIMIT_STACK, &rl) == 0);
	struct rlimit back;
	CHILD_CHECK(getrlimit(RLIMIT_STACK, &back) == 0 && back.rlim_cur == 1 << 20);
}

static int recurse(int depth)
{
	volatile char pad[4096];
	pad[0] = (char)depth;
	if (depth == 0)
		return pad[0];
	return recurse(depth - 1) + pad[0];
}

static void stack_limit_enforced_after_exec(void)
{
	/* A 256 KiB stack limit: 1 MiB of recursion dies with SIGSEGV in a
	 * re-executed child (the limit counts at exec). */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl;
		getrlimit(RLIMIT_STACK, &rl);
		rl.rlim_cur = 256 * 1024;
		if (setrlimit(RLIMIT_STACK, &rl) != 0)
			_exit(2);
		char *argv[] = {(char *)mt_argv0, "--recurse", NULL};
		execv(mt_argv0, argv);
		_exit(3);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
}

static void fsize_sigxfsz_child(void)
{
	struct rlimit rl = {10, 10};
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	int fd = (int)syscall(SYS_memfd_create, "fsize", 0);
	if (fd < 0)
		fd = open("/dev/shm", O_TMPFILE | O_RDWR, 0600);
	if (fd < 0)
		_exit(0); /* no writable file here: nothing to check */
	signal(SIGXFSZ, SIG_IGN);
	CHILD_CHECK(write(fd, "0123456789abc", 13) == 10);
	CHILD_CHECK(write(fd, "x", 1) == -1 && errno == EFBIG);
	signal(SIGXFSZ, SIG_DFL);
	write(fd, "x", 1);
	_exit(4); /* not reached: SIGXFSZ kills */
}

static void fsize_default_kills(void)
{
	int st = run_child(fsize_sigxfsz_child);
	/* The child ends by SIGXFSZ after its checks, or exits 0 when no
	 * writable file exists. */
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	CHECK_SIGNALED(st, SIGXFSZ);
}

IN_CHILD(nproc_limits_unprivileged_fork)
{
	struct rlimit rl = {1, 1};
	CHILD_CHECK(setrlimit(RLIMIT_NPROC, &rl) == 0);
	/* Root is exempt. */
	pid_t g = fork();
	if (g == 0)
		_exit(0);
	CHILD_CHECK(g > 0);
	waitpid(g, NULL, 0);
	CHILD_CHECK(setresuid(4242, 4242, 4242) == 0);
	/* This process counts as one for uid 4242: a second is refused. */
	g = fork();
	if (g == 0)
		_exit(0);
	CHILD_CHECK(g == -1 && errno == EAGAIN);
}

static const struct mt_case cases[] = {
	MT_CASE(nofile_open_emfile),
	MT_CASE(nofile_dup_and_fcntl),
	MT_CASE(nofile_pipe_needs_two),
	MT_CASE(nofile_lowered_below_open_fds),
	MT_CASE(nofile_zero),
	MT_CASE(nofile_above_nr_open_rejected),
	MT_CASE(getrlimit_errors),
	MT_CASE(setrlimit_soft_above_hard),
	MT_CASE(prlimit64_forms),
	MT_CASE(prlimit_eperm_other_uid),
	MT_CASE(stack_limit_reported),
	MT_CASE(stack_limit_enforced_after_exec),
	MT_CASE(fsize_default_kills),
	MT_CASE(nproc_limits_unprivileged_fork),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--recurse") == 0)
		return recurse(256) & 1;
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
