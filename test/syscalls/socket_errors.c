//go:build ignore

/* socket_errors: the error paths of the socket syscalls on AF_UNIX
 * sockets: ENOTSOCK and EBADF for every call, argument checks of socket
 * and socketpair, bad addresses and lengths (EINVAL, EFAULT), option
 * lengths and levels, operations a socket type lacks (EOPNOTSUPP), and
 * msghdr limits. */
#include "moattest.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static void enotsock_everywhere(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int fd = p[0];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(a);
	char buf[4];
	int v = 0;
	socklen_t vl = sizeof(v);
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK_ERR(bind(fd, (struct sockaddr *)&a, sizeof(sa_family_t)), ENOTSOCK);
	CHECK_ERR(listen(fd, 1), ENOTSOCK);
	CHECK_ERR(accept(fd, NULL, NULL), ENOTSOCK);
	CHECK_ERR(accept4(fd, NULL, NULL, 0), ENOTSOCK);
	CHECK_ERR(connect(fd, (struct sockaddr *)&a, sizeof(a)), ENOTSOCK);
	CHECK_ERR(getsockname(fd, (struct sockaddr *)&a, &len), ENOTSOCK);
	CHECK_ERR(getpeername(fd, (struct sockaddr *)&a, &len), ENOTSOCK);
	CHECK_ERR(shutdown(fd, SHUT_RDWR), ENOTSOCK);
	CHECK_ERR(send(fd, buf, 1, 0), ENOTSOCK);
	CHECK_ERR(recv(fd, buf, 1, 0), ENOTSOCK);
	CHECK_ERR(sendmsg(fd, &mh, 0), ENOTSOCK);
	CHECK_ERR(recvmsg(fd, &mh, 0), ENOTSOCK);
	CHECK_ERR(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vl), ENOTSOCK);
	CHECK_ERR(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v)), ENOTSOCK);
	CHECK_ERR(sendmmsg(fd, NULL, 0, 0), ENOTSOCK);
	CHECK_ERR(recvmmsg(fd, NULL, 0, 0, NULL), ENOTSOCK);
}

static void ebadf_everywhere(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(a);
	char buf[4];
	int v = 0;
	socklen_t vl = sizeof(v);
	CHECK_ERR(bind(-1, (struct sockaddr *)&a, sizeof(sa_family_t)), EBADF);
	CHECK_ERR(listen(999, 1), EBADF);
	CHECK_ERR(accept(999, NULL, NULL), EBADF);
	CHECK_ERR(connect(999, (struct sockaddr *)&a, sizeof(a)), EBADF);
	CHECK_ERR(getsockname(999, (struct sockaddr *)&a, &len), EBADF);
	CHECK_ERR(shutdown(999, SHUT_RD), EBADF);
	CHECK_ERR(send(999, buf, 1, 0), EBADF);
	CHECK_ERR(recv(999, buf, 1, 0), EBADF);
	CHECK_ERR(getsockopt(999, SOL_SOCKET, SO_TYPE, &v, &vl), EBADF);
	/* An O_PATH descriptor is no socket either. */
	int op = CHECK_SYS(open("/", O_PATH));
	CHECK_ERR(listen(op, 1), EBADF);
}

static void socket_arguments(void)
{
	CHECK_ERR(socket(AF_UNIX, 0, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, SOCK_PACKET, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, 12, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM | 0x100, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, 7), EPROTONOSUPPORT);
	CHECK_ERR(socket(9999, SOCK_STREAM, 0), EAFNOSUPPORT);
	CHECK_ERR(socket(-1, SOCK_STREAM, 0), EAFNOSUPPORT);
	/* PF_UNIX as the protocol is accepted. */
	CHECK_SYS(close(CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, AF_UNIX))));
	/* SOCK_RAW makes a datagram socket. */
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_RAW, 0));
	int type = 0;
	socklen_t l = sizeof(type);
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &l));
	CHECK_EQ(type, SOCK_DGRAM);
	int proto = -1;
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &proto, &l));
	CHECK_EQ(proto, 0);
	int sv[2];
	CHECK_ERR(socketpair(9999, SOCK_STREAM, 0, sv), EAFNOSUPPORT);
	CHECK_ERR(socketpair(AF_UNIX, 0, 0, sv), ESOCKTNOSUPPORT);
}

