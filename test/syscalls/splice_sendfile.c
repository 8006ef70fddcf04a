//go:build ignore

/* splice_sendfile: moving data without user buffers: splice between
 * pipes and from a file into a pipe (offsets, SPLICE_F_NONBLOCK, zero
 * lengths, errors), tee duplicating without consuming, and sendfile with
 * and without an offset pointer, with its errors. */
#include "moattest.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

static void splice_pipe_to_pipe(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_EQ(write(a[1], "abcdef", 6), 6);
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 4, 0), 4);
	char buf[8];
	CHECK_EQ(read(b[0], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "abcd", 4);
	CHECK_EQ(read(a[0], buf, sizeof(buf)), 2);
	CHECK_MEMEQ(buf, "ef", 2);
}

static void splice_file_to_pipe_offsets(void)
{
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	int p[2];
	CHECK_SYS(pipe(p));
	loff_t off = 6;
	CHECK_EQ(splice(f, &off, p[1], NULL, 4, 0), 4);
	/* The offset variable advanced; the file offset did not. */
	CHECK_EQ(off, 10);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 0);
	char buf[8];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "moat", 4);
	/* Without an offset pointer the file offset moves. */
	CHECK_EQ(splice(f, NULL, p[1], NULL, 5, 0), 5);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 5);
	/* At EOF: 0. */
	off = 11;
	CHECK_EQ(splice(f, &off, p[1], NULL, 5, 0), 0);
}

static void splice_errors(void)
{
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	int g = CHECK_SYS(open("/dev/null", O_WRONLY));
	int p[2];
	CHECK_SYS(pipe(p));
	/* Neither end a pipe. */
	CHECK_ERR(splice(f, NULL, g, NULL, 4, 0), EINVAL);
	/* An offset for a pipe end. */
	loff_t off = 0;
	CHECK_ERR(splice(p[0], &off, g, NULL, 4, 0), ESPIPE);
	CHECK_ERR(splice(999, NULL, p[1], NULL, 4, 0), EBADF);
	/* Wrong direction: reading from the write end. */
	CHECK_ERR(splice(p[1], NULL, g, NULL, 4, 0), EBADF);
	CHECK_ERR(splice(f, NULL, p[1], NULL, 4, 0x100), EINVAL);
	/* Same pipe on both sides. */
	CHECK_ERR(splice(p[0], NULL, p[1], NULL, 4, 0), EINVAL);
	off = -1;
	CHECK_ERR(splice(f, &off, p[1], NULL, 4, 0), EINVAL);
}

static void splice_nonblock_and_zero(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_ERR(splice(a[0], NULL, b[1], NULL, 4, SPLICE_F_NONBLOCK), EAGAIN);
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 0, 0), 0);
	/* A closed writer and an empty pipe: 0 (EOF). */
	close(a[1]);
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 4, 0), 0);
}

static void tee_does_not_consume(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_EQ(write(a[1], "xyz", 3), 3);
	CHECK_EQ(tee(a[0], b[1], 10, 0), 3);
	char buf[8];
	CHECK_EQ(read(b[0], buf, sizeof(buf)), 3);
	CHECK_EQ(read(a[0], buf, sizeof(buf)), 3);
	CHECK_MEMEQ(buf, "xyz", 3);
	/* tee needs two pipes. */
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_ERR(tee(f, b[1], 10, 0), EINVAL);
	CHECK_ERR(tee(a[0], a[1], 10, 0), EINVAL);
	CHECK_ERR(tee(a[0], b[1], 10, SPLICE_F_NONBLOCK), EAGAIN);
}

static void sendfile_with_offset_pointer(void)
{
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	int p[2];
	CHECK_SYS(pipe(p));
	off_t off = 6;
	CHECK_EQ(sendfile(p[1], f, &off, 100), 5);
	CHECK_EQ(off, 11);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 0);
	char buf[8];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "moat\n", 5);
	CHECK_EQ(sendfile(p[1], f, NULL, 5), 5);
	CHECK_EQ(lseek(f, 0, SEEK_CUR), 5);
	CHECK_EQ(sendfile(p[1], f, NULL, 0), 0);
}

static void sendfile_errors(void)
{
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(sendfile(p[1], 999, NULL, 4), EBADF);
	CHECK_ERR(sendfile(999, f, NULL, 4), EBADF);
	/* The output must be open for writing, the input for reading. */
	CHECK_ERR(sendfile(f, f, NULL, 4), EBADF);
	int w = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK_ERR(sendfile(p[1], w, NULL, 4), EBADF);
	off_t neg = -1;
	CHECK_ERR(sendfile(p[1], f, &neg, 4), EINVAL);
	CHECK_ERR(sendfile(p[1], f, (off_t *)1, 4), EFAULT);
}

static void sendfile_to_dev_null(void)
{
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	int n = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK_EQ(sendfile(n, f, NULL, 100), 11);
	CHECK_EQ(sendfile(n, f, NULL, 100), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(splice_pipe_to_pipe),
	MT_CASE(splice_file_to_pipe_offsets),
	MT_CASE(splice_errors),
	MT_CASE(splice_nonblock_and_zero),
	MT_CASE(tee_does_not_consume),
	MT_CASE(sendfile_with_offset_pointer),
	MT_CASE(sendfile_errors),
	MT_CASE(sendfile_to_dev_null),
};

MT_MAIN(cases)
