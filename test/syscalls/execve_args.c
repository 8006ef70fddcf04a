//go:build ignore

/* execve_args: execve and execveat argument handling: argv and envp edge
 * cases (empty, NULL, long strings, many entries, bad pointers), the
 * errors Linux documents (ENOENT, EACCES, ENOEXEC, E2BIG, EFAULT, ENOTDIR,
 * ELOOP, EISDIR), execveat flags, and what survives an exec (pid, cwd,
 * umask, ignored signals, blocked mask, pending signals, rlimits). The
 * program re-executes itself with --show to report what it received. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* run_self execs this program with args in a child and returns the wait
 * status; the child's stdout goes to out (up to n bytes). */
static int run_self(char *const argv[], char *const envp[], char *out, size_t n)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		syscall(SYS_execve, mt_argv0, argv, envp);
		_exit(100 + errno);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t r;
	while (got + 1 < n && (r = read(p[0], out + got, n - 1 - got)) > 0)
		got += r;
	out[got] = 0;
	close(p[0]);
	return mt_wait(pid);
}

static void child_exec_errno(const char *path, char *const argv[], char *const envp[], int *err)
{
	pid_t pid = fork();
	if (pid == 0) {
		syscall(SYS_execve, path, argv, envp);
		_exit(errno);
	}
	int st = mt_wait(pid);
	*err = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void argv_and_env_passed(void)
{
	char out[4096];
	char *argv[] = {"argv0-name", "--show", "", "two words", NULL};
	char *envp[] = {"A=1", "EMPTY=", "NOEQUALS", NULL};
	int st = run_self(argv, envp, out, sizeof(out));
	CHECK_EXITED(st, 0);
	CHECK_STREQ(out, "argc=4\n[argv0-name]\n[--show]\n[]\n[two words]\nenv=3\n{A=1}\n{EMPTY=}\n{NOEQUALS}\n");
}

static void null_envp_is_empty(void)
{
	char out[4096];
	char *argv[] = {"x", "--show", NULL};
	int st = run_self(argv, NULL, out, sizeof(out));
	CHECK_EXITED(st, 0);
	CHECK(strstr(out, "env=0\n") != NULL);
}

static void null_argv_is_empty(void)
{
	/* Linux 5.18+ substitutes argv = {""} for an empty argv, so the
	 * program sees argc 1 with an empty argv[0]. */
	char out[4096];
	char *envp[] = {"MT_SHOW=1", NULL};
	int st = run_self(NULL, envp, out, sizeof(out));
	CHECK_EXITED(st, 0);
	CHECK(strncmp(out, "argc=1\n[]\n", 10) == 0);
}

static void long_argument_strings(void)
{
	/* One string up to MAX_ARG_STRLEN (32 pages) is fine; longer: E2BIG. */
	size_t len = 32 * 4096;
	char *big = malloc(len + 2);
	CHECK(big != NULL);
	memset(big, 'a', len + 1);
	big[len - 1] = 0; /* strlen 131071: including the NUL, exactly the limit */
	char out[256];
	char *argv[] = {"x", "--count", big, NULL};
	int st = run_self(argv, NULL, out, sizeof(out));
	CHECK_EXITED(st, 0);
	CHECK_STREQ(out, "3 131071\n");
	big[len - 1] = 'a';
	big[len] = 0;
	int err;
	child_exec_errno(mt_argv0, argv, NULL, &err);
	free(big);
	CHECK_EQ(err, E2BIG);
}

static void many_arguments(void)
{
	int n = 20000;
	char **argv = calloc(n + 3, sizeof(char *));
	CHECK(argv != NULL);
	argv[0] = "x";
	argv[1] = "--count";
	for (int i = 2; i < n + 2; i++)
		argv[i] = "arg";
	char out[256];
	int st = run_self(argv, NULL, out, sizeof(out));
	free(argv);
	CHECK_EXITED(st, 0);
	char want[64];
	snprintf(want, sizeof(want), "%d %d\n", n + 2, 3);
	CHECK_STREQ(out, want);
}

static void total_size_e2big(void)
{
	/* The total is limited by a quarter of RLIMIT_STACK: lower the limit
	 * in a child and pass 1 MiB of environment. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl;
		getrlimit(RLIMIT_STACK, &rl);
		rl.rlim_cur = 1 << 20;
		setrlimit(RLIMIT_STACK, &rl);
		static char chunk[64 * 1024];
		memset(chunk, 'e', sizeof(chunk) - 1);
		chunk[0] = 'E';
		chunk[1] = '=';
		char *envp[20];
		for (int i = 0; i < 19; i++)
			envp[i] = chunk;
		envp[19] = NULL;
		char *argv[] = {"x", NULL};
		syscall(SYS_execve, mt_argv0, argv, envp);
		_exit(errno == E2BIG ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void bad_pointers_efault(void)
{
	int err;
	char *argv[] = {"x", NULL};
	child_exec_errno(NULL, argv, NULL, &err);
	CHECK_EQ(err, EFAULT);
	child_exec_errno(mt_argv0, (char **)1, NULL, &err);
	CHECK_EQ(err, EFAULT);
	char *badarg[] = {"x", (char *)1, NULL};
	child_exec_errno(mt_argv0, badarg, NULL, &err);
	CHECK_EQ(err, EFAULT);
	child_exec_errno(mt_argv0, argv, (char **)1, &err);
	CHECK_EQ(err, EFAULT);
}

static void path_errors(void)
{
	int err;
	char *argv[] = {"x", NULL};
	child_exec_errno("/nonexistent", argv, NULL, &err);
	CHECK_EQ(err, ENOENT);
	child_exec_errno("", argv, NULL, &err);
	CHECK_EQ(err, ENOENT);
	child_exec_errno("/", argv, NULL, &err);
	CHECK_EQ(err, EACCES);
	child_exec_errno(mt_data("not_exec.txt"), argv, NULL, &err);
	CHECK_EQ(err, EACCES);
	child_exec_errno(mt_data("garbage.bin"), argv, NULL, &err);
	CHECK_EQ(err, ENOEXEC);
	child_exec_errno(mt_data("bad_interp.sh"), argv, NULL, &err);
	CHECK_EQ(err, ENOENT);
	child_exec_errno("/etc/passwd/x", argv, NULL, &err);
	CHECK_EQ(err, ENOTDIR);
	child_exec_errno(mt_data("loop_a"), argv, NULL, &err);
	CHECK_EQ(err, ELOOP);
	child_exec_errno("/dev/null", argv, NULL, &err);
	CHECK_EQ(err, EACCES);
}

static void execveat_forms(void)
{
	int err;
	char out[4096];
	int dir = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	char *argv[] = {"x", NULL};
	/* A relative path against a dirfd. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		syscall(SYS_execveat, dir, "bin/true", argv, NULL, 0);
		_exit(100);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* Bad flags, bad dirfd. */
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		syscall(SYS_execveat, dir, "bin/true", argv, NULL, 0x4);
		_exit(errno);
	}
	st = mt_wait(pid);
	CHECK_EXITED(st, EINVAL);
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		syscall(SYS_execveat, 999, "bin/true", argv, NULL, 0);
		_exit(errno);
	}
	st = mt_wait(pid);
	CHECK_EXITED(st, EBADF);
	/* AT_SYMLINK_NOFOLLOW on a symlink: ELOOP. */
	int d = CHECK_SYS(open(mt_data(""), O_RDONLY | O_DIRECTORY));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		syscall(SYS_execveat, d, "link_to_hello", argv, NULL, AT_SYMLINK_NOFOLLOW);
		_exit(errno);
	}
	st = mt_wait(pid);
	CHECK_EXITED(st, ELOOP);
	/* AT_EMPTY_PATH with an fd of ourselves. */
	int self = CHECK_SYS(open(mt_argv0, O_RDONLY | O_CLOEXEC));
	char *sargv[] = {"y", "--show", NULL};
	int p[2];
	CHECK_SYS(pipe(p));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		dup2(p[1], 1);
		syscall(SYS_execveat, self, "", sargv, NULL, AT_EMPTY_PATH);
		_exit(100 + errno);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK(strncmp(out, "argc=2\n[y]\n", 11) == 0);
	(void)err;
}

