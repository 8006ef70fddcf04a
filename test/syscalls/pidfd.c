//go:build ignore

/* pidfd: pidfd_open (flags, ESRCH, EINVAL for a thread without
 * PIDFD_THREAD), the pidfd file (/proc/self/fd link, fdinfo Pid/NSpid,
 * close-on-exec, poll readable at exit, POLLHUP once reaped, waking a
 * poller), clone and
 * clone3 with CLONE_PIDFD, waitid(P_PIDFD) (WNOHANG, EAGAIN on a
 * PIDFD_NONBLOCK pidfd, ECHILD for a non-child), pidfd_send_signal (scope
 * flags, siginfo rules, permissions, ESRCH after reaping) and pidfd_getfd
 * (same file description, O_CLOEXEC, EPERM across users, EBADF). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef PIDFD_SIGNAL_THREAD
#define PIDFD_SIGNAL_THREAD (1UL << 0)
#define PIDFD_SIGNAL_THREAD_GROUP (1UL << 1)
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif

static int pidfd_open(pid_t pid, unsigned flags) { return syscall(SYS_pidfd_open, pid, flags); }
static int pidfd_send_signal(int fd, int sig, siginfo_t *info, unsigned flags)
{
	return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}
static int pidfd_getfd(int pidfd, int fd, unsigned flags) { return syscall(SYS_pidfd_getfd, pidfd, fd, flags); }

/* spawn_sleeper forks a child that sleeps until killed. */
static pid_t spawn_sleeper(void)
{
	pid_t p = fork();
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

/* spawn_waiter forks a child that exits with code once it reads a byte
 * from the returned pipe's write end (*wfd). */
static pid_t spawn_waiter(int code, int *wfd)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(98);
		_exit(code);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

static int poll_in(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n = poll(&pfd, 1, timeout_ms);
	return n <= 0 ? n : pfd.revents;
}

static void open_flags_and_errors(void)
{
	CHECK_ERR(pidfd_open(getpid(), 1), EINVAL);
	CHECK_ERR(pidfd_open(getpid(), O_CLOEXEC), EINVAL);
	CHECK_ERR(pidfd_open(0, 0), EINVAL);
	CHECK_ERR(pidfd_open(-1, 0), EINVAL);
	CHECK_ERR(pidfd_open(4000000, 0), ESRCH);
	int fd = CHECK_SYS(pidfd_open(getpid(), 0));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDWR);
	int nb = CHECK_SYS(pidfd_open(getpid(), PIDFD_NONBLOCK));
	CHECK_EQ(fcntl(nb, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	char buf[8];
	CHECK_ERR(read(fd, buf, sizeof buf), EINVAL);
	CHECK_ERR(write(fd, buf, sizeof buf), EINVAL);
	CHECK_ERR(lseek(fd, 0, SEEK_SET), ESPIPE);
}

static void open_thread_flag_in_getfl(void)
{
	/* F_GETFL shows PIDFD_THREAD (O_EXCL) on a thread pidfd. */
	int th = CHECK_SYS(pidfd_open(getpid(), PIDFD_THREAD));
	CHECK_EQ(fcntl(th, F_GETFL) & O_EXCL, O_EXCL);
	int fd = CHECK_SYS(pidfd_open(getpid(), 0));
	CHECK_EQ(fcntl(fd, F_GETFL) & O_EXCL, 0);
}

static void *idle_thread(void *arg)
{
	pid_t *tid = arg;
	__atomic_store_n(tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void open_thread_needs_flag(void)
{
	pid_t tid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, idle_thread, &tid));
	while (__atomic_load_n(&tid, __ATOMIC_SEQ_CST) == 0)
		sched_yield();
	/* Not a process: ENOENT on Linux 6.18, EINVAL before 6.9 or so. */
	errno = 0;
	CHECK_EQ(pidfd_open(tid, 0), -1);
	CHECK(errno == ENOENT || errno == EINVAL);
	int fd = CHECK_SYS(pidfd_open(tid, PIDFD_THREAD));
	/* The thread is sent the signal, not the process. */
	CHECK_SYS(pidfd_send_signal(fd, 0, NULL, 0));
	/* A thread pidfd cannot be waited for: no child has that pid. */
	siginfo_t si;
	CHECK_ERR(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG), ECHILD);
	pthread_cancel(th);
	pthread_join(th, NULL);
	/* The thread is gone: released at once, its pidfd reads HUP. */
	CHECK_EQ(poll_in(fd, 5000), POLLIN | POLLHUP);
	CHECK_ERR(pidfd_send_signal(fd, 0, NULL, 0), ESRCH);
}

static void proc_link_and_fdinfo(void)
{
	pid_t child = spawn_sleeper();
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	char path[64], link[64] = { 0 };
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	CHECK_SYS(readlink(path, link, sizeof link - 1));
	CHECK_STREQ(link, "anon_inode:[pidfd]");
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	char line[128], want_pid[64], want_ns[64];
	snprintf(want_pid, sizeof want_pid, "Pid:\t%d\n", child);
	snprintf(want_ns, sizeof want_ns, "NSpid:\t%d\n", child);
	int saw_pid = 0, saw_ns = 0, saw_flags = 0;
	while (fgets(line, sizeof line, f)) {
		if (strcmp(line, want_pid) == 0)
			saw_pid = 1;
		if (strcmp(line, want_ns) == 0)
			saw_ns = 1;
		if (strcmp(line, "flags:\t02000002\n") == 0)
			saw_flags = 1;
	}
	fclose(f);
	CHECK(saw_pid);
	CHECK(saw_ns);
	CHECK(saw_flags);
	kill(child, SIGKILL);
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
	/* Reaped: Pid and NSpid are -1. */
	f = fopen(path, "r");
	CHECK(f != NULL);
	saw_pid = saw_ns = 0;
	while (fgets(line, sizeof line, f)) {
		if (strcmp(line, "Pid:\t-1\n") == 0)
			saw_pid = 1;
		if (strcmp(line, "NSpid:\t-1\n") == 0)
			saw_ns = 1;
	}
	fclose(f);
	CHECK(saw_pid);
	CHECK(saw_ns);
}

static void poll_readable_at_exit(void)
{
	int w;
	pid_t child = spawn_waiter(7, &w);
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	CHECK_EQ(poll_in(fd, 0), 0);
	CHECK_SYS(write(w, "x", 1));
	CHECK_EQ(poll_in(fd, 10000), POLLIN);
	/* A zombie: still signallable (the signal is dropped). */
	CHECK_SYS(pidfd_send_signal(fd, SIGTERM, NULL, 0));
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK_SYS(waitid(P_PIDFD, fd, &si, WEXITED));
	CHECK_EQ(si.si_pid, child);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 7);
	CHECK_EQ(poll_in(fd, 0), POLLIN | POLLHUP);
	CHECK_ERR(pidfd_send_signal(fd, SIGTERM, NULL, 0), ESRCH);
	/* No target comes before a bad signal. */
	CHECK_ERR(pidfd_send_signal(fd, 65, NULL, 0), ESRCH);
	CHECK_ERR(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG), ECHILD);
	close(w);
}

