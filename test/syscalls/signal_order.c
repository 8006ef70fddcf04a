//go:build ignore

/* signal_order: the order in which pending signals are delivered (lowest
 * standard first, then real-time in number and queue order; standard
 * signals coalesce), masks across threads
 * (which thread gets a process signal), and the restart semantics of
 * interrupted calls (SA_RESTART, calls that never restart, sleeps that
 * return the remainder, restart_syscall). */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int order[64];
static atomic_int norder;

static void record(int sig)
{
	int i = atomic_fetch_add(&norder, 1);
	if (i < 64)
		order[i] = sig;
}

static void handle(int sig, int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = record;
	sa.sa_flags = flags;
	sigfillset(&sa.sa_mask); /* handlers never nest: a clean order */
	sigaction(sig, &sa, NULL);
}

static void block_all_of(const int *sigs, int n)
{
	sigset_t s;
	sigemptyset(&s);
	for (int i = 0; i < n; i++)
		sigaddset(&s, sigs[i]);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void unblock_all(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigprocmask(SIG_SETMASK, &s, NULL);
}

static void standard_signals_lowest_first(void)
{
	int sigs[] = {SIGUSR2, SIGHUP, SIGUSR1, SIGINT, SIGTERM};
	for (int i = 0; i < 5; i++)
		handle(sigs[i], 0);
	block_all_of(sigs, 5);
	for (int i = 0; i < 5; i++)
		kill(getpid(), sigs[i]);
	atomic_store(&norder, 0);
	unblock_all();
	CHECK_EQ(atomic_load(&norder), 5);
	int want[] = {SIGHUP, SIGINT, SIGUSR1, SIGUSR2, SIGTERM};
	for (int i = 0; i < 5; i++)
		CHECK_EQ(order[i], want[i]);
}

static void standard_before_realtime(void)
{
	int sigs[] = {SIGRTMIN, SIGTERM, SIGRTMIN + 3, SIGUSR1};
	for (int i = 0; i < 4; i++)
		handle(sigs[i], 0);
	block_all_of(sigs, 4);
	kill(getpid(), SIGRTMIN + 3);
	kill(getpid(), SIGRTMIN);
	kill(getpid(), SIGTERM);
	kill(getpid(), SIGUSR1);
	atomic_store(&norder, 0);
	unblock_all();
	CHECK_EQ(atomic_load(&norder), 4);
	CHECK_EQ(order[0], SIGUSR1);
	CHECK_EQ(order[1], SIGTERM);
	CHECK_EQ(order[2], SIGRTMIN);
	CHECK_EQ(order[3], SIGRTMIN + 3);
}

static void realtime_queue_repeats_in_order(void)
{
	int sigs[] = {SIGRTMIN + 5, SIGRTMIN + 1};
	handle(sigs[0], 0);
	handle(sigs[1], 0);
	block_all_of(sigs, 2);
	for (int i = 0; i < 3; i++) {
		kill(getpid(), SIGRTMIN + 5);
		kill(getpid(), SIGRTMIN + 1);
	}
	atomic_store(&norder, 0);
	unblock_all();
	CHECK_EQ(atomic_load(&norder), 6);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(order[i], SIGRTMIN + 1);
	for (int i = 3; i < 6; i++)
		CHECK_EQ(order[i], SIGRTMIN + 5);
}

static void standard_signal_coalesces(void)
{
	handle(SIGUSR1, 0);
	int sigs[] = {SIGUSR1};
	block_all_of(sigs, 1);
	for (int i = 0; i < 5; i++)
		kill(getpid(), SIGUSR1);
	atomic_store(&norder, 0);
	unblock_all();
	CHECK_EQ(atomic_load(&norder), 1);
}

struct target {
	pid_t tid;
	atomic_int got;
	int block;
};

static __thread struct target *self_target;
static struct target targets[3];

static void note_thread(int sig)
{
	(void)sig;
	if (self_target)
		atomic_fetch_add(&self_target->got, 1);
}

static void *target_thread(void *arg)
{
	struct target *t = arg;
	self_target = t;
	sigset_t s;
	sigemptyset(&s);
	if (t->block)
		sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_SETMASK, &s, NULL);
	__atomic_store_n(&t->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void process_signal_goes_to_unblocking_thread(void)
{
	/* Main and thread 0 and 2 block SIGUSR1; thread 1 does not: every
	 * process-directed SIGUSR1 lands in thread 1. */
	signal(SIGUSR1, note_thread);
	int sigs[] = {SIGUSR1};
	block_all_of(sigs, 1);
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		targets[i].tid = 0;
		atomic_store(&targets[i].got, 0);
		targets[i].block = (i != 1);
		CHECK_RET0(pthread_create(&th[i], NULL, target_thread, &targets[i]));
	}
	for (int i = 0; i < 3; i++)
		while (__atomic_load_n(&targets[i].tid, __ATOMIC_SEQ_CST) == 0)
			sched_yield();
	for (int i = 0; i < 5; i++) {
		kill(getpid(), SIGUSR1);
		for (int j = 0; j < 1000 && atomic_load(&targets[1].got) <= i; j++) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	int g0 = atomic_load(&targets[0].got), g1 = atomic_load(&targets[1].got), g2 = atomic_load(&targets[2].got);
	for (int i = 0; i < 3; i++) {
		pthread_cancel(th[i]);
		pthread_join(th[i], NULL);
	}
	CHECK_EQ(g0, 0);
	CHECK_EQ(g2, 0);
	CHECK_EQ(g1, 5);
}

static void blocked_everywhere_stays_pending(void)
{
	signal(SIGUSR1, note_thread);
	int sigs[] = {SIGUSR1};
	block_all_of(sigs, 1);
	pthread_t th;
	targets[0].tid = 0;
	atomic_store(&targets[0].got, 0);
	targets[0].block = 1;
	CHECK_RET0(pthread_create(&th, NULL, target_thread, &targets[0]));
	while (__atomic_load_n(&targets[0].tid, __ATOMIC_SEQ_CST) == 0)
		sched_yield();
	kill(getpid(), SIGUSR1);
	sigset_t p;
	sigpending(&p);
	CHECK(sigismember(&p, SIGUSR1));
	/* sigtimedwait in the main thread takes the process-wide one. */
	sigset_t w;
	sigemptyset(&w);
	sigaddset(&w, SIGUSR1);
	struct timespec ts = {1, 0};
	CHECK_EQ(sigtimedwait(&w, NULL, &ts), SIGUSR1);
	pthread_cancel(th);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&targets[0].got), 0);
}

