//go:build ignore

/* inotify: inotify_init1 flags, inotify_add_watch masks and errors
 * (IN_ONLYDIR, IN_DONT_FOLLOW, IN_MASK_ADD, IN_MASK_CREATE, IN_ONESHOT,
 * IN_EXCL_UNLINK), inotify_rm_watch and IN_IGNORED, reading struct
 * inotify_event (name padding, EINVAL for a small buffer, FIONREAD),
 * poll/epoll readiness and blocking reads, merging of identical events,
 * IN_Q_OVERFLOW, and the events of creates, deletes, moves (cookies),
 * attribute changes, opens, reads, writes and closes on /dev/shm, a new
 * tmpfs and the (read-only) root. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE 0x10000000
#endif

struct ev {
	int wd;
	uint32_t mask;
	uint32_t cookie;
	uint32_t len;
	char name[256];
};

static struct ev evs[64];

/* drain reads every queued event of the non-blocking instance fd into
 * evs and returns their count (-1 on a read error other than EAGAIN). */
static int drain(int fd)
{
	char buf[8192] __attribute__((aligned(8)));
	int n = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0)
			return errno == EAGAIN ? n : -1;
		for (ssize_t off = 0; off < r;) {
			struct inotify_event *e = (struct inotify_event *)(buf + off);
			if (n < 64) {
				evs[n].wd = e->wd;
				evs[n].mask = e->mask;
				evs[n].cookie = e->cookie;
				evs[n].len = e->len;
				snprintf(evs[n].name, sizeof evs[n].name, "%s", e->len ? e->name : "");
			}
			n++;
			off += sizeof(*e) + e->len;
		}
	}
}

static int new_instance(void)
{
	return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	return close(fd);
}

#define CHECK_EV(i, w, m, nm)                           \
	do {                                            \
		CHECK_EQ(evs[i].wd, (w));               \
		CHECK_EQ(evs[i].mask, (uint32_t)(m));   \
		CHECK_STREQ(evs[i].name, (nm));         \
	} while (0)

static void init_flags(void)
{
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	char link[64], target[64] = {0};
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	CHECK_SYS(readlink(link, target, sizeof target - 1));
	CHECK_STREQ(target, "anon_inode:inotify");
	char b[64];
	CHECK_ERR(read(fd, b, sizeof b), EAGAIN);
	int fd2 = CHECK_SYS(inotify_init());
	CHECK_EQ(fcntl(fd2, F_GETFL) & O_NONBLOCK, 0);
	CHECK_EQ(fcntl(fd2, F_GETFD), 0);
	CHECK_ERR(inotify_init1(IN_NONBLOCK << 1), EINVAL);
	CHECK_ERR(inotify_init1(O_RDWR), EINVAL);
}

static void add_watch_errors(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	CHECK_SYS(touch("f"));
	CHECK_ERR(inotify_add_watch(fd, ".", 0), EINVAL);
	CHECK_ERR(inotify_add_watch(fd, ".", IN_MODIFY | IN_MASK_ADD | IN_MASK_CREATE), EINVAL);
	CHECK_ERR(inotify_add_watch(999, ".", IN_MODIFY), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(inotify_add_watch(p[0], ".", IN_MODIFY), EINVAL);
	CHECK_ERR(inotify_add_watch(fd, "missing", IN_MODIFY), ENOENT);
	CHECK_ERR(inotify_add_watch(fd, "f", IN_MODIFY | IN_ONLYDIR), ENOTDIR);
	CHECK_ERR(inotify_add_watch(fd, "f/", IN_MODIFY), ENOTDIR);
	CHECK_ERR(inotify_rm_watch(fd, 1), EINVAL);
	CHECK_ERR(inotify_rm_watch(p[0], 1), EINVAL);
	CHECK_ERR(inotify_rm_watch(999, 1), EBADF);
	int w1 = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE | IN_ONLYDIR));
	CHECK_EQ(w1, 1);
	CHECK_EQ(inotify_add_watch(fd, ".", IN_DELETE), w1);
	CHECK_ERR(inotify_add_watch(fd, ".", IN_DELETE | IN_MASK_CREATE), EEXIST);
	int w2 = CHECK_SYS(inotify_add_watch(fd, "f", IN_MODIFY | IN_MASK_CREATE));
	CHECK_EQ(w2, 2);
	/* Another name of the same file is the same watch. */
	CHECK_SYS(link("f", "g"));
	CHECK_EQ(inotify_add_watch(fd, "g", IN_MODIFY), w2);
	/* Watch descriptors are not reused at once. */
	CHECK_SYS(inotify_rm_watch(fd, w2));
	CHECK_EQ(inotify_add_watch(fd, "f", IN_MODIFY), 3);
	/* A second instance numbers its own. */
	int fd2 = CHECK_SYS(new_instance());
	CHECK_EQ(inotify_add_watch(fd2, "f", IN_MODIFY), 1);
}

