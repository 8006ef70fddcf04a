//go:build ignore

/* mmap_edge: argument checking and edge cases of mmap, munmap, mprotect,
 * mremap, madvise, mincore, mlock/munlock/mlockall, msync and brk. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

static void *anon(size_t len, int prot)
{
	return mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void mmap_zero_length(void)
{
	CHECK(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
}

static void mmap_sharing_type_required(void)
{
	CHECK(mmap(NULL, PG, PROT_READ, MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mmap(NULL, PG, PROT_READ, MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
}

static void mmap_unaligned_offset(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 100) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
}

static void mmap_bad_fd(void)
{
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EBADF);
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, 999, 0) == MAP_FAILED);
	CHECK_EQ(errno, EBADF);
}

static void mmap_file_access_checks(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	/* A shared writable mapping needs a file opened for writing. */
	CHECK(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	/* A private writable one does not. */
	void *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	((char *)p)[0] = 'J';
	munmap(p, PG);
	close(fd);
	/* A write-only descriptor cannot be mapped at all. */
	int w = CHECK_SYS(open("/dev/null", O_WRONLY));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, w, 0) == MAP_FAILED);
	CHECK_EQ(errno, EACCES);
}

static void mmap_unmappable_files(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, p[0], 0) == MAP_FAILED);
	CHECK_EQ(errno, ENODEV);
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, d, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENODEV);
}

