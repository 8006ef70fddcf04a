//go:build ignore

/* s2_unix_names: unix socket names: getsockname and getpeername of
 * unbound, autobound, path-bound, connected and accepted sockets, truncated
 * address buffers, socket files (type, umask, permission to connect,
 * unlinking) and the bind/connect/name errors. Paths live in a scratch
 * directory on the writable tmpfs. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static void unbound_name(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	memset(&a, 0x55, sizeof(a));
	socklen_t len = sizeof(a);
	CHECK_SYS(getsockname(s, (struct sockaddr *)&a, &len));
	CHECK_EQ(len, sizeof(sa_family_t));
	CHECK_EQ(a.sun_family, AF_UNIX);
}

static void autobind_name(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	CHECK_SYS(bind(s, (struct sockaddr *)&a, sizeof(sa_family_t)));
	socklen_t len = sizeof(a);
	CHECK_SYS(getsockname(s, (struct sockaddr *)&a, &len));
	/* An abstract name of five hex digits. */
	CHECK_EQ(len, sizeof(sa_family_t) + 6);
	CHECK_EQ(a.sun_path[0], 0);
	for (int i = 1; i <= 5; i++)
		CHECK(strchr("0123456789abcdef", a.sun_path[i]) != NULL);
}

static void path_bind_and_names(void)
{
	ENTER();
	int srv = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a, got;
	socklen_t alen = path_addr(&a, "sock");
	CHECK_SYS(bind(srv, (struct sockaddr *)&a, alen));
	CHECK_SYS(listen(srv, 4));
	socklen_t len = sizeof(got);
	CHECK_SYS(getsockname(srv, (struct sockaddr *)&got, &len));
	CHECK_EQ(len, alen);
	CHECK_STREQ(got.sun_path, "sock");
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect(c, (struct sockaddr *)&a, alen));
	int acc = CHECK_SYS(accept(srv, NULL, NULL));
	len = sizeof(got);
	CHECK_SYS(getpeername(c, (struct sockaddr *)&got, &len));
	CHECK_EQ(len, alen);
	CHECK_STREQ(got.sun_path, "sock");
	len = sizeof(got);
	CHECK_SYS(getsockname(acc, (struct sockaddr *)&got, &len));
	CHECK_STREQ(got.sun_path, "sock");
	/* The client is unbound, so the accepted socket's peer has no name. */
	len = sizeof(got);
	CHECK_SYS(getpeername(acc, (struct sockaddr *)&got, &len));
	CHECK_EQ(len, sizeof(sa_family_t));
}

static void bind_errors(void)
{
	ENTER();
	struct sockaddr_un a;
	socklen_t alen = path_addr(&a, "sock");
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(bind(s, (struct sockaddr *)&a, alen));
	int t = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(t, (struct sockaddr *)&a, alen), EADDRINUSE);
	struct sockaddr_un b;
	socklen_t blen = path_addr(&b, "other");
	CHECK_ERR(bind(s, (struct sockaddr *)&b, blen), EINVAL);
	socklen_t mlen = path_addr(&b, "missing/sock");
	CHECK_ERR(bind(t, (struct sockaddr *)&b, mlen), ENOENT);
	CHECK_ERR(bind(t, (struct sockaddr *)&a, 1), EINVAL);
	CHECK_ERR(syscall(SYS_bind, t, (void *)1, alen), EFAULT);
}

static void truncated_and_bad_lengths(void)
{
	ENTER();
	struct sockaddr_un a;
	socklen_t alen = path_addr(&a, "longer-socket-name");
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(bind(s, (struct sockaddr *)&a, alen));
	char buf[sizeof(struct sockaddr_un)];
	memset(buf, 0x7f, sizeof(buf));
	socklen_t len = 6;
	CHECK_SYS(getsockname(s, (struct sockaddr *)buf, &len));
	/* The full length is reported; only 6 bytes are written. */
	CHECK_EQ(len, alen);
	CHECK_MEMEQ(buf + 2, "long", 4);
	CHECK_EQ(buf[6], 0x7f);
	len = (socklen_t)-1;
	CHECK_ERR(getsockname(s, (struct sockaddr *)buf, &len), EINVAL);
	CHECK_ERR(syscall(SYS_getsockname, s, buf, (void *)1), EFAULT);
	len = sizeof(buf);
	CHECK_ERR(syscall(SYS_getsockname, s, (void *)1, &len), EFAULT);
}

static void getpeername_enotconn(void)
{
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	CHECK_ERR(getpeername(s, (struct sockaddr *)&a, &len), ENOTCONN);
	int d = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_ERR(getpeername(d, (struct sockaddr *)&a, &len), ENOTCONN);
}

static void socket_file(void)
{
	ENTER();
	umask(027);
	struct sockaddr_un a;
	socklen_t alen = path_addr(&a, "sock");
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(bind(s, (struct sockaddr *)&a, alen));
	struct stat st;
	CHECK_SYS(lstat("sock", &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0750);
	/* Opening a socket file is ENXIO. */
	CHECK_ERR(open("sock", O_RDONLY), ENXIO);
}

static void connect_errors(void)
{
	ENTER();
	struct sockaddr_un a;
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	socklen_t alen = path_addr(&a, "missing");
	CHECK_ERR(connect(c, (struct sockaddr *)&a, alen), ENOENT);
	CHECK_SYS(close(CHECK_SYS(open("file", O_CREAT | O_RDWR, 0644))));
	alen = path_addr(&a, "file");
	CHECK_ERR(connect(c, (struct sockaddr *)&a, alen), ECONNREFUSED);
	/* Bound but not listening. */
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	alen = path_addr(&a, "sock");
	CHECK_SYS(bind(s, (struct sockaddr *)&a, alen));
	CHECK_ERR(connect(c, (struct sockaddr *)&a, alen), ECONNREFUSED);
	/* Unlinking the name leaves a listener unreachable by path. */
	CHECK_SYS(listen(s, 1));
	CHECK_SYS(unlink("sock"));
	CHECK_ERR(connect(c, (struct sockaddr *)&a, alen), ENOENT);
}

static void connect_needs_write_permission(void)
{
	ENTER();
	struct sockaddr_un a;
	socklen_t alen = path_addr(&a, "sock");
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(bind(s, (struct sockaddr *)&a, alen));
	CHECK_SYS(listen(s, 4));
	CHECK_SYS(chmod("sock", 0755));
	AS_USER(
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		CHILD_CHECK(c >= 0);
		CHILD_ERR(connect(c, (struct sockaddr *)&a, alen), EACCES);
	);
	CHECK_SYS(chmod("sock", 0777));
	AS_USER(
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		CHILD_CHECK(c >= 0);
		CHILD_CHECK(connect(c, (struct sockaddr *)&a, alen) == 0);
	);
}

static const struct mt_case cases[] = {
	MT_CASE(unbound_name),
	MT_CASE(autobind_name),
	MT_CASE(path_bind_and_names),
	MT_CASE(bind_errors),
	MT_CASE(truncated_and_bad_lengths),
	MT_CASE(getpeername_enotconn),
	MT_CASE(socket_file),
	MT_CASE(connect_errors),
	MT_CASE(connect_needs_write_permission),
};

MT_MAIN(cases)
