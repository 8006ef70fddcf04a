//go:build ignore

/* pivot_root: pivot_root(2) and mount(MS_MOVE) as root of the sandbox
 * (or of the native run's namespaces): the errors in Linux's order
 * (EPERM, ENOENT, ENOTDIR, EBUSY for the current root's mount, EINVAL
 * for a new root that is no mount point or a put_old outside it), a
 * pivot onto a tmpfs and back with the old root under put_old and the
 * roots and working directories moved, the pivot_root(".", ".") then
 * umount2(".", MNT_DETACH) idiom of container runtimes (in a chrooted
 * child, so the suite's root stays), and moving mounts with their
 * submounts (EINVAL, ELOOP). Works under /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

static int write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, strlen(data));
	close(fd);
	return n == (ssize_t)strlen(data) ? 0 : -1;
}

/* in_mountinfo reports whether some mount point in /proc/self/mountinfo
 * ends with suffix. */
static int in_mountinfo(const char *suffix)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -1;
	char line[4096];
	int found = 0;
	size_t sl = strlen(suffix);
	while (fgets(line, sizeof line, f)) {
		char point[4096];
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1) {
			size_t pl = strlen(point);
			if (pl >= sl && strcmp(point + pl - sl, suffix) == 0)
				found = 1;
		}
	}
	fclose(f);
	return found;
}

static void pivot_errors(void)
{
	ENTER();
	CHECK_SYS(mkdir("plain", 0755));
	CHECK_SYS(mkdir("plain/old", 0755));
	CHECK_SYS(mkdir("other", 0755));
	CHECK_SYS(write_file("file", "x"));
	CHECK_SYS(mkdir("new", 0755));
	CHECK_SYS(mount("none", "new", "tmpfs", 0, NULL));
	CHECK_SYS(mkdir("new/old", 0755));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_ERR(pivot_root("new", "new/old"), EPERM);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_ERR(pivot_root("missing", "new/old"), ENOENT);
	CHECK_ERR(pivot_root("new", "new/missing"), ENOENT);
	CHECK_ERR(pivot_root("file", "new/old"), ENOTDIR);
	CHECK_ERR(pivot_root("new", "file"), ENOTDIR);
	/* The new root or put_old on the current root's mount: EBUSY. The
	 * native run's root was copied into a user namespace, which locks
	 * it (MNT_LOCKED), and Linux checks that first: EINVAL. */
	errno = 0;
	CHECK_EQ(pivot_root("/", "new/old"), -1);
	CHECK(errno == EBUSY || errno == EINVAL);
	CHECK_ERR(pivot_root("new", "/etc"), EBUSY);
	/* Not a mount point; put_old not below the new root. */
	CHECK_ERR(pivot_root("plain", "plain/old"), EINVAL);
	CHECK_ERR(pivot_root("new", "other"), EINVAL);
	/* Nothing moved. */
	CHECK_SYS(access("/etc", F_OK));
	CHECK_SYS(umount2("new", 0));
}

static void pivot_and_back(void)
{
	ENTER();
	char scratch[PATH_MAX];
	CHECK(getcwd(scratch, sizeof scratch) != NULL);
	CHECK_SYS(mkdir("new", 0755));
	CHECK_SYS(mount("none", "new", "tmpfs", 0, NULL));
	CHECK_SYS(mkdir("new/old", 0755));
	CHECK_SYS(write_file("new/marker", "tmpfs root"));
	CHECK_SYS(chdir("new"));
	CHECK_SYS(pivot_root(".", "old"));
	/* The tmpfs is the root and the old root lies under /old, with
	 * its submounts. */
	CHECK_SYS(access("/marker", F_OK));
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK_STREQ(cwd, "/");
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "/old%s/new", scratch);
	struct stat st;
	CHECK_SYS(stat(path, &st));
	CHECK_SYS(access("/old/etc", F_OK));
	CHECK_ERR(access("/etc", F_OK), ENOENT);
	/* Back: the old root becomes the root again, the tmpfs goes
	 * where it was. */
	CHECK_SYS(pivot_root("/old", path));
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK_STREQ(cwd, "/");
	CHECK_SYS(access("/etc", F_OK));
	snprintf(path, sizeof path, "%s/new/marker", scratch);
	CHECK_SYS(access(path, F_OK));
	snprintf(path, sizeof path, "%s/new", scratch);
	CHECK_EQ(in_mountinfo(path), 1);
	CHECK_SYS(umount2(path, 0));
	CHECK_EQ(in_mountinfo(path), 0);
}

