//go:build ignore

/* unix_oob: out-of-band data on AF_UNIX stream sockets (Linux 5.15+):
 * send(MSG_OOB) marks the last byte urgent, recv(MSG_OOB) takes it,
 * ordinary reads stop at the mark and skip the urgent byte,
 * SIOCATMARK, POLLPRI, SO_OOBINLINE, SIGURG to the receiver's owner,
 * and MSG_OOB on the other types. */
#include "moattest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int pair(int sv[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

static int atmark(int fd)
{
	int v = -1;
	if (ioctl(fd, SIOCATMARK, &v) != 0)
		return -1;
	return v;
}

static void oob_byte_is_taken_apart(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	CHECK_EQ(send(sv[0], "abc", 3, MSG_OOB), 3);
	CHECK_EQ(atmark(sv[1]), 0);
	char b[8] = {0};
	/* The read stops at the mark. */
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 2);
	CHECK_MEMEQ(b, "ab", 2);
	CHECK_EQ(atmark(sv[1]), 1);
	struct pollfd p = {.fd = sv[1], .events = POLLIN | POLLPRI};
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN | POLLPRI);
	CHECK_EQ(recv(sv[1], b, 1, MSG_OOB | MSG_PEEK), 1);
	CHECK_EQ(b[0], 'c');
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_OOB), 1);
	CHECK_EQ(b[0], 'c');
	CHECK_ERR(recv(sv[1], b, sizeof(b), MSG_OOB), EINVAL);
	/* The taken byte's empty place is still queued: readable, but a
	 * read finds nothing and drops it. */
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN);
	CHECK_EQ(atmark(sv[1]), 1);
	CHECK_ERR(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), EAGAIN);
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_EQ(atmark(sv[1]), 0);
	close(sv[0]);
	close(sv[1]);
}

static void read_skips_unread_oob_byte(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	CHECK_EQ(send(sv[0], "ab", 2, MSG_OOB), 2);
	CHECK_EQ(send(sv[0], "cd", 2, 0), 2);
	char b[8] = {0};
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 1);
	CHECK_EQ(b[0], 'a');
	/* At the mark with nothing read: the urgent byte is skipped. */
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 2);
	CHECK_MEMEQ(b, "cd", 2);
	CHECK_ERR(recv(sv[1], b, sizeof(b), MSG_OOB), EINVAL);
	close(sv[0]);
	close(sv[1]);
}

static void new_oob_byte_replaces_old(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	CHECK_EQ(send(sv[0], "x", 1, MSG_OOB), 1);
	CHECK_EQ(send(sv[0], "y", 1, MSG_OOB), 1);
	char b[8] = {0};
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_OOB), 1);
	CHECK_EQ(b[0], 'y');
	/* The older urgent byte is ordinary data now. */
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 1);
	CHECK_EQ(b[0], 'x');
	CHECK_ERR(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), EAGAIN);
	close(sv[0]);
	close(sv[1]);
}

static void oobinline_reads_it_in_line(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	int one = 1;
	CHECK_SYS(setsockopt(sv[1], SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)));
	CHECK_EQ(send(sv[0], "ab", 2, MSG_OOB), 2);
	CHECK_EQ(send(sv[0], "c", 1, 0), 1);
	char b[8] = {0};
	CHECK_ERR(recv(sv[1], b, sizeof(b), MSG_OOB), EINVAL);
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 1);
	CHECK_EQ(b[0], 'a');
	CHECK_EQ(atmark(sv[1]), 1);
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 2);
	CHECK_MEMEQ(b, "bc", 2);
	close(sv[0]);
	close(sv[1]);
}

static void oob_on_other_types_and_empty(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	CHECK_ERR(send(sv[0], "", 0, MSG_OOB), EOPNOTSUPP);
	close(sv[0]);
	close(sv[1]);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	CHECK_ERR(send(sv[0], "a", 1, MSG_OOB), EOPNOTSUPP);
	char b;
	CHECK_ERR(recv(sv[1], &b, 1, MSG_OOB | MSG_DONTWAIT), EOPNOTSUPP);
	close(sv[0]);
	close(sv[1]);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_ERR(send(sv[0], "a", 1, MSG_OOB), EOPNOTSUPP);
	close(sv[0]);
	close(sv[1]);
}

static void read_stops_at_taken_mark(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	CHECK_EQ(send(sv[0], "ab", 2, MSG_OOB), 2);
	CHECK_EQ(send(sv[0], "cd", 2, 0), 2);
	char b[8] = {0};
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_OOB), 1);
	CHECK_EQ(b[0], 'b');
	CHECK_EQ(atmark(sv[1]), 0);
	/* The taken byte's place still ends the read before it. */
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_PEEK), 1);
	CHECK_EQ(recv(sv[1], b, sizeof(b), 0), 1);
	CHECK_EQ(b[0], 'a');
	CHECK_EQ(atmark(sv[1]), 1);
	CHECK_EQ(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), 2);
	CHECK_MEMEQ(b, "cd", 2);
	int n = -1;
	CHECK_SYS(ioctl(sv[1], FIONREAD, &n));
	CHECK_EQ(n, 0);
	close(sv[0]);
	close(sv[1]);
}

static volatile sig_atomic_t urg_count;
static volatile int urg_code;

static void on_urg(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	urg_count++;
	urg_code = si->si_code;
}

static void sigurg_to_owner(void)
{
	int sv[2];
	CHECK_SYS(pair(sv));
	struct sigaction sa = {.sa_sigaction = on_urg, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGURG, &sa, NULL));
	urg_count = 0;
	/* No owner: no signal. */
	CHECK_EQ(send(sv[0], "a", 1, MSG_OOB), 1);
	CHECK_EQ(urg_count, 0);
	CHECK_SYS(fcntl(sv[1], F_SETOWN, getpid()));
	CHECK_EQ(send(sv[0], "b", 1, MSG_OOB), 1);
	CHECK_EQ(urg_count, 1);
	CHECK_EQ(urg_code, SI_KERNEL);
	/* Ordinary data does not signal. */
	CHECK_EQ(send(sv[0], "c", 1, 0), 1);
	CHECK_EQ(urg_count, 1);
	close(sv[0]);
	close(sv[1]);
}

static const struct mt_case cases[] = {
	MT_CASE(oob_byte_is_taken_apart),
	MT_CASE(read_skips_unread_oob_byte),
	MT_CASE(read_stops_at_taken_mark),
	MT_CASE(new_oob_byte_replaces_old),
	MT_CASE(oobinline_reads_it_in_line),
	MT_CASE(oob_on_other_types_and_empty),
	MT_CASE(sigurg_to_owner),
};

MT_MAIN(cases)
