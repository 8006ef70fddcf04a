//go:build ignore

/* fx_fchmodat2: fchmodat2(2) (Linux 6.6+), fchmodat with flags: relative
 * to a directory descriptor or the cwd, AT_EMPTY_PATH on the descriptor
 * itself, AT_SYMLINK_NOFOLLOW (EOPNOTSUPP on a symlink, a plain chmod on
 * anything else), the mode bits kept, ctime, and its errors (EINVAL,
 * ENOENT, ENOTDIR, EBADF, EPERM, EROFS, EFAULT, ENAMETOOLONG). */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static long fchmodat2(int dirfd, const char *path, mode_t mode, int flags)
{
	return syscall(SYS_fchmodat2, dirfd, path, mode, flags);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

__attribute__((destructor)) static void cleanup(void)
{
	char p[256];
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_fchmodat2-%d", (int)getpid());
	nftw(p, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* scratch enters a fresh directory for the case, with a file f (0600),
 * a directory d and a symlink l to f. */
static int scratch(const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_fchmodat2-%d", (int)getpid());
	mkdir(p, 0777);
	chmod(p, 0755);
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_fchmodat2-%d/%s", (int)getpid(), name);
	if (mkdir(p, 0755) < 0 || chdir(p) < 0 || chmod(p, 0755) < 0) {
		mt_fail(__FILE__, __LINE__, "scratch %s: %s", p, mt_errname(errno));
		return -1;
	}
	int fd = open("f", O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 || mkdir("d", 0755) < 0 || symlink("f", "l") < 0) {
		mt_fail(__FILE__, __LINE__, "scratch files: %s", mt_errname(errno));
		return -1;
	}
	close(fd);
	return 0;
}

#define SCRATCH()                        \
	do {                             \
		if (scratch(__func__) < 0) \
			return;          \
	} while (0)

static mode_t mode_of(const char *p)
{
	struct stat st;
	if (lstat(p, &st) < 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

static void relative_to_cwd_and_dirfd(void)
{
	SCRATCH();
	CHECK_SYS(fchmodat2(AT_FDCWD, "f", 0640, 0));
	CHECK_EQ(mode_of("f"), 0640);
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fchmodat2(d, "f", 0604, 0));
	CHECK_EQ(mode_of("f"), 0604);
	CHECK_SYS(fchmodat2(d, "d", 0700, 0));
	CHECK_EQ(mode_of("d"), 0700);
	/* An absolute path ignores dirfd, even a bad one. */
	char abs[PATH_MAX];
	CHECK(getcwd(abs, sizeof(abs)) != NULL);
	strcat(abs, "/f");
	CHECK_SYS(fchmodat2(-1, abs, 0600, 0));
	CHECK_EQ(mode_of("f"), 0600);
}

static void empty_path_names_the_descriptor(void)
{
	SCRATCH();
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(fchmodat2(fd, "", 0444, AT_EMPTY_PATH));
	CHECK_EQ(mode_of("f"), 0444);
	/* An O_PATH descriptor works too. */
	int p = CHECK_SYS(open("d", O_PATH));
	CHECK_SYS(fchmodat2(p, "", 0711, AT_EMPTY_PATH));
	CHECK_EQ(mode_of("d"), 0711);
	/* Without the flag an empty path is ENOENT. */
	CHECK_ERR(fchmodat2(fd, "", 0600, 0), ENOENT);
}

static void nofollow_on_symlink_eopnotsupp(void)
{
	SCRATCH();
	/* Symlink modes cannot change. */
	CHECK_ERR(fchmodat2(AT_FDCWD, "l", 0600, AT_SYMLINK_NOFOLLOW), EOPNOTSUPP);
	CHECK_EQ(mode_of("f"), 0600);
	/* Following the link changes its target. */
	CHECK_SYS(fchmodat2(AT_FDCWD, "l", 0640, 0));
	CHECK_EQ(mode_of("f"), 0640);
	/* On anything but a symlink the flag changes nothing. */
	CHECK_SYS(fchmodat2(AT_FDCWD, "f", 0600, AT_SYMLINK_NOFOLLOW));
	CHECK_EQ(mode_of("f"), 0600);
	CHECK_SYS(fchmodat2(AT_FDCWD, "d", 0750, AT_SYMLINK_NOFOLLOW));
	CHECK_EQ(mode_of("d"), 0750);
}

static void mode_bits_kept(void)
{
	SCRATCH();
	/* setuid, setgid and sticky are kept by the owner (root, group 0
	 * member); type bits in the argument are ignored. */
	CHECK_SYS(fchmodat2(AT_FDCWD, "f", S_IFDIR | 07755, 0));
	struct stat st;
	CHECK_SYS(stat("f", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 01777, 01755);
	CHECK_SYS(fchmodat2(AT_FDCWD, "d", 01777, 0));
	CHECK_EQ(mode_of("d"), 01777);
}

static void ctime_moves(void)
{
	SCRATCH();
	struct stat a, b;
	CHECK_SYS(stat("f", &a));
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
	CHECK_SYS(fchmodat2(AT_FDCWD, "f", 0644, 0));
	CHECK_SYS(stat("f", &b));
	CHECK(b.st_ctim.tv_sec > a.st_ctim.tv_sec ||
	      (b.st_ctim.tv_sec == a.st_ctim.tv_sec && b.st_ctim.tv_nsec > a.st_ctim.tv_nsec));
	CHECK_EQ(b.st_mtim.tv_sec, a.st_mtim.tv_sec);
	CHECK_EQ(b.st_mtim.tv_nsec, a.st_mtim.tv_nsec);
}

static void unknown_flags_einval(void)
{
	SCRATCH();
	CHECK_ERR(fchmodat2(AT_FDCWD, "f", 0600, AT_REMOVEDIR), EINVAL);
	CHECK_ERR(fchmodat2(AT_FDCWD, "f", 0600, 0x40000000), EINVAL);
	CHECK_ERR(fchmodat2(AT_FDCWD, "f", 0600, AT_SYMLINK_FOLLOW), EINVAL);
}

static void lookup_errors(void)
{
	SCRATCH();
	CHECK_ERR(fchmodat2(AT_FDCWD, "missing", 0600, 0), ENOENT);
	CHECK_ERR(fchmodat2(AT_FDCWD, "f/x", 0600, 0), ENOTDIR);
	int fd = CHECK_SYS(open("f", O_RDONLY));
	CHECK_ERR(fchmodat2(fd, "x", 0600, 0), ENOTDIR);
	CHECK_ERR(fchmodat2(-1, "f", 0600, 0), EBADF);
	CHECK_ERR(fchmodat2(99, "f", 0600, 0), EBADF);
	CHECK_ERR(fchmodat2(-1, "", 0600, AT_EMPTY_PATH), EBADF);
	/* A dangling symlink followed finds nothing. */
	CHECK_SYS(symlink("nowhere", "dl"));
	CHECK_ERR(fchmodat2(AT_FDCWD, "dl", 0600, 0), ENOENT);
	CHECK_ERR(fchmodat2(AT_FDCWD, "dl", 0600, AT_SYMLINK_NOFOLLOW), EOPNOTSUPP);
}

static void path_errors(void)
{
	CHECK_ERR(fchmodat2(AT_FDCWD, (const char *)1, 0600, 0), EFAULT);
	static char name[NAME_MAX + 2];
	memset(name, 'a', NAME_MAX + 1);
	CHECK_ERR(fchmodat2(AT_FDCWD, name, 0600, 0), ENAMETOOLONG);
}

static void not_owner_eperm(void)
{
	SCRATCH();
	AS_USER({
		if (fchmodat2(AT_FDCWD, "f", 0666, 0) != -1 || errno != EPERM)
			_exit(1);
		if (fchmodat2(AT_FDCWD, "d", 0777, AT_SYMLINK_NOFOLLOW) != -1 || errno != EPERM)
			_exit(2);
	});
	CHECK_EQ(mode_of("f"), 0600);
}

static void read_only_root_erofs(void)
{
	CHECK_ERR(fchmodat2(AT_FDCWD, mt_data("hello.txt"), 0600, 0), EROFS);
	CHECK_ERR(fchmodat2(AT_FDCWD, "/", 0700, AT_SYMLINK_NOFOLLOW), EROFS);
}

static const struct mt_case cases[] = {
	MT_CASE(relative_to_cwd_and_dirfd),
	MT_CASE(empty_path_names_the_descriptor),
	MT_CASE(nofollow_on_symlink_eopnotsupp),
	MT_CASE(mode_bits_kept),
	MT_CASE(ctime_moves),
	MT_CASE(unknown_flags_einval),
	MT_CASE(lookup_errors),
	MT_CASE(path_errors),
	MT_CASE(not_owner_eperm),
	MT_CASE(read_only_root_erofs),
};

MT_MAIN(cases)
