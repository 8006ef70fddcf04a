//go:build ignore

/* unix_dgram: AF_UNIX datagram and seqpacket sockets: sendto/recvfrom
 * between bound paths, sender addresses, autobind, connect and
 * disconnect, EPERM to a socket connected elsewhere, the receive queue
 * limit, a closed peer (ECONNREFUSED, then ENOTCONN), EMSGSIZE, MSG_PEEK
 * and SIOCINQ, sendmmsg/recvmmsg, seqpacket listen/accept, records and
 * end of file, shutdown, and sendto on stream sockets. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/random.h>
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

/* abstract_addr fills a random abstract-namespace address, apart from
 * concurrent runs. */
static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	static unsigned long long token;
	while (token == 0)
		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			token = (unsigned long long)mt_now_ns();
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "moat-dg-%llx-%s", token, name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int bound_dgram(const char *path)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, len) < 0)
		return -1;
	return s;
}

static void sendto_recvfrom_addresses(void)
{
	ENTER();
	int a = CHECK_SYS(bound_dgram("a.sock"));
	int b = CHECK_SYS(bound_dgram("b.sock"));
	struct sockaddr_un to, from;
	socklen_t tolen = path_addr(&to, "b.sock");
	CHECK_EQ(sendto(a, "hi", 2, 0, (struct sockaddr *)&to, tolen), 2);
	char buf[8];
	socklen_t flen = sizeof(from);
	CHECK_EQ(recvfrom(b, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 2);
	CHECK_EQ(flen, offsetof(struct sockaddr_un, sun_path) + 7);
	CHECK_STREQ(from.sun_path, "a.sock");
	/* An unbound sender has no address at all. */
	int u = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_EQ(sendto(u, "x", 1, 0, (struct sockaddr *)&to, tolen), 1);
	flen = sizeof(from);
	CHECK_EQ(recvfrom(b, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 1);
	CHECK_EQ(flen, 0);
	/* No destination and no peer. */
	CHECK_ERR(send(u, "x", 1, 0), ENOTCONN);
	CHECK_ERR(write(u, "x", 1), ENOTCONN);
	struct sockaddr_un nobody;
	socklen_t nlen = path_addr(&nobody, "nobody.sock");
	CHECK_ERR(sendto(u, "x", 1, 0, (struct sockaddr *)&nobody, nlen), ENOENT);
}

static void autobind_names(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	CHECK_SYS(bind(s, (struct sockaddr *)&a, sizeof(sa_family_t)));
	struct sockaddr_un got;
	socklen_t glen = sizeof(got);
	CHECK_SYS(getsockname(s, (struct sockaddr *)&got, &glen));
	CHECK_EQ(glen, offsetof(struct sockaddr_un, sun_path) + 6);
	CHECK_EQ(got.sun_path[0], 0);
	for (int i = 1; i < 6; i++)
		CHECK(strchr("0123456789abcdef", got.sun_path[i]) != NULL);
	/* The autobound name reaches the socket. */
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_EQ(sendto(c, "q", 1, 0, (struct sockaddr *)&got, glen), 1);
	char ch;
	CHECK_EQ(recv(s, &ch, 1, 0), 1);
	/* SO_PASSCRED autobinds an unbound sender. */
	int on = 1;
	CHECK_SYS(setsockopt(c, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	CHECK_EQ(sendto(c, "r", 1, 0, (struct sockaddr *)&got, glen), 1);
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	CHECK_EQ(recvfrom(s, &ch, 1, 0, (struct sockaddr *)&from, &flen), 1);
	CHECK_EQ(flen, offsetof(struct sockaddr_un, sun_path) + 6);
	CHECK_EQ(from.sun_path[0], 0);
}

static void connect_and_disconnect(void)
{
	ENTER();
	int a = CHECK_SYS(bound_dgram("a.sock"));
	int b = CHECK_SYS(bound_dgram("b.sock"));
	struct sockaddr_un to;
	socklen_t tolen = path_addr(&to, "b.sock");
	CHECK_SYS(connect(a, (struct sockaddr *)&to, tolen));
	CHECK_EQ(send(a, "c1", 2, 0), 2);
	CHECK_EQ(write(a, "c2", 2), 2);
	struct sockaddr_un peer;
	socklen_t plen = sizeof(peer);
	CHECK_SYS(getpeername(a, (struct sockaddr *)&peer, &plen));
	CHECK_STREQ(peer.sun_path, "b.sock");
	char buf[4];
	CHECK_EQ(read(b, buf, sizeof(buf)), 2);
	CHECK_EQ(read(b, buf, sizeof(buf)), 2);
	struct sockaddr un = { .sa_family = AF_UNSPEC };
	CHECK_SYS(connect(a, &un, sizeof(un)));
	CHECK_ERR(send(a, "x", 1, 0), ENOTCONN);
	plen = sizeof(peer);
	CHECK_ERR(getpeername(a, (struct sockaddr *)&peer, &plen), ENOTCONN);
}

static void send_to_socket_connected_elsewhere(void)
{
	ENTER();
	int a = CHECK_SYS(bound_dgram("a.sock"));
	int b = CHECK_SYS(bound_dgram("b.sock"));
	int c = CHECK_SYS(bound_dgram("c.sock"));
	struct sockaddr_un sa;
	socklen_t len = path_addr(&sa, "b.sock");
	CHECK_SYS(connect(a, (struct sockaddr *)&sa, len));
	len = path_addr(&sa, "a.sock");
	CHECK_ERR(sendto(c, "x", 1, 0, (struct sockaddr *)&sa, len), EPERM);
	CHECK_ERR(connect(c, (struct sockaddr *)&sa, len), EPERM);
	/* b, its peer's destination, may send to a. */
	CHECK_EQ(sendto(b, "y", 1, 0, (struct sockaddr *)&sa, len), 1);
}

static void receive_queue_limit(void)
{
	ENTER();
	int r = CHECK_SYS(bound_dgram("r.sock"));
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0));
	struct sockaddr_un to;
	socklen_t tolen = path_addr(&to, "r.sock");
	int sent = 0;
	for (;;) {
		ssize_t n = sendto(s, "d", 1, 0, (struct sockaddr *)&to, tolen);
		if (n < 0) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
		sent++;
		CHECK_LT(sent, 100000);
	}
	CHECK_GT(sent, 0);
	char c;
	for (int i = 0; i < sent; i++)
		CHECK_EQ(recv(r, &c, 1, MSG_DONTWAIT), 1);
	CHECK_ERR(recv(r, &c, 1, MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(sendto(s, "d", 1, 0, (struct sockaddr *)&to, tolen), 1);
}

static void closed_peer_refused_then_notconn(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_SYS(close(sv[1]));
	CHECK_ERR(send(sv[0], "x", 1, 0), ECONNREFUSED);
	CHECK_ERR(send(sv[0], "x", 1, 0), ENOTCONN);
}

static void emsgsize_beyond_sndbuf(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int v = 8192;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	static char big[65536];
	CHECK_ERR(send(sv[0], big, sizeof(big), 0), EMSGSIZE);
	CHECK_EQ(send(sv[0], big, 4096, 0), 4096);
	CHECK_EQ(recv(sv[1], big, sizeof(big), 0), 4096);
}

static void peek_and_inq(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(send(sv[0], "first", 5, 0), 5);
	CHECK_EQ(send(sv[0], "second!", 7, 0), 7);
	int n = 0;
	CHECK_SYS(ioctl(sv[1], SIOCINQ, &n));
	CHECK_EQ(n, 5);
	char buf[16];
	CHECK_EQ(recv(sv[1], buf, 2, MSG_PEEK | MSG_TRUNC), 5);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_PEEK), 5);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 5);
	CHECK_MEMEQ(buf, "first", 5);
	CHECK_SYS(ioctl(sv[1], SIOCINQ, &n));
	CHECK_EQ(n, 7);
	struct iovec iov = { buf, 3 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 3);
	CHECK_EQ(mh.msg_flags, MSG_TRUNC);
	CHECK_SYS(ioctl(sv[1], SIOCINQ, &n));
	CHECK_EQ(n, 0);
}

static void mmsg_batches(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct iovec iov[3] = { { "a", 1 }, { "bb", 2 }, { "ccc", 3 } };
	struct mmsghdr out[3];
	memset(out, 0, sizeof(out));
	for (int i = 0; i < 3; i++) {
		out[i].msg_hdr.msg_iov = &iov[i];
		out[i].msg_hdr.msg_iovlen = 1;
	}
	CHECK_EQ(sendmmsg(sv[0], out, 3, 0), 3);
	CHECK_EQ(out[2].msg_len, 3);
	char bufs[4][8];
	struct iovec riov[4];
	struct mmsghdr in[4];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 4; i++) {
		riov[i].iov_base = bufs[i];
		riov[i].iov_len = sizeof(bufs[i]);
		in[i].msg_hdr.msg_iov = &riov[i];
		in[i].msg_hdr.msg_iovlen = 1;
	}
	CHECK_EQ(recvmmsg(sv[1], in, 4, MSG_DONTWAIT, NULL), 3);
	CHECK_EQ(in[0].msg_len, 1);
	CHECK_EQ(in[1].msg_len, 2);
	CHECK_EQ(in[2].msg_len, 3);
	CHECK_MEMEQ(bufs[2], "ccc", 3);
	CHECK_ERR(recvmmsg(sv[1], in, 4, MSG_DONTWAIT, NULL), EAGAIN);
	CHECK_EQ(send(sv[0], "z", 1, 0), 1);
	CHECK_EQ(recvmmsg(sv[1], in, 4, MSG_WAITFORONE, NULL), 1);
}

