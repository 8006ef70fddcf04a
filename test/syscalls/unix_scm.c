//go:build ignore

/* unix_scm: control messages on AF_UNIX sockets: SCM_RIGHTS with several
 * descriptors, sockets passed over sockets, MSG_PEEK duplicates, stream
 * reads stopping at a message with descriptors, the SCM_MAX_FD limit,
 * partial delivery with MSG_CTRUNC, descriptors dropped with an unread
 * message, SCM_CREDENTIALS sent explicitly (and refused for other ids),
 * SO_PASSCRED on streams, and malformed control data. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* send_fds sends one byte with n descriptors. */
static ssize_t send_fds(int s, const char *data, const int *fds, int n)
{
	struct iovec iov = { (void *)data, strlen(data) };
	char buf[CMSG_SPACE(sizeof(int) * 300)];
	memset(buf, 0, sizeof(buf));
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n > 0) {
		mh.msg_control = buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	}
	return sendmsg(s, &mh, 0);
}

/* recv_fds receives into data (size len) and up to max descriptors
 * (room for exactly max), returning the byte count and setting *nfds
 * and *flags. */
static ssize_t recv_fds(int s, char *data, size_t len, int *fds, int max, int *nfds, int *flags, int rflags)
{
	struct iovec iov = { data, len };
	char buf[CMSG_SPACE(sizeof(int) * 16)];
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			     .msg_controllen = max > 0 ? CMSG_SPACE(sizeof(int) * (size_t)max) : 0 };
	if (max == 0)
		mh.msg_control = NULL;
	ssize_t n = recvmsg(s, &mh, rflags);
	*nfds = 0;
	*flags = mh.msg_flags;
	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds + *nfds, CMSG_DATA(c), sizeof(int) * (size_t)k);
			*nfds += k;
		}
	}
	return n;
}

static void rights_several_fds(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int p[2];
	CHECK_SYS(pipe(p));
	int fds[3] = { p[0], p[1], sv[0] };
	CHECK_EQ(send_fds(sv[0], "m", fds, 3), 1);
	char c;
	int got[16], n, flags;
	CHECK_EQ(recv_fds(sv[1], &c, 1, got, 3, &n, &flags, 0), 1);
	CHECK_EQ(n, 3);
	CHECK_EQ(flags, 0);
	for (int i = 0; i < 3; i++) {
		struct stat a, b;
		CHECK_SYS(fstat(fds[i], &a));
		CHECK_SYS(fstat(got[i], &b));
		CHECK_EQ(a.st_ino, b.st_ino);
		CHECK_NE(got[i], fds[i]);
	}
	/* The received pipe end works. */
	CHECK_EQ(write(got[1], "z", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'z');
}

static void pass_socket_over_socket(void)
{
	int carrier[2], inner[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, carrier));
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, inner));
	CHECK_EQ(send_fds(carrier[0], "s", &inner[1], 1), 1);
	CHECK_SYS(close(inner[1]));
	char c;
	int got, n, flags;
	CHECK_EQ(recv_fds(carrier[1], &c, 1, &got, 1, &n, &flags, 0), 1);
	CHECK_EQ(n, 1);
	CHECK_EQ(write(inner[0], "via", 3), 3);
	char buf[4];
	CHECK_EQ(read(got, buf, sizeof(buf)), 3);
	CHECK_MEMEQ(buf, "via", 3);
	CHECK_SYS(close(got));
	/* The last reference went: the other end sees end of file. */
	CHECK_EQ(read(inner[0], buf, sizeof(buf)), 0);
}

static void peek_duplicates_rights(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(send_fds(sv[0], "p", &fd, 1), 1);
	char c;
	int a, b, n, flags;
	CHECK_EQ(recv_fds(sv[1], &c, 1, &a, 1, &n, &flags, MSG_PEEK), 1);
	CHECK_EQ(n, 1);
	CHECK_EQ(recv_fds(sv[1], &c, 1, &b, 1, &n, &flags, 0), 1);
	CHECK_EQ(n, 1);
	CHECK_NE(a, b);
	struct stat sa, sb;
	CHECK_SYS(fstat(a, &sa));
	CHECK_SYS(fstat(b, &sb));
	CHECK_EQ(sa.st_ino, sb.st_ino);
}

