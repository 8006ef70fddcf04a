//go:build ignore

/* mx_prctl_lifecycle: prctl state that acts when processes and threads come
 * and go: parent-death signals (delivery on parent exit, reset in fork
 * children), child subreapers several levels up, dumpable reset by
 * credential changes, the clear-tid address, per-thread names, and
 * personality and getcpu against what was set. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* wait_sig waits up to 10 s for sig (which must be blocked). */
static int wait_sig(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	struct timespec ts = {10, 0};
	return sigtimedwait(&s, NULL, &ts);
}

static void block(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void pdeathsig_on_parent_exit(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t mid = CHECK_SYS(fork());
	if (mid == 0) {
		pid_t g = fork();
		CHILD_CHECK(g >= 0);
		if (g == 0) {
			block(SIGUSR1);
			pid_t parent = getppid();
			CHILD_CHECK(prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) == 0);
			/* The parent cannot be gone yet: it waits for
			 * our byte before exiting. */
			CHILD_CHECK(getppid() == parent);
			CHILD_CHECK(write(p[1], "r", 1) == 1);
			int s = wait_sig(SIGUSR1);
			char c = s == SIGUSR1 ? 'y' : 'n';
			/* Reparented away from the dead parent. */
			if (getppid() == parent)
				c = 'p';
			write(p[1], &c, 1);
			_exit(0);
		}
		char c;
		CHILD_CHECK(read(p[0], &c, 1) == 1);
		_exit(0); /* leaves the grandchild to init (us) */
	}
	close(p[1]);
	CHECK_EXITED(mt_wait(mid), 0);
	/* The middle process consumed the grandchild's "ready" byte. */
	char c = 0;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'y');
	close(p[0]);
	/* The grandchild is ours now (we are init): reap it. */
	int st;
	CHECK_GT(waitpid(-1, &st, 0), 0);
	CHECK_EXITED(st, 0);
}

static int pd_pipe[2];
static int pd_go[2];

/* pdeath_child runs in a child: it asks for sig when its parent thread
 * dies, reports ready, then writes 'y' if sig came and 'n' if not: with
 * go, what is pending once pd_go says so; without, after waiting for it. */
static void pdeath_child(int sig, int go)
{
	block(sig);
	CHILD_CHECK(prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0);
	CHILD_CHECK(write(pd_pipe[1], "r", 1) == 1);
	char c;
	if (go) {
		CHILD_CHECK(read(pd_go[0], &c, 1) == 1);
		sigset_t s;
		sigpending(&s);
		c = sigismember(&s, sig) ? 'y' : 'n';
	} else {
		c = wait_sig(sig) == sig ? 'y' : 'n';
	}
	CHILD_CHECK(write(pd_pipe[1], &c, 1) == 1);
	_exit(0);
}

static void *fork_pdeath_child(void *arg)
{
	pid_t *pid = arg;
	*pid = fork();
	if (*pid == 0)
		pdeath_child(SIGUSR1, 0);
	char c;
	if (*pid > 0 && read(pd_pipe[0], &c, 1) != 1)
		*pid = -1;
	return NULL; /* the forking thread exits */
}

static void pdeathsig_on_parent_thread_exit(void)
{
	/* The parent of PR_SET_PDEATHSIG is the thread that forked: its exit
	 * signals the child although the process lives on (prctl(2)); the
	 * children of other threads hear nothing. */
	CHECK_SYS(pipe(pd_pipe));
	CHECK_SYS(pipe(pd_go));
	pid_t other = CHECK_SYS(fork());
	if (other == 0)
		pdeath_child(SIGUSR2, 1);
	char c;
	CHECK_EQ(read(pd_pipe[0], &c, 1), 1);
	pid_t pid = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, fork_pdeath_child, &pid));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_GT(pid, 0);
	/* The thread's child got its signal... */
	CHECK_EQ(read(pd_pipe[0], &c, 1), 1);
	CHECK_EQ(c, 'y');
	CHECK_EXITED(mt_wait(pid), 0);
	/* ...and the main thread's child did not. */
	CHECK_EQ(write(pd_go[1], "g", 1), 1);
	CHECK_EQ(read(pd_pipe[0], &c, 1), 1);
	CHECK_EQ(c, 'n');
	CHECK_EXITED(mt_wait(other), 0);
}