struct hup_poll {
	int fd;
	int revents;
	int ret;
};

static void *poll_hup_only(void *arg)
{
	struct hup_poll *h = arg;
	struct pollfd p = {.fd = h->fd, .events = 0};
	h->ret = poll(&p, 1, -1);
	h->revents = p.revents;
	return NULL;
}

/* A poller asking for no events (POLLHUP is always reported) sleeps while
 * the process is a zombie and wakes when it is reaped. */
static void poll_hup_wakes_at_reap(void)
{
	int w;
	pid_t child = spawn_waiter(0, &w);
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	CHECK_SYS(write(w, "x", 1));
	CHECK_EQ(poll_in(fd, 10000), POLLIN);
	struct hup_poll h = {.fd = fd, .ret = -2};
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, poll_hup_only, &h), 0);
	usleep(100000); /* let the thread block in poll */
	int st;
	CHECK_EQ(waitpid(child, &st, 0), child);
	/* Not woken within 10 s: it would sleep forever (poll has no
	 * timeout), which is the failure. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	CHECK_EQ(pthread_timedjoin_np(th, NULL, &until), 0);
	CHECK_EQ(h.ret, 1);
	CHECK_EQ(h.revents, POLLHUP);
	close(fd);
	close(w);
}

static void waitid_nohang_and_nonblock(void)
{
	int w;
	pid_t child = spawn_waiter(3, &w);
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	int nb = CHECK_SYS(pidfd_open(child, PIDFD_NONBLOCK));
	siginfo_t si;
	memset(&si, 0xff, sizeof si);
	CHECK_SYS(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG));
	CHECK_EQ(si.si_pid, 0);
	CHECK_ERR(waitid(P_PIDFD, nb, &si, WEXITED), EAGAIN);
	CHECK_SYS(waitid(P_PIDFD, nb, &si, WEXITED | WNOHANG));
	CHECK_ERR(waitid(P_PIDFD, -1, &si, WEXITED), EINVAL);
	CHECK_ERR(waitid(P_PIDFD, 1000, &si, WEXITED), EBADF);
	CHECK_ERR(waitid(P_PIDFD, w, &si, WEXITED), EBADF);
	CHECK_SYS(write(w, "x", 1));
	memset(&si, 0, sizeof si);
	CHECK_SYS(waitid(P_PIDFD, fd, &si, WEXITED | WNOWAIT));
	CHECK_EQ(si.si_pid, child);
	CHECK_SYS(waitid(P_PIDFD, nb, &si, WEXITED));
	CHECK_EQ(si.si_status, 3);
	close(w);
}

static void waitid_not_a_child(void)
{
	siginfo_t si;
	int self = CHECK_SYS(pidfd_open(getpid(), 0));
	CHECK_ERR(waitid(P_PIDFD, self, &si, WEXITED | WNOHANG), ECHILD);
}

static void send_signal_kills(void)
{
	pid_t child = spawn_sleeper();
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	CHECK_ERR(pidfd_send_signal(fd, SIGKILL, NULL, 8), EINVAL);
	CHECK_ERR(pidfd_send_signal(fd, SIGKILL, NULL, PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP), EINVAL);
	CHECK_ERR(pidfd_send_signal(fd, 65, NULL, 0), EINVAL);
	CHECK_ERR(pidfd_send_signal(1000, SIGKILL, NULL, 0), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(pidfd_send_signal(p[0], SIGKILL, NULL, 0), EBADF);
	CHECK_SYS(pidfd_send_signal(fd, 0, NULL, 0));
	CHECK_SYS(pidfd_send_signal(fd, SIGKILL, NULL, 0));
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
	CHECK_SIGNALED(st, SIGKILL);
}

static void send_signal_scopes(void)
{
	pid_t child = spawn_sleeper();
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	CHECK_SYS(pidfd_send_signal(fd, 0, NULL, PIDFD_SIGNAL_THREAD));
	CHECK_SYS(pidfd_send_signal(fd, 0, NULL, PIDFD_SIGNAL_THREAD_GROUP));
	/* The child is no process group leader: no group has its pid. */
	CHECK_ERR(pidfd_send_signal(fd, 0, NULL, PIDFD_SIGNAL_PROCESS_GROUP), ESRCH);
	CHECK_SYS(setpgid(child, child));
	CHECK_SYS(pidfd_send_signal(fd, SIGKILL, NULL, PIDFD_SIGNAL_PROCESS_GROUP));
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
	CHECK_SIGNALED(st, SIGKILL);
}

