//go:build ignore

/* mremap_brk: mremap moving and resizing in more shapes (shrinking the
 * middle of a mapping away, growing shared mappings, MREMAP_FIXED over an
 * existing mapping, protections and contents kept, file mappings), and brk
 * growth, shrinking and zeroing on regrowth, with its limits. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

static char *anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void shrink_keeps_prefix_unmaps_tail(void)
{
	char *p = anon(4 * PG);
	CHECK(p != NULL);
	for (int i = 0; i < 4; i++)
		p[i * PG] = (char)('a' + i);
	char *q = CHECK_MAP(mremap(p, 4 * PG, 2 * PG, 0));
	CHECK(q == p);
	CHECK_EQ(q[PG], 'b');
	unsigned char v;
	CHECK_ERR(mincore(p + 2 * PG, PG, &v), ENOMEM);
	munmap(p, 2 * PG);
}

static void move_keeps_contents_and_protection(void)
{
	char *p = anon(2 * PG);
	CHECK(p != NULL);
	p[0] = 'x';
	p[PG] = 'y';
	CHECK_SYS(mprotect(p, 2 * PG, PROT_READ));
	/* Block growth in place. */
	char *blocker = mmap(p + 2 * PG, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	char *q = CHECK_MAP(mremap(p, 2 * PG, 8 * PG, MREMAP_MAYMOVE));
	if (blocker != MAP_FAILED)
		CHECK(q != p);
	CHECK_EQ(q[0], 'x');
	CHECK_EQ(q[PG], 'y');
	CHECK_EQ(q[7 * PG], 0);
	/* Still read-only: a write in a child faults. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		q[0] = 'z';
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
	munmap(q, 8 * PG);
	if (blocker != MAP_FAILED)
		munmap(blocker, PG);
}

static void fixed_replaces_target(void)
{
	char *src = anon(PG);
	char *dst = anon(3 * PG);
	CHECK(src && dst);
	src[0] = 's';
	dst[0] = 'd';
	dst[2 * PG] = 'e';
	char *q = CHECK_MAP(mremap(src, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst));
	CHECK(q == dst);
	CHECK_EQ(dst[0], 's');
	/* The rest of the old target mapping is untouched. */
	CHECK_EQ(dst[2 * PG], 'e');
	unsigned char v;
	CHECK_ERR(mincore(src, PG, &v), ENOMEM);
	/* An unaligned new address: EINVAL. */
	char *r = anon(PG);
	CHECK(mremap(r, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst + 1) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	munmap(dst, 3 * PG);
}

static void grow_shared_anonymous(void)
{
	char *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	p[0] = 1;
	char *q = CHECK_MAP(mremap(p, PG, 4 * PG, MREMAP_MAYMOVE));
	CHECK_EQ(q[0], 1);
	/* The shared object keeps its size: pages past it raise SIGBUS. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		q[3 * PG] = 7;
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGBUS);
	/* The first page is still shared with a child. */
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		q[5] = 9;
		_exit(0);
	}
	st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_EQ(q[5], 9);
}

static void file_mapping_moves(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	char *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	char *blocker = mmap(p + PG, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	char *q = CHECK_MAP(mremap(p, PG, 2 * PG, MREMAP_MAYMOVE));
	CHECK_EQ(q[0], 'h');
	/* The grown part is past the file's end: SIGBUS on access. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		volatile char c = q[PG];
		(void)c;
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGBUS);
	if (blocker != MAP_FAILED)
		munmap(blocker, PG);
}

static void mremap_across_two_mappings_efault(void)
{
	char *p = anon(2 * PG);
	CHECK(p != NULL);
	/* Make it two VMAs with different protections. */
	CHECK_SYS(mprotect(p + PG, PG, PROT_READ));
	CHECK(mremap(p, 2 * PG, 4 * PG, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_EQ(errno, EFAULT);
	munmap(p, 2 * PG);
}

static void brk_grow_shrink_zero(void)
{
	char *cur = (char *)syscall(SYS_brk, 0);
	char *up = (char *)syscall(SYS_brk, cur + 4 * PG);
	CHECK(up == cur + 4 * PG);
	memset(cur, 0x5a, 4 * PG);
	/* Shrink by two pages, grow back: the pages come back zeroed. */
	CHECK((char *)syscall(SYS_brk, cur + 2 * PG) == cur + 2 * PG);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* The freed range is unmapped. */
		volatile char c = cur[3 * PG];
		(void)c;
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
	CHECK((char *)syscall(SYS_brk, cur + 4 * PG) == cur + 4 * PG);
	CHECK_EQ(cur[2 * PG], 0);
	CHECK_EQ(cur[4 * PG - 1], 0);
	CHECK_EQ(cur[PG], 0x5a);
	CHECK((char *)syscall(SYS_brk, cur) == cur);
}

static void brk_refused_over_mapping(void)
{
	char *cur = (char *)syscall(SYS_brk, 0);
	uintptr_t next = ((uintptr_t)cur + PG - 1) & ~(PG - 1);
	char *m = mmap((void *)(next + 2 * PG), PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		SKIP("could not place a mapping above the break");
	/* Growing into it fails: brk returns the old break. */
	CHECK((char *)syscall(SYS_brk, next + 4 * PG) == cur);
	munmap(m, PG);
}

static void brk_rlimit_data(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *cur = (char *)syscall(SYS_brk, 0);
		struct rlimit rl = {1 << 20, 1 << 20};
		CHILD_CHECK(setrlimit(RLIMIT_DATA, &rl) == 0);
		/* 64 MiB more than the limit allows. */
		CHILD_CHECK((char *)syscall(SYS_brk, cur + (64 << 20)) == cur);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(shrink_keeps_prefix_unmaps_tail),
	MT_CASE(move_keeps_contents_and_protection),
	MT_CASE(fixed_replaces_target),
	MT_CASE(grow_shared_anonymous),
	MT_CASE(file_mapping_moves),
	MT_CASE(mremap_across_two_mappings_efault),
	MT_CASE(brk_grow_shrink_zero),
	MT_CASE(brk_refused_over_mapping),
	MT_CASE(brk_rlimit_data),
};

MT_MAIN(cases)
