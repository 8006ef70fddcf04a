//go:build ignore

/* mounts: mount(2) and umount2(2) as root of the sandbox (or of the native
 * run's user namespace): new tmpfs and proc instances, read-only mounts
 * and remounts, bind mounts (recursive too), propagation changes,
 * unmounting and its errors, and /proc/self/mountinfo telling the truth.
 * Works under /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

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

static void tmpfs_mount_and_umount(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(write_file("m/under", "hidden"));
	CHECK_SYS(mount("none", "m", "tmpfs", 0, "size=1m,mode=0710"));
	struct statfs sfs;
	CHECK_SYS(statfs("m", &sfs));
	CHECK_EQ(sfs.f_type, TMPFS_MAGIC);
	CHECK_EQ(sfs.f_blocks * sfs.f_bsize, 1 << 20);
	struct stat st;
	CHECK_SYS(stat("m", &st));
	CHECK_EQ(st.st_mode & 07777, 0710);
	CHECK_ERR(access("m/under", F_OK), ENOENT);
	CHECK_SYS(write_file("m/f", "data"));
	CHECK_EQ(in_mountinfo("/m"), 1);
	CHECK_SYS(umount2("m", 0));
	CHECK_ERR(access("m/f", F_OK), ENOENT);
	CHECK_SYS(access("m/under", F_OK));
	CHECK_EQ(in_mountinfo("/m"), 0);
}

static void read_only_and_remount(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mount("none", "m", "tmpfs", MS_RDONLY, NULL));
	CHECK_ERR(open("m/f", O_WRONLY | O_CREAT, 0644), EROFS);
	CHECK_ERR(mkdir("m/d", 0755), EROFS);
	struct statfs sfs;
	CHECK_SYS(statfs("m", &sfs));
	CHECK_NE(sfs.f_flags & ST_RDONLY, 0);
	CHECK_SYS(mount(NULL, "m", NULL, MS_REMOUNT, NULL));
	CHECK_SYS(write_file("m/f", "now writable"));
	CHECK_SYS(mount(NULL, "m", NULL, MS_REMOUNT | MS_RDONLY, NULL));
	CHECK_ERR(unlink("m/f"), EROFS);
	CHECK_SYS(access("m/f", R_OK));
	CHECK_SYS(umount2("m", 0));
}

static void bind_mounts(void)
{
	ENTER();
	CHECK_SYS(mkdir("src", 0755));
	CHECK_SYS(mkdir("dst", 0755));
	CHECK_SYS(write_file("src/f", "shared"));
	CHECK_SYS(mount("src", "dst", NULL, MS_BIND, NULL));
	char buf[16] = { 0 };
	int fd = CHECK_SYS(open("dst/f", O_RDONLY));
	CHECK_EQ(read(fd, buf, sizeof buf), 6);
	close(fd);
	CHECK_EQ(strcmp(buf, "shared"), 0);
	/* Both names reach one directory. */
	CHECK_SYS(write_file("dst/g", "g"));
	CHECK_SYS(access("src/g", F_OK));
	/* A read-only bind leaves the source writable. */
	CHECK_SYS(mount(NULL, "dst", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
	CHECK_ERR(unlink("dst/g"), EROFS);
	CHECK_SYS(unlink("src/g"));
	CHECK_SYS(umount2("dst", 0));
	CHECK_ERR(access("dst/f", F_OK), ENOENT);
	/* Binding a file on a directory, or the reverse, is ENOTDIR. */
	CHECK_SYS(write_file("file", "x"));
	CHECK_ERR(mount("file", "dst", NULL, MS_BIND, NULL), ENOTDIR);
	CHECK_ERR(mount("src", "file", NULL, MS_BIND, NULL), ENOTDIR);
	CHECK_ERR(mount("missing", "dst", NULL, MS_BIND, NULL), ENOENT);
}

static void recursive_bind(void)
{
	ENTER();
	CHECK_SYS(mkdir("src", 0755));
	CHECK_SYS(mkdir("src/sub", 0755));
	CHECK_SYS(mkdir("flat", 0755));
	CHECK_SYS(mkdir("rec", 0755));
	CHECK_SYS(mount("none", "src/sub", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("src/sub/in-tmpfs", "x"));
	CHECK_SYS(mount("src", "flat", NULL, MS_BIND, NULL));
	CHECK_SYS(mount("src", "rec", NULL, MS_BIND | MS_REC, NULL));
	CHECK_ERR(access("flat/sub/in-tmpfs", F_OK), ENOENT);
	CHECK_SYS(access("rec/sub/in-tmpfs", F_OK));
	/* A mount with mounts below it is busy; MNT_DETACH takes them all. */
	CHECK_ERR(umount2("rec", 0), EBUSY);
	CHECK_SYS(umount2("rec", MNT_DETACH));
	CHECK_ERR(access("rec/sub", F_OK), ENOENT);
	CHECK_SYS(umount2("flat", 0));
	CHECK_SYS(umount2("src/sub", 0));
}

static void stacked_mounts(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("m/first", "1"));
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	CHECK_ERR(access("m/first", F_OK), ENOENT);
	CHECK_SYS(umount2("m", 0));
	CHECK_SYS(access("m/first", F_OK));
	CHECK_SYS(umount2("m", 0));
	CHECK_ERR(access("m/first", F_OK), ENOENT);
}

static void proc_instance(void)
{
	ENTER();
	CHECK_SYS(mkdir("p", 0755));
	CHECK_SYS(mount("proc", "p", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL));
	char self[64], want[64];
	ssize_t n = CHECK_SYS(readlink("p/self", self, sizeof self - 1));
	self[n] = 0;
	snprintf(want, sizeof want, "%d", (int)getpid());
	CHECK_EQ(strcmp(self, want), 0);
	struct statfs sfs;
	CHECK_SYS(statfs("p", &sfs));
	CHECK_EQ(sfs.f_type, PROC_SUPER_MAGIC);
	CHECK_SYS(umount2("p", 0));
}

static void propagation_flags(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	CHECK_SYS(mount(NULL, "m", NULL, MS_PRIVATE, NULL));
	CHECK_SYS(mount(NULL, "m", NULL, MS_SLAVE | MS_REC, NULL));
	CHECK_SYS(mount(NULL, "m", NULL, MS_SHARED, NULL));
	/* Two propagation types at once. */
	CHECK_ERR(mount(NULL, "m", NULL, MS_SHARED | MS_PRIVATE, NULL), EINVAL);
	/* Not a mount point. */
	CHECK_SYS(mkdir("m/d", 0755));
	CHECK_ERR(mount(NULL, "m/d", NULL, MS_PRIVATE, NULL), EINVAL);
	CHECK_SYS(umount2("m", 0));
}

static void errors(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_ERR(umount2("m", 0), EINVAL);
	CHECK_ERR(umount2("missing", 0), ENOENT);
	CHECK_ERR(umount2("m", 0x80000000), EINVAL);
	CHECK_ERR(mount("none", "m", "no-such-fs-type", 0, NULL), ENODEV);
	CHECK_ERR(mount("none", "missing", "tmpfs", 0, NULL), ENOENT);
	CHECK_ERR(mount("none", "m", "tmpfs", 0, "size=banana"), EINVAL);
	CHECK_ERR(mount("none", "m", "tmpfs", 0, (void *)1), EFAULT);
	CHECK_ERR(mount(NULL, "m", NULL, MS_REMOUNT, NULL), EINVAL);
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	CHECK_ERR(umount2("m", MNT_EXPIRE | MNT_DETACH), EINVAL);
	CHECK_SYS(umount2("m", 0));
}

/* Without CAP_SYS_ADMIN, mount and umount2 are EPERM. */
static void needs_cap_sys_admin(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2] = { { 0 } };
		if (syscall(SYS_capset, &h, d) < 0)
			mt_child_fail(__FILE__, __LINE__, "capset", errno);
		if (mount("none", "m", "tmpfs", 0, NULL) != -1 || errno != EPERM)
			mt_child_fail(__FILE__, __LINE__, "mount without CAP_SYS_ADMIN", errno);
		if (umount2("m", 0) != -1 || errno != EPERM)
			mt_child_fail(__FILE__, __LINE__, "umount2 without CAP_SYS_ADMIN", errno);
		_exit(0);
	}
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EQ(st, 0);
	CHECK_SYS(umount2("m", 0));
}

static const struct mt_case cases[] = {
	MT_CASE(tmpfs_mount_and_umount),
	MT_CASE(read_only_and_remount),
	MT_CASE(bind_mounts),
	MT_CASE(recursive_bind),
	MT_CASE(stacked_mounts),
	MT_CASE(proc_instance),
	MT_CASE(propagation_flags),
	MT_CASE(errors),
	MT_CASE(needs_cap_sys_admin),
};

MT_MAIN(cases)
