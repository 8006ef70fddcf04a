//go:build ignore

/* unix_socket: AF_UNIX sockets without a writable file system: socketpair
 * (stream, datagram, seqpacket), abstract-namespace bind/listen/connect/
 * accept, SCM_RIGHTS and SCM_CREDENTIALS, shutdown, peer credentials,
 * non-blocking behaviour, MSG_PEEK/MSG_DONTWAIT/MSG_TRUNC, and errors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* abstract_addr fills an abstract-namespace address ("\0moat-RANDOM-NAME");
 * the random part keeps concurrent runs sharing a network namespace apart. */
static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	static unsigned long long token;
	while (token == 0)
		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			token = (unsigned long long)mt_now_ns();
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	a->sun_path[0] = 0;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "moat-%llx-%s", token, name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static void socketpair_stream_roundtrip(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "ping", 4), 4);
	char buf[16];
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "ping", 4);
	CHECK_EQ(send(sv[1], "pong", 4, 0), 4);
	CHECK_EQ(recv(sv[0], buf, sizeof(buf), 0), 4);
	CHECK_MEMEQ(buf, "pong", 4);
	int type = 0;
	socklen_t len = sizeof(type);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len));
	CHECK_EQ(type, SOCK_STREAM);
	struct stat st;
	CHECK_SYS(fstat(sv[0], &st));
	CHECK(S_ISSOCK(st.st_mode));
}

static void socketpair_stream_merges(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "ab", 2), 2);
	CHECK_EQ(write(sv[0], "cd", 2), 2);
	char buf[16];
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "abcd", 4);
}

static void socketpair_dgram_boundaries(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(send(sv[0], "one", 3, 0), 3);
	CHECK_EQ(send(sv[0], "three", 5, 0), 5);
	char buf[16];
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 3);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 5);
	/* A short buffer truncates and drops the rest; MSG_TRUNC tells the
	 * real length. */
	CHECK_EQ(send(sv[0], "abcdef", 6, 0), 6);
	CHECK_EQ(recv(sv[1], buf, 2, MSG_TRUNC), 6);
	CHECK_SYS(fcntl(sv[1], F_SETFL, O_NONBLOCK));
	CHECK_ERR(recv(sv[1], buf, sizeof(buf), 0), EAGAIN);
	/* Zero-length datagrams exist. */
	CHECK_EQ(send(sv[0], "", 0, 0), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 0);
}

static void socketpair_seqpacket(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	CHECK_EQ(send(sv[0], "rec1", 4, 0), 4);
	CHECK_EQ(send(sv[0], "record2", 7, 0), 7);
	char buf[4];
	struct iovec iov = { buf, 2 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 2);
	CHECK_EQ(mh.msg_flags & MSG_TRUNC, MSG_TRUNC);
	char big[16];
	CHECK_EQ(recv(sv[1], big, sizeof(big), 0), 7);
	close(sv[0]);
	CHECK_EQ(recv(sv[1], big, sizeof(big), 0), 0);
}

static void socketpair_errors(void)
{
	int sv[2];
	CHECK_ERR(socketpair(AF_UNIX, 42, 0, sv), EINVAL);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM, 7, sv), EPROTONOSUPPORT);
	CHECK_ERR(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP);
	CHECK_ERR(socketpair(AF_UNIX, SOCK_STREAM | 0x40000, 0, sv), EINVAL);
	CHECK_ERR(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, (void *)8), EFAULT);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
	CHECK_EQ(fcntl(sv[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(sv[1], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
}

static void shutdown_directions(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_SYS(shutdown(sv[0], SHUT_WR));
	char buf[4];
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 0);
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	/* The other direction still works. */
	CHECK_EQ(write(sv[1], "y", 1), 1);
	CHECK_EQ(read(sv[0], buf, 1), 1);
	CHECK_ERR(shutdown(sv[0], 42), EINVAL);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(shutdown(p[0], SHUT_RD), ENOTSOCK);
}

static void peer_close_epipe_and_eof(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[1], "last", 4), 4);
	close(sv[1]);
	char buf[8];
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 4);
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 0);
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	struct pollfd pf = { .fd = sv[0], .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK(pf.revents & POLLHUP);
}