static void noop(int sig)
{
	(void)sig;
}

/* interrupt_after arranges SIGALRM in ms milliseconds, with flags. */
static void interrupt_after(int ms, int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = noop;
	sa.sa_flags = flags;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void restart_read_with_sa_restart(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
		if (write(p[1], "k", 1) != 1)
			_exit(1);
		_exit(0);
	}
	interrupt_after(30, SA_RESTART);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'k');
	mt_wait(pid);
}

static void never_restarted_calls(void)
{
	/* poll, select, epoll_wait, nanosleep, sigtimedwait, pause return
	 * EINTR even with SA_RESTART. */
	int p[2];
	CHECK_SYS(pipe(p));
	struct pollfd pf = {p[0], POLLIN, 0};
	interrupt_after(20, SA_RESTART);
	CHECK_ERR(poll(&pf, 1, 5000), EINTR);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	interrupt_after(20, SA_RESTART);
	CHECK_ERR(select(p[0] + 1, &r, NULL, NULL, NULL), EINTR);
	int e = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK_SYS(epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev));
	interrupt_after(20, SA_RESTART);
	CHECK_ERR(epoll_wait(e, &ev, 1, 5000), EINTR);
	interrupt_after(20, SA_RESTART);
	struct timespec ts = {5, 0};
	CHECK_ERR(nanosleep(&ts, NULL), EINTR);
	interrupt_after(20, SA_RESTART);
	CHECK_ERR(pause(), EINTR);
	sigset_t w;
	sigemptyset(&w);
	sigaddset(&w, SIGUSR1);
	interrupt_after(20, SA_RESTART);
	CHECK_ERR(sigtimedwait(&w, NULL, &ts), EINTR);
}

static void nanosleep_remainder(void)
{
	interrupt_after(50, 0);
	struct timespec req = {2, 0}, rem = {0, 0};
	CHECK_ERR(nanosleep(&req, &rem), EINTR);
	int64_t left = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	CHECK_GT(left, 1000 * 1000000LL);
	CHECK_LT(left, 1960 * 1000000LL);
}

static void stopped_and_continued_sleep_completes(void)
{
	/* A sleep interrupted by a stop (no handler) resumes on SIGCONT
	 * through restart_syscall and completes. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec ts = {0, 300 * 1000 * 1000};
		int r = nanosleep(&ts, NULL);
		_exit(r == 0 ? 0 : 1);
	}
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_SYS(kill(pid, SIGCONT));
	st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void restart_syscall_without_restart_is_eintr(void)
{
	/* Calling restart_syscall with nothing to restart gives EINTR. */
	CHECK_ERR(syscall(SYS_restart_syscall), EINTR);
}

static void wait_restarted_with_sa_restart(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec ts = {0, 150 * 1000 * 1000};
		nanosleep(&ts, NULL);
		_exit(5);
	}
	interrupt_after(20, SA_RESTART);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXITED(st, 5);
}

static void handler_runs_before_eintr_return(void)
{
	atomic_store(&norder, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = record;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int p[2];
	CHECK_SYS(pipe(p));
	char c;
	CHECK_ERR(read(p[0], &c, 1), EINTR);
	CHECK_EQ(atomic_load(&norder), 1);
	CHECK_EQ(order[0], SIGALRM);
}

static const struct mt_case cases[] = {
	MT_CASE(standard_signals_lowest_first),
	MT_CASE(standard_before_realtime),
	MT_CASE(realtime_queue_repeats_in_order),
	MT_CASE(standard_signal_coalesces),
	MT_CASE(process_signal_goes_to_unblocking_thread),
	MT_CASE(blocked_everywhere_stays_pending),
	MT_CASE(restart_read_with_sa_restart),
	MT_CASE(never_restarted_calls),
	MT_CASE(nanosleep_remainder),
	MT_CASE(stopped_and_continued_sleep_completes),
	MT_CASE(restart_syscall_without_restart_is_eintr),
	MT_CASE(wait_restarted_with_sa_restart),
	MT_CASE(handler_runs_before_eintr_return),
};

MT_MAIN(cases)
