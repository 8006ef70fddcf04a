//go:build ignore

/* fx_offsets_sparse: file offsets on /dev/shm: pread/pwrite at negative,
 * huge and overflowing offsets, lseek errors and limits, sparse files and
 * SEEK_DATA/SEEK_HOLE, O_APPEND and the file position, ftruncate under a
 * shared mapping (SIGBUS past EOF, zeroes after regrowth), preadv2 and
 * pwritev2 with offset -1. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char cur_path[256];

static int scratch_file(const char *name, int flags)
{
	snprintf(cur_path, sizeof(cur_path), "/dev/shm/tfiles-%s-%d", name, (int)getpid());
	int fd = open(cur_path, O_RDWR | O_CREAT | O_TRUNC | flags, 0644);
	if (fd < 0)
		mt_fail(__FILE__, __LINE__, "open %s: %s", cur_path, mt_errname(errno));
	return fd;
}

#define SCRATCH(fd, flags)                                     \
	int fd = scratch_file(__func__, flags);                \
	MT_BAIL()

#define DONE() unlink(cur_path)

static void pread_pwrite_negative_offsets(void)
{
	SCRATCH(fd, 0);
	char b[4] = "abcd";
	CHECK_ERR(pread(fd, b, 1, -1), EINVAL);
	CHECK_ERR(pwrite(fd, b, 1, -1), EINVAL);
	CHECK_ERR(pread(fd, b, 1, LLONG_MIN), EINVAL);
	/* A zero-length transfer still checks the offset. */
	CHECK_ERR(pread(fd, b, 0, -5), EINVAL);
	CHECK_ERR(pwrite(fd, b, 0, -5), EINVAL);
	/* The position is untouched by the failures and by pread/pwrite. */
	CHECK_EQ(pwrite(fd, b, 4, 0), 4);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
	CHECK_EQ(pread(fd, b, 4, 100), 0);
	DONE();
}

static void pwrite_huge_offsets(void)
{
	SCRATCH(fd, 0);
	char b[2] = "xy";
	off_t big = (off_t)1 << 40;
	CHECK_EQ(pwrite(fd, b, 1, big), 1);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, big + 1);
	/* Sparse: only one page is allocated. */
	CHECK_LE(st.st_blocks, 64);
	char r[2] = { 9, 9 };
	CHECK_EQ(pread(fd, r, 2, big - 1), 2);
	CHECK_EQ(r[0], 0);
	CHECK_EQ(r[1], 'x');
	CHECK_EQ(pread(fd, r, 1, LLONG_MAX - 1), 0);
	DONE();
}

static void lseek_limits(void)
{
	SCRATCH(fd, 0);
	CHECK_EQ(write(fd, "12345", 5), 5);
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CHECK_ERR(lseek(fd, -6, SEEK_END), EINVAL);
	CHECK_ERR(lseek(fd, -6, SEEK_CUR), EINVAL);
	CHECK_ERR(lseek(fd, 0, 42), EINVAL);
	/* Failures leave the position alone. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(lseek(fd, LLONG_MAX, SEEK_SET), LLONG_MAX);
	/* Past the largest offset is EINVAL, from the position or the end. */
	CHECK_ERR(lseek(fd, 1, SEEK_CUR), EINVAL);
	CHECK_ERR(lseek(fd, LLONG_MAX, SEEK_END), EINVAL);
	CHECK_EQ(lseek(fd, -2, SEEK_END), 3);
	char c;
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, '4');
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(pread(p[0], &c, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(p[1], &c, 1, 0), ESPIPE);
	DONE();
}

static void seek_data_and_hole(void)
{
	SCRATCH(fd, 0);
	const off_t M = 1 << 20;
	char page[4096];
	memset(page, 'd', sizeof(page));
	CHECK_EQ(pwrite(fd, page, 4096, 0), 4096);
	CHECK_EQ(pwrite(fd, page, 4096, M), 4096);
	CHECK_SYS(ftruncate(fd, 2 * M));
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), 4096);
	CHECK_EQ(lseek(fd, 100, SEEK_HOLE), 4096);
	CHECK_EQ(lseek(fd, 4096, SEEK_DATA), M);
	CHECK_EQ(lseek(fd, M + 10, SEEK_DATA), M + 10);
	CHECK_EQ(lseek(fd, M, SEEK_HOLE), M + 4096);
	/* No data after the last page: ENXIO; the hole runs to EOF. */
	CHECK_ERR(lseek(fd, M + 4096, SEEK_DATA), ENXIO);
	CHECK_EQ(lseek(fd, 2 * M - 1, SEEK_HOLE), 2 * M - 1);
	CHECK_ERR(lseek(fd, 2 * M, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, 2 * M, SEEK_HOLE), ENXIO);
	CHECK_ERR(lseek(fd, -1, SEEK_DATA), ENXIO);
	DONE();
}

