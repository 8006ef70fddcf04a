//go:build ignore

/* exec: execve of #! scripts (shipped in test/syscalls/data, since the
 * root is read-only), dynamic host programs, execveat (AT_EMPTY_PATH,
 * dirfd, AT_SYMLINK_NOFOLLOW), fexecve, exec killing the other threads
 * and keeping the PID, argv/env passing, and the errors (ENOENT, EACCES,
 * ENOEXEC, E2BIG, ELOOP, ENOTDIR). */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* run_capture forks, lets child() exec with stdout on a pipe, collects
 * the output into out (NUL-terminated) and returns the wait status. */
static int run_capture(const char *path, char *const argv[], char *const envp[], char *out, size_t outsz)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execve(path, argv, envp);
		_exit(100 + (errno & 0x7f));
	}
	close(p[1]);
	size_t got = 0;
	for (;;) {
		ssize_t n = read(p[0], out + got, outsz - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = 0;
	close(p[0]);
	return mt_wait(pid);
}

static void exec_shell_script(void)
{
	char out[256];
	const char *script = mt_data("script.sh");
	char *argv[] = { "script.sh", "a", "b c", NULL };
	char *envp[] = { "MOAT_X=seen", "PATH=/usr/bin:/bin", NULL };
	int st = run_capture(script, argv, envp, out, sizeof(out));
	CHECK_EXITED(st, 3);
	CHECK_STREQ(out, "script: 2 args: a b c\nMOAT_X=seen\n");
}

static void exec_script_interpreter_arg(void)
{
	char out[4096], want[4200];
	const char *script = mt_data("script_opt.sh");
	char *argv[] = { "ignored-argv0", NULL };
	char *envp[] = { NULL };
	int st = run_capture(script, argv, envp, out, sizeof(out));
	CHECK_EXITED(st, 4);
	/* The interpreter gets the script path as $0, not argv[0]. */
	snprintf(want, sizeof(want), "opt-script %s\n", script);
	CHECK_STREQ(out, want);
}

static void exec_dynamic_programs(void)
{
	char out[256];
	char *t[] = { "true", NULL };
	CHECK_EXITED(run_capture("/bin/true", t, environ, out, sizeof(out)), 0);
	char *f[] = { "false", NULL };
	CHECK_EXITED(run_capture("/bin/false", f, environ, out, sizeof(out)), 1);
	char *e[] = { "echo", "-n", "hi", "there", NULL };
	CHECK_EXITED(run_capture("/bin/echo", e, environ, out, sizeof(out)), 0);
	CHECK_STREQ(out, "hi there");
}

static void exec_shell_pipeline(void)
{
	char out[256];
	char *argv[] = { "sh", "-c", "echo one; echo two | tr a-z A-Z; exit 5", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	CHECK_EXITED(run_capture("/bin/sh", argv, envp, out, sizeof(out)), 5);
	CHECK_STREQ(out, "one\nTWO\n");
}

static void exec_errors(void)
{
	char *argv[] = { "x", NULL };
	CHECK_ERR(execve("/nonexistent/prog", argv, environ), ENOENT);
	CHECK_ERR(execve(mt_data("not_exec.txt"), argv, environ), EACCES);
	CHECK_ERR(execve(mt_data("garbage.bin"), argv, environ), ENOEXEC);
	CHECK_ERR(execve(mt_data("bad_interp.sh"), argv, environ), ENOENT);
	CHECK_ERR(execve("/etc", argv, environ), EACCES);
	CHECK_ERR(execve("/etc/passwd/x", argv, environ), ENOTDIR);
	CHECK_ERR(execve(mt_data("loop_a"), argv, environ), ELOOP);
	CHECK_ERR(execve("/dev/null", argv, environ), EACCES);
	CHECK_ERR(syscall(SYS_execve, "/bin/true", (void *)8, environ), EFAULT);
}

static void exec_e2big(void)
{
	/* One string longer than MAX_ARG_STRLEN (32 pages). */
	size_t n = 33 * 4096;
	char *big = malloc(n + 1);
	CHECK(big != NULL);
	memset(big, 'x', n);
	big[n] = 0;
	char *argv[] = { "true", big, NULL };
	CHECK_ERR(execve("/bin/true", argv, environ), E2BIG);
	char *envp[] = { big, NULL };
	char *targv[] = { "true", NULL };
	CHECK_ERR(execve("/bin/true", targv, envp), E2BIG);
	free(big);
}

static void execveat_empty_path(void)
{
	int fd = CHECK_SYS(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *argv[] = { "exec", "child-exit", "12", NULL };
		syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 12);
	char *argv[] = { "x", NULL };
	CHECK_ERR(syscall(SYS_execveat, fd, "", argv, environ, 0), ENOENT);
	/* Unknown flags: EINVAL (in a child, in case the exec happened). */
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *fargv[] = { "false", NULL };
		syscall(SYS_execveat, AT_FDCWD, "/bin/false", fargv, environ, 0x12345);
		_exit(errno == EINVAL ? 0 : 2);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void execveat_dirfd_relative(void)
{
	int dfd = CHECK_SYS(open("/usr/bin", O_RDONLY | O_DIRECTORY));
	char out[64];
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		dup2(p[1], 1);
		char *argv[] = { "echo", "via-dirfd", NULL };
		syscall(SYS_execveat, dfd, "echo", argv, environ, 0);
		_exit(98);
	}
	close(p[1]);
	ssize_t n = CHECK_SYS(read(p[0], out, sizeof(out) - 1));
	out[n] = 0;
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_STREQ(out, "via-dirfd\n");
	char *argv[] = { "x", NULL };
	CHECK_ERR(syscall(SYS_execveat, dfd, "no-such-prog", argv, environ, 0), ENOENT);
	int ffd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(syscall(SYS_execveat, ffd, "x", argv, environ, 0), ENOTDIR);
	int root = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(syscall(SYS_execveat, root, "bin", argv, environ, AT_SYMLINK_NOFOLLOW), ELOOP);
}

static void fexecve_self(void)
{
	int fd = CHECK_SYS(open("/proc/self/exe", O_RDONLY));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *argv[] = { "exec", "child-exit", "21", NULL };
		fexecve(fd, argv, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 21);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void exec_kills_other_threads(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (int i = 0; i < 4; i++) {
			pthread_t th;
			pthread_create(&th, NULL, sleeper, NULL);
		}
		char me[16];
		snprintf(me, sizeof(me), "%d", (int)getpid());
		char *argv[] = { "exec", "child-check-threads", me, NULL };
		execve("/proc/self/exe", argv, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static char exec_from_thread_pid[16];

static void *exec_thread(void *arg)
{
	(void)arg;
	char *argv[] = { "exec", "child-check-threads", exec_from_thread_pid, NULL };
	execve("/proc/self/exe", argv, environ);
	_exit(98);
	return NULL;
}

static void exec_from_non_leader_thread(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		snprintf(exec_from_thread_pid, sizeof(exec_from_thread_pid), "%d", (int)getpid());
		pthread_t th;
		pthread_create(&th, NULL, sleeper, NULL);
		pthread_create(&th, NULL, exec_thread, NULL);
		for (;;)
			pause();
	}
	/* The exec'd image keeps the thread group's PID. */
	CHECK_EXITED(mt_wait(pid), 0);
}

static int child_check_threads(const char *want_pid)
{
	if (getpid() != atoi(want_pid))
		return 1;
	if (syscall(SYS_gettid) != getpid())
		return 2;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 3;
	char line[256];
	int threads = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &threads) == 1)
			break;
	fclose(f);
	return threads == 1 ? 0 : 4;
}

static void exec_sets_comm(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *argv[] = { "whatever", "child-comm", NULL };
		execve("/proc/self/exe", argv, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static int child_comm(void)
{
	char buf[64];
	int fd = open("/proc/self/comm", O_RDONLY);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 2;
	buf[n] = 0;
	/* comm is the file's name ("exe" here, via /proc/self/exe). */
	return strcmp(buf, "exe\n") == 0 ? 0 : 3;
}

static void exec_empty_argv(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *argv[] = { NULL };
		char *envp[] = { "MOAT_EMPTY_ARGV=1", NULL };
		execve("/proc/self/exe", argv, envp);
		_exit(98);
	}
	/* Linux >= 5.18 turns an empty argv into { "" }. */
	CHECK_EXITED(mt_wait(pid), 0);
}

static void exec_relative_after_chdir(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		if (chdir("/usr/bin"))
			_exit(97);
		char *argv[] = { "true", NULL };
		execve("./true", argv, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void exec_keeps_fds_and_cwd(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_EQ(fd, 3);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		if (chdir("/etc"))
			_exit(97);
		char *argv[] = { "exec", "child-fd3-cwd", NULL };
		execve("/proc/self/exe", argv, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static int child_fd3_cwd(void)
{
	char buf[64];
	if (fcntl(3, F_GETFD) != 0)
		return 1;
	if (!getcwd(buf, sizeof(buf)) || strcmp(buf, "/etc"))
		return 2;
	return 0;
}

static const struct mt_case cases[] = {
	MT_CASE(exec_shell_script),
	MT_CASE(exec_script_interpreter_arg),
	MT_CASE(exec_dynamic_programs),
	MT_CASE(exec_shell_pipeline),
	MT_CASE(exec_errors),
	MT_CASE(exec_e2big),
	MT_CASE(execveat_empty_path),
	MT_CASE(execveat_dirfd_relative),
	MT_CASE(fexecve_self),
	MT_CASE(exec_kills_other_threads),
	MT_CASE(exec_from_non_leader_thread),
	MT_CASE(exec_sets_comm),
	MT_CASE(exec_empty_argv),
	MT_CASE(exec_relative_after_chdir),
	MT_CASE(exec_keeps_fds_and_cwd),
};

int main(int argc, char **argv)
{
	if (argc == 0 || (getenv("MOAT_EMPTY_ARGV") && argc == 1 && argv[0][0] == 0))
		return argc == 1 ? 0 : 1;
	if (argc == 3 && strcmp(argv[1], "child-exit") == 0)
		return atoi(argv[2]);
	if (argc == 3 && strcmp(argv[1], "child-check-threads") == 0)
		return child_check_threads(argv[2]);
	if (argc == 2 && strcmp(argv[1], "child-comm") == 0)
		return child_comm();
	if (argc == 2 && strcmp(argv[1], "child-fd3-cwd") == 0)
		return child_fd3_cwd();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
