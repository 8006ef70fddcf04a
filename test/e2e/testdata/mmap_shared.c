/* mmap_shared: a MAP_SHARED writable mapping of a file in DIR (argv[1])
 * shares its pages with read(2) and write(2) of the file, with a forked
 * child and with other opens, survives msync and munmap, and reaches the
 * file even when the process exits without unmapping. The caller checks
 * the files afterwards: DIR/a, DIR/b. Prints "ok NAME" per check and exits
 * 1 at the first failure. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

static void check(int ok, const char *name)
{
	if (!ok) {
		printf("FAIL %s\n", name);
		fflush(stdout);
		exit(1);
	}
	printf("ok %s\n", name);
}

static void path(char *buf, const char *dir, const char *name)
{
	snprintf(buf, 4096, "%s/%s", dir, name);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mmap_shared DIR\n");
		return 2;
	}
	char pa[4096], pb[4096], pc[4096], buf[64];
	path(pa, argv[1], "a");
	path(pb, argv[1], "b");
	path(pc, argv[1], "c");

	int fd = open(pa, O_RDWR | O_CREAT | O_TRUNC, 0644);
	check(fd >= 0, "open_a");
	char fill[3 * PG];
	memset(fill, 'a', sizeof fill);
	check(write(fd, fill, sizeof fill) == sizeof fill, "write_a");
	char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(p != MAP_FAILED, "mmap_a");
	check(p[0] == 'a' && p[3 * PG - 1] == 'a', "mapping_reads_file");

	memcpy(p + 10, "MAPPED", 6);
	check(pread(fd, buf, 6, 10) == 6 && memcmp(buf, "MAPPED", 6) == 0, "read_sees_mapped_write");

	check(pwrite(fd, "WRITTEN", 7, PG + 5) == 7, "pwrite_a");
	check(memcmp(p + PG + 5, "WRITTEN", 7) == 0, "mapping_sees_write");

	pid_t pid = fork();
	if (pid == 0) {
		memcpy(p + 2 * PG, "CHILD", 5);
		_exit(0);
	}
	int st;
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "wait_child");
	check(memcmp(p + 2 * PG, "CHILD", 5) == 0, "fork_shares_pages");

	check(msync(p, 3 * PG, MS_SYNC) == 0, "msync");
	int fd2 = open(pa, O_RDONLY);
	check(fd2 >= 0 && pread(fd2, buf, 5, 2 * PG) == 5 && memcmp(buf, "CHILD", 5) == 0, "other_open_sees_write");

	memcpy(p + 100, "AFTERSYNC", 9);
	check(munmap(p, 3 * PG) == 0, "munmap");
	check(pread(fd, buf, 9, 100) == 9 && memcmp(buf, "AFTERSYNC", 9) == 0, "read_after_munmap");
	struct stat sb;
	check(fstat(fd, &sb) == 0 && sb.st_size == 3 * PG, "size_unchanged");
	close(fd);
	close(fd2);

	/* Truncation while mapped: the mapping's bytes past the new end are
	 * gone, and growing again reads zeros there. */
	fd = open(pc, O_RDWR | O_CREAT | O_TRUNC, 0644);
	check(fd >= 0 && ftruncate(fd, 2 * PG) == 0, "open_c");
	char *c = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(c != MAP_FAILED, "mmap_c");
	memset(c, 'c', 2 * PG);
	check(ftruncate(fd, 100) == 0 && ftruncate(fd, 2 * PG) == 0, "truncate_c");
	check(c[99] == 'c' && c[100] == 0 && c[PG] == 0, "truncate_drops_mapped_bytes");
	check(pread(fd, buf, 2, 99) == 2 && buf[0] == 'c' && buf[1] == 0, "read_after_truncate");
	munmap(c, 2 * PG);
	close(fd);
	unlink(pc);

	/* File b: written only through a mapping that is still there at
	 * exit, its descriptor closed first. */
	fd = open(pb, O_RDWR | O_CREAT | O_TRUNC, 0644);
	check(fd >= 0 && ftruncate(fd, PG) == 0, "open_b");
	char *q = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(q != MAP_FAILED, "mmap_b");
	close(fd);
	memcpy(q, "EXITDATA", 8);
	printf("done\n");
	return 0;
}