static void pdeathsig_reset_in_fork_child(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == 0);
		int v = -1;
		CHILD_CHECK(prctl(PR_GET_PDEATHSIG, &v, 0, 0, 0) == 0 && v == SIGTERM);
		pid_t g = fork();
		CHILD_CHECK(g >= 0);
		if (g == 0) {
			int w = -1;
			CHILD_CHECK(prctl(PR_GET_PDEATHSIG, &w, 0, 0, 0) == 0 && w == 0);
			_exit(0);
		}
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) &&
			    WEXITSTATUS(st) == 0);
		/* Clearing with 0; bad signals; bad pointer. */
		CHILD_CHECK(prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_PDEATHSIG, &v, 0, 0, 0) == 0 && v == 0);
		errno = 0;
		CHILD_CHECK(prctl(PR_SET_PDEATHSIG, 65, 0, 0, 0) == -1 && errno == EINVAL);
		errno = 0;
		CHILD_CHECK(prctl(PR_SET_PDEATHSIG, -1, 0, 0, 0) == -1 && errno == EINVAL);
		errno = 0;
		CHILD_CHECK(prctl(PR_GET_PDEATHSIG, (void *)1, 0, 0, 0) == -1 &&
			    errno == EFAULT);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void subreaper_nearest_ancestor_adopts(void)
{
	/* S (subreaper) -> A -> B -> C. A and B exit: C goes to S, and S's
	 * wait sees C's exit status. */
	pid_t s = CHECK_SYS(fork());
	if (s == 0) {
		CHILD_CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
		int p[2];
		CHILD_CHECK(pipe(p) == 0);
		pid_t a = fork();
		CHILD_CHECK(a >= 0);
		if (a == 0) {
			pid_t b = fork();
			if (b == 0) {
				pid_t c = fork();
				if (c == 0) {
					char ch;
					close(p[1]);
					read(p[0], &ch, 1); /* until S says go */
					_exit((char)getppid() == ch ? 0 : 5);
				}
				_exit(c > 0 ? 0 : 1);
			}
			int st;
			waitpid(b, &st, 0);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
		}
		int st;
		CHILD_CHECK(waitpid(a, &st, 0) == a && WIFEXITED(st) &&
			    WEXITSTATUS(st) == 0);
		/* Send our pid truncated to a byte; C compares its
		 * getppid() truncated the same way. */
		char me = (char)getpid();
		CHILD_CHECK(write(p[1], &me, 1) == 1);
		pid_t got = wait(&st);
		CHILD_CHECK(got > 0);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		/* No children are left. */
		errno = 0;
		CHILD_CHECK(wait(&st) == -1 && errno == ECHILD);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(s), 0);
}

