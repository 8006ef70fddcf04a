//go:build ignore

/* seccomp_filter: seccomp(2) and PR_SET_SECCOMP: strict mode, filters
 * returning each action (ERRNO with its data capped, TRAP with the SIGSYS
 * siginfo and registers, KILL_PROCESS, KILL_THREAD, TRACE and USER_NOTIF
 * without a tracer or listener, LOG), the precedence between filters,
 * inheritance across fork and execve, TSYNC (and its failure with a
 * thread's id or ESRCH), the no_new_privs or CAP_SYS_ADMIN requirement,
 * program validation (EINVAL), EFAULT, the instruction limit (ENOMEM),
 * GET_ACTION_AVAIL, GET_NOTIF_SIZES and /proc/[pid]/status. Every case
 * runs in a child, as filters can never be removed. The program re-executes
 * itself with --seccomp-exec to check what survives execve. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

static long sys_seccomp(unsigned int op, unsigned int flags, void *args)
{
	return syscall(SYS_seccomp, op, flags, args);
}

static long install(struct sock_filter *f, unsigned short n, unsigned int flags)
{
	struct sock_fprog p = {n, f};
	return sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &p);
}

/* install_on installs a filter answering ret for syscall nr (after
 * checking the architecture) and allowing everything else. */
static long install_on(int nr, unsigned int ret, unsigned int flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		RET(ret),
		RET(SECCOMP_RET_ALLOW),
	};
	return install(f, sizeof(f) / sizeof(f[0]), flags);
}

/* status_field returns the number after "NAME:\t" in the status file at
 * path, or -1. */
static long status_field(const char *path, const char *name)
{
	char buf[4096], key[64];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	snprintf(key, sizeof(key), "\n%s:\t", name);
	char *p = strstr(buf, key);
	if (p == NULL)
		return -1;
	return strtol(p + strlen(key), NULL, 10);
}

static long self_status(const char *name)
{
	return status_field("/proc/self/status", name);
}

/* run_child runs fn in a child and returns its wait status. */
static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return mt_wait(pid);
}

#define CHECK_CHILD_OK(fn)                        \
	do {                                      \
		int __st = run_child(fn);         \
		CHECK_EXITED(__st, 0);            \
	} while (0)

static void nnp(void)
{
	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
}

/* --- strict mode --- */

static int strict_in[2], strict_out[2];

static void c_strict_read_write_exit(void)
{
	char c;
	CHILD_CHECK(sys_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL) == 0);
	if (read(strict_in[0], &c, 1) != 1)
		syscall(SYS_exit, 1);
	if (write(strict_out[1], &c, 1) != 1)
		syscall(SYS_exit, 2);
	syscall(SYS_exit, 7);
}

static void strict_allows_read_write_exit(void)
{
	CHECK_SYS(pipe(strict_in));
	CHECK_SYS(pipe(strict_out));
	CHECK_EQ(write(strict_in[1], "s", 1), 1);
	int st = run_child(c_strict_read_write_exit);
	CHECK_EXITED(st, 7);
	char c = 0;
	CHECK_EQ(read(strict_out[0], &c, 1), 1);
	CHECK_EQ(c, 's');
}

static void c_strict_getpid(void)
{
	CHILD_CHECK(sys_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL) == 0);
	syscall(SYS_getpid);
	syscall(SYS_exit, 3);
}

static void c_strict_exit_group(void)
{
	CHILD_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) == 0);
	syscall(SYS_exit_group, 3);
}

static void c_strict_seccomp(void)
{
	CHILD_CHECK(sys_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL) == 0);
	install_on(SYS_getppid, SECCOMP_RET_ALLOW, 0);
	syscall(SYS_exit, 3);
}

static void strict_kills_other_syscalls(void)
{
	int st = run_child(c_strict_getpid);
	CHECK_SIGNALED(st, SIGKILL);
	st = run_child(c_strict_exit_group);
	CHECK_SIGNALED(st, SIGKILL);
	st = run_child(c_strict_seccomp);
	CHECK_SIGNALED(st, SIGKILL);
}

