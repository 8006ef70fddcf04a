//go:build ignore

/* stat_paths: reading the file tree without changing it: stat, lstat,
 * fstat, newfstatat and statx flags, access/faccessat/faccessat2 modes and
 * flags, readlink/readlinkat buffer rules, getcwd/chdir/fchdir, and
 * getdents/getdents64 buffer rules, on the root and test/syscalls/data. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void stat_family_agree(void)
{
	struct stat a, b, c, d;
	const char *p = mt_data("hello.txt");
	CHECK_SYS(syscall(SYS_stat, p, &a));
	CHECK_SYS(syscall(SYS_lstat, p, &b));
	int fd = CHECK_SYS(open(p, O_RDONLY));
	CHECK_SYS(syscall(SYS_fstat, fd, &c));
	CHECK_SYS(syscall(SYS_newfstatat, AT_FDCWD, p, &d, 0));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_ino, c.st_ino);
	CHECK_EQ(a.st_ino, d.st_ino);
	CHECK_EQ(a.st_size, 11);
	CHECK(S_ISREG(a.st_mode));
	CHECK_EQ(a.st_nlink, 1);
	CHECK_EQ(a.st_dev, c.st_dev);
	CHECK_GE(a.st_blksize, 512);
}

static void stat_symlink_vs_lstat(void)
{
	struct stat s, l;
	const char *p = mt_data("link_to_hello");
	CHECK_SYS(syscall(SYS_stat, p, &s));
	CHECK_SYS(syscall(SYS_lstat, p, &l));
	CHECK(S_ISREG(s.st_mode));
	CHECK(S_ISLNK(l.st_mode));
	CHECK_EQ(l.st_size, 9); /* strlen("hello.txt") */
	CHECK_NE(s.st_ino, l.st_ino);
	struct stat n;
	CHECK_SYS(syscall(SYS_newfstatat, AT_FDCWD, p, &n, AT_SYMLINK_NOFOLLOW));
	CHECK_EQ(n.st_ino, l.st_ino);
}

