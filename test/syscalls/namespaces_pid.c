//go:build ignore

/* namespaces_pid: PID namespaces made by clone(CLONE_NEWPID) and
 * unshare(CLONE_NEWPID): ids as seen from inside and outside (getpid,
 * getppid, wait, siginfo, /proc/PID/status NSpid), the namespace's init
 * (orphans' reaper, protected from its namespace's signals, its death
 * ending the namespace), flag checks and CAP_SYS_ADMIN, and which
 * namespace a /proc numbers processes in (its mounter's). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static char *new_stack(void)
{
	void *p = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : (char *)p + STACK_SIZE;
}

/* spawn_ns runs fn(arg) as the init of a new PID namespace. */
static pid_t spawn_ns(int (*fn)(void *), void *arg)
{
	char *stk = new_stack();
	if (stk == NULL)
		return -1;
	return clone(fn, stk, CLONE_NEWPID | SIGCHLD, arg);
}

static int report_ids(void *arg)
{
	(void)arg;
	if (getpid() != 1)
		return 2;
	if (getppid() != 0)
		return 3;
	if (syscall(SYS_gettid) != 1)
		return 4;
	return 0;
}

static void clone_newpid_child_is_init(void)
{
	pid_t p = CHECK_SYS(spawn_ns(report_ids, NULL));
	CHECK_GT(p, 1);
	CHECK_EXITED(mt_wait(p), 0);
}

static int fork_and_report(void *arg)
{
	(void)arg;
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0)
		_exit(getpid() == 2 && getppid() == 1 ? 0 : 9);
	if (c != 2)
		return 3;
	int st;
	if (waitpid(c, &st, 0) != 2)
		return 4;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 5;
}

static void children_numbered_from_two(void)
{
	pid_t p = CHECK_SYS(spawn_ns(fork_and_report, NULL));
	CHECK_EXITED(mt_wait(p), 0);
}

static void unshare_newpid_affects_children_only(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		pid_t me = getpid();
		CHILD_CHECK(unshare(CLONE_NEWPID) == 0);
		CHILD_CHECK(getpid() == me);
		pid_t c = fork();
		CHILD_CHECK(c >= 0);
		if (c == 0)
			_exit(getpid() == 1 && getppid() == 0 ? 0 : 9);
		CHILD_CHECK(c != 1);
		int st;
		CHILD_CHECK(waitpid(c, &st, 0) == c);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		/* The namespace's init is gone: nobody may join it. */
		CHILD_ERR(fork(), ENOMEM);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void *nothing(void *arg)
{
	return arg;
}

static int noop(void *arg)
{
	(void)arg;
	return 0;
}

static void unshare_newpid_then_flags_einval(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWPID) == 0);
		CHILD_ERR(unshare(CLONE_NEWPID), EINVAL);
		char *stk = new_stack();
		CHILD_CHECK(stk != NULL);
		CHILD_ERR(clone(noop, stk, CLONE_NEWPID | SIGCHLD, NULL), EINVAL);
		/* Threads cannot be made while children go elsewhere. */
		pthread_t th;
		CHILD_CHECK(pthread_create(&th, NULL, nothing, NULL) == EINVAL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void clone_thread_with_newpid_einval(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	CHECK_ERR(clone(noop, stk, CLONE_NEWPID | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, NULL), EINVAL);
}

static void unshare_newpid_needs_cap_sys_admin(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	AS_USER({
		if (unshare(CLONE_NEWPID) != -1 || errno != EPERM)
			_exit(2);
		if (clone(noop, stk, CLONE_NEWPID | SIGCHLD, NULL) != -1 || errno != EPERM)
			_exit(3);
	});
}

static int hold_pipe(void *arg)
{
	int *fds = arg;
	close(fds[0]);
	/* A child that would live forever, holding the write end. */
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0) {
		for (;;)
			pause();
	}
	close(fds[1]);
	return 7;
}

static void init_death_kills_namespace(void)
{
	int fds[2];
	CHECK_SYS(pipe(fds));
	pid_t p = spawn_ns(hold_pipe, fds);
	close(fds[1]);
	CHECK_SYS(p);
	int st = mt_wait(p);
	/* By the time init is reaped, every process of its namespace is
	 * gone: the pipe has no writer left. */
	struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
	int n = poll(&pfd, 1, 0);
	char c;
	ssize_t r = n == 1 ? read(fds[0], &c, 1) : -1;
	close(fds[0]);
	CHECK_EXITED(st, 7);
	CHECK_EQ(n, 1);
	CHECK_EQ(r, 0);
}