static void strict_argument_errors(void)
{
	int x = 0;
	CHECK_ERR(sys_seccomp(SECCOMP_SET_MODE_STRICT, 1, NULL), EINVAL);
	CHECK_ERR(sys_seccomp(SECCOMP_SET_MODE_STRICT, 0, &x), EINVAL);
	CHECK_ERR(prctl(PR_SET_SECCOMP, 42, 0, 0, 0), EINVAL);
	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
}

/* --- ERRNO, precedence, other actions --- */

static void c_errno(void)
{
	nnp();
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ, 0) == 0);
	CHILD_ERR(syscall(SYS_getppid), ENOTUNIQ);
	CHILD_CHECK(syscall(SYS_getpid) == getpid());
	CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2);
	CHILD_CHECK(self_status("Seccomp") == 2);
	CHILD_CHECK(self_status("Seccomp_filters") == 1);
	CHILD_CHECK(self_status("NoNewPrivs") == 1);
	/* Data 0 succeeds without running the syscall; data past
	 * MAX_ERRNO is capped to 4095. */
	CHILD_CHECK(install_on(SYS_getpid, SECCOMP_RET_ERRNO | 0, 0) == 0);
	CHILD_CHECK(syscall(SYS_getpid) == 0);
	CHILD_CHECK(install_on(SYS_getgid, SECCOMP_RET_ERRNO | 5000, 0) == 0);
	CHILD_ERR(syscall(SYS_getgid), 4095);
	CHILD_CHECK(self_status("Seccomp_filters") == 3);
}

static void filter_errno(void)
{
	CHECK_CHILD_OK(c_errno);
}

static void c_precedence(void)
{
	nnp();
	/* Equal actions: the newest filter's data wins. */
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | EPERM, 0) == 0);
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOENT, 0) == 0);
	CHILD_ERR(syscall(SYS_getppid), ENOENT);
	/* ERRNO beats LOG and ALLOW from newer filters. */
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_LOG, 0) == 0);
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ALLOW, 0) == 0);
	CHILD_ERR(syscall(SYS_getppid), ENOENT);
	/* ERRNO beats TRACE and USER_NOTIF whatever the order. */
	CHILD_CHECK(install_on(SYS_getuid, SECCOMP_RET_TRACE | 1, 0) == 0);
	CHILD_CHECK(install_on(SYS_getuid, SECCOMP_RET_ERRNO | ESRCH, 0) == 0);
	CHILD_CHECK(install_on(SYS_getuid, SECCOMP_RET_USER_NOTIF, 0) == 0);
	CHILD_ERR(syscall(SYS_getuid), ESRCH);
}

static void filter_precedence(void)
{
	CHECK_CHILD_OK(c_precedence);
}

static void c_other_actions(void)
{
	pid_t ppid = getppid();
	nnp();
	CHILD_CHECK(install_on(SYS_getuid, SECCOMP_RET_TRACE | 7, 0) == 0);
	CHILD_ERR(syscall(SYS_getuid), ENOSYS);
	CHILD_CHECK(install_on(SYS_getgid, SECCOMP_RET_USER_NOTIF, 0) == 0);
	CHILD_ERR(syscall(SYS_getgid), ENOSYS);
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_LOG, 0) == 0);
	CHILD_CHECK(syscall(SYS_getppid) == ppid);
}

static void trace_notif_log_actions(void)
{
	CHECK_CHILD_OK(c_other_actions);
}

/* --- TRAP --- */

static volatile int trap_signo, trap_code, trap_errno, trap_syscall, trap_count;
static volatile unsigned int trap_arch;
static volatile long trap_addr, trap_rax, trap_rip;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	(void)sig;
	trap_count++;
	trap_signo = si->si_signo;
	trap_code = si->si_code;
	trap_errno = si->si_errno;
	trap_syscall = si->si_syscall;
	trap_arch = si->si_arch;
	trap_addr = (long)si->si_call_addr;
	trap_rax = uc->uc_mcontext.gregs[REG_RAX];
	trap_rip = uc->uc_mcontext.gregs[REG_RIP];
	uc->uc_mcontext.gregs[REG_RAX] = 4321;
}

