//go:build ignore

/* stop_cont: job-control signals between a parent and its children:
 * SIGSTOP stops every thread, SIGCONT resumes and runs its handler,
 * SIGCONT discards pending stop signals and resumes even when blocked, a
 * stopped process still dies of SIGKILL, signals sent while
 * stopped wait, and what wait reports (WUNTRACED, WCONTINUED, once). */
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

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static volatile int *shared;

static int *map_shared(void)
{
	int *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void *counter_thread(void *arg)
{
	(void)arg;
	for (;;) {
		__atomic_add_fetch(&shared[1], 1, __ATOMIC_RELAXED);
		sleep_ms(1);
	}
	return NULL;
}

static void stop_halts_all_threads(void)
{
	shared = map_shared();
	CHECK(shared != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, counter_thread, NULL);
		for (;;) {
			__atomic_add_fetch(&shared[0], 1, __ATOMIC_RELAXED);
			sleep_ms(1);
		}
	}
	while (__atomic_load_n(&shared[1], __ATOMIC_RELAXED) < 5)
		sleep_ms(1);
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	int a0 = shared[0], a1 = shared[1];
	sleep_ms(100);
	/* Neither thread moved while stopped. */
	CHECK_LE(shared[0] - a0, 1);
	CHECK_LE(shared[1] - a1, 1);
	CHECK_SYS(kill(pid, SIGCONT));
	sleep_ms(50);
	CHECK_GT(shared[0], a0 + 1);
	CHECK_GT(shared[1], a1 + 1);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void cont_handler(int sig)
{
	(void)sig;
	shared[2] = 1;
}

static void cont_runs_handler(void)
{
	shared = map_shared();
	CHECK(shared != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		signal(SIGCONT, cont_handler);
		shared[3] = 1;
		for (;;)
			pause();
	}
	while (!shared[3])
		sleep_ms(1);
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK_SYS(kill(pid, SIGCONT));
	for (int i = 0; i < 1000 && !shared[2]; i++)
		sleep_ms(2);
	CHECK_EQ(shared[2], 1);
	/* A SIGCONT to a running process also runs the handler. */
	shared[2] = 0;
	CHECK_SYS(kill(pid, SIGCONT));
	for (int i = 0; i < 1000 && !shared[2]; i++)
		sleep_ms(2);
	CHECK_EQ(shared[2], 1);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void cont_discards_pending_stop(void)
{
	shared = map_shared();
	CHECK(shared != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGTSTP);
		sigprocmask(SIG_BLOCK, &s, NULL);
		signal(SIGTSTP, SIG_DFL);
		shared[3] = 1;
		while (shared[3] != 2)
			sleep_ms(1);
		sigset_t p;
		sigpending(&p);
		_exit(sigismember(&p, SIGTSTP) ? 1 : 0);
	}
	while (shared[3] != 1)
		sleep_ms(1);
	CHECK_SYS(kill(pid, SIGTSTP));
	CHECK_SYS(kill(pid, SIGCONT));
	shared[3] = 2;
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void cont_resumes_even_when_blocked(void)
{
	shared = map_shared();
	CHECK(shared != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		signal(SIGCONT, cont_handler);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGCONT);
		sigprocmask(SIG_BLOCK, &s, NULL);
		shared[3] = 1;
		while (shared[3] != 2)
			sleep_ms(1);
		sigset_t p;
		sigpending(&p);
		_exit(sigismember(&p, SIGCONT) ? 1 : 0);
	}
	while (shared[3] != 1)
		sleep_ms(1);
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	/* SIGCONT resumes the process even though it blocks SIGCONT; the
	 * signal itself stays pending for it. */
	shared[3] = 2;
	CHECK_SYS(kill(pid, SIGCONT));
	st = mt_wait(pid);
	CHECK_EXITED(st, 1);
	CHECK_EQ(shared[2], 0);
}

static void signals_wait_while_stopped(void)
{
	shared = map_shared();
	CHECK(shared != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		signal(SIGUSR1, cont_handler);
		shared[3] = 1;
		for (;;)
			pause();
	}
	while (!shared[3])
		sleep_ms(1);
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK_SYS(kill(pid, SIGUSR1));
	sleep_ms(50);
	CHECK_EQ(shared[2], 0);
	CHECK_SYS(kill(pid, SIGCONT));
	for (int i = 0; i < 1000 && !shared[2]; i++)
		sleep_ms(2);
	CHECK_EQ(shared[2], 1);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static void kill_stopped_process(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	/* SIGTERM waits; SIGKILL does not. */
	CHECK_SYS(kill(pid, SIGTERM));
	sleep_ms(30);
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	CHECK_SYS(kill(pid, SIGKILL));
	st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void stop_reported_once_continue_once(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	/* A second SIGSTOP to a stopped process reports nothing new. */
	CHECK_SYS(kill(pid, SIGSTOP));
	sleep_ms(20);
	CHECK_EQ(waitpid(pid, &st, WUNTRACED | WNOHANG), 0);
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_EQ(waitpid(pid, &st, WCONTINUED), pid);
	CHECK(WIFCONTINUED(st));
	CHECK_EQ(waitpid(pid, &st, WCONTINUED | WNOHANG), 0);
	/* Without WUNTRACED a stop is not reported. */
	CHECK_SYS(kill(pid, SIGSTOP));
	sleep_ms(20);
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	kill(pid, SIGKILL);
	st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void sigchld_on_stop_unless_nocldstop(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigprocmask(SIG_BLOCK, &s, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cont_handler;
	sa.sa_flags = SA_NOCLDSTOP;
	CHECK_SYS(sigaction(SIGCHLD, &sa, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	struct timespec zero = {0, 0};
	siginfo_t si;
	/* SA_NOCLDSTOP: no SIGCHLD for the stop. */
	CHECK_ERR(sigtimedwait(&s, &si, &zero), EAGAIN);
	sa.sa_flags = 0;
	CHECK_SYS(sigaction(SIGCHLD, &sa, NULL));
	CHECK_SYS(kill(pid, SIGCONT));
	struct timespec ts = {5, 0};
	CHECK_EQ(sigtimedwait(&s, &si, &ts), SIGCHLD);
	CHECK_EQ(si.si_code, CLD_CONTINUED);
	CHECK_EQ(si.si_pid, pid);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

static const struct mt_case cases[] = {
	MT_CASE(stop_halts_all_threads),
	MT_CASE(cont_runs_handler),
	MT_CASE(cont_discards_pending_stop),
	MT_CASE(cont_resumes_even_when_blocked),
	MT_CASE(signals_wait_while_stopped),
	MT_CASE(kill_stopped_process),
	MT_CASE(stop_reported_once_continue_once),
	MT_CASE(sigchld_on_stop_unless_nocldstop),
};

MT_MAIN(cases)
