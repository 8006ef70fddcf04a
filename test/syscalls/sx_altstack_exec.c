//go:build ignore

/* sx_altstack_exec: sigaltstack edge cases (disable, size and flag errors,
 * SS_ONSTACK inside a handler, nested handlers stay on the alternate stack,
 * threads do not inherit it, fork does, exec clears it), signal masks and
 * pending signals across fork and exec, and the siginfo sigwaitinfo returns
 * for kill, tgkill, sigqueue and POSIX timers. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Child modes (re-executed): "mask" exits 0 if SIGUSR1 and SIGRTMIN+2 are
 * blocked and SIGUSR2 is not; "pending" exits 0 if SIGUSR2 is pending;
 * "altstack" exits 0 if no alternate stack is set. */
static void child_main(const char *mode)
{
	sigset_t s;
	if (strcmp(mode, "mask") == 0) {
		sigprocmask(SIG_SETMASK, NULL, &s);
		_exit(sigismember(&s, SIGUSR1) == 1 && sigismember(&s, SIGRTMIN + 2) == 1 &&
		      sigismember(&s, SIGUSR2) == 0 ? 0 : 1);
	}
	if (strcmp(mode, "pending") == 0) {
		sigpending(&s);
		_exit(sigismember(&s, SIGUSR2) == 1 ? 0 : 1);
	}
	if (strcmp(mode, "altstack") == 0) {
		stack_t ss;
		if (sigaltstack(NULL, &ss) != 0)
			_exit(2);
		_exit(ss.ss_flags == SS_DISABLE ? 0 : 1);
	}
	_exit(3);
}

static int exec_child(const char *mode)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *args[] = { (char *)mt_argv0, "child", (char *)mode, NULL };
		execve("/proc/self/exe", args, environ);
		_exit(4);
	}
	return mt_wait(pid);
}

static char altbuf[64 * 1024] __attribute__((aligned(16)));

static void set_alt(void)
{
	stack_t ss = { .ss_sp = altbuf, .ss_size = sizeof(altbuf), .ss_flags = 0 };
	sigaltstack(&ss, NULL);
}

static int on_alt(void *p)
{
	return (char *)p >= altbuf && (char *)p < altbuf + sizeof(altbuf);
}

static void altstack_disable_clears(void)
{
	stack_t ss = { .ss_sp = altbuf, .ss_size = sizeof(altbuf), .ss_flags = 0 };
	CHECK_SYS(sigaltstack(&ss, NULL));
	stack_t off = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
	stack_t old;
	/* With SS_DISABLE the size is not checked. */
	CHECK_SYS(sigaltstack(&off, &old));
	CHECK(old.ss_sp == altbuf);
	CHECK_EQ(old.ss_size, sizeof(altbuf));
	CHECK_EQ(old.ss_flags, 0);
	stack_t cur;
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK_EQ(cur.ss_flags, SS_DISABLE);
	CHECK(cur.ss_sp == NULL);
	CHECK_EQ(cur.ss_size, 0);
}

static void altstack_set_errors(void)
{
	/* Below the kernel's minimum (2048 on x86-64, more with large
	 * signal frames); glibc's MINSIGSTKSZ may be a sysconf call. */
	stack_t ss = { .ss_sp = altbuf, .ss_size = 1024, .ss_flags = 0 };
	CHECK_ERR(sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_size = sizeof(altbuf);
	ss.ss_flags = 0x1234;
	CHECK_ERR(sigaltstack(&ss, NULL), EINVAL);
	ss.ss_flags = SS_DISABLE | SS_ONSTACK;
	CHECK_ERR(sigaltstack(&ss, NULL), EINVAL);
	/* SS_ONSTACK alone is accepted as 0 for old programs. */
	ss.ss_flags = SS_ONSTACK;
	CHECK_SYS(sigaltstack(&ss, NULL));
	stack_t cur;
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK_EQ(cur.ss_flags, 0);
	/* A failed call leaves the stack as it was. */
	ss.ss_size = 1;
	ss.ss_flags = 0;
	CHECK_ERR(sigaltstack(&ss, NULL), ENOMEM);
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK_EQ(cur.ss_size, sizeof(altbuf));
	CHECK_ERR(syscall(SYS_sigaltstack, (void *)8, NULL), EFAULT);
}

static volatile int depth_flags[2];
static void *volatile depth_sp[2];
static volatile int depth;

static void nested_handler(int sig)
{
	int local;
	int d = depth++;
	if (d < 2) {
		stack_t cur;
		sigaltstack(NULL, &cur);
		depth_flags[d] = cur.ss_flags;
		depth_sp[d] = &local;
	}
	if (sig == SIGUSR1)
		raise(SIGUSR2); /* nested, while on the alternate stack */
}

static void altstack_nested_handlers_stay_on_it(void)
{
	set_alt();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nested_handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	depth = 0;
	raise(SIGUSR1);
	CHECK_EQ(depth, 2);
	CHECK_EQ(depth_flags[0], SS_ONSTACK);
	CHECK_EQ(depth_flags[1], SS_ONSTACK);
	CHECK(on_alt(depth_sp[0]));
	CHECK(on_alt(depth_sp[1]));
	/* The nested frame is pushed below the first, not at the top again. */
	CHECK_LT((uintptr_t)depth_sp[1], (uintptr_t)depth_sp[0]);
	stack_t cur;
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK_EQ(cur.ss_flags, 0);
}

static atomic_int thread_flags;
static void *query_alt(void *arg)
{
	(void)arg;
	stack_t cur;
	sigaltstack(NULL, &cur);
	atomic_store(&thread_flags, cur.ss_flags);
	return NULL;
}

static void altstack_inheritance(void)
{
	set_alt();
	atomic_store(&thread_flags, -1);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, query_alt, NULL));
	CHECK_RET0(pthread_join(th, NULL));
	/* A thread (CLONE_VM without CLONE_VFORK) starts without one. */
	CHECK_EQ(atomic_load(&thread_flags), SS_DISABLE);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		stack_t cur;
		CHILD_CHECK(sigaltstack(NULL, &cur) == 0);
		CHILD_CHECK(cur.ss_sp == altbuf && cur.ss_flags == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* exec clears it. */
	CHECK_EXITED(exec_child("altstack"), 0);
}

