//go:build ignore

/* sigsuspend_threads: waiting for signals in threads: a process-directed
 * signal blocked everywhere but in one thread's sigsuspend mask wakes that
 * thread, pause and sigsuspend in a thread return EINTR only after a
 * handler ran there, sigtimedwait in two threads splits queued real-time
 * signals, and the saved mask is restored after sigsuspend in a thread. */
#include "moattest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int handled_by;
static atomic_int ready_tid;

static void note(int sig)
{
	(void)sig;
	atomic_store(&handled_by, (int)syscall(SYS_gettid));
}

static void block_usr1(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void *suspender(void *arg)
{
	(void)arg;
	/* Blocked normally; open only while suspended. */
	block_usr1();
	sigset_t during;
	sigemptyset(&during);
	atomic_store(&ready_tid, (int)syscall(SYS_gettid));
	int r = sigsuspend(&during);
	int ok = (r == -1 && errno == EINTR);
	sigset_t after;
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	ok = ok && sigismember(&after, SIGUSR1);
	return (void *)(long)ok;
}

static void process_signal_wakes_suspended_thread(void)
{
	signal(SIGUSR1, note);
	block_usr1();
	atomic_store(&handled_by, 0);
	atomic_store(&ready_tid, 0);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, suspender, NULL));
	while (atomic_load(&ready_tid) == 0)
		sched_yield();
	CHECK_EQ(mt_wait_blocked(atomic_load(&ready_tid), 5000), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	void *ok;
	pthread_join(th, &ok);
	CHECK_EQ((long)ok, 1);
	CHECK_EQ(atomic_load(&handled_by), atomic_load(&ready_tid));
}

static void *pauser(void *arg)
{
	(void)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	atomic_store(&ready_tid, (int)syscall(SYS_gettid));
	int r = pause();
	return (void *)(long)(r == -1 && errno == EINTR && atomic_load(&handled_by) == (int)syscall(SYS_gettid));
}

static void pause_in_thread_returns_after_its_handler(void)
{
	signal(SIGUSR2, note);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_BLOCK, &s, NULL); /* main thread: blocked */
	atomic_store(&handled_by, 0);
	atomic_store(&ready_tid, 0);
	pthread_t th;
	/* The thread starts with our mask; it unblocks SIGUSR2 itself. */
	CHECK_RET0(pthread_create(&th, NULL, pauser, NULL));
	while (atomic_load(&ready_tid) == 0)
		sched_yield();
	CHECK_EQ(mt_wait_blocked(atomic_load(&ready_tid), 5000), 0);
	CHECK_SYS(syscall(SYS_tgkill, getpid(), atomic_load(&ready_tid), SIGUSR2));
	void *ok;
	pthread_join(th, &ok);
	CHECK_EQ((long)ok, 1);
}

static atomic_int taken[2];

static void *rt_taker(void *arg)
{
	int idx = (int)(long)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	for (;;) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		if (sigtimedwait(&s, NULL, &ts) < 0)
			break;
		atomic_fetch_add(&taken[idx], 1);
	}
	return NULL;
}

static void two_waiters_split_queue(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &s, NULL);
	atomic_store(&taken[0], 0);
	atomic_store(&taken[1], 0);
	for (int i = 0; i < 20; i++) {
		union sigval v = {i};
		CHECK_SYS(sigqueue(getpid(), SIGRTMIN, v));
	}
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, rt_taker, (void *)i));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* Every queued signal taken exactly once. */
	CHECK_EQ(atomic_load(&taken[0]) + atomic_load(&taken[1]), 20);
	sigset_t p;
	sigpending(&p);
	CHECK(!sigismember(&p, SIGRTMIN));
}

static void *masked_waiter(void *arg)
{
	(void)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	/* sigtimedwait takes a signal even when it is blocked here. */
	struct timespec ts = {5, 0};
	siginfo_t si;
	int r = sigtimedwait(&s, &si, &ts);
	return (void *)(long)r;
}

static void thread_directed_signal_not_taken_by_other(void)
{
	block_usr1();
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, masked_waiter, NULL));
	/* A signal for the main thread only: the waiter must not get it. */
	CHECK_SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1));
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	sigset_t p;
	sigpending(&p);
	CHECK(sigismember(&p, SIGUSR1));
	/* A process-directed one reaches it. */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	void *r;
	pthread_join(th, &r);
	CHECK_EQ((long)r, SIGUSR1);
	/* Ours is still pending for us. */
	sigset_t w;
	sigemptyset(&w);
	sigaddset(&w, SIGUSR1);
	struct timespec zero = {0, 0};
	CHECK_EQ(sigtimedwait(&w, NULL, &zero), SIGUSR1);
}

static const struct mt_case cases[] = {
	MT_CASE(process_signal_wakes_suspended_thread),
	MT_CASE(pause_in_thread_returns_after_its_handler),
	MT_CASE(two_waiters_split_queue),
	MT_CASE(thread_directed_signal_not_taken_by_other),
};

MT_MAIN(cases)
