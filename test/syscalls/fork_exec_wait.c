//go:build ignore

/* fork_exec_wait: fork, execve of this program as a child, exit statuses,
 * wait4/waitpid/waitid with WNOHANG, __WALL, WUNTRACED/WCONTINUED, death
 * by signal, SIGCHLD, vfork and posix_spawn. The program re-executes
 * itself: `fork_exec_wait child MODE ARGS...` runs a child mode. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *self_exe = "/proc/self/exe";

/* child_main runs a child mode; it never returns. */
static void child_main(int argc, char **argv)
{
	const char *mode = argv[2];
	if (strcmp(mode, "exit") == 0 && argc > 3)
		_exit(atoi(argv[3]));
	if (strcmp(mode, "argv") == 0) {
		/* Expect argv: X child argv one "two words" "" and env MOAT_X=42 */
		if (argc != 6 || strcmp(argv[3], "one") || strcmp(argv[4], "two words") ||
		    strcmp(argv[5], ""))
			_exit(10);
		const char *v = getenv("MOAT_X");
		if (!v || strcmp(v, "42"))
			_exit(11);
		if (getenv("MOAT_TEST_DATA") != NULL)
			_exit(12); /* the env was replaced, not merged */
		_exit(0);
	}
	if (strcmp(mode, "chain") == 0 && argc > 3) {
		/* Fork and exec a chain of depth N; exit with N + child's. */
		int n = atoi(argv[3]);
		if (n == 0)
			_exit(1);
		char buf[16];
		snprintf(buf, sizeof(buf), "%d", n - 1);
		pid_t pid = fork();
		if (pid == 0) {
			char *args[] = { argv[0], "child", "chain", buf, NULL };
			execv(self_exe, args);
			_exit(100);
		}
		int st = mt_wait(pid);
		if (!WIFEXITED(st))
			_exit(101);
		_exit(WEXITSTATUS(st) + n);
	}
	if (strcmp(mode, "pause") == 0) {
		for (;;)
			pause();
	}
	if (strcmp(mode, "ppid") == 0 && argc > 3) {
		_exit(getppid() == atoi(argv[3]) ? 0 : 1);
	}
	_exit(127);
}

static void fork_exit_status(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(42);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXITED(st, 42);
}

static void fork_exit_codes(void)
{
	static const int codes[] = { 0, 1, 127, 255, 256, 300 };
	for (size_t i = 0; i < MT_NCASES(codes); i++) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0)
			_exit(codes[i]);
		CHECK_EXITED(mt_wait(pid), codes[i] & 0xff);
	}
}

static void fork_child_sees_parent(void)
{
	pid_t parent = getpid();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(getppid() == parent);
		CHILD_CHECK(getpid() != parent);
		_exit(0);
	}
	CHECK_GT(pid, 1);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void fork_killed_by_sigkill(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		raise(SIGKILL);
		_exit(1);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
	CHECK(!WCOREDUMP(st));
}

static void fork_killed_by_parent_sigterm(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(kill(pid, SIGTERM));
	CHECK_SIGNALED(mt_wait(pid), SIGTERM);
}

static void fork_abort_no_core(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		abort();
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGABRT);
	CHECK(!WCOREDUMP(st));
}

static void exec_self_exit_status(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "fork_exec_wait", "child", "exit", "7", NULL };
		execve(self_exe, args, environ);
		_exit(99);
	}
	CHECK_EXITED(mt_wait(pid), 7);
}

static void exec_argv0_path(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { (char *)mt_argv0, "child", "exit", "9", NULL };
		execve(mt_argv0, args, environ);
		_exit(99);
	}
	CHECK_EXITED(mt_wait(pid), 9);
}

static void exec_argv_env_passing(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "x", "child", "argv", "one", "two words", "", NULL };
		char *env[] = { "MOAT_X=42", "OTHER=1", NULL };
		execve(self_exe, args, env);
		_exit(99);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void exec_chain_depth3(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "x", "child", "chain", "3", NULL };
		execve(self_exe, args, environ);
		_exit(99);
	}
	/* depth 3: 3 + 2 + 1 + 1 (leaf) */
	CHECK_EXITED(mt_wait(pid), 7);
}

