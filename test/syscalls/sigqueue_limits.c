//go:build ignore

/* sigqueue_limits: RLIMIT_SIGPENDING and signal queueing: real-time
 * signals queue one entry each up to the limit, sigqueue beyond it fails
 * with EAGAIN while kill still marks the signal pending, a pending
 * standard signal takes no second entry, and queued values keep their
 * order per signal. Each case runs in a child with its own limit. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return mt_wait(pid);
}

#define IN_CHILD(body)                            \
	static void body##_child(void);           \
	static void body(void)                    \
	{                                         \
		int st = run_child(body##_child); \
		CHECK_EXITED(st, 0);              \
	}                                         \
	static void body##_child(void)

static void block_all(void)
{
	sigset_t s;
	sigfillset(&s);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void set_limit(rlim_t n)
{
	struct rlimit rl = {n, n};
	if (setrlimit(RLIMIT_SIGPENDING, &rl) != 0)
		_exit(98);
}

static int take(int sig, siginfo_t *si)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	struct timespec zero = {0, 0};
	return sigtimedwait(&s, si, &zero);
}

IN_CHILD(sigqueue_stops_at_limit)
{
	block_all();
	/* Unprivileged, so the limit applies to us. */
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	set_limit(8);
	int sent = 0;
	union sigval v = {0};
	while (sent < 100) {
		v.sival_int = sent;
		if (sigqueue(getpid(), SIGRTMIN, v) != 0)
			break;
		sent++;
	}
	CHILD_CHECK(errno == EAGAIN);
	CHILD_CHECK(sent == 8);
	siginfo_t si;
	for (int i = 0; i < 8; i++)
		CHILD_CHECK(take(SIGRTMIN, &si) == SIGRTMIN && si.si_value.sival_int == i);
	/* Room again. */
	CHILD_CHECK(sigqueue(getpid(), SIGRTMIN, v) == 0);
}

IN_CHILD(kill_over_limit_still_pends)
{
	block_all();
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	set_limit(1);
	union sigval v = {7};
	CHILD_CHECK(sigqueue(getpid(), SIGRTMIN + 1, v) == 0);
	/* kill() does not fail when no queue entry is left: the signal is
	 * pending without its information. */
	CHILD_CHECK(kill(getpid(), SIGRTMIN + 2) == 0);
	sigset_t p;
	sigpending(&p);
	CHILD_CHECK(sigismember(&p, SIGRTMIN + 2));
	siginfo_t si;
	CHILD_CHECK(take(SIGRTMIN + 1, &si) == SIGRTMIN + 1 && si.si_value.sival_int == 7);
	CHILD_CHECK(take(SIGRTMIN + 2, &si) == SIGRTMIN + 2);
}

IN_CHILD(standard_signal_takes_one_entry)
{
	block_all();
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	set_limit(2);
	/* SIGUSR1 sent many times uses a single entry. */
	for (int i = 0; i < 10; i++)
		CHILD_CHECK(kill(getpid(), SIGUSR1) == 0);
	union sigval v = {1};
	CHILD_CHECK(sigqueue(getpid(), SIGRTMIN, v) == 0);
	CHILD_CHECK(sigqueue(getpid(), SIGRTMIN, v) == -1 && errno == EAGAIN);
	siginfo_t si;
	CHILD_CHECK(take(SIGUSR1, &si) == SIGUSR1);
	CHILD_CHECK(take(SIGUSR1, &si) == -1 && errno == EAGAIN);
}

IN_CHILD(values_in_order_per_signal)
{
	block_all();
	for (int i = 0; i < 20; i++) {
		union sigval v = {i};
		CHILD_CHECK(sigqueue(getpid(), SIGRTMIN + (i % 2), v) == 0);
	}
	siginfo_t si;
	for (int i = 0; i < 20; i += 2)
		CHILD_CHECK(take(SIGRTMIN, &si) == SIGRTMIN && si.si_value.sival_int == i);
	for (int i = 1; i < 20; i += 2)
		CHILD_CHECK(take(SIGRTMIN + 1, &si) == SIGRTMIN + 1 && si.si_value.sival_int == i);
}

IN_CHILD(sigqueue_errors)
{
	union sigval v = {0};
	CHILD_CHECK(sigqueue(99999, SIGUSR1, v) == -1 && errno == ESRCH);
	CHILD_CHECK(sigqueue(getpid(), 65, v) == -1 && errno == EINVAL);
	/* Signal 0 checks the target only. */
	CHILD_CHECK(sigqueue(getpid(), 0, v) == 0);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	/* Init belongs to root. */
	CHILD_CHECK(sigqueue(1, SIGUSR1, v) == -1 && errno == EPERM);
}

IN_CHILD(limit_reported_in_proc_status)
{
	set_limit(5);
	block_all();
	union sigval v = {0};
	sigqueue(getpid(), SIGRTMIN, v);
	sigqueue(getpid(), SIGRTMIN, v);
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	CHILD_CHECK(n > 0);
	buf[n] = 0;
	/* SigQ: queued/limit. */
	CHILD_CHECK(strstr(buf, "SigQ:\t2/5\n") != NULL);
}

static const struct mt_case cases[] = {
	MT_CASE(sigqueue_stops_at_limit),
	MT_CASE(kill_over_limit_still_pends),
	MT_CASE(standard_signal_takes_one_entry),
	MT_CASE(values_in_order_per_signal),
	MT_CASE(sigqueue_errors),
	MT_CASE(limit_reported_in_proc_status),
};

MT_MAIN(cases)
