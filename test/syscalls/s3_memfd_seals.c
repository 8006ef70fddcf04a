//go:build ignore

/* s3_memfd_seals: what each memfd seal forbids: F_SEAL_SHRINK (ftruncate
 * down), F_SEAL_GROW (writes and ftruncate/fallocate past the end),
 * F_SEAL_WRITE (write, pwrite, writev, shared writable mappings, mprotect
 * to write of a shared read-only mapping), seals belonging to the file
 * (seen through dup and a read-only /proc/self/fd reopen), the initial seals of
 * tmpfs files and other files (EINVAL), and the memfd_create name and
 * flag errors. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PG 4096

static int sealable(size_t size)
{
	int fd = memfd_create("seals", MFD_ALLOW_SEALING);
	if (fd >= 0 && size && ftruncate(fd, (off_t)size) < 0)
		return -1;
	return fd;
}

static void shrink_seal(void)
{
	int fd = CHECK_SYS(sealable(2 * PG));
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	CHECK_ERR(ftruncate(fd, PG), EPERM);
	/* Growing and writing are still fine. */
	CHECK_SYS(ftruncate(fd, 3 * PG));
	CHECK_EQ(pwrite(fd, "x", 1, 5 * PG), 1);
	/* Truncating to the same size is not shrinking. */
	CHECK_SYS(ftruncate(fd, 5 * PG + 1));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 5 * PG + 1);
}

static void grow_seal(void)
{
	int fd = CHECK_SYS(sealable(PG));
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW));
	/* Inside the file: fine. */
	CHECK_EQ(pwrite(fd, "in", 2, PG - 2), 2);
	/* A write crossing the end stops there; past it: EPERM. */
	CHECK_EQ(pwrite(fd, "out", 3, PG - 1), 1);
	CHECK_ERR(pwrite(fd, "out", 3, PG), EPERM);
	CHECK_ERR(pwrite(fd, "out", 3, 2 * PG), EPERM);
	CHECK_ERR(ftruncate(fd, 2 * PG), EPERM);
	CHECK_ERR(fallocate(fd, 0, 0, 2 * PG), EPERM);
	/* Shrinking is allowed. */
	CHECK_SYS(ftruncate(fd, PG / 2));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, PG / 2);
}

static void write_seal_blocks_writes(void)
{
	int fd = CHECK_SYS(sealable(PG));
	CHECK_EQ(pwrite(fd, "before", 6, 0), 6);
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	CHECK_ERR(write(fd, "x", 1), EPERM);
	CHECK_ERR(pwrite(fd, "x", 1, 0), EPERM);
	struct iovec v = {"x", 1};
	CHECK_ERR(writev(fd, &v, 1), EPERM);
	/* Reads and size changes are still allowed. */
	char b[6];
	CHECK_EQ(pread(fd, b, 6, 0), 6);
	CHECK_MEMEQ(b, "before", 6);
	CHECK_SYS(ftruncate(fd, 2 * PG));
}

static void write_seal_and_mappings(void)
{
	int fd = CHECK_SYS(sealable(PG));
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	CHECK(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EPERM);
	/* Read-only shared and private writable mappings are fine. */
	char *ro = CHECK_MAP(mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0));
	char *pv = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	pv[0] = 'p';
	CHECK_EQ(ro[0], 0);
	/* The shared read-only mapping cannot become writable. */
	CHECK_ERR(mprotect(ro, PG, PROT_READ | PROT_WRITE), EACCES);
}

static void seals_belong_to_the_file(void)
{
	int fd = CHECK_SYS(sealable(PG));
	int d = CHECK_SYS(dup(fd));
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int re = CHECK_SYS(open(path, O_RDONLY));
	CHECK_SYS(fcntl(d, F_ADD_SEALS, F_SEAL_GROW));
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_GROW);
	CHECK_EQ(fcntl(re, F_GET_SEALS), F_SEAL_GROW);
	CHECK_ERR(pwrite(fd, "x", 1, PG), EPERM);
	/* Seals accumulate; F_SEAL_SEAL ends it for every descriptor. */
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL));
	CHECK_EQ(fcntl(re, F_GET_SEALS), F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	CHECK_ERR(fcntl(d, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
	/* Once sealed, even adding nothing is EPERM. */
	CHECK_ERR(fcntl(d, F_ADD_SEALS, 0), EPERM);
}

static void initial_seals_of_other_files(void)
{
	ENTER();
	/* A tmpfs file made by open starts sealed against sealing. */
	int f = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0644));
	CHECK_EQ(fcntl(f, F_GET_SEALS), F_SEAL_SEAL);
	CHECK_ERR(fcntl(f, F_ADD_SEALS, F_SEAL_GROW), EPERM);
	/* Files that cannot be sealed at all: EINVAL. */
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(fcntl(p[0], F_GET_SEALS), EINVAL);
	CHECK_ERR(fcntl(p[1], F_ADD_SEALS, F_SEAL_GROW), EINVAL);
	int n = CHECK_SYS(open("/dev/null", O_RDWR));
	CHECK_ERR(fcntl(n, F_GET_SEALS), EINVAL);
	/* A memfd without MFD_ALLOW_SEALING: only F_SEAL_SEAL. */
	int m = CHECK_SYS(memfd_create("plain", 0));
	CHECK_EQ(fcntl(m, F_GET_SEALS), F_SEAL_SEAL);
}

static void unknown_seals_einval(void)
{
	int fd = CHECK_SYS(sealable(0));
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, 0x1000), EINVAL);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, -1), EINVAL);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), 0);
	/* A descriptor opened read-only may not add seals. */
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int ro = CHECK_SYS(open(path, O_RDONLY));
	CHECK_ERR(fcntl(ro, F_ADD_SEALS, F_SEAL_GROW), EPERM);
	CHECK_EQ(fcntl(ro, F_GET_SEALS), 0);
}

static void memfd_create_errors(void)
{
	char name[300];
	memset(name, 'n', sizeof name);
	/* The name may be 249 bytes (NAME_MAX minus "memfd:"). */
	name[249] = 0;
	int fd = CHECK_SYS(memfd_create(name, 0));
	CHECK_SYS(close(fd));
	name[249] = 'n';
	name[250] = 0;
	CHECK_ERR(memfd_create(name, 0), EINVAL);
	CHECK_ERR(memfd_create("x", 0x100), EINVAL);
	CHECK_ERR(memfd_create("x", (unsigned)-1), EINVAL);
	CHECK_ERR(syscall(SYS_memfd_create, (const char *)1, 0), EFAULT);
	/* An empty name is fine. */
	fd = CHECK_SYS(memfd_create("", MFD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
}

static const struct mt_case cases[] = {
	MT_CASE(shrink_seal),
	MT_CASE(grow_seal),
	MT_CASE(write_seal_blocks_writes),
	MT_CASE(write_seal_and_mappings),
	MT_CASE(seals_belong_to_the_file),
	MT_CASE(initial_seals_of_other_files),
	MT_CASE(unknown_seals_einval),
	MT_CASE(memfd_create_errors),
};

MT_MAIN(cases)
