//go:build ignore

/* mx_exec_state: which process state survives execve and which is reset,
 * checked from the new image through both the syscalls and
 * /proc/self/status: signal mask, ignored and caught dispositions, pending
 * signals, umask, parent-death signal, dumpable, keepcaps, no_new_privs,
 * subreaper, personality, rlimits, interval timers, the alternate signal
 * stack, comm, pid/ppid (also when a second thread execs), close-on-exec
 * descriptors, nice, affinity, policy and an ignored SIGCHLD. The re-executed program reports through its
 * exit status: 0, or the number of the first check that failed. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char sbuf[8192];

static int slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, sbuf, sizeof(sbuf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	sbuf[n] = 0;
	return (int)n;
}

static const char *field(const char *name)
{
	static char out[256];
	size_t l = strlen(name);
	if (slurp("/proc/self/status") < 0)
		return "";
	for (const char *p = sbuf; p && *p;) {
		if (strncmp(p, name, l) == 0 && p[l] == ':') {
			p += l + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			size_t i = 0;
			while (p[i] && p[i] != '\n' && i + 1 < sizeof(out)) {
				out[i] = p[i];
				i++;
			}
			out[i] = 0;
			return out;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return "";
}

#define BIT(s) (1ULL << ((s) - 1))
#define EXPECT(cond)                  \
	do {                          \
		n++;                  \
		if (!(cond))          \
			_exit(n);     \
	} while (0)

/* child_main runs in the re-executed image. */
static void child_main(const char *mode, const char *arg)
{
	int n = 0;
	if (strcmp(mode, "signals") == 0) {
		sigset_t cur, pend;
		EXPECT(sigprocmask(SIG_SETMASK, NULL, &cur) == 0);
		EXPECT(sigismember(&cur, SIGUSR1) == 1);
		EXPECT(sigismember(&cur, SIGTERM) == 0);
		struct sigaction sa;
		EXPECT(sigaction(SIGUSR2, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN);
		/* A caught signal is reset to the default. */
		EXPECT(sigaction(SIGALRM, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL);
		/* A blocked pending signal stays pending. */
		EXPECT(sigpending(&pend) == 0 && sigismember(&pend, SIGUSR1) == 1);
		unsigned long long blk = strtoull(field("SigBlk"), NULL, 16);
		unsigned long long ign = strtoull(field("SigIgn"), NULL, 16);
		unsigned long long cgt = strtoull(field("SigCgt"), NULL, 16);
		unsigned long long shd = strtoull(field("ShdPnd"), NULL, 16);
		EXPECT(blk == BIT(SIGUSR1));
		EXPECT(ign == BIT(SIGUSR2));
		EXPECT(cgt == 0);
		EXPECT(shd == BIT(SIGUSR1));
		/* The alternate stack is gone. */
		stack_t ss;
		EXPECT(sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE));
		_exit(0);
	}
	if (strcmp(mode, "ids") == 0) {
		/* arg: "PID PPID" from before the exec. */
		long pid = strtol(arg, NULL, 10);
		long ppid = strtol(strchr(arg, ' ') + 1, NULL, 10);
		EXPECT(getpid() == pid);
		EXPECT(getppid() == ppid);
		EXPECT(strtol(field("Pid"), NULL, 10) == pid);
		EXPECT(strtol(field("PPid"), NULL, 10) == ppid);
		EXPECT(strcmp(field("Umask"), "0027") == 0);
		EXPECT(umask(0) == 027);
		/* comm is the basename of the executed file. */
		char name[16] = "";
		EXPECT(prctl(PR_GET_NAME, name, 0, 0, 0) == 0);
		const char *base = strrchr(mt_argv0, '/');
		base = base ? base + 1 : mt_argv0;
		EXPECT(strncmp(name, base, 15) == 0);
		EXPECT(strncmp(field("Name"), base, 15) == 0);
		EXPECT(strcmp(field("Threads"), "1") == 0);
		EXPECT(strtol(field("Tgid"), NULL, 10) == pid);
		EXPECT(syscall(SYS_gettid) == pid);
		_exit(0);
	}
	if (strcmp(mode, "prctl") == 0) {
		int v = -1;
		EXPECT(prctl(PR_GET_PDEATHSIG, &v, 0, 0, 0) == 0 && v == SIGUSR1);
		/* dumpable is 1 again after an ordinary exec. */
		EXPECT(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		EXPECT(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 0);
		EXPECT(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
		EXPECT(strcmp(field("NoNewPrivs"), "1") == 0);
		v = -1;
		EXPECT(prctl(PR_GET_CHILD_SUBREAPER, &v, 0, 0, 0) == 0 && v == 1);
		EXPECT(personality(0xffffffff) == (PER_LINUX | ADDR_NO_RANDOMIZE));
		_exit(0);
	}
	if (strcmp(mode, "limits") == 0) {
		struct rlimit r;
		EXPECT(getrlimit(RLIMIT_NOFILE, &r) == 0);
		EXPECT(r.rlim_cur == 100 && r.rlim_max == 200);
		EXPECT(getrlimit(RLIMIT_CORE, &r) == 0 && r.rlim_cur == 0);
		/* descriptors above the soft limit are refused. */
		EXPECT(fcntl(0, F_DUPFD, 100) == -1 && errno == EINVAL);
		/* The interval timer keeps running across exec. */
		struct itimerval it;
		EXPECT(getitimer(ITIMER_REAL, &it) == 0);
		EXPECT(it.it_value.tv_sec > 0 || it.it_value.tv_usec > 0);
		EXPECT(it.it_value.tv_sec <= 100);
		EXPECT(it.it_interval.tv_sec == 50);
		EXPECT(getitimer(ITIMER_VIRTUAL, &it) == 0);
		EXPECT(it.it_value.tv_sec > 0 && it.it_value.tv_sec <= 1000);
		_exit(0);
	}
	if (strcmp(mode, "fds") == 0) {
		/* arg: "CLOEXEC_FD KEPT_FD". */
		int gone = (int)strtol(arg, NULL, 10);
		int kept = (int)strtol(strchr(arg, ' ') + 1, NULL, 10);
		errno = 0;
		EXPECT(fcntl(gone, F_GETFD) == -1 && errno == EBADF);
		EXPECT(fcntl(kept, F_GETFD) == 0);
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", gone);
		EXPECT(lstat(path, &st) == -1 && errno == ENOENT);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", kept);
		EXPECT(lstat(path, &st) == 0);
		EXPECT(write(kept, "ok", 2) == 2);
		_exit(0);
	}
	if (strcmp(mode, "sched") == 0) {
		errno = 0;
		EXPECT(getpriority(PRIO_PROCESS, 0) == 5 && errno == 0);
		cpu_set_t set;
		EXPECT(sched_getaffinity(0, sizeof(set), &set) == 0);
		EXPECT(CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set));
		EXPECT(sched_getscheduler(0) == SCHED_BATCH);
		/* SIGCHLD ignored survives too: children reap themselves. */
		struct sigaction sa;
		EXPECT(sigaction(SIGCHLD, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN);
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		EXPECT(c > 0);
		errno = 0;
		EXPECT(waitpid(c, NULL, 0) == -1 && errno == ECHILD);
		_exit(0);
	}
	_exit(98);
}

static void run_exec(const char *mode, const char *arg)
{
	char *args[] = {(char *)mt_argv0, "mxchild", (char *)mode,
			(char *)(arg ? arg : ""), NULL};
	execve(mt_argv0, args, environ);
	_exit(97);
}

static void onalrm(int s)
{
	(void)s;
}

static void signals_across_exec(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigprocmask(SIG_BLOCK, &s, NULL);
		signal(SIGUSR2, SIG_IGN);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = onalrm;
		sigaction(SIGALRM, &sa, NULL);
		kill(getpid(), SIGUSR1);
		static char stk[65536];
		stack_t ss = {.ss_sp = stk, .ss_size = sizeof(stk)};
		sigaltstack(&ss, NULL);
		run_exec("signals", NULL);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void ids_umask_comm_across_exec(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		umask(027);
		prctl(PR_SET_NAME, "not-the-name", 0, 0, 0);
		char arg[64];
		snprintf(arg, sizeof(arg), "%d %d", getpid(), getppid());
		run_exec("ids", arg);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void prctl_state_across_exec(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		/* We stay alive until the child exits, so the parent-death
		 * signal never fires; it must only be remembered. */
		if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ||
		    prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 ||
		    personality(PER_LINUX | ADDR_NO_RANDOMIZE) == -1)
			_exit(96);
		run_exec("prctl", NULL);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void limits_and_timers_across_exec(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		struct rlimit r = {100, 200};
		struct rlimit core = {0, 0};
		struct itimerval it = {{50, 0}, {100, 0}};
		signal(SIGALRM, SIG_IGN);
		if (setrlimit(RLIMIT_NOFILE, &r) != 0 ||
		    setrlimit(RLIMIT_CORE, &core) != 0 ||
		    setitimer(ITIMER_REAL, &it, NULL) != 0 ||
		    setitimer(ITIMER_VIRTUAL, &it, NULL) != 0)
			_exit(96);
		run_exec("limits", NULL);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void *exec_in_thread(void *p)
{
	run_exec("ids", p);
	return NULL;
}

static void exec_from_second_thread(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		/* The new image runs as the thread group leader's pid, alone. */
		static char arg[64];
		umask(027);
		snprintf(arg, sizeof(arg), "%d %d", getpid(), getppid());
		pthread_t t;
		if (pthread_create(&t, NULL, exec_in_thread, arg) != 0)
			_exit(96);
		for (;;)
			pause();
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void cloexec_fds_across_exec(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	int p[2], q[2];
	CHECK_SYS(pipe2(p, O_CLOEXEC));
	CHECK_SYS(pipe(q));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		char arg[64];
		snprintf(arg, sizeof(arg), "%d %d", p[1], q[1]);
		run_exec("fds", arg);
	}
	close(p[1]);
	close(q[1]);
	CHECK_EXITED(mt_wait(c), 0);
	char buf[4];
	CHECK_EQ(read(q[0], buf, sizeof(buf)), 2);
	CHECK_MEMEQ(buf, "ok", 2);
	/* The close-on-exec write end went away with the exec. */
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 0);
	close(p[0]);
	close(q[0]);
}

static void sched_state_across_exec(void)
{
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		struct sched_param sp = {0};
		if (setpriority(PRIO_PROCESS, 0, 5) != 0 ||
		    sched_setaffinity(0, sizeof(one), &one) != 0 ||
		    sched_setscheduler(0, SCHED_BATCH, &sp) != 0)
			_exit(96);
		signal(SIGCHLD, SIG_IGN);
		run_exec("sched", NULL);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void exec_keeps_parent_relationship(void)
{
	/* The parent's wait sees the exec'd image's status, and the pid it
	 * forked. */
	if (mt_argv0[0] != '/')
		SKIP("argv[0] %s is not an absolute path", mt_argv0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0)
		run_exec("nosuchmode", NULL);
	int st;
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK_EXITED(st, 98);
}

static const struct mt_case cases[] = {
	MT_CASE(signals_across_exec),
	MT_CASE(ids_umask_comm_across_exec),
	MT_CASE(prctl_state_across_exec),
	MT_CASE(limits_and_timers_across_exec),
	MT_CASE(exec_from_second_thread),
	MT_CASE(cloexec_fds_across_exec),
	MT_CASE(sched_state_across_exec),
	MT_CASE(exec_keeps_parent_relationship),
};

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "mxchild") == 0) {
		mt_argv0 = argv[0];
		child_main(argv[2], argv[3]);
	}
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
