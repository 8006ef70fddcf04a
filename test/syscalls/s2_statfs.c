//go:build ignore

/* s2_statfs: statfs and fstatfs: file system types and name lengths of
 * tmpfs and procfs, agreement between the two calls, descriptors of every
 * kind (O_PATH, pipes, sockets), and the path, descriptor and pointer
 * errors. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void tmpfs_type_and_limits(void)
{
	struct statfs s;
	CHECK_SYS(statfs("/dev/shm", &s));
	CHECK_EQ(s.f_type, TMPFS_MAGIC);
	CHECK_EQ(s.f_namelen, 255);
	CHECK_GT(s.f_bsize, 0);
	CHECK_LE(s.f_bfree, s.f_blocks);
	CHECK_LE(s.f_bavail, s.f_blocks);
}

static void proc_type(void)
{
	struct statfs s;
	CHECK_SYS(statfs("/proc", &s));
	CHECK_EQ(s.f_type, PROC_SUPER_MAGIC);
	CHECK_SYS(statfs("/proc/self/status", &s));
	CHECK_EQ(s.f_type, PROC_SUPER_MAGIC);
}

static void fstatfs_agrees(void)
{
	struct statfs a, b;
	CHECK_SYS(statfs("/proc", &a));
	int fd = CHECK_SYS(open("/proc", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fstatfs(fd, &b));
	CHECK_EQ(a.f_type, b.f_type);
	CHECK_EQ(a.f_namelen, b.f_namelen);
	CHECK_EQ(a.f_bsize, b.f_bsize);
	int p = CHECK_SYS(open("/dev/shm", O_PATH));
	CHECK_SYS(fstatfs(p, &b));
	CHECK_EQ(b.f_type, TMPFS_MAGIC);
}

static void memfd_is_tmpfs(void)
{
	int fd = CHECK_SYS(memfd_create("s", 0));
	struct statfs s;
	CHECK_SYS(fstatfs(fd, &s));
	/* memfds live on an internal tmpfs (hugetlbfs only with
	 * MFD_HUGETLB). */
	CHECK_EQ(s.f_type, TMPFS_MAGIC);
}

static void pipes_and_sockets(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct statfs s;
	CHECK_SYS(fstatfs(p[0], &s));
	CHECK_EQ(s.f_type, PIPEFS_MAGIC);
	int sk[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sk));
	CHECK_SYS(fstatfs(sk[0], &s));
	CHECK_EQ(s.f_type, SOCKFS_MAGIC);
}

static void statfs_follows_symlinks(void)
{
	ENTER();
	CHECK_SYS(symlink("/proc", "l"));
	struct statfs s;
	CHECK_SYS(statfs("l", &s));
	CHECK_EQ(s.f_type, PROC_SUPER_MAGIC);
	CHECK_SYS(symlink("nowhere", "dangling"));
	CHECK_ERR(statfs("dangling", &s), ENOENT);
}

static void path_errors(void)
{
	struct statfs s;
	CHECK_ERR(statfs("/nonexistent-moat", &s), ENOENT);
	CHECK_ERR(statfs("", &s), ENOENT);
	CHECK_ERR(statfs("/proc/self/status/x", &s), ENOTDIR);
	CHECK_ERR(syscall(SYS_statfs, (void *)1, &s), EFAULT);
	CHECK_ERR(syscall(SYS_statfs, "/proc", (void *)1), EFAULT);
}

static void fd_errors(void)
{
	struct statfs s;
	CHECK_ERR(fstatfs(-1, &s), EBADF);
	CHECK_ERR(fstatfs(9999, &s), EBADF);
	int fd = CHECK_SYS(open("/proc", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(syscall(SYS_fstatfs, fd, (void *)1), EFAULT);
}

static void search_permission(void)
{
	ENTER();
	CHECK_SYS(mkdir("closed", 0700));
	CHECK_SYS(mkdir("closed/in", 0755));
	AS_USER(
		struct statfs s;
		CHILD_ERR(statfs("closed/in", &s), EACCES);
		/* The directory itself needs no permission. */
		CHILD_CHECK(statfs("closed", &s) == 0);
	);
}

static const struct mt_case cases[] = {
	MT_CASE(tmpfs_type_and_limits),
	MT_CASE(proc_type),
	MT_CASE(fstatfs_agrees),
	MT_CASE(memfd_is_tmpfs),
	MT_CASE(pipes_and_sockets),
	MT_CASE(statfs_follows_symlinks),
	MT_CASE(path_errors),
	MT_CASE(fd_errors),
	MT_CASE(search_permission),
};

MT_MAIN(cases)
