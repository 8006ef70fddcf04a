//go:build ignore

/* s3_rwf_flags: the per-call flags of preadv2/pwritev2 (RWF_APPEND,
 * RWF_NOAPPEND, RWF_DSYNC, RWF_SYNC, RWF_HIPRI, RWF_NOWAIT, unknown bits)
 * on memfds, tmpfs files, pipes and sockets, and how readv/writev spread
 * data over segments: empty and NULL segments, short reads filling
 * segments in order, EOF, a directory (EISDIR) and wrong access modes. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_HIPRI
#define RWF_HIPRI 0x1
#endif
#ifndef RWF_DSYNC
#define RWF_DSYNC 0x2
#endif
#ifndef RWF_SYNC
#define RWF_SYNC 0x4
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x8
#endif
#ifndef RWF_APPEND
#define RWF_APPEND 0x10
#endif
#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x20
#endif

static long pw2(int fd, const void *b, size_t n, long off, int flags)
{
	struct iovec v = {(void *)b, n};
	return syscall(SYS_pwritev2, fd, &v, 1, off, 0L, flags);
}

static long pr2(int fd, void *b, size_t n, long off, int flags)
{
	struct iovec v = {b, n};
	return syscall(SYS_preadv2, fd, &v, 1, off, 0L, flags);
}

static void append_flag_explicit_offset(void)
{
	int fd = CHECK_SYS(memfd_create("a", 0));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_SYS(lseek(fd, 2, SEEK_SET));
	/* RWF_APPEND writes at the end whatever the offset says, and the
	 * file position stays where it was. */
	CHECK_EQ(pw2(fd, "AB", 2, 0, RWF_APPEND), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
	char b[16];
	CHECK_EQ(pread(fd, b, sizeof b, 0), 12);
	CHECK_MEMEQ(b, "0123456789AB", 12);
}

static void append_flag_current_offset(void)
{
	int fd = CHECK_SYS(memfd_create("a", 0));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_SYS(lseek(fd, 3, SEEK_SET));
	/* At offset -1 the write goes to the end and the position follows
	 * it. */
	CHECK_EQ(pw2(fd, "XY", 2, -1, RWF_APPEND), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 12);
}

static void noappend_on_append_file(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR | O_APPEND, 0644));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	/* On an O_APPEND file pwrite ignores its offset... */
	CHECK_EQ(pw2(fd, "ab", 2, 0, 0), 2);
	char b[16];
	CHECK_EQ(pread(fd, b, sizeof b, 0), 12);
	CHECK_MEMEQ(b, "0123456789ab", 12);
	/* ...unless RWF_NOAPPEND (Linux 6.9) asks for the offset. Older
	 * kernels say EOPNOTSUPP. */
	errno = 0;
	long r = pw2(fd, "ZZ", 2, 0, RWF_NOAPPEND);
	if (r == -1) {
		CHECK_EQ(errno, EOPNOTSUPP);
		return;
	}
	CHECK_EQ(r, 2);
	CHECK_EQ(pread(fd, b, sizeof b, 0), 12);
	CHECK_MEMEQ(b, "ZZ23456789ab", 12);
	/* RWF_NOAPPEND with offset -1 on an O_APPEND file: at the current
	 * position, not the end. */
	CHECK_SYS(lseek(fd, 4, SEEK_SET));
	CHECK_EQ(pw2(fd, "!", 1, -1, RWF_NOAPPEND), 1);
	CHECK_EQ(pread(fd, b, sizeof b, 0), 12);
	CHECK_MEMEQ(b, "ZZ23!56789ab", 12);
}

static void sync_flags_accepted(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(pw2(fd, "abc", 3, 0, RWF_DSYNC), 3);
	CHECK_EQ(pw2(fd, "def", 3, 3, RWF_SYNC), 3);
	CHECK_EQ(pw2(fd, "ghi", 3, 6, RWF_DSYNC | RWF_SYNC), 3);
	char b[16];
	/* The sync flags mean nothing to reads but are accepted. */
	CHECK_EQ(pr2(fd, b, sizeof b, 0, RWF_DSYNC), 9);
	CHECK_MEMEQ(b, "abcdefghi", 9);
	/* RWF_HIPRI without O_DIRECT is a hint only. */
	CHECK_EQ(pr2(fd, b, 3, 0, RWF_HIPRI), 3);
	CHECK_EQ(pw2(fd, "x", 1, 0, RWF_HIPRI), 1);
}

static void unknown_flags(void)
{
	int fd = CHECK_SYS(memfd_create("u", 0));
	char b[4];
	/* Bits beyond the known ones: EOPNOTSUPP, before anything else is
	 * looked at (even a negative offset other than -1). */
	CHECK_ERR(pw2(fd, "a", 1, 0, 0x10000), EOPNOTSUPP);
	CHECK_ERR(pr2(fd, b, 1, 0, 0x10000), EOPNOTSUPP);
	CHECK_ERR(pr2(fd, b, 1, 0, (int)0x80000000), EOPNOTSUPP);
	/* RWF_APPEND means nothing to reads and is ignored there. */
	CHECK_EQ(pr2(fd, b, 1, 0, RWF_APPEND), 0);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 0);
}