static void mask_across_fork_and_exec(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGRTMIN + 2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t c;
		sigprocmask(SIG_SETMASK, NULL, &c);
		CHILD_CHECK(sigismember(&c, SIGUSR1) == 1);
		CHILD_CHECK(sigismember(&c, SIGRTMIN + 2) == 1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EXITED(exec_child("mask"), 0);
}

static void pending_across_fork_and_exec(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(raise(SIGUSR2));
	/* A fork child starts with nothing pending. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t p;
		sigpending(&p);
		CHILD_CHECK(sigismember(&p, SIGUSR2) == 0);
		/* A signal pending before exec stays pending after it. */
		raise(SIGUSR2);
		char *args[] = { (char *)mt_argv0, "child", "pending", NULL };
		execve("/proc/self/exe", args, environ);
		_exit(4);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* Still pending here; take it. */
	struct timespec ts = { 0, 0 };
	CHECK_EQ(sigtimedwait(&s, NULL, &ts), SIGUSR2);
}

static void block(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static int take(int sig, siginfo_t *si)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	memset(si, 0, sizeof(*si));
	struct timespec ts = { 10, 0 };
	return sigtimedwait(&s, si, &ts);
}

static void siginfo_kill_tgkill_sigqueue(void)
{
	block(SIGRTMIN + 4);
	siginfo_t si;
	CHECK_SYS(kill(getpid(), SIGRTMIN + 4));
	CHECK_EQ(take(SIGRTMIN + 4, &si), SIGRTMIN + 4);
	CHECK_EQ(si.si_code, SI_USER);
	CHECK_EQ(si.si_pid, getpid());
	CHECK_EQ(si.si_uid, getuid());

	CHECK_SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGRTMIN + 4));
	CHECK_EQ(take(SIGRTMIN + 4, &si), SIGRTMIN + 4);
	/* SI_TKILL on older kernels, SI_USER on the 6.x this runs on. */
	CHECK(si.si_code == SI_TKILL || si.si_code == SI_USER);
	CHECK_EQ(si.si_pid, getpid());

	union sigval v = { .sival_int = 1234 };
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 4, v));
	CHECK_EQ(take(SIGRTMIN + 4, &si), SIGRTMIN + 4);
	CHECK_EQ(si.si_code, SI_QUEUE);
	CHECK_EQ(si.si_pid, getpid());
	CHECK_EQ(si.si_uid, getuid());
	CHECK_EQ(si.si_value.sival_int, 1234);
}

static void siginfo_timer(void)
{
	int sig = SIGRTMIN + 5;
	block(sig);
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = 77;
	timer_t tm;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &ev, &tm));
	struct itimerspec it = { { 0, 0 }, { 0, 1000000 } };
	CHECK_SYS(timer_settime(tm, 0, &it, NULL));
	siginfo_t si;
	int got = take(sig, &si);
	timer_delete(tm);
	CHECK_EQ(got, sig);
	CHECK_EQ(si.si_code, SI_TIMER);
	CHECK_EQ(si.si_value.sival_int, 77);
	/* With SIGEV_SIGNAL glibc's timer_t is the kernel timer id. */
	CHECK_EQ(si.si_timerid, (int)(intptr_t)tm);
	CHECK_EQ(si.si_overrun, 0);
}

static void siginfo_timer_overrun(void)
{
	int sig = SIGRTMIN + 6;
	block(sig);
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = 5;
	timer_t tm;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &ev, &tm));
	struct itimerspec it = { { 0, 1000000 }, { 0, 1000000 } };
	CHECK_SYS(timer_settime(tm, 0, &it, NULL));
	usleep(50000);
	siginfo_t si;
	int got = take(sig, &si);
	int ov = timer_getoverrun(tm);
	timer_delete(tm);
	CHECK_EQ(got, sig);
	CHECK_EQ(si.si_code, SI_TIMER);
	/* One queued signal for ~50 expirations: the rest are overruns. */
	CHECK_GE(si.si_overrun, 10);
	/* timer_getoverrun reports the overrun of the last delivery. */
	CHECK_EQ(ov, si.si_overrun);
}

static const struct mt_case cases[] = {
	MT_CASE(altstack_disable_clears),
	MT_CASE(altstack_set_errors),
	MT_CASE(altstack_nested_handlers_stay_on_it),
	MT_CASE(altstack_inheritance),
	MT_CASE(mask_across_fork_and_exec),
	MT_CASE(pending_across_fork_and_exec),
	MT_CASE(siginfo_kill_tgkill_sigqueue),
	MT_CASE(siginfo_timer),
	MT_CASE(siginfo_timer_overrun),
};

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "child") == 0)
		child_main(argv[2]);
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
