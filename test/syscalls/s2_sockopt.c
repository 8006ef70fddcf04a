//go:build ignore

/* s2_sockopt: generic SOL_SOCKET options on unix sockets: read-only
 * identity options, buffer sizes, boolean and timeout round trips, linger,
 * SO_ERROR, and the errors for levels, names, lengths, pointers and
 * non-sockets. */
#include "moattest.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static int getint(int fd, int name, int *v)
{
	socklen_t len = sizeof(*v);
	int r = getsockopt(fd, SOL_SOCKET, name, v, &len);
	if (r == 0 && len != sizeof(*v))
		return -2;
	return r;
}

static void identity_options(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	int v;
	CHECK_SYS(getint(s, SO_TYPE, &v));
	CHECK_EQ(v, SOCK_DGRAM);
	CHECK_SYS(getint(s, SO_DOMAIN, &v));
	CHECK_EQ(v, AF_UNIX);
	CHECK_SYS(getint(s, SO_PROTOCOL, &v));
	CHECK_EQ(v, 0);
	int t = CHECK_SYS(socket(AF_UNIX, SOCK_SEQPACKET, 0));
	CHECK_SYS(getint(t, SO_TYPE, &v));
	CHECK_EQ(v, SOCK_SEQPACKET);
	/* They cannot be set. */
	v = SOCK_STREAM;
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_TYPE, &v, sizeof(v)), ENOPROTOOPT);
}

static void acceptconn(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = -1;
	CHECK_SYS(getint(s, SO_ACCEPTCONN, &v));
	CHECK_EQ(v, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	/* Abstract name, unique per process. */
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "moat-s2-sockopt-%d", getpid());
	CHECK_SYS(bind(s, (struct sockaddr *)&a, sizeof(a)));
	CHECK_SYS(listen(s, 1));
	CHECK_SYS(getint(s, SO_ACCEPTCONN, &v));
	CHECK_EQ(v, 1);
}

static void buffer_sizes_doubled(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = 65536;
	CHECK_SYS(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	CHECK_SYS(getint(s, SO_SNDBUF, &v));
	CHECK_EQ(v, 131072);
	v = 32768;
	CHECK_SYS(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	CHECK_SYS(getint(s, SO_RCVBUF, &v));
	CHECK_EQ(v, 65536);
	/* Tiny and negative values are raised to the minimum. */
	v = 1;
	CHECK_SYS(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	CHECK_SYS(getint(s, SO_SNDBUF, &v));
	CHECK_GE(v, 2048);
	CHECK_LE(v, 4608 * 2);
	v = -5;
	CHECK_SYS(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	CHECK_SYS(getint(s, SO_RCVBUF, &v));
	CHECK_GE(v, 2048);
}

static void boolean_roundtrip(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	static const int names[] = { SO_KEEPALIVE, SO_REUSEADDR, SO_PASSCRED };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int v = -1;
		CHECK_SYS(getint(s, names[i], &v));
		CHECK_EQ(v, 0);
		v = 42; /* any non-zero value reads back as 1 */
		CHECK_SYS(setsockopt(s, SOL_SOCKET, names[i], &v, sizeof(v)));
		CHECK_SYS(getint(s, names[i], &v));
		CHECK_EQ(v, 1);
		v = 0;
		CHECK_SYS(setsockopt(s, SOL_SOCKET, names[i], &v, sizeof(v)));
		CHECK_SYS(getint(s, names[i], &v));
		CHECK_EQ(v, 0);
	}
}

static void timeouts_roundtrip(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct timeval tv = { 2, 500000 }, got;
	socklen_t len = sizeof(got);
	CHECK_SYS(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &got, &len));
	CHECK_EQ(len, sizeof(got));
	CHECK_EQ(got.tv_sec, 2);
	CHECK_EQ(got.tv_usec, 500000);
	tv.tv_usec = 1000000;
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), EDOM);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv) - 1), EINVAL);
}

static void linger_roundtrip(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct linger l = { 1, 7 }, got;
	socklen_t len = sizeof(got);
	CHECK_SYS(setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_LINGER, &got, &len));
	CHECK_EQ(len, sizeof(got));
	CHECK_EQ(got.l_onoff, 1);
	CHECK_EQ(got.l_linger, 7);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof(l) - 1), EINVAL);
}

static void so_error_clear(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = -1;
	CHECK_SYS(getint(s, SO_ERROR, &v));
	CHECK_EQ(v, 0);
	v = 1;
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_ERROR, &v, sizeof(v)), ENOPROTOOPT);
}

static void bad_names_and_lengths(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = 1;
	socklen_t len = sizeof(v);
	CHECK_ERR(getsockopt(s, SOL_SOCKET, 9999, &v, &len), ENOPROTOOPT);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, 9999, &v, sizeof(v)), ENOPROTOOPT);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &v, 2), EINVAL);
	len = (socklen_t)-1;
	CHECK_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len), EINVAL);
	/* A short buffer gets a truncated value, not an error. */
	unsigned char c = 0xff;
	len = 1;
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_TYPE, &c, &len));
	CHECK_EQ(len, 1);
	CHECK_EQ(c, SOCK_STREAM);
}

static void bad_pointers_and_fds(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = 1;
	socklen_t len = sizeof(v);
	CHECK_ERR(syscall(SYS_getsockopt, s, SOL_SOCKET, SO_TYPE, (void *)1, &len), EFAULT);
	CHECK_ERR(syscall(SYS_getsockopt, s, SOL_SOCKET, SO_TYPE, &v, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_setsockopt, s, SOL_SOCKET, SO_KEEPALIVE, (void *)1, sizeof(v)), EFAULT);
	CHECK_ERR(getsockopt(-1, SOL_SOCKET, SO_TYPE, &v, &len), EBADF);
	CHECK_ERR(setsockopt(9999, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(getsockopt(p[0], SOL_SOCKET, SO_TYPE, &v, &len), ENOTSOCK);
	CHECK_ERR(setsockopt(p[0], SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)), ENOTSOCK);
}

static const struct mt_case cases[] = {
	MT_CASE(identity_options),
	MT_CASE(acceptconn),
	MT_CASE(buffer_sizes_doubled),
	MT_CASE(boolean_roundtrip),
	MT_CASE(timeouts_roundtrip),
	MT_CASE(linger_roundtrip),
	MT_CASE(so_error_clear),
	MT_CASE(bad_names_and_lengths),
	MT_CASE(bad_pointers_and_fds),
};

MT_MAIN(cases)