static void nowait_on_pipes_and_sockets(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char b[8];
	CHECK_ERR(pr2(p[0], b, sizeof b, -1, RWF_NOWAIT), EAGAIN);
	CHECK_EQ(pw2(p[1], "hi", 2, -1, RWF_NOWAIT), 2);
	CHECK_EQ(pr2(p[0], b, sizeof b, -1, RWF_NOWAIT), 2);
	CHECK_MEMEQ(b, "hi", 2);
	/* A pipe is unseekable: any offset but -1 is ESPIPE. */
	CHECK_ERR(pr2(p[0], b, sizeof b, 0, 0), ESPIPE);
	int s[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	CHECK_ERR(pr2(s[0], b, sizeof b, -1, RWF_NOWAIT), EAGAIN);
	CHECK_EQ(pw2(s[1], "yo", 2, -1, 0), 2);
	CHECK_EQ(pr2(s[0], b, sizeof b, -1, RWF_NOWAIT), 2);
	CHECK_ERR(pw2(s[1], "yo", 2, 5, 0), ESPIPE);
}

static void readv_fills_segments_in_order(void)
{
	int fd = CHECK_SYS(memfd_create("r", 0));
	CHECK_EQ(write(fd, "abcdefgh", 8), 8);
	char a[3], b[4], c[5];
	memset(c, '-', sizeof c);
	/* A NULL, empty segment in the middle is skipped. */
	struct iovec v[4] = {{a, 3}, {NULL, 0}, {b, 4}, {c, 5}};
	CHECK_EQ(preadv(fd, v, 4, 0), 8);
	CHECK_MEMEQ(a, "abc", 3);
	CHECK_MEMEQ(b, "defg", 4);
	CHECK_MEMEQ(c, "h----", 5);
	/* At EOF: 0. */
	CHECK_EQ(preadv(fd, v, 4, 8), 0);
	CHECK_EQ(preadv(fd, v, 4, 100), 0);
	/* Only empty segments: 0 without touching the file. */
	struct iovec e[2] = {{NULL, 0}, {a, 0}};
	CHECK_EQ(readv(fd, e, 2), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
}

static void writev_gathers_segments(void)
{
	int fd = CHECK_SYS(memfd_create("w", 0));
	struct iovec v[4] = {{"one", 3}, {NULL, 0}, {"-two", 4}, {"-three", 6}};
	CHECK_EQ(writev(fd, v, 4), 13);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 13);
	char b[16];
	CHECK_EQ(pread(fd, b, sizeof b, 0), 13);
	CHECK_MEMEQ(b, "one-two-three", 13);
	/* pwritev places the gathered bytes at the offset, sparse before. */
	CHECK_EQ(pwritev(fd, v, 4, 20), 13);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 33);
	CHECK_EQ(pread(fd, b, 7, 13), 7);
	CHECK_MEMEQ(b, "\0\0\0\0\0\0\0", 7);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 13);
}

static void wrong_file_kinds(void)
{
	ENTER();
	CHECK_SYS(mkdir("d", 0755));
	int d = CHECK_SYS(open("d", O_RDONLY | O_DIRECTORY));
	char b[8];
	struct iovec v = {b, sizeof b};
	CHECK_ERR(readv(d, &v, 1), EISDIR);
	CHECK_ERR(pr2(d, b, sizeof b, 0, 0), EISDIR);
	int ro = CHECK_SYS(open("d/f", O_CREAT | O_RDONLY, 0644));
	CHECK_ERR(writev(ro, &v, 1), EBADF);
	CHECK_ERR(pw2(ro, "x", 1, 0, RWF_APPEND), EBADF);
	int wo = CHECK_SYS(open("d/f", O_WRONLY));
	CHECK_ERR(readv(wo, &v, 1), EBADF);
	CHECK_ERR(pr2(wo, b, 1, 0, 0), EBADF);
	int op = CHECK_SYS(open("d/f", O_PATH));
	CHECK_ERR(readv(op, &v, 1), EBADF);
	CHECK_ERR(pw2(op, "x", 1, 0, 0), EBADF);
	CHECK_ERR(pr2(99, b, 1, 0, 0), EBADF);
}

static const struct mt_case cases[] = {
	MT_CASE(append_flag_explicit_offset),
	MT_CASE(append_flag_current_offset),
	MT_CASE(noappend_on_append_file),
	MT_CASE(sync_flags_accepted),
	MT_CASE(unknown_flags),
	MT_CASE(nowait_on_pipes_and_sockets),
	MT_CASE(readv_fills_segments_in_order),
	MT_CASE(writev_gathers_segments),
	MT_CASE(wrong_file_kinds),
};

MT_MAIN(cases)
