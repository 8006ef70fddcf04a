//go:build ignore

/* pipe_setsize: F_SETPIPE_SZ and the capacity it gives: blocking writes
 * stop at the new size and go on as a reader drains, POLLOUT follows the
 * new size, growing keeps the data, shrinking to exactly the data held
 * works and below it is EBUSY, a FIFO's size lives as long as some end
 * is open, and /proc/sys/fs/pipe-max-size. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int wfd;
static pid_t writer_tid;
static ssize_t written;

static void *writer(void *arg)
{
	(void)arg;
	static char buf[16384];
	memset(buf, 'w', sizeof buf);
	__atomic_store_n(&writer_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	written = write(wfd, buf, sizeof buf);
	return NULL;
}

static void blocking_write_stops_at_size(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 4096), 4096);
	wfd = p[1];
	writer_tid = 0;
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, writer, NULL), 0);
	while (!__atomic_load_n(&writer_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	CHECK_SYS(mt_wait_blocked(writer_tid, 5000));
	int n = -1;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 4096);
	static char buf[16384];
	size_t got = 0;
	while (got < sizeof buf) {
		ssize_t r = read(p[0], buf + got, sizeof buf - got);
		CHECK(r > 0);
		got += (size_t)r;
	}
	pthread_join(th, NULL);
	CHECK_EQ(written, 16384);
	CHECK_EQ(buf[16383], 'w');
}

static void pollout_follows_size(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	static char buf[4096];
	CHECK_EQ(write(p[1], buf, sizeof buf), 4096);
	struct pollfd pf = {.fd = p[1], .events = POLLOUT};
	CHECK_EQ(poll(&pf, 1, 0), 0);
	/* Growing makes room at once. */
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 8192), 8192);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	CHECK_EQ(write(p[1], buf, sizeof buf), 4096);
	CHECK_ERR(write(p[1], buf, 1), EAGAIN);
	/* Draining it all makes room again. */
	static char big[8192];
	CHECK_EQ(read(p[0], big, sizeof big), 8192);
	CHECK_EQ(poll(&pf, 1, 0), 1);
}

static void resize_keeps_data(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(write(p[1], "0123456789", 10), 10);
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 1 << 20), 1 << 20);
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 4096), 4096);
	char b[16];
	CHECK_EQ(read(p[0], b, sizeof b), 10);
	CHECK_MEMEQ(b, "0123456789", 10);
}

static void shrink_to_exactly_held(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	static char buf[8192];
	CHECK_EQ(write(p[1], buf, sizeof buf), 8192);
	CHECK_ERR(fcntl(p[1], F_SETPIPE_SZ, 4096), EBUSY);
	CHECK_EQ(fcntl(p[1], F_GETPIPE_SZ), 65536);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 8192), 8192);
	CHECK_ERR(write(p[1], buf, 1), EAGAIN);
}

static void fifo_size_lives_with_its_ends(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	int a = CHECK_SYS(open("f", O_RDWR | O_NONBLOCK));
	CHECK_EQ(fcntl(a, F_GETPIPE_SZ), 65536);
	CHECK_EQ(fcntl(a, F_SETPIPE_SZ, 8192), 8192);
	int b = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	CHECK_EQ(fcntl(b, F_GETPIPE_SZ), 8192);
	CHECK_SYS(close(a));
	CHECK_EQ(fcntl(b, F_GETPIPE_SZ), 8192);
	CHECK_SYS(close(b));
	/* All ends closed: a new pipe with the default size. */
	a = CHECK_SYS(open("f", O_RDWR | O_NONBLOCK));
	CHECK_EQ(fcntl(a, F_GETPIPE_SZ), 65536);
}

static void max_size_readable(void)
{
	FILE *f = fopen("/proc/sys/fs/pipe-max-size", "r");
	CHECK(f != NULL);
	long v = 0;
	CHECK_EQ(fscanf(f, "%ld", &v), 1);
	fclose(f);
	CHECK_GE(v, 4096);
	int p[2];
	CHECK_SYS(pipe(p));
	/* Everyone may go up to the limit. */
	CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, v), v);
}

static const struct mt_case cases[] = {
	MT_CASE(blocking_write_stops_at_size),
	MT_CASE(pollout_follows_size),
	MT_CASE(resize_keeps_data),
	MT_CASE(shrink_to_exactly_held),
	MT_CASE(fifo_size_lives_with_its_ends),
	MT_CASE(max_size_readable),
};

MT_MAIN(cases)