static void seqpacket_listen_accept(void)
{
	struct sockaddr_un a;
	socklen_t alen = abstract_addr(&a, "seq");
	int srv = CHECK_SYS(socket(AF_UNIX, SOCK_SEQPACKET, 0));
	CHECK_SYS(bind(srv, (struct sockaddr *)&a, alen));
	CHECK_SYS(listen(srv, 2));
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_SEQPACKET, 0));
	char buf[16];
	CHECK_ERR(recv(cli, buf, sizeof(buf), MSG_DONTWAIT), ENOTCONN);
	CHECK_ERR(send(cli, "x", 1, 0), ENOTCONN);
	CHECK_SYS(connect(cli, (struct sockaddr *)&a, alen));
	int conn = CHECK_SYS(accept(srv, NULL, NULL));
	CHECK_EQ(send(cli, "one", 3, 0), 3);
	CHECK_EQ(send(cli, "", 0, 0), 0);
	CHECK_EQ(send(cli, "three", 5, 0), 5);
	CHECK_EQ(recv(conn, buf, sizeof(buf), 0), 3);
	CHECK_EQ(recv(conn, buf, sizeof(buf), 0), 0);
	CHECK_EQ(recv(conn, buf, 2, MSG_TRUNC), 5);
	int type = 0;
	socklen_t tl = sizeof(type);
	CHECK_SYS(getsockopt(conn, SOL_SOCKET, SO_TYPE, &type, &tl));
	CHECK_EQ(type, SOCK_SEQPACKET);
	/* Abstract names are per type: a datagram socket finds nothing
	 * there, and may bind the same name. */
	int d = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_ERR(connect(d, (struct sockaddr *)&a, alen), ECONNREFUSED);
	CHECK_SYS(bind(d, (struct sockaddr *)&a, alen));
	/* The peer's close reads as end of file, even not waiting, and
	 * sends fail. */
	CHECK_SYS(close(cli));
	CHECK_EQ(recv(conn, buf, sizeof(buf), MSG_DONTWAIT), 0);
	CHECK_EQ(recv(conn, buf, sizeof(buf), 0), 0);
	CHECK_EQ(read(conn, buf, sizeof(buf)), 0);
	CHECK_ERR(send(conn, "x", 1, MSG_NOSIGNAL), EPIPE);
	struct pollfd pf = { .fd = conn, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLHUP);
}

