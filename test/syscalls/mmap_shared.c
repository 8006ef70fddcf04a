//go:build ignore

/* mmap_shared: shared mappings of memory files (memfds, MAP_SHARED
 * anonymous memory): one page seen at two addresses, futexes keyed by the
 * page across processes, mremap of shared mappings, access checks of
 * mmap and mprotect, mincore, msync, SIGBUS past the end, and
 * MADV_POPULATE_READ/WRITE. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int memfd_of(size_t size)
{
	int fd = memfd_create("moat-shared", 0);
	if (fd >= 0 && ftruncate(fd, size) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void two_addresses_one_page(void)
{
	int fd = CHECK_SYS(memfd_of(8192));
	char *a = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	char *b = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096));
	a[4096 + 7] = 'a';
	CHECK_EQ(b[7], 'a');
	b[8] = 'b';
	CHECK_EQ(a[4096 + 8], 'b');
	/* A MAP_FIXED mapping over part of a: the rest still shares. */
	char *c = CHECK_MAP(mmap(a, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 4096));
	CHECK(c == a);
	CHECK_EQ(c[7], 'a');
	munmap(a, 8192);
	munmap(b, 4096);
	close(fd);
}

static void futex_across_processes_at_different_addresses(void)
{
	int fd = CHECK_SYS(memfd_of(4096));
	uint32_t *w = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	*w = 0;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* The child maps the page again somewhere else. */
		uint32_t *v = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CHILD_CHECK(v != MAP_FAILED);
		CHILD_CHECK(v != w);
		while (__atomic_load_n(v, __ATOMIC_SEQ_CST) == 0)
			syscall(SYS_futex, v, FUTEX_WAIT, 0, NULL, NULL, 0);
		_exit(__atomic_load_n(v, __ATOMIC_SEQ_CST) == 1 ? 0 : 1);
	}
	/* Wake until the child has left its wait. */
	__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
	int st;
	for (;;) {
		syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
		pid_t r = waitpid(pid, &st, WNOHANG);
		CHECK_SYS(r);
		if (r == pid)
			break;
		usleep(1000);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	munmap(w, 4096);
	close(fd);
}

static void mremap_shared(void)
{
	int fd = CHECK_SYS(memfd_of(3 * 4096));
	char *a = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	a[0] = 'x';
	/* Growing (perhaps moving) keeps the sharing and covers more file. */
	char *b = CHECK_MAP(mremap(a, 4096, 3 * 4096, MREMAP_MAYMOVE));
	CHECK_EQ(b[0], 'x');
	b[8192] = 'y';
	char c;
	CHECK_EQ(pread(fd, &c, 1, 8192), 1);
	CHECK_EQ(c, 'y');
	/* old_size 0 duplicates a shared mapping. */
	char *d = CHECK_MAP(mremap(b, 0, 4096, MREMAP_MAYMOVE));
	CHECK(d != b);
	d[1] = 'd';
	CHECK_EQ(b[1], 'd');
	munmap(b, 3 * 4096);
	munmap(d, 4096);
	close(fd);
}

static void access_checks(void)
{
	int fd = CHECK_SYS(memfd_of(4096));
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ro = CHECK_SYS(open(path, O_RDONLY));
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) == MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0));
	CHECK_ERR(mprotect(p, 4096, PROT_READ | PROT_WRITE), EACCES);
	/* A private mapping of a read-only descriptor may write. */
	char *q = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0));
	q[0] = 'q';
	CHECK_EQ(p[0], 0);
	munmap(p, 4096);
	munmap(q, 4096);
	close(ro);
	close(fd);
}

static void reopened_for_writing(void)
{
	int fd = CHECK_SYS(memfd_of(4096));
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int wo = CHECK_SYS(open(path, O_WRONLY));
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, wo, 0) == MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	CHECK_EQ(write(wo, "w", 1), 1);
	char c;
	CHECK_EQ(pread(fd, &c, 1, 0), 1);
	CHECK_EQ(c, 'w');
	close(wo);
	close(fd);
}

