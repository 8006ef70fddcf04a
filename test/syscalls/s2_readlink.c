//go:build ignore

/* s2_readlink: readlink and readlinkat: truncation without a terminator,
 * buffer size and pointer errors, non-links, trailing slashes, dirfds,
 * empty paths on O_PATH descriptors, long targets and search permission. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void readlink_full_and_truncated(void)
{
	ENTER();
	CHECK_SYS(symlink("target-name", "l"));
	char buf[32];
	memset(buf, 'X', sizeof(buf));
	CHECK_EQ(readlink("l", buf, sizeof(buf)), 11);
	CHECK_MEMEQ(buf, "target-nameX", 12); /* no terminator written */
	memset(buf, 'X', sizeof(buf));
	CHECK_EQ(readlink("l", buf, 4), 4);
	CHECK_MEMEQ(buf, "targX", 5);
	CHECK_EQ(readlink("l", buf, 1), 1);
	CHECK_EQ(buf[0], 't');
}

static void readlink_bad_sizes(void)
{
	ENTER();
	CHECK_SYS(symlink("t", "l"));
	char buf[8];
	CHECK_ERR(syscall(SYS_readlink, "l", buf, 0), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, "l", buf, -1), EINVAL);
	CHECK_ERR(syscall(SYS_readlinkat, AT_FDCWD, "l", buf, 0), EINVAL);
}

static void readlink_faults(void)
{
	ENTER();
	CHECK_SYS(symlink("t", "l"));
	char buf[8];
	CHECK_ERR(syscall(SYS_readlink, "l", (void *)1, 8), EFAULT);
	CHECK_ERR(syscall(SYS_readlink, (void *)1, buf, 8), EFAULT);
}

static void readlink_not_a_link(void)
{
	ENTER();
	CHECK_SYS(close(CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_SYS(mkdir("d", 0755));
	char buf[8];
	CHECK_ERR(readlink("f", buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlink("d", buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlink("/", buf, sizeof(buf)), EINVAL);
}

static void readlink_missing_paths(void)
{
	ENTER();
	CHECK_SYS(close(CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_SYS(symlink("f", "l"));
	CHECK_SYS(symlink("nowhere", "dangling"));
	char buf[8];
	CHECK_ERR(readlink("missing", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlink("", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlink("f/x", buf, sizeof(buf)), ENOTDIR);
	/* A trailing slash follows the link: to a file, or to nothing. */
	CHECK_ERR(readlink("l/", buf, sizeof(buf)), ENOTDIR);
	CHECK_ERR(readlink("dangling/", buf, sizeof(buf)), ENOENT);
	char name[NAME_MAX + 2];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CHECK_ERR(readlink(name, buf, sizeof(buf)), ENAMETOOLONG);
}

static void readlinkat_dirfd(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(symlink("abc", "d/l"));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	char buf[8];
	CHECK_EQ(readlinkat(d, "l", buf, sizeof(buf)), 3);
	CHECK_MEMEQ(buf, "abc", 3);
	int dp = CHECK_SYS(open("d", O_PATH));
	CHECK_EQ(readlinkat(dp, "l", buf, sizeof(buf)), 3);
	CHECK_EQ(readlinkat(AT_FDCWD, "d/l", buf, sizeof(buf)), 3);
	/* A relative path needs a valid directory dirfd. */
	CHECK_ERR(readlinkat(-1, "l", buf, sizeof(buf)), EBADF);
	CHECK_ERR(readlinkat(9999, "l", buf, sizeof(buf)), EBADF);
	int f = CHECK_SYS(open("d/l", O_RDONLY | O_CREAT, 0644));
	CHECK_ERR(readlinkat(f, "l", buf, sizeof(buf)), ENOTDIR);
}

static void readlinkat_absolute_ignores_dirfd(void)
{
	char buf[64];
	CHECK_GT(readlinkat(-1, "/proc/self/exe", buf, sizeof(buf)), 0);
	CHECK_EQ(buf[0], '/');
}

static void readlinkat_empty_path(void)
{
	ENTER();
	CHECK_SYS(close(CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644))));
	CHECK_SYS(symlink("f", "l"));
	char buf[8];
	int lfd = CHECK_SYS(open("l", O_PATH | O_NOFOLLOW));
	CHECK_EQ(readlinkat(lfd, "", buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'f');
	/* A descriptor that is not a symlink: ENOENT on current kernels,
	 * EINVAL on some older ones. */
	int ffd = CHECK_SYS(open("f", O_PATH));
	errno = 0;
	CHECK_EQ(readlinkat(ffd, "", buf, sizeof(buf)), -1);
	CHECK(errno == ENOENT || errno == EINVAL);
	CHECK_ERR(readlinkat(AT_FDCWD, "", buf, sizeof(buf)), ENOENT);
}

static void readlink_long_target(void)
{
	ENTER();
	static char target[PATH_MAX + 1];
	memset(target, 'a', PATH_MAX - 1);
	target[PATH_MAX - 1] = 0;
	for (int i = 200; i < PATH_MAX - 1; i += 201)
		target[i] = '/';
	CHECK_SYS(symlink(target, "long"));
	static char buf[PATH_MAX + 16];
	CHECK_EQ(readlink("long", buf, sizeof(buf)), PATH_MAX - 1);
	CHECK_MEMEQ(buf, target, PATH_MAX - 1);
	memset(target, 'b', PATH_MAX);
	target[PATH_MAX] = 0;
	CHECK_ERR(symlink(target, "toolong"), ENAMETOOLONG);
}

static void readlink_search_permission(void)
{
	ENTER();
	CHECK_SYS(mkdir("closed", 0755));
	CHECK_SYS(symlink("t", "closed/l"));
	CHECK_SYS(chmod("closed", 0600));
	AS_USER(
		char b[8];
		CHILD_ERR(readlink("closed/l", b, sizeof(b)), EACCES);
	);
	char buf[8];
	CHECK_EQ(readlink("closed/l", buf, sizeof(buf)), 1);
}

static const struct mt_case cases[] = {
	MT_CASE(readlink_full_and_truncated),
	MT_CASE(readlink_bad_sizes),
	MT_CASE(readlink_faults),
	MT_CASE(readlink_not_a_link),
	MT_CASE(readlink_missing_paths),
	MT_CASE(readlinkat_dirfd),
	MT_CASE(readlinkat_absolute_ignores_dirfd),
	MT_CASE(readlinkat_empty_path),
	MT_CASE(readlink_long_target),
	MT_CASE(readlink_search_permission),
};

MT_MAIN(cases)
