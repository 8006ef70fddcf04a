//go:build ignore

/* rlimit_cpu_exec: RLIMIT_CPU (SIGXCPU at the soft limit, repeated each
 * second with a handler, SIGKILL at the hard limit) and resource limits
 * across fork and exec (inherited unchanged, a lowered hard limit stays
 * lowered in the new image). The program re-executes itself with
 * --limits to print its limits. */
#include "moattest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* cpu_ms returns the process's CPU time in milliseconds. */
static long cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* burn_up_to spins for at most ms of CPU (so a missing limit fails the
 * case instead of hanging it) and exits 9. */
static void burn_up_to(long ms)
{
	volatile unsigned long x = 0;
	while (cpu_ms() < ms)
		for (int i = 0; i < 100000; i++)
			x++;
	_exit(9);
}

static void soft_limit_sigxcpu_kills(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = {1, RLIM_INFINITY};
		if (setrlimit(RLIMIT_CPU, &rl) != 0)
			_exit(2);
		burn_up_to(3000);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGXCPU);
}

static volatile int xcpu_count;

static void on_xcpu(int sig)
{
	(void)sig;
	xcpu_count++;
}

static void hard_limit_sigkill_after_warnings(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_xcpu;
		sigaction(SIGXCPU, &sa, NULL);
		struct rlimit rl = {1, 2};
		if (setrlimit(RLIMIT_CPU, &rl) != 0)
			_exit(2);
		volatile unsigned long x = 0;
		int last = 0;
		for (;;) {
			x++;
			if ((x & 0xffff) == 0 && cpu_ms() > 4000)
				_exit(9);
			if (xcpu_count != last) {
				last = xcpu_count;
				char c = (char)last;
				if (write(p[1], &c, 1) != 1)
					_exit(3);
			}
		}
	}
	close(p[1]);
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
	char buf[16];
	ssize_t n = read(p[0], buf, sizeof(buf));
	/* SIGXCPU at 1 s, then SIGKILL at 2 s. */
	CHECK_GE(n, 1);
	CHECK_LE(n, 2);
}

static void limits_inherited_by_fork(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = {123, 456};
		CHILD_CHECK(setrlimit(RLIMIT_CORE, &rl) == 0);
		pid_t g = fork();
		if (g == 0) {
			struct rlimit got;
			getrlimit(RLIMIT_CORE, &got);
			_exit(got.rlim_cur == 123 && got.rlim_max == 456 ? 0 : 1);
		}
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void limits_survive_exec(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = {777, 888};
		if (setrlimit(RLIMIT_CORE, &rl) != 0)
			_exit(2);
		struct rlimit nf = {100, 200};
		if (setrlimit(RLIMIT_NOFILE, &nf) != 0)
			_exit(3);
		dup2(p[1], 1);
		char *argv[] = {(char *)mt_argv0, "--limits", NULL};
		execv(mt_argv0, argv);
		_exit(127);
	}
	close(p[1]);
	char out[128];
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_STREQ(out, "core 777 888 nofile 100 200\n");
}

static void cpu_limit_counts_children_separately(void)
{
	/* A child's CPU time does not count against the parent's limit. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = {2, RLIM_INFINITY};
		setrlimit(RLIMIT_CPU, &rl);
		for (int i = 0; i < 2; i++) {
			pid_t g = fork();
			if (g == 0) {
				/* Each grandchild has its own 2 s: burn 1.2 s. */
				struct timespec a, b;
				clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
				do {
					for (volatile int k = 0; k < 100000; k++) {
					}
					clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
				} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1200);
				_exit(0);
			}
			int st;
			CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st));
		}
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(soft_limit_sigxcpu_kills),
	MT_CASE(hard_limit_sigkill_after_warnings),
	MT_CASE(limits_inherited_by_fork),
	MT_CASE(limits_survive_exec),
	MT_CASE(cpu_limit_counts_children_separately),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--limits") == 0) {
		struct rlimit c, n;
		getrlimit(RLIMIT_CORE, &c);
		getrlimit(RLIMIT_NOFILE, &n);
		printf("core %lu %lu nofile %lu %lu\n", (unsigned long)c.rlim_cur, (unsigned long)c.rlim_max,
		       (unsigned long)n.rlim_cur, (unsigned long)n.rlim_max);
		fflush(stdout);
		return 0;
	}
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
