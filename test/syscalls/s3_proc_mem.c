//go:build ignore

/* s3_proc_mem: /proc/PID/mem as debuggers use it: writes through
 * read-only private mappings (copy-on-write, the file untouched), patching
 * the program's own code, reading PROT_NONE pages, EIO for writes to
 * read-only shared mappings, the descriptor staying bound to the address
 * space it was opened on (across fork, and reading 0 once that process is
 * gone), and addresses beyond user space. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

static int mem_fd(int flags)
{
	return open("/proc/self/mem", flags);
}

static void write_through_readonly_page(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	memcpy(p, "old", 3);
	CHECK_SYS(mprotect(p, PG, PROT_READ));
	int fd = CHECK_SYS(mem_fd(O_RDWR));
	/* The kernel writes with FOLL_FORCE, as ptrace does. */
	CHECK_EQ(pwrite(fd, "new", 3, (off_t)(uintptr_t)p), 3);
	CHECK_MEMEQ(p, "new", 3);
}

static void read_prot_none_page(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	memcpy(p, "hidden", 6);
	CHECK_SYS(mprotect(p, PG, PROT_NONE));
	int fd = CHECK_SYS(mem_fd(O_RDONLY));
	char b[8];
	CHECK_EQ(pread(fd, b, 6, (off_t)(uintptr_t)p), 6);
	CHECK_MEMEQ(b, "hidden", 6);
	CHECK_SYS(mprotect(p, PG, PROT_READ));
}

__attribute__((noinline, aligned(64))) static int patch_me(void)
{
	__asm__ volatile("" ::: "memory");
	return 1;
}

static void patch_own_code(void)
{
	int (*volatile f)(void) = patch_me;
	CHECK_EQ(f(), 1);
	/* mov $2, %eax; ret */
	static const unsigned char code[] = {0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3};
	int fd = CHECK_SYS(mem_fd(O_RDWR));
	CHECK_EQ(pwrite(fd, code, sizeof code, (off_t)(uintptr_t)patch_me), (ssize_t)sizeof code);
	CHECK_EQ(f(), 2);
}

static void private_file_mapping_cow(void)
{
	int m = CHECK_SYS(memfd_create("pm", 0));
	CHECK_EQ(pwrite(m, "orig", 4, 0), 4);
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, m, 0));
	int fd = CHECK_SYS(mem_fd(O_RDWR));
	CHECK_EQ(pwrite(fd, "copy", 4, (off_t)(uintptr_t)p), 4);
	CHECK_MEMEQ(p, "copy", 4);
	/* The file keeps its bytes. */
	char b[4];
	CHECK_EQ(pread(m, b, 4, 0), 4);
	CHECK_MEMEQ(b, "orig", 4);
}

static void readonly_shared_mapping_eio(void)
{
	int m = CHECK_SYS(memfd_create("sh", 0));
	CHECK_EQ(pwrite(m, "keep", 4, 0), 4);
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ, MAP_SHARED, m, 0));
	int fd = CHECK_SYS(mem_fd(O_RDWR));
	/* Forcing a write into a shared mapping would change the file: EIO. */
	CHECK_ERR(pwrite(fd, "XXXX", 4, (off_t)(uintptr_t)p), EIO);
	CHECK_MEMEQ(p, "keep", 4);
	/* Reading it is fine. */
	char b[4];
	CHECK_EQ(pread(fd, b, 4, (off_t)(uintptr_t)p), 4);
	CHECK_MEMEQ(b, "keep", 4);
}

static char marker[16] = "parent";

static void bound_to_address_space_across_fork(void)
{
	int fd = CHECK_SYS(mem_fd(O_RDONLY));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* The child changes its copy, then reads through the
		 * inherited descriptor: it still shows the parent's. */
		strcpy(marker, "child");
		char b[8] = {0};
		ssize_t n = pread(fd, b, 6, (off_t)(uintptr_t)marker);
		write(p[1], b, sizeof b);
		_exit(n == 6 ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	char b[8];
	CHECK_EQ(read(p[0], b, sizeof b), 8);
	CHECK_STREQ(b, "parent");
}

static void gone_process_reads_zero(void)
{
	int ready[2], go[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(pipe(go));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		write(ready[1], "r", 1);
		char c;
		read(go[0], &c, 1);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = CHECK_SYS(open(path, O_RDONLY));
	char b[8];
	CHECK_EQ(pread(fd, b, 6, (off_t)(uintptr_t)marker), 6);
	CHECK_EQ(write(go[1], "g", 1), 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* Its memory is gone: reads return 0. */
	CHECK_EQ(pread(fd, b, 6, (off_t)(uintptr_t)marker), 0);
}

static void beyond_user_space(void)
{
	int fd = CHECK_SYS(mem_fd(O_RDONLY));
	char b[8];
	CHECK_ERR(pread(fd, b, 8, (off_t)0x7ffffffff000LL + 0x2000), EIO);
	/* lseek accepts any offset, even "negative" kernel addresses. */
	off_t high = (off_t)0xffff800000000000ULL;
	CHECK_EQ(lseek(fd, high, SEEK_SET), high);
	CHECK_ERR(read(fd, b, 8), EIO);
	/* Zero-length reads succeed anywhere. */
	CHECK_EQ(pread(fd, b, 0, 12345), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(write_through_readonly_page),
	MT_CASE(read_prot_none_page),
	MT_CASE(patch_own_code),
	MT_CASE(private_file_mapping_cow),
	MT_CASE(readonly_shared_mapping_eio),
	MT_CASE(bound_to_address_space_across_fork),
	MT_CASE(gone_process_reads_zero),
	MT_CASE(beyond_user_space),
};

MT_MAIN(cases)
