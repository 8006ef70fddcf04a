//go:build ignore

/* mprotect: mmap/mprotect/mremap/munmap/madvise/mincore/msync/brk
 * semantics and errors, checked by probing memory for faults and by
 * reading /proc/self/maps. */
#include "moattest.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096UL

static sigjmp_buf probe_jb;
static volatile int probe_code;

static void on_probe(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	probe_code = si->si_code;
	siglongjmp(probe_jb, 1);
}

static void probe_arm(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_probe;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* can_read/can_write return 1 if the access works, 0 if it faults. */
static int can_read(const void *p)
{
	probe_arm();
	if (sigsetjmp(probe_jb, 1) == 0) {
		volatile char c = *(volatile const char *)p;
		(void)c;
		return 1;
	}
	return 0;
}

static int can_write(void *p)
{
	probe_arm();
	if (sigsetjmp(probe_jb, 1) == 0) {
		volatile char *q = p;
		char c = *q;
		*q = c;
		return 1;
	}
	return 0;
}

static char *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* maps_perms finds the /proc/self/maps line containing addr and copies
 * its permission field ("rw-p"). Returns 0 on success. */
static int maps_perms(const void *addr, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[512];
	int rc = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) != 3)
			continue;
		if ((unsigned long)addr >= lo && (unsigned long)addr < hi) {
			memcpy(perms, p, 5);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

static void mprotect_readonly_and_back(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	p[0] = 1;
	CHECK_SYS(mprotect(p, PG, PROT_READ));
	CHECK_EQ(can_read(p), 1);
	CHECK_EQ(can_write(p), 0);
	CHECK_EQ(probe_code, SEGV_ACCERR);
	CHECK_SYS(mprotect(p, PG, PROT_READ | PROT_WRITE));
	CHECK_EQ(can_write(p), 1);
	CHECK_EQ(p[0], 1);
	munmap(p, PG);
}

static void prot_none_blocks_reads(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	p[0] = 5;
	CHECK_SYS(mprotect(p, PG, PROT_NONE));
	CHECK_EQ(can_read(p), 0);
	CHECK_EQ(probe_code, SEGV_ACCERR);
	CHECK_SYS(mprotect(p, PG, PROT_READ));
	CHECK_EQ(p[0], 5);
	munmap(p, PG);
}

static void mprotect_middle_page(void)
{
	char *p = map_anon(3 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_SYS(mprotect(p + PG, PG, PROT_READ));
	CHECK_EQ(can_write(p), 1);
	CHECK_EQ(can_write(p + PG), 0);
	CHECK_EQ(can_write(p + 2 * PG), 1);
	char perms[5];
	CHECK_SYS(maps_perms(p, perms));
	CHECK_STREQ(perms, "rw-p");
	CHECK_SYS(maps_perms(p + PG, perms));
	CHECK_STREQ(perms, "r--p");
	CHECK_SYS(maps_perms(p + 2 * PG, perms));
	CHECK_STREQ(perms, "rw-p");
	munmap(p, 3 * PG);
}

static void mprotect_errors(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_ERR(mprotect(p + 1, PG, PROT_READ), EINVAL);
	CHECK_ERR(mprotect(p, PG, 0x100), EINVAL);
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(mprotect(p, 2 * PG, PROT_READ), ENOMEM);
	CHECK_SYS(mprotect(p, 0, PROT_READ));
	/* The partial failure may have changed the first page; either way
	 * it still exists. */
	CHECK_EQ(can_read(p), 1);
	munmap(p, PG);
}

static void mprotect_exec_readable(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	p[0] = (char)0xc3;
	CHECK_SYS(mprotect(p, PG, PROT_READ | PROT_EXEC));
	((void (*)(void))p)();
	char perms[5];
	CHECK_SYS(maps_perms(p, perms));
	CHECK_STREQ(perms, "r-xp");
	munmap(p, PG);
}

static void mremap_grow_moves_contents(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	memset(p, 'a', PG);
	char *q = CHECK_MAP(mremap(p, PG, 4 * PG, MREMAP_MAYMOVE));
	CHECK_EQ(q[0], 'a');
	CHECK_EQ(q[PG - 1], 'a');
	CHECK_EQ(q[PG], 0);
	CHECK_EQ(q[4 * PG - 1], 0);
	q[4 * PG - 1] = 'z';
	munmap(q, 4 * PG);
}

static void mremap_shrink(void)
{
	char *p = map_anon(4 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	p[0] = 'x';
	char *q = CHECK_MAP(mremap(p, 4 * PG, PG, 0));
	CHECK(q == p);
	CHECK_EQ(q[0], 'x');
	CHECK_EQ(can_read(p + PG), 0);
	CHECK_EQ(probe_code, SEGV_MAPERR);
	CHECK_EQ(can_read(p + 3 * PG), 0);
	munmap(p, PG);
}

static void mremap_in_place_grow(void)
{
	/* Reserve 4 pages, release the top 3, grow back without moving. */
	char *p = map_anon(4 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_SYS(munmap(p + PG, 3 * PG));
	p[0] = 'k';
	char *q = CHECK_MAP(mremap(p, PG, 4 * PG, 0));
	CHECK(q == p);
	CHECK_EQ(q[0], 'k');
	CHECK_EQ(can_write(q + 3 * PG), 1);
	munmap(q, 4 * PG);
}

static void mremap_fixed_target(void)
{
	char *src = map_anon(PG, PROT_READ | PROT_WRITE);
	char *dst = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(src != NULL && dst != NULL);
	memset(src, 's', PG);
	dst[0] = 'd';
	char *q = CHECK_MAP(mremap(src, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst + PG));
	CHECK(q == dst + PG);
	CHECK_EQ(q[0], 's');
	CHECK_EQ(dst[0], 'd');
	CHECK_EQ(can_read(src), 0);
	munmap(dst, 2 * PG);
}

static void mremap_errors(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	/* The next page is occupied: cannot grow in place. */
	CHECK_SYS(mprotect(p + PG, PG, PROT_READ));
	void *r = mremap(p, PG, 2 * PG, 0);
	CHECK(r == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
	CHECK(mremap(p + 1, PG, PG, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mremap(p, PG, PG, MREMAP_FIXED, p + 8 * PG) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mremap(p, PG, PG, 0x100) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mremap(p, PG, 0, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	munmap(p, 2 * PG);
	CHECK(mremap(p, PG, 2 * PG, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_EQ(errno, EFAULT);
}

static void mremap_dontunmap(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	p[0] = 'm';
	/* Raw syscall: glibc passes new_address only with MREMAP_FIXED. */
	char *q = (char *)CHECK_SYS(syscall(SYS_mremap, p, PG, PG, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0));
	CHECK(q != p);
	CHECK_EQ(q[0], 'm');
	/* The old range stays mapped and reads as zero. */
	CHECK_EQ(p[0], 0);
	munmap(p, PG);
	munmap(q, PG);
}

static void munmap_partial(void)
{
	char *p = map_anon(3 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_EQ(can_write(p), 1);
	CHECK_EQ(can_read(p + PG), 0);
	CHECK_EQ(probe_code, SEGV_MAPERR);
	CHECK_EQ(can_write(p + 2 * PG), 1);
	munmap(p, 3 * PG);
	CHECK_EQ(can_read(p), 0);
}

static void munmap_errors(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_ERR(munmap(p, 0), EINVAL);
	CHECK_ERR(munmap(p + 1, PG), EINVAL);
	CHECK_SYS(munmap(p, PG));
	/* Unmapping nothing is fine. */
	CHECK_SYS(munmap(p, PG));
}

static void map_fixed_replaces(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	memset(p, 'o', 2 * PG);
	char *q = CHECK_MAP(mmap(p + PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	CHECK(q == p + PG);
	CHECK_EQ(q[0], 0);
	CHECK_EQ(p[0], 'o');
	CHECK_EQ(can_write(q), 0);
	munmap(p, 2 * PG);
}

static void map_fixed_noreplace(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK(mmap(p, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EEXIST);
	CHECK_SYS(munmap(p + PG, PG));
	char *q = CHECK_MAP(mmap(p + PG, PG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	CHECK(q == p + PG);
	munmap(p, 2 * PG);
}

static void mmap_errors(void)
{
	CHECK(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mmap(NULL, PG, PROT_READ, MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, 999, 0) == MAP_FAILED);
	CHECK_EQ(errno, EBADF);
	CHECK(mmap((void *)0x10001000UL + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 1) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	CHECK(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	close(fd);
	int dfd = CHECK_SYS(open("/etc", O_RDONLY | O_DIRECTORY));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, dfd, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENODEV);
	close(dfd);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, p[0], 0) == MAP_FAILED);
	CHECK_EQ(errno, ENODEV);
	CHECK(mmap(NULL, 1UL << 50, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
}

static void mmap_file_matches_read(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	char buf[512];
	ssize_t n = CHECK_SYS(pread(fd, buf, sizeof(buf), 0));
	CHECK_GT(n, 0);
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0));
	CHECK_MEMEQ(p, buf, (size_t)n);
	close(fd);
	/* The mapping outlives the descriptor. */
	CHECK_MEMEQ(p, buf, (size_t)n);
	char perms[5];
	CHECK_SYS(maps_perms(p, perms));
	CHECK_STREQ(perms, "r--s");
	munmap(p, PG);
}

static void mmap_large_lazy(void)
{
	size_t len = 1UL << 30;
	char *p = CHECK_MAP(mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
	for (size_t off = 0; off < len; off += len / 8)
		p[off] = 1;
	CHECK_EQ(p[len - 1], 0);
	CHECK_EQ(p[len / 2], 1);
	munmap(p, len);
}

static void map_growsdown_grows(void)
{
	/* Leave a free gap below so the mapping can grow into it. */
	char *area = map_anon(512 * PG, PROT_NONE);
	CHECK(area != NULL);
	char *top = area + 500 * PG;
	CHECK_SYS(munmap(area, 511 * PG));
	char *p = CHECK_MAP(mmap(top, PG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, -1, 0));
	CHECK(p == top);
	p[0] = 1;
	/* Touching the page just below extends the mapping. */
	CHECK_EQ(can_write(p - PG), 1);
	CHECK_EQ(can_write(p - 2 * PG + 8), 1);
	char perms[5];
	CHECK_SYS(maps_perms(p - 2 * PG, perms));
	CHECK_STREQ(perms, "rw-p");
	munmap(p - 2 * PG, 3 * PG);
	munmap(area + 511 * PG, PG);
}

static void brk_grow_shrink(void)
{
	void *cur = (void *)syscall(SYS_brk, 0);
	CHECK(cur != NULL);
	char *want = (char *)cur + 16 * PG;
	void *got = (void *)syscall(SYS_brk, want);
	CHECK(got == want);
	memset(cur, 'b', 16 * PG);
	got = (void *)syscall(SYS_brk, cur);
	CHECK(got == cur);
	/* The released range is gone. */
	CHECK_EQ(can_read((char *)cur + 8 * PG), 0);
	/* An impossible break leaves it unchanged. */
	got = (void *)syscall(SYS_brk, (void *)8);
	CHECK(got == cur);
	got = (void *)syscall(SYS_brk, (char *)cur + (1UL << 46));
	CHECK(got == cur);
}

static void brk_regrow_is_zeroed(void)
{
	char *cur = (char *)syscall(SYS_brk, 0);
	CHECK((char *)syscall(SYS_brk, cur + 2 * PG) == cur + 2 * PG);
	memset(cur, 0xaa, 2 * PG);
	CHECK((char *)syscall(SYS_brk, cur) == cur);
	CHECK((char *)syscall(SYS_brk, cur + 2 * PG) == cur + 2 * PG);
	CHECK_EQ(cur[0], 0);
	CHECK_EQ(cur[2 * PG - 1], 0);
	CHECK((char *)syscall(SYS_brk, cur) == cur);
}

static void madvise_dontneed_zeroes_private(void)
{
	char *p = map_anon(4 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	memset(p, 'q', 4 * PG);
	CHECK_SYS(madvise(p + PG, 2 * PG, MADV_DONTNEED));
	CHECK_EQ(p[0], 'q');
	CHECK_EQ(p[PG], 0);
	CHECK_EQ(p[3 * PG - 1], 0);
	CHECK_EQ(p[3 * PG], 'q');
	munmap(p, 4 * PG);
}

static void madvise_dontneed_keeps_shared(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	memset(p, 's', PG);
	CHECK_SYS(madvise(p, PG, MADV_DONTNEED));
	CHECK_EQ(p[0], 's');
	munmap(p, PG);
}

static void madvise_dontneed_private_file_rereads(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	char first;
	CHECK_EQ(pread(fd, &first, 1, 0), 1);
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	close(fd);
	p[0] = '!';
	CHECK_SYS(madvise(p, PG, MADV_DONTNEED));
	CHECK_EQ(p[0], first);
	munmap(p, PG);
}

static void madvise_errors(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_ERR(madvise(p, PG, 12345), EINVAL);
	CHECK_ERR(madvise(p + 1, PG, MADV_NORMAL), EINVAL);
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(madvise(p, 2 * PG, MADV_NORMAL), ENOMEM);
	CHECK_SYS(madvise(p, PG, MADV_WILLNEED));
	CHECK_SYS(madvise(p, PG, MADV_SEQUENTIAL));
	CHECK_SYS(madvise(p, PG, MADV_RANDOM));
	munmap(p, PG);
}

static void mincore_residency(void)
{
	char *p = map_anon(4 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	p[0] = 1;
	p[2 * PG] = 1;
	unsigned char vec[4];
	CHECK_SYS(mincore(p, 4 * PG, vec));
	CHECK_EQ(vec[0] & 1, 1);
	CHECK_EQ(vec[1] & 1, 0);
	CHECK_EQ(vec[2] & 1, 1);
	CHECK_EQ(vec[3] & 1, 0);
	CHECK_SYS(madvise(p, PG, MADV_DONTNEED));
	CHECK_SYS(mincore(p, PG, vec));
	CHECK_EQ(vec[0] & 1, 0);
	munmap(p, 4 * PG);
}

static void mincore_errors(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	unsigned char vec[2];
	CHECK_ERR(mincore(p + 1, PG, vec), EINVAL);
	CHECK_ERR(mincore(p, PG, (unsigned char *)8), EFAULT);
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(mincore(p, 2 * PG, vec), ENOMEM);
	munmap(p, PG);
}

static void msync_paths(void)
{
	char *p = map_anon(2 * PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_SYS(msync(p, PG, MS_SYNC));
	CHECK_SYS(msync(p, PG, MS_ASYNC));
	CHECK_SYS(msync(p, PG, MS_INVALIDATE));
	CHECK_ERR(msync(p, PG, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK_ERR(msync(p, PG, 0x100), EINVAL);
	CHECK_ERR(msync(p + 1, PG, MS_SYNC), EINVAL);
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_ERR(msync(p, 2 * PG, MS_SYNC), ENOMEM);
	munmap(p, PG);
}

static void mlock_small(void)
{
	char *p = map_anon(PG, PROT_READ | PROT_WRITE);
	CHECK(p != NULL);
	CHECK_SYS(mlock(p, PG));
	unsigned char v;
	CHECK_SYS(mincore(p, PG, &v));
	CHECK_EQ(v & 1, 1);
	CHECK_SYS(munlock(p, PG));
	CHECK_SYS(munmap(p, PG));
	CHECK_ERR(mlock(p, PG), ENOMEM);
}

static void maps_shows_new_mapping(void)
{
	char *p = map_anon(3 * PG, PROT_READ);
	CHECK(p != NULL);
	char perms[5];
	CHECK_SYS(maps_perms(p + 2 * PG, perms));
	CHECK_STREQ(perms, "r--p");
	CHECK_SYS(munmap(p, 3 * PG));
	CHECK_EQ(maps_perms(p, perms), -1);
}

static const struct mt_case cases[] = {
	MT_CASE(mprotect_readonly_and_back),
	MT_CASE(prot_none_blocks_reads),
	MT_CASE(mprotect_middle_page),
	MT_CASE(mprotect_errors),
	MT_CASE(mprotect_exec_readable),
	MT_CASE(mremap_grow_moves_contents),
	MT_CASE(mremap_shrink),
	MT_CASE(mremap_in_place_grow),
	MT_CASE(mremap_fixed_target),
	MT_CASE(mremap_errors),
	MT_CASE(mremap_dontunmap),
	MT_CASE(munmap_partial),
	MT_CASE(munmap_errors),
	MT_CASE(map_fixed_replaces),
	MT_CASE(map_fixed_noreplace),
	MT_CASE(mmap_errors),
	MT_CASE(mmap_file_matches_read),
	MT_CASE(mmap_large_lazy),
	MT_CASE(map_growsdown_grows),
	MT_CASE(brk_grow_shrink),
	MT_CASE(brk_regrow_is_zeroed),
	MT_CASE(madvise_dontneed_zeroes_private),
	MT_CASE(madvise_dontneed_keeps_shared),
	MT_CASE(madvise_dontneed_private_file_rereads),
	MT_CASE(madvise_errors),
	MT_CASE(mincore_residency),
	MT_CASE(mincore_errors),
	MT_CASE(msync_paths),
	MT_CASE(mlock_small),
	MT_CASE(maps_shows_new_mapping),
};

MT_MAIN(cases)
