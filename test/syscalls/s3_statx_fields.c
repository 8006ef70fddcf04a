//go:build ignore

/* s3_statx_fields: statx compared with fstatat field by field for each
 * node type (regular file, directory, symlink, FIFO, socket, character
 * device, memfd, pipe, O_PATH descriptor): mode, ino, nlink, ids, size,
 * blocks, times, dev and rdev split into major and minor; the returned
 * mask covering the basic fields, STATX_MNT_ID matching the mount's id in
 * /proc/self/mountinfo, directory link counts, and unknown mask bits
 * ignored. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif

/* agree fails the case unless statx and fstatat describe the same node. */
#define AGREE(dfd, path, flags)                                                       \
	do {                                                                          \
		struct stat st;                                                       \
		struct statx sx;                                                      \
		CHECK_SYS(fstatat(dfd, path, &st, flags));                            \
		CHECK_SYS(statx(dfd, path, flags, STATX_BASIC_STATS, &sx));           \
		CHECK_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);         \
		CHECK_EQ(sx.stx_mode, st.st_mode);                                    \
		CHECK_EQ(sx.stx_ino, st.st_ino);                                      \
		CHECK_EQ(sx.stx_nlink, st.st_nlink);                                  \
		CHECK_EQ(sx.stx_uid, st.st_uid);                                      \
		CHECK_EQ(sx.stx_gid, st.st_gid);                                      \
		CHECK_EQ(sx.stx_size, st.st_size);                                    \
		CHECK_EQ(sx.stx_blocks, st.st_blocks);                                \
		CHECK_EQ(sx.stx_blksize, st.st_blksize);                              \
		CHECK_EQ(makedev(sx.stx_dev_major, sx.stx_dev_minor), st.st_dev);     \
		CHECK_EQ(makedev(sx.stx_rdev_major, sx.stx_rdev_minor), st.st_rdev);  \
		CHECK_EQ(sx.stx_mtime.tv_sec, st.st_mtim.tv_sec);                     \
		CHECK_EQ(sx.stx_mtime.tv_nsec, st.st_mtim.tv_nsec);                   \
		CHECK_EQ(sx.stx_atime.tv_sec, st.st_atim.tv_sec);                     \
		CHECK_EQ(sx.stx_ctime.tv_sec, st.st_ctim.tv_sec);                     \
		CHECK_EQ(sx.stx_ctime.tv_nsec, st.st_ctim.tv_nsec);                   \
	} while (0)

static void regular_and_directory(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0640));
	CHECK_EQ(write(fd, "12345", 5), 5);
	CHECK_SYS(mkdir("d", 0751));
	AGREE(AT_FDCWD, "f", 0);
	AGREE(AT_FDCWD, "d", 0);
	AGREE(AT_FDCWD, ".", 0);
}