static void msg_peek_and_dontwait(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	char buf[8];
	CHECK_ERR(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(write(sv[1], "peek", 4), 4);
	CHECK_EQ(recv(sv[0], buf, sizeof(buf), MSG_PEEK), 4);
	int n = 0;
	CHECK_SYS(ioctl(sv[0], FIONREAD, &n));
	CHECK_EQ(n, 4);
	CHECK_EQ(recv(sv[0], buf, sizeof(buf), 0), 4);
	CHECK_MEMEQ(buf, "peek", 4);
}

static void abstract_listen_connect_accept(void)
{
	struct sockaddr_un a;
	socklen_t alen = abstract_addr(&a, "srv");
	int srv = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(bind(srv, (struct sockaddr *)&a, alen));
	CHECK_SYS(listen(srv, 4));
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect(cli, (struct sockaddr *)&a, alen));
	struct sockaddr_un peer;
	socklen_t plen = sizeof(peer);
	int conn = CHECK_SYS(accept(srv, (struct sockaddr *)&peer, &plen));
	/* An unbound client has an address of just the family. */
	CHECK_EQ(plen, sizeof(sa_family_t));
	CHECK_EQ(write(cli, "hi", 2), 2);
	char buf[4];
	CHECK_EQ(read(conn, buf, sizeof(buf)), 2);
	struct sockaddr_un got;
	socklen_t glen = sizeof(got);
	CHECK_SYS(getsockname(srv, (struct sockaddr *)&got, &glen));
	CHECK_EQ(glen, alen);
	CHECK_MEMEQ(&got, &a, alen);
	glen = sizeof(got);
	CHECK_SYS(getpeername(cli, (struct sockaddr *)&got, &glen));
	CHECK_EQ(glen, alen);
	int acc = 0;
	socklen_t l = sizeof(acc);
	CHECK_SYS(getsockopt(srv, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l));
	CHECK_EQ(acc, 1);
}

static void abstract_errors(void)
{
	struct sockaddr_un a;
	socklen_t alen = abstract_addr(&a, "err");
	int s1 = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(bind(s1, (struct sockaddr *)&a, alen));
	int s2 = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(s2, (struct sockaddr *)&a, alen), EADDRINUSE);
	CHECK_ERR(bind(s1, (struct sockaddr *)&a, alen), EINVAL);
	struct sockaddr_un b;
	socklen_t blen = abstract_addr(&b, "nobody");
	CHECK_ERR(connect(s2, (struct sockaddr *)&b, blen), ECONNREFUSED);
	/* Bound but not listening: refused too. */
	CHECK_ERR(connect(s2, (struct sockaddr *)&a, alen), ECONNREFUSED);
	CHECK_ERR(accept(s1, NULL, NULL), EINVAL);
	CHECK_ERR(bind(s2, (struct sockaddr *)&a, 1), EINVAL);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(bind(p[0], (struct sockaddr *)&a, alen), ENOTSOCK);
	CHECK_ERR(listen(p[0], 1), ENOTSOCK);
	char buf[1];
	CHECK_ERR(recv(p[0], buf, 1, 0), ENOTSOCK);
}

