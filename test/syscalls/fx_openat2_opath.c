//go:build ignore

/* fx_openat2_opath: openat2(2) argument checks and the RESOLVE_* flags
 * (BENEATH, IN_ROOT, NO_SYMLINKS, NO_MAGICLINKS, NO_XDEV) on a /dev/shm
 * tree, and what an O_PATH descriptor may and may not do (I/O and
 * metadata changes refused with EBADF, fstat, fchdir, *at bases,
 * reopening through /proc/self/fd, symlink descriptors). */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

static char root[256];

/* make_tree builds root/{f, sub/g, up -> ../f... } and returns a dirfd:
 *   root/f            "F"
 *   root/sub/g        "G"
 *   root/rel  -> sub/g
 *   root/abs  -> /f
 *   root/dotdot -> ../..
 *   root/sub/back -> ../f  */
static int make_tree(const char *name)
{
	snprintf(root, sizeof(root), "/dev/shm/tfiles-%s-%d", name, (int)getpid());
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	mkdir(root, 0755);
	char p[400];
#define MK(rel, how)                                                   \
	snprintf(p, sizeof(p), "%s/%s", root, rel);                    \
	if (how < 0) {                                                 \
		mt_fail(__FILE__, __LINE__, "make %s: %s", p,          \
			mt_errname(errno));                            \
		return -1;                                             \
	}
	snprintf(p, sizeof(p), "%s/sub", root);
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		mt_fail(__FILE__, __LINE__, "mkdir %s: %s", p, mt_errname(errno));
		return -1;
	}
	int fd;
	MK("f", (fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644)));
	if (write(fd, "F", 1) != 1)
		return -1;
	close(fd);
	MK("sub/g", (fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644)));
	if (write(fd, "G", 1) != 1)
		return -1;
	close(fd);
	unlink(strcat(strcpy(cmd, root), "/rel"));
	MK("rel", symlink("sub/g", p));
	unlink(strcat(strcpy(cmd, root), "/abs"));
	MK("abs", symlink("/f", p));
	unlink(strcat(strcpy(cmd, root), "/dotdot"));
	MK("dotdot", symlink("../..", p));
	unlink(strcat(strcpy(cmd, root), "/sub/back"));
	MK("sub/back", symlink("../f", p));
	int d = open(root, O_RDONLY | O_DIRECTORY);
	if (d < 0)
		mt_fail(__FILE__, __LINE__, "open %s: %s", root, mt_errname(errno));
	return d;
}

#define TREE(d)                               \
	int d = make_tree(__func__);          \
	MT_BAIL()

static long o2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = flags, .mode = mode, .resolve = resolve };
	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* read1 reads the one-byte content of fd. */
static char read1(int fd)
{
	char c = 0;
	if (read(fd, &c, 1) != 1)
		return '?';
	return c;
}

static void openat2_argument_checks(void)
{
	TREE(d);
	struct open_how how[2];
	memset(how, 0, sizeof(how));
	how[0].flags = O_RDONLY;
	CHECK_ERR(syscall(SYS_openat2, d, "f", &how[0], 8), EINVAL);
	CHECK_ERR(syscall(SYS_openat2, d, "f", &how[0], 0), EINVAL);
	/* A larger struct is fine when the extra bytes are zero... */
	int fd = CHECK_SYS(syscall(SYS_openat2, d, "f", &how[0], sizeof(how)));
	CHECK_EQ(read1(fd), 'F');
	/* ...and E2BIG otherwise. */
	((char *)&how[1])[3] = 1;
	CHECK_ERR(syscall(SYS_openat2, d, "f", &how[0], sizeof(how)), E2BIG);
	CHECK_ERR(syscall(SYS_openat2, d, "f", NULL, sizeof(how[0])), EFAULT);
	/* Unknown open flags, unknown resolve bits, a mode without O_CREAT. */
	CHECK_ERR(o2(d, "f", 1ULL << 40, 0, 0), EINVAL);
	CHECK_ERR(o2(d, "f", O_RDONLY, 0, 1ULL << 40), EINVAL);
	CHECK_ERR(o2(d, "f", O_RDONLY, 0644, 0), EINVAL);
	CHECK_ERR(o2(d, "new", O_CREAT | O_WRONLY, 010000, 0), EINVAL);
	CHECK_ERR(o2(d, "f", O_RDONLY, 0, RESOLVE_BENEATH | RESOLVE_IN_ROOT), EINVAL);
	fd = CHECK_SYS(o2(d, "new", O_CREAT | O_WRONLY | O_EXCL, 0600, 0));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0600);
}