static void pivot_dot_dot_and_detach(void)
{
	ENTER();
	/* A chrooted child pivots, so only its root moves. */
	CHECK_SYS(mkdir("t", 0755));
	CHECK_SYS(mount("none", "t", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("t/marker-t", "t"));
	CHECK_SYS(mkdir("t/new", 0755));
	CHECK_SYS(mount("none", "t/new", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("t/new/marker-n", "n"));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(chroot("t") == 0);
		CHILD_CHECK(chdir("/new") == 0);
		CHILD_CHECK(pivot_root(".", ".") == 0);
		/* The old root is stacked on the new one: "." names it. */
		CHILD_CHECK(umount2(".", MNT_DETACH) == 0);
		CHILD_CHECK(access("/marker-n", F_OK) == 0);
		CHILD_ERR(access("/marker-t", F_OK), ENOENT);
		char cwd[PATH_MAX];
		CHILD_CHECK(getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, "/") == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* The new root took the old one's place. */
	CHECK_SYS(access("t/marker-n", F_OK));
	CHECK_ERR(access("t/marker-t", F_OK), ENOENT);
	CHECK_SYS(umount2("t", MNT_DETACH));
	CHECK_ERR(access("t/marker-n", F_OK), ENOENT);
}

static void ms_move_tree(void)
{
	ENTER();
	CHECK_SYS(mkdir("a", 0755));
	CHECK_SYS(mkdir("b", 0755));
	CHECK_SYS(mkdir("c", 0755));
	CHECK_SYS(write_file("g", "file"));
	CHECK_SYS(mount("none", "a", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("a/f", "x"));
	CHECK_SYS(mkdir("a/sub", 0755));
	CHECK_SYS(mount("none", "a/sub", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("a/sub/s", "y"));
	CHECK_SYS(mount("a", "b", NULL, MS_MOVE, NULL));
	CHECK_SYS(access("b/f", F_OK));
	CHECK_SYS(access("b/sub/s", F_OK));
	CHECK_ERR(access("a/f", F_OK), ENOENT);
	CHECK_EQ(in_mountinfo("/a"), 0);
	CHECK_EQ(in_mountinfo("/b"), 1);
	CHECK_EQ(in_mountinfo("/b/sub"), 1);
	/* Errors. */
	CHECK_ERR(mount("", "c", NULL, MS_MOVE, NULL), EINVAL);
	CHECK_ERR(mount("c", "a", NULL, MS_MOVE, NULL), EINVAL);
	CHECK_ERR(mount("missing", "c", NULL, MS_MOVE, NULL), ENOENT);
	CHECK_ERR(mount("b", "g", NULL, MS_MOVE, NULL), EINVAL);
	CHECK_ERR(mount("b", "b/sub", NULL, MS_MOVE, NULL), ELOOP);
	CHECK_ERR(mount("b", "b", NULL, MS_MOVE, NULL), ELOOP);
	/* The root: everything is below it (ELOOP), but the native run's
	 * root is locked by its user namespace (EINVAL, checked first). */
	errno = 0;
	CHECK_EQ(mount("/", "c", NULL, MS_MOVE, NULL), -1);
	CHECK(errno == ELOOP || errno == EINVAL);
	/* A submount moves out on its own. */
	CHECK_SYS(mount("b/sub", "c", NULL, MS_MOVE, NULL));
	CHECK_SYS(access("c/s", F_OK));
	CHECK_ERR(access("b/sub/s", F_OK), ENOENT);
	/* Unmounting b no longer takes c. */
	CHECK_SYS(umount2("b", 0));
	CHECK_SYS(access("c/s", F_OK));
	CHECK_SYS(umount2("c", 0));
}

static void move_then_unmount_tree(void)
{
	ENTER();
	CHECK_SYS(mkdir("x", 0755));
	CHECK_SYS(mkdir("y", 0755));
	CHECK_SYS(mount("none", "x", "tmpfs", 0, NULL));
	CHECK_SYS(mount("none", "y", "tmpfs", 0, NULL));
	CHECK_SYS(mkdir("y/in", 0755));
	/* x, mounted before y, moves below it. */
	CHECK_SYS(mount("x", "y/in", NULL, MS_MOVE, NULL));
	CHECK_ERR(umount2("y", 0), EBUSY);
	CHECK_SYS(umount2("y", MNT_DETACH));
	CHECK_EQ(in_mountinfo("/y/in"), 0);
	CHECK_EQ(in_mountinfo("/y"), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(pivot_errors),
	MT_CASE(pivot_and_back),
	MT_CASE(pivot_dot_dot_and_detach),
	MT_CASE(ms_move_tree),
	MT_CASE(move_then_unmount_tree),
};

MT_MAIN(cases)
