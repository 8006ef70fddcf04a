//go:build ignore

/* s3_inotify_init: the legacy inotify_init (blocking, inheritable
 * descriptor), watch descriptor numbering and sharing (hard links, one
 * wd per inode per instance, independent instances), IN_ISDIR on
 * directory events, IN_MASK_CREATE/IN_MASK_ADD rules, events of a watched
 * file (truncate, IN_CLOSE_NOWRITE, IN_ACCESS), and the errors of
 * inotify_add_watch and inotify_rm_watch on wrong descriptors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE 0x10000000
#endif

struct ev {
	int wd;
	uint32_t mask;
	char name[64];
};

static struct ev evs[32];

/* drain reads the queued events of fd (blocking or not: it polls first)
 * into evs and returns their count. */
static int drain(int fd)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 0) != 1)
			return n;
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0)
			return -1;
		for (ssize_t off = 0; off < r;) {
			struct inotify_event *e = (struct inotify_event *)(buf + off);
			if (n < 32) {
				evs[n].wd = e->wd;
				evs[n].mask = e->mask;
				snprintf(evs[n].name, sizeof evs[n].name, "%s", e->len ? e->name : "");
			}
			n++;
			off += sizeof(*e) + e->len;
		}
	}
}

#define CHECK_EV(i, w, m, nm)                      \
	do {                                       \
		CHECK_EQ(evs[i].wd, (w));          \
		CHECK_EQ(evs[i].mask, (m));        \
		CHECK_STREQ(evs[i].name, (nm));    \
	} while (0)

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	return close(fd);
}

static void legacy_init_flags(void)
{
	int fd = CHECK_SYS(syscall(SYS_inotify_init));
	CHECK_GE(fd, 3);
	int fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_NONBLOCK, 0);
	CHECK_EQ(fl & O_ACCMODE, O_RDONLY);
	CHECK_EQ(CHECK_SYS(fcntl(fd, F_GETFD)), 0);
	/* An empty blocking instance is not readable. */
	struct pollfd p = { .fd = fd, .events = POLLIN };
	CHECK_EQ(poll(&p, 1, 0), 0);
	int avail = -1;
	CHECK_SYS(ioctl(fd, FIONREAD, &avail));
	CHECK_EQ(avail, 0);
	/* Made non-blocking with F_SETFL, an empty read is EAGAIN. */
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));
	char buf[256];
	CHECK_ERR(read(fd, buf, sizeof buf), EAGAIN);
}

static void legacy_init_sees_events(void)
{
	ENTER();
	int fd = CHECK_SYS(syscall(SYS_inotify_init));
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE | IN_DELETE));
	CHECK_EQ(wd, 1);
	CHECK_SYS(touch("f"));
	CHECK_SYS(unlink("f"));
	CHECK_EQ(drain(fd), 2);
	CHECK_EV(0, wd, IN_CREATE, "f");
	CHECK_EV(1, wd, IN_DELETE, "f");
}

static void isdir_marks_directories(void)
{
	ENTER();
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE | IN_DELETE | IN_MOVE));
	CHECK_SYS(mkdir("d", 0755));
	CHECK_SYS(rename("d", "e"));
	CHECK_SYS(rmdir("e"));
	CHECK_EQ(drain(fd), 4);
	CHECK_EV(0, wd, IN_CREATE | IN_ISDIR, "d");
	CHECK_EV(1, wd, IN_MOVED_FROM | IN_ISDIR, "d");
	CHECK_EV(2, wd, IN_MOVED_TO | IN_ISDIR, "e");
	CHECK_EV(3, wd, IN_DELETE | IN_ISDIR, "e");
}

static void wd_numbering(void)
{
	ENTER();
	CHECK_SYS(touch("a"));
	CHECK_SYS(touch("b"));
	CHECK_SYS(link("a", "a2"));
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int wa = CHECK_SYS(inotify_add_watch(fd, "a", IN_ATTRIB));
	int wb = CHECK_SYS(inotify_add_watch(fd, "b", IN_ATTRIB));
	CHECK_EQ(wa, 1);
	CHECK_EQ(wb, 2);
	/* A hard link names the same inode: the same watch. */
	CHECK_EQ(inotify_add_watch(fd, "a2", IN_ATTRIB), wa);
	/* A removed watch's number is not handed out again. */
	CHECK_SYS(inotify_rm_watch(fd, wa));
	int wc = CHECK_SYS(inotify_add_watch(fd, "a", IN_ATTRIB));
	CHECK_EQ(wc, 3);
	/* Another instance numbers its watches from 1. */
	int fd2 = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	CHECK_EQ(inotify_add_watch(fd2, "b", IN_ATTRIB), 1);
}

static void instances_are_independent(void)
{
	ENTER();
	int f1 = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int f2 = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int w1 = CHECK_SYS(inotify_add_watch(f1, ".", IN_CREATE));
	int w2 = CHECK_SYS(inotify_add_watch(f2, ".", IN_DELETE));
	CHECK_SYS(touch("x"));
	CHECK_SYS(unlink("x"));
	CHECK_EQ(drain(f1), 1);
	CHECK_EV(0, w1, IN_CREATE, "x");
	CHECK_EQ(drain(f2), 1);
	CHECK_EV(0, w2, IN_DELETE, "x");
	/* Removing a watch from one instance leaves the other's. */
	CHECK_SYS(inotify_rm_watch(f1, w1));
	CHECK_EQ(drain(f1), 1);
	CHECK_EV(0, w1, IN_IGNORED, "");
	CHECK_SYS(touch("y"));
	CHECK_SYS(unlink("y"));
	CHECK_EQ(drain(f1), 0);
	CHECK_EQ(drain(f2), 1);
	CHECK_EV(0, w2, IN_DELETE, "y");
}

