//go:build ignore

/* proc_mount_userns: a new proc mount in a user namespace's mount
 * namespace must not show more than the caller already sees (Linux's
 * mount_too_revealing): it is EPERM unless the namespace has a proc
 * mount of the whole file system with no locked mount on it (a masked
 * path such as runtimes' /dev/null over /proc/kcore, or a tmpfs over a
 * directory, is one), and a proc locked read-only allows only read-only
 * new ones, locked read-only too. Each case builds its own tree: a tmpfs
 * root holding a fresh /proc and nothing of the host (pivot_root, then
 * the old root detached), masks some of it as root, then unshares a
 * user, mount and PID namespace and mounts a proc from inside. */
#include "moattest.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	MASK_FILE = 1,   /* a file bound over /proc/version */
	MASK_DIR = 2,    /* a read-only tmpfs over /proc/sys */
	SECOND_PROC = 4, /* a second, unmasked proc at /q */
	PROC_RO = 8,     /* /proc remounted read-only */
};

/* own_tree, in a child, makes a mount namespace whose only mounts are a
 * tmpfs root (cwd and root) with /proc, /p and /q in it and a proc at
 * /proc, then applies what setup asks for. Returns 0 or -1. The
 * tmpfs's mount point "r" is left in the working directory, empty (the
 * tmpfs is the child's), for the next call. */
static int own_tree(int setup)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	if ((mkdir("r", 0755) < 0 && errno != EEXIST) || mount("none", "r", "tmpfs", 0, NULL) < 0)
		return -1;
	if (mkdir("r/proc", 0755) < 0 || mkdir("r/old", 0755) < 0 || mkdir("r/p", 0755) < 0 ||
	    mkdir("r/q", 0755) < 0)
		return -1;
	int fd = open("r/f", O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	if (syscall(SYS_pivot_root, "r", "r/old") < 0 || chdir("/") < 0)
		return -1;
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	if (umount2("/old", MNT_DETACH) < 0)
		return -1;
	if ((setup & MASK_FILE) && mount("/f", "/proc/version", NULL, MS_BIND, NULL) < 0)
		return -1;
	if ((setup & MASK_DIR) && mount("none", "/proc/sys", "tmpfs", MS_RDONLY, NULL) < 0)
		return -1;
	if ((setup & SECOND_PROC) &&
	    mount("proc", "/q", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	if ((setup & PROC_RO) &&
	    mount(NULL, "/proc", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return -1;
	return 0;
}

/* try_proc forks a child that builds own_tree(setup), enters a new user,
 * mount and PID namespace and, as that namespace's init, mounts a proc
 * at /p with flags. It returns the mount's errno (0: mounted), or -1 if
 * something else failed. With a mount and check_ro, it also reports
 * EPERM as 0 only if clearing read-only by remount fails. */
static int try_proc(int setup, unsigned long flags, int check_ro)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return -1;
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		close(pfd[0]);
		int res = -1;
		if (own_tree(setup) < 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
			goto out;
		pid_t c = fork();
		if (c < 0)
			goto out;
		if (c == 0) {
			int r = 0;
			if (mount("proc", "/p", "proc", flags, NULL) < 0) {
				r = errno;
			} else {
				char self[16] = "";
				/* The new proc numbers this namespace: we are 1. */
				if (readlink("/p/self", self, sizeof(self) - 1) != 1 || self[0] != '1')
					r = -1;
				if (check_ro && r == 0 &&
				    (mount(NULL, "/p", NULL, MS_REMOUNT | MS_BIND, NULL) == 0 || errno != EPERM))
					r = -1;
			}
			_exit(r < 0 ? 255 : r);
		}
		int st;
		if (waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) != 255)
			res = WEXITSTATUS(st);
	out:
		if (write(pfd[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	int res = -1;
	if (read(pfd[0], &res, sizeof(res)) != sizeof(res))
		res = -1;
	close(pfd[0]);
	int st;
	waitpid(p, &st, 0);
	return res;
}

static const unsigned long procFlags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

static void whole_proc_allows_new_proc(void)
{
	ENTER();
	CHECK_EQ(try_proc(0, procFlags, 0), 0);
}

static void masked_file_refuses_new_proc(void)
{
	ENTER();
	CHECK_EQ(try_proc(MASK_FILE, procFlags, 0), EPERM);
}

static void masked_dir_refuses_new_proc(void)
{
	ENTER();
	CHECK_EQ(try_proc(MASK_DIR, procFlags, 0), EPERM);
}

static void another_whole_proc_suffices(void)
{
	ENTER();
	CHECK_EQ(try_proc(MASK_FILE | MASK_DIR | SECOND_PROC, procFlags, 0), 0);
}

static void read_only_proc_allows_only_read_only(void)
{
	ENTER();
	CHECK_EQ(try_proc(PROC_RO, procFlags, 0), EPERM);
	/* Read-only is allowed, and locked: remounting it writable is EPERM. */
	CHECK_EQ(try_proc(PROC_RO, procFlags | MS_RDONLY, 1), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(whole_proc_allows_new_proc),
	MT_CASE(masked_file_refuses_new_proc),
	MT_CASE(masked_dir_refuses_new_proc),
	MT_CASE(another_whole_proc_suffices),
	MT_CASE(read_only_proc_allows_only_read_only),
};

MT_MAIN(cases)
