//go:build ignore

/* unix_iov: data movement on AF_UNIX sockets through vectors and flags:
 * readv/writev, scatter-gather sendmsg/recvmsg across iovecs, a datagram
 * spread over several iovecs, MSG_TRUNC and MSG_PEEK on streams,
 * recvmsg's msg_namelen and msg_controllen write-back, zero-length
 * reads, and recvmmsg with a timeout. */
#include "moattest.h"

#include <stddef.h>
#include <stdio.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/sockios.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void readv_writev(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct iovec out[3] = { { "ab", 2 }, { "", 0 }, { "cdef", 4 } };
	CHECK_EQ(writev(sv[0], out, 3), 6);
	char x[3], y[10];
	struct iovec in[2] = { { x, 3 }, { y, sizeof(y) } };
	CHECK_EQ(readv(sv[1], in, 2), 6);
	CHECK_MEMEQ(x, "abc", 3);
	CHECK_MEMEQ(y, "def", 3);
}

static void datagram_across_iovecs(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct iovec out[3] = { { "one-", 4 }, { "two-", 4 }, { "three", 5 } };
	struct msghdr mh = { .msg_iov = out, .msg_iovlen = 3 };
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 13);
	char a[5], b[20];
	struct iovec in[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct msghdr rm = { .msg_iov = in, .msg_iovlen = 2 };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 13);
	CHECK_MEMEQ(a, "one-t", 5);
	CHECK_MEMEQ(b, "wo-three", 8);
	CHECK_EQ(rm.msg_flags, 0);
}

static void stream_trunc_and_peek(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "abcdef", 6), 6);
	char buf[8];
	/* MSG_TRUNC means nothing special on a Unix stream: bytes are read. */
	CHECK_EQ(recv(sv[1], buf, 2, MSG_TRUNC), 2);
	CHECK_MEMEQ(buf, "ab", 2);
	CHECK_EQ(recv(sv[1], buf, 3, MSG_PEEK), 3);
	CHECK_MEMEQ(buf, "cde", 3);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_PEEK), 4);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 4);
	CHECK_MEMEQ(buf, "cdef", 4);
	/* A zero-length read returns 0 at once when data waits, and waits
	 * (here: EAGAIN) when none does. */
	CHECK_ERR(recv(sv[1], buf, 0, MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(write(sv[0], "z", 1), 1);
	CHECK_EQ(recv(sv[1], buf, 0, 0), 0);
	CHECK_EQ(read(sv[1], buf, 0), 0);
	CHECK_EQ(read(sv[1], buf, 1), 1);
	CHECK_EQ(buf[0], 'z');
}

static void recvmsg_writes_back_lengths(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(send(sv[0], "n", 1, 0), 1);
	char c;
	struct iovec iov = { &c, 1 };
	struct sockaddr_un from;
	char ctl[64];
	struct msghdr rm = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
			     .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl),
			     .msg_flags = 12345 };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 1);
	/* Unbound sender: no name; no control data; flags reset. */
	CHECK_EQ(rm.msg_namelen, 0);
	CHECK_EQ(rm.msg_controllen, 0);
	CHECK_EQ(rm.msg_flags, 0);
}

static void recvmmsg_timeout(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	for (int i = 0; i < 3; i++)
		CHECK_EQ(send(sv[0], "t", 1, 0), 1);
	char bufs[4][4];
	struct iovec iov[4];
	struct mmsghdr in[4];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 4; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
		in[i].msg_hdr.msg_iov = &iov[i];
		in[i].msg_hdr.msg_iovlen = 1;
	}
	/* A zero timeout stops after the first message. */
	struct timespec ts = { 0, 0 };
	CHECK_EQ(recvmmsg(sv[1], in, 4, 0, &ts), 1);
	ts.tv_nsec = 2000000000L;
	CHECK_ERR(recvmmsg(sv[1], in, 4, 0, &ts), EINVAL);
	CHECK_EQ(recvmmsg(sv[1], in, 4, MSG_DONTWAIT, NULL), 2);
}

static void flags_and_queries(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	/* Unix sockets have no error queue: MSG_ERRQUEUE reads data. */
	CHECK_EQ(send(sv[0], "abc", 3, MSG_EOR | MSG_MORE), 3);
	char buf[8];
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_ERRQUEUE), 3);
	int v = 4;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)));
	v = 0;
	socklen_t l = sizeof(v);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_RCVLOWAT, &v, &l));
	CHECK_EQ(v, 4);
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_SNDLOWAT, &v, sizeof(v)), ENOPROTOOPT);
	/* Fresh sockets: a datagram one is writable, a seqpacket one hung up. */
	int d = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	int q = CHECK_SYS(socket(AF_UNIX, SOCK_SEQPACKET, 0));
	struct pollfd pf[2] = { { d, POLLIN | POLLOUT | POLLRDHUP, 0 }, { q, POLLIN | POLLOUT | POLLRDHUP, 0 } };
	CHECK_EQ(poll(pf, 2, 0), 2);
	CHECK_EQ(pf[0].revents, POLLOUT);
	CHECK_EQ(pf[1].revents, POLLOUT | POLLHUP);
	/* A listener: SIOCINQ is EINVAL, SIOCOUTQ 0. */
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	CHECK_SYS(bind(q, (struct sockaddr *)&a, sizeof(sa_family_t)));
	CHECK_SYS(listen(q, 1));
	CHECK_ERR(ioctl(q, SIOCINQ, &v), EINVAL);
	v = -1;
	CHECK_SYS(ioctl(q, SIOCOUTQ, &v));
	CHECK_EQ(v, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(readv_writev),
	MT_CASE(datagram_across_iovecs),
	MT_CASE(stream_trunc_and_peek),
	MT_CASE(recvmsg_writes_back_lengths),
	MT_CASE(recvmmsg_timeout),
	MT_CASE(flags_and_queries),
};

MT_MAIN(cases)