static void stream_read_stops_after_rights(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(write(sv[0], "ab", 2), 2);
	CHECK_EQ(send_fds(sv[0], "cd", &fd, 1), 2);
	CHECK_EQ(write(sv[0], "ef", 2), 2);
	char buf[16];
	int got, n, flags;
	/* Plain bytes, then the message with the descriptor, then a stop. */
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), &got, 1, &n, &flags, 0), 4);
	CHECK_MEMEQ(buf, "abcd", 4);
	CHECK_EQ(n, 1);
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), &got, 1, &n, &flags, 0), 2);
	CHECK_MEMEQ(buf, "ef", 2);
	CHECK_EQ(n, 0);
}

static void too_many_fds_einval(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int fds[254];
	for (int i = 0; i < 254; i++)
		fds[i] = sv[0];
	CHECK_ERR(send_fds(sv[0], "x", fds, 254), EINVAL);
	CHECK_EQ(send_fds(sv[0], "x", fds, 253), 1);
	char c;
	int got[16], n, flags;
	CHECK_EQ(recv_fds(sv[1], &c, 1, got, 16, &n, &flags, 0), 1);
	CHECK_EQ(n, 16);
	CHECK_EQ(flags, MSG_CTRUNC);
}

static void partial_delivery_ctrunc(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	int fds[3] = { 0, 1, 2 };
	CHECK_EQ(send_fds(sv[0], "t", fds, 3), 1);
	char c;
	int got[16], n, flags;
	/* Room for one int is CMSG_SPACE(4): its padding holds a second. */
	CHECK_EQ(recv_fds(sv[1], &c, 1, got, 1, &n, &flags, MSG_CMSG_CLOEXEC), 1);
	CHECK_EQ(n, 2);
	/* msg_flags keeps MSG_CMSG_CLOEXEC from the call, as Linux does. */
	CHECK_EQ(flags, MSG_CTRUNC | MSG_CMSG_CLOEXEC);
	CHECK_EQ(fcntl(got[0], F_GETFD), FD_CLOEXEC);
}

static void unread_rights_are_dropped(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(send_fds(sv[0], "w", &p[1], 1), 1);
	CHECK_SYS(close(p[1]));
	/* The write end lives in flight... */
	CHECK_SYS(fcntl(p[0], F_SETFL, O_NONBLOCK));
	char c;
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);
	/* ...until the receiving socket goes with the message unread. */
	CHECK_SYS(close(sv[1]));
	CHECK_EQ(read(p[0], &c, 1), 0);
}

static void explicit_credentials(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int on = 1;
	CHECK_SYS(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	struct ucred cr = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
	char data = 'c';
	struct iovec iov = { &data, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(cr));
	memcpy(CMSG_DATA(c), &cr, sizeof(cr));
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} r;
	struct msghdr rm = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = r.buf,
			     .msg_controllen = sizeof(r.buf) };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 1);
	struct cmsghdr *rc = CMSG_FIRSTHDR(&rm);
	CHECK(rc != NULL);
	CHECK_EQ(rc->cmsg_type, SCM_CREDENTIALS);
	CHECK_EQ(rc->cmsg_len, CMSG_LEN(sizeof(struct ucred)));
	struct ucred got;
	memcpy(&got, CMSG_DATA(rc), sizeof(got));
	CHECK_EQ(got.pid, cr.pid);
	CHECK_EQ(got.gid, cr.gid);
	/* A wrong length is EINVAL. */
	c->cmsg_len = CMSG_LEN(sizeof(cr) - 4);
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	/* Without privilege, another process's id is EPERM. */
	c->cmsg_len = CMSG_LEN(sizeof(cr));
	AS_USER({
		struct ucred other = { .pid = getppid(), .uid = 1000, .gid = 1000 };
		memcpy(CMSG_DATA(c), &other, sizeof(other));
		CHILD_ERR(sendmsg(sv[0], &mh, 0), EPERM);
		struct ucred root = { .pid = getpid(), .uid = 0, .gid = 1000 };
		memcpy(CMSG_DATA(c), &root, sizeof(root));
		CHILD_ERR(sendmsg(sv[0], &mh, 0), EPERM);
		struct ucred self = { .pid = getpid(), .uid = 1000, .gid = 1000 };
		memcpy(CMSG_DATA(c), &self, sizeof(self));
		CHILD_CHECK(sendmsg(sv[0], &mh, 0) == 1);
	});
}