static void mincore_and_msync(void)
{
	int fd = CHECK_SYS(memfd_of(2 * 4096));
	char *p = CHECK_MAP(mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	unsigned char vec[2];
	CHECK_SYS(mincore(p, 2 * 4096, vec));
	CHECK_EQ(vec[0] & 1, 0);
	p[0] = 1;
	CHECK_SYS(mincore(p, 2 * 4096, vec));
	CHECK_EQ(vec[0] & 1, 1);
	/* Written through write(2), the page is resident for the mapping too. */
	CHECK_EQ(pwrite(fd, "z", 1, 4096), 1);
	CHECK_SYS(mincore(p, 2 * 4096, vec));
	CHECK_EQ(vec[1] & 1, 1);
	CHECK_SYS(msync(p, 2 * 4096, MS_SYNC));
	CHECK_SYS(msync(p, 2 * 4096, MS_ASYNC | MS_INVALIDATE));
	CHECK_ERR(msync(p + 1, 4096, MS_SYNC), EINVAL);
	munmap(p, 2 * 4096);
	close(fd);
}

static sigjmp_buf jb;
static volatile int got_sig;

static void on_bus(int sig)
{
	got_sig = sig;
	siglongjmp(jb, 1);
}

static void sigbus_past_end_and_after_growth(void)
{
	int fd = CHECK_SYS(memfd_of(4096));
	char *p = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	CHECK_SYS(sigaction(SIGBUS, &sa, NULL));
	got_sig = 0;
	if (sigsetjmp(jb, 1) == 0)
		p[4096] = 1;
	CHECK_EQ(got_sig, SIGBUS);
	/* Growing the file makes the page reachable through the mapping. */
	CHECK_SYS(ftruncate(fd, 2 * 4096));
	p[4096] = 2;
	char c;
	CHECK_EQ(pread(fd, &c, 1, 4096), 1);
	CHECK_EQ(c, 2);
	got_sig = 0;
	if (sigsetjmp(jb, 1) == 0)
		(void)*(volatile char *)(p + 2 * 4096);
	CHECK_EQ(got_sig, SIGBUS);
	/* write(2) to a file from a buffer running into the unreachable part
	 * copies what it can. */
	int sink = CHECK_SYS(memfd_create("moat-sink", 0));
	CHECK_EQ(write(sink, p + 2 * 4096 - 3, 10), 3);
	CHECK_ERR(write(sink, p + 2 * 4096, 10), EFAULT);
	close(sink);
	munmap(p, 3 * 4096);
	close(fd);
}

static void shared_anon_shrunk_by_mremap(void)
{
	char *p = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	p[2 * 4096] = 'e';
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(p[2 * 4096] == 'e');
		p[0] = 'c';
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[0], 'c');
	char *q = CHECK_MAP(mremap(p, 3 * 4096, 4096, 0));
	CHECK(q == p);
	CHECK_EQ(q[0], 'c');
	munmap(q, 4096);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

static void madvise_populate(void)
{
	int fd = CHECK_SYS(memfd_of(4 * 4096));
	char *p = CHECK_MAP(mmap(NULL, 6 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	struct stat st;
	CHECK_SYS(madvise(p, 4 * 4096, MADV_POPULATE_WRITE));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_blocks, 4 * 8);
	/* Past the end of the file. */
	CHECK_ERR(madvise(p, 6 * 4096, MADV_POPULATE_READ), EFAULT);
	char *ro = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	CHECK_SYS(madvise(ro, 4096, MADV_POPULATE_READ));
	CHECK_ERR(madvise(ro, 4096, MADV_POPULATE_WRITE), EINVAL);
	char *none = CHECK_MAP(mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_ERR(madvise(none, 4096, MADV_POPULATE_READ), EINVAL);
	CHECK_SYS(munmap(none, 4096));
	CHECK_ERR(madvise(none, 4096, MADV_POPULATE_READ), ENOMEM);
	char *anon = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(madvise(anon, 3 * 4096, MADV_POPULATE_WRITE));
	unsigned char vec[3];
	CHECK_SYS(mincore(anon, 3 * 4096, vec));
	CHECK_EQ(vec[0] & vec[1] & vec[2] & 1, 1);
	munmap(p, 6 * 4096);
	munmap(ro, 4096);
	munmap(anon, 3 * 4096);
	close(fd);
}

static const struct mt_case cases[] = {
	MT_CASE(two_addresses_one_page),
	MT_CASE(futex_across_processes_at_different_addresses),
	MT_CASE(mremap_shared),
	MT_CASE(access_checks),
	MT_CASE(reopened_for_writing),
	MT_CASE(mincore_and_msync),
	MT_CASE(sigbus_past_end_and_after_growth),
	MT_CASE(shared_anon_shrunk_by_mremap),
	MT_CASE(madvise_populate),
};

MT_MAIN(cases)