static void watch_needs_read_permission(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	CHECK_SYS(chmod("f", 0200));
	int fd = CHECK_SYS(new_instance());
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(chmod("f", 0) == -1);
		CHILD_ERR(inotify_add_watch(fd, "f", IN_MODIFY), EACCES);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(inotify_add_watch(fd, "f", IN_MODIFY), 1);
}

static void create_and_delete_names(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE | IN_DELETE));
	CHECK_SYS(touch("file"));
	CHECK_SYS(mkdir("a-longer-directory-name", 0755));
	CHECK_SYS(symlink("file", "sym"));
	CHECK_SYS(mknod("fifo", S_IFIFO | 0600, 0));
	CHECK_SYS(unlink("file"));
	CHECK_SYS(rmdir("a-longer-directory-name"));
	CHECK_EQ(drain(fd), 6);
	CHECK_EV(0, wd, IN_CREATE, "file");
	CHECK_EV(1, wd, IN_CREATE | IN_ISDIR, "a-longer-directory-name");
	CHECK_EV(2, wd, IN_CREATE, "sym");
	CHECK_EV(3, wd, IN_CREATE, "fifo");
	CHECK_EV(4, wd, IN_DELETE, "file");
	CHECK_EV(5, wd, IN_DELETE | IN_ISDIR, "a-longer-directory-name");
	/* Names are NUL-padded to a multiple of the header size. */
	CHECK_EQ(evs[0].len, 16);
	CHECK_EQ(evs[1].len, 32);
	CHECK_EQ(evs[0].cookie, 0);
}

static void read_buffer_sizes(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE));
	CHECK_SYS(touch("x"));
	CHECK_SYS(touch("y"));
	int avail = -1;
	CHECK_SYS(ioctl(fd, FIONREAD, &avail));
	CHECK_EQ(avail, 64);
	char buf[256] __attribute__((aligned(8)));
	memset(buf, 0x55, sizeof buf);
	CHECK_ERR(read(fd, buf, 16), EINVAL);
	CHECK_ERR(read(fd, buf, 31), EINVAL);
	/* Only whole events: one fits in 40 bytes. */
	CHECK_EQ(read(fd, buf, 40), 32);
	struct inotify_event *e = (struct inotify_event *)buf;
	CHECK_EQ(e->len, 16);
	CHECK_STREQ(e->name, "x");
	for (int i = 1; i < 16; i++)
		CHECK_EQ(e->name[i], 0);
	CHECK_SYS(ioctl(fd, FIONREAD, &avail));
	CHECK_EQ(avail, 32);
	CHECK_EQ(read(fd, buf, sizeof buf), 32);
	CHECK_STREQ(e->name, "y");
	CHECK_SYS(ioctl(fd, FIONREAD, &avail));
	CHECK_EQ(avail, 0);
}

