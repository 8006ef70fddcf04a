//go:build ignore

/* s2_fdinfo: /proc/PID/fd and /proc/PID/fdinfo: positions and flags that
 * follow lseek and F_SETFL, per-kind lines (eventfd-count), link names of
 * pipes, sockets and memfds matching fstat, missing descriptors, and a
 * child's table seen from its parent. */
#include "moattest.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char info[4096];

/* fdinfo reads /proc/PID/fdinfo/FD into info; -1 with errno on failure. */
static int fdinfo(pid_t pid, int fd)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	int f = open(path, O_RDONLY);
	if (f < 0)
		return -1;
	ssize_t n = read(f, info, sizeof(info) - 1);
	int e = errno;
	close(f);
	if (n < 0) {
		errno = e;
		return -1;
	}
	info[n] = 0;
	return 0;
}

/* field returns the value after "name:" in info, or NULL. */
static const char *field(const char *name)
{
	size_t n = strlen(name);
	for (const char *p = info; p && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			p += n + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
	}
	return NULL;
}

static void pos_follows_offset(void)
{
	int fd = CHECK_SYS(memfd_create("f", 0));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_SYS(fdinfo(getpid(), fd));
	CHECK(field("pos") != NULL);
	CHECK_EQ(atol(field("pos")), 10);
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
	CHECK_SYS(fdinfo(getpid(), fd));
	CHECK_EQ(atol(field("pos")), 3);
}

static void flags_follow_setfl(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(fdinfo(getpid(), p[0]));
	CHECK(field("flags") != NULL);
	long f = strtol(field("flags"), NULL, 8);
	CHECK_EQ(f & (O_ACCMODE | O_NONBLOCK | O_CLOEXEC), O_RDONLY);
	CHECK_SYS(fcntl(p[0], F_SETFL, O_NONBLOCK));
	CHECK_SYS(fcntl(p[0], F_SETFD, FD_CLOEXEC));
	CHECK_SYS(fdinfo(getpid(), p[0]));
	f = strtol(field("flags"), NULL, 8);
	CHECK_EQ(f & (O_ACCMODE | O_NONBLOCK | O_CLOEXEC), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK_SYS(fdinfo(getpid(), p[1]));
	f = strtol(field("flags"), NULL, 8);
	CHECK_EQ(f & O_ACCMODE, O_WRONLY);
}

static void append_flag(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_WRONLY | O_APPEND, 0644));
	CHECK_SYS(fdinfo(getpid(), fd));
	long f = strtol(field("flags"), NULL, 8);
	CHECK(f & O_APPEND);
	CHECK_EQ(f & O_ACCMODE, O_WRONLY);
}

static void eventfd_count_line(void)
{
	int fd = CHECK_SYS(eventfd(5, 0));
	CHECK_SYS(fdinfo(getpid(), fd));
	const char *c = field("eventfd-count");
	CHECK(c != NULL);
	/* Printed in hex, 16 digits wide on current kernels. */
	CHECK_EQ(strtoul(c, NULL, 16), 5);
	uint64_t v = 0x20;
	CHECK_EQ(write(fd, &v, 8), 8);
	CHECK_SYS(fdinfo(getpid(), fd));
	CHECK_EQ(strtoul(field("eventfd-count"), NULL, 16), 0x25);
}

static void link_names_match_fstat(void)
{
	char path[64], link[128], want[128];
	int p[2];
	CHECK_SYS(pipe(p));
	struct stat st;
	CHECK_SYS(fstat(p[0], &st));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)st.st_ino);
	CHECK_STREQ(link, want);
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	CHECK_SYS(fstat(s[1], &st));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s[1]);
	n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	snprintf(want, sizeof(want), "socket:[%lu]", (unsigned long)st.st_ino);
	CHECK_STREQ(link, want);
	int m = CHECK_SYS(memfd_create("s2-name", 0));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", m);
	n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "/memfd:s2-name (deleted)");
}

static void missing_descriptor_enoent(void)
{
	CHECK_ERR(fdinfo(getpid(), 999), ENOENT);
	int fd = CHECK_SYS(memfd_create("f", 0));
	CHECK_SYS(fdinfo(getpid(), fd));
	CHECK_SYS(close(fd));
	CHECK_ERR(fdinfo(getpid(), fd), ENOENT);
	char link[64];
	CHECK_ERR(readlink("/proc/self/fd/999", link, sizeof(link)), ENOENT);
}

static void child_table_from_parent(void)
{
	int go[2], ready[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(ready));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int fd = memfd_create("child", 0);
		CHILD_CHECK(fd >= 0 && dup2(fd, 50) == 50);
		CHILD_CHECK(write(50, "abcdef", 6) == 6);
		char x = 1;
		CHILD_CHECK(write(ready[1], &x, 1) == 1);
		CHILD_CHECK(read(go[0], &x, 1) == 1);
		_exit(0);
	}
	char x;
	CHECK_EQ(read(ready[0], &x, 1), 1);
	int r = fdinfo(c, 50);
	long pos = r == 0 && field("pos") ? atol(field("pos")) : -1;
	char path[64], link[64] = { 0 };
	snprintf(path, sizeof(path), "/proc/%d/fd/50", c);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EXITED(mt_wait(c), 0);
	CHECK_SYS(r);
	CHECK_EQ(pos, 6);
	CHECK_EQ(n, (ssize_t)strlen("/memfd:child (deleted)"));
	CHECK_STREQ(link, "/memfd:child (deleted)");
}

static void fd_dir_lists_new_descriptors(void)
{
	int fd = CHECK_SYS(dup2(0, 77));
	struct stat st;
	CHECK_SYS(lstat("/proc/self/fd/77", &st));
	CHECK(S_ISLNK(st.st_mode));
	CHECK_SYS(close(fd));
	CHECK_ERR(lstat("/proc/self/fd/77", &st), ENOENT);
}

static const struct mt_case cases[] = {
	MT_CASE(pos_follows_offset),
	MT_CASE(flags_follow_setfl),
	MT_CASE(append_flag),
	MT_CASE(eventfd_count_line),
	MT_CASE(link_names_match_fstat),
	MT_CASE(missing_descriptor_enoent),
	MT_CASE(child_table_from_parent),
	MT_CASE(fd_dir_lists_new_descriptors),
};

MT_MAIN(cases)
