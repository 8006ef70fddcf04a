//go:build ignore

/* clone_flags: clone(2) and clone3(2) flag semantics and their documented
 * errors: sharing (CLONE_VM, CLONE_FILES, CLONE_FS, CLONE_SIGHAND), thread
 * ids written by CLONE_PARENT_SETTID/CHILD_SETTID/CHILD_CLEARTID, the exit
 * signal, CLONE_PARENT, CLONE_VFORK, and EINVAL for bad combinations. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static char *new_stack(void)
{
	void *p = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : (char *)p + STACK_SIZE;
}

static void free_stack(char *top)
{
	munmap(top - STACK_SIZE, STACK_SIZE);
}

static volatile int shared_word;

static int set_word(void *arg)
{
	shared_word = (int)(long)arg;
	return 7;
}

static void clone_vm_shares_memory(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	shared_word = 0;
	pid_t pid = CHECK_SYS(clone(set_word, stk, CLONE_VM | SIGCHLD, (void *)42L));
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 7);
	CHECK_EQ(shared_word, 42);
}

static void clone_without_vm_copies_memory(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	shared_word = 0;
	pid_t pid = CHECK_SYS(clone(set_word, stk, SIGCHLD, (void *)42L));
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 7);
	CHECK_EQ(shared_word, 0);
}

static int close_fd(void *arg)
{
	return close((int)(long)arg) == 0 ? 0 : 1;
}

static void clone_files_shares_table(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t pid = CHECK_SYS(clone(close_fd, stk, CLONE_VM | CLONE_FILES | SIGCHLD, (void *)(long)p[0]));
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
	CHECK_ERR(fcntl(p[0], F_GETFD), EBADF);
}

static void clone_without_files_copies_table(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t pid = CHECK_SYS(clone(close_fd, stk, CLONE_VM | SIGCHLD, (void *)(long)p[0]));
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
	CHECK_SYS(fcntl(p[0], F_GETFD));
}

static int do_chdir(void *arg)
{
	(void)arg;
	return chdir("/proc") == 0 ? 0 : 1;
}

static void clone_fs_shares_cwd(void)
{
	char buf[256];
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t pid = CHECK_SYS(clone(do_chdir, stk, CLONE_VM | CLONE_FS | SIGCHLD, NULL));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/proc");
	CHECK_SYS(chdir("/"));
	pid = CHECK_SYS(clone(do_chdir, stk, CLONE_VM | SIGCHLD, NULL));
	st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
	CHECK(getcwd(buf, sizeof(buf)) != NULL);
	CHECK_STREQ(buf, "/");
}

static int do_umask(void *arg)
{
	(void)arg;
	umask(0077);
	return 0;
}

static void clone_fs_shares_umask(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	umask(022);
	pid_t pid = CHECK_SYS(clone(do_umask, stk, CLONE_VM | CLONE_FS | SIGCHLD, NULL));
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
	CHECK_EQ(umask(022), 0077);
}

static void handler_noop(int sig)
{
	(void)sig;
}

static int set_handler(void *arg)
{
	(void)arg;
	signal(SIGUSR1, handler_noop);
	return 0;
}

static void clone_sighand_shares_handlers(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	signal(SIGUSR1, SIG_DFL);
	pid_t pid = CHECK_SYS(clone(set_handler, stk, CLONE_VM | CLONE_SIGHAND | SIGCHLD, NULL));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	struct sigaction sa;
	CHECK_SYS(sigaction(SIGUSR1, NULL, &sa));
	CHECK(sa.sa_handler == handler_noop);
	signal(SIGUSR1, SIG_DFL);
	pid = CHECK_SYS(clone(set_handler, stk, CLONE_VM | SIGCHLD, NULL));
	st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
	CHECK_SYS(sigaction(SIGUSR1, NULL, &sa));
	CHECK(sa.sa_handler == SIG_DFL);
}

static void clone_invalid_combinations(void)
{
	/* CLONE_SIGHAND needs CLONE_VM; CLONE_THREAD needs CLONE_SIGHAND. */
	CHECK_ERR(syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_THREAD | CLONE_VM, 0, 0, 0, 0), EINVAL);
	/* CLONE_NEWNS with CLONE_FS is refused. */
	CHECK_ERR(syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EINVAL);
	/* CLONE_NEWPID or CLONE_NEWUSER with CLONE_THREAD. */
	CHECK_ERR(syscall(SYS_clone, CLONE_NEWPID | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EINVAL);
}

