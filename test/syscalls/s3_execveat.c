//go:build ignore

/* s3_execveat: running programs by descriptor: AT_EMPTY_PATH on O_PATH
 * and O_RDONLY descriptors of binaries (the new comm is the file's name,
 * or the descriptor number on older kernels, /proc/self/exe the binary), scripts by descriptor (run through
 * /dev/fd/N, or ENOENT when the descriptor is close-on-exec), relative
 * paths against a dirfd, AT_SYMLINK_NOFOLLOW (ELOOP), descriptors of
 * directories and non-executable files (EACCES), unknown flags (EINVAL)
 * and bad descriptors (EBADF). */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long xat(int dfd, const char *path, char *const argv[], int flags)
{
	return syscall(SYS_execveat, dfd, path, argv, environ, flags);
}

/* run_child forks, runs fn in the child (which must exec or _exit), and
 * returns the wait status. */
static int run_child(int dfd, const char *path, char *const argv[], int flags)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		xat(dfd, path, argv, flags);
		_exit(100 + (errno & 0x3f));
	}
	return mt_wait(pid);
}

static void empty_path_on_opath_fd(void)
{
	int fd = CHECK_SYS(open(mt_argv0, O_PATH));
	char *argv[] = {"probe", "--exit", "42", NULL};
	int st = run_child(fd, "", argv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 42);
	int fd2 = CHECK_SYS(open(mt_argv0, O_RDONLY));
	st = run_child(fd2, "", argv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 42);
}

static void comm_and_exe_after_fd_exec(void)
{
	int fd = CHECK_SYS(open(mt_argv0, O_RDONLY));
	/* Move it to a known number. */
	CHECK_EQ(dup2(fd, 57), 57);
	char *argv[] = {"probe", "--comm", NULL};
	/* The child checks that its comm is "57" and its exe is this
	 * program. */
	int st = run_child(57, "", argv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 0);
}

static void script_by_descriptor(void)
{
	/* Without close-on-exec the interpreter opens /dev/fd/N. */
	int fd = CHECK_SYS(open(mt_data("script.sh"), O_RDONLY));
	char *argv[] = {"script", "a", NULL};
	int st = run_child(fd, "", argv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 3);
}

static void cloexec_script_enoent(void)
{
	/* With close-on-exec the interpreter could not reach the script:
	 * the exec fails with ENOENT before the point of no return. */
	int fd = CHECK_SYS(open(mt_data("script.sh"), O_RDONLY | O_CLOEXEC));
	char *argv[] = {"script", NULL};
	/* In a child, so a wrong success cannot replace this program; the
	 * child exits 100 + errno. */
	int st = run_child(fd, "", argv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 100 + ENOENT);
	/* A binary is fine with close-on-exec. */
	int b = CHECK_SYS(open(mt_argv0, O_RDONLY | O_CLOEXEC));
	char *pargv[] = {"probe", "--exit", "7", NULL};
	st = run_child(b, "", pargv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 7);
}

static void relative_to_dirfd(void)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", mt_argv0);
	char *slash = strrchr(dir, '/');
	CHECK(slash != NULL);
	*slash = 0;
	int d = CHECK_SYS(open(dir, O_RDONLY | O_DIRECTORY));
	char *argv[] = {"probe", "--exit", "9", NULL};
	int st = run_child(d, slash + 1, argv, 0);
	CHECK_EXITED(st, 9);
	/* AT_EMPTY_PATH with a non-empty path is an ordinary lookup. */
	st = run_child(d, slash + 1, argv, AT_EMPTY_PATH);
	CHECK_EXITED(st, 9);
	CHECK_ERR(xat(d, "no-such-program", argv, 0), ENOENT);
}

static void symlink_nofollow(void)
{
	/* data/link_to_hello is a symlink. */
	char *argv[] = {"x", NULL};
	CHECK_ERR(xat(AT_FDCWD, mt_data("link_to_hello"), argv, AT_SYMLINK_NOFOLLOW), ELOOP);
	/* Followed, it reaches a non-executable text file. */
	CHECK_ERR(xat(AT_FDCWD, mt_data("link_to_hello"), argv, 0), EACCES);
}

static void unexecutable_descriptors(void)
{
	char *argv[] = {"x", NULL};
	int d = CHECK_SYS(open(mt_data("dir"), O_RDONLY | O_DIRECTORY));
	CHECK_ERR(xat(d, "", argv, AT_EMPTY_PATH), EACCES);
	int t = CHECK_SYS(open(mt_data("not_exec.txt"), O_RDONLY));
	CHECK_ERR(xat(t, "", argv, AT_EMPTY_PATH), EACCES);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(xat(p[0], "", argv, AT_EMPTY_PATH), EACCES);
	int g = CHECK_SYS(open(mt_data("garbage.bin"), O_RDONLY));
	struct stat st;
	CHECK_SYS(fstat(g, &st));
	/* An executable file in no known format: ENOEXEC. */
	if (st.st_mode & 0111)
		CHECK_ERR(xat(g, "", argv, AT_EMPTY_PATH), ENOEXEC);
}

static void flag_and_descriptor_errors(void)
{
	char *argv[] = {"x", NULL};
	CHECK_ERR(xat(AT_FDCWD, "/bin/true", argv, 0x1), EINVAL);
	CHECK_ERR(xat(AT_FDCWD, "/bin/true", argv, AT_REMOVEDIR), EINVAL);
	CHECK_ERR(xat(99, "", argv, AT_EMPTY_PATH), EBADF);
	CHECK_ERR(xat(99, "relative", argv, 0), EBADF);
	CHECK_ERR(xat(-5, "relative", argv, 0), EBADF);
	/* An empty path without AT_EMPTY_PATH: ENOENT. */
	int fd = CHECK_SYS(open(mt_argv0, O_RDONLY));
	CHECK_ERR(xat(fd, "", argv, 0), ENOENT);
	CHECK_ERR(syscall(SYS_execveat, AT_FDCWD, (const char *)1, argv, environ, 0), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(empty_path_on_opath_fd),
	MT_CASE(comm_and_exe_after_fd_exec),
	MT_CASE(script_by_descriptor),
	MT_CASE(cloexec_script_enoent),
	MT_CASE(relative_to_dirfd),
	MT_CASE(symlink_nofollow),
	MT_CASE(unexecutable_descriptors),
	MT_CASE(flag_and_descriptor_errors),
};

static int check_comm(void)
{
	char buf[64] = {0};
	int fd = open("/proc/self/comm", O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
		return 1;
	/* Linux 6.12 and later name the process after the file; older
	 * kernels after the descriptor ("/dev/fd/57"). */
	if (strcmp(buf, "57\n") != 0 && strcmp(buf, "s3_execveat\n") != 0)
		return 2;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return 3;
	exe[n] = 0;
	const char *base = strrchr(exe, '/');
	if (!base || strcmp(base + 1, "s3_execveat") != 0)
		return 4;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--exit") == 0)
		return atoi(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--comm") == 0)
		return check_comm();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
