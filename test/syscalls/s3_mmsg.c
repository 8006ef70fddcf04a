//go:build ignore

/* s3_mmsg: sendmmsg and recvmmsg on unix datagram, seqpacket and stream
 * sockets: msg_len of each entry, vlen 0, vlen above UIO_MAXIOV (capped),
 * a faulting entry after good ones (partial count) and as the first one
 * (EFAULT), addresses filled per message, truncation flags per entry,
 * MSG_DONTWAIT/MSG_WAITFORONE, a full socket buffer, a peer that closed
 * (EPIPE/0), and the flag and descriptor errors. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define N 8

static struct iovec oiov[N], iiov[N];
static char ibuf[N][64];

static void prep_out(struct mmsghdr *m, int n, const char *prefix)
{
	static char obuf[N][32];
	memset(m, 0, sizeof(*m) * n);
	for (int i = 0; i < n; i++) {
		snprintf(obuf[i], sizeof obuf[i], "%s%d", prefix, i);
		oiov[i].iov_base = obuf[i];
		oiov[i].iov_len = strlen(obuf[i]);
		m[i].msg_hdr.msg_iov = &oiov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
}

static void prep_in(struct mmsghdr *m, int n, size_t len)
{
	memset(m, 0, sizeof(*m) * n);
	memset(ibuf, 0, sizeof ibuf);
	for (int i = 0; i < n; i++) {
		iiov[i].iov_base = ibuf[i];
		iiov[i].iov_len = len;
		m[i].msg_hdr.msg_iov = &iiov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_len = 12345;
	}
}

static void msg_len_per_entry(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct mmsghdr out[4], in[4];
	prep_out(out, 4, "msg-");
	oiov[2].iov_len = 0; /* an empty datagram */
	CHECK_EQ(sendmmsg(sv[0], out, 4, 0), 4);
	CHECK_EQ(out[0].msg_len, 5);
	CHECK_EQ(out[2].msg_len, 0);
	CHECK_EQ(out[3].msg_len, 5);
	prep_in(in, 4, 64);
	CHECK_EQ(recvmmsg(sv[1], in, 4, MSG_DONTWAIT, NULL), 4);
	CHECK_EQ(in[0].msg_len, 5);
	CHECK_STREQ(ibuf[0], "msg-0");
	CHECK_EQ(in[2].msg_len, 0);
	CHECK_STREQ(ibuf[3], "msg-3");
}

static void vlen_zero_and_capped(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct mmsghdr out[1], in[1];
	prep_out(out, 1, "z");
	CHECK_EQ(sendmmsg(sv[0], out, 0, 0), 0);
	prep_in(in, 1, 64);
	CHECK_EQ(recvmmsg(sv[1], in, 0, MSG_DONTWAIT, NULL), 0);
	/* Nothing was sent by the empty batch. */
	CHECK_ERR(recvmmsg(sv[1], in, 1, MSG_DONTWAIT, NULL), EAGAIN);
	/* vlen above UIO_MAXIOV (1024) is capped, not refused: with a
	 * vector of 2000 valid entries, 1024 go out. */
	struct mmsghdr *big = calloc(2000, sizeof(*big));
	CHECK(big != NULL);
	struct iovec one = {"x", 1};
	for (int i = 0; i < 2000; i++) {
		big[i].msg_hdr.msg_iov = &one;
		big[i].msg_hdr.msg_iovlen = 1;
	}
	int bufsz = 4 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof bufsz);
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof bufsz);
	int r = sendmmsg(sv[0], big, 2000, MSG_DONTWAIT);
	/* The datagram queue may fill first (EAGAIN partial): never more
	 * than 1024. */
	CHECK_GT(r, 0);
	CHECK_LE(r, 1024);
	free(big);
}

