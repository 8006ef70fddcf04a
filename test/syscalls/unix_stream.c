//go:build ignore

/* unix_stream: AF_UNIX stream sockets bound on file system paths (in the
 * /dev/shm scratch directory): the socket node, connect through paths and
 * symlinks, EADDRINUSE/ECONNREFUSED/EPROTOTYPE/EISCONN/EACCES, backlog,
 * blocking accept, MSG_WAITALL, resets, poll and epoll readiness, large
 * transfers, SIGPIPE, splice and sendfile, /proc/self/fd links, timeouts. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/sockios.h>
#include <unistd.h>

static socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strncpy(a->sun_path, path, sizeof(a->sun_path) - 1);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

/* listener makes a stream socket listening at path. */
static int listener(const char *path, int backlog)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, backlog) < 0)
		return -1;
	return s;
}

static int connect_path(int s, const char *path)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	return connect(s, (struct sockaddr *)&a, len);
}

static void path_bind_connect_accept(void)
{
	ENTER();
	umask(022);
	int srv = CHECK_SYS(listener("s.sock", 4));
	struct stat st;
	CHECK_SYS(stat("s.sock", &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0755);
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect_path(cli, "s.sock"));
	int conn = CHECK_SYS(accept(srv, NULL, NULL));
	CHECK_EQ(write(cli, "hello", 5), 5);
	char buf[8];
	CHECK_EQ(read(conn, buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "hello", 5);
	/* The name is the path as given, with its NUL. */
	struct sockaddr_un got;
	socklen_t glen = sizeof(got);
	CHECK_SYS(getsockname(srv, (struct sockaddr *)&got, &glen));
	CHECK_EQ(glen, offsetof(struct sockaddr_un, sun_path) + 7);
	CHECK_STREQ(got.sun_path, "s.sock");
	glen = sizeof(got);
	CHECK_SYS(getpeername(cli, (struct sockaddr *)&got, &glen));
	CHECK_STREQ(got.sun_path, "s.sock");
	/* The accepted socket has the listener's name. */
	glen = sizeof(got);
	CHECK_SYS(getsockname(conn, (struct sockaddr *)&got, &glen));
	CHECK_STREQ(got.sun_path, "s.sock");
	/* A short buffer gets a prefix and the full length. */
	glen = 4;
	memset(&got, 0, sizeof(got));
	CHECK_SYS(getsockname(srv, (struct sockaddr *)&got, &glen));
	CHECK_EQ(glen, offsetof(struct sockaddr_un, sun_path) + 7);
	CHECK_EQ(got.sun_path[0], 's');
	CHECK_EQ(got.sun_path[1], '.');
	CHECK_EQ(got.sun_path[2], 0);
}

static void path_errors(void)
{
	ENTER();
	int srv = CHECK_SYS(listener("s.sock", 4));
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "s.sock");
	CHECK_ERR(bind(s, (struct sockaddr *)&a, len), EADDRINUSE);
	CHECK_SYS(close(CHECK_SYS(open("file", O_CREAT | O_WRONLY, 0600))));
	len = path_addr(&a, "file");
	CHECK_ERR(bind(s, (struct sockaddr *)&a, len), EADDRINUSE);
	CHECK_ERR(connect_path(s, "file"), ECONNREFUSED);
	CHECK_ERR(connect_path(s, "missing"), ENOENT);
	CHECK_ERR(connect_path(s, "file/x"), ENOTDIR);
	/* A datagram socket at the path: wrong type. */
	int d = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	len = path_addr(&a, "d.sock");
	CHECK_SYS(bind(d, (struct sockaddr *)&a, len));
	CHECK_ERR(connect_path(s, "d.sock"), EPROTOTYPE);
	/* A socket node whose socket is gone refuses. */
	CHECK_SYS(close(d));
	CHECK_ERR(connect_path(s, "d.sock"), ECONNREFUSED);
	/* After unlink the name is gone, the socket still listens. */
	CHECK_SYS(unlink("s.sock"));
	CHECK_ERR(connect_path(s, "s.sock"), ENOENT);
	int acc = 0;
	socklen_t l = sizeof(acc);
	CHECK_SYS(getsockopt(srv, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l));
	CHECK_EQ(acc, 1);
	/* A fresh socket may bind the name again. */
	int srv2 = CHECK_SYS(listener("s.sock", 1));
	CHECK_SYS(connect_path(s, "s.sock"));
	CHECK_ERR(connect_path(s, "s.sock"), EISCONN);
	CHECK_ERR(listen(s, 1), EINVAL);
	CHECK_ERR(connect_path(srv2, "s.sock"), EINVAL);
}

static void path_through_symlink(void)
{
	ENTER();
	int srv = CHECK_SYS(listener("real.sock", 4));
	CHECK_SYS(symlink("real.sock", "link.sock"));
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect_path(cli, "link.sock"));
	int conn = CHECK_SYS(accept(srv, NULL, NULL));
	CHECK_EQ(write(conn, "x", 1), 1);
	char c;
	CHECK_EQ(read(cli, &c, 1), 1);
	/* bind on an existing symlink is EADDRINUSE, not a follow. */
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "link.sock");
	CHECK_ERR(bind(s, (struct sockaddr *)&a, len), EADDRINUSE);
}