static void wait4_rusage(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		volatile unsigned long x = 0;
		for (unsigned long i = 0; i < 20000000UL; i++)
			x += i;
		_exit(3);
	}
	int st;
	struct rusage ru;
	memset(&ru, 0xff, sizeof(ru));
	CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
	CHECK_EXITED(st, 3);
	CHECK_GE(ru.ru_utime.tv_sec, 0);
	CHECK_GE(ru.ru_utime.tv_usec, 0);
	CHECK_LT(ru.ru_utime.tv_usec, 1000000);
	CHECK_GT(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec +
			 ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec,
		 0);
	struct rusage kids;
	CHECK_SYS(getrusage(RUSAGE_CHILDREN, &kids));
	CHECK_GE(kids.ru_utime.tv_sec * 1000000L + kids.ru_utime.tv_usec,
		 ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec);
}

static void waitpid_wnohang_running(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	int st = 0x5a5a;
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
}

static void waitpid_echild(void)
{
	int st;
	CHECK_ERR(waitpid(-1, &st, 0), ECHILD);
	CHECK_ERR(waitpid(-1, &st, WNOHANG), ECHILD);
	CHECK_ERR(waitpid(424242, &st, 0), ECHILD);
	CHECK_ERR(wait(&st), ECHILD);
}

static void waitpid_bad_options(void)
{
	int st;
	CHECK_ERR(waitpid(-1, &st, 0x10000 /* unknown */), EINVAL);
}

static void waitpid_efault_status(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(0);
	CHECK_ERR(syscall(SYS_wait4, pid, (int *)8, 0, NULL), EFAULT);
	/* The failed copy-out still reaped it? Linux reaps first: ECHILD. */
	int st;
	errno = 0;
	pid_t r = waitpid(pid, &st, WNOHANG);
	CHECK(r == -1 || r == pid);
}

static void waitid_exited(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(3);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED));
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 3);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_uid, getuid());
}

static void waitid_killed(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(kill(pid, SIGKILL));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_ALL, 0, &si, WEXITED));
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGKILL);
}

static void waitid_wnohang_none_ready(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	siginfo_t si;
	memset(&si, 0x5a, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, 0);
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
}

static void waitid_einval(void)
{
	siginfo_t si;
	CHECK_ERR(waitid(P_ALL, 0, &si, 0), EINVAL);
	CHECK_ERR(waitid((idtype_t)42, 0, &si, WEXITED), EINVAL);
}

static void waitid_echild(void)
{
	siginfo_t si;
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED), ECHILD);
	CHECK_ERR(waitid(P_PID, 424242, &si, WEXITED), ECHILD);
}

static void waitid_wnowait_keeps_zombie(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(5);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_EQ(si.si_status, 5);
	/* Still a zombie: kill(pid, 0) works, and it can be reaped. */
	CHECK_SYS(kill(pid, 0));
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED));
	CHECK_EQ(si.si_status, 5);
	CHECK_ERR(kill(pid, 0), ESRCH);
}

static void stop_continue_waitpid(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	int st;
	CHECK_SYS(kill(pid, SIGSTOP));
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_EQ(WSTOPSIG(st), SIGSTOP);
	/* Reported once only. */
	CHECK_EQ(waitpid(pid, &st, WUNTRACED | WNOHANG), 0);
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_EQ(waitpid(pid, &st, WCONTINUED), pid);
	CHECK(WIFCONTINUED(st));
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
}

static void stop_continue_waitid(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	siginfo_t si;
	CHECK_SYS(kill(pid, SIGSTOP));
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WSTOPPED));
	CHECK_EQ(si.si_code, CLD_STOPPED);
	CHECK_EQ(si.si_status, SIGSTOP);
	CHECK_SYS(kill(pid, SIGCONT));
	memset(&si, 0, sizeof(si));
	CHECK_SYS(waitid(P_PID, pid, &si, WCONTINUED));
	CHECK_EQ(si.si_code, CLD_CONTINUED);
	CHECK_EQ(si.si_status, SIGCONT);
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
}

static void stopped_child_killed(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	int st;
	CHECK_SYS(kill(pid, SIGSTOP));
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	/* SIGKILL ends a stopped process. */
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_SIGNALED(mt_wait(pid), SIGKILL);
}

static void clone_child_needs_wall(void)
{
	/* A child whose exit signal is 0 is a "clone" child. */
	pid_t pid = (pid_t)CHECK_SYS(syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL));
	if (pid == 0)
		_exit(5);
	int st;
	usleep(20000);
	CHECK_ERR(waitpid(pid, &st, WNOHANG), ECHILD);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK_EXITED(st, 5);
}

