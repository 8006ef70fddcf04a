//go:build ignore

/* ioctl_generic: the file-independent ioctls (FIOCLEX, FIONCLEX, FIONBIO,
 * FIOASYNC, FIONREAD) across descriptor kinds (pipes, /dev files, regular
 * files, directories, eventfd, epoll, O_PATH), terminal ioctls on
 * non-terminals (ENOTTY), and the errors for bad descriptors, pointers and
 * requests. */
#include "moattest.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static int kinds[8];
static const char *kind_names[8];
static int nkinds;

static void open_kinds(void)
{
	int p[2];
	nkinds = 0;
	if (pipe(p) == 0) {
		kind_names[nkinds] = "pipe";
		kinds[nkinds++] = p[0];
	}
	kind_names[nkinds] = "devnull";
	kinds[nkinds++] = open("/dev/null", O_RDWR);
	kind_names[nkinds] = "file";
	kinds[nkinds++] = open(mt_data("hello.txt"), O_RDONLY);
	kind_names[nkinds] = "dir";
	kinds[nkinds++] = open("/", O_RDONLY | O_DIRECTORY);
	kind_names[nkinds] = "eventfd";
	kinds[nkinds++] = eventfd(0, 0);
	kind_names[nkinds] = "epoll";
	kinds[nkinds++] = epoll_create1(0);
}

static void fioclex_on_every_kind(void)
{
	open_kinds();
	for (int i = 0; i < nkinds; i++) {
		if (kinds[i] < 0)
			FAIL("open %s: %s", kind_names[i], mt_errname(errno));
		if (ioctl(kinds[i], FIOCLEX) != 0)
			FAIL("%s: FIOCLEX: %s", kind_names[i], mt_errname(errno));
		if (fcntl(kinds[i], F_GETFD) != FD_CLOEXEC)
			FAIL("%s: FD_CLOEXEC not set", kind_names[i]);
		if (ioctl(kinds[i], FIONCLEX) != 0 || fcntl(kinds[i], F_GETFD) != 0)
			FAIL("%s: FIONCLEX", kind_names[i]);
	}
}

static void fionbio_on_every_kind(void)
{
	open_kinds();
	for (int i = 0; i < nkinds; i++) {
		int on = 1, off = 0;
		if (ioctl(kinds[i], FIONBIO, &on) != 0)
			FAIL("%s: FIONBIO on: %s", kind_names[i], mt_errname(errno));
		if (!(fcntl(kinds[i], F_GETFL) & O_NONBLOCK))
			FAIL("%s: O_NONBLOCK not set", kind_names[i]);
		if (ioctl(kinds[i], FIONBIO, &off) != 0 || (fcntl(kinds[i], F_GETFL) & O_NONBLOCK))
			FAIL("%s: FIONBIO off", kind_names[i]);
	}
	/* Any non-zero value means on. */
	int v = 42;
	CHECK_SYS(ioctl(kinds[0], FIONBIO, &v));
	CHECK(fcntl(kinds[0], F_GETFL) & O_NONBLOCK);
}

static void fioasync_toggles_o_async(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int on = 1, off = 0;
	CHECK_SYS(ioctl(p[0], FIOASYNC, &on));
	CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);
	CHECK_SYS(ioctl(p[0], FIOASYNC, &off));
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ASYNC, 0);
	CHECK_ERR(ioctl(p[0], FIOASYNC, (void *)1), EFAULT);
}

static void fionread_kinds(void)
{
	int n = -1;
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "12345678", 8), 8);
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 8);
	/* The write end reports the same count. */
	CHECK_SYS(ioctl(p[1], FIONREAD, &n));
	CHECK_EQ(n, 8);
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	/* A directory: Linux's generic FIONREAD is for regular files only. */
	CHECK_ERR(ioctl(d, FIONREAD, &n), ENOTTY);
	int z = CHECK_SYS(open("/dev/zero", O_RDONLY));
	CHECK_ERR(ioctl(z, FIONREAD, &n), ENOTTY);
}

static void terminal_ioctls_enotty(void)
{
	open_kinds();
	/* The last kind, epoll, answers EINVAL (see epoll_ioctls_einval). */
	for (int i = 0; i < nkinds - 1; i++) {
		struct termios t;
		struct winsize ws;
		int pg;
		if (ioctl(kinds[i], TCGETS, &t) != -1 || errno != ENOTTY)
			FAIL("%s: TCGETS: %s", kind_names[i], mt_errname(errno));
		if (ioctl(kinds[i], TIOCGWINSZ, &ws) != -1 || errno != ENOTTY)
			FAIL("%s: TIOCGWINSZ: %s", kind_names[i], mt_errname(errno));
		if (ioctl(kinds[i], TIOCGPGRP, &pg) != -1 || errno != ENOTTY)
			FAIL("%s: TIOCGPGRP: %s", kind_names[i], mt_errname(errno));
		if (isatty(kinds[i]))
			FAIL("%s: isatty", kind_names[i]);
	}
}

static void epoll_ioctls_einval(void)
{
	/* An epoll file has its own ioctl (busy-poll parameters, Linux
	 * 6.9+): every other request is EINVAL, not ENOTTY. */
	int e = CHECK_SYS(epoll_create1(0));
	int n;
	struct termios t;
	CHECK_ERR(ioctl(e, FIONREAD, &n), EINVAL);
	CHECK_ERR(ioctl(e, TCGETS, &t), EINVAL);
}

static void ioctl_bad_fds(void)
{
	int on = 1;
	CHECK_ERR(ioctl(-1, FIONBIO, &on), EBADF);
	CHECK_ERR(ioctl(999, FIOCLEX), EBADF);
	/* O_PATH descriptors take no ioctls at all. */
	int o = CHECK_SYS(open("/dev/null", O_PATH));
	CHECK_ERR(ioctl(o, FIONBIO, &on), EBADF);
	CHECK_ERR(ioctl(o, FIOCLEX), EBADF);
}

static void ioctl_bad_pointers(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ioctl(p[0], FIONBIO, (void *)1), EFAULT);
	CHECK_ERR(ioctl(p[0], FIONREAD, NULL), EFAULT);
}

static void ioctl_unknown_request(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ioctl(p[0], 0x7fff1234, 0), ENOTTY);
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(ioctl(f, 0x7fff1234, 0), ENOTTY);
}

static const struct mt_case cases[] = {
	MT_CASE(fioclex_on_every_kind),
	MT_CASE(fionbio_on_every_kind),
	MT_CASE(fioasync_toggles_o_async),
	MT_CASE(fionread_kinds),
	MT_CASE(terminal_ioctls_enotty),
	MT_CASE(epoll_ioctls_einval),
	MT_CASE(ioctl_bad_fds),
	MT_CASE(ioctl_bad_pointers),
	MT_CASE(ioctl_unknown_request),
};

MT_MAIN(cases)