static volatile sig_atomic_t got_code, got_value, got_pid;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_code = si->si_code;
	got_value = si->si_value.sival_int;
	got_pid = si->si_pid;
}

static void send_signal_siginfo_rules(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	int self = CHECK_SYS(pidfd_open(getpid(), 0));
	/* No siginfo: SI_USER with our pid. */
	got_code = 99;
	CHECK_SYS(pidfd_send_signal(self, SIGUSR1, NULL, 0));
	CHECK_EQ(got_code, SI_USER);
	CHECK_EQ(got_pid, getpid());
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = SIGUSR2;
	si.si_code = SI_QUEUE;
	CHECK_ERR(pidfd_send_signal(self, SIGUSR1, &si, 0), EINVAL);
	si.si_signo = SIGUSR1;
	si.si_value.sival_int = 42;
	CHECK_SYS(pidfd_send_signal(self, SIGUSR1, &si, 0));
	CHECK_EQ(got_code, SI_QUEUE);
	CHECK_EQ(got_value, 42);
	/* A forged positive code: only to the calling thread itself. */
	si.si_code = 5;
	CHECK_SYS(pidfd_send_signal(self, SIGUSR1, &si, 0));
	CHECK_EQ(got_code, 5);
	CHECK_ERR(pidfd_send_signal(self, SIGUSR1, &si, PIDFD_SIGNAL_PROCESS_GROUP), EPERM);
	pid_t child = spawn_sleeper();
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	CHECK_ERR(pidfd_send_signal(fd, SIGUSR1, &si, 0), EPERM);
	si.si_code = SI_TKILL;
	CHECK_ERR(pidfd_send_signal(fd, SIGUSR1, &si, 0), EPERM);
	si.si_code = SI_QUEUE;
	CHECK_ERR(pidfd_send_signal(fd, SIGUSR1, (siginfo_t *)8, 0), EFAULT);
	CHECK_SYS(pidfd_send_signal(fd, SIGKILL, NULL, 0));
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
}

