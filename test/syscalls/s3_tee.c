//go:build ignore

/* s3_tee: tee in depth: copying to several pipes, starting after partial
 * reads, bounded by len and by the output pipe's room, blocking tee woken
 * by a writer, EOF (0) once writers close, SPLICE_F_NONBLOCK and O_NONBLOCK
 * descriptors (EAGAIN), tee across several pipe buffers and followed by a
 * consuming splice, and wrong descriptor kinds and directions (EINVAL,
 * EBADF). */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int pipe_pair(int p[2])
{
	return pipe(p);
}

static void tee_to_several_pipes(void)
{
	int in[2], a[2], b[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(a));
	CHECK_SYS(pipe_pair(b));
	CHECK_EQ(write(in[1], "broadcast", 9), 9);
	CHECK_EQ(tee(in[0], a[1], 100, 0), 9);
	CHECK_EQ(tee(in[0], b[1], 100, 0), 9);
	char x[16];
	CHECK_EQ(read(a[0], x, sizeof x), 9);
	CHECK_MEMEQ(x, "broadcast", 9);
	CHECK_EQ(read(b[0], x, sizeof x), 9);
	CHECK_MEMEQ(x, "broadcast", 9);
	/* The input still holds everything. */
	CHECK_EQ(read(in[0], x, sizeof x), 9);
}

static void tee_after_partial_read(void)
{
	int in[2], out[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(out));
	CHECK_EQ(write(in[1], "0123456789", 10), 10);
	char x[16];
	CHECK_EQ(read(in[0], x, 4), 4);
	/* tee starts at what is left, and len bounds it. */
	CHECK_EQ(tee(in[0], out[1], 3, 0), 3);
	CHECK_EQ(read(out[0], x, sizeof x), 3);
	CHECK_MEMEQ(x, "456", 3);
	CHECK_EQ(tee(in[0], out[1], 100, 0), 6);
	CHECK_EQ(read(out[0], x, sizeof x), 6);
	CHECK_MEMEQ(x, "456789", 6);
}

static void tee_bounded_by_output_room(void)
{
	int in[2], out[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(out));
	int sz = CHECK_SYS(fcntl(out[1], F_SETPIPE_SZ, 4096));
	CHECK_EQ(sz, 4096);
	CHECK_SYS(fcntl(out[1], F_SETFL, O_NONBLOCK));
	/* Fill the output pipe but for nothing: tee cannot move a byte. */
	static char blob[4096];
	CHECK_EQ(write(out[1], blob, sizeof blob), 4096);
	CHECK_EQ(write(in[1], "abc", 3), 3);
	CHECK_ERR(tee(in[0], out[1], 3, SPLICE_F_NONBLOCK), EAGAIN);
	/* Drained, one buffer's worth goes. */
	CHECK_EQ(read(out[0], blob, sizeof blob), 4096);
	CHECK_EQ(tee(in[0], out[1], 3, SPLICE_F_NONBLOCK), 3);
}

static void tee_eof_and_empty(void)
{
	int in[2], out[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(out));
	/* Empty with a writer: EAGAIN under SPLICE_F_NONBLOCK. */
	CHECK_ERR(tee(in[0], out[1], 10, SPLICE_F_NONBLOCK), EAGAIN);
	/* Zero length: 0 without waiting. */
	CHECK_EQ(tee(in[0], out[1], 0, 0), 0);
	/* All writers gone and empty: 0 (EOF). */
	CHECK_SYS(close(in[1]));
	CHECK_EQ(tee(in[0], out[1], 10, 0), 0);
	CHECK_EQ(tee(in[0], out[1], 10, SPLICE_F_NONBLOCK), 0);
}

struct delayed {
	int fd;
};

static void *late_writer(void *arg)
{
	struct delayed *d = arg;
	mt_wait_blocked((pid_t)syscall(SYS_getpid), 5000);
	write(d->fd, "late", 4);
	return NULL;
}

