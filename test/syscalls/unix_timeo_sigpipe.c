//go:build ignore

/* unix_timeo_sigpipe: SO_RCVTIMEO and SO_SNDTIMEO bound read(2), readv(2),
 * write(2) and send(2) as they bound recv(2) (EAGAIN once they pass) on
 * stream, datagram and seqpacket Unix sockets; SIGPIPE comes with EPIPE
 * only on stream sockets (and not with MSG_NOSIGNAL), never on datagram or
 * seqpacket ones, whether through write(2) or send(2); a zero-length read
 * of an empty socket returns 0 at once. */
#include "moattest.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define TIMEO_MS 50

static void set_timeo(int fd, int opt)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = TIMEO_MS * 1000 };
	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/* waited reports whether at least most of the timeout passed since t0. */
static int waited(int64_t t0)
{
	return mt_now_ns() - t0 >= (int64_t)(TIMEO_MS - 10) * 1000000;
}

static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };

static void rcvtimeo_bounds_read(void)
{
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int sv[2];
		CHECK_SYS(socketpair(AF_UNIX, types[i], 0, sv));
		set_timeo(sv[0], SO_RCVTIMEO);
		char c;
		int64_t t0 = mt_now_ns();
		CHECK_ERR(read(sv[0], &c, 1), EAGAIN);
		CHECK(waited(t0));
		struct iovec iov = { &c, 1 };
		t0 = mt_now_ns();
		CHECK_ERR(readv(sv[0], &iov, 1), EAGAIN);
		CHECK(waited(t0));
		/* Data that arrives is read as usual. */
		CHECK_EQ(write(sv[1], "k", 1), 1);
		CHECK_EQ(read(sv[0], &c, 1), 1);
		CHECK_EQ(c, 'k');
		close(sv[0]);
		close(sv[1]);
	}
}

/* fill writes non-blocking until the socket takes no more. */
static int fill(int fd, size_t chunk)
{
	static char buf[65536];
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	int n = 0;
	while (write(fd, buf, chunk) > 0 && n < 100000)
		n++;
	int err = errno;
	fcntl(fd, F_SETFL, fl);
	return err == EAGAIN ? n : -1;
}

static void sndtimeo_bounds_write_and_send(void)
{
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int sv[2];
		CHECK_SYS(socketpair(AF_UNIX, types[i], 0, sv));
		CHECK_GT(fill(sv[0], 1024), 0);
		set_timeo(sv[0], SO_SNDTIMEO);
		static char buf[1024];
		int64_t t0 = mt_now_ns();
		CHECK_ERR(write(sv[0], buf, sizeof(buf)), EAGAIN);
		CHECK(waited(t0));
		t0 = mt_now_ns();
		CHECK_ERR(send(sv[0], buf, sizeof(buf), 0), EAGAIN);
		CHECK(waited(t0));
		struct iovec iov = { buf, sizeof(buf) };
		t0 = mt_now_ns();
		CHECK_ERR(writev(sv[0], &iov, 1), EAGAIN);
		CHECK(waited(t0));
		close(sv[0]);
		close(sv[1]);
	}
}

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static void sigpipe_only_for_streams(void)
{
	signal(SIGPIPE, on_sigpipe);
	int sv[2];
	/* Seqpacket, peer gone: EPIPE, no signal. */
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	close(sv[1]);
	sigpipes = 0;
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_EQ(sigpipes, 0);
	close(sv[0]);
	/* Seqpacket, own SHUT_WR. */
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	CHECK_SYS(shutdown(sv[0], SHUT_WR));
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 0);
	close(sv[0]);
	close(sv[1]);
	/* Datagram, peer shut down reading, and own SHUT_WR. */
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CHECK_SYS(shutdown(sv[1], SHUT_RD));
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_SYS(shutdown(sv[0], SHUT_WR));
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 0);
	close(sv[0]);
	close(sv[1]);
	/* Datagram, peer closed: ECONNREFUSED, then not connected. */
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	close(sv[1]);
	CHECK_ERR(write(sv[0], "x", 1), ECONNREFUSED);
	CHECK_ERR(write(sv[0], "x", 1), ENOTCONN);
	CHECK_EQ(sigpipes, 0);
	close(sv[0]);
	/* Stream: write and send raise it, MSG_NOSIGNAL does not. */
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	close(sv[1]);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 1);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_EQ(sigpipes, 2);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(sigpipes, 2);
	close(sv[0]);
}

static void zero_length_read_returns(void)
{
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int sv[2];
		CHECK_SYS(socketpair(AF_UNIX, types[i], 0, sv));
		char c;
		/* Blocking and empty, yet it does not wait. */
		CHECK_EQ(read(sv[0], &c, 0), 0);
		CHECK_EQ(write(sv[1], "z", 1), 1);
		CHECK_EQ(read(sv[0], &c, 0), 0);
		/* The record is still there. */
		CHECK_EQ(read(sv[0], &c, 1), 1);
		CHECK_EQ(c, 'z');
		close(sv[0]);
		close(sv[1]);
	}
}

static const struct mt_case cases[] = {
	MT_CASE(rcvtimeo_bounds_read),
	MT_CASE(sndtimeo_bounds_write_and_send),
	MT_CASE(sigpipe_only_for_streams),
	MT_CASE(zero_length_read_returns),
};

MT_MAIN(cases)
