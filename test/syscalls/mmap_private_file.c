//go:build ignore

/* mmap_private_file: private mappings of a file of the read-only root (the
 * program's own executable), as the dynamic loader makes them for text and
 * data: contents match the file, the kernel reads them for write(2), a
 * fork sees them, mprotect to writable gives private copies the file never
 * sees, munmap and mremap of parts, /proc/self/maps names the file,
 * MADV_DONTNEED gives the file back, mincore reports the pages, and pages
 * past the end of a file raise SIGBUS. (Moat maps such files straight from
 * the gofer's descriptor in the stub; these cases check it is invisible.) */
#include "moattest.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096
#define NPAGES 16

static int exe_fd(void)
{
	return open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
}

/* same_as_file reports whether the n pages at p match the file from off. */
static int same_as_file(int fd, const char *p, size_t n, off_t off)
{
	static char buf[PG];
	for (size_t i = 0; i < n; i++) {
		if (pread(fd, buf, PG, off + i * PG) != PG)
			return 0;
		if (memcmp(buf, p + i * PG, PG) != 0)
			return 0;
	}
	return 1;
}

static void contents_match_file(void)
{
	int fd = CHECK_SYS(exe_fd());
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_GE(st.st_size, (off_t)(NPAGES + 1) * PG);
	char *text = CHECK_MAP(mmap(NULL, NPAGES * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, PG));
	CHECK(same_as_file(fd, text, NPAGES, PG));
	/* The kernel reads the mapping for write(2). */
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(write(p[1], text + 3 * PG + 100, 1000), 1000);
	char got[1000];
	CHECK_EQ(mt_read_n(p[0], got, sizeof got, 1000), 1000);
	CHECK_MEMEQ(got, text + 3 * PG + 100, 1000);
	close(p[0]);
	close(p[1]);
	CHECK_SYS(munmap(text, NPAGES * PG));
	close(fd);
}

static void mprotect_write_is_private(void)
{
	int fd = CHECK_SYS(exe_fd());
	char *m = CHECK_MAP(mmap(NULL, 4 * PG, PROT_READ, MAP_PRIVATE, fd, 0));
	char first = m[PG + 5];
	CHECK_SYS(mprotect(m, 4 * PG, PROT_READ | PROT_WRITE));
	m[PG + 5] = first ^ 0x5a;
	CHECK_EQ(m[PG + 5], (char)(first ^ 0x5a));
	char b;
	CHECK_EQ(pread(fd, &b, 1, PG + 5), 1);
	CHECK_EQ(b, first);
	/* Read-only again, it keeps the private copy. */
	CHECK_SYS(mprotect(m, 4 * PG, PROT_READ));
	CHECK_EQ(m[PG + 5], (char)(first ^ 0x5a));
	CHECK(same_as_file(fd, m + 2 * PG, 2, 2 * PG));
	/* MADV_DONTNEED drops the copy: the file shows again. */
	CHECK_SYS(madvise(m, 4 * PG, MADV_DONTNEED));
	CHECK(same_as_file(fd, m, 4, 0));
	CHECK_SYS(munmap(m, 4 * PG));
	close(fd);
}

static void fork_sees_contents(void)
{
	int fd = CHECK_SYS(exe_fd());
	char *m = CHECK_MAP(mmap(NULL, NPAGES * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0));
	CHECK(same_as_file(fd, m, 1, 0));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(same_as_file(fd, m, NPAGES, 0));
		_exit(0);
	}
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EXITED(st, 0);
	CHECK(same_as_file(fd, m, NPAGES, 0));
	close(fd);
}

static sigjmp_buf jb;
static volatile int got_sig;

static void on_fault(int sig)
{
	got_sig = sig;
	siglongjmp(jb, 1);
}

/* touch reads *p and returns the signal that stopped it, or 0. */
static int touch(volatile char *p)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	got_sig = 0;
	if (sigsetjmp(jb, 1) == 0)
		(void)*p;
	return got_sig;
}

static void munmap_and_mremap_parts(void)
{
	int fd = CHECK_SYS(exe_fd());
	char *m = CHECK_MAP(mmap(NULL, 8 * PG, PROT_READ, MAP_PRIVATE, fd, 0));
	CHECK(same_as_file(fd, m, 8, 0));
	CHECK_SYS(munmap(m + 2 * PG, PG));
	CHECK_EQ(touch(m + 2 * PG), SIGSEGV);
	CHECK(same_as_file(fd, m + PG, 1, PG));
	CHECK(same_as_file(fd, m + 3 * PG, 1, 3 * PG));
	/* Move pages 4-5 elsewhere and grow them to four pages: they keep
	 * their file offsets and the growth maps the next ones. */
	char *n = mremap(m + 4 * PG, 2 * PG, 4 * PG, MREMAP_MAYMOVE);
	CHECK(n != MAP_FAILED);
	CHECK(same_as_file(fd, n, 4, 4 * PG));
	if (n != m + 4 * PG)
		CHECK_EQ(touch(m + 4 * PG), SIGSEGV);
	CHECK(same_as_file(fd, m + 6 * PG, 2, 6 * PG));
	munmap(m, 8 * PG);
	munmap(n, 4 * PG);
	close(fd);
}

static void maps_names_file(void)
{
	int fd = CHECK_SYS(exe_fd());
	char exe[512];
	ssize_t n = CHECK_SYS(readlink("/proc/self/exe", exe, sizeof exe - 1));
	exe[n] = 0;
	char *m = CHECK_MAP(mmap(NULL, 2 * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 3 * PG));
	(void)*(volatile char *)m;
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	char line[1024], want[64];
	snprintf(want, sizeof want, "%lx-%lx r-xp 00003000 ", (unsigned long)m, (unsigned long)(m + 2 * PG));
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, want, strlen(want)) == 0 && strstr(line, exe) != NULL)
			found = 1;
	}
	fclose(f);
	CHECK(found);
	munmap(m, 2 * PG);
	close(fd);
}

static void mincore_reports_pages(void)
{
	int fd = CHECK_SYS(exe_fd());
	char *m = CHECK_MAP(mmap(NULL, 4 * PG, PROT_READ, MAP_PRIVATE, fd, 0));
	for (int i = 0; i < 4; i++)
		(void)*(volatile char *)(m + i * PG);
	unsigned char vec[4];
	CHECK_SYS(mincore(m, 4 * PG, vec));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(vec[i] & 1, 1);
	munmap(m, 4 * PG);
	close(fd);
}

static void sigbus_past_end_of_file(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY | O_CLOEXEC));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_LT(st.st_size, PG);
	char *m = CHECK_MAP(mmap(NULL, 2 * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0));
	char buf[64];
	CHECK_EQ(pread(fd, buf, 5, 0), 5);
	CHECK_MEMEQ(m, buf, 5);
	/* The rest of the last page reads as zeros; the page after it is
	 * past the end. */
	CHECK_EQ(m[PG - 1], 0);
	CHECK_EQ(touch(m + PG), SIGBUS);
	munmap(m, 2 * PG);
	close(fd);
}

static const struct mt_case cases[] = {
	MT_CASE(contents_match_file),
	MT_CASE(mprotect_write_is_private),
	MT_CASE(fork_sees_contents),
	MT_CASE(munmap_and_mremap_parts),
	MT_CASE(maps_names_file),
	MT_CASE(mincore_reports_pages),
	MT_CASE(sigbus_past_end_of_file),
};

MT_MAIN(cases)