static void file_io_events(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, "f", IN_ALL_EVENTS));
	int f = CHECK_SYS(open("f", O_RDWR));
	CHECK_EQ(write(f, "abc", 3), 3);
	char b[8];
	CHECK_EQ(pread(f, b, 8, 0), 3);
	CHECK_EQ(pread(f, b, 8, 3), 0); /* nothing read: no event */
	CHECK_SYS(close(f));
	f = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(close(f));
	CHECK_EQ(drain(fd), 6);
	CHECK_EV(0, wd, IN_OPEN, "");
	CHECK_EV(1, wd, IN_MODIFY, "");
	CHECK_EV(2, wd, IN_ACCESS, "");
	CHECK_EV(3, wd, IN_CLOSE_WRITE, "");
	CHECK_EV(4, wd, IN_OPEN, "");
	CHECK_EV(5, wd, IN_CLOSE_NOWRITE, "");
}

static void parent_sees_children(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_ALL_EVENTS));
	int wf = CHECK_SYS(inotify_add_watch(fd, ".", IN_ALL_EVENTS));
	CHECK_EQ(wf, wd);
	int f = CHECK_SYS(open("f", O_CREAT | O_WRONLY, 0600));
	int wc = CHECK_SYS(inotify_add_watch(fd, "f", IN_MODIFY));
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_SYS(close(f));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(close(d));
	CHECK_EQ(drain(fd), 7);
	CHECK_EV(0, wd, IN_CREATE, "f");
	CHECK_EV(1, wd, IN_OPEN, "f");
	/* The directory's event comes before the file's own. */
	CHECK_EV(2, wd, IN_MODIFY, "f");
	CHECK_EV(3, wc, IN_MODIFY, "");
	CHECK_EV(4, wd, IN_CLOSE_WRITE, "f");
	CHECK_EV(5, wd, IN_OPEN | IN_ISDIR, "d");
	CHECK_EV(6, wd, IN_CLOSE_NOWRITE | IN_ISDIR, "d");
}

static void identical_events_merge(void)
{
	ENTER();
	int f = CHECK_SYS(open("f", O_CREAT | O_WRONLY, 0600));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, "f", IN_MODIFY | IN_ATTRIB));
	CHECK_EQ(write(f, "a", 1), 1);
	CHECK_EQ(write(f, "b", 1), 1);
	CHECK_EQ(write(f, "c", 1), 1);
	CHECK_SYS(fchmod(f, 0640));
	CHECK_EQ(write(f, "d", 1), 1);
	CHECK_EQ(drain(fd), 3);
	CHECK_EV(0, wd, IN_MODIFY, "");
	CHECK_EV(1, wd, IN_ATTRIB, "");
	CHECK_EV(2, wd, IN_MODIFY, "");
}

/* one returns the mask of the single queued event of fd, or 0 if there
 * is not exactly one (identical events in a row merge, so each change is
 * read alone). */
static uint32_t one(int fd)
{
	return drain(fd) == 1 ? evs[0].mask : 0;
}

static void attribute_events(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	int fd = CHECK_SYS(new_instance());
	CHECK_SYS(inotify_add_watch(fd, "f", IN_ATTRIB | IN_MODIFY | IN_ACCESS));
	CHECK_SYS(chmod("f", 0600));
	CHECK_EQ(one(fd), IN_ATTRIB);
	CHECK_SYS(chown("f", getuid(), getgid()));
	CHECK_EQ(one(fd), IN_ATTRIB);
	CHECK_SYS(utimes("f", NULL));
	CHECK_EQ(one(fd), IN_ATTRIB);
	CHECK_SYS(truncate("f", 10));
	CHECK_EQ(one(fd), IN_MODIFY);
	CHECK_SYS(link("f", "g"));
	CHECK_EQ(one(fd), IN_ATTRIB);
	CHECK_SYS(unlink("g"));
	CHECK_EQ(one(fd), IN_ATTRIB);
	CHECK_SYS(setxattr("f", "user.x", "1", 1, 0));
	CHECK_EQ(one(fd), IN_ATTRIB);
	/* One time alone is an access or a modification. */
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = 5}};
	CHECK_SYS(utimensat(AT_FDCWD, "f", ts, 0));
	CHECK_EQ(one(fd), IN_MODIFY);
	ts[0].tv_nsec = 0;
	ts[1].tv_nsec = UTIME_OMIT;
	CHECK_SYS(utimensat(AT_FDCWD, "f", ts, 0));
	CHECK_EQ(one(fd), IN_ACCESS);
	int f = CHECK_SYS(open("f", O_WRONLY | O_TRUNC));
	CHECK_EQ(one(fd), IN_MODIFY);
	CHECK_SYS(ftruncate(f, 3));
	CHECK_EQ(one(fd), IN_MODIFY);
	CHECK_SYS(fchmod(f, 0640));
	CHECK_EQ(one(fd), IN_ATTRIB);
}

