//go:build ignore

/* unix_lifecycle: AF_UNIX sockets across their lifetime: connections
 * pending when the listener closes (ECONNRESET, then end of file), a
 * closed client still accepted, connect blocking on a full backlog until
 * accept, names freed on close, datagrams to oneself, signals during
 * blocking receives (EINTR without SA_RESTART, a restart with it, EINTR
 * under SO_RCVTIMEO), and SO_ERROR consumed once. */
#include "moattest.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	static unsigned long long token;
	while (token == 0)
		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			token = (unsigned long long)mt_now_ns();
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "moat-lc-%llx-%s", token, name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int listen_abstract(const char *name, int backlog)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, backlog) < 0)
		return -1;
	return s;
}

static int connect_abstract(int s, const char *name)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	return connect(s, (struct sockaddr *)&a, len);
}

static void listener_close_resets_pending(void)
{
	int srv = CHECK_SYS(listen_abstract("reset", 4));
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect_abstract(cli, "reset"));
	CHECK_EQ(write(cli, "lost", 4), 4);
	CHECK_SYS(close(srv));
	char buf[8];
	CHECK_ERR(read(cli, buf, sizeof(buf)), ECONNRESET);
	CHECK_EQ(read(cli, buf, sizeof(buf)), 0);
	CHECK_ERR(send(cli, "x", 1, MSG_NOSIGNAL), EPIPE);
	/* The name went with the listener. */
	int again = CHECK_SYS(listen_abstract("reset", 1));
	CHECK_SYS(close(again));
}

static void closed_client_still_accepted(void)
{
	int srv = CHECK_SYS(listen_abstract("gone", 4));
	int cli = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect_abstract(cli, "gone"));
	CHECK_EQ(write(cli, "bye", 3), 3);
	CHECK_SYS(close(cli));
	struct pollfd pf = { .fd = srv, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	int conn = CHECK_SYS(accept(srv, NULL, NULL));
	char buf[8];
	CHECK_EQ(read(conn, buf, sizeof(buf)), 3);
	CHECK_EQ(read(conn, buf, sizeof(buf)), 0);
	/* No peer: SO_PEERCRED still names the one that connected. */
	struct ucred cr;
	socklen_t l = sizeof(cr);
	CHECK_SYS(getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &l));
	CHECK_EQ(cr.pid, getpid());
}

static void *accept_after_delay(void *arg)
{
	int srv = (int)(long)arg;
	usleep(50000);
	int c = accept(srv, NULL, NULL);
	return (void *)(long)c;
}

static void connect_waits_for_backlog(void)
{
	int srv = CHECK_SYS(listen_abstract("full", 0));
	int c1 = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect_abstract(c1, "full"));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, accept_after_delay, (void *)(long)srv));
	int c2 = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	/* Blocks until the thread's accept makes room. */
	CHECK_SYS(connect_abstract(c2, "full"));
	void *ret;
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_GE((long)ret, 0);
}

static volatile pid_t acceptor_tid;

static void *blocked_accept(void *arg)
{
	acceptor_tid = (pid_t)syscall(SYS_gettid);
	int r = accept((int)(long)arg, NULL, NULL);
	return (void *)(long)(r < 0 ? errno : 0);
}

static void shutdown_ends_accept(void)
{
	int srv = CHECK_SYS(listen_abstract("shut", 1));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, blocked_accept, (void *)(long)srv));
	while (acceptor_tid == 0)
		usleep(1000);
	CHECK_SYS(mt_wait_blocked(acceptor_tid, 5000));
	CHECK_SYS(shutdown(srv, SHUT_RDWR));
	void *ret;
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, EINVAL);
	struct pollfd pf = { .fd = srv, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLHUP);
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(connect_abstract(c, "shut"), ECONNREFUSED);
}

static void datagram_to_itself(void)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, "self");
	int s = CHECK_SYS(socket(AF_UNIX, SOCK_DGRAM, 0));
	CHECK_SYS(bind(s, (struct sockaddr *)&a, len));
	CHECK_EQ(sendto(s, "me", 2, 0, (struct sockaddr *)&a, len), 2);
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	char buf[4];
	CHECK_EQ(recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 2);
	CHECK_EQ(flen, len);
	CHECK_MEMEQ(&from, &a, len);
	CHECK_SYS(connect(s, (struct sockaddr *)&a, len));
	CHECK_EQ(send(s, "again", 5, 0), 5);
	CHECK_EQ(recv(s, buf, sizeof(buf), 0), 4);
}

static volatile sig_atomic_t handled;
static void on_alarm(int sig)
{
	(void)sig;
	handled++;
}

static void signal_interrupts_recv(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct sigaction sa = { .sa_handler = on_alarm };
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	struct itimerval it = { .it_value = { 0, 50000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	char c;
	CHECK_ERR(recv(sv[0], &c, 1, 0), EINTR);
	CHECK_EQ(handled, 1);
	/* With SA_RESTART the read goes on and gets the data. */
	sa.sa_flags = SA_RESTART;
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		usleep(200000);
		_exit(write(sv[1], "r", 1) == 1 ? 0 : 1);
	}
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	CHECK_EQ(read(sv[0], &c, 1), 1);
	CHECK_EQ(handled, 2);
	CHECK_EXITED(mt_wait(pid), 0);
	/* Under SO_RCVTIMEO an interrupted wait is EINTR even with SA_RESTART. */
	struct timeval tv = { .tv_sec = 5 };
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	CHECK_ERR(recv(sv[0], &c, 1, 0), EINTR);
	CHECK_EQ(handled, 3);
}

static void so_error_read_once(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[0], "unread", 6), 6);
	CHECK_SYS(close(sv[1]));
	struct pollfd pf = { .fd = sv[0], .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLHUP | POLLERR);
	int err = 0;
	socklen_t l = sizeof(err);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &err, &l));
	CHECK_EQ(err, ECONNRESET);
	CHECK_SYS(getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &err, &l));
	CHECK_EQ(err, 0);
	char buf[8];
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(listener_close_resets_pending),
	MT_CASE(closed_client_still_accepted),
	MT_CASE(connect_waits_for_backlog),
	MT_CASE(shutdown_ends_accept),
	MT_CASE(datagram_to_itself),
	MT_CASE(signal_interrupts_recv),
	MT_CASE(so_error_read_once),
};

MT_MAIN(cases)
