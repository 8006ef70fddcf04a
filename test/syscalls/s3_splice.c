//go:build ignore

/* s3_splice: splice between pipes and files or sockets: a pipe into a
 * file at an offset pointer (the file position untouched) or at the file
 * position, past the end (a hole), into O_APPEND files (EINVAL), sockets
 * in and out of pipes, short counts when less is queued, EOF once writers
 * close, a blocking splice woken by a writer, a full output pipe with
 * SPLICE_F_NONBLOCK, unknown flags, and offset/descriptor errors. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void pipe_to_file_offsets(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int f = CHECK_SYS(memfd_create("f", 0));
	CHECK_EQ(write(f, "0123456789", 10), 10);
	CHECK_SYS(lseek(f, 1, SEEK_SET));
	CHECK_EQ(write(p[1], "AB", 2), 2);
	loff_t off = 4;
	CHECK_EQ(splice(p[0], NULL, f, &off, 2, 0), 2);
	CHECK_EQ(off, 6);
	/* The file position did not move. */
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 1);
	/* Without an offset pointer, the write goes to the position. */
	CHECK_EQ(write(p[1], "xy", 2), 2);
	CHECK_EQ(splice(p[0], NULL, f, NULL, 2, 0), 2);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 3);
	char b[16];
	CHECK_EQ(pread(f, b, sizeof b, 0), 10);
	CHECK_MEMEQ(b, "0xy3AB6789", 10);
}

static void pipe_to_file_past_end(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int f = CHECK_SYS(memfd_create("f", 0));
	CHECK_EQ(write(p[1], "end", 3), 3);
	loff_t off = 10000;
	CHECK_EQ(splice(p[0], NULL, f, &off, 3, 0), 3);
	struct stat st;
	CHECK_SYS(fstat(f, &st));
	CHECK_EQ(st.st_size, 10003);
	char b[4];
	CHECK_EQ(pread(f, b, 3, 5000), 3);
	CHECK_MEMEQ(b, "\0\0\0", 3);
}

static void append_file_refused(void)
{
	ENTER();
	int p[2];
	CHECK_SYS(pipe(p));
	int f = CHECK_SYS(open("f", O_CREAT | O_WRONLY | O_APPEND, 0644));
	CHECK_EQ(write(p[1], "ab", 2), 2);
	CHECK_ERR(splice(p[0], NULL, f, NULL, 2, 0), EINVAL);
	loff_t off = 0;
	CHECK_ERR(splice(p[0], NULL, f, &off, 2, 0), EINVAL);
	/* The data stayed in the pipe. */
	char b[4];
	CHECK_EQ(read(p[0], b, sizeof b), 2);
}

static void sockets_and_pipes(void)
{
	int p[2], sv[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	/* Socket to pipe. */
	CHECK_EQ(write(sv[1], "from-sock", 9), 9);
	CHECK_EQ(splice(sv[0], NULL, p[1], NULL, 100, 0), 9);
	/* Pipe to socket. */
	CHECK_EQ(splice(p[0], NULL, sv[0], NULL, 100, 0), 9);
	char b[16];
	CHECK_EQ(mt_read_n(sv[1], b, 9, 1000), 9);
	CHECK_MEMEQ(b, "from-sock", 9);
	/* An offset for a socket, which has no positioned reads: EINVAL. */
	loff_t off = 0;
	CHECK_EQ(write(sv[1], "z", 1), 1);
	CHECK_ERR(splice(sv[0], &off, p[1], NULL, 1, 0), EINVAL);
}

static void short_counts_and_eof(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_EQ(write(a[1], "abc", 3), 3);
	/* Less queued than asked: what is there. */
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 1000, 0), 3);
	/* Writer gone and empty: EOF. */
	CHECK_SYS(close(a[1]));
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 1000, 0), 0);
	/* A file at its end: 0 too. */
	int f = CHECK_SYS(memfd_create("f", 0));
	CHECK_EQ(splice(f, NULL, b[1], NULL, 10, 0), 0);
}

struct delayed {
	int fd;
	pid_t tid;
};

static void *late_writer(void *arg)
{
	struct delayed *d = arg;
	mt_wait_blocked(d->tid, 5000);
	write(d->fd, "late", 4);
	return NULL;
}

static void blocking_splice_woken(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	struct delayed d = {a[1], (pid_t)syscall(SYS_gettid)};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, late_writer, &d));
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 100, 0), 4);
	CHECK_RET0(pthread_join(t, NULL));
	char x[8];
	CHECK_EQ(read(b[0], x, sizeof x), 4);
	CHECK_MEMEQ(x, "late", 4);
}

static void full_output_nonblock(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_EQ(fcntl(b[1], F_SETPIPE_SZ, 4096), 4096);
	static char blob[4096];
	CHECK_EQ(write(b[1], blob, sizeof blob), 4096);
	CHECK_EQ(write(a[1], "x", 1), 1);
	CHECK_ERR(splice(a[0], NULL, b[1], NULL, 1, SPLICE_F_NONBLOCK), EAGAIN);
	/* A file into a full pipe, likewise. */
	int f = CHECK_SYS(memfd_create("f", 0));
	CHECK_EQ(write(f, "y", 1), 1);
	loff_t off = 0;
	CHECK_ERR(splice(f, &off, b[1], NULL, 1, SPLICE_F_NONBLOCK), EAGAIN);
	CHECK_EQ(off, 0);
}

static void flags_accepted(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_EQ(write(a[1], "flags", 5), 5);
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 2, SPLICE_F_MOVE), 2);
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 2, SPLICE_F_MORE), 2);
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 1, SPLICE_F_GIFT), 1);
	CHECK_ERR(splice(a[0], NULL, b[1], NULL, 1, 0x10), EINVAL);
	char x[8];
	CHECK_EQ(read(b[0], x, sizeof x), 5);
	CHECK_MEMEQ(x, "flags", 5);
}

static void offset_and_descriptor_errors(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int f = CHECK_SYS(memfd_create("f", 0));
	CHECK_EQ(write(f, "abc", 3), 3);
	loff_t neg = -1;
	CHECK_ERR(splice(f, &neg, p[1], NULL, 1, 0), EINVAL);
	CHECK_ERR(splice(f, (loff_t *)1, p[1], NULL, 1, 0), EFAULT);
	/* Neither end a pipe: EINVAL. */
	int g = CHECK_SYS(memfd_create("g", 0));
	loff_t off = 0;
	CHECK_ERR(splice(f, &off, g, NULL, 1, 0), EINVAL);
	/* A read-only output file: EBADF. */
	CHECK_EQ(write(p[1], "q", 1), 1);
	int ro = CHECK_SYS(open("/dev/null", O_RDONLY));
	CHECK_ERR(splice(p[0], NULL, ro, NULL, 1, 0), EBADF);
	/* An O_PATH descriptor: EBADF. */
	int op = CHECK_SYS(open("/dev/null", O_PATH));
	CHECK_ERR(splice(p[0], NULL, op, NULL, 1, 0), EBADF);
}

static const struct mt_case cases[] = {
	MT_CASE(pipe_to_file_offsets),
	MT_CASE(pipe_to_file_past_end),
	MT_CASE(append_file_refused),
	MT_CASE(sockets_and_pipes),
	MT_CASE(short_counts_and_eof),
	MT_CASE(blocking_splice_woken),
	MT_CASE(full_output_nonblock),
	MT_CASE(flags_accepted),
	MT_CASE(offset_and_descriptor_errors),
};

MT_MAIN(cases)
