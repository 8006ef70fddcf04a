//go:build ignore

/* s2_sync: sync, syncfs, fsync, fdatasync and sync_file_range: success on
 * files and directories, and the errors for bad descriptors, files that
 * cannot be synced, bad ranges and bad flags. */
#include "moattest.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void sync_always_succeeds(void)
{
	sync();
	CHECK_EQ(syscall(SYS_sync), 0);
}

static void fsync_files_and_dirs(void)
{
	int fd = CHECK_SYS(memfd_create("s", 0));
	CHECK_EQ(write(fd, "x", 1), 1);
	CHECK_SYS(fsync(fd));
	CHECK_SYS(fdatasync(fd));
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(fsync(d));
	CHECK_SYS(fdatasync(d));
	/* A read-only descriptor may be synced too. */
	int r = CHECK_SYS(open("/proc/self/exe", O_RDONLY));
	CHECK_SYS(fsync(r));
}

static void fsync_bad_fd(void)
{
	CHECK_ERR(fsync(-1), EBADF);
	CHECK_ERR(fsync(9999), EBADF);
	CHECK_ERR(fdatasync(-1), EBADF);
	CHECK_ERR(syncfs(-1), EBADF);
	CHECK_ERR(syncfs(9999), EBADF);
	int p = CHECK_SYS(open("/", O_PATH));
	CHECK_ERR(fsync(p), EBADF);
	CHECK_ERR(fdatasync(p), EBADF);
}

static void fsync_pipes_and_sockets_einval(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(fsync(p[0]), EINVAL);
	CHECK_ERR(fdatasync(p[1]), EINVAL);
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	CHECK_ERR(fsync(s[0]), EINVAL);
}

static void syncfs_any_fd(void)
{
	int fd = CHECK_SYS(memfd_create("s", 0));
	CHECK_SYS(syncfs(fd));
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(syncfs(d));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(syncfs(p[0]));
}

static void sync_file_range_ok(void)
{
	int fd = CHECK_SYS(memfd_create("s", 0));
	CHECK_EQ(write(fd, "hello", 5), 5);
	CHECK_SYS(sync_file_range(fd, 0, 0, 0));
	CHECK_SYS(sync_file_range(fd, 0, 5, SYNC_FILE_RANGE_WRITE));
	CHECK_SYS(sync_file_range(fd, 1, 100,
				  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					  SYNC_FILE_RANGE_WAIT_AFTER));
}

static void sync_file_range_einval(void)
{
	int fd = CHECK_SYS(memfd_create("s", 0));
	CHECK_ERR(sync_file_range(fd, 0, 0, 8), EINVAL);
	CHECK_ERR(sync_file_range(fd, -1, 0, 0), EINVAL);
	CHECK_ERR(sync_file_range(fd, 0, -1, 0), EINVAL);
	CHECK_ERR(sync_file_range(fd, 0x7fffffffffffffffLL, 1, 0), EINVAL);
}

static void sync_file_range_bad_files(void)
{
	CHECK_ERR(sync_file_range(-1, 0, 0, 0), EBADF);
	CHECK_ERR(sync_file_range(9999, 0, 0, 0), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(sync_file_range(p[0], 0, 0, 0), ESPIPE);
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	/* Only pipes, sockets and character devices are ESPIPE: a directory
	 * is accepted. */
	CHECK_SYS(sync_file_range(d, 0, 0, 0));
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	CHECK_ERR(sync_file_range(s[0], 0, 0, 0), ESPIPE);
	int n = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK_ERR(sync_file_range(n, 0, 0, 0), ESPIPE);
}

static const struct mt_case cases[] = {
	MT_CASE(sync_always_succeeds),
	MT_CASE(fsync_files_and_dirs),
	MT_CASE(fsync_bad_fd),
	MT_CASE(fsync_pipes_and_sockets_einval),
	MT_CASE(syncfs_any_fd),
	MT_CASE(sync_file_range_ok),
	MT_CASE(sync_file_range_einval),
	MT_CASE(sync_file_range_bad_files),
};

MT_MAIN(cases)
