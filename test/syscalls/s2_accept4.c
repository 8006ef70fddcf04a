//go:build ignore

/* s2_accept4: accept and accept4 on unix stream and seqpacket listeners:
 * the SOCK_NONBLOCK and SOCK_CLOEXEC flags, peer addresses and lengths,
 * non-blocking EAGAIN, and the errors for flags, unlistened and datagram
 * sockets, lengths, pointers and non-sockets. */
#include "moattest.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static socklen_t listener(int type, int *out)
{
	static int n;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "moat-s2-accept4-%d-%d", getpid(), n++);
	socklen_t len = sizeof(sa_family_t) + 1 + strlen(a.sun_path + 1);
	int s = socket(AF_UNIX, type, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, 8) < 0)
		return 0;
	*out = s;
	return len;
}

static int connect_to(int srv)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	if (getsockname(srv, (struct sockaddr *)&a, &len) < 0)
		return -1;
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, len) < 0)
		return -1;
	return c;
}

static void accept4_flags(void)
{
	int s;
	CHECK(listener(SOCK_STREAM, &s) > 0);
	CHECK_SYS(connect_to(s));
	CHECK_SYS(connect_to(s));
	int a = CHECK_SYS(accept4(s, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC));
	CHECK_EQ(fcntl(a, F_GETFD), FD_CLOEXEC);
	CHECK(fcntl(a, F_GETFL) & O_NONBLOCK);
	int b = CHECK_SYS(accept4(s, NULL, NULL, 0));
	CHECK_EQ(fcntl(b, F_GETFD), 0);
	CHECK_EQ(fcntl(b, F_GETFL) & O_NONBLOCK, 0);
}

static void accepted_not_inheriting_listener_flags(void)
{
	int s;
	CHECK(listener(SOCK_STREAM, &s) > 0);
	CHECK_SYS(fcntl(s, F_SETFL, O_NONBLOCK));
	CHECK_SYS(connect_to(s));
	int a = CHECK_SYS(accept(s, NULL, NULL));
	/* Linux does not copy O_NONBLOCK from the listener. */
	CHECK_EQ(fcntl(a, F_GETFL) & O_NONBLOCK, 0);
}

static void peer_address(void)
{
	int s;
	CHECK(listener(SOCK_STREAM, &s) > 0);
	CHECK_SYS(connect_to(s));
	struct sockaddr_un a;
	memset(&a, 0x33, sizeof(a));
	socklen_t len = sizeof(a);
	CHECK_SYS(accept(s, (struct sockaddr *)&a, &len));
	/* The client never bound: only the family comes back. */
	CHECK_EQ(len, sizeof(sa_family_t));
	CHECK_EQ(a.sun_family, AF_UNIX);
}

static void nonblocking_eagain(void)
{
	int s;
	CHECK(listener(SOCK_STREAM, &s) > 0);
	CHECK_SYS(fcntl(s, F_SETFL, O_NONBLOCK));
	CHECK_ERR(accept(s, NULL, NULL), EAGAIN);
	CHECK_ERR(accept4(s, NULL, NULL, SOCK_CLOEXEC), EAGAIN);
}

static void bad_flags_einval(void)
{
	int s;
	CHECK(listener(SOCK_STREAM, &s) > 0);
	CHECK_ERR(accept4(s, NULL, NULL, 1), EINVAL);
	CHECK_ERR(accept4(s, NULL, NULL, O_APPEND), EINVAL);
	CHECK_ERR(accept4(s, NULL, NULL, ~0), EINVAL);
}

static void wrong_socket_states(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(accept(s, NULL, NULL), EINVAL);
	int d = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_ERR(accept(d, NULL, NULL), EOPNOTSUPP);
	int sp[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sp));
	CHECK_ERR(accept(sp[0], NULL, NULL), EINVAL);
}

static void seqpacket_listener(void)
{
	int s;
	socklen_t len = listener(SOCK_SEQPACKET, &s);
	CHECK(len > 0);
	struct sockaddr_un a;
	socklen_t alen = sizeof(a);
	CHECK_SYS(getsockname(s, (struct sockaddr *)&a, &alen));
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_SEQPACKET, 0));
	CHECK_SYS(connect(c, (struct sockaddr *)&a, alen));
	int acc = CHECK_SYS(accept4(s, NULL, NULL, SOCK_CLOEXEC));
	CHECK_EQ(send(c, "one", 3, 0), 3);
	CHECK_EQ(send(c, "two!", 4, 0), 4);
	char buf[8];
	CHECK_EQ(recv(acc, buf, sizeof(buf), 0), 3);
	CHECK_EQ(recv(acc, buf, sizeof(buf), 0), 4);
}

static void length_and_pointer_errors(void)
{
	int s;
	CHECK(listener(SOCK_STREAM, &s) > 0);
	/* Linux takes a connection off the queue before it looks at the
	 * address length, so queue one for each failing call. */
	CHECK_SYS(connect_to(s));
	CHECK_SYS(connect_to(s));
	CHECK_SYS(fcntl(s, F_SETFL, O_NONBLOCK));
	struct sockaddr_un a;
	socklen_t len = (socklen_t)-1;
	CHECK_ERR(accept(s, (struct sockaddr *)&a, &len), EINVAL);
	CHECK_ERR(syscall(SYS_accept4, s, &a, (void *)1, 0), EFAULT);
	CHECK_ERR(accept(-1, NULL, NULL), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(accept(p[0], NULL, NULL), ENOTSOCK);
}

static const struct mt_case cases[] = {
	MT_CASE(accept4_flags),
	MT_CASE(accepted_not_inheriting_listener_flags),
	MT_CASE(peer_address),
	MT_CASE(nonblocking_eagain),
	MT_CASE(bad_flags_einval),
	MT_CASE(wrong_socket_states),
	MT_CASE(seqpacket_listener),
	MT_CASE(length_and_pointer_errors),
};

MT_MAIN(cases)
