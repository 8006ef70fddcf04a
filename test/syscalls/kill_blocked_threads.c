//go:build ignore

/* kill_blocked_threads: a fatal signal ends a process promptly whatever
 * its threads are blocked in (futex wait, pipe read, nanosleep, pause,
 * sigtimedwait, poll, wait4, blocking write to a full pipe), and
 * exit_group from one thread does the same. Each case forks a process
 * whose threads block, then kills it and checks it died within seconds. */
#include "moattest.h"

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pfd[2];
static uint32_t fword;

static void *t_futex(void *a)
{
	(void)a;
	for (;;)
		syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

static void *t_read(void *a)
{
	(void)a;
	char c;
	for (;;)
		if (read(pfd[0], &c, 1) < 0)
			pause();
	return NULL;
}

static void *t_sleep(void *a)
{
	(void)a;
	for (;;) {
		struct timespec ts = {1000, 0};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *t_pause(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}

static void *t_sigwait(void *a)
{
	(void)a;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	for (;;)
		sigwaitinfo(&s, NULL);
	return NULL;
}

static void *t_poll(void *a)
{
	(void)a;
	struct pollfd pf = {pfd[0], POLLIN, 0};
	for (;;)
		poll(&pf, 1, -1);
	return NULL;
}

static void *t_write_full(void *a)
{
	(void)a;
	static char buf[1 << 20];
	for (;;)
		if (write(pfd[1], buf, sizeof(buf)) < 0)
			pause();
	return NULL;
}

static void *(*const blockers[])(void *) = {t_futex, t_read, t_sleep, t_pause, t_sigwait, t_poll, t_write_full};

/* spawn forks a process running every blocker in its own thread (the
 * main thread waits for a child that never exits) and returns once all
 * threads had time to block. */
static pid_t spawn(int main_exits)
{
	int ready[2];
	if (pipe(ready) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (pipe(pfd) != 0)
			_exit(2);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &s, NULL);
		for (size_t i = 0; i < sizeof(blockers) / sizeof(blockers[0]); i++) {
			pthread_t th;
			pthread_create(&th, NULL, blockers[i], NULL);
		}
		pid_t kid = fork();
		if (kid == 0) {
			/* Dies with its parent, leaving nothing behind. */
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
		char c = 1;
		if (write(ready[1], &c, 1) != 1)
			_exit(3);
		if (main_exits) {
			struct timespec ts = {0, 100 * 1000 * 1000};
			nanosleep(&ts, NULL);
			kill(kid, SIGKILL);
			syscall(SYS_exit_group, 17);
		}
		int st;
		waitpid(kid, &st, 0);
		_exit(4);
	}
	close(ready[1]);
	char c;
	if (read(ready[0], &c, 1) != 1)
		return -1;
	close(ready[0]);
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	return pid;
}

/* wait_bounded waits up to 10 s for pid, then SIGKILLs it. */
static int wait_bounded(pid_t pid, int *st)
{
	for (int i = 0; i < 1000; i++) {
		pid_t r = waitpid(pid, st, WNOHANG);
		if (r == pid)
			return 0;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, st, 0);
	return -1;
}

static void sigkill_ends_all_blocked_threads(void)
{
	pid_t pid = CHECK_SYS(spawn(0));
	CHECK_SYS(kill(pid, SIGKILL));
	int st;
	CHECK_EQ(wait_bounded(pid, &st), 0);
	CHECK_SIGNALED(st, SIGKILL);
}

static void sigterm_default_ends_all_blocked_threads(void)
{
	pid_t pid = CHECK_SYS(spawn(0));
	CHECK_SYS(kill(pid, SIGTERM));
	int st;
	CHECK_EQ(wait_bounded(pid, &st), 0);
	CHECK_SIGNALED(st, SIGTERM);
}

static void exit_group_ends_all_blocked_threads(void)
{
	pid_t pid = CHECK_SYS(spawn(1));
	int st;
	CHECK_EQ(wait_bounded(pid, &st), 0);
	CHECK_EXITED(st, 17);
}

static void stop_and_kill_blocked_threads(void)
{
	pid_t pid = CHECK_SYS(spawn(0));
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_EQ(waitpid(pid, &st, WCONTINUED), pid);
	CHECK(WIFCONTINUED(st));
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_EQ(wait_bounded(pid, &st), 0);
	CHECK_SIGNALED(st, SIGKILL);
}

static const struct mt_case cases[] = {
	MT_CASE(sigkill_ends_all_blocked_threads),
	MT_CASE(sigterm_default_ends_all_blocked_threads),
	MT_CASE(exit_group_ends_all_blocked_threads),
	MT_CASE(stop_and_kill_blocked_threads),
};

MT_MAIN(cases)
