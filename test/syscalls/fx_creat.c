//go:build ignore

/* fx_creat: creat(2), open(O_CREAT | O_WRONLY | O_TRUNC) by another name:
 * modes under the umask, truncation of an existing file, the write-only
 * description it gives (flags, offset, close-on-exec), the lowest free
 * descriptor, through symlinks, and its errors (ENOENT, ENOTDIR, EISDIR,
 * EACCES, ENAMETOOLONG, EFAULT, EROFS, ELOOP). */
#include "moattest.h"

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_creat-%d", (int)getpid());
	nftw(p, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* scratch enters a fresh directory for the case under one per run. */
static int scratch(const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_creat-%d", (int)getpid());
	mkdir(p, 0777);
	snprintf(p, sizeof(p), "/dev/shm/moat-fx_creat-%d/%s", (int)getpid(), name);
	if (mkdir(p, 0777) < 0 || chdir(p) < 0) {
		mt_fail(__FILE__, __LINE__, "scratch %s: %s", p, mt_errname(errno));
		return -1;
	}
	return 0;
}

#define SCRATCH()                        \
	do {                             \
		if (scratch(__func__) < 0) \
			return;          \
	} while (0)

static void creates_with_mode_under_umask(void)
{
	SCRATCH();
	umask(022);
	int fd = CHECK_SYS(creat("f", 0777));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0755);
	CHECK_EQ(st.st_size, 0);
	umask(0);
	CHECK_SYS(creat("g", 0640));
	CHECK_SYS(stat("g", &st));
	CHECK_EQ(st.st_mode & 07777, 0640);
	/* Bits outside the permission and special bits are ignored. */
	CHECK_SYS(creat("h", S_IFDIR | 0600));
	CHECK_SYS(stat("h", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0600);
}

static void truncates_existing_file(void)
{
	SCRATCH();
	int fd = CHECK_SYS(open("f", O_RDWR | O_CREAT, 0600));
	CHECK_EQ(write(fd, "hello", 5), 5);
	close(fd);
	/* The mode of an existing file stays; its data goes. */
	fd = CHECK_SYS(creat("f", 0777));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_mode & 07777, 0600);
}

static void write_only_description(void)
{
	SCRATCH();
	int fd = CHECK_SYS(creat("f", 0600));
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND), O_WRONLY);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	char c;
	CHECK_ERR(read(fd, &c, 1), EBADF);
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);
	int r = CHECK_SYS(open("f", O_RDONLY));
	char b[4] = {0};
	CHECK_EQ(read(r, b, 3), 3);
	CHECK_STREQ(b, "abc");
}

static void lowest_free_descriptor(void)
{
	SCRATCH();
	int a = CHECK_SYS(creat("a", 0600));
	int b = CHECK_SYS(creat("b", 0600));
	CHECK_EQ(b, a + 1);
	close(a);
	CHECK_EQ(creat("c", 0600), a);
}

static void follows_symlinks(void)
{
	SCRATCH();
	/* A dangling symlink is followed and its target created. */
	CHECK_SYS(symlink("target", "link"));
	int fd = CHECK_SYS(creat("link", 0600));
	CHECK_EQ(write(fd, "x", 1), 1);
	struct stat st;
	CHECK_SYS(lstat("target", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 1);
	/* A link to an existing file truncates the file. */
	fd = CHECK_SYS(creat("link", 0600));
	CHECK_SYS(stat("target", &st));
	CHECK_EQ(st.st_size, 0);
	/* A loop of links is ELOOP. */
	CHECK_SYS(symlink("l2", "l1"));
	CHECK_SYS(symlink("l1", "l2"));
	CHECK_ERR(creat("l1", 0600), ELOOP);
}

static void missing_parent_enoent(void)
{
	SCRATCH();
	CHECK_ERR(creat("nodir/f", 0600), ENOENT);
	CHECK_ERR(creat("", 0600), ENOENT);
	/* A dangling link whose target's directory is missing. */
	CHECK_SYS(symlink("nodir/f", "dl"));
	CHECK_ERR(creat("dl", 0600), ENOENT);
}

static void file_as_directory_enotdir(void)
{
	SCRATCH();
	CHECK_SYS(creat("f", 0600));
	CHECK_ERR(creat("f/g", 0600), ENOTDIR);
	/* A trailing slash names a directory, which creat cannot make. */
	CHECK_ERR(creat("new/", 0600), EISDIR);
}

static void directory_eisdir(void)
{
	SCRATCH();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_ERR(creat("d", 0600), EISDIR);
	CHECK_ERR(creat(".", 0600), EISDIR);
}

static void unwritable_directory_eacces(void)
{
	SCRATCH();
	CHECK_SYS(mkdir("ro", 0555));
	CHECK_SYS(creat("ro-file", 0400));
	AS_USER({
		if (creat("ro/f", 0600) != -1 || errno != EACCES)
			_exit(1);
		/* An existing file without write permission. */
		if (creat("ro-file", 0600) != -1 || errno != EACCES)
			_exit(2);
	});
}

static void long_names_enametoolong(void)
{
	SCRATCH();
	char name[NAME_MAX + 2];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CHECK_ERR(creat(name, 0600), ENAMETOOLONG);
	name[NAME_MAX] = 0;
	CHECK_SYS(creat(name, 0600));
	static char path[PATH_MAX + 1];
	memset(path, 'b', PATH_MAX);
	path[PATH_MAX] = 0;
	CHECK_ERR(creat(path, 0600), ENAMETOOLONG);
}

static void bad_path_efault(void)
{
	CHECK_ERR(syscall(SYS_creat, (void *)1, 0600), EFAULT);
	CHECK_ERR(syscall(SYS_creat, NULL, 0600), EFAULT);
}

static void read_only_root_erofs(void)
{
	/* The root is mounted read-only in both runs. */
	CHECK_ERR(creat("/fx-creat-nope", 0600), EROFS);
	/* An existing file there would be truncated: EROFS too. */
	CHECK_ERR(creat(mt_data("hello.txt"), 0600), EROFS);
}

static void same_as_open_flags(void)
{
	SCRATCH();
	/* creat is open with O_CREAT | O_WRONLY | O_TRUNC: both see the
	 * same file afterwards. */
	int a = CHECK_SYS(creat("f", 0600));
	CHECK_EQ(write(a, "12345", 5), 5);
	int b = CHECK_SYS(open("f", O_CREAT | O_WRONLY | O_TRUNC, 0600));
	struct stat sa, sb;
	CHECK_SYS(fstat(a, &sa));
	CHECK_SYS(fstat(b, &sb));
	CHECK_EQ(sa.st_ino, sb.st_ino);
	CHECK_EQ(sb.st_size, 0);
	CHECK_EQ(fcntl(a, F_GETFL), fcntl(b, F_GETFL));
}

static const struct mt_case cases[] = {
	MT_CASE(creates_with_mode_under_umask),
	MT_CASE(truncates_existing_file),
	MT_CASE(write_only_description),
	MT_CASE(lowest_free_descriptor),
	MT_CASE(follows_symlinks),
	MT_CASE(missing_parent_enoent),
	MT_CASE(file_as_directory_enotdir),
	MT_CASE(directory_eisdir),
	MT_CASE(unwritable_directory_eacces),
	MT_CASE(long_names_enametoolong),
	MT_CASE(bad_path_efault),
	MT_CASE(read_only_root_erofs),
	MT_CASE(same_as_open_flags),
};

MT_MAIN(cases)