static void moves_share_a_cookie(void)
{
	ENTER();
	CHECK_SYS(mkdir("a", 0755));
	CHECK_SYS(mkdir("b", 0755));
	CHECK_SYS(touch("a/f"));
	CHECK_SYS(mkdir("a/sub", 0755));
	int fd = CHECK_SYS(new_instance());
	int wa = CHECK_SYS(inotify_add_watch(fd, "a", IN_MOVE));
	int wb = CHECK_SYS(inotify_add_watch(fd, "b", IN_MOVE));
	int wf = CHECK_SYS(inotify_add_watch(fd, "a/f", IN_MOVE_SELF));
	int ws = CHECK_SYS(inotify_add_watch(fd, "a/sub", IN_MOVE_SELF));
	CHECK_SYS(rename("a/f", "a/g"));
	CHECK_SYS(rename("a/g", "b/h"));
	CHECK_SYS(rename("a/sub", "b/sub"));
	CHECK_EQ(drain(fd), 9);
	CHECK_EV(0, wa, IN_MOVED_FROM, "f");
	CHECK_EV(1, wa, IN_MOVED_TO, "g");
	CHECK_EV(2, wf, IN_MOVE_SELF, "");
	CHECK_EQ(evs[0].cookie, evs[1].cookie);
	CHECK_NE(evs[0].cookie, 0);
	CHECK_EQ(evs[2].cookie, 0);
	CHECK_EV(3, wa, IN_MOVED_FROM, "g");
	CHECK_EV(4, wb, IN_MOVED_TO, "h");
	CHECK_EV(5, wf, IN_MOVE_SELF, "");
	CHECK_EQ(evs[3].cookie, evs[4].cookie);
	CHECK_NE(evs[3].cookie, evs[0].cookie);
	CHECK_EV(6, wa, IN_MOVED_FROM | IN_ISDIR, "sub");
	CHECK_EV(7, wb, IN_MOVED_TO | IN_ISDIR, "sub");
	CHECK_EV(8, ws, IN_MOVE_SELF, "");
}

static void rename_over_watched_file(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	CHECK_SYS(touch("victim"));
	int fd = CHECK_SYS(new_instance());
	int wv = CHECK_SYS(inotify_add_watch(fd, "victim", IN_ALL_EVENTS));
	CHECK_SYS(rename("f", "victim"));
	CHECK_EQ(drain(fd), 3);
	CHECK_EV(0, wv, IN_ATTRIB, "");
	CHECK_EV(1, wv, IN_DELETE_SELF, "");
	CHECK_EV(2, wv, IN_IGNORED, "");
}

static void delete_self_and_ignored(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	CHECK_SYS(mkdir("d", 0755));
	int fd = CHECK_SYS(new_instance());
	int wf = CHECK_SYS(inotify_add_watch(fd, "f", IN_ALL_EVENTS));
	int wd = CHECK_SYS(inotify_add_watch(fd, "d", IN_DELETE_SELF));
	CHECK_SYS(unlink("f"));
	CHECK_EQ(drain(fd), 3);
	CHECK_EV(0, wf, IN_ATTRIB, "");
	CHECK_EV(1, wf, IN_DELETE_SELF, "");
	CHECK_EV(2, wf, IN_IGNORED, "");
	CHECK_SYS(rmdir("d"));
	CHECK_EQ(drain(fd), 2);
	CHECK_EV(0, wd, IN_DELETE_SELF, "");
	CHECK_EV(1, wd, IN_IGNORED, "");
	/* The watches are gone. */
	CHECK_ERR(inotify_rm_watch(fd, wf), EINVAL);
	CHECK_ERR(inotify_rm_watch(fd, wd), EINVAL);
}