static void shutdown_datagram(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_SYS(shutdown(sv[0], SHUT_RD));
	char c;
	/* Not waiting: EAGAIN even after SHUT_RD. */
	CHECK_ERR(recv(sv[0], &c, 1, MSG_DONTWAIT), EAGAIN);
	/* Sending to it is EPIPE (no SIGPIPE for datagrams)... */
	CHECK_ERR(send(sv[1], "p", 1, 0), EPIPE);
	/* ...and a blocking read of an empty queue is end of file. */
	CHECK_EQ(recv(sv[0], &c, 1, 0), 0);
	/* SHUT_WR stops this side's sends only. */
	CHECK_SYS(shutdown(sv[1], SHUT_WR));
	CHECK_ERR(send(sv[1], "p", 1, 0), EPIPE);
	CHECK_EQ(send(sv[0], "q", 1, 0), 1);
	CHECK_EQ(recv(sv[1], &c, 1, 0), 1);
}

static void sendto_on_stream(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct sockaddr_un a;
	socklen_t alen = abstract_addr(&a, "none");
	CHECK_ERR(sendto(sv[0], "x", 1, 0, (struct sockaddr *)&a, alen), EISCONN);
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(sendto(s, "x", 1, 0, (struct sockaddr *)&a, alen), EOPNOTSUPP);
	CHECK_ERR(send(s, "x", 1, 0), ENOTCONN);
	char c;
	CHECK_ERR(recv(s, &c, 1, 0), EINVAL);
	/* A stream socket's recvfrom address is its peer's, empty here. */
	CHECK_EQ(write(sv[1], "y", 1), 1);
	socklen_t flen = sizeof(a);
	CHECK_EQ(recvfrom(sv[0], &c, 1, 0, (struct sockaddr *)&a, &flen), 1);
	CHECK_EQ(flen, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(sendto_recvfrom_addresses),
	MT_CASE(autobind_names),
	MT_CASE(connect_and_disconnect),
	MT_CASE(send_to_socket_connected_elsewhere),
	MT_CASE(receive_queue_limit),
	MT_CASE(closed_peer_refused_then_notconn),
	MT_CASE(emsgsize_beyond_sndbuf),
	MT_CASE(peek_and_inq),
	MT_CASE(mmsg_batches),
	MT_CASE(seqpacket_listen_accept),
	MT_CASE(shutdown_datagram),
	MT_CASE(sendto_on_stream),
};

MT_MAIN(cases)
