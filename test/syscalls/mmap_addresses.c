//go:build ignore

/* mmap_addresses: where mappings land: hints below mmap_min_addr or in
 * use are moved, MAP_FIXED at page 0 is refused, addresses past the top of
 * user space are ENOMEM (or EINVAL for MAP_FIXED beyond it), MAP_32BIT stays
 * under 2 GiB, new mappings go top-down below the stack, and adjacent
 * compatible mappings merge in /proc/self/maps. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL

static void hint_below_min_addr_moved(void)
{
	char *p = mmap((void *)PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	/* mmap_min_addr is 64 KiB by default: the hint is not honoured. */
	CHECK_GE((uintptr_t)p, 65536);
	munmap(p, PG);
}

static void fixed_at_zero_refused(void)
{
	void *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(p == MAP_FAILED);
	CHECK(errno == EPERM || errno == EACCES);
}

static void hint_in_use_moved(void)
{
	char *a = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	char *b = mmap(a, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(b != MAP_FAILED);
	CHECK(b != a);
	munmap(a, PG);
	munmap(b, PG);
}

static void beyond_user_space(void)
{
	/* 0x800000000000 is the end of the 47-bit user space. */
	void *top = (void *)0x800000000000UL;
	CHECK(mmap(top, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED);
	CHECK(errno == ENOMEM || errno == EINVAL);
	/* A hint up there is ignored, not an error. */
	char *p = mmap(top, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_LT((uintptr_t)p, 0x800000000000UL);
	munmap(p, PG);
	/* A length that cannot fit. */
	CHECK(mmap(NULL, 0x800000000000UL, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
}

static void map_32bit_low(void)
{
	char *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_LT((uintptr_t)p, 0x80000000UL);
	p[0] = 1;
	munmap(p, PG);
}

static void top_down_below_stack(void)
{
	int local;
	char *a = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED && b != MAP_FAILED);
	CHECK_LT((uintptr_t)a, (uintptr_t)&local);
	/* The next mapping is placed below the previous one. */
	CHECK_LT((uintptr_t)b, (uintptr_t)a);
	munmap(a, PG);
	munmap(b, PG);
}

static int maps_lines_in(uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[512];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
			n++;
	}
	fclose(f);
	return n;
}

static void adjacent_mappings_merge(void)
{
	char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(maps_lines_in((uintptr_t)p, (uintptr_t)p + 3 * PG), 1);
	CHECK_SYS(mprotect(p + PG, PG, PROT_READ));
	CHECK_EQ(maps_lines_in((uintptr_t)p, (uintptr_t)p + 3 * PG), 3);
	CHECK_SYS(mprotect(p + PG, PG, PROT_READ | PROT_WRITE));
	CHECK_EQ(maps_lines_in((uintptr_t)p, (uintptr_t)p + 3 * PG), 1);
	munmap(p, 3 * PG);
}

static void munmap_middle_splits(void)
{
	char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_SYS(munmap(p + PG, PG));
	CHECK_EQ(maps_lines_in((uintptr_t)p, (uintptr_t)p + 3 * PG), 2);
	p[0] = 1;
	p[2 * PG] = 2;
	CHECK_EQ(p[2 * PG], 2);
	munmap(p, 3 * PG);
}

static const struct mt_case cases[] = {
	MT_CASE(hint_below_min_addr_moved),
	MT_CASE(fixed_at_zero_refused),
	MT_CASE(hint_in_use_moved),
	MT_CASE(beyond_user_space),
	MT_CASE(map_32bit_low),
	MT_CASE(top_down_below_stack),
	MT_CASE(adjacent_mappings_merge),
	MT_CASE(munmap_middle_splits),
};

MT_MAIN(cases)