static void fault_after_good_entries(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct mmsghdr out[3];
	prep_out(out, 3, "f");
	/* The third entry's data is unreadable: two are sent, the call
	 * reports 2. */
	oiov[2].iov_base = (void *)1;
	CHECK_EQ(sendmmsg(sv[0], out, 3, 0), 2);
	/* When the first entry faults, the error is returned. */
	out[0].msg_hdr.msg_iov = (struct iovec *)1;
	CHECK_ERR(sendmmsg(sv[0], out, 3, 0), EFAULT);
	/* The vector itself unreadable: EFAULT. */
	CHECK_ERR(sendmmsg(sv[0], (struct mmsghdr *)1, 3, 0), EFAULT);
	struct mmsghdr in[3];
	prep_in(in, 3, 64);
	CHECK_EQ(recvmmsg(sv[1], in, 3, MSG_DONTWAIT, NULL), 2);
	CHECK_STREQ(ibuf[1], "f1");
	CHECK_ERR(recvmmsg(sv[1], (struct mmsghdr *)1, 3, MSG_DONTWAIT, NULL), EFAULT);
}

static void addresses_per_message(void)
{
	ENTER();
	int r = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct sockaddr_un ra = {.sun_family = AF_UNIX, .sun_path = "recv"};
	CHECK_SYS(bind(r, (struct sockaddr *)&ra, sizeof ra));
	int a = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	int b = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct sockaddr_un aa = {.sun_family = AF_UNIX, .sun_path = "sa"};
	struct sockaddr_un ba = {.sun_family = AF_UNIX, .sun_path = "sb"};
	CHECK_SYS(bind(a, (struct sockaddr *)&aa, sizeof aa));
	CHECK_SYS(bind(b, (struct sockaddr *)&ba, sizeof ba));
	/* sendmmsg with a destination in each header. */
	struct mmsghdr out[2];
	prep_out(out, 2, "a");
	for (int i = 0; i < 2; i++) {
		out[i].msg_hdr.msg_name = &ra;
		out[i].msg_hdr.msg_namelen = sizeof ra;
	}
	CHECK_EQ(sendmmsg(a, out, 2, 0), 2);
	CHECK_EQ(sendto(b, "b", 1, 0, (struct sockaddr *)&ra, sizeof ra), 1);
	struct mmsghdr in[3];
	struct sockaddr_un from[3];
	prep_in(in, 3, 64);
	for (int i = 0; i < 3; i++) {
		in[i].msg_hdr.msg_name = &from[i];
		in[i].msg_hdr.msg_namelen = sizeof from[i];
	}
	CHECK_EQ(recvmmsg(r, in, 3, MSG_DONTWAIT, NULL), 3);
	CHECK_STREQ(from[0].sun_path, "sa");
	CHECK_STREQ(from[1].sun_path, "sa");
	CHECK_STREQ(from[2].sun_path, "sb");
	CHECK_EQ(in[2].msg_hdr.msg_namelen, offsetof(struct sockaddr_un, sun_path) + 3);
}

static void truncation_per_entry(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_EQ(send(sv[0], "short", 5, 0), 5);
	CHECK_EQ(send(sv[0], "a-longer-one", 12, 0), 12);
	struct mmsghdr in[2];
	prep_in(in, 2, 6);
	CHECK_EQ(recvmmsg(sv[1], in, 2, MSG_DONTWAIT, NULL), 2);
	CHECK_EQ(in[0].msg_len, 5);
	CHECK_EQ(in[0].msg_hdr.msg_flags & MSG_TRUNC, 0);
	CHECK_EQ(in[1].msg_len, 6);
	CHECK_NE(in[1].msg_hdr.msg_flags & MSG_TRUNC, 0);
	CHECK_MEMEQ(ibuf[1], "a-long", 6);
	/* With MSG_TRUNC the real length is reported. */
	CHECK_EQ(send(sv[0], "a-longer-one", 12, 0), 12);
	prep_in(in, 1, 6);
	CHECK_EQ(recvmmsg(sv[1], in, 1, MSG_DONTWAIT | MSG_TRUNC, NULL), 1);
	CHECK_EQ(in[0].msg_len, 12);
}