static void blocking_tee_woken_by_writer(void)
{
	int in[2], out[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(out));
	struct delayed d = {in[1]};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, late_writer, &d));
	CHECK_EQ(tee(in[0], out[1], 10, 0), 4);
	CHECK_RET0(pthread_join(t, NULL));
	char x[8];
	CHECK_EQ(read(out[0], x, sizeof x), 4);
	CHECK_MEMEQ(x, "late", 4);
}

static void tee_wrong_kinds(void)
{
	int in[2], out[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(out));
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	int m = CHECK_SYS(memfd_create("m", 0));
	CHECK_EQ(write(in[1], "x", 1), 1);
	/* Both ends must be pipes. */
	CHECK_ERR(tee(s[0], out[1], 1, 0), EINVAL);
	CHECK_ERR(tee(in[0], s[1], 1, 0), EINVAL);
	CHECK_ERR(tee(in[0], m, 1, 0), EINVAL);
	/* Wrong directions: the read end must be readable, the write end
	 * writable. */
	CHECK_ERR(tee(in[1], out[1], 1, 0), EBADF);
	CHECK_ERR(tee(in[0], out[0], 1, 0), EBADF);
	CHECK_ERR(tee(99, out[1], 1, 0), EBADF);
	CHECK_ERR(tee(in[0], 99, 1, 0), EBADF);
	/* The other splice flags are accepted and mean nothing here. */
	CHECK_EQ(tee(in[0], out[1], 1, SPLICE_F_MORE | SPLICE_F_MOVE), 1);
}

static void tee_nonblocking_descriptors(void)
{
	int in[2], out[2];
	CHECK_SYS(pipe2(in, O_NONBLOCK));
	CHECK_SYS(pipe_pair(out));
	/* An O_NONBLOCK input counts as SPLICE_F_NONBLOCK. */
	CHECK_ERR(tee(in[0], out[1], 10, 0), EAGAIN);
	CHECK_EQ(write(in[1], "nb", 2), 2);
	CHECK_EQ(tee(in[0], out[1], 10, 0), 2);
}

static void tee_then_splice_consumes(void)
{
	int in[2], out[2], sink[2];
	CHECK_SYS(pipe_pair(in));
	CHECK_SYS(pipe_pair(out));
	CHECK_SYS(pipe_pair(sink));
	CHECK_EQ(write(in[1], "payload", 7), 7);
	CHECK_EQ(tee(in[0], out[1], 7, 0), 7);
	/* splice moves what tee only copied. */
	CHECK_EQ(splice(in[0], NULL, sink[1], NULL, 7, 0), 7);
	CHECK_ERR(tee(in[0], out[1], 7, SPLICE_F_NONBLOCK), EAGAIN);
	char x[16];
	CHECK_EQ(read(out[0], x, sizeof x), 7);
	CHECK_EQ(read(sink[0], x, sizeof x), 7);
	CHECK_MEMEQ(x, "payload", 7);
	/* Several writes are several buffers: tee copies across them. */
	CHECK_EQ(write(in[1], "ab", 2), 2);
	CHECK_EQ(write(in[1], "cd", 2), 2);
	CHECK_EQ(write(in[1], "ef", 2), 2);
	CHECK_EQ(tee(in[0], out[1], 5, 0), 5);
	CHECK_EQ(read(out[0], x, sizeof x), 5);
	CHECK_MEMEQ(x, "abcde", 5);
}

static const struct mt_case cases[] = {
	MT_CASE(tee_to_several_pipes),
	MT_CASE(tee_after_partial_read),
	MT_CASE(tee_bounded_by_output_room),
	MT_CASE(tee_eof_and_empty),
	MT_CASE(blocking_tee_woken_by_writer),
	MT_CASE(tee_wrong_kinds),
	MT_CASE(tee_nonblocking_descriptors),
	MT_CASE(tee_then_splice_consumes),
};

MT_MAIN(cases)