static void stat_errors(void)
{
	struct stat s;
	CHECK_ERR(syscall(SYS_stat, "/nonexistent", &s), ENOENT);
	CHECK_ERR(syscall(SYS_stat, "", &s), ENOENT);
	CHECK_ERR(syscall(SYS_stat, NULL, &s), EFAULT);
	CHECK_ERR(syscall(SYS_stat, "/", (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_stat, "/etc/passwd/x", &s), ENOTDIR);
	CHECK_ERR(syscall(SYS_stat, mt_data("loop_a"), &s), ELOOP);
	CHECK_SYS(syscall(SYS_lstat, mt_data("loop_a"), &s));
	char longname[NAME_MAX + 10];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = 0;
	CHECK_ERR(syscall(SYS_stat, longname, &s), ENAMETOOLONG);
	static char longpath[PATH_MAX + 10];
	memset(longpath, '/', sizeof(longpath) - 1);
	CHECK_ERR(syscall(SYS_stat, longpath, &s), ENAMETOOLONG);
	CHECK_ERR(syscall(SYS_fstat, -1, &s), EBADF);
}

static void fstatat_flags_and_dirfd(void)
{
	struct stat s;
	int d = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	CHECK_SYS(syscall(SYS_newfstatat, d, "hello.txt", &s, 0));
	CHECK_EQ(s.st_size, 11);
	CHECK_ERR(syscall(SYS_newfstatat, d, "hello.txt", &s, 0x1), EINVAL);
	CHECK_ERR(syscall(SYS_newfstatat, 999, "hello.txt", &s, 0), EBADF);
	/* An absolute path ignores a bad dirfd. */
	CHECK_SYS(syscall(SYS_newfstatat, 999, "/", &s, 0));
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(syscall(SYS_newfstatat, f, "x", &s, 0), ENOTDIR);
	/* AT_EMPTY_PATH stats the descriptor itself. */
	CHECK_SYS(syscall(SYS_newfstatat, f, "", &s, AT_EMPTY_PATH));
	CHECK_EQ(s.st_size, 11);
	CHECK_ERR(syscall(SYS_newfstatat, f, "", &s, 0), ENOENT);
	/* ... also for O_PATH descriptors. */
	int o = CHECK_SYS(open(mt_data("link_to_hello"), O_PATH | O_NOFOLLOW));
	CHECK_SYS(syscall(SYS_newfstatat, o, "", &s, AT_EMPTY_PATH));
	CHECK(S_ISLNK(s.st_mode));
}

static void statx_masks_and_flags(void)
{
	struct statx sx;
	memset(&sx, 0xff, sizeof(sx));
	CHECK_SYS(statx(AT_FDCWD, mt_data("hello.txt"), 0, STATX_BASIC_STATS, &sx));
	CHECK_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
	CHECK_EQ(sx.stx_size, 11);
	CHECK(S_ISREG(sx.stx_mode));
	CHECK_GE(sx.stx_blksize, 512);
	/* Unknown flags, and the reserved mask bit, are EINVAL. */
	CHECK_ERR(statx(AT_FDCWD, "/", 0x80000000, STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_ERR(statx(AT_FDCWD, "/", 0, 0x80000000U, &sx), EINVAL);
	/* Both sync flags at once. */
	CHECK_ERR(statx(AT_FDCWD, "/", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx), EINVAL);
	CHECK_SYS(statx(AT_FDCWD, "/", AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx));
	CHECK(S_ISDIR(sx.stx_mode));
	CHECK_SYS(statx(AT_FDCWD, mt_data("link_to_hello"), AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx));
	CHECK(S_ISLNK(sx.stx_mode));
	CHECK_ERR(statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, (void *)1), EFAULT);
	CHECK_ERR(statx(AT_FDCWD, "/nonexistent", 0, STATX_BASIC_STATS, &sx), ENOENT);
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_SYS(statx(f, "", AT_EMPTY_PATH, STATX_SIZE, &sx));
	CHECK_EQ(sx.stx_size, 11);
}

static void access_modes_and_flags(void)
{
	CHECK_SYS(access("/", R_OK | X_OK));
	CHECK_SYS(access(mt_data("hello.txt"), F_OK));
	CHECK_SYS(access(mt_data("script.sh"), X_OK));
	/* Root is refused X_OK on a file without any execute bit. */
	CHECK_ERR(access(mt_data("hello.txt"), X_OK), EACCES);
	CHECK_ERR(access(mt_data("hello.txt"), 8), EINVAL);
	CHECK_ERR(access("/nonexistent", F_OK), ENOENT);
	CHECK_ERR(access(mt_data("loop_a"), F_OK), ELOOP);
	CHECK_ERR(access(NULL, F_OK), EFAULT);
	CHECK_ERR(faccessat(AT_FDCWD, "/", R_OK, 0x1), EINVAL);
	CHECK_SYS(syscall(SYS_faccessat, AT_FDCWD, "/", R_OK));
	/* faccessat2 takes flags. */
	CHECK_SYS(syscall(SYS_faccessat2, AT_FDCWD, mt_data("loop_a"), F_OK, AT_SYMLINK_NOFOLLOW));
	CHECK_SYS(syscall(SYS_faccessat2, AT_FDCWD, "/", R_OK, AT_EACCESS));
	CHECK_ERR(syscall(SYS_faccessat2, AT_FDCWD, "/", R_OK, 0x1), EINVAL);
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_SYS(syscall(SYS_faccessat2, f, "", R_OK, AT_EMPTY_PATH));
}

static void access_unprivileged(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		/* /etc/shadow is not readable by others. */
		CHILD_CHECK(access("/etc/shadow", R_OK) == -1 && errno == EACCES);
		CHILD_CHECK(access(mt_data("hello.txt"), R_OK) == 0);
		/* EROFS when data/ sits on the read-only root (Linux checks
		 * that first), EACCES when it is on a writable mount. */
		CHILD_CHECK(access(mt_data("hello.txt"), W_OK) == -1 && (errno == EACCES || errno == EROFS));
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void access_uses_real_ids(void)
{
	/* access checks with the real uid; AT_EACCESS with the effective. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setresuid(1000, 0, 0) == 0);
		CHILD_CHECK(access("/etc/shadow", R_OK) == -1 && errno == EACCES);
		CHILD_CHECK(faccessat(AT_FDCWD, "/etc/shadow", R_OK, AT_EACCESS) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void readlink_buffer_rules(void)
{
	char buf[64];
	memset(buf, 'X', sizeof(buf));
	ssize_t n = CHECK_SYS(readlink(mt_data("link_to_hello"), buf, sizeof(buf)));
	CHECK_EQ(n, 9);
	CHECK_MEMEQ(buf, "hello.txt", 9);
	/* No terminating NUL is written. */
	CHECK_EQ(buf[9], 'X');
	/* A short buffer truncates silently. */
	CHECK_EQ(readlink(mt_data("link_to_hello"), buf, 3), 3);
	CHECK_MEMEQ(buf, "hel", 3);
	CHECK_ERR(readlink(mt_data("link_to_hello"), buf, 0), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, mt_data("link_to_hello"), buf, -1), EINVAL);
	CHECK_ERR(readlink(mt_data("hello.txt"), buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlink("/nonexistent", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlink(mt_data("link_to_hello"), (void *)1, sizeof(buf)), EFAULT);
}

static void readlinkat_forms(void)
{
	char buf[64];
	int d = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	CHECK_EQ(readlinkat(d, "abs_link_to_passwd", buf, sizeof(buf)), 11);
	CHECK_MEMEQ(buf, "/etc/passwd", 11);
	/* An empty path reads an O_PATH|O_NOFOLLOW descriptor's link. */
	int o = CHECK_SYS(open(mt_data("link_to_hello"), O_PATH | O_NOFOLLOW));
	CHECK_EQ(readlinkat(o, "", buf, sizeof(buf)), 9);
	CHECK_ERR(readlinkat(d, "", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlinkat(999, "x", buf, sizeof(buf)), EBADF);
}

static void getcwd_rules(void)
{
	char buf[PATH_MAX];
	CHECK_SYS(chdir(mt_data("dir")));
	long n = CHECK_SYS(syscall(SYS_getcwd, buf, sizeof(buf)));
	/* The raw syscall returns the length including the NUL. */
	CHECK_EQ(n, (long)strlen(buf) + 1);
	CHECK(strstr(buf, "/data/dir") != NULL);
	CHECK_ERR(syscall(SYS_getcwd, buf, 3), ERANGE);
	CHECK_ERR(syscall(SYS_getcwd, buf, 0), ERANGE);
	CHECK_ERR(syscall(SYS_getcwd, buf, n - 1), ERANGE);
	CHECK_EQ(syscall(SYS_getcwd, buf, n), n);
	CHECK_ERR(syscall(SYS_getcwd, (void *)1, sizeof(buf)), EFAULT);
}

static void chdir_rules(void)
{
	CHECK_ERR(chdir("/nonexistent"), ENOENT);
	CHECK_ERR(chdir(mt_data("hello.txt")), ENOTDIR);
	CHECK_ERR(chdir(""), ENOENT);
	CHECK_ERR(chdir(NULL), EFAULT);
	CHECK_SYS(chdir(mt_data("dir")));
	CHECK_SYS(chdir(".."));
	char buf[PATH_MAX];
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK(strlen(buf) >= 5 && strcmp(buf + strlen(buf) - 5, "/data") == 0);
	/* .. of / is /. */
	CHECK_SYS(chdir("/"));
	CHECK_SYS(chdir(".."));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/");
	/* chdir through a symlink resolves it. */
	CHECK_SYS(chdir("/proc/self/cwd"));
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/");
}

static void fchdir_rules(void)
{
	int d = CHECK_SYS(open(mt_data("dir"), O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fchdir(d));
	struct stat a, b;
	CHECK_SYS(stat(".", &a));
	CHECK_SYS(fstat(d, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(fchdir(f), ENOTDIR);
	CHECK_ERR(fchdir(-1), EBADF);
	/* An O_PATH directory descriptor works. */
	int o = CHECK_SYS(open("/", O_PATH));
	CHECK_SYS(fchdir(o));
	char buf[8];
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/");
}

static void chdir_unprivileged_needs_search(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		/* /root is 0700 on Debian. */
		struct stat s;
		if (stat("/root", &s) == 0 && (s.st_mode & 0001) == 0)
			CHILD_CHECK(chdir("/root") == -1 && errno == EACCES);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void getdents64_fault_keeps_position(void)
{
	int d = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	char buf[8192];
	CHECK_ERR(syscall(SYS_getdents64, d, (void *)1, sizeof(buf)), EFAULT);
	/* Nothing was consumed by the failed call: the listing matches a
	 * fresh descriptor's. */
	long n = CHECK_SYS(syscall(SYS_getdents64, d, buf, sizeof(buf)));
	CHECK_GT(n, 0);
	int d2 = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	char buf2[8192];
	long n2 = CHECK_SYS(syscall(SYS_getdents64, d2, buf2, sizeof(buf2)));
	CHECK_EQ(n, n2);
	struct dirent64 *e = (void *)buf, *e2 = (void *)buf2;
	CHECK_STREQ(e->d_name, e2->d_name);
}

static void getdents64_buffer_rules(void)
{
	int d = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	char buf[8192];
	/* Too small for one entry: EINVAL. */
	CHECK_ERR(syscall(SYS_getdents64, d, buf, 10), EINVAL);
	CHECK_ERR(syscall(SYS_getdents64, d, (void *)1, sizeof(buf)), EFAULT);
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(syscall(SYS_getdents64, f, buf, sizeof(buf)), ENOTDIR);
	CHECK_ERR(syscall(SYS_getdents64, 999, buf, sizeof(buf)), EBADF);
	/* Reading one entry at a time gives the same set as all at once. */
	int count_small = 0, count_big = 0;
	long n;
	while ((n = syscall(SYS_getdents64, d, buf, 32)) > 0 || (n == -1 && errno == EINVAL)) {
		if (n == -1) {
			/* A long name needs more than 32 bytes. */
			n = syscall(SYS_getdents64, d, buf, 64);
			if (n <= 0)
				break;
		}
		for (long off = 0; off < n;) {
			struct dirent64 *e = (void *)(buf + off);
			count_small++;
			off += e->d_reclen;
		}
	}
	CHECK_EQ(n, 0);
	CHECK_SYS(lseek(d, 0, SEEK_SET));
	while ((n = syscall(SYS_getdents64, d, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *e = (void *)(buf + off);
			count_big++;
			off += e->d_reclen;
		}
	}
	CHECK_EQ(count_small, count_big);
	CHECK_GE(count_big, 12);
}

struct linux_dirent {
	unsigned long d_ino;
	unsigned long d_off;
	unsigned short d_reclen;
	char d_name[];
};

static void getdents_legacy_type_byte(void)
{
	int d = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	char buf[8192];
	CHECK_ERR(syscall(SYS_getdents, d, buf, 5), EINVAL);
	long n = CHECK_SYS(syscall(SYS_getdents, d, buf, sizeof(buf)));
	int seen_link = 0, seen_dir = 0;
	for (long off = 0; off < n;) {
		struct linux_dirent *e = (void *)(buf + off);
		/* The type is the last byte of the record. */
		char type = buf[off + e->d_reclen - 1];
		if (strcmp(e->d_name, "link_to_hello") == 0)
			seen_link = (type == DT_LNK);
		if (strcmp(e->d_name, "dir") == 0)
			seen_dir = (type == DT_DIR);
		off += e->d_reclen;
	}
	CHECK(seen_link);
	CHECK(seen_dir);
}

static const struct mt_case cases[] = {
	MT_CASE(stat_family_agree),
	MT_CASE(stat_symlink_vs_lstat),
	MT_CASE(stat_errors),
	MT_CASE(fstatat_flags_and_dirfd),
	MT_CASE(statx_masks_and_flags),
	MT_CASE(access_modes_and_flags),
	MT_CASE(access_unprivileged),
	MT_CASE(access_uses_real_ids),
	MT_CASE(readlink_buffer_rules),
	MT_CASE(readlinkat_forms),
	MT_CASE(getcwd_rules),
	MT_CASE(chdir_rules),
	MT_CASE(fchdir_rules),
	MT_CASE(chdir_unprivileged_needs_search),
	MT_CASE(getdents64_fault_keeps_position),
	MT_CASE(getdents64_buffer_rules),
	MT_CASE(getdents_legacy_type_byte),
};

MT_MAIN(cases)