static void exec_keeps_identity(void)
{
	char out[4096];
	umask(0017);
	CHECK_SYS(chdir(mt_data("dir")));
	signal(SIGUSR2, SIG_IGN);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	char *argv[] = {"x", "--identity", NULL};
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		dup2(p[1], 1);
		/* A pending, blocked SIGHUP survives the exec. */
		kill(getpid(), SIGHUP);
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "PID=%d", getpid());
		char *envp[] = {pidbuf, NULL};
		syscall(SYS_execve, mt_argv0, argv, envp);
		_exit(100);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_STREQ(out, "samepid umask=017 cwd=dir usr2=ign hup=blocked,pending\n");
}

static void exec_script_argv(void)
{
	/* A #! script gets: interpreter, [optional arg], script path, the
	 * original argv[1..]. */
	char out[256];
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		dup2(p[1], 1);
		char *argv[] = {"ignored-argv0", "one", "two", NULL};
		execve(mt_data("script.sh"), argv, environ);
		_exit(100);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	int st = mt_wait(pid);
	CHECK_EXITED(st, 3);
	/* argv[0] is replaced by the script path; "one two" follow. */
	CHECK(strstr(out, "script: 2 args: one two\n") == out);
}

static const struct mt_case cases[] = {
	MT_CASE(argv_and_env_passed),
	MT_CASE(null_envp_is_empty),
	MT_CASE(null_argv_is_empty),
	MT_CASE(long_argument_strings),
	MT_CASE(many_arguments),
	MT_CASE(total_size_e2big),
	MT_CASE(bad_pointers_efault),
	MT_CASE(path_errors),
	MT_CASE(execveat_forms),
	MT_CASE(exec_keeps_identity),
	MT_CASE(exec_script_argv),
};

static int show(int argc, char **argv)
{
	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("[%s]\n", argv[i]);
	int n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	printf("env=%d\n", n);
	for (char **e = environ; e && *e; e++)
		printf("{%s}\n", *e);
	fflush(stdout);
	return 0;
}

static int identity(void)
{
	const char *p = getenv("PID");
	int same = p && atoi(p) == getpid();
	mode_t um = umask(0);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return 2;
	const char *base = strrchr(cwd, '/');
	struct sigaction sa;
	sigaction(SIGUSR2, NULL, &sa);
	sigset_t mask, pend;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	sigpending(&pend);
	printf("%s umask=%03o cwd=%s usr2=%s hup=%s,%s\n", same ? "samepid" : "otherpid", um,
	       base ? base + 1 : cwd, sa.sa_handler == SIG_IGN ? "ign" : "dfl",
	       sigismember(&mask, SIGHUP) ? "blocked" : "unblocked",
	       sigismember(&pend, SIGHUP) ? "pending" : "none");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--show") == 0)
		return show(argc, argv);
	if (argc == 0 || (argc == 1 && getenv("MT_SHOW")))
		return show(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "--count") == 0) {
		printf("%d %zu\n", argc, strlen(argv[2]));
		fflush(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--identity") == 0)
		return identity();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