static void rm_watch_queues_ignored(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE));
	CHECK_SYS(inotify_rm_watch(fd, wd));
	CHECK_ERR(inotify_rm_watch(fd, wd), EINVAL);
	CHECK_SYS(touch("f"));
	CHECK_EQ(drain(fd), 1);
	CHECK_EV(0, wd, IN_IGNORED, "");
	CHECK_EQ(evs[0].len, 0);
}

static void oneshot_and_mask_add(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE | IN_ONESHOT));
	CHECK_SYS(touch("a"));
	CHECK_SYS(touch("b"));
	CHECK_EQ(drain(fd), 2);
	CHECK_EV(0, wd, IN_CREATE, "a");
	CHECK_EV(1, wd, IN_IGNORED, "");
	CHECK_ERR(inotify_rm_watch(fd, wd), EINVAL);

	wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE));
	CHECK_EQ(inotify_add_watch(fd, ".", IN_DELETE | IN_MASK_ADD), wd);
	CHECK_SYS(touch("c"));
	CHECK_SYS(unlink("c"));
	CHECK_EQ(drain(fd), 2);
	CHECK_EV(0, wd, IN_CREATE, "c");
	CHECK_EV(1, wd, IN_DELETE, "c");
	/* Without IN_MASK_ADD the mask is replaced. */
	CHECK_EQ(inotify_add_watch(fd, ".", IN_DELETE), wd);
	CHECK_SYS(touch("c"));
	CHECK_SYS(unlink("c"));
	CHECK_EQ(drain(fd), 1);
	CHECK_EV(0, wd, IN_DELETE, "c");
}

static void dont_follow_watches_the_link(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(symlink("d", "l"));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, "d", IN_CREATE));
	CHECK_EQ(inotify_add_watch(fd, "l", IN_CREATE), wd);
	int wl = CHECK_SYS(inotify_add_watch(fd, "l", IN_ATTRIB | IN_DONT_FOLLOW));
	CHECK_NE(wl, wd);
	CHECK_ERR(inotify_add_watch(fd, "l", IN_ATTRIB | IN_DONT_FOLLOW | IN_ONLYDIR), ENOTDIR);
	CHECK_EQ(inotify_add_watch(fd, "l", IN_ATTRIB | IN_ONLYDIR), wd);
	CHECK_SYS(touch("l/x"));
	CHECK_SYS(lchown("l", getuid(), getgid()));
	CHECK_EQ(drain(fd), 1);
	/* wd lost IN_CREATE to the IN_ATTRIB mask set through l. */
	CHECK_EV(0, wl, IN_ATTRIB, "");
}

static void excl_unlink_drops_unlinked_children(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	int f = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0600));
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_MODIFY));
	CHECK_SYS(unlink("f"));
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_EQ(drain(fd), 1);
	CHECK_EV(0, wd, IN_MODIFY, "f");
	CHECK_EQ(inotify_add_watch(fd, ".", IN_MODIFY | IN_EXCL_UNLINK), wd);
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_EQ(drain(fd), 0);
	int g = CHECK_SYS(open("g", O_CREAT | O_RDWR, 0600));
	CHECK_EQ(write(g, "x", 1), 1);
	CHECK_EQ(drain(fd), 1);
	CHECK_EV(0, wd, IN_MODIFY, "g");
}

static void poll_and_epoll_readiness(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE));
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
	CHECK_EQ(poll(&p, 1, 0), 0);
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ee = {.events = EPOLLIN | EPOLLET};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee));
	struct epoll_event out;
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_SYS(touch("a"));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 1);
	CHECK_EQ(out.events, EPOLLIN);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_SYS(touch("b"));
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 1);
	CHECK_EQ(drain(fd), 2);
	CHECK_EQ(poll(&p, 1, 0), 0);
}