static void dumpable_reset_by_credential_change(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		/* Same ids again: no change, stays dumpable. */
		CHILD_CHECK(setresuid(0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		/* A new effective gid resets it (suid_dumpable is 0). */
		CHILD_CHECK(setresgid(5, 5, 5) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		/* So does a new effective uid. */
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0);
		/* An unprivileged process may set it back. */
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		errno = 0;
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 2, 0, 0, 0) == -1 && errno == EINVAL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void dumpable_with_fsuid_change(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		/* Only a change of the effective (or fs) id resets it: a
		 * new real and unchanged effective uid keeps the flag. */
		CHILD_CHECK(setresuid(7, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void tid_address_roundtrip(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int *orig = NULL;
		CHILD_CHECK(prctl(PR_GET_TID_ADDRESS, &orig, 0, 0, 0) == 0);
		CHILD_CHECK(orig != NULL);
		static int word;
		long tid = syscall(SYS_set_tid_address, &word);
		CHILD_CHECK(tid == syscall(SYS_gettid));
		int *got = NULL;
		CHILD_CHECK(prctl(PR_GET_TID_ADDRESS, &got, 0, 0, 0) == 0);
		CHILD_CHECK(got == &word);
		/* NULL is allowed and reads back as NULL. */
		syscall(SYS_set_tid_address, NULL);
		CHILD_CHECK(prctl(PR_GET_TID_ADDRESS, &got, 0, 0, 0) == 0);
		CHILD_CHECK(got == NULL);
		syscall(SYS_set_tid_address, orig);
		errno = 0;
		CHILD_CHECK(prctl(PR_GET_TID_ADDRESS, (void *)1, 0, 0, 0) == -1 &&
			    errno == EFAULT);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void *thread_tid_addr(void *p)
{
	int **out = p;
	prctl(PR_GET_TID_ADDRESS, out, 0, 0, 0);
	return NULL;
}

static void tid_address_per_thread(void)
{
	int *mine = NULL, *theirs = NULL;
	CHECK_SYS(prctl(PR_GET_TID_ADDRESS, &mine, 0, 0, 0));
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_tid_addr, &theirs));
	CHECK_RET0(pthread_join(t, NULL));
	CHECK(mine != NULL && theirs != NULL);
	CHECK(mine != theirs);
}

struct tname {
	pid_t tid;
	int rfd;
	char got[16];
};

static void *thread_named(void *p)
{
	struct tname *a = p;
	a->tid = syscall(SYS_gettid);
	prctl(PR_SET_NAME, "mx-worker", 0, 0, 0);
	prctl(PR_GET_NAME, a->got, 0, 0, 0);
	char c;
	read(a->rfd, &c, 1);
	return NULL;
}

static int read_str(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return 0;
}

static void name_is_per_thread(void)
{
	CHECK_SYS(prctl(PR_SET_NAME, "mx-main", 0, 0, 0));
	int p[2];
	CHECK_SYS(pipe(p));
	struct tname a = {0, p[0], ""};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_named, &a));
	char path[64], buf[64];
	/* Wait for the thread to have named itself. */
	for (int i = 0; i < 2000 && a.got[0] == 0; i++)
		usleep(1000);
	CHECK_STREQ(a.got, "mx-worker");
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", a.tid);
	CHECK_SYS(read_str(path, buf, sizeof(buf)));
	CHECK_STREQ(buf, "mx-worker\n");
	CHECK_SYS(read_str("/proc/self/comm", buf, sizeof(buf)));
	CHECK_STREQ(buf, "mx-main\n");
	char mine[16];
	CHECK_SYS(prctl(PR_GET_NAME, mine, 0, 0, 0));
	CHECK_STREQ(mine, "mx-main");
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_RET0(pthread_join(t, NULL));
	close(p[0]);
	close(p[1]);
}

static void personality_flags_roundtrip(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int cur = personality(0xffffffff);
		CHILD_CHECK(cur == PER_LINUX);
		CHILD_CHECK(personality(PER_LINUX | ADDR_NO_RANDOMIZE) == cur);
		CHILD_CHECK(personality(0xffffffff) == (PER_LINUX | ADDR_NO_RANDOMIZE));
		char buf[32];
		CHILD_CHECK(read_str("/proc/self/personality", buf, sizeof(buf)) == 0);
		CHILD_CHECK(strcmp(buf, "00040000\n") == 0);
		/* Inherited by a fork child. */
		pid_t g = fork();
		if (g == 0)
			_exit(personality(0xffffffff) == (PER_LINUX | ADDR_NO_RANDOMIZE) ? 0 : 1);
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) &&
			    WEXITSTATUS(st) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void getcpu_follows_pinning(void)
{
	cpu_set_t all;
	CHECK_SYS(sched_getaffinity(0, sizeof(all), &all));
	int n = CPU_COUNT(&all);
	CHECK_GE(n, 1);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, &all))
				continue;
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			CHILD_CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
			sched_yield();
			unsigned got = ~0u, node = ~0u;
			CHILD_CHECK(syscall(SYS_getcpu, &got, &node, NULL) == 0);
			CHILD_CHECK(got == (unsigned)cpu);
			CHILD_CHECK(node == 0);
			cpu_set_t back;
			CHILD_CHECK(sched_getaffinity(0, sizeof(back), &back) == 0);
			CHILD_CHECK(CPU_EQUAL(&back, &one));
		}
		/* NULL arguments are allowed. */
		CHILD_CHECK(syscall(SYS_getcpu, NULL, NULL, NULL) == 0);
		errno = 0;
		CHILD_CHECK(syscall(SYS_getcpu, (void *)1, NULL, NULL) == -1 &&
			    errno == EFAULT);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(pdeathsig_on_parent_exit),
	MT_CASE(pdeathsig_on_parent_thread_exit),
	MT_CASE(pdeathsig_reset_in_fork_child),
	MT_CASE(subreaper_nearest_ancestor_adopts),
	MT_CASE(dumpable_reset_by_credential_change),
	MT_CASE(dumpable_with_fsuid_change),
	MT_CASE(tid_address_roundtrip),
	MT_CASE(tid_address_per_thread),
	MT_CASE(name_is_per_thread),
	MT_CASE(personality_flags_roundtrip),
	MT_CASE(getcpu_follows_pinning),
};

MT_MAIN(cases)