static void send_signal_permission(void)
{
	pid_t child = spawn_sleeper();
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	AS_USER({
		if (pidfd_send_signal(fd, SIGKILL, NULL, 0) != -1 || errno != EPERM)
			_exit(1);
		if (pidfd_getfd(fd, 0, 0) != -1 || errno != EPERM)
			_exit(2);
	});
	CHECK_SYS(pidfd_send_signal(fd, SIGKILL, NULL, 0));
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
	CHECK_SIGNALED(st, SIGKILL);
}

static void clone_pidfd(void)
{
	int pidfd = -1;
	pid_t child = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
	if (child == 0)
		_exit(5);
	CHECK(child > 0);
	CHECK(pidfd > 2);
	CHECK_EQ(fcntl(pidfd, F_GETFD), FD_CLOEXEC);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK_SYS(waitid(P_PIDFD, pidfd, &si, WEXITED));
	CHECK_EQ(si.si_pid, child);
	CHECK_EQ(si.si_status, 5);
	/* CLONE_PIDFD and CLONE_PARENT_SETTID share one argument. */
	CHECK_ERR(syscall(SYS_clone, CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, 0, &pidfd, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_PIDFD | 0x00400000 | SIGCHLD, 0, &pidfd, 0, 0), EINVAL);
}

static void clone_pidfd_not_in_child(void)
{
	int pidfd = -1;
	pid_t child = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
	if (child == 0) {
		/* The child's table has no pidfd at that number. */
		_exit(fcntl(pidfd, F_GETFD) == -1 && errno == EBADF ? 0 : 1);
	}
	CHECK(child > 0);
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
	CHECK_EXITED(st, 0);
}