static void *toucher(void *arg)
{
	(void)arg;
	usleep(20000);
	touch("late");
	return NULL;
}

static void blocking_read_wakes(void)
{
	ENTER();
	int fd = CHECK_SYS(inotify_init());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE));
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, toucher, NULL), 0);
	char buf[256] __attribute__((aligned(8)));
	ssize_t n = read(fd, buf, sizeof buf);
	pthread_join(th, NULL);
	CHECK_EQ(n, 32);
	struct inotify_event *e = (struct inotify_event *)buf;
	CHECK_EQ(e->wd, wd);
	CHECK_EQ(e->mask, IN_CREATE);
	CHECK_STREQ(e->name, "late");
}

static int queue_limit(void)
{
	int v = -1;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void queue_overflow(void)
{
	int max = queue_limit();
	if (max <= 0 || max > 65536) {
		SKIP("max_queued_events %d", max);
		return;
	}
	ENTER();
	CHECK_SYS(touch("a"));
	CHECK_SYS(touch("b"));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_ATTRIB));
	for (int i = 0; i < max + 10; i++)
		CHECK_SYS(chmod(i % 2 ? "a" : "b", 0600 | (i % 2) << 2));
	int avail;
	CHECK_SYS(ioctl(fd, FIONREAD, &avail));
	CHECK_EQ(avail, max * 32 + 16);
	size_t sz = (size_t)avail;
	char *buf = malloc(sz);
	CHECK(buf != NULL);
	/* Read in pieces, as programs do, each holding whole events. */
	size_t got = 0;
	while (got < sz) {
		ssize_t r = read(fd, buf + got, sz - got < 4096 ? sz - got : 4096);
		CHECK(r > 0);
		got += (size_t)r;
	}
	CHECK_ERR(read(fd, buf, 16), EAGAIN);
	struct inotify_event *first = (struct inotify_event *)buf;
	struct inotify_event *last = (struct inotify_event *)(buf + sz - 16);
	CHECK_EQ(first->wd, wd);
	CHECK_EQ(first->mask, IN_ATTRIB);
	CHECK_EQ(last->wd, -1);
	CHECK_EQ(last->mask, IN_Q_OVERFLOW);
	CHECK_EQ(last->len, 0);
	free(buf);
	/* Room again: new events queue. */
	CHECK_SYS(chmod("a", 0644));
	CHECK_EQ(drain(fd), 1);
}

static void new_tmpfs_mount(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	if (mount("none", "m", "tmpfs", 0, NULL) < 0) {
		SKIP("mount tmpfs: %s", mt_errname(errno));
		return;
	}
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, "m", IN_CREATE | IN_DELETE | IN_MODIFY));
	int f = CHECK_SYS(open("m/f", O_CREAT | O_WRONLY, 0600));
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_SYS(close(f));
	CHECK_SYS(unlink("m/f"));
	CHECK_EQ(drain(fd), 3);
	CHECK_EV(0, wd, IN_CREATE, "f");
	CHECK_EV(1, wd, IN_MODIFY, "f");
	CHECK_EV(2, wd, IN_DELETE, "f");
	CHECK_SYS(inotify_rm_watch(fd, wd));
	CHECK_SYS(umount2("m", MNT_DETACH));
}

static void root_file_reads(void)
{
	const char *path = mt_data("hello.txt");
	int fd = CHECK_SYS(new_instance());
	int wd = inotify_add_watch(fd, path, IN_ALL_EVENTS);
	if (wd < 0 && errno == ENOENT) {
		SKIP("no %s", path);
		return;
	}
	CHECK(wd > 0);
	int f = CHECK_SYS(open(path, O_RDONLY));
	char b[4];
	CHECK_EQ(read(f, b, 1), 1);
	CHECK_SYS(close(f));
	CHECK_EQ(drain(fd), 3);
	CHECK_EV(0, wd, IN_OPEN, "");
	CHECK_EV(1, wd, IN_ACCESS, "");
	CHECK_EV(2, wd, IN_CLOSE_NOWRITE, "");
}

