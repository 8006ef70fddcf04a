//go:build ignore

/* chroot_cwd: chroot(2) in a child: path resolution under the new root,
 * ".." stopping at it, a cwd left outside it, inheritance by children, and
 * the errors (EPERM unprivileged, ENOTDIR, ENOENT, EFAULT). */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int in_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return mt_wait(pid);
}

static void resolves_under_new_root_child(void)
{
	CHILD_CHECK(chroot(mt_data("")) == 0);
	CHILD_CHECK(chdir("/") == 0);
	/* /hello.txt is test/syscalls/data/hello.txt now. */
	int fd = open("/hello.txt", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	char buf[16];
	CHILD_CHECK(read(fd, buf, 5) == 5 && memcmp(buf, "hello", 5) == 0);
	/* The old root's files are gone. */
	CHILD_CHECK(open("/etc/passwd", O_RDONLY) == -1 && errno == ENOENT);
	/* Absolute symlinks resolve under the new root too. */
	CHILD_CHECK(open("/abs_link_to_passwd", O_RDONLY) == -1 && errno == ENOENT);
}

static void resolves_under_new_root(void)
{
	int st = in_child(resolves_under_new_root_child);
	CHECK_EXITED(st, 0);
}

static void dotdot_stops_at_root_child(void)
{
	CHILD_CHECK(chroot(mt_data("")) == 0);
	CHILD_CHECK(chdir("/dir/sub") == 0);
	CHILD_CHECK(chdir("../../../../..") == 0);
	char buf[PATH_MAX];
	CHILD_CHECK(getcwd(buf, sizeof(buf)) != NULL && strcmp(buf, "/") == 0);
	struct stat a, b;
	CHILD_CHECK(stat("/..", &a) == 0 && stat("/", &b) == 0 && a.st_ino == b.st_ino);
}

static void dotdot_stops_at_root(void)
{
	int st = in_child(dotdot_stops_at_root_child);
	CHECK_EXITED(st, 0);
}

static void cwd_outside_root_child(void)
{
	/* chroot does not change the cwd: it is now outside the root. */
	CHILD_CHECK(chdir("/proc") == 0);
	CHILD_CHECK(chroot(mt_data("")) == 0);
	char buf[PATH_MAX];
	long n = syscall(SYS_getcwd, buf, sizeof(buf));
	CHILD_CHECK(n > 0);
	/* Linux prefixes an unreachable cwd with "(unreachable)". */
	CHILD_CHECK(strncmp(buf, "(unreachable)", 13) == 0);
	/* Relative paths still work from there. */
	CHILD_CHECK(access("self", F_OK) == 0);
}

static void cwd_outside_root(void)
{
	int st = in_child(cwd_outside_root_child);
	CHECK_EXITED(st, 0);
}

static void inherited_by_children_child(void)
{
	CHILD_CHECK(chroot(mt_data("dir")) == 0);
	CHILD_CHECK(chdir("/") == 0);
	pid_t g = fork();
	if (g == 0)
		_exit(access("/a.txt", F_OK) == 0 ? 0 : 1);
	int st;
	CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void inherited_by_children(void)
{
	int st = in_child(inherited_by_children_child);
	CHECK_EXITED(st, 0);
}

static void errors_child(void)
{
	CHILD_CHECK(chroot("/nonexistent") == -1 && errno == ENOENT);
	CHILD_CHECK(chroot(mt_data("hello.txt")) == -1 && errno == ENOTDIR);
	CHILD_CHECK(chroot(NULL) == -1 && errno == EFAULT);
	CHILD_CHECK(chroot("") == -1 && errno == ENOENT);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	CHILD_CHECK(chroot("/") == -1 && errno == EPERM);
}

static void errors(void)
{
	int st = in_child(errors_child);
	CHECK_EXITED(st, 0);
}

static void fd_opened_before_escapes_child(void)
{
	/* A directory descriptor opened before chroot still reaches the
	 * old tree (the classic escape; the kernel allows it). */
	int old = open("/etc", O_RDONLY | O_DIRECTORY);
	CHILD_CHECK(old >= 0);
	CHILD_CHECK(chroot(mt_data("")) == 0);
	CHILD_CHECK(faccessat(old, "passwd", R_OK, 0) == 0);
}

static void fd_opened_before_escapes(void)
{
	int st = in_child(fd_opened_before_escapes_child);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(resolves_under_new_root),
	MT_CASE(dotdot_stops_at_root),
	MT_CASE(cwd_outside_root),
	MT_CASE(inherited_by_children),
	MT_CASE(errors),
	MT_CASE(fd_opened_before_escapes),
};

MT_MAIN(cases)
