//go:build ignore

/* madvise_more: madvise advice values beyond the basics: reverting
 * DONTFORK/WIPEONFORK with DOFORK/KEEPONFORK, advice that only fits some
 * mappings (WIPEONFORK on shared memory, REMOVE on private memory,
 * DONTNEED on locked pages), residency after DONTNEED, POPULATE_READ and
 * POPULATE_WRITE, and hints that are accepted without effect. */
#include "moattest.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#define MADV_PAGEOUT 21
#endif

static char *anon(size_t len, int flags)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int child_reads(char *p)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(*(volatile char *)p);
	return mt_wait(pid);
}

static void dofork_reverts_dontfork(void)
{
	char *p = anon(PG, MAP_PRIVATE);
	CHECK(p != NULL);
	p[0] = 5;
	CHECK_SYS(madvise(p, PG, MADV_DONTFORK));
	int st = child_reads(p);
	CHECK_SIGNALED(st, SIGSEGV);
	CHECK_SYS(madvise(p, PG, MADV_DOFORK));
	st = child_reads(p);
	CHECK_EXITED(st, 5);
}

static void keeponfork_reverts_wipeonfork(void)
{
	char *p = anon(PG, MAP_PRIVATE);
	CHECK(p != NULL);
	p[0] = 6;
	CHECK_SYS(madvise(p, PG, MADV_WIPEONFORK));
	int st = child_reads(p);
	CHECK_EXITED(st, 0);
	CHECK_SYS(madvise(p, PG, MADV_KEEPONFORK));
	st = child_reads(p);
	CHECK_EXITED(st, 6);
}

static void wipeonfork_private_anonymous_only(void)
{
	char *s = anon(PG, MAP_SHARED);
	CHECK(s != NULL);
	CHECK_ERR(madvise(s, PG, MADV_WIPEONFORK), EINVAL);
}

static void remove_needs_shared(void)
{
	char *p = anon(PG, MAP_PRIVATE);
	CHECK(p != NULL);
	CHECK_ERR(madvise(p, PG, MADV_REMOVE), EINVAL);
	char *s = anon(2 * PG, MAP_SHARED);
	CHECK(s != NULL);
	s[0] = 1;
	s[PG] = 2;
	/* On shared anonymous memory it punches a hole: zeroes. */
	CHECK_SYS(madvise(s, PG, MADV_REMOVE));
	CHECK_EQ(s[0], 0);
	CHECK_EQ(s[PG], 2);
}

static void dontneed_on_locked_einval(void)
{
	char *p = anon(PG, MAP_PRIVATE);
	CHECK(p != NULL);
	CHECK_SYS(mlock(p, PG));
	CHECK_ERR(madvise(p, PG, MADV_DONTNEED), EINVAL);
	CHECK_SYS(munlock(p, PG));
	CHECK_SYS(madvise(p, PG, MADV_DONTNEED));
}

static void dontneed_drops_residency(void)
{
	char *p = anon(4 * PG, MAP_PRIVATE);
	CHECK(p != NULL);
	memset(p, 1, 4 * PG);
	unsigned char v[4];
	CHECK_SYS(mincore(p, 4 * PG, v));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(v[i] & 1, 1);
	CHECK_SYS(madvise(p + PG, 2 * PG, MADV_DONTNEED));
	CHECK_SYS(mincore(p, 4 * PG, v));
	CHECK_EQ(v[0] & 1, 1);
	CHECK_EQ(v[1] & 1, 0);
	CHECK_EQ(v[2] & 1, 0);
	CHECK_EQ(v[3] & 1, 1);
	CHECK_EQ(p[PG], 0);
}

static void populate_read_and_write(void)
{
	char *p = anon(4 * PG, MAP_PRIVATE);
	CHECK(p != NULL);
	CHECK_SYS(madvise(p, 4 * PG, MADV_POPULATE_WRITE));
	unsigned char v[4];
	CHECK_SYS(mincore(p, 4 * PG, v));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(v[i] & 1, 1);
	CHECK_SYS(madvise(p, 4 * PG, MADV_POPULATE_READ));
	/* Populating for write a read-only mapping, or for reading a
	 * PROT_NONE one, is EINVAL (Linux checks the VMA's protection
	 * before faulting). */
	char *r = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(r != MAP_FAILED);
	CHECK_ERR(madvise(r, PG, MADV_POPULATE_WRITE), EINVAL);
	char *n = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(n != MAP_FAILED);
	CHECK_ERR(madvise(n, PG, MADV_POPULATE_READ), EINVAL);
}

static void hints_accepted(void)
{
	char *p = anon(4 * PG, MAP_PRIVATE);
	CHECK(p != NULL);
	p[0] = 3;
	static const int advice[] = {MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
				     MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP,
				     MADV_COLD, MADV_PAGEOUT, MADV_MERGEABLE, MADV_UNMERGEABLE};
	for (size_t i = 0; i < sizeof(advice) / sizeof(advice[0]); i++)
		if (madvise(p, 4 * PG, advice[i]) != 0 && errno != EINVAL)
			FAIL("advice %d: %s", advice[i], mt_errname(errno));
	/* None of them lost data. */
	CHECK_EQ(p[0], 3);
}

static void free_then_write_keeps_new_data(void)
{
	char *p = anon(PG, MAP_PRIVATE);
	CHECK(p != NULL);
	p[0] = 1;
	CHECK_SYS(madvise(p, PG, MADV_FREE));
	/* Either the old data or zero may be read after FREE; a write
	 * afterwards must stick. */
	CHECK(p[0] == 0 || p[0] == 1);
	p[0] = 2;
	CHECK_EQ(p[0], 2);
	/* MADV_FREE on a shared mapping: EINVAL. */
	char *s = anon(PG, MAP_SHARED);
	CHECK(s != NULL);
	CHECK_ERR(madvise(s, PG, MADV_FREE), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(dofork_reverts_dontfork),
	MT_CASE(keeponfork_reverts_wipeonfork),
	MT_CASE(wipeonfork_private_anonymous_only),
	MT_CASE(remove_needs_shared),
	MT_CASE(dontneed_on_locked_einval),
	MT_CASE(dontneed_drops_residency),
	MT_CASE(populate_read_and_write),
	MT_CASE(hints_accepted),
	MT_CASE(free_then_write_keeps_new_data),
};

MT_MAIN(cases)