/* trap_prog traps getppid when its first argument is 0xbeef0000dead,
 * checking both halves. */
static struct sock_filter trap_prog[] = {
	LD_NR,
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 5),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xdead, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xbeef, 0, 1),
	RET(SECCOMP_RET_TRAP | 0x42),
	RET(SECCOMP_RET_ALLOW),
};

static void c_trap(void)
{
	pid_t ppid = getppid();
	struct sigaction sa = {0};
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	CHILD_CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
	nnp();
	CHILD_CHECK(install(trap_prog, sizeof(trap_prog) / sizeof(trap_prog[0]), 0) == 0);
	CHILD_CHECK(syscall(SYS_getppid, 0xdeadL) == ppid);
	CHILD_CHECK(syscall(SYS_getppid, 0xbeef00000000L) == ppid);
	CHILD_CHECK(trap_count == 0);
	long r = syscall(SYS_getppid, 0xbeef0000deadL);
	CHILD_CHECK(trap_count == 1);
	CHILD_CHECK(r == 4321);
	CHILD_CHECK(trap_signo == SIGSYS);
	CHILD_CHECK(trap_code == 1); /* SYS_SECCOMP */
	CHILD_CHECK(trap_errno == 0x42);
	CHILD_CHECK(trap_syscall == SYS_getppid);
	CHILD_CHECK(trap_arch == AUDIT_ARCH_X86_64);
	/* The handler sees the syscall's number in rax and the address
	 * after the syscall instruction, which is si_call_addr. */
	CHILD_CHECK(trap_rax == SYS_getppid);
	CHILD_CHECK(trap_addr == trap_rip);
	CHILD_CHECK(trap_addr != 0);
}

static void filter_trap_siginfo(void)
{
	CHECK_CHILD_OK(c_trap);
}

static void c_trap_blocked(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	CHILD_CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
	nnp();
	CHILD_CHECK(install(trap_prog, sizeof(trap_prog) / sizeof(trap_prog[0]), 0) == 0);
	syscall(SYS_getppid, 0xbeef0000deadL);
	_exit(3);
}

static void c_trap_ignored(void)
{
	CHILD_CHECK(signal(SIGSYS, SIG_IGN) != SIG_ERR);
	nnp();
	CHILD_CHECK(install(trap_prog, sizeof(trap_prog) / sizeof(trap_prog[0]), 0) == 0);
	syscall(SYS_getppid, 0xbeef0000deadL);
	_exit(3);
}

static void trap_blocked_or_ignored_kills(void)
{
	int st = run_child(c_trap_blocked);
	CHECK_SIGNALED(st, SIGSYS);
	st = run_child(c_trap_ignored);
	CHECK_SIGNALED(st, SIGSYS);
}

/* --- KILL_PROCESS and KILL_THREAD --- */

static int block_pipe[2];

static void *blocker(void *arg)
{
	char c;
	(void)arg;
	(void)read(block_pipe[0], &c, 1);
	return NULL;
}

static void c_kill_process(void)
{
	pthread_t th;
	CHILD_CHECK(pipe(block_pipe) == 0);
	CHILD_CHECK(pthread_create(&th, NULL, blocker, NULL) == 0);
	nnp();
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_KILL_PROCESS, 0) == 0);
	/* A newer filter's ERRNO does not save it. */
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | EPERM, 0) == 0);
	syscall(SYS_getppid);
	_exit(3);
}

static void c_kill_thread_single(void)
{
	nnp();
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_KILL_THREAD, 0) == 0);
	syscall(SYS_getppid);
	_exit(3);
}