static void address_checks(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	CHECK_ERR(bind(s, (struct sockaddr *)&a, sizeof(a) + 1), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, 129), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, (socklen_t)-1), EINVAL);
	CHECK_ERR(bind(s, (struct sockaddr *)8, sizeof(a)), EFAULT);
	CHECK_ERR(connect(s, (struct sockaddr *)8, sizeof(a)), EFAULT);
	a.sun_family = AF_INET;
	strcpy(a.sun_path, "x");
	CHECK_ERR(bind(s, (struct sockaddr *)&a, sizeof(a)), EINVAL);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, sizeof(a)), EINVAL);
	a.sun_family = AF_UNIX;
	CHECK_ERR(connect(s, (struct sockaddr *)&a, sizeof(sa_family_t)), EINVAL);
	/* A bad length pointer or name buffer is EFAULT. */
	CHECK_ERR(getsockname(s, (struct sockaddr *)&a, (socklen_t *)8), EFAULT);
	socklen_t len = sizeof(a);
	CHECK_ERR(getsockname(s, (struct sockaddr *)8, &len), EFAULT);
	len = (socklen_t)-1;
	CHECK_ERR(getsockname(s, (struct sockaddr *)&a, &len), EINVAL);
	CHECK_ERR(getpeername(s, (struct sockaddr *)&a, &len), ENOTCONN);
}

static void option_checks(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = 1;
	socklen_t l = (socklen_t)-1;
	CHECK_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &l), EINVAL);
	l = sizeof(v);
	CHECK_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, (socklen_t *)8), EFAULT);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, 2), EINVAL);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, (socklen_t)-1), EINVAL);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, 9999, &v, sizeof(v)), ENOPROTOOPT);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_TYPE, &v, sizeof(v)), ENOPROTOOPT);
	CHECK_ERR(setsockopt(s, 6 /* SOL_TCP */, 1, &v, sizeof(v)), EOPNOTSUPP);
	CHECK_ERR(getsockopt(s, 6 /* SOL_TCP */, 1, &v, &l), EOPNOTSUPP);
	/* A short buffer gets a prefix and the length used. */
	l = 2;
	v = 0;
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &l));
	CHECK_EQ(l, 2);
	CHECK_EQ(v, SOCK_STREAM);
	l = 0;
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &l));
	CHECK_EQ(l, 0);
	/* SO_ERROR is read once. */
	l = sizeof(v);
	CHECK_SYS(getsockopt(s, SOL_SOCKET, SO_ERROR, &v, &l));
	CHECK_EQ(v, 0);
}

static void operations_a_type_lacks(void)
{
	int d = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_ERR(listen(d, 1), EOPNOTSUPP);
	CHECK_ERR(accept(d, NULL, NULL), EOPNOTSUPP);
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(accept(s, NULL, NULL), EINVAL);
	CHECK_ERR(accept4(s, NULL, NULL, 0x100), EINVAL);
	CHECK_ERR(shutdown(s, -1), EINVAL);
	CHECK_ERR(shutdown(s, 3), EINVAL);
	char c;
	/* Datagrams have no out-of-band data. */
	CHECK_ERR(send(d, &c, 1, MSG_OOB), EOPNOTSUPP);
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_ERR(lseek(sv[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(pread(sv[0], &c, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(sv[0], &c, 1, 0), ESPIPE);
}

static void msghdr_limits(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	static struct iovec iov[1025];
	char c = 'x';
	for (int i = 0; i < 1025; i++) {
		iov[i].iov_base = &c;
		iov[i].iov_len = 0;
	}
	iov[0].iov_len = 1;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 1025 };
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EMSGSIZE);
	mh.msg_iovlen = 1024;
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	CHECK_ERR(sendmsg(sv[0], (struct msghdr *)8, 0), EFAULT);
	CHECK_ERR(recvmsg(sv[1], (struct msghdr *)8, 0), EFAULT);
	iov[0].iov_base = (void *)8;
	mh.msg_iovlen = 1;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EFAULT);
	CHECK_ERR(send(sv[0], (void *)8, 1, 0), EFAULT);
	/* A zero-length datagram is a datagram. */
	CHECK_EQ(send(sv[0], NULL, 0, 0), 0);
	char buf[4];
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 1);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 0);
	CHECK_ERR(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
}

static const struct mt_case cases[] = {
	MT_CASE(enotsock_everywhere),
	MT_CASE(ebadf_everywhere),
	MT_CASE(socket_arguments),
	MT_CASE(address_checks),
	MT_CASE(option_checks),
	MT_CASE(operations_a_type_lacks),
	MT_CASE(msghdr_limits),
};

MT_MAIN(cases)