static void clone_exit_signal_unchecked(void)
{
	/* Legacy clone does not validate the exit signal in its low byte
	 * (clone3 does): the child runs and exits without signalling. */
	pid_t pid = CHECK_SYS(syscall(SYS_clone, 65, 0, 0, 0, 0));
	if (pid == 0)
		_exit(6);
	int st;
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK_EXITED(st, 6);
}

static void clone_raw_fork_like(void)
{
	pid_t pid = CHECK_SYS(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
	if (pid == 0)
		_exit(5);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 5);
}

static void clone_parent_settid(void)
{
	pid_t ptid = 0;
	pid_t pid = CHECK_SYS(syscall(SYS_clone, CLONE_PARENT_SETTID | SIGCHLD, 0, &ptid, 0, 0));
	if (pid == 0)
		_exit(0);
	CHECK_EQ(ptid, pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void clone_child_settid(void)
{
	static pid_t ctid;
	ctid = 0;
	pid_t pid = CHECK_SYS(syscall(SYS_clone, CLONE_CHILD_SETTID | SIGCHLD, 0, 0, &ctid, 0));
	if (pid == 0)
		_exit(ctid == getpid() ? 0 : 1);
	/* Only the child's copy of memory is written. */
	CHECK_EQ(ctid, 0);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static volatile pid_t cleartid_word;

static int sleeper(void *arg)
{
	(void)arg;
	return 0;
}

static void clone_child_cleartid_wakes(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	cleartid_word = -1;
	pid_t pid = CHECK_SYS(clone(sleeper, stk,
				    CLONE_VM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD,
				    NULL, NULL, NULL, &cleartid_word));
	/* Wait until the kernel clears the word at the child's exit. */
	for (int i = 0; i < 2000; i++) {
		pid_t v = cleartid_word;
		if (v == 0)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		syscall(SYS_futex, &cleartid_word, FUTEX_WAIT, v, &ts, NULL, 0);
	}
	CHECK_EQ(cleartid_word, 0);
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
}

static void clone_exit_signal_sigusr1(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t pid = CHECK_SYS(syscall(SYS_clone, SIGUSR1, 0, 0, 0, 0));
	if (pid == 0)
		_exit(3);
	siginfo_t si;
	struct timespec ts = {10, 0};
	int sig = CHECK_SYS(sigtimedwait(&set, &si, &ts));
	CHECK_EQ(sig, SIGUSR1);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_EXITED);
	/* A child with a non-SIGCHLD exit signal needs __WALL or __WCLONE. */
	int st;
	CHECK_ERR(waitpid(pid, &st, WNOHANG), ECHILD);
	CHECK_EQ(waitpid(pid, &st, __WCLONE), pid);
	CHECK_EXITED(st, 3);
}

static void clone_exit_signal_zero(void)
{
	pid_t pid = CHECK_SYS(syscall(SYS_clone, 0, 0, 0, 0, 0));
	if (pid == 0)
		_exit(4);
	int st;
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK_EXITED(st, 4);
}

static void clone_parent_flag(void)
{
	/* A child of ours creates a grandchild with CLONE_PARENT: it is our
	 * child, so we can wait for it. */
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pid_t g = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
		if (g == 0) {
			_exit(9);
		}
		CHILD_CHECK(g > 0);
		CHILD_CHECK(write(p[1], &g, sizeof(g)) == sizeof(g));
		CHILD_CHECK(waitpid(g, NULL, WNOHANG) == -1 && errno == ECHILD);
		_exit(0);
	}
	pid_t g = 0;
	CHECK_EQ(read(p[0], &g, sizeof(g)), sizeof(g));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	st = mt_wait(g);
	CHECK_EXITED(st, 9);
}

static volatile int vfork_flag;

static int vfork_child(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	vfork_flag = 1;
	return 0;
}

static void clone_vfork_suspends_parent(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	vfork_flag = 0;
	pid_t pid = CHECK_SYS(clone(vfork_child, stk, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL));
	/* The parent resumes only once the child has exited. */
	CHECK_EQ(vfork_flag, 1);
	int st = mt_wait(pid);
	free_stack(stk);
	CHECK_EXITED(st, 0);
}

static int thread_fn(void *arg)
{
	(void)arg;
	shared_word = (int)syscall(SYS_gettid);
	syscall(SYS_exit, 0);
	return 0;
}

static void clone_thread_same_tgid(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	static pid_t tid_word;
	tid_word = 0;
	shared_word = 0;
	pid_t tid = CHECK_SYS(clone(thread_fn, stk,
				    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
					    CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
					    CLONE_CHILD_CLEARTID,
				    NULL, &tid_word, NULL, &tid_word));
	CHECK_NE(tid, getpid());
	for (int i = 0; i < 2000; i++) {
		pid_t v = tid_word;
		if (v == 0)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		syscall(SYS_futex, &tid_word, FUTEX_WAIT, v, &ts, NULL, 0);
	}
	CHECK_EQ(tid_word, 0);
	CHECK_EQ(shared_word, tid);
	/* A thread is not a child: waiting for it gives ECHILD. */
	CHECK_ERR(waitpid(tid, NULL, __WALL | WNOHANG), ECHILD);
	free_stack(stk);
}

static void clone3_basic(void)
{
	struct clone_args ca;
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	pid_t pid = CHECK_SYS(syscall(SYS_clone3, &ca, sizeof(ca)));
	if (pid == 0)
		_exit(11);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 11);
}