static void filter_kill_process(void)
{
	int st = run_child(c_kill_process);
	CHECK_SIGNALED(st, SIGSYS);
	/* KILL_THREAD in the only thread ends the process the same way. */
	st = run_child(c_kill_thread_single);
	CHECK_SIGNALED(st, SIGSYS);
}

static volatile int killed_thread_returned;

static void *kill_thread_fn(void *arg)
{
	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    install_on(SYS_getppid, SECCOMP_RET_KILL_THREAD, 0) != 0)
		return (void *)1;
	syscall(SYS_getppid);
	killed_thread_returned = 1;
	return NULL;
}

static void c_kill_thread(void)
{
	pid_t ppid = getppid();
	pthread_t th;
	CHILD_CHECK(pthread_create(&th, NULL, kill_thread_fn, NULL) == 0);
	CHILD_CHECK(pthread_join(th, NULL) == 0);
	CHILD_CHECK(killed_thread_returned == 0);
	/* The filter was the thread's alone. */
	CHILD_CHECK(syscall(SYS_getppid) == ppid);
	CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0);
}

static void filter_kill_thread_leaves_others(void)
{
	CHECK_CHILD_OK(c_kill_thread);
}

/* --- inheritance --- */

static void c_fork_inherits(void)
{
	nnp();
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ, 0) == 0);
	pid_t pid = fork();
	CHILD_CHECK(pid >= 0);
	if (pid == 0) {
		CHILD_ERR(syscall(SYS_getppid), ENOTUNIQ);
		CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2);
		CHILD_CHECK(self_status("Seccomp_filters") == 1);
		CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
		/* The child's own filter stays its own. */
		CHILD_CHECK(install_on(SYS_getuid, SECCOMP_RET_ERRNO | EPERM, 0) == 0);
		CHILD_CHECK(self_status("Seccomp_filters") == 2);
		_exit(0);
	}
	int st;
	CHILD_CHECK(waitpid(pid, &st, 0) == pid);
	CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHILD_CHECK(self_status("Seccomp_filters") == 1);
	CHILD_CHECK(syscall(SYS_getuid) == getuid());
}

static void fork_inherits_filters(void)
{
	CHECK_CHILD_OK(c_fork_inherits);
}

static void c_exec_keeps(void)
{
	nnp();
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ, 0) == 0);
	char *argv[] = {(char *)mt_argv0, "--seccomp-exec", NULL};
	execv(mt_argv0, argv);
	_exit(97);
}

/* exec_check runs after execve under c_exec_keeps's filter. */
static int exec_check(void)
{
	errno = 0;
	if (syscall(SYS_getppid) != -1 || errno != ENOTUNIQ)
		return 1;
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return 2;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 3;
	if (self_status("Seccomp") != 2 || self_status("Seccomp_filters") != 1)
		return 4;
	return 0;
}

static void exec_keeps_filters(void)
{
	int st = run_child(c_exec_keeps);
	CHECK_EXITED(st, 0);
}

/* --- TSYNC --- */

static int ts_ready[2], ts_go[2];
static volatile pid_t ts_tid;
static volatile long ts_result;
static volatile int ts_errno;

static void *tsync_thread(void *arg)
{
	char c;
	ts_tid = (pid_t)syscall(SYS_gettid);
	if (arg != NULL) {
		/* A filter of the thread's own, not its process's. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    install_on(SYS_getuid, SECCOMP_RET_ERRNO | EPERM, 0) != 0)
			ts_tid = -1;
	}
	(void)write(ts_ready[1], "r", 1);
	(void)read(ts_go[0], &c, 1);
	errno = 0;
	ts_result = syscall(SYS_getppid);
	ts_errno = errno;
	return NULL;
}

static void c_tsync(void)
{
	char c, path[64];
	pthread_t th;
	CHILD_CHECK(pipe(ts_ready) == 0 && pipe(ts_go) == 0);
	CHILD_CHECK(pthread_create(&th, NULL, tsync_thread, NULL) == 0);
	CHILD_CHECK(read(ts_ready[0], &c, 1) == 1);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)ts_tid);
	CHILD_CHECK(status_field(path, "Seccomp") == 0);
	CHILD_CHECK(status_field(path, "NoNewPrivs") == 0);
	/* no_new_privs is per thread: TSYNC passes the caller's on. */
	nnp();
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ, SECCOMP_FILTER_FLAG_TSYNC) == 0);
	CHILD_CHECK(status_field(path, "Seccomp") == 2);
	CHILD_CHECK(status_field(path, "Seccomp_filters") == 1);
	CHILD_CHECK(status_field(path, "NoNewPrivs") == 1);
	CHILD_CHECK(write(ts_go[1], "g", 1) == 1);
	CHILD_CHECK(pthread_join(th, NULL) == 0);
	CHILD_CHECK(ts_result == -1 && ts_errno == ENOTUNIQ);
}