static void mmap_fixed_unaligned(void)
{
	CHECK(mmap((void *)0x10000123, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
}

static void mmap_huge_length(void)
{
	CHECK(mmap(NULL, (size_t)1 << 60, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
	/* A length that overflows when page-aligned. */
	CHECK(mmap(NULL, (size_t)-PG + 1, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
}

static void mmap_hint_used_when_free(void)
{
	char *probe = CHECK_MAP(anon(16 * PG, PROT_READ));
	CHECK_SYS(munmap(probe, 16 * PG));
	char *p = CHECK_MAP(mmap(probe + 4 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK(p == probe + 4 * PG);
	munmap(p, PG);
}

static void mmap_anonymous_is_zeroed_and_lazy(void)
{
	size_t len = 64 * PG;
	unsigned char *p = CHECK_MAP(anon(len, PROT_READ | PROT_WRITE));
	for (size_t i = 0; i < len; i += PG)
		CHECK_EQ(p[i], 0);
	CHECK_EQ(p[len - 1], 0);
	munmap(p, len);
}

static void mmap_populate_and_noreserve(void)
{
	unsigned char *p = CHECK_MAP(mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
	unsigned char vec[8];
	CHECK_SYS(mincore(p, 8 * PG, vec));
	for (int i = 0; i < 8; i++)
		CHECK_EQ(vec[i] & 1, 1);
	munmap(p, 8 * PG);
	p = CHECK_MAP(mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
	p[0] = 1;
	CHECK_EQ(p[0], 1);
	munmap(p, 8 * PG);
}

static void mmap_past_eof_sigbus(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	char *p = CHECK_MAP(mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE, fd, 0));
	CHECK_EQ(p[0], 'h');
	/* The rest of the first page past EOF reads as zeros. */
	CHECK_EQ(p[PG - 1], 0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		volatile char c = p[PG];
		(void)c;
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGBUS);
}

static void munmap_errors(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ));
	CHECK_ERR(munmap(p + 1, PG), EINVAL);
	CHECK_ERR(munmap(p, 0), EINVAL);
	CHECK_ERR(munmap((void *)((uintptr_t)1 << 62), PG), EINVAL);
	/* Unmapping what is not mapped succeeds. */
	CHECK_SYS(munmap(p, 2 * PG));
	CHECK_SYS(munmap(p, 2 * PG));
	/* A length not a multiple of the page size is rounded up. */
	p = CHECK_MAP(anon(2 * PG, PROT_READ));
	CHECK_SYS(munmap(p, PG + 1));
	unsigned char v;
	CHECK_ERR(mincore(p + PG, PG, &v), ENOMEM);
}

static void mprotect_edge(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ | PROT_WRITE));
	CHECK_ERR(mprotect(p + 1, PG, PROT_READ), EINVAL);
	CHECK_ERR(mprotect(p, PG, 0x100), EINVAL);
	CHECK_SYS(mprotect(p, 0, PROT_NONE));
	CHECK_SYS(munmap(p + PG, PG));
	/* Part of the range unmapped: ENOMEM, though the mapped part may
	 * have changed. */
	CHECK_ERR(mprotect(p, 2 * PG, PROT_READ), ENOMEM);
	munmap(p, PG);
}

static void mprotect_growsdown_flags(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ));
	/* PROT_GROWSDOWN and PROT_GROWSUP together are invalid. */
	CHECK_ERR(mprotect(p, PG, PROT_READ | PROT_GROWSDOWN | PROT_GROWSUP), EINVAL);
	munmap(p, 2 * PG);
}

static void mprotect_growsdown_plain_mapping(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ));
	/* PROT_GROWSDOWN on a mapping without MAP_GROWSDOWN is EINVAL. */
	CHECK_ERR(mprotect(p, PG, PROT_READ | PROT_GROWSDOWN), EINVAL);
	munmap(p, 2 * PG);
}

static void mremap_errors_more(void)
{
	char *p = CHECK_MAP(anon(4 * PG, PROT_READ | PROT_WRITE));
	CHECK(mremap(p + 1, PG, 2 * PG, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mremap(p, PG, 0, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mremap(p, PG, 2 * PG, 0x80) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	/* MREMAP_FIXED needs MREMAP_MAYMOVE. */
	CHECK(mremap(p, PG, PG, MREMAP_FIXED, p + 2 * PG) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	/* Overlapping source and target. */
	CHECK(mremap(p, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, p + PG) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	/* Growing in place into a mapped neighbour without MAYMOVE. */
	CHECK_SYS(munmap(p + 2 * PG, 2 * PG));
	char *q = CHECK_MAP(mmap(p + 2 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	CHECK(q == p + 2 * PG);
	CHECK(mremap(p, 2 * PG, 3 * PG, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
	/* Unmapped source. */
	CHECK(mremap(p + 3 * PG, PG, 2 * PG, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_EQ(errno, EFAULT);
	munmap(p, 3 * PG);
}

static void mremap_same_size_noop(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ | PROT_WRITE));
	p[0] = 7;
	char *q = CHECK_MAP(mremap(p, 2 * PG, 2 * PG, 0));
	CHECK(q == p);
	CHECK_EQ(q[0], 7);
	munmap(q, 2 * PG);
}

static void mremap_shared_anon_duplicate(void)
{
	/* old_size 0 on a shared mapping makes a second mapping of the same
	 * pages. */
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	char *q = CHECK_MAP(mremap(p, 0, PG, MREMAP_MAYMOVE));
	CHECK(q != p);
	p[5] = 42;
	CHECK_EQ(q[5], 42);
	/* On a private mapping it is refused. */
	char *r = CHECK_MAP(anon(PG, PROT_READ | PROT_WRITE));
	CHECK(mremap(r, 0, PG, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
}

static void madvise_more(void)
{
	char *p = CHECK_MAP(anon(4 * PG, PROT_READ | PROT_WRITE));
	CHECK_ERR(madvise(p + 1, PG, MADV_NORMAL), EINVAL);
	CHECK_ERR(madvise(p, PG, 12345), EINVAL);
	CHECK_SYS(madvise(p, 0, MADV_NORMAL));
	CHECK_SYS(madvise(p, 4 * PG, MADV_SEQUENTIAL));
	CHECK_SYS(madvise(p, 4 * PG, MADV_RANDOM));
	CHECK_SYS(madvise(p, 4 * PG, MADV_WILLNEED));
	p[0] = 3;
	CHECK_SYS(madvise(p, PG, MADV_FREE));
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(madvise(p, 4 * PG, MADV_NORMAL), ENOMEM);
	munmap(p, 4 * PG);
}

static void mincore_more(void)
{
	char *p = CHECK_MAP(anon(4 * PG, PROT_READ | PROT_WRITE));
	unsigned char vec[4];
	CHECK_ERR(mincore(p + 1, PG, vec), EINVAL);
	CHECK_ERR(mincore(p, PG, (unsigned char *)1), EFAULT);
	p[0] = 1;
	CHECK_SYS(mincore(p, 4 * PG, vec));
	CHECK_EQ(vec[0] & 1, 1);
	/* A length in the middle of a page counts that page. */
	CHECK_SYS(mincore(p, 1, vec));
	CHECK_SYS(munmap(p + 2 * PG, PG));
	CHECK_ERR(mincore(p, 4 * PG, vec), ENOMEM);
	munmap(p, 4 * PG);
}

static void mlock_family(void)
{
	char *p = CHECK_MAP(anon(4 * PG, PROT_READ | PROT_WRITE));
	CHECK_SYS(mlock(p, 4 * PG));
	CHECK_SYS(munlock(p, 4 * PG));
	/* Unaligned start is rounded down. */
	CHECK_SYS(mlock(p + 10, 100));
	CHECK_SYS(munlock(p + 10, 100));
	CHECK_SYS(syscall(SYS_mlock2, p, PG, 0));
	CHECK_ERR(syscall(SYS_mlock2, p, PG, 0x100), EINVAL);
	CHECK_SYS(syscall(SYS_mlock2, p, PG, 1 /* MLOCK_ONFAULT */));
	CHECK_SYS(munlock(p, PG));
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(mlock(p, 4 * PG), ENOMEM);
	munmap(p, 4 * PG);
}

static void mlockall_flags(void)
{
	CHECK_ERR(mlockall(0), EINVAL);
	CHECK_ERR(mlockall(0x100), EINVAL);
	/* MCL_ONFAULT alone is invalid. */
	CHECK_ERR(mlockall(4), EINVAL);
	CHECK_SYS(mlockall(MCL_FUTURE));
	CHECK_SYS(munlockall());
}

static void msync_edge(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ | PROT_WRITE));
	CHECK_ERR(msync(p, PG, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK_ERR(msync(p, PG, 0x100), EINVAL);
	CHECK_ERR(msync(p + 1, PG, MS_SYNC), EINVAL);
	CHECK_SYS(msync(p, PG, MS_ASYNC));
	CHECK_SYS(msync(p, PG, MS_INVALIDATE));
	CHECK_SYS(msync(p, 0, MS_SYNC));
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(msync(p, 2 * PG, MS_SYNC), ENOMEM);
	munmap(p, PG);
}

static void brk_edge(void)
{
	uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);
	CHECK_NE(cur, 0);
	/* A request below the start is ignored: the current break returns. */
	CHECK_EQ((uintptr_t)syscall(SYS_brk, 4096), cur);
	/* So is an absurd one. */
	CHECK_EQ((uintptr_t)syscall(SYS_brk, (uintptr_t)1 << 62), cur);
	uintptr_t up = (uintptr_t)syscall(SYS_brk, cur + 3 * PG + 5);
	CHECK_EQ(up, cur + 3 * PG + 5);
	((volatile char *)cur)[3 * PG] = 1;
	CHECK_EQ((uintptr_t)syscall(SYS_brk, cur), cur);
}

static void mmap_prot_exec_and_none(void)
{
	char *p = CHECK_MAP(anon(PG, PROT_NONE));
	unsigned char v;
	/* PROT_NONE pages are still mapped for mincore and munmap. */
	CHECK_SYS(mincore(p, PG, &v));
	CHECK_SYS(mprotect(p, PG, PROT_READ | PROT_EXEC));
	CHECK_EQ(p[0], 0);
	/* mmap ignores unknown prot bits; mprotect refuses them. */
	char *q = CHECK_MAP(mmap(NULL, PG, PROT_READ | 0x40, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_EQ(q[0], 0);
	CHECK_ERR(mprotect(q, PG, PROT_READ | 0x40), EINVAL);
	munmap(q, PG);
	munmap(p, PG);
}

static void map_fixed_noreplace_eexist(void)
{
	char *p = CHECK_MAP(anon(2 * PG, PROT_READ));
	CHECK(mmap(p + PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EEXIST);
	munmap(p, 2 * PG);
	char *q = CHECK_MAP(mmap(p, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	CHECK(q == p);
	munmap(q, PG);
}

static void rlimit_as_enforced(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = {256UL << 20, 256UL << 20};
		CHILD_CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
		void *p = mmap(NULL, 512UL << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(p == MAP_FAILED && errno == ENOMEM);
		p = mmap(NULL, 16UL << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(p != MAP_FAILED);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(mmap_zero_length),
	MT_CASE(mmap_sharing_type_required),
	MT_CASE(mmap_unaligned_offset),
	MT_CASE(mmap_bad_fd),
	MT_CASE(mmap_file_access_checks),
	MT_CASE(mmap_unmappable_files),
	MT_CASE(mmap_fixed_unaligned),
	MT_CASE(mmap_huge_length),
	MT_CASE(mmap_hint_used_when_free),
	MT_CASE(mmap_anonymous_is_zeroed_and_lazy),
	MT_CASE(mmap_populate_and_noreserve),
	MT_CASE(mmap_past_eof_sigbus),
	MT_CASE(munmap_errors),
	MT_CASE(mprotect_edge),
	MT_CASE(mprotect_growsdown_flags),
	MT_CASE(mprotect_growsdown_plain_mapping),
	MT_CASE(mremap_errors_more),
	MT_CASE(mremap_same_size_noop),
	MT_CASE(mremap_shared_anon_duplicate),
	MT_CASE(madvise_more),
	MT_CASE(mincore_more),
	MT_CASE(mlock_family),
	MT_CASE(mlockall_flags),
	MT_CASE(msync_edge),
	MT_CASE(brk_edge),
	MT_CASE(mmap_prot_exec_and_none),
	MT_CASE(map_fixed_noreplace_eexist),
	MT_CASE(rlimit_as_enforced),
};

MT_MAIN(cases)