static void clone_child_wclone(void)
{
	pid_t pid = (pid_t)CHECK_SYS(syscall(SYS_clone, (unsigned long)SIGUSR1, 0UL, 0UL, 0UL, 0UL));
	if (pid == 0)
		_exit(6);
	int st;
	CHECK_EQ(waitpid(pid, &st, __WCLONE), pid);
	CHECK_EXITED(st, 6);
}

static volatile sig_atomic_t chld_code, chld_status, chld_pid;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_pid = si->si_pid;
}

static void sigchld_siginfo(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGCHLD, &sa, NULL));
	chld_code = chld_status = chld_pid = 0;
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &block, &old));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(17);
	sigsuspend(&old);
	CHECK_EQ(chld_pid, pid);
	CHECK_EQ(chld_code, CLD_EXITED);
	CHECK_EQ(chld_status, 17);
	CHECK_EXITED(mt_wait(pid), 17);
}

static void sigchld_ignored_autoreap(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	CHECK_SYS(sigaction(SIGCHLD, &sa, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(1);
	/* wait blocks until the child is gone, then reports ECHILD. */
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), ECHILD);
}

static void sa_nocldwait_autoreap(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_NOCLDWAIT;
	CHECK_SYS(sigaction(SIGCHLD, &sa, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(1);
	int st;
	CHECK_ERR(waitpid(pid, &st, 0), ECHILD);
}

static void *exit_from_thread(void *arg)
{
	(void)arg;
	exit(9);
	return NULL;
}

static void exit_from_thread_ends_process(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, exit_from_thread, NULL);
		for (;;)
			pause();
	}
	CHECK_EXITED(mt_wait(pid), 9);
}

static void *main_exits_thread_waits(void *arg)
{
	(void)arg;
	usleep(20000);
	_exit(4);
	return NULL;
}

static void pthread_exit_main_thread(void)
{
	/* When the main thread calls pthread_exit the process lives on until
	 * the last thread ends; its status is the last thread's. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, main_exits_thread_waits, NULL);
		pthread_exit(NULL);
	}
	CHECK_EXITED(mt_wait(pid), 4);
}

static void waitpid_process_group(void)
{
	pid_t a = CHECK_SYS(fork());
	if (a == 0) {
		setpgid(0, 0);
		usleep(10000);
		_exit(21);
	}
	setpgid(a, a); /* either side may win the race; both set the same */
	pid_t b = CHECK_SYS(fork());
	if (b == 0)
		_exit(22);
	int st;
	/* -a: only the child in process group a. */
	CHECK_EQ(waitpid(-a, &st, 0), a);
	CHECK_EXITED(st, 21);
	/* 0: our own process group: b. */
	CHECK_EQ(waitpid(0, &st, 0), b);
	CHECK_EXITED(st, 22);
}

static void orphan_reparented_to_init(void)
{
	if (getpid() != 1)
		SKIP("not running as PID 1 (pid %d)", (int)getpid());
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t mid = CHECK_SYS(fork());
	if (mid == 0) {
		pid_t gc = fork();
		if (gc == 0) {
			char c;
			close(p[1]);
			/* Wait for the middle process to be gone. */
			(void)read(p[0], &c, 1);
			usleep(10000);
			_exit(getppid() == 1 ? 33 : 34);
		}
		_exit(gc > 0 ? 0 : 1);
	}
	CHECK_EXITED(mt_wait(mid), 0);
	close(p[1]);
	close(p[0]);
	/* The grandchild is ours now. */
	int st;
	pid_t r = CHECK_SYS(waitpid(-1, &st, 0));
	CHECK_GT(r, mid);
	CHECK_EXITED(st, 33);
}

static void vfork_exec(void)
{
	pid_t pid = vfork();
	if (pid == 0) {
		char *args[] = { "x", "child", "exit", "3", NULL };
		execve(self_exe, args, environ);
		_exit(99);
	}
	CHECK_GT(pid, 0);
	CHECK_EXITED(mt_wait(pid), 3);
}

