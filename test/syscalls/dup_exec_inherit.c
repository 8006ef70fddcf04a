//go:build ignore

/* dup_exec_inherit: which descriptor state crosses fork and exec: open
 * descriptors (without FD_CLOEXEC) keep their numbers, offsets and status
 * flags in the new image; O_CLOEXEC from open, pipe2, dup3, F_DUPFD_CLOEXEC
 * and FIOCLEX all close at exec; the stdio numbers survive; and a
 * close-on-exec descriptor stays open in a forked child until it execs.
 * The program re-executes itself with --fds to describe its table. */
#include "moattest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* describe prints, for fds 0..63 that are open, "fd:offset:flags". */
static int describe(void)
{
	for (int fd = 0; fd < 64; fd++) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0)
			continue;
		off_t off = lseek(fd, 0, SEEK_CUR);
		printf("%d:%ld:%s%s ", fd, off < 0 ? -1L : (long)off, (fl & O_NONBLOCK) ? "n" : "",
		       (fl & O_APPEND) ? "a" : "");
	}
	printf("\n");
	fflush(stdout);
	return 0;
}

static void exec_describe(char *out, size_t n)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		out[0] = 0;
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		char *argv[] = {(char *)mt_argv0, "--fds", NULL};
		execv(mt_argv0, argv);
		_exit(127);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t r;
	while (got + 1 < n && (r = read(p[0], out + got, n - 1 - got)) > 0)
		got += r;
	out[got] = 0;
	close(p[0]);
	mt_wait(pid);
}

static void open_descriptors_cross_exec(void)
{
	int f = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	CHECK_EQ(f, 3);
	CHECK_SYS(lseek(f, 4, SEEK_SET));
	int n = CHECK_SYS(open("/dev/null", O_WRONLY | O_APPEND | O_NONBLOCK));
	CHECK_EQ(n, 4);
	char out[512];
	exec_describe(out, sizeof(out));
	/* 0, 2 as given, 1 is the report pipe; 3 at offset 4; 4 with its
	 * status flags (/dev/null's offset reads 0). */
	CHECK(strstr(out, " 3:4: ") != NULL);
	CHECK(strstr(out, " 4:0:na ") != NULL);
	CHECK(strncmp(out, "0:", 2) == 0);
}

static void every_cloexec_source_closes(void)
{
	int a = CHECK_SYS(open("/dev/null", O_RDONLY | O_CLOEXEC));
	int p[2];
	CHECK_SYS(pipe2(p, O_CLOEXEC));
	int b = CHECK_SYS(dup3(0, 20, O_CLOEXEC));
	int c = CHECK_SYS(fcntl(0, F_DUPFD_CLOEXEC, 30));
	int d = CHECK_SYS(open("/dev/null", O_RDONLY));
	CHECK_SYS(ioctl(d, FIOCLEX));
	int e = CHECK_SYS(open("/dev/null", O_RDONLY));
	CHECK_SYS(fcntl(e, F_SETFD, FD_CLOEXEC));
	char out[512];
	exec_describe(out, sizeof(out));
	int fds[] = {a, p[0], p[1], b, c, d, e};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		char needle[16];
		snprintf(needle, sizeof(needle), " %d:", fds[i]);
		if (strstr(out, needle))
			FAIL("fd %d survived exec: %s", fds[i], out);
	}
}

static void cloexec_open_until_exec(void)
{
	int a = CHECK_SYS(open("/dev/null", O_RDONLY | O_CLOEXEC));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(fcntl(a, F_GETFD) == FD_CLOEXEC ? 0 : 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void fionclex_keeps_across_exec(void)
{
	int a = CHECK_SYS(open("/dev/null", O_RDONLY | O_CLOEXEC));
	CHECK_SYS(ioctl(a, FIONCLEX));
	char out[512];
	exec_describe(out, sizeof(out));
	char needle[16];
	snprintf(needle, sizeof(needle), " %d:", a);
	CHECK(strstr(out, needle) != NULL);
}

static void high_numbers_survive(void)
{
	CHECK_EQ(dup2(0, 60), 60);
	char out[512];
	exec_describe(out, sizeof(out));
	CHECK(strstr(out, " 60:") != NULL);
}

static const struct mt_case cases[] = {
	MT_CASE(open_descriptors_cross_exec),
	MT_CASE(every_cloexec_source_closes),
	MT_CASE(cloexec_open_until_exec),
	MT_CASE(fionclex_keeps_across_exec),
	MT_CASE(high_numbers_survive),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--fds") == 0)
		return describe();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