static int reap_orphan(void *arg)
{
	(void)arg;
	int fds[2];
	if (pipe(fds) < 0)
		return 2;
	pid_t a = fork();
	if (a < 0)
		return 3;
	if (a == 0) {
		pid_t b = fork();
		if (b < 0)
			_exit(1);
		if (b == 0) {
			char c;
			close(fds[1]);
			/* Wait for the go-ahead: our parent has exited. */
			if (read(fds[0], &c, 1) != 1)
				_exit(1);
			_exit(getppid() == 1 ? 5 : 6);
		}
		_exit(0);
	}
	int st;
	if (waitpid(a, &st, 0) != a)
		return 4;
	if (write(fds[1], "x", 1) != 1)
		return 5;
	/* The orphan is ours now. */
	pid_t got = waitpid(-1, &st, 0);
	if (got != 3)
		return 6;
	return WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 0 : 7;
}

static void orphans_reparented_to_namespace_init(void)
{
	pid_t p = CHECK_SYS(spawn_ns(reap_orphan, NULL));
	CHECK_EXITED(mt_wait(p), 0);
}

static int survive_inside_signals(void *arg)
{
	(void)arg;
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0) {
		/* Accepted, and dropped: init has the default actions. */
		if (kill(1, SIGTERM) != 0 || kill(1, SIGKILL) != 0 || kill(1, SIGSTOP) != 0)
			_exit(1);
		_exit(0);
	}
	int st;
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 3;
	return 0;
}

static void init_ignores_unhandled_signals_from_inside(void)
{
	pid_t p = CHECK_SYS(spawn_ns(survive_inside_signals, NULL));
	CHECK_EXITED(mt_wait(p), 0);
}

static int wait_forever(void *arg)
{
	int *fds = arg;
	char c;
	close(fds[1]);
	(void)read(fds[0], &c, 1);
	return 0;
}

static void init_from_parent_namespace_sigkill_only(void)
{
	int fds[2];
	CHECK_SYS(pipe(fds));
	pid_t p = spawn_ns(wait_forever, fds);
	close(fds[0]);
	CHECK_SYS(p);
	/* From the parent namespace SIGTERM with the default action is
	 * dropped too, SIGKILL is not. */
	CHECK_SYS(kill(p, SIGTERM));
	CHECK_SYS(kill(p, SIGKILL));
	int st = mt_wait(p);
	close(fds[1]);
	CHECK_SIGNALED(st, SIGKILL);
}

static volatile sig_atomic_t got_pid = -1;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_pid = si->si_pid;
}

static int handled_signal_reaches_init(void *arg)
{
	int *fds = arg;
	close(fds[0]);
	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	/* Ready: the parent namespace's signal comes first, from a sender
	 * this namespace does not see. */
	if (write(fds[1], "r", 1) != 1)
		return 3;
	sigsuspend(&old);
	if (got_pid != 0)
		return 4;
	got_pid = -1;
	pid_t k = fork();
	if (k < 0)
		return 5;
	if (k == 0)
		_exit(kill(1, SIGUSR1) == 0 ? 0 : 1);
	sigsuspend(&old);
	if (got_pid != 2)
		return 6;
	int st;
	if (waitpid(k, &st, 0) != k)
		return 7;
	return 0;
}

static void handled_signals_reach_init_with_ns_pids(void)
{
	int fds[2];
	CHECK_SYS(pipe(fds));
	pid_t p = spawn_ns(handled_signal_reaches_init, fds);
	close(fds[1]);
	CHECK_SYS(p);
	char c;
	ssize_t r = mt_read_n(fds[0], &c, 1, 10000);
	close(fds[0]);
	if (r == 1)
		CHECK_SYS(kill(p, SIGUSR1));
	else
		kill(p, SIGKILL);
	int st = mt_wait(p);
	CHECK_EQ(r, 1);
	CHECK_EXITED(st, 0);
}

static int session_ids(void *arg)
{
	(void)arg;
	/* The parent's group and session are not in this namespace. */
	if (getpgrp() != 0 || getsid(0) != 0)
		return 2;
	if (setsid() != 1)
		return 3;
	if (getpgrp() != 1 || getsid(0) != 1 || getpgid(0) != 1)
		return 4;
	pid_t c = fork();
	if (c < 0)
		return 5;
	if (c == 0) {
		if (setpgid(0, 0) != 0 || getpgrp() != 2)
			_exit(1);
		_exit(getsid(0) == 1 ? 0 : 2);
	}
	int st;
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 6;
	return 0;
}

static void process_groups_and_sessions_in_namespace(void)
{
	pid_t p = CHECK_SYS(spawn_ns(session_ids, NULL));
	CHECK_EXITED(mt_wait(p), 0);
}

static int sigchld_pid(void *arg)
{
	(void)arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0)
		_exit(3);
	siginfo_t si;
	if (sigwaitinfo(&set, &si) != SIGCHLD)
		return 3;
	if (si.si_pid != 2 || si.si_code != CLD_EXITED || si.si_status != 3)
		return 4;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, 2, &si, WEXITED) != 0 || si.si_pid != 2)
		return 5;
	return 0;
}

