//go:build ignore

/* s3_sendfile: sendfile between kinds of files: memfd and tmpfs files into
 * files (the output position advances, the input's only without an offset
 * pointer), into unix stream sockets and full non-blocking pipes (EAGAIN),
 * from sockets and directories (EINVAL), offsets at and past the end, O_APPEND
 * outputs (EINVAL), counts clamped to the maximum transfer, large files
 * in several calls, the same file as input and output, and directories. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int filled_memfd(const char *data, size_t n)
{
	int fd = memfd_create("in", 0);
	if (fd < 0 || write(fd, data, n) != (ssize_t)n)
		return -1;
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void file_to_file(void)
{
	int in = CHECK_SYS(filled_memfd("0123456789", 10));
	int out = CHECK_SYS(memfd_create("out", 0));
	CHECK_EQ(write(out, "AB", 2), 2);
	/* Without an offset pointer, both positions advance. */
	CHECK_EQ(sendfile(out, in, NULL, 4), 4);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 4);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 6);
	/* With one, only the output position moves. */
	off_t off = 8;
	CHECK_EQ(sendfile(out, in, &off, 100), 2);
	CHECK_EQ(off, 10);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 4);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 8);
	char b[16];
	CHECK_EQ(pread(out, b, sizeof b, 0), 8);
	CHECK_MEMEQ(b, "AB012389", 8);
}

static void offsets_at_and_past_end(void)
{
	int in = CHECK_SYS(filled_memfd("abc", 3));
	int out = CHECK_SYS(memfd_create("out", 0));
	off_t off = 3;
	CHECK_EQ(sendfile(out, in, &off, 10), 0);
	CHECK_EQ(off, 3);
	off = 1000;
	CHECK_EQ(sendfile(out, in, &off, 10), 0);
	CHECK_EQ(off, 1000);
	CHECK_SYS(lseek(in, 50, SEEK_SET));
	CHECK_EQ(sendfile(out, in, NULL, 10), 0);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 50);
}

static void into_socket(void)
{
	int in = CHECK_SYS(filled_memfd("over the socket", 15));
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(sendfile(sv[0], in, NULL, 100), 15);
	char b[32];
	CHECK_EQ(mt_read_n(sv[1], b, 15, 1000), 15);
	CHECK_MEMEQ(b, "over the socket", 15);
	/* A datagram socket takes it as one datagram. */
	int dv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_DGRAM, 0, dv));
	off_t off = 5;
	CHECK_EQ(sendfile(dv[0], in, &off, 3), 3);
	CHECK_EQ(recv(dv[1], b, sizeof b, 0), 3);
	CHECK_MEMEQ(b, "the", 3);
}

static void full_nonblocking_pipe(void)
{
	static char big[65536];
	memset(big, 'z', sizeof big);
	int in = CHECK_SYS(filled_memfd(big, sizeof big));
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	/* Only what fits goes; then EAGAIN. */
	ssize_t n = CHECK_SYS(sendfile(p[1], in, NULL, sizeof big));
	CHECK_GT(n, 0);
	CHECK_LE(n, 4096);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), n);
	CHECK_ERR(sendfile(p[1], in, NULL, sizeof big), EAGAIN);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), n);
}

static void input_must_be_a_file(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], "pp", 2), 2);
	int out = CHECK_SYS(memfd_create("out", 0));
	/* Since Linux 5.12 a pipe may be the input; before, EINVAL. */
	errno = 0;
	long r = sendfile(out, p[0], NULL, 2);
	CHECK(r == 2 || (r == -1 && errno == EINVAL));
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[1], "ss", 2), 2);
	/* A directory cannot be the input. */
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(sendfile(out, d, NULL, 2), EINVAL);
	/* An offset pointer with an unseekable input: ESPIPE. */
	off_t off = 0;
	CHECK_ERR(sendfile(out, sv[0], &off, 2), ESPIPE);
	/* Nor can a socket. */
	CHECK_ERR(sendfile(out, sv[0], NULL, 2), EINVAL);
}

static void append_output_refused(void)
{
	ENTER();
	int in = CHECK_SYS(filled_memfd("data", 4));
	int out = CHECK_SYS(open("f", O_CREAT | O_WRONLY | O_APPEND, 0644));
	CHECK_ERR(sendfile(out, in, NULL, 4), EINVAL);
	/* Without O_APPEND it works. */
	CHECK_SYS(fcntl(out, F_SETFL, 0));
	CHECK_EQ(sendfile(out, in, NULL, 4), 4);
}

static void huge_counts_clamped(void)
{
	int in = CHECK_SYS(filled_memfd("short", 5));
	int out = CHECK_SYS(memfd_create("out", 0));
	/* Any count, even SSIZE_MAX, is clamped to what there is. */
	CHECK_EQ(sendfile(out, in, NULL, (size_t)0x7fffffffffffffffLL), 5);
	off_t off = 0;
	CHECK_EQ(sendfile(out, in, &off, (size_t)1 << 40), 5);
	/* A count that is negative as ssize_t: EINVAL. */
	CHECK_ERR(sendfile(out, in, &off, (size_t)-1), EINVAL);
}

static void large_file_in_pieces(void)
{
	size_t sz = 3 * 1024 * 1024 + 17;
	int in = CHECK_SYS(memfd_create("big", 0));
	CHECK_SYS(ftruncate(in, (off_t)sz));
	CHECK_EQ(pwrite(in, "END", 3, (off_t)sz - 3), 3);
	int out = CHECK_SYS(memfd_create("out", 0));
	size_t total = 0;
	while (total < sz) {
		ssize_t n = CHECK_SYS(sendfile(out, in, NULL, 1 << 20));
		CHECK_GT(n, 0);
		total += (size_t)n;
	}
	CHECK_EQ(total, sz);
	struct stat st;
	CHECK_SYS(fstat(out, &st));
	CHECK_EQ(st.st_size, (off_t)sz);
	char b[3];
	CHECK_EQ(pread(out, b, 3, (off_t)sz - 3), 3);
	CHECK_MEMEQ(b, "END", 3);
}

static void same_file_both_ends(void)
{
	int fd = CHECK_SYS(filled_memfd("abcdef", 6));
	/* The same description: reads at the offset pointer, writes at the
	 * file position (the end after seeking). */
	CHECK_SYS(lseek(fd, 6, SEEK_SET));
	off_t off = 0;
	CHECK_EQ(sendfile(fd, fd, &off, 3), 3);
	char b[16];
	CHECK_EQ(pread(fd, b, sizeof b, 0), 9);
	CHECK_MEMEQ(b, "abcdefabc", 9);
	CHECK_EQ(off, 3);
}

static const struct mt_case cases[] = {
	MT_CASE(file_to_file),
	MT_CASE(offsets_at_and_past_end),
	MT_CASE(into_socket),
	MT_CASE(full_nonblocking_pipe),
	MT_CASE(input_must_be_a_file),
	MT_CASE(append_output_refused),
	MT_CASE(huge_counts_clamped),
	MT_CASE(large_file_in_pieces),
	MT_CASE(same_file_both_ends),
};

MT_MAIN(cases)