static void path_needs_write_permission(void)
{
	ENTER();
	umask(0);
	int srv = CHECK_SYS(listener("s.sock", 4));
	CHECK_SYS(chmod(".", 0755));
	CHECK_SYS(chmod("s.sock", 0755));
	AS_USER({
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		CHILD_ERR(connect_path(s, "s.sock"), EACCES);
	});
	CHECK_SYS(chmod("s.sock", 0777));
	AS_USER({
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		CHILD_CHECK(connect_path(s, "s.sock") == 0);
	});
	(void)srv;
}

static void backlog_full_eagain(void)
{
	ENTER();
	int srv = CHECK_SYS(listener("s.sock", 0));
	/* Backlog 0 takes one pending connection. */
	int c1 = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
	CHECK_SYS(connect_path(c1, "s.sock"));
	int c2 = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
	CHECK_ERR(connect_path(c2, "s.sock"), EAGAIN);
	CHECK_SYS(close(CHECK_SYS(accept(srv, NULL, NULL))));
	CHECK_SYS(connect_path(c2, "s.sock"));
}

static void *connect_later(void *arg)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect_path(s, (const char *)arg) < 0)
		return (void *)1;
	if (write(s, "late", 4) != 4)
		return (void *)2;
	return (void *)(long)s;
}

static void accept_blocks_until_connect(void)
{
	ENTER();
	int srv = CHECK_SYS(listener("s.sock", 4));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int conn = accept(srv, NULL, NULL);
		char buf[4];
		_exit(conn >= 0 && read(conn, buf, 4) == 4 && memcmp(buf, "late", 4) == 0 ? 0 : 1);
	}
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	pthread_t th;
	void *ret;
	CHECK_RET0(pthread_create(&th, NULL, connect_later, "s.sock"));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_GT((long)ret, 2);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void waitall_collects_pieces(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (int i = 0; i < 4; i++) {
			if (write(sv[1], "abcd" + i, 1) != 1)
				_exit(1);
			usleep(20000);
		}
		_exit(0);
	}
	char buf[4];
	CHECK_EQ(recv(sv[0], buf, 4, MSG_WAITALL), 4);
	CHECK_MEMEQ(buf, "abcd", 4);
	CHECK_EXITED(mt_wait(pid), 0);
	/* End of file cuts MSG_WAITALL short. */
	CHECK_EQ(write(sv[1], "xy", 2), 2);
	CHECK_SYS(shutdown(sv[1], SHUT_WR));
	CHECK_EQ(recv(sv[0], buf, 4, MSG_WAITALL), 2);
}

static void close_with_unread_data_resets(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "lost", 4), 4);
	CHECK_EQ(write(sv[1], "kept", 4), 4);
	CHECK_SYS(close(sv[1]));
	char buf[8];
	/* Data queued for the survivor is still read first. */
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "kept", 4);
	CHECK_ERR(read(sv[0], buf, sizeof(buf)), ECONNRESET);
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 0);
}

static void poll_states(void)
{
	ENTER();
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct pollfd pf = { .fd = s, .events = POLLIN | POLLOUT | POLLRDHUP };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT | POLLHUP);
	int srv = CHECK_SYS(listener("s.sock", 4));
	pf.fd = srv;
	CHECK_EQ(poll(&pf, 1, 0), 0);
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pf.fd = sv[0];
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	CHECK_SYS(shutdown(sv[1], SHUT_WR));
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLOUT | POLLRDHUP);
	CHECK_SYS(shutdown(sv[0], SHUT_WR));
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLOUT | POLLRDHUP | POLLHUP);
}

static void epoll_rdhup_edge(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = sv[0] };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev));
	struct epoll_event out[2];
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	CHECK_EQ(write(sv[1], "a", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	CHECK_SYS(shutdown(sv[1], SHUT_WR));
	CHECK_EQ(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(out[0].events, EPOLLIN | EPOLLRDHUP);
}

static void large_transfer_and_outq(void)
{
	enum { TOTAL = 1 << 20 };
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		static char chunk[10000];
		close(sv[0]);
		size_t sent = 0;
		while (sent < TOTAL) {
			size_t n = TOTAL - sent < sizeof(chunk) ? TOTAL - sent : sizeof(chunk);
			for (size_t i = 0; i < n; i++)
				chunk[i] = (char)((sent + i) * 7);
			ssize_t w = write(sv[1], chunk, n);
			if (w <= 0)
				_exit(1);
			sent += (size_t)w;
		}
		_exit(0);
	}
	close(sv[1]);
	static char buf[65536];
	size_t got = 0;
	int bad = 0;
	for (;;) {
		ssize_t n = read(sv[0], buf, sizeof(buf));
		CHECK_GE(n, 0);
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != (char)((got + (size_t)i) * 7))
				bad++;
		got += (size_t)n;
	}
	CHECK_EQ(got, TOTAL);
	CHECK_EQ(bad, 0);
	CHECK_EXITED(mt_wait(pid), 0);

	int p[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, p));
	CHECK_EQ(write(p[0], "12345", 5), 5);
	int q = 0;
	CHECK_SYS(ioctl(p[0], SIOCOUTQ, &q));
	CHECK_GT(q, 0);
	CHECK_SYS(ioctl(p[1], SIOCINQ, &q));
	CHECK_EQ(q, 5);
	char tmp[5];
	CHECK_EQ(read(p[1], tmp, 5), 5);
	CHECK_SYS(ioctl(p[0], SIOCOUTQ, &q));
	CHECK_EQ(q, 0);
}