static void tsync_applies_to_all_threads(void)
{
	CHECK_CHILD_OK(c_tsync);
}

static void c_tsync_fails(void)
{
	char c;
	pthread_t th;
	pid_t ppid = getppid();
	CHILD_CHECK(pipe(ts_ready) == 0 && pipe(ts_go) == 0);
	CHILD_CHECK(pthread_create(&th, NULL, tsync_thread, (void *)1) == 0);
	CHILD_CHECK(read(ts_ready[0], &c, 1) == 1);
	CHILD_CHECK(ts_tid > 0);
	nnp();
	/* The thread's filter is not an ancestor of ours: its id. */
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ, SECCOMP_FILTER_FLAG_TSYNC) == ts_tid);
	CHILD_ERR(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ,
			     SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH),
		  ESRCH);
	/* Nothing was installed. */
	CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0);
	CHILD_CHECK(syscall(SYS_getppid) == ppid);
	CHILD_CHECK(write(ts_go[1], "g", 1) == 1);
	CHILD_CHECK(pthread_join(th, NULL) == 0);
	CHILD_CHECK(ts_result == ppid);
}

static void tsync_fails_on_foreign_filter(void)
{
	CHECK_CHILD_OK(c_tsync_fails);
}

static void c_tsync_ancestor(void)
{
	char c;
	pthread_t th;
	nnp();
	/* A filter both threads share, then one more through TSYNC. */
	CHILD_CHECK(install_on(SYS_getuid, SECCOMP_RET_ERRNO | EPERM, 0) == 0);
	CHILD_CHECK(pipe(ts_ready) == 0 && pipe(ts_go) == 0);
	CHILD_CHECK(pthread_create(&th, NULL, tsync_thread, NULL) == 0);
	CHILD_CHECK(read(ts_ready[0], &c, 1) == 1);
	CHILD_CHECK(install_on(SYS_getgid, SECCOMP_RET_ERRNO | EPERM, 0) == 0);
	CHILD_CHECK(install_on(SYS_getppid, SECCOMP_RET_ERRNO | ENOTUNIQ, SECCOMP_FILTER_FLAG_TSYNC) == 0);
	CHILD_CHECK(write(ts_go[1], "g", 1) == 1);
	CHILD_CHECK(pthread_join(th, NULL) == 0);
	CHILD_CHECK(ts_result == -1 && ts_errno == ENOTUNIQ);
	CHILD_CHECK(self_status("Seccomp_filters") == 3);
}

static void tsync_over_ancestor_filters(void)
{
	CHECK_CHILD_OK(c_tsync_ancestor);
}

/* --- privilege, validation, faults --- */

static struct sock_filter allow_prog[] = {RET(SECCOMP_RET_ALLOW)};

static void eacces_without_no_new_privs(void)
{
	AS_USER({
		struct sock_fprog p = {1, allow_prog};
		struct sock_fprog bad = {1, (struct sock_filter *)1};
		CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &p), EACCES);
		CHILD_ERR(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0), EACCES);
		/* The sock_fprog is read first, the program after the
		 * privilege check. */
		CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)1), EFAULT);
		CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &bad), EACCES);
		CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2);
	});
}

