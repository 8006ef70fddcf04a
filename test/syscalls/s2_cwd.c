//go:build ignore

/* s2_cwd: getcwd, chdir and fchdir edge cases: buffer sizes, bad
 * pointers, non-directories, O_PATH descriptors, removed and unreadable
 * directories. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long raw_getcwd(char *buf, size_t n)
{
	return syscall(SYS_getcwd, buf, n);
}

static void getcwd_returns_length(void)
{
	char buf[4096];
	CHECK_SYS(chdir("/"));
	CHECK_EQ(raw_getcwd(buf, sizeof(buf)), 2);
	CHECK_STREQ(buf, "/");
	CHECK_SYS(chdir("/proc"));
	CHECK_EQ(raw_getcwd(buf, sizeof(buf)), 6);
	CHECK_STREQ(buf, "/proc");
}

static void getcwd_exact_size(void)
{
	char buf[8];
	CHECK_SYS(chdir("/proc"));
	CHECK_EQ(raw_getcwd(buf, 6), 6);
	CHECK_STREQ(buf, "/proc");
}

static void getcwd_small_erange(void)
{
	char buf[8];
	CHECK_SYS(chdir("/proc"));
	CHECK_ERR(raw_getcwd(buf, 5), ERANGE);
	CHECK_ERR(raw_getcwd(buf, 1), ERANGE);
	CHECK_ERR(raw_getcwd(buf, 0), ERANGE);
}

static void getcwd_efault(void)
{
	CHECK_SYS(chdir("/"));
	CHECK_ERR(raw_getcwd((char *)1, 4096), EFAULT);
}

static void getcwd_removed_enoent(void)
{
	char buf[4096];
	ENTER();
	CHECK_SYS(mkdir("gone", 0755));
	CHECK_SYS(chdir("gone"));
	CHECK_SYS(rmdir("../gone"));
	CHECK_ERR(raw_getcwd(buf, sizeof(buf)), ENOENT);
	/* ".." from a removed directory still reaches its old parent. */
	CHECK_SYS(chdir(".."));
	CHECK_GT(raw_getcwd(buf, sizeof(buf)), 0);
}

static void chdir_errors(void)
{
	CHECK_ERR(chdir("/nonexistent-moat"), ENOENT);
	CHECK_ERR(chdir(""), ENOENT);
	CHECK_ERR(chdir("/proc/self/status"), ENOTDIR);
	CHECK_ERR(chdir((const char *)1), EFAULT);
	char name[300];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CHECK_ERR(chdir(name), ENAMETOOLONG);
}

static void chdir_symlink_loop(void)
{
	ENTER();
	CHECK_SYS(symlink("b", "a"));
	CHECK_SYS(symlink("a", "b"));
	CHECK_ERR(chdir("a"), ELOOP);
}

static void chdir_follows_symlink(void)
{
	char buf[4096];
	ENTER();
	CHECK_SYS(mkdir("real", 0755));
	CHECK_SYS(symlink("real", "link"));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	size_t n = strlen(buf);
	CHECK_SYS(chdir("link"));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf + n, "/real");
}

static void chdir_dotdot_at_root(void)
{
	char buf[64];
	CHECK_SYS(chdir("/"));
	CHECK_SYS(chdir(".."));
	CHECK_SYS(chdir("../.."));
	CHECK_EQ(raw_getcwd(buf, sizeof(buf)), 2);
	CHECK_STREQ(buf, "/");
}

static void fchdir_errors(void)
{
	CHECK_ERR(fchdir(-1), EBADF);
	CHECK_ERR(fchdir(9999), EBADF);
	int fd = CHECK_SYS(open("/proc/self/status", O_RDONLY));
	CHECK_ERR(fchdir(fd), ENOTDIR);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(fchdir(p[0]), ENOTDIR);
}

static void fchdir_opath(void)
{
	char buf[64];
	int fd = CHECK_SYS(open("/proc", O_PATH | O_DIRECTORY));
	CHECK_SYS(chdir("/"));
	CHECK_SYS(fchdir(fd));
	CHECK_EQ(raw_getcwd(buf, sizeof(buf)), 6);
	CHECK_STREQ(buf, "/proc");
}

static void chdir_eacces(void)
{
	ENTER();
	CHECK_SYS(mkdir("locked", 0700));
	CHECK_SYS(mkdir("open", 0755));
	CHECK_SYS(mkdir("open/noexec", 0777));
	CHECK_SYS(chmod("open/noexec", 0666));
	int fd = CHECK_SYS(open("locked", O_RDONLY | O_DIRECTORY));
	AS_USER(
		CHILD_ERR(chdir("locked"), EACCES);
		CHILD_ERR(chdir("open/noexec"), EACCES);
		/* fchdir checks search permission on the open directory too. */
		CHILD_ERR(fchdir(fd), EACCES);
		CHILD_CHECK(chdir("open") == 0);
	);
}

static const struct mt_case cases[] = {
	MT_CASE(getcwd_returns_length),
	MT_CASE(getcwd_exact_size),
	MT_CASE(getcwd_small_erange),
	MT_CASE(getcwd_efault),
	MT_CASE(getcwd_removed_enoent),
	MT_CASE(chdir_errors),
	MT_CASE(chdir_symlink_loop),
	MT_CASE(chdir_follows_symlink),
	MT_CASE(chdir_dotdot_at_root),
	MT_CASE(fchdir_errors),
	MT_CASE(fchdir_opath),
	MT_CASE(chdir_eacces),
};

MT_MAIN(cases)