static void vfork_shares_memory(void)
{
	volatile int shared = 0;
	pid_t pid = vfork();
	if (pid == 0) {
		shared = 77;
		_exit(0);
	}
	CHECK_GT(pid, 0);
	CHECK_EQ(shared, 77);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void posix_spawn_self(void)
{
	pid_t pid;
	char *args[] = { "x", "child", "exit", "11", NULL };
	CHECK_RET0(posix_spawn(&pid, self_exe, NULL, NULL, args, environ));
	CHECK_EXITED(mt_wait(pid), 11);
}

static void posix_spawn_enoent(void)
{
	pid_t pid;
	char *args[] = { "x", NULL };
	CHECK_RET(posix_spawn(&pid, "/nonexistent/moat", NULL, NULL, args, environ), ENOENT);
}

static void zombie_until_reaped(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(0);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	/* Wait without reaping so it is surely a zombie. */
	CHECK_SYS(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_SYS(kill(pid, 0));
	CHECK_SYS(kill(pid, SIGKILL)); /* no effect on a zombie, no error */
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_ERR(kill(pid, 0), ESRCH);
}

static void kill_esrch(void)
{
	CHECK_ERR(kill(424242, 0), ESRCH);
	CHECK_ERR(kill(-424242, 0), ESRCH);
	CHECK_ERR(kill(getpid(), 12345), EINVAL);
}

static void many_children(void)
{
	int seen[20] = { 0 };
	pid_t pids[20];
	for (int i = 0; i < 20; i++) {
		pids[i] = CHECK_SYS(fork());
		if (pids[i] == 0)
			_exit(100 + i);
	}
	for (int i = 0; i < 20; i++) {
		int st;
		pid_t r = CHECK_SYS(waitpid(-1, &st, 0));
		CHECK(WIFEXITED(st));
		int code = WEXITSTATUS(st) - 100;
		CHECK(code >= 0 && code < 20);
		CHECK_EQ(pids[code], r);
		seen[code]++;
	}
	for (int i = 0; i < 20; i++)
		CHECK_EQ(seen[i], 1);
	int st;
	CHECK_ERR(waitpid(-1, &st, WNOHANG), ECHILD);
}

static void exec_child_ppid(void)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "x", "child", "ppid", buf, NULL };
		execve(self_exe, args, environ);
		_exit(99);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void exec_failure_keeps_process(void)
{
	char *args[] = { "x", NULL };
	CHECK_ERR(execve("/nonexistent/moat", args, environ), ENOENT);
	CHECK_ERR(execve("/etc", args, environ), EACCES);
	CHECK_ERR(syscall(SYS_execve, (char *)8, args, environ), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(fork_exit_status),
	MT_CASE(fork_exit_codes),
	MT_CASE(fork_child_sees_parent),
	MT_CASE(fork_killed_by_sigkill),
	MT_CASE(fork_killed_by_parent_sigterm),
	MT_CASE(fork_abort_no_core),
	MT_CASE(exec_self_exit_status),
	MT_CASE(exec_argv0_path),
	MT_CASE(exec_argv_env_passing),
	MT_CASE(exec_chain_depth3),
	MT_CASE(exec_child_ppid),
	MT_CASE(exec_failure_keeps_process),
	MT_CASE(wait4_rusage),
	MT_CASE(waitpid_wnohang_running),
	MT_CASE(waitpid_echild),
	MT_CASE(waitpid_bad_options),
	MT_CASE(waitpid_efault_status),
	MT_CASE(waitid_exited),
	MT_CASE(waitid_killed),
	MT_CASE(waitid_wnohang_none_ready),
	MT_CASE(waitid_einval),
	MT_CASE(waitid_echild),
	MT_CASE(waitid_wnowait_keeps_zombie),
	MT_CASE(stop_continue_waitpid),
	MT_CASE(stop_continue_waitid),
	MT_CASE(stopped_child_killed),
	MT_CASE(clone_child_needs_wall),
	MT_CASE(clone_child_wclone),
	MT_CASE(sigchld_siginfo),
	MT_CASE(sigchld_ignored_autoreap),
	MT_CASE(sa_nocldwait_autoreap),
	MT_CASE(exit_from_thread_ends_process),
	MT_CASE(pthread_exit_main_thread),
	MT_CASE(waitpid_process_group),
	MT_CASE(orphan_reparented_to_init),
	MT_CASE(vfork_exec),
	MT_CASE(vfork_shares_memory),
	MT_CASE(posix_spawn_self),
	MT_CASE(posix_spawn_enoent),
	MT_CASE(zombie_until_reaped),
	MT_CASE(kill_esrch),
	MT_CASE(many_children),
};

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "child") == 0)
		child_main(argc, argv);
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