static void sigchld_and_waitid_use_namespace_pids(void)
{
	pid_t p = CHECK_SYS(spawn_ns(sigchld_pid, NULL));
	CHECK_EXITED(mt_wait(p), 0);
}

/* status_line copies the value of the line key (with its leading "\n")
 * of the status file at path into out. */
static int status_line(const char *path, const char *key, char *out, size_t n)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	char *l = strstr(buf, key);
	if (l == NULL)
		return -1;
	l += strlen(key);
	char *e = strchr(l, '\n');
	if (e == NULL || (size_t)(e - l) >= n)
		return -1;
	memcpy(out, l, e - l);
	out[e - l] = 0;
	return 0;
}

static int nspid_line(pid_t pid, const char *key, char *out, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	return status_line(path, key, out, n);
}

static void proc_status_lists_namespace_pids(void)
{
	int fds[2];
	CHECK_SYS(pipe(fds));
	pid_t p = spawn_ns(wait_forever, fds);
	close(fds[0]);
	CHECK_SYS(p);
	char nspid[64] = "", nstgid[64] = "", want[64];
	int r1 = nspid_line(p, "\nNSpid:", nspid, sizeof nspid);
	int r2 = nspid_line(p, "\nNStgid:", nstgid, sizeof nstgid);
	close(fds[1]);
	int st = mt_wait(p);
	snprintf(want, sizeof want, "\t%d\t1", p);
	CHECK_EQ(r1, 0);
	CHECK_EQ(r2, 0);
	CHECK_STREQ(nspid, want);
	CHECK_STREQ(nstgid, want);
	CHECK_EXITED(st, 0);
}

static int nested_again(void *arg)
{
	int depth = (int)(long)arg;
	if (getpid() != 1)
		return 2;
	if (depth == 0)
		return 0;
	char *stk = new_stack();
	if (stk == NULL)
		return 3;
	pid_t c = clone(nested_again, stk, CLONE_NEWPID | SIGCHLD, (void *)(long)(depth - 1));
	if (c != 2)
		return 4;
	int st;
	if (waitpid(c, &st, 0) != c)
		return 5;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 6;
}

static void nested_namespaces(void)
{
	pid_t p = CHECK_SYS(spawn_ns(nested_again, (void *)3L));
	CHECK_EXITED(mt_wait(p), 0);
}

/* read_link_nul reads the link at path into out, NUL-terminated. */
static int read_link_nul(const char *path, char *out, size_t n)
{
	ssize_t r = readlink(path, out, n - 1);
	if (r < 0)
		return -1;
	out[r] = 0;
	return 0;
}

/* report_boot_proc writes, on the pipe at arg, what the /proc the
 * namespace's parent mounted says of the caller: /proc/self and the
 * NSpid line of /proc/self/status. */
static int report_boot_proc(void *arg)
{
	int *fds = arg;
	close(fds[0]);
	char self[64] = "", nspid[64] = "", msg[160];
	if (read_link_nul("/proc/self", self, sizeof self) < 0)
		snprintf(self, sizeof self, "readlink:%d", errno);
	if (status_line("/proc/self/status", "\nNSpid:", nspid, sizeof nspid) < 0)
		snprintf(nspid, sizeof nspid, "status:%d", errno);
	int n = snprintf(msg, sizeof msg, "%s|%s", self, nspid);
	return write(fds[1], msg, n) == n ? 0 : 2;
}

static void boot_proc_shows_mounters_ids(void)
{
	/* A /proc shows the PID namespace of the task that mounted it (for
	 * the boot /proc, the outer one), not the reader's. */
	int fds[2];
	CHECK_SYS(pipe(fds));
	pid_t p = spawn_ns(report_boot_proc, fds);
	close(fds[1]);
	CHECK_SYS(p);
	char msg[160];
	ssize_t r = mt_read_n(fds[0], msg, sizeof msg - 1, 10000);
	close(fds[0]);
	CHECK_EXITED(mt_wait(p), 0);
	CHECK_GT(r, 0);
	msg[r > 0 ? r : 0] = 0;
	char want[160];
	snprintf(want, sizeof want, "%d|\t%d\t1", p, p);
	CHECK_STREQ(msg, want);
}

struct proc_mount_args {
	int ready[2]; /* child -> parent: the mount is made, or an error */
	int done[2];  /* parent -> child: finish */
};

/* mount_proc_inside mounts a proc at "p" from inside the new namespace,
 * checks what it shows the mounter, and waits for the parent to look. */