static void clone3_pidfd(void)
{
	int pidfd = -1;
	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_PIDFD;
	ca.pidfd = (uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	pid_t child = syscall(SYS_clone3, &ca, sizeof ca);
	if (child == 0)
		_exit(9);
	CHECK(child > 0);
	CHECK(pidfd > 2);
	CHECK_EQ(poll_in(pidfd, 10000), POLLIN);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK_SYS(waitid(P_PIDFD, pidfd, &si, WEXITED));
	CHECK_EQ(si.si_status, 9);
	/* A bad address fails the clone, and no child is made. */
	ca.pidfd = 8;
	CHECK_ERR(syscall(SYS_clone3, &ca, sizeof ca), EFAULT);
	CHECK_ERR(waitpid(-1, NULL, WNOHANG), ECHILD);
}

static void getfd_dups_description(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t child = fork();
	if (child == 0) {
		close(p[0]);
		for (;;)
			pause();
	}
	CHECK(child > 0);
	close(p[1]);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	CHECK_ERR(pidfd_getfd(fd, 0, 1), EINVAL);
	CHECK_ERR(pidfd_getfd(fd, 999, 0), EBADF);
	CHECK_ERR(pidfd_getfd(p[0], 0, 0), EBADF);
	/* The child's write end of the pipe (same number as ours was). */
	int got = CHECK_SYS(pidfd_getfd(fd, p[1], 0));
	CHECK_EQ(fcntl(got, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(got, F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_EQ(write(got, "hi", 2), 2);
	char buf[2];
	CHECK_EQ(read(p[0], buf, 2), 2);
	CHECK_MEMEQ(buf, "hi", 2);
	kill(child, SIGKILL);
	int st;
	CHECK_SYS(waitpid(child, &st, 0));
	/* Reaped: the process is gone. */
	CHECK_ERR(pidfd_getfd(fd, p[1], 0), ESRCH);
}

static void getfd_self(void)
{
	int self = CHECK_SYS(pidfd_open(getpid(), 0));
	int got = CHECK_SYS(pidfd_getfd(self, self, 0));
	CHECK_NE(got, self);
	CHECK_SYS(pidfd_send_signal(got, 0, NULL, 0));
}

static char *self_exe;

static void *exec_from_thread(void *arg)
{
	(void)arg;
	execl(self_exe, self_exe, "pidfd-exec-child", (char *)NULL);
	_exit(97);
}

static void process_pidfd_survives_exec_by_thread(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t child = fork();
	if (child == 0) {
		/* A thread other than the leader execs: it takes the pid. */
		dup2(p[1], 100);
		pthread_t th;
		pthread_create(&th, NULL, exec_from_thread, NULL);
		for (;;)
			pause();
	}
	CHECK(child > 0);
	int fd = CHECK_SYS(pidfd_open(child, 0));
	close(p[1]);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_SYS(pidfd_send_signal(fd, 0, NULL, 0));
	CHECK_SYS(pidfd_send_signal(fd, 0, NULL, PIDFD_SIGNAL_THREAD));
	CHECK_EQ(poll_in(fd, 0), 0);
	CHECK_SYS(pidfd_send_signal(fd, SIGKILL, NULL, 0));
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK_SYS(waitid(P_PIDFD, fd, &si, WEXITED));
	CHECK_EQ(si.si_pid, child);
	CHECK_EQ(si.si_code, CLD_KILLED);
}

/* pid_namespaces_in runs in a child of the test (unshare(CLONE_NEWPID)
 * changes where all later children go) and returns 0 or a failure code. */
static int pid_namespaces_in(void)
{
	int self = pidfd_open(getpid(), 0);
	if (self < 0)
		return 10;
	if (unshare(CLONE_NEWPID) < 0)
		return 11;
	int p[2];
	if (pipe(p) < 0)
		return 12;
	pid_t child = fork();
	if (child == 0) {
		close(p[1]);
		/* The parent is outside the child's namespace: a pidfd to it
		 * may not be used for signals (EINVAL, not ESRCH). */
		if (pidfd_send_signal(self, 0, NULL, 0) != -1 || errno != EINVAL)
			_exit(1);
		/* Its own pidfd works, and its pid there is 1. */
		int me = pidfd_open(1, 0);
		if (me < 0 || pidfd_send_signal(me, 0, NULL, 0) != 0)
			_exit(2);
		char c;
		if (read(p[0], &c, 1) != 0)
			_exit(3);
		_exit(0);
	}
	if (child < 0)
		return 13;
	close(p[0]);
	int fd = pidfd_open(child, 0);
	if (fd < 0)
		return 14;
	char path[64], line[128], want[64];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	snprintf(want, sizeof want, "NSpid:\t%d\t1\n", child);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 15;
	int saw = 0;
	while (fgets(line, sizeof line, f))
		if (strcmp(line, want) == 0)
			saw = 1;
	fclose(f);
	if (!saw)
		return 16;
	if (pidfd_send_signal(fd, 0, NULL, 0) != 0)
		return 17;
	close(p[1]);
	int st;
	if (waitpid(child, &st, 0) != child)
		return 18;
	if (!WIFEXITED(st))
		return 19;
	return WEXITSTATUS(st);
}

static void pid_namespaces(void)
{
	pid_t c = fork();
	if (c == 0)
		_exit(pid_namespaces_in());
	CHECK(c > 0);
	int st;
	CHECK_SYS(waitpid(c, &st, 0));
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(open_flags_and_errors),
	MT_CASE(open_thread_flag_in_getfl),
	MT_CASE(open_thread_needs_flag),
	MT_CASE(proc_link_and_fdinfo),
	MT_CASE(poll_readable_at_exit),
	MT_CASE(poll_hup_wakes_at_reap),
	MT_CASE(waitid_nohang_and_nonblock),
	MT_CASE(waitid_not_a_child),
	MT_CASE(send_signal_kills),
	MT_CASE(send_signal_scopes),
	MT_CASE(send_signal_siginfo_rules),
	MT_CASE(send_signal_permission),
	MT_CASE(clone_pidfd),
	MT_CASE(clone_pidfd_not_in_child),
	MT_CASE(clone3_pidfd),
	MT_CASE(getfd_dups_description),
	MT_CASE(getfd_self),
	MT_CASE(process_pidfd_survives_exec_by_thread),
	MT_CASE(pid_namespaces),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "pidfd-exec-child") == 0) {
		/* Tell the parent the exec is done, then wait to be killed. */
		if (write(100, "x", 1) != 1)
			return 1;
		for (;;)
			pause();
	}
	self_exe = argv[0];
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