static void waitforone_and_dontwait(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	struct mmsghdr in[4];
	prep_in(in, 4, 64);
	CHECK_ERR(recvmmsg(sv[1], in, 4, MSG_DONTWAIT, NULL), EAGAIN);
	CHECK_EQ(send(sv[0], "one", 3, 0), 3);
	CHECK_EQ(send(sv[0], "two", 3, 0), 3);
	/* MSG_WAITFORONE blocks for the first only, then takes what is
	 * there. */
	CHECK_EQ(recvmmsg(sv[1], in, 4, MSG_WAITFORONE, NULL), 2);
	CHECK_STREQ(ibuf[0], "one");
	CHECK_STREQ(ibuf[1], "two");
	/* Stream sockets: each entry takes what is queued. */
	int st[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, st));
	CHECK_EQ(send(st[0], "abcdef", 6, 0), 6);
	prep_in(in, 4, 4);
	CHECK_EQ(recvmmsg(st[1], in, 4, MSG_DONTWAIT, NULL), 2);
	CHECK_EQ(in[0].msg_len, 4);
	CHECK_EQ(in[1].msg_len, 2);
	CHECK_MEMEQ(ibuf[1], "ef", 2);
}

static void full_buffer_partial_send(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_SYS(fcntl(sv[0], F_SETFL, O_NONBLOCK));
	/* Fill the queue with single sends until EAGAIN. */
	char blob[1024] = {0};
	int sent = 0;
	while (send(sv[0], blob, sizeof blob, 0) > 0)
		sent++;
	CHECK_EQ(errno, EAGAIN);
	CHECK_GT(sent, 0);
	struct mmsghdr out[2];
	prep_out(out, 2, "p");
	/* Nothing fits: the first entry's EAGAIN is the result. */
	CHECK_ERR(sendmmsg(sv[0], out, 2, 0), EAGAIN);
	/* Make room for exactly one more datagram: one goes. */
	char rb[1024];
	CHECK_EQ(recv(sv[1], rb, sizeof rb, 0), 1024);
	int r = sendmmsg(sv[0], out, 2, 0);
	CHECK_GE(r, 1);
}

static void closed_peer(void)
{
	signal(SIGPIPE, SIG_IGN);
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	CHECK_EQ(send(sv[0], "last", 4, 0), 4);
	CHECK_SYS(close(sv[0]));
	struct mmsghdr in[3];
	prep_in(in, 3, 64);
	/* The queued message, then end of file: each further entry counts
	 * as a received message of length 0. */
	CHECK_EQ(recvmmsg(sv[1], in, 3, 0, NULL), 3);
	CHECK_STREQ(ibuf[0], "last");
	CHECK_EQ(in[0].msg_len, 4);
	CHECK_EQ(in[1].msg_len, 0);
	CHECK_EQ(in[2].msg_len, 0);
	struct mmsghdr out[1];
	prep_out(out, 1, "x");
	CHECK_ERR(sendmmsg(sv[1], out, 1, 0), EPIPE);
}

static void descriptor_and_flag_errors(void)
{
	struct mmsghdr m[1];
	prep_in(m, 1, 64);
	CHECK_ERR(sendmmsg(99, m, 1, 0), EBADF);
	CHECK_ERR(recvmmsg(99, m, 1, 0, NULL), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(recvmmsg(p[0], m, 1, 0, NULL), ENOTSOCK);
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	/* Out-of-band data is not supported on unix sockets. */
	CHECK_ERR(recvmmsg(sv[1], m, 1, MSG_OOB | MSG_DONTWAIT, NULL), EOPNOTSUPP);
	/* A bad timeout pointer: EFAULT. */
	CHECK_ERR(recvmmsg(sv[1], m, 1, 0, (struct timespec *)1), EFAULT);
	/* An unconnected datagram socket and no address: ENOTCONN. */
	int u = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct mmsghdr out[1];
	prep_out(out, 1, "q");
	CHECK_ERR(sendmmsg(u, out, 1, 0), ENOTCONN);
}

static const struct mt_case cases[] = {
	MT_CASE(msg_len_per_entry),
	MT_CASE(vlen_zero_and_capped),
	MT_CASE(fault_after_good_entries),
	MT_CASE(addresses_per_message),
	MT_CASE(truncation_per_entry),
	MT_CASE(waitforone_and_dontwait),
	MT_CASE(full_buffer_partial_send),
	MT_CASE(closed_peer),
	MT_CASE(descriptor_and_flag_errors),
};

MT_MAIN(cases)
