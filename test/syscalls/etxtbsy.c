//go:build ignore

/* etxtbsy: a program being executed cannot be opened for writing or
 * truncated (ETXTBSY), and a file open for writing cannot be executed;
 * both end when the writer closes or the process exits; reading,
 * renaming and unlinking stay allowed; a #! script is free to change
 * while its interpreter runs, but not to be executed while open for
 * writing. Works on a copy of this program in a scratch directory. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* copy_self copies this program to dst, mode 0755. */
static int copy_self(const char *dst)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	static char buf[1 << 16];
	ssize_t n;
	int ret = 0;
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, n) != n) {
			ret = -1;
			break;
		}
	}
	if (n < 0)
		ret = -1;
	close(in);
	close(out);
	return ret;
}

/* run_waiting starts path (with argv) in a child that writes one byte
 * on *ready once it runs the new image, then waits for SIGKILL. */
static pid_t run_waiting(const char *path, char *const argv[], int *ready)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t c = fork();
	if (c == 0) {
		dup2(p[1], 3);
		execv(path, argv);
		_exit(errno);
	}
	close(p[1]);
	*ready = p[0];
	return c;
}

/* started waits for a child of run_waiting to report in. */
static int started(int ready)
{
	char b;
	ssize_t n = read(ready, &b, 1);
	close(ready);
	return n == 1 ? 0 : -1;
}

static void stop(pid_t c)
{
	kill(c, SIGKILL);
	mt_wait(c);
}

static void running_program_is_busy(void)
{
	ENTER();
	CHECK_SYS(copy_self("prog"));
	char *argv[] = { "prog", "--wait", NULL };
	int ready;
	pid_t c = CHECK_SYS(run_waiting("prog", argv, &ready));
	CHECK_SYS(started(ready));
	CHECK_ERR(open("prog", O_WRONLY), ETXTBSY);
	CHECK_ERR(open("prog", O_RDWR), ETXTBSY);
	CHECK_ERR(open("prog", O_WRONLY | O_TRUNC), ETXTBSY);
	CHECK_ERR(truncate("prog", 0), ETXTBSY);
	int fd = CHECK_SYS(open("prog", O_RDONLY));
	char b[4];
	CHECK_EQ(read(fd, b, 4), 4);
	CHECK_MEMEQ(b, "\177ELF", 4);
	CHECK_ERR(ftruncate(fd, 0), EINVAL);
	close(fd);
	/* The name may go: the program keeps running. */
	CHECK_SYS(rename("prog", "moved"));
	CHECK_ERR(open("moved", O_WRONLY), ETXTBSY);
	CHECK_SYS(unlink("moved"));
	CHECK_EQ(waitpid(c, NULL, WNOHANG), 0);
	stop(c);
}

static void busy_until_exit(void)
{
	ENTER();
	CHECK_SYS(copy_self("prog"));
	char *argv[] = { "prog", "--wait", NULL };
	int ready;
	pid_t c = CHECK_SYS(run_waiting("prog", argv, &ready));
	CHECK_SYS(started(ready));
	CHECK_ERR(open("prog", O_WRONLY), ETXTBSY);
	stop(c);
	int fd = CHECK_SYS(open("prog", O_WRONLY));
	close(fd);
	CHECK_SYS(truncate("prog", 0));
}

static void writer_blocks_exec(void)
{
	ENTER();
	CHECK_SYS(copy_self("prog"));
	int w = CHECK_SYS(open("prog", O_WRONLY));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		char *argv[] = { "prog", "--exit", NULL };
		execv("prog", argv);
		_exit(errno == ETXTBSY ? 0 : 1);
	}
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	/* execv in this process fails the same way and returns. */
	char *argv[] = { "prog", "--exit", NULL };
	CHECK_ERR(execv("prog", argv), ETXTBSY);
	/* Once the writer is gone, the program runs. */
	close(w);
	c = CHECK_SYS(fork());
	if (c == 0) {
		execv("prog", argv);
		_exit(100);
	}
	st = mt_wait(c);
	CHECK_EXITED(st, 42);
}

static void reader_does_not_block_exec(void)
{
	ENTER();
	CHECK_SYS(copy_self("prog"));
	int r = CHECK_SYS(open("prog", O_RDONLY));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		char *argv[] = { "prog", "--exit", NULL };
		execv("prog", argv);
		_exit(100);
	}
	int st = mt_wait(c);
	CHECK_EXITED(st, 42);
	close(r);
}

static void script_and_interpreter(void)
{
	ENTER();
	CHECK_SYS(copy_self("interp"));
	char cwd[512];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	char line[700];
	snprintf(line, sizeof line, "#!%s/interp --wait\n", cwd);
	int fd = CHECK_SYS(open("script", O_WRONLY | O_CREAT | O_TRUNC, 0755));
	CHECK_EQ(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	/* A script open for writing cannot be executed either. */
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		char *argv[] = { "script", NULL };
		execv("script", argv);
		_exit(errno == ETXTBSY ? 0 : 1);
	}
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	close(fd);
	char *argv[] = { "script", NULL };
	int ready;
	c = CHECK_SYS(run_waiting("script", argv, &ready));
	CHECK_SYS(started(ready));
	/* The interpreter runs; the script itself may change. */
	CHECK_ERR(open("interp", O_WRONLY), ETXTBSY);
	fd = CHECK_SYS(open("script", O_WRONLY | O_APPEND));
	close(fd);
	stop(c);
}

/* A forked copy of a running program keeps it busy after the process
 * that exec'd it has gone. */
static void forked_copy_keeps_busy(void)
{
	ENTER();
	CHECK_SYS(copy_self("prog"));
	char *argv[] = { "prog", "--fork-wait", NULL };
	int ready;
	pid_t c = CHECK_SYS(run_waiting("prog", argv, &ready));
	pid_t g;
	CHECK_EQ(read(ready, &g, sizeof g), (ssize_t)sizeof g);
	close(ready);
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	CHECK_ERR(open("prog", O_WRONLY), ETXTBSY);
	CHECK_SYS(kill(g, SIGKILL));
	/* The orphan is reaped by init: this program natively and in the
	 * sandbox; wait for the denial to go either way. */
	int fd = -1;
	for (int i = 0; i < 500 && fd < 0; i++) {
		waitpid(-1, NULL, WNOHANG);
		fd = open("prog", O_WRONLY);
		if (fd < 0)
			usleep(10 * 1000);
	}
	CHECK_SYS(fd);
	close(fd);
}

static const struct mt_case cases[] = {
	MT_CASE(running_program_is_busy),
	MT_CASE(busy_until_exit),
	MT_CASE(writer_blocks_exec),
	MT_CASE(reader_does_not_block_exec),
	MT_CASE(script_and_interpreter),
	MT_CASE(forked_copy_keeps_busy),
};

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--wait") == 0) {
		/* Started by run_waiting: report in on fd 3, then wait. */
		if (write(3, "r", 1) != 1)
			return 1;
		for (;;)
			pause();
	}
	if (argc >= 2 && strcmp(argv[1], "--fork-wait") == 0) {
		/* Started by run_waiting: a forked copy reports its pid on fd
		 * 3 and waits; this process exits. */
		pid_t g = fork();
		if (g < 0)
			return 1;
		if (g == 0) {
			pid_t me = getpid();
			if (write(3, &me, sizeof me) != sizeof me)
				_exit(1);
			for (;;)
				pause();
		}
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--exit") == 0)
		return 42;
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