static void mask_create_rules(void)
{
	ENTER();
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int wd = CHECK_SYS(inotify_add_watch(fd, ".", IN_CREATE | IN_MASK_CREATE));
	/* IN_MASK_CREATE on an inode already watched: EEXIST. */
	CHECK_ERR(inotify_add_watch(fd, ".", IN_DELETE | IN_MASK_CREATE), EEXIST);
	/* With IN_MASK_ADD: EINVAL. */
	CHECK_ERR(inotify_add_watch(fd, ".", IN_DELETE | IN_MASK_CREATE | IN_MASK_ADD), EINVAL);
	/* The failed calls left the mask alone. */
	CHECK_SYS(touch("f"));
	CHECK_SYS(unlink("f"));
	CHECK_EQ(drain(fd), 1);
	CHECK_EV(0, wd, IN_CREATE, "f");
}

static void add_watch_mask_errors(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	/* No bits at all: EINVAL. */
	CHECK_ERR(inotify_add_watch(fd, ".", 0), EINVAL);
	/* Bits outside IN_ALL_EVENTS and the flags: EINVAL. */
	CHECK_ERR(inotify_add_watch(fd, ".", IN_CREATE | 0x00010000), EINVAL);
	/* IN_ONLYDIR on a file: ENOTDIR. */
	CHECK_ERR(inotify_add_watch(fd, "f", IN_ATTRIB | IN_ONLYDIR), ENOTDIR);
	CHECK_ERR(inotify_add_watch(fd, "missing", IN_ATTRIB), ENOENT);
	CHECK_ERR(inotify_add_watch(fd, "f/x", IN_ATTRIB), ENOTDIR);
	CHECK_ERR(inotify_add_watch(fd, "", IN_ATTRIB), ENOENT);
	CHECK_ERR(inotify_add_watch(fd, (const char *)1, IN_ATTRIB), EFAULT);
	char longname[300];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK_ERR(inotify_add_watch(fd, longname, IN_ATTRIB), ENAMETOOLONG);
}

static void wrong_descriptors(void)
{
	ENTER();
	int p[2];
	CHECK_SYS(pipe(p));
	/* Not an inotify instance: EINVAL; not open: EBADF. */
	CHECK_ERR(inotify_add_watch(p[0], ".", IN_CREATE), EINVAL);
	CHECK_ERR(inotify_rm_watch(p[0], 1), EINVAL);
	CHECK_ERR(inotify_add_watch(99, ".", IN_CREATE), EBADF);
	CHECK_ERR(inotify_rm_watch(99, 1), EBADF);
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	CHECK_ERR(inotify_rm_watch(fd, 1), EINVAL);
	CHECK_ERR(inotify_rm_watch(fd, -1), EINVAL);
	CHECK_ERR(inotify_rm_watch(fd, 0), EINVAL);
	/* The instance is open read-only: writes are EBADF. */
	CHECK_ERR(write(fd, "x", 1), EBADF);
}

static void watched_file_events(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int wd = CHECK_SYS(inotify_add_watch(fd, "f", IN_ALL_EVENTS));
	int f = CHECK_SYS(open("f", O_RDWR));
	CHECK_EQ(write(f, "hello", 5), 5);
	CHECK_SYS(ftruncate(f, 2));
	char c[8];
	CHECK_EQ(pread(f, c, sizeof c, 0), 2);
	CHECK_SYS(close(f));
	f = CHECK_SYS(open("f", O_RDONLY));
	CHECK_SYS(close(f));
	CHECK_EQ(drain(fd), 6);
	/* Events of the watched file itself carry no name; the write's and
	 * the truncate's IN_MODIFY merge, being identical and adjacent. */
	CHECK_EV(0, wd, IN_OPEN, "");
	CHECK_EV(1, wd, IN_MODIFY, "");
	CHECK_EV(2, wd, IN_ACCESS, "");
	CHECK_EV(3, wd, IN_CLOSE_WRITE, "");
	CHECK_EV(4, wd, IN_OPEN, "");
	CHECK_EV(5, wd, IN_CLOSE_NOWRITE, "");
}

static void oneshot_on_file(void)
{
	ENTER();
	CHECK_SYS(touch("f"));
	int fd = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	int wd = CHECK_SYS(inotify_add_watch(fd, "f", IN_ATTRIB | IN_ONESHOT));
	CHECK_SYS(chmod("f", 0600));
	CHECK_SYS(chmod("f", 0644));
	CHECK_EQ(drain(fd), 2);
	CHECK_EV(0, wd, IN_ATTRIB, "");
	CHECK_EV(1, wd, IN_IGNORED, "");
	/* The watch is gone: a new one gets a new number. */
	CHECK_ERR(inotify_rm_watch(fd, wd), EINVAL);
	CHECK_EQ(inotify_add_watch(fd, "f", IN_ATTRIB), wd + 1);
}

static const struct mt_case cases[] = {
	MT_CASE(legacy_init_flags),
	MT_CASE(legacy_init_sees_events),
	MT_CASE(isdir_marks_directories),
	MT_CASE(wd_numbering),
	MT_CASE(instances_are_independent),
	MT_CASE(mask_create_rules),
	MT_CASE(add_watch_mask_errors),
	MT_CASE(wrong_descriptors),
	MT_CASE(watched_file_events),
	MT_CASE(oneshot_on_file),
};

MT_MAIN(cases)