static int mount_proc_inside(void *arg)
{
	struct proc_mount_args *a = arg;
	close(a->ready[0]);
	close(a->done[1]);
	char self[64] = "", nspid[64] = "", msg[160];
	if (mount("proc", "p", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(msg, sizeof msg, "mount:%d", errno);
	} else {
		if (read_link_nul("p/self", self, sizeof self) < 0)
			snprintf(self, sizeof self, "readlink:%d", errno);
		if (status_line("p/1/status", "\nNSpid:", nspid, sizeof nspid) < 0)
			snprintf(nspid, sizeof nspid, "status:%d", errno);
		snprintf(msg, sizeof msg, "%s|%s", self, nspid);
	}
	int n = strlen(msg);
	if (write(a->ready[1], msg, n) != n)
		return 2;
	char c;
	if (read(a->done[0], &c, 1) < 0)
		return 3;
	return 0;
}

static void own_proc_mount_shows_namespace_ids(void)
{
	/* A proc mounted inside the namespace numbers its processes; the
	 * parent, outside it, has no /proc/self there. */
	ENTER();
	CHECK_SYS(mkdir("p", 0755));
	struct proc_mount_args a;
	CHECK_SYS(pipe(a.ready));
	CHECK_SYS(pipe(a.done));
	pid_t p = spawn_ns(mount_proc_inside, &a);
	close(a.ready[1]);
	close(a.done[0]);
	CHECK_SYS(p);
	char msg[160];
	ssize_t r = mt_read_n(a.ready[0], msg, sizeof msg - 1, 10000);
	msg[r > 0 ? r : 0] = 0;
	/* Seen from the parent, while the namespace lives. */
	char self[64];
	errno = 0;
	int sr = read_link_nul("p/self", self, sizeof self);
	int serr = errno;
	int init_there = access("p/1", F_OK);
	char mine[32];
	snprintf(mine, sizeof mine, "p/%d", (int)p);
	errno = 0;
	int outer_there = access(mine, F_OK);
	int oerr = errno;
	close(a.done[1]);
	close(a.ready[0]);
	int st = mt_wait(p);
	umount2("p", MNT_DETACH);
	CHECK_EXITED(st, 0);
	CHECK_STREQ(msg, "1|\t1");
	CHECK_EQ(sr, -1);
	CHECK_EQ(serr, ENOENT);
	CHECK_EQ(init_there, 0);
	if (p != 1) {
		CHECK_EQ(outer_there, -1);
		CHECK_EQ(oerr, ENOENT);
	}
}

static int hold_lock(void *arg)
{
	int *fds = arg; /* fds[0]: the locked file, fds[1]: ready pipe */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	if (fcntl(fds[0], F_SETLK, &fl) != 0)
		return 2;
	if (write(fds[1], "r", 1) != 1)
		return 3;
	for (;;)
		pause();
}

static void getlk_reports_pid_of_callers_namespace(void)
{
	int mfd = CHECK_SYS(memfd_create("lk", 0));
	CHECK_SYS(ftruncate(mfd, 16));
	int pfd[2];
	CHECK_SYS(pipe(pfd));
	int args[2] = {mfd, pfd[1]};
	pid_t p = spawn_ns(hold_lock, args);
	close(pfd[1]);
	CHECK_SYS(p);
	char c;
	ssize_t r = mt_read_n(pfd[0], &c, 1, 10000);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	int gr = fcntl(mfd, F_GETLK, &fl);
	kill(p, SIGKILL);
	mt_wait(p);
	close(pfd[0]);
	close(mfd);
	CHECK_EQ(r, 1);
	CHECK_EQ(gr, 0);
	CHECK_EQ(fl.l_type, F_WRLCK);
	CHECK_EQ(fl.l_pid, p);
}

static const struct mt_case cases[] = {
	MT_CASE(clone_newpid_child_is_init),
	MT_CASE(children_numbered_from_two),
	MT_CASE(unshare_newpid_affects_children_only),
	MT_CASE(unshare_newpid_then_flags_einval),
	MT_CASE(clone_thread_with_newpid_einval),
	MT_CASE(unshare_newpid_needs_cap_sys_admin),
	MT_CASE(init_death_kills_namespace),
	MT_CASE(orphans_reparented_to_namespace_init),
	MT_CASE(init_ignores_unhandled_signals_from_inside),
	MT_CASE(init_from_parent_namespace_sigkill_only),
	MT_CASE(handled_signals_reach_init_with_ns_pids),
	MT_CASE(process_groups_and_sessions_in_namespace),
	MT_CASE(sigchld_and_waitid_use_namespace_pids),
	MT_CASE(proc_status_lists_namespace_pids),
	MT_CASE(nested_namespaces),
	MT_CASE(getlk_reports_pid_of_callers_namespace),
	MT_CASE(boot_proc_shows_mounters_ids),
	MT_CASE(own_proc_mount_shows_namespace_ids),
};

MT_MAIN(cases)
