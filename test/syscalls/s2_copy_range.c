//go:build ignore

/* s2_copy_range: copy_file_range: explicit and implicit offsets, short
 * copies at end of file, and the errors for flags, descriptors opened the
 * wrong way, non-regular files, O_APPEND targets, overlapping ranges and
 * bad offset pointers. */
#include "moattest.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int memfd_with(const char *s)
{
	int fd = memfd_create("c", 0);
	if (fd >= 0 && s && write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		return -1;
	return fd;
}

static void copy_implicit_offsets(void)
{
	int in = CHECK_SYS(memfd_with("0123456789"));
	int out = CHECK_SYS(memfd_with(NULL));
	CHECK_SYS(lseek(in, 2, SEEK_SET));
	CHECK_EQ(copy_file_range(in, NULL, out, NULL, 5, 0), 5);
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 7);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 5);
	char buf[8];
	CHECK_EQ(pread(out, buf, sizeof(buf), 0), 5);
	CHECK_MEMEQ(buf, "23456", 5);
}

static void copy_explicit_offsets(void)
{
	int in = CHECK_SYS(memfd_with("abcdefgh"));
	int out = CHECK_SYS(memfd_with("XXXXXXXX"));
	loff_t oi = 1, oo = 4;
	CHECK_EQ(copy_file_range(in, &oi, out, &oo, 3, 0), 3);
	CHECK_EQ(oi, 4);
	CHECK_EQ(oo, 7);
	/* The file offsets do not move when pointers are given. */
	CHECK_EQ(lseek(in, 0, SEEK_CUR), 8);
	CHECK_EQ(lseek(out, 0, SEEK_CUR), 8);
	char buf[8];
	CHECK_EQ(pread(out, buf, 8, 0), 8);
	CHECK_MEMEQ(buf, "XXXXbcdX", 8);
}

static void copy_short_at_eof(void)
{
	int in = CHECK_SYS(memfd_with("abc"));
	int out = CHECK_SYS(memfd_with(NULL));
	loff_t oi = 1;
	CHECK_EQ(copy_file_range(in, &oi, out, NULL, 100, 0), 2);
	CHECK_EQ(oi, 3);
	CHECK_EQ(copy_file_range(in, &oi, out, NULL, 100, 0), 0);
	oi = 1000;
	CHECK_EQ(copy_file_range(in, &oi, out, NULL, 10, 0), 0);
	CHECK_EQ(copy_file_range(in, NULL, out, NULL, 0, 0), 0);
}

static void copy_extends_target(void)
{
	int in = CHECK_SYS(memfd_with("zz"));
	int out = CHECK_SYS(memfd_with(NULL));
	loff_t oi = 0, oo = 10;
	CHECK_EQ(copy_file_range(in, &oi, out, &oo, 2, 0), 2);
	struct stat st;
	CHECK_SYS(fstat(out, &st));
	CHECK_EQ(st.st_size, 12);
	char buf[12];
	CHECK_EQ(pread(out, buf, 12, 0), 12);
	CHECK_MEMEQ(buf, "\0\0\0\0\0\0\0\0\0\0zz", 12);
}

static void bad_flags_einval(void)
{
	int in = CHECK_SYS(memfd_with("abc"));
	int out = CHECK_SYS(memfd_with(NULL));
	CHECK_ERR(copy_file_range(in, NULL, out, NULL, 1, 1), EINVAL);
	CHECK_ERR(copy_file_range(in, NULL, out, NULL, 1, ~0u), EINVAL);
	/* Negative offsets: EOVERFLOW on current kernels (6.x), EINVAL on
	 * older ones. */
	loff_t neg = -1;
	errno = 0;
	CHECK_EQ(copy_file_range(in, &neg, out, NULL, 1, 0), -1);
	CHECK(errno == EOVERFLOW || errno == EINVAL);
	errno = 0;
	CHECK_EQ(copy_file_range(in, NULL, out, &neg, 1, 0), -1);
	CHECK(errno == EOVERFLOW || errno == EINVAL);
}

static void bad_descriptors_ebadf(void)
{
	ENTER();
	int in = CHECK_SYS(open("in", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(write(in, "abc", 3), 3);
	int out = CHECK_SYS(open("out", O_CREAT | O_RDWR, 0644));
	CHECK_ERR(copy_file_range(-1, NULL, out, NULL, 1, 0), EBADF);
	CHECK_ERR(copy_file_range(in, NULL, 9999, NULL, 1, 0), EBADF);
	int wo = CHECK_SYS(open("in", O_WRONLY));
	CHECK_ERR(copy_file_range(wo, NULL, out, NULL, 1, 0), EBADF);
	int ro = CHECK_SYS(open("out", O_RDONLY));
	CHECK_ERR(copy_file_range(in, NULL, ro, NULL, 1, 0), EBADF);
	int app = CHECK_SYS(open("out", O_WRONLY | O_APPEND));
	CHECK_ERR(copy_file_range(in, NULL, app, NULL, 1, 0), EBADF);
}

static void non_regular_files(void)
{
	int in = CHECK_SYS(memfd_with("abc"));
	int out = CHECK_SYS(memfd_with(NULL));
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(copy_file_range(d, NULL, out, NULL, 1, 0), EISDIR);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(copy_file_range(p[0], NULL, out, NULL, 1, 0), EINVAL);
	CHECK_ERR(copy_file_range(in, NULL, p[1], NULL, 1, 0), EINVAL);
}

static void same_file_overlap_einval(void)
{
	int fd = CHECK_SYS(memfd_with("abcdefgh"));
	loff_t a = 0, b = 2;
	CHECK_ERR(copy_file_range(fd, &a, fd, &b, 4, 0), EINVAL);
	a = 0;
	b = 4;
	CHECK_EQ(copy_file_range(fd, &a, fd, &b, 4, 0), 4);
	char buf[8];
	CHECK_EQ(pread(fd, buf, 8, 0), 8);
	CHECK_MEMEQ(buf, "abcdabcd", 8);
}

static void bad_offset_pointer_efault(void)
{
	int in = CHECK_SYS(memfd_with("abc"));
	int out = CHECK_SYS(memfd_with(NULL));
	CHECK_ERR(syscall(SYS_copy_file_range, in, (void *)1, out, NULL, 1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_copy_file_range, in, NULL, out, (void *)1, 1, 0), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(copy_implicit_offsets),
	MT_CASE(copy_explicit_offsets),
	MT_CASE(copy_short_at_eof),
	MT_CASE(copy_extends_target),
	MT_CASE(bad_flags_einval),
	MT_CASE(bad_descriptors_ebadf),
	MT_CASE(non_regular_files),
	MT_CASE(same_file_overlap_einval),
	MT_CASE(bad_offset_pointer_efault),
};

MT_MAIN(cases)