static void seek_data_hole_dense_file(void)
{
	SCRATCH(fd, 0);
	CHECK_EQ(write(fd, "hello", 5), 5);
	/* A fully written file: all data, the only hole is the virtual one
	 * at EOF. */
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CHECK_EQ(lseek(fd, 3, SEEK_DATA), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), 5);
	CHECK_EQ(lseek(fd, 4, SEEK_HOLE), 5);
	CHECK_ERR(lseek(fd, 5, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, 5, SEEK_HOLE), ENXIO);
	DONE();
}

static void append_moves_position_to_end(void)
{
	SCRATCH(fd, O_APPEND);
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "de", 2), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	/* Another descriptor writes in the middle; appends still go last. */
	int other = CHECK_SYS(open(cur_path, O_RDWR));
	CHECK_EQ(pwrite(other, "XYZ", 3, 10), 3);
	CHECK_EQ(write(fd, "f", 1), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 14);
	/* Clearing O_APPEND with F_SETFL writes at the position again. */
	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	CHECK_EQ(fcntl(fd, F_GETFL) & O_APPEND, 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "A", 1), 1);
	CHECK_SYS(fcntl(fd, F_SETFL, O_APPEND));
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "Z", 1), 1);
	char b[16];
	CHECK_EQ(pread(other, b, 16, 0), 15);
	CHECK_MEMEQ(b, "Abcde\0\0\0\0\0XYZfZ", 15);
	DONE();
}

static void ftruncate_under_shared_mapping(void)
{
	SCRATCH(fd, 0);
	CHECK_SYS(ftruncate(fd, 8192));
	char *m = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	m[0] = 'a';
	m[4096] = 'b';
	CHECK_SYS(ftruncate(fd, 4096));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		volatile char *v = m;
		(void)v[4096];
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(c), SIGBUS);
	/* The first page survives; regrowing brings back zeroes. */
	CHECK_EQ(m[0], 'a');
	CHECK_SYS(ftruncate(fd, 8192));
	CHECK_EQ(m[4096], 0);
	m[4097] = 'c';
	char b;
	CHECK_EQ(pread(fd, &b, 1, 4097), 1);
	CHECK_EQ(b, 'c');
	/* Shrinking inside a page zeroes its tail in the mapping too. */
	m[100] = 'q';
	CHECK_SYS(ftruncate(fd, 50));
	CHECK_SYS(ftruncate(fd, 4096));
	CHECK_EQ(m[100], 0);
	CHECK_EQ(m[0], 'a');
	CHECK_SYS(munmap(m, 8192));
	DONE();
}

static void ftruncate_errors(void)
{
	SCRATCH(fd, 0);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	int ro = CHECK_SYS(open(cur_path, O_RDONLY));
	CHECK_ERR(ftruncate(ro, 0), EINVAL);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(ftruncate(p[1], 0), EINVAL);
	CHECK_ERR(ftruncate(99, 0), EBADF);
	int ap = CHECK_SYS(open(cur_path, O_WRONLY | O_APPEND));
	/* O_APPEND does not forbid truncation. */
	CHECK_SYS(ftruncate(ap, 10));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 10);
	DONE();
}

static void preadv2_pwritev2_current_offset(void)
{
	SCRATCH(fd, 0);
	struct iovec w = { .iov_base = "abcdef", .iov_len = 6 };
	/* Offset -1 means "use and advance the file position". */
	CHECK_EQ(pwritev2(fd, &w, 1, -1, 0), 6);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
	CHECK_EQ(pwritev2(fd, &w, 1, 1, 0), 6);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
	CHECK_EQ(lseek(fd, 2, SEEK_SET), 2);
	char b[8];
	struct iovec r = { .iov_base = b, .iov_len = 3 };
	CHECK_EQ(preadv2(fd, &r, 1, -1, 0), 3);
	CHECK_MEMEQ(b, "bcd", 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_ERR(preadv2(fd, &r, 1, -2, 0), EINVAL);
	CHECK_ERR(pwritev2(fd, &w, 1, -2, 0), EINVAL);
	/* Plain preadv/pwritev reject -1. */
	CHECK_ERR(preadv(fd, &r, 1, -1), EINVAL);
	CHECK_ERR(pwritev(fd, &w, 1, -1), EINVAL);
	CHECK_ERR(preadv2(fd, &r, 1, 0, 0x40000000), EOPNOTSUPP);
	DONE();
}

static const struct mt_case cases[] = {
	MT_CASE(pread_pwrite_negative_offsets),
	MT_CASE(pwrite_huge_offsets),
	MT_CASE(lseek_limits),
	MT_CASE(seek_data_and_hole),
	MT_CASE(seek_data_hole_dense_file),
	MT_CASE(append_moves_position_to_end),
	MT_CASE(ftruncate_under_shared_mapping),
	MT_CASE(ftruncate_errors),
	MT_CASE(preadv2_pwritev2_current_offset),
};

MT_MAIN(cases)
