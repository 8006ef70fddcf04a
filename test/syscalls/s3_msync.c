//go:build ignore

/* s3_msync: msync on anonymous, memfd and tmpfs file mappings: shared
 * writes visible through read(2) after MS_SYNC and MS_ASYNC, private
 * mappings not written back, MS_INVALIDATE on locked pages (EBUSY), ranges
 * across holes and unmapped pages (ENOMEM), PROT_NONE mappings, length
 * rounding, and the flag and alignment errors (EINVAL). */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096

static int memfd_of(size_t size)
{
	int fd = memfd_create("m", 0);
	if (fd >= 0 && ftruncate(fd, (off_t)size) < 0)
		return -1;
	return fd;
}

static void shared_write_reaches_file(void)
{
	int fd = CHECK_SYS(memfd_of(2 * PG));
	char *p = CHECK_MAP(mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	memcpy(p, "synced", 6);
	memcpy(p + PG, "async", 5);
	CHECK_SYS(msync(p, PG, MS_SYNC));
	CHECK_SYS(msync(p + PG, PG, MS_ASYNC));
	char b[8];
	CHECK_EQ(pread(fd, b, 6, 0), 6);
	CHECK_MEMEQ(b, "synced", 6);
	CHECK_EQ(pread(fd, b, 5, PG), 5);
	CHECK_MEMEQ(b, "async", 5);
}

static void tmpfs_file_mapping(void)
{
	ENTER();
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_SYS(ftruncate(fd, PG));
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	memcpy(p, "through the map", 15);
	CHECK_SYS(msync(p, PG, MS_SYNC | MS_INVALIDATE));
	/* Another descriptor of the file sees the bytes. */
	int fd2 = CHECK_SYS(open("f", O_RDONLY));
	char b[16];
	CHECK_EQ(read(fd2, b, 15), 15);
	CHECK_MEMEQ(b, "through the map", 15);
	/* And a write(2) shows in the mapping. */
	CHECK_EQ(pwrite(fd, "W", 1, 0), 1);
	CHECK_SYS(msync(p, PG, MS_INVALIDATE));
	CHECK_EQ(p[0], 'W');
}

static void private_mapping_not_written(void)
{
	int fd = CHECK_SYS(memfd_of(PG));
	CHECK_EQ(pwrite(fd, "orig", 4, 0), 4);
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	memcpy(p, "priv", 4);
	CHECK_SYS(msync(p, PG, MS_SYNC));
	char b[4];
	CHECK_EQ(pread(fd, b, 4, 0), 4);
	CHECK_MEMEQ(b, "orig", 4);
}

static void invalidate_locked_is_ebusy(void)
{
	int fd = CHECK_SYS(memfd_of(PG));
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	CHECK_SYS(mlock(p, PG));
	CHECK_ERR(msync(p, PG, MS_INVALIDATE), EBUSY);
	CHECK_ERR(msync(p, PG, MS_SYNC | MS_INVALIDATE), EBUSY);
	/* Without MS_INVALIDATE a locked range is fine. */
	CHECK_SYS(msync(p, PG, MS_SYNC));
	CHECK_SYS(munlock(p, PG));
	CHECK_SYS(msync(p, PG, MS_INVALIDATE));
	/* Anonymous locked memory too. */
	char *a = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(mlock(a, PG));
	CHECK_ERR(msync(a, PG, MS_INVALIDATE), EBUSY);
	CHECK_SYS(munlock(a, PG));
}

static void unmapped_ranges_enomem(void)
{
	char *p = CHECK_MAP(mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(munmap(p + PG, PG));
	/* A hole in the middle: ENOMEM (the mapped parts are still
	 * synced). */
	CHECK_ERR(msync(p, 3 * PG, MS_SYNC), ENOMEM);
	CHECK_ERR(msync(p + PG, PG, MS_ASYNC), ENOMEM);
	CHECK_SYS(msync(p, PG, MS_SYNC));
	CHECK_SYS(msync(p + 2 * PG, PG, MS_SYNC));
	CHECK_SYS(munmap(p, 3 * PG));
	CHECK_ERR(msync(p, PG, MS_SYNC), ENOMEM);
}

static void prot_none_and_lengths(void)
{
	char *p = CHECK_MAP(mmap(NULL, 2 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	/* Protection does not matter to msync. */
	CHECK_SYS(msync(p, 2 * PG, MS_SYNC));
	/* The length is rounded up to pages: 1 byte is the first page, and
	 * PG + 1 bytes reach into the second. */
	CHECK_SYS(msync(p, 1, MS_SYNC));
	CHECK_SYS(msync(p, PG + 1, MS_ASYNC));
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(msync(p, PG + 1, MS_ASYNC), ENOMEM);
	/* Zero length: nothing to do, even on unmapped memory. */
	CHECK_SYS(msync(p + PG, 0, MS_SYNC));
}

static void flag_and_alignment_errors(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_ERR(msync(p, PG, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK_ERR(msync(p, PG, MS_ASYNC | MS_SYNC | MS_INVALIDATE), EINVAL);
	CHECK_ERR(msync(p, PG, 8), EINVAL);
	CHECK_ERR(msync(p + 1, PG, MS_SYNC), EINVAL);
	CHECK_ERR(msync(p + 100, 0, MS_SYNC), EINVAL);
	/* No flag at all is accepted (as MS_ASYNC). */
	CHECK_SYS(msync(p, PG, 0));
	/* A length that wraps: ENOMEM. */
	CHECK_ERR(syscall(SYS_msync, p, (size_t)-PG, MS_SYNC), ENOMEM);
}

static void after_truncate(void)
{
	int fd = CHECK_SYS(memfd_of(2 * PG));
	char *p = CHECK_MAP(mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	p[PG] = 'x';
	/* Truncating the file leaves the mapping, and msync of the part
	 * beyond the end still succeeds (the pages are just gone). */
	CHECK_SYS(ftruncate(fd, PG));
	CHECK_SYS(msync(p, 2 * PG, MS_SYNC));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, PG);
}

static const struct mt_case cases[] = {
	MT_CASE(shared_write_reaches_file),
	MT_CASE(tmpfs_file_mapping),
	MT_CASE(private_mapping_not_written),
	MT_CASE(invalidate_locked_is_ebusy),
	MT_CASE(unmapped_ranges_enomem),
	MT_CASE(prot_none_and_lengths),
	MT_CASE(flag_and_alignment_errors),
	MT_CASE(after_truncate),
};

MT_MAIN(cases)