#define EXPECT_BAD(...)                                                          \
	do {                                                                     \
		struct sock_filter __f[] = {__VA_ARGS__};                        \
		CHILD_ERR(install(__f, sizeof(__f) / sizeof(__f[0]), 0), EINVAL); \
	} while (0)

static void c_einval(void)
{
	struct sock_filter big[BPF_MAXINSNS + 1];
	for (int i = 0; i <= BPF_MAXINSNS; i++)
		big[i] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
	nnp();
	CHILD_ERR(install(NULL, 0, 0), EINVAL);
	CHILD_ERR(install((struct sock_filter *)1, 0, 0), EINVAL);
	CHILD_ERR(install(big, BPF_MAXINSNS + 1, 0), EINVAL);
	/* No final return. */
	EXPECT_BAD(LD_NR);
	/* Loads seccomp does not allow: half words, indirect, outside or
	 * unaligned in seccomp_data. */
	EXPECT_BAD(BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_STMT(BPF_LD | BPF_W | BPF_IND, 0), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), RET(SECCOMP_RET_ALLOW));
	/* Jumps out of the program. */
	EXPECT_BAD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0), RET(SECCOMP_RET_ALLOW));
	/* Modulo, division by a zero constant, return of X. */
	EXPECT_BAD(BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_STMT(BPF_RET | BPF_X, 0));
	/* Scratch memory read before written, or out of range. */
	EXPECT_BAD(BPF_STMT(BPF_LD | BPF_MEM, 0), RET(SECCOMP_RET_ALLOW));
	EXPECT_BAD(BPF_STMT(BPF_ST, 16), RET(SECCOMP_RET_ALLOW));
	/* Flags are checked before the arguments are read. */
	CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0x40000, NULL), EINVAL);
	CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL),
		  EINVAL);
	CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, NULL), EINVAL);
	CHILD_ERR(sys_seccomp(99, 0, NULL), EINVAL);
	CHILD_ERR(sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 1, NULL), EINVAL);
	CHILD_ERR(sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 1, NULL), EINVAL);
	CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0);
	/* A valid program using what seccomp allows is accepted. */
	struct sock_filter ok[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_MEM, 3),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_X, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 10),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 64 << 10, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		RET(SECCOMP_RET_ALLOW),
	};
	CHILD_CHECK(install(ok, sizeof(ok) / sizeof(ok[0]), 0) == 0);
	/* Strict mode cannot follow filters. */
	CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL), EINVAL);
	CHILD_ERR(prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0), EINVAL);
	CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2);
}

static void einval_on_bad_programs(void)
{
	CHECK_CHILD_OK(c_einval);
}

static void c_efault(void)
{
	nnp();
	struct sock_fprog bad = {1, (struct sock_filter *)1};
	CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)1), EFAULT);
	CHILD_ERR(sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &bad), EFAULT);
	CHILD_ERR(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (void *)1, 0, 0), EFAULT);
	CHILD_ERR(sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, NULL), EFAULT);
	CHILD_ERR(sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, (void *)1), EFAULT);
	CHILD_CHECK(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0);
}

static void efault_on_bad_pointers(void)
{
	CHECK_CHILD_OK(c_efault);
}

static void c_enomem(void)
{
	static struct sock_filter f[BPF_MAXINSNS];
	f[0] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, BPF_MAXINSNS - 2, 0, 0);
	for (int i = 1; i < BPF_MAXINSNS - 1; i++)
		f[i] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
	f[BPF_MAXINSNS - 1] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
	nnp();
	/* The man page's limit is 32768 instructions, counting 4 more for
	 * each older filter, so at most seven full filters fit; Linux counts
	 * its internal translation of the programs, which is longer, so
	 * fewer fit there. Either way the limit comes, with ENOMEM. */
	int n = 0;
	long r;
	while ((r = install(f, BPF_MAXINSNS, 0)) == 0 && n < 9)
		n++;
	CHILD_CHECK(r == -1 && errno == ENOMEM);
	CHILD_CHECK(n >= 1 && n <= 7);
	CHILD_CHECK(self_status("Seccomp_filters") == n);
	/* A small filter may still fit; it never lifts the limit. */
	struct sock_filter one[] = {RET(SECCOMP_RET_ALLOW)};
	if (install(one, 1, 0) == 0)
		n++;
	CHILD_ERR(install(f, BPF_MAXINSNS, 0), ENOMEM);
	CHILD_CHECK(self_status("Seccomp_filters") == n);
}