static void nonblocking_fill_then_drain(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	static char buf[4096];
	long total = 0;
	for (;;) {
		ssize_t n = write(sv[0], buf, sizeof(buf));
		if (n < 0) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
		total += n;
		CHECK_LT(total, 64L << 20);
	}
	CHECK_GT(total, 0);
	struct pollfd pf = { .fd = sv[0], .events = POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	long drained = 0;
	for (;;) {
		ssize_t n = read(sv[1], buf, sizeof(buf));
		if (n < 0) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
		drained += n;
	}
	CHECK_EQ(drained, total);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
}

static void sigpipe_unless_nosignal(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_SYS(close(sv[1]));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		(void)write(sv[0], "x", 1);
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGPIPE);
	pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(send(sv[0], "x", 1, MSG_NOSIGNAL) == -1 && errno == EPIPE ? 0 : 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void splice_and_sendfile(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(sv[0], "spliced", 7), 7);
	CHECK_EQ(splice(sv[1], NULL, p[1], NULL, 7, 0), 7);
	char buf[16];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 7);
	CHECK_MEMEQ(buf, "spliced", 7);
	CHECK_EQ(write(p[1], "back", 4), 4);
	CHECK_EQ(splice(p[0], NULL, sv[0], NULL, 4, 0), 4);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "back", 4);
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_GT(st.st_size, 0);
	CHECK_LT(st.st_size, 1000);
	CHECK_EQ(sendfile(sv[0], fd, NULL, (size_t)st.st_size), st.st_size);
	char big[1000];
	CHECK_EQ(mt_read_n(sv[1], big, (size_t)st.st_size, 1000), st.st_size);
}

static void proc_fd_link_and_fstat(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct stat st;
	CHECK_SYS(fstat(sv[0], &st));
	CHECK(S_ISSOCK(st.st_mode));
	char path[64], link[64], want[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", sv[0]);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	snprintf(want, sizeof(want), "socket:[%lu]", (unsigned long)st.st_ino);
	CHECK_STREQ(link, want);
	struct stat st2;
	CHECK_SYS(fstat(sv[1], &st2));
	CHECK_NE(st.st_ino, st2.st_ino);
	/* Sockets cannot be opened through /proc. */
	CHECK_ERR(open(path, O_RDWR), ENXIO);
	CHECK_ERR(lseek(sv[0], 0, SEEK_SET), ESPIPE);
}

static void rcvtimeo_times_out(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	char c;
	int64_t t0 = mt_now_ns();
	CHECK_ERR(recv(sv[0], &c, 1, 0), EAGAIN);
	CHECK_GE(mt_now_ns() - t0, 90000000);
	tv.tv_sec = 2;
	tv.tv_usec = 0;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	struct timeval got;
	socklen_t len = sizeof(got);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &got, &len));
	CHECK_EQ(len, sizeof(got));
	CHECK_EQ(got.tv_sec, 2);
	CHECK_EQ(got.tv_usec, 0);
	tv.tv_usec = 1000000;
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), EDOM);
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, 8), EINVAL);
}

static void buffer_sizes_double(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int v = 10000;
	socklen_t len = sizeof(v);
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, &len));
	CHECK_EQ(v, 20000);
	v = 10000;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &v, &len));
	CHECK_EQ(v, 20000);
	v = 1;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, &len));
	CHECK_GT(v, 2);
	CHECK_LE(v, 8192);
	v = 1;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v)));
	v = 0;
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_REUSEADDR, &v, &len));
	CHECK_EQ(v, 1);
	short sh = 1;
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sh, sizeof(sh)), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(path_bind_connect_accept),
	MT_CASE(path_errors),
	MT_CASE(path_through_symlink),
	MT_CASE(path_needs_write_permission),
	MT_CASE(backlog_full_eagain),
	MT_CASE(accept_blocks_until_connect),
	MT_CASE(waitall_collects_pieces),
	MT_CASE(close_with_unread_data_resets),
	MT_CASE(poll_states),
	MT_CASE(epoll_rdhup_edge),
	MT_CASE(large_transfer_and_outq),
	MT_CASE(nonblocking_fill_then_drain),
	MT_CASE(sigpipe_unless_nosignal),
	MT_CASE(splice_and_sendfile),
	MT_CASE(proc_fd_link_and_fstat),
	MT_CASE(rcvtimeo_times_out),
	MT_CASE(buffer_sizes_double),
};

MT_MAIN(cases)