static void symlink_fifo_socket(void)
{
	ENTER();
	CHECK_SYS(symlink("target-name", "l"));
	CHECK_SYS(mkfifo("p", 0600));
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "s"};
	CHECK_SYS(bind(s, (struct sockaddr *)&a, sizeof a));
	AGREE(AT_FDCWD, "l", AT_SYMLINK_NOFOLLOW);
	AGREE(AT_FDCWD, "p", 0);
	AGREE(AT_FDCWD, "s", 0);
	struct statx sx;
	CHECK_SYS(statx(AT_FDCWD, "l", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
	CHECK(S_ISLNK(sx.stx_mode));
	CHECK_EQ(sx.stx_size, 11);
}

static void character_devices(void)
{
	AGREE(AT_FDCWD, "/dev/null", 0);
	AGREE(AT_FDCWD, "/dev/zero", 0);
	struct statx sx;
	CHECK_SYS(statx(AT_FDCWD, "/dev/null", 0, STATX_BASIC_STATS, &sx));
	CHECK_EQ(sx.stx_rdev_major, 1);
	CHECK_EQ(sx.stx_rdev_minor, 3);
	CHECK(S_ISCHR(sx.stx_mode));
}

static void descriptors_by_empty_path(void)
{
	int m = CHECK_SYS(memfd_create("sx", 0));
	CHECK_EQ(write(m, "abc", 3), 3);
	AGREE(m, "", AT_EMPTY_PATH);
	int p[2];
	CHECK_SYS(pipe(p));
	AGREE(p[0], "", AT_EMPTY_PATH);
	int o = CHECK_SYS(open("/dev/null", O_PATH));
	AGREE(o, "", AT_EMPTY_PATH);
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	AGREE(sv[0], "", AT_EMPTY_PATH);
}

static void read_only_root_files(void)
{
	AGREE(AT_FDCWD, "/etc/passwd", 0);
	AGREE(AT_FDCWD, "/", 0);
	AGREE(AT_FDCWD, mt_data("hello.txt"), 0);
	AGREE(AT_FDCWD, mt_data("link_to_hello"), AT_SYMLINK_NOFOLLOW);
}

static void directory_link_counts(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	struct statx sx;
	CHECK_SYS(statx(AT_FDCWD, "d", 0, STATX_NLINK, &sx));
	CHECK_EQ(sx.stx_nlink, 2);
	CHECK_SYS(mkdir("d/a", 0755));
	CHECK_SYS(mkdir("d/b", 0755));
	CHECK_SYS(close(CHECK_SYS(open("d/file", O_CREAT | O_WRONLY, 0644))));
	/* Each subdirectory's ".." is a link; files are not. */
	CHECK_SYS(statx(AT_FDCWD, "d", 0, STATX_NLINK, &sx));
	CHECK_EQ(sx.stx_nlink, 4);
	CHECK_SYS(rmdir("d/a"));
	CHECK_SYS(statx(AT_FDCWD, "d", 0, STATX_NLINK, &sx));
	CHECK_EQ(sx.stx_nlink, 3);
}

/* mount_id_of returns the mount id mountinfo lists for mount point mp. */
static long mount_id_of(const char *mp)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -1;
	char line[1024];
	long id = -1;
	while (fgets(line, sizeof line, f)) {
		long mid, parent;
		unsigned ma, mi;
		char root[512], point[512];
		if (sscanf(line, "%ld %ld %u:%u %511s %511s", &mid, &parent, &ma, &mi, root, point) == 6 &&
		    strcmp(point, mp) == 0)
			id = mid;
	}
	fclose(f);
	return id;
}

static void mount_id_matches_mountinfo(void)
{
	struct statx sx;
	CHECK_SYS(statx(AT_FDCWD, "/dev/shm", 0, STATX_MNT_ID, &sx));
	if (!(sx.stx_mask & STATX_MNT_ID))
		SKIP("no STATX_MNT_ID");
	long want = mount_id_of("/dev/shm");
	CHECK_GT(want, 0);
	CHECK_EQ((long)sx.stx_mnt_id, want);
	CHECK_SYS(statx(AT_FDCWD, "/proc/self", 0, STATX_MNT_ID, &sx));
	CHECK_EQ((long)sx.stx_mnt_id, mount_id_of("/proc"));
}

static void unknown_mask_bits_ignored(void)
{
	struct statx sx;
	memset(&sx, 0xff, sizeof sx);
	/* Bits the kernel does not know (short of STATX__RESERVED) are
	 * ignored; the answer says what was filled. */
	CHECK_SYS(statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS | 0x40000000U, &sx));
	CHECK_EQ(sx.stx_mask & 0x40000000U, 0);
	CHECK_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
	/* A zero mask still fills the basic fields the file system has. */
	memset(&sx, 0, sizeof sx);
	CHECK_SYS(statx(AT_FDCWD, "/", 0, 0, &sx));
	CHECK(S_ISDIR(sx.stx_mode));
}

static const struct mt_case cases[] = {
	MT_CASE(regular_and_directory),
	MT_CASE(symlink_fifo_socket),
	MT_CASE(character_devices),
	MT_CASE(descriptors_by_empty_path),
	MT_CASE(read_only_root_files),
	MT_CASE(directory_link_counts),
	MT_CASE(mount_id_matches_mountinfo),
	MT_CASE(unknown_mask_bits_ignored),
};

MT_MAIN(cases)