static void clone3_size_errors(void)
{
	struct {
		struct clone_args ca;
		uint64_t extra;
	} big;
	memset(&big, 0, sizeof(big));
	big.ca.exit_signal = SIGCHLD;
	/* Smaller than the first published version (64 bytes). */
	CHECK_ERR(syscall(SYS_clone3, &big, 32), EINVAL);
	/* Larger than a page. */
	CHECK_ERR(syscall(SYS_clone3, &big, 8192), E2BIG);
	/* Larger than known with non-zero trailing bytes. */
	big.extra = 1;
	CHECK_ERR(syscall(SYS_clone3, &big, sizeof(big)), E2BIG);
	CHECK_ERR(syscall(SYS_clone3, NULL, sizeof(struct clone_args)), EFAULT);
}

static void clone3_bad_fields(void)
{
	struct clone_args ca;
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = 65;
	CHECK_ERR(syscall(SYS_clone3, &ca, sizeof(ca)), EINVAL);
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	ca.flags = CLONE_SIGHAND;
	CHECK_ERR(syscall(SYS_clone3, &ca, sizeof(ca)), EINVAL);
	memset(&ca, 0, sizeof(ca));
	/* The old CSIGNAL bits are not accepted in clone3's flags. */
	ca.flags = SIGCHLD;
	CHECK_ERR(syscall(SYS_clone3, &ca, sizeof(ca)), EINVAL);
	memset(&ca, 0, sizeof(ca));
	/* A stack size without a stack (or the reverse) is invalid. */
	ca.exit_signal = SIGCHLD;
	ca.stack_size = 4096;
	CHECK_ERR(syscall(SYS_clone3, &ca, sizeof(ca)), EINVAL);
}

static void clone3_parent_tid(void)
{
	pid_t ptid = 0;
	struct clone_args ca;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PARENT_SETTID;
	ca.parent_tid = (uint64_t)(uintptr_t)&ptid;
	ca.exit_signal = SIGCHLD;
	pid_t pid = CHECK_SYS(syscall(SYS_clone3, &ca, sizeof(ca)));
	if (pid == 0)
		_exit(0);
	CHECK_EQ(ptid, pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(clone_vm_shares_memory),
	MT_CASE(clone_without_vm_copies_memory),
	MT_CASE(clone_files_shares_table),
	MT_CASE(clone_without_files_copies_table),
	MT_CASE(clone_fs_shares_cwd),
	MT_CASE(clone_fs_shares_umask),
	MT_CASE(clone_sighand_shares_handlers),
	MT_CASE(clone_invalid_combinations),
	MT_CASE(clone_exit_signal_unchecked),
	MT_CASE(clone_raw_fork_like),
	MT_CASE(clone_parent_settid),
	MT_CASE(clone_child_settid),
	MT_CASE(clone_child_cleartid_wakes),
	MT_CASE(clone_exit_signal_sigusr1),
	MT_CASE(clone_exit_signal_zero),
	MT_CASE(clone_parent_flag),
	MT_CASE(clone_vfork_suspends_parent),
	MT_CASE(clone_thread_same_tgid),
	MT_CASE(clone3_basic),
	MT_CASE(clone3_size_errors),
	MT_CASE(clone3_bad_fields),
	MT_CASE(clone3_parent_tid),
};

MT_MAIN(cases)