static void enomem_past_instruction_limit(void)
{
	CHECK_CHILD_OK(c_enomem);
}

static void get_action_avail(void)
{
	static const unsigned int avail[] = {
		SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP,
		SECCOMP_RET_ERRNO, SECCOMP_RET_TRACE, SECCOMP_RET_LOG, SECCOMP_RET_ALLOW,
	};
	for (size_t i = 0; i < sizeof(avail) / sizeof(avail[0]); i++) {
		unsigned int a = avail[i];
		CHECK_EQ(sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &a), 0);
	}
	/* SECCOMP_RET_USER_NOTIF is left out: Moat has no listeners. */
	unsigned int bad = 0x00010000;
	CHECK_ERR(sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &bad), EOPNOTSUPP);
	bad = SECCOMP_RET_ERRNO | 1;
	CHECK_ERR(sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &bad), EOPNOTSUPP);
}

static void get_notif_sizes(void)
{
	struct seccomp_notif_sizes s;
	memset(&s, 0xff, sizeof(s));
	CHECK_EQ(sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &s), 0);
	CHECK_EQ(s.seccomp_data, sizeof(struct seccomp_data));
	CHECK_EQ(s.seccomp_notif, sizeof(struct seccomp_notif));
	CHECK_EQ(s.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));
}

static void c_args_and_ip(void)
{
	/* A filter sees all six arguments and the instruction pointer. */
	struct sock_filter f[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[5]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x12345678, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		RET(SECCOMP_RET_ERRNO | EDOM),
		RET(SECCOMP_RET_ALLOW),
	};
	pid_t ppid = getppid();
	nnp();
	CHILD_CHECK(install(f, sizeof(f) / sizeof(f[0]), 0) == 0);
	CHILD_ERR(syscall(SYS_getppid, 0, 0, 0, 0, 0, 0x1234567800000000L), EDOM);
	CHILD_CHECK(syscall(SYS_getppid, 0, 0, 0, 0, 0, 0x12345678L) == ppid);
	CHILD_CHECK(syscall(SYS_getppid, 0x1234567800000000L, 0, 0, 0, 0, 0) == ppid);
}

static void filter_sees_args_and_ip(void)
{
	CHECK_CHILD_OK(c_args_and_ip);
}

static const struct mt_case cases[] = {
	MT_CASE(strict_allows_read_write_exit),
	MT_CASE(strict_kills_other_syscalls),
	MT_CASE(strict_argument_errors),
	MT_CASE(filter_errno),
	MT_CASE(filter_precedence),
	MT_CASE(trace_notif_log_actions),
	MT_CASE(filter_trap_siginfo),
	MT_CASE(trap_blocked_or_ignored_kills),
	MT_CASE(filter_kill_process),
	MT_CASE(filter_kill_thread_leaves_others),
	MT_CASE(fork_inherits_filters),
	MT_CASE(exec_keeps_filters),
	MT_CASE(tsync_applies_to_all_threads),
	MT_CASE(tsync_fails_on_foreign_filter),
	MT_CASE(tsync_over_ancestor_filters),
	MT_CASE(eacces_without_no_new_privs),
	MT_CASE(einval_on_bad_programs),
	MT_CASE(efault_on_bad_pointers),
	MT_CASE(enomem_past_instruction_limit),
	MT_CASE(get_action_avail),
	MT_CASE(get_notif_sizes),
	MT_CASE(filter_sees_args_and_ip),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--seccomp-exec") == 0)
		return exec_check();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