static void passcred_on_stream(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int on = 1;
	CHECK_SYS(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	int v = 0;
	socklen_t l = sizeof(v);
	CHECK_SYS(getsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &v, &l));
	CHECK_EQ(v, 1);
	CHECK_EQ(write(sv[0], "abc", 3), 3);
	char data[8];
	struct iovec iov = { data, sizeof(data) };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct msghdr rm = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 3);
	struct cmsghdr *c = CMSG_FIRSTHDR(&rm);
	CHECK(c != NULL);
	CHECK_EQ(c->cmsg_type, SCM_CREDENTIALS);
	struct ucred cr;
	memcpy(&cr, CMSG_DATA(c), sizeof(cr));
	CHECK_EQ(cr.pid, getpid());
	/* Bytes from another process are not merged with ours. */
	CHECK_EQ(write(sv[0], "mine", 4), 4);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(write(sv[0], "kid", 3) == 3 ? 0 : 1);
	CHECK_EXITED(mt_wait(pid), 0);
	rm.msg_controllen = sizeof(u.buf);
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 4);
	rm.msg_controllen = sizeof(u.buf);
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 3);
	c = CMSG_FIRSTHDR(&rm);
	CHECK(c != NULL);
	memcpy(&cr, CMSG_DATA(c), sizeof(cr));
	CHECK_EQ(cr.pid, pid);
}

static void credentials_recorded_at_send(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	/* Sent while neither end asked for credentials: none were kept. */
	CHECK_EQ(send(sv[0], "a", 1, 0), 1);
	int on = 1;
	CHECK_SYS(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	CHECK_EQ(send(sv[0], "b", 1, 0), 1);
	char data;
	struct iovec iov = { &data, 1 };
	union {
		char buf[64];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr rm = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 1);
	struct cmsghdr *c = CMSG_FIRSTHDR(&rm);
	CHECK(c != NULL);
	struct ucred cr;
	memcpy(&cr, CMSG_DATA(c), sizeof(cr));
	CHECK_EQ(cr.pid, 0);
	CHECK_EQ(cr.uid, 65534);
	CHECK_EQ(cr.gid, 65534);
	/* Room for the header and the pid only: cut, and cmsg_len says so. */
	memset(&u, 0, sizeof(u));
	rm.msg_controllen = CMSG_LEN(sizeof(pid_t));
	CHECK_EQ(recvmsg(sv[1], &rm, 0), 1);
	CHECK_EQ(rm.msg_flags, MSG_CTRUNC);
	CHECK_EQ(rm.msg_controllen, CMSG_LEN(sizeof(pid_t)));
	c = (struct cmsghdr *)u.buf;
	CHECK_EQ(c->cmsg_len, CMSG_LEN(sizeof(pid_t)));
	CHECK_EQ(c->cmsg_type, SCM_CREDENTIALS);
	pid_t pid;
	memcpy(&pid, CMSG_DATA(c), sizeof(pid));
	CHECK_EQ(pid, getpid());
}

static void malformed_control(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	char data = 'm';
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
	c->cmsg_type = 99;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	/* Other levels are ignored. */
	c->cmsg_level = IPPROTO_TCP;
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 1);
	/* A length past the buffer is EINVAL. */
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = sizeof(u.buf) + 8;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EINVAL);
	/* A bad descriptor is EBADF; no data goes. */
	c->cmsg_len = CMSG_LEN(sizeof(int));
	int bad = 777;
	memcpy(CMSG_DATA(c), &bad, sizeof(int));
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EBADF);
	/* A control buffer at a bad address is EFAULT. */
	mh.msg_control = (void *)8;
	CHECK_ERR(sendmsg(sv[0], &mh, 0), EFAULT);
	char got;
	CHECK_EQ(recv(sv[1], &got, 1, 0), 1);
	CHECK_ERR(recv(sv[1], &got, 1, MSG_DONTWAIT), EAGAIN);
}

static const struct mt_case cases[] = {
	MT_CASE(rights_several_fds),
	MT_CASE(pass_socket_over_socket),
	MT_CASE(peek_duplicates_rights),
	MT_CASE(stream_read_stops_after_rights),
	MT_CASE(too_many_fds_einval),
	MT_CASE(partial_delivery_ctrunc),
	MT_CASE(unread_rights_are_dropped),
	MT_CASE(explicit_credentials),
	MT_CASE(passcred_on_stream),
	MT_CASE(credentials_recorded_at_send),
	MT_CASE(malformed_control),
};

MT_MAIN(cases)