static void close_instance_drops_watches(void)
{
	ENTER();
	int fd = CHECK_SYS(new_instance());
	CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE));
	int d = CHECK_SYS(dup(fd));
	CHECK_SYS(close(fd));
	CHECK_SYS(touch("a"));
	/* The description lives on through dup. */
	CHECK_EQ(drain(d), 1);
	CHECK_SYS(close(d));
	CHECK_SYS(touch("b"));
}

static void directory_listing_events(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_OPEN | IN_ACCESS | IN_CLOSE));
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char buf[1024] __attribute__((aligned(8)));
	CHECK_GT(syscall(SYS_getdents64, d, buf, sizeof buf), 0);
	CHECK_EQ(syscall(SYS_getdents64, d, buf, sizeof buf), 0);
	CHECK_SYS(close(d));
	CHECK_EQ(drain(fd), 3);
	CHECK_EV(0, wd, IN_OPEN | IN_ISDIR, "");
	CHECK_EV(1, wd, IN_ACCESS | IN_ISDIR, "");
	CHECK_EV(2, wd, IN_CLOSE_NOWRITE | IN_ISDIR, "");
}

static void open_file_delays_delete_self(void)
{
	ENTER();
	int f = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0600));
	int fd = CHECK_SYS(new_instance());
	int wd = CHECK_SYS(inotify_add_watch(fd, "f", IN_ALL_EVENTS));
	CHECK_SYS(unlink("f"));
	CHECK_EQ(drain(fd), 1);
	CHECK_EV(0, wd, IN_ATTRIB, "");
	/* The file lives on while open, and so does the watch. */
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_SYS(close(f));
	CHECK_EQ(drain(fd), 4);
	CHECK_EV(0, wd, IN_MODIFY, "");
	CHECK_EV(1, wd, IN_CLOSE_WRITE, "");
	CHECK_EV(2, wd, IN_DELETE_SELF, "");
	CHECK_EV(3, wd, IN_IGNORED, "");
}

static void unmount_ends_watches(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	if (mount("none", "m", "tmpfs", 0, NULL) < 0) {
		SKIP("mount tmpfs: %s", mt_errname(errno));
		return;
	}
	CHECK_SYS(touch("m/f"));
	int fd = CHECK_SYS(new_instance());
	/* IN_UNMOUNT comes whatever the mask. */
	int wd = CHECK_SYS(inotify_add_watch(fd, "m/f", IN_MODIFY));
	CHECK_SYS(umount2("m", 0));
	CHECK_EQ(drain(fd), 2);
	CHECK_EV(0, wd, IN_UNMOUNT, "");
	CHECK_EV(1, wd, IN_IGNORED, "");
	CHECK_ERR(inotify_rm_watch(fd, wd), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(init_flags),
	MT_CASE(add_watch_errors),
	MT_CASE(watch_needs_read_permission),
	MT_CASE(create_and_delete_names),
	MT_CASE(read_buffer_sizes),
	MT_CASE(file_io_events),
	MT_CASE(parent_sees_children),
	MT_CASE(identical_events_merge),
	MT_CASE(attribute_events),
	MT_CASE(moves_share_a_cookie),
	MT_CASE(rename_over_watched_file),
	MT_CASE(delete_self_and_ignored),
	MT_CASE(rm_watch_queues_ignored),
	MT_CASE(oneshot_and_mask_add),
	MT_CASE(dont_follow_watches_the_link),
	MT_CASE(excl_unlink_drops_unlinked_children),
	MT_CASE(poll_and_epoll_readiness),
	MT_CASE(blocking_read_wakes),
	MT_CASE(queue_overflow),
	MT_CASE(new_tmpfs_mount),
	MT_CASE(root_file_reads),
	MT_CASE(close_instance_drops_watches),
	MT_CASE(directory_listing_events),
	MT_CASE(open_file_delays_delete_self),
	MT_CASE(unmount_ends_watches),
};

MT_MAIN(cases)