static void filesystem_bind_erofs(void)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	strcpy(a.sun_path, "/tmp/moat-test.sock");
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(s, (struct sockaddr *)&a, sizeof(a)), EROFS);
	strcpy(a.sun_path, "/nonexistent-dir/x.sock");
	CHECK_ERR(bind(s, (struct sockaddr *)&a, sizeof(a)), ENOENT);
	strcpy(a.sun_path, "/etc/passwd");
	CHECK_ERR(connect(s, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
}

static void nonblocking_connect_accept(void)
{
	struct sockaddr_un a;
	socklen_t alen = abstract_addr(&a, "nb");
	int srv = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
	CHECK_SYS(bind(srv, (struct sockaddr *)&a, alen));
	CHECK_SYS(listen(srv, 1));
	CHECK_ERR(accept(srv, NULL, NULL), EAGAIN);
	struct pollfd pf = { .fd = srv, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect(cli, (struct sockaddr *)&a, alen));
	CHECK_EQ(poll(&pf, 1, 1000), 1);
	int conn = CHECK_SYS(accept4(srv, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));
	CHECK_EQ(fcntl(conn, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(conn, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	char c;
	CHECK_ERR(read(conn, &c, 1), EAGAIN);
}

static void scm_rights_passes_fd(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(lseek(fd, 5, SEEK_SET), 5);
	char data = 'F';
	struct iovec iov = { &data, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	close(fd);

	char got = 0;
	struct iovec riov = { &got, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ru;
	struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1, .msg_control = ru.buf,
			     .msg_controllen = sizeof(ru.buf) };
	CHECK_EQ(recvmsg(sv[1], &rm, MSG_CMSG_CLOEXEC), 1);
	CHECK_EQ(got, 'F');
	struct cmsghdr *rc = CMSG_FIRSTHDR(&rm);
	CHECK(rc != NULL);
	CHECK_EQ(rc->cmsg_level, SOL_SOCKET);
	CHECK_EQ(rc->cmsg_type, SCM_RIGHTS);
	int newfd;
	memcpy(&newfd, CMSG_DATA(rc), sizeof(int));
	CHECK_GE(newfd, 0);
	/* Same open file: shared offset; MSG_CMSG_CLOEXEC applied. */
	CHECK_EQ(lseek(newfd, 0, SEEK_CUR), 5);
	CHECK_EQ(fcntl(newfd, F_GETFD), FD_CLOEXEC);
}

static void scm_rights_truncated_ctrunc(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int fds[2] = { 0, 1 };
	char data = 'x';
	struct iovec iov = { &data, 1 };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	/* No room for control data: the descriptors are dropped. */
	struct msghdr rm = { .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 1);
	CHECK_EQ(rm.msg_flags & MSG_CTRUNC, MSG_CTRUNC);
	/* A bad descriptor in SCM_RIGHTS: EBADF. */
	fds[1] = 999;
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EBADF);
}

static void peer_credentials(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct ucred cr;
	socklen_t len = sizeof(cr);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cr, &len));
	CHECK_EQ(len, sizeof(cr));
	CHECK_EQ(cr.pid, getpid());
	CHECK_EQ(cr.uid, getuid());
	CHECK_EQ(cr.gid, getgid());
}

static void scm_credentials(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int on = 1;
	CHECK_SYS(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	CHECK_EQ(send(sv[0], "c", 1, 0), 1);
	char data;
	struct iovec iov = { &data, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct msghdr rm = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 1);
	struct cmsghdr *c = CMSG_FIRSTHDR(&rm);
	CHECK(c != NULL);
	CHECK_EQ(c->cmsg_type, SCM_CREDENTIALS);
	struct ucred cr;
	memcpy(&cr, CMSG_DATA(c), sizeof(cr));
	CHECK_EQ(cr.pid, getpid());
	CHECK_EQ(cr.uid, getuid());
}

static void cross_process_stream(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		close(sv[0]);
		char buf[64];
		ssize_t n = read(sv[1], buf, sizeof(buf));
		if (n != 5)
			_exit(1);
		for (int i = 0; i < 5; i++)
			buf[i] = (char)(buf[i] - 32);
		_exit(write(sv[1], buf, 5) == 5 ? 0 : 2);
	}
	close(sv[1]);
	CHECK_EQ(write(sv[0], "hello", 5), 5);
	char buf[8];
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "HELLO", 5);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 0);
}

static void socket_buffer_options(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int v = 0;
	socklen_t len = sizeof(v);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, &len));
	CHECK_GT(v, 0);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &v, &len));
	CHECK_EQ(v, AF_UNIX);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &v, &len));
	CHECK_EQ(v, 0);
	CHECK_ERR(getsockopt(sv[0], SOL_SOCKET, 9999, &v, &len), ENOPROTOOPT);
	len = 1;
	CHECK_ERR(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, (void *)8, &len), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(socketpair_stream_roundtrip),
	MT_CASE(socketpair_stream_merges),
	MT_CASE(socketpair_dgram_boundaries),
	MT_CASE(socketpair_seqpacket),
	MT_CASE(socketpair_errors),
	MT_CASE(shutdown_directions),
	MT_CASE(peer_close_epipe_and_eof),
	MT_CASE(msg_peek_and_dontwait),
	MT_CASE(abstract_listen_connect_accept),
	MT_CASE(abstract_errors),
	MT_CASE(filesystem_bind_erofs),
	MT_CASE(nonblocking_connect_accept),
	MT_CASE(scm_rights_passes_fd),
	MT_CASE(scm_rights_truncated_ctrunc),
	MT_CASE(peer_credentials),
	MT_CASE(scm_credentials),
	MT_CASE(cross_process_stream),
	MT_CASE(socket_buffer_options),
};

MT_MAIN(cases)