static void resolve_beneath(void)
{
	TREE(d);
	int fd = CHECK_SYS(o2(d, "rel", O_RDONLY, 0, RESOLVE_BENEATH));
	CHECK_EQ(read1(fd), 'G');
	fd = CHECK_SYS(o2(d, "sub/../f", O_RDONLY, 0, RESOLVE_BENEATH));
	CHECK_EQ(read1(fd), 'F');
	fd = CHECK_SYS(o2(d, "sub/back", O_RDONLY, 0, RESOLVE_BENEATH));
	CHECK_EQ(read1(fd), 'F');
	CHECK_ERR(o2(d, "..", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
	CHECK_ERR(o2(d, "sub/../../x", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
	CHECK_ERR(o2(d, "/dev/shm", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
	CHECK_ERR(o2(d, "abs", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
	CHECK_ERR(o2(d, "dotdot", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
	/* Without the flag the same paths resolve. */
	fd = CHECK_SYS(o2(d, "..", O_RDONLY, 0, 0));
	CHECK_ERR(o2(d, "abs", O_RDONLY, 0, 0), ENOENT);
}

static void resolve_in_root(void)
{
	TREE(d);
	/* ".." is clamped to the dirfd. */
	int fd = CHECK_SYS(o2(d, "../../../f", O_RDONLY, 0, RESOLVE_IN_ROOT));
	CHECK_EQ(read1(fd), 'F');
	fd = CHECK_SYS(o2(d, "abs", O_RDONLY, 0, RESOLVE_IN_ROOT));
	CHECK_EQ(read1(fd), 'F');
	fd = CHECK_SYS(o2(d, "dotdot/sub/g", O_RDONLY, 0, RESOLVE_IN_ROOT));
	CHECK_EQ(read1(fd), 'G');
	/* The root itself through "..": a directory. */
	fd = CHECK_SYS(o2(d, "..", O_RDONLY | O_DIRECTORY, 0, RESOLVE_IN_ROOT));
	struct stat a, b;
	CHECK_SYS(fstat(fd, &a));
	CHECK_SYS(fstat(d, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	/* A leading "/" starts at the dirfd too: nothing outside is named. */
	fd = CHECK_SYS(o2(d, "/f", O_RDONLY, 0, RESOLVE_IN_ROOT));
	CHECK_EQ(read1(fd), 'F');
	CHECK_ERR(o2(d, "/etc/passwd", O_RDONLY, 0, RESOLVE_IN_ROOT), ENOENT);
}

static void resolve_no_symlinks(void)
{
	TREE(d);
	CHECK_ERR(o2(d, "rel", O_RDONLY, 0, RESOLVE_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(d, "dotdot/f", O_RDONLY, 0, RESOLVE_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(d, "sub/back", O_RDONLY, 0, RESOLVE_NO_SYMLINKS), ELOOP);
	int fd = CHECK_SYS(o2(d, "sub/g", O_RDONLY, 0, RESOLVE_NO_SYMLINKS));
	CHECK_EQ(read1(fd), 'G');
	/* O_NOFOLLOW alone: a trailing symlink is ELOOP, an O_PATH open
	 * gets the link itself. */
	CHECK_ERR(o2(d, "rel", O_RDONLY | O_NOFOLLOW, 0, 0), ELOOP);
	fd = CHECK_SYS(o2(d, "rel", O_PATH | O_NOFOLLOW, 0, 0));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK(S_ISLNK(st.st_mode));
}

static void resolve_no_magiclinks(void)
{
	TREE(d);
	int f = CHECK_SYS(openat(d, "f", O_RDONLY));
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", f);
	int fd = CHECK_SYS(o2(AT_FDCWD, p, O_RDONLY, 0, 0));
	CHECK_EQ(read1(fd), 'F');
	CHECK_ERR(o2(AT_FDCWD, p, O_RDONLY, 0, RESOLVE_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, "/proc/self/exe", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, p, O_RDONLY, 0, RESOLVE_NO_SYMLINKS), ELOOP);
	/* Ordinary symlinks are still followed. */
	fd = CHECK_SYS(o2(d, "rel", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS));
	CHECK_EQ(read1(fd), 'G');
}

static void resolve_no_xdev(void)
{
	TREE(d);
	int fd = CHECK_SYS(o2(d, "sub/g", O_RDONLY, 0, RESOLVE_NO_XDEV));
	CHECK_EQ(read1(fd), 'G');
	/* /dev/shm is a mount of its own: stepping out of it (or into it
	 * from outside) crosses a mount. */
	struct stat shm, dev;
	CHECK_SYS(stat("/dev/shm", &shm));
	CHECK_SYS(stat("/dev", &dev));
	if (shm.st_dev == dev.st_dev)
		SKIP("/dev/shm is not a separate mount");
	CHECK_ERR(o2(d, "../..", O_RDONLY, 0, RESOLVE_NO_XDEV), EXDEV);
	CHECK_ERR(o2(AT_FDCWD, "/dev/shm", O_RDONLY, 0, RESOLVE_NO_XDEV), EXDEV);
	int dv = CHECK_SYS(open("/dev", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(o2(dv, "shm", O_RDONLY, 0, RESOLVE_NO_XDEV), EXDEV);
	fd = CHECK_SYS(o2(d, "..", O_RDONLY, 0, RESOLVE_NO_XDEV));
}

static void opath_refuses_io(void)
{
	TREE(d);
	int fd = CHECK_SYS(openat(d, "f", O_PATH | O_RDWR));
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_PATH | O_ACCMODE), O_PATH);
	char c;
	CHECK_ERR(read(fd, &c, 1), EBADF);
	CHECK_ERR(write(fd, "x", 1), EBADF);
	CHECK_ERR(pread(fd, &c, 1, 0), EBADF);
	CHECK_ERR(lseek(fd, 0, SEEK_SET), EBADF);
	CHECK_ERR(ftruncate(fd, 0), EBADF);
	CHECK_ERR(fchmod(fd, 0600), EBADF);
	CHECK_ERR(fchown(fd, 0, 0), EBADF);
	CHECK_ERR(ioctl(fd, FIONREAD, &c), EBADF);
	CHECK_ERR(fgetxattr(fd, "user.x", &c, 1), EBADF);
	CHECK_ERR(fsync(fd), EBADF);
	CHECK_ERR(fcntl(fd, F_SETLK, &(struct flock){ .l_type = F_RDLCK }), EBADF);
	/* mmap needs file operations too. */
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EBADF);
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EBADF);
	/* fstat, dup and fcntl flags work. */
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 1);
	int d2 = CHECK_SYS(dup(fd));
	CHECK_SYS(fcntl(d2, F_SETFD, FD_CLOEXEC));
	CHECK_EQ(fcntl(d2, F_GETFD), FD_CLOEXEC);
}

static void opath_as_base_and_reopen(void)
{
	TREE(d);
	int dp = CHECK_SYS(openat(d, "sub", O_PATH | O_DIRECTORY));
	/* As a directory base for *at calls and for fchdir. */
	int fd = CHECK_SYS(openat(dp, "g", O_RDONLY));
	CHECK_EQ(read1(fd), 'G');
	struct stat st;
	CHECK_SYS(fstatat(dp, "g", &st, 0));
	CHECK_SYS(fchdir(dp));
	fd = CHECK_SYS(open("g", O_RDONLY));
	CHECK_EQ(read1(fd), 'G');
	/* But it cannot list the directory. */
	char buf[256];
	CHECK_ERR(syscall(SYS_getdents64, dp, buf, sizeof(buf)), EBADF);
	/* Reopening through /proc/self/fd gives a real descriptor. */
	int fp = CHECK_SYS(openat(d, "f", O_PATH));
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fp);
	fd = CHECK_SYS(open(p, O_RDONLY));
	CHECK_EQ(read1(fd), 'F');
	/* A file O_PATH descriptor is no directory base. */
	CHECK_ERR(openat(fp, "x", O_RDONLY), ENOTDIR);
	/* AT_EMPTY_PATH on the O_PATH descriptor. */
	CHECK_SYS(fstatat(fp, "", &st, AT_EMPTY_PATH));
	CHECK_EQ(st.st_size, 1);
	CHECK_ERR(fstatat(fp, "", &st, 0), ENOENT);
}

static void opath_symlink_descriptor(void)
{
	TREE(d);
	int l = CHECK_SYS(openat(d, "rel", O_PATH | O_NOFOLLOW));
	char buf[64];
	/* readlinkat with an empty path reads the link itself. */
	long n = CHECK_SYS(readlinkat(l, "", buf, sizeof(buf)));
	CHECK_EQ(n, 5);
	CHECK_MEMEQ(buf, "sub/g", 5);
	struct stat st;
	CHECK_SYS(fstatat(l, "", &st, AT_EMPTY_PATH));
	CHECK(S_ISLNK(st.st_mode));
	/* fchownat AT_EMPTY_PATH changes the link, not its target. */
	CHECK_SYS(fchownat(l, "", 1234, 1234, AT_EMPTY_PATH));
	CHECK_SYS(fstatat(l, "", &st, AT_EMPTY_PATH));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_SYS(fstatat(d, "sub/g", &st, 0));
	CHECK_EQ(st.st_uid, getuid());
	/* An empty path names the descriptor only for a link; a file
	 * is not a link (EINVAL), nor is a zero-sized buffer valid. */
	int f = CHECK_SYS(openat(d, "f", O_PATH));
	CHECK_ERR(readlinkat(f, "", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlinkat(d, "f", buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlinkat(d, "rel", buf, 0), EINVAL);
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* remove_trees deletes this run's trees when the program exits. */
__attribute__((destructor)) static void remove_trees(void)
{
	static const char *names[] = { "openat2_argument_checks", "resolve_beneath",
		"resolve_in_root", "resolve_no_symlinks", "resolve_no_magiclinks",
		"resolve_no_xdev", "opath_refuses_io", "opath_as_base_and_reopen",
		"opath_symlink_descriptor" };
	char p[256];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "/dev/shm/tfiles-%s-%d", names[i], (int)getpid());
		nftw(p, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	}
}

static const struct mt_case cases[] = {
	MT_CASE(openat2_argument_checks),
	MT_CASE(resolve_beneath),
	MT_CASE(resolve_in_root),
	MT_CASE(resolve_no_symlinks),
	MT_CASE(resolve_no_magiclinks),
	MT_CASE(resolve_no_xdev),
	MT_CASE(opath_refuses_io),
	MT_CASE(opath_as_base_and_reopen),
	MT_CASE(opath_symlink_descriptor),
};

MT_MAIN(cases)
