//go:build ignore

/* signal_thread: thread-directed signals (tgkill, pthread_kill), per-thread
 * masks, sigwait/sigtimedwait, queued real-time signals with values,
 * SA_RESTART vs EINTR, SA_RESETHAND, SA_NODEFER, sa_mask, sigaltstack and
 * the errors of the signal syscalls. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static volatile pid_t handler_tid;
static volatile int handler_count;
static volatile int handler_sig;
static volatile int handler_code;
static volatile int handler_value;
static volatile pid_t handler_pid;

static void on_sig(int sig)
{
	handler_tid = gettid_();
	handler_sig = sig;
	handler_count++;
}

static void on_siginfo(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	handler_tid = gettid_();
	handler_sig = sig;
	handler_code = si->si_code;
	handler_value = si->si_value.sival_int;
	handler_pid = si->si_pid;
	handler_count++;
}

static int install(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	return sigaction(sig, &sa, NULL);
}

static int install_info(int sig, int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_siginfo;
	sa.sa_flags = flags | SA_SIGINFO;
	return sigaction(sig, &sa, NULL);
}

static void reset_handler_state(void)
{
	handler_tid = 0;
	handler_count = 0;
	handler_sig = 0;
	handler_code = 0;
	handler_value = 0;
	handler_pid = 0;
}

/* A worker thread that reports its tid and spins until told to stop. */
static volatile int worker_stop;
static volatile pid_t worker_tid;

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = gettid_();
	while (!worker_stop)
		usleep(1000);
	return NULL;
}

static int start_worker(pthread_t *th)
{
	worker_stop = 0;
	worker_tid = 0;
	if (pthread_create(th, NULL, worker, NULL) != 0)
		return -1;
	while (!worker_tid)
		usleep(100);
	return 0;
}

static void stop_worker(pthread_t th)
{
	worker_stop = 1;
	pthread_join(th, NULL);
}

static void wait_count(int n)
{
	for (int i = 0; i < 2000 && handler_count < n; i++)
		usleep(1000);
}

static void tgkill_hits_that_thread(void)
{
	pthread_t th;
	reset_handler_state();
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	CHECK_SYS(start_worker(&th));
	CHECK_SYS(syscall(SYS_tgkill, getpid(), worker_tid, SIGUSR1));
	wait_count(1);
	pid_t wt = worker_tid;
	stop_worker(th);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_tid, wt);
	CHECK_EQ(handler_sig, SIGUSR1);
}

static void tgkill_main_thread(void)
{
	pthread_t th;
	reset_handler_state();
	CHECK_SYS(install(SIGUSR2, on_sig, 0));
	CHECK_SYS(start_worker(&th));
	CHECK_SYS(syscall(SYS_tgkill, getpid(), gettid_(), SIGUSR2));
	stop_worker(th);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_tid, gettid_());
}

static void pthread_kill_hits_that_thread(void)
{
	pthread_t th;
	reset_handler_state();
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	CHECK_SYS(start_worker(&th));
	CHECK_RET0(pthread_kill(th, SIGUSR1));
	wait_count(1);
	pid_t wt = worker_tid;
	stop_worker(th);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_tid, wt);
}

static void tgkill_errors(void)
{
	CHECK_ERR(syscall(SYS_tgkill, getpid(), 424242, SIGUSR1), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, 424242, gettid_(), 0), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, -1, gettid_(), SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, getpid(), 0, SIGUSR1), EINVAL);
	CHECK_ERR(syscall(SYS_tgkill, getpid(), gettid_(), 65), EINVAL);
	CHECK_ERR(syscall(SYS_tkill, 0, SIGUSR1), EINVAL);
	CHECK_EQ(syscall(SYS_tgkill, getpid(), gettid_(), 0), 0);
}

/* Process-directed signal goes to a thread that does not block it. */
static void *unblocked_waiter(void *arg)
{
	(void)arg;
	sigset_t s;
	sigemptyset(&s);
	pthread_sigmask(SIG_SETMASK, &s, NULL);
	worker_tid = gettid_();
	while (!handler_count && !worker_stop)
		usleep(1000);
	return NULL;
}

static void process_signal_to_unblocked_thread(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_RET0(pthread_sigmask(SIG_BLOCK, &s, NULL));
	pthread_t th;
	worker_tid = 0;
	worker_stop = 0;
	CHECK_RET0(pthread_create(&th, NULL, unblocked_waiter, NULL));
	while (!worker_tid)
		usleep(100);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	wait_count(1);
	worker_stop = 1;
	pid_t wt = worker_tid;
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_tid, wt);
}

static void *mask_reporter(void *arg)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return (void *)(long)sigismember(&cur, (int)(long)arg);
}

static void thread_inherits_mask(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CHECK_RET0(pthread_sigmask(SIG_BLOCK, &s, NULL));
	pthread_t th;
	void *r;
	CHECK_RET0(pthread_create(&th, NULL, mask_reporter, (void *)(long)SIGUSR2));
	CHECK_RET0(pthread_join(th, &r));
	CHECK_EQ((long)r, 1);
	CHECK_RET0(pthread_create(&th, NULL, mask_reporter, (void *)(long)SIGHUP));
	CHECK_RET0(pthread_join(th, &r));
	CHECK_EQ((long)r, 0);
}

static volatile int thread_pending_seen;

static void *pending_checker(void *arg)
{
	(void)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	worker_tid = gettid_();
	while (!worker_stop)
		usleep(1000);
	sigset_t p;
	sigpending(&p);
	thread_pending_seen = sigismember(&p, SIGUSR2);
	/* Consume it so it does not leak into the next case. */
	int sig;
	if (thread_pending_seen)
		sigwait(&s, &sig);
	return NULL;
}

static void thread_directed_stays_with_thread(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGUSR2, on_sig, 0));
	worker_tid = 0;
	worker_stop = 0;
	thread_pending_seen = -1;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, pending_checker, NULL));
	while (!worker_tid)
		usleep(100);
	CHECK_SYS(syscall(SYS_tgkill, getpid(), worker_tid, SIGUSR2));
	usleep(20000);
	/* The main thread does not block it, but it must not get it. */
	CHECK_EQ(handler_count, 0);
	sigset_t p;
	CHECK_SYS(sigpending(&p));
	CHECK_EQ(sigismember(&p, SIGUSR2), 0);
	worker_stop = 1;
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(thread_pending_seen, 1);
	CHECK_EQ(handler_count, 0);
}

static volatile int sigwait_result;

static void *sigwaiter(void *arg)
{
	sigset_t *set = arg;
	int sig = 0;
	worker_tid = gettid_();
	if (sigwait(set, &sig) != 0)
		sig = -1;
	sigwait_result = sig;
	return NULL;
}

static void sigwait_in_thread(void)
{
	static sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CHECK_RET0(pthread_sigmask(SIG_BLOCK, &s, NULL));
	pthread_t th;
	worker_tid = 0;
	sigwait_result = 0;
	CHECK_RET0(pthread_create(&th, NULL, sigwaiter, &s));
	while (!worker_tid)
		usleep(100);
	usleep(10000);
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(sigwait_result, SIGUSR2);
}

static void sigtimedwait_timeout(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	struct timespec ts = { 0, 30 * 1000000L };
	int64_t t0 = mt_now_ns();
	CHECK_ERR(sigtimedwait(&s, NULL, &ts), EAGAIN);
	CHECK_GE(mt_now_ns() - t0, 25 * 1000000LL);
	struct timespec zero = { 0, 0 };
	CHECK_ERR(sigtimedwait(&s, NULL, &zero), EAGAIN);
	struct timespec bad = { 0, 1000000000L };
	CHECK_ERR(sigtimedwait(&s, NULL, &bad), EINVAL);
}

static void sigtimedwait_pending_tkill(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(raise(SIGUSR1));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	struct timespec ts = { 1, 0 };
	CHECK_EQ(sigtimedwait(&s, &si, &ts), SIGUSR1);
	CHECK_EQ(si.si_signo, SIGUSR1);
	/* SI_TKILL on most kernels; recent ones (6.18 here) report SI_USER. */
	CHECK(si.si_code == SI_TKILL || si.si_code == SI_USER);
	CHECK_EQ(si.si_pid, getpid());
	CHECK_EQ(si.si_uid, getuid());
}

static void sigwaitinfo_kill_si_user(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(kill(getpid(), SIGUSR2));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigwaitinfo(&s, &si), SIGUSR2);
	CHECK_EQ(si.si_code, SI_USER);
	CHECK_EQ(si.si_pid, getpid());
}

static void sigqueue_value_delivered(void)
{
	reset_handler_state();
	CHECK_SYS(install_info(SIGRTMIN, 0));
	union sigval v = { .sival_int = 1234 };
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN, v));
	wait_count(1);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_sig, SIGRTMIN);
	CHECK_EQ(handler_code, SI_QUEUE);
	CHECK_EQ(handler_value, 1234);
	CHECK_EQ(handler_pid, getpid());
}

static void rt_sigqueueinfo_raw(void)
{
	reset_handler_state();
	CHECK_SYS(install_info(SIGRTMIN + 2, 0));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGRTMIN + 2;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = 77;
	CHECK_SYS(syscall(SYS_rt_sigqueueinfo, getpid(), SIGRTMIN + 2, &si));
	wait_count(1);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_value, 77);
	CHECK_EQ(handler_code, SI_QUEUE);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), SIGRTMIN + 2, (void *)8), EFAULT);
	/* A non-negative si_code (here SI_USER) may not be forged for another
	 * process (it may for oneself). */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (;;)
			pause();
	}
	si.si_code = SI_USER;
	errno = 0;
	long r = syscall(SYS_rt_sigqueueinfo, pid, SIGRTMIN + 2, &si);
	int e = errno;
	kill(pid, SIGKILL);
	mt_wait(pid);
	CHECK_EQ(r, -1);
	CHECK_EQ(e, EPERM);
}

static void rt_tgsigqueueinfo_thread(void)
{
	pthread_t th;
	reset_handler_state();
	CHECK_SYS(install_info(SIGRTMIN + 3, 0));
	CHECK_SYS(start_worker(&th));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGRTMIN + 3;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_value.sival_int = 4242;
	CHECK_SYS(syscall(SYS_rt_tgsigqueueinfo, getpid(), worker_tid, SIGRTMIN + 3, &si));
	wait_count(1);
	pid_t wt = worker_tid;
	stop_worker(th);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_tid, wt);
	CHECK_EQ(handler_value, 4242);
}

static volatile int rt_values[8];
static volatile int rt_n;

static void on_rt_record(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (rt_n < 8)
		rt_values[rt_n] = si->si_value.sival_int;
	rt_n++;
}

static void rt_signals_queue_in_order(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt_record;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGRTMIN + 1, &sa, NULL));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	rt_n = 0;
	for (int i = 1; i <= 3; i++) {
		union sigval v = { .sival_int = i * 10 };
		CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 1, v));
	}
	CHECK_EQ(rt_n, 0);
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CHECK_EQ(rt_n, 3);
	CHECK_EQ(rt_values[0], 10);
	CHECK_EQ(rt_values[1], 20);
	CHECK_EQ(rt_values[2], 30);
}

static void rt_signals_lowest_first(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt_record;
	sa.sa_flags = SA_SIGINFO;
	/* Block all in the handler so one handler finishes before the next
	 * signal is delivered (otherwise the second nests inside the first). */
	sigfillset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGRTMIN + 4, &sa, NULL));
	CHECK_SYS(sigaction(SIGRTMIN + 5, &sa, NULL));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 4);
	sigaddset(&s, SIGRTMIN + 5);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	rt_n = 0;
	union sigval v5 = { .sival_int = 5 }, v4 = { .sival_int = 4 };
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 5, v5));
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 4, v4));
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CHECK_EQ(rt_n, 2);
	CHECK_EQ(rt_values[0], 4);
	CHECK_EQ(rt_values[1], 5);
}

static void standard_signals_do_not_queue(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	/* Thread-directed pending set: one instance. */
	CHECK_SYS(raise(SIGUSR1));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(handler_count, 0);
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CHECK_EQ(handler_count, 1);
}

/* SA_RESTART: a pipe read interrupted by a handled signal. */
static int rp[2];
static volatile ssize_t reader_ret;
static volatile int reader_errno;
static volatile char reader_byte;

static void *pipe_reader(void *arg)
{
	(void)arg;
	char c = 0;
	worker_tid = gettid_();
	ssize_t r = read(rp[0], &c, 1);
	reader_errno = errno;
	reader_byte = c;
	reader_ret = r;
	return NULL;
}

static void run_interrupted_read(int flags)
{
	reset_handler_state();
	if (install(SIGUSR1, on_sig, flags) != 0)
		return;
	if (pipe(rp) != 0)
		return;
	pthread_t th;
	worker_tid = 0;
	reader_ret = -2;
	reader_errno = 0;
	reader_byte = 0;
	pthread_create(&th, NULL, pipe_reader, NULL);
	while (!worker_tid)
		usleep(100);
	mt_wait_blocked(worker_tid, 5000); /* asleep in read */
	pthread_kill(th, SIGUSR1);
	wait_count(1);
	usleep(20000);
	if (write(rp[1], "x", 1) != 1)
		return;
	pthread_join(th, NULL);
}

static void sa_restart_read_continues(void)
{
	run_interrupted_read(SA_RESTART);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(reader_ret, 1);
	CHECK_EQ(reader_byte, 'x');
}

static void no_sa_restart_read_eintr(void)
{
	run_interrupted_read(0);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(reader_ret, -1);
	CHECK_EQ(reader_errno, EINTR);
}

static void sa_resethand_once(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGUSR2, on_sig, SA_RESETHAND));
	CHECK_SYS(raise(SIGUSR2));
	CHECK_EQ(handler_count, 1);
	struct sigaction cur;
	CHECK_SYS(sigaction(SIGUSR2, NULL, &cur));
	CHECK(cur.sa_handler == SIG_DFL);
	/* Linux resets only the handler; the flags read back unchanged. */
	CHECK_EQ(cur.sa_flags & SA_RESETHAND, SA_RESETHAND);
}

static volatile int nest_depth, nest_max, nest_calls;
static volatile int blocked_inside;

static void on_nest(int sig)
{
	nest_depth++;
	nest_calls++;
	if (nest_depth > nest_max)
		nest_max = nest_depth;
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	if (nest_calls == 1) {
		blocked_inside = sigismember(&cur, sig);
		raise(sig);
	}
	nest_depth--;
}

static void sa_nodefer_nests(void)
{
	nest_depth = nest_max = nest_calls = 0;
	CHECK_SYS(install(SIGUSR1, on_nest, SA_NODEFER));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(nest_calls, 2);
	CHECK_EQ(nest_max, 2);
	CHECK_EQ(blocked_inside, 0);
}

static void default_defers_same_signal(void)
{
	nest_depth = nest_max = nest_calls = 0;
	CHECK_SYS(install(SIGUSR1, on_nest, 0));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(nest_calls, 2);
	/* The raise inside ran after the handler returned: depth 1 twice. */
	CHECK_EQ(nest_max, 1);
	CHECK_EQ(blocked_inside, 1);
}

static volatile int usr2_blocked_in_handler;

static void on_check_mask(int sig)
{
	(void)sig;
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	usr2_blocked_in_handler = sigismember(&cur, SIGUSR2);
}

static void sa_mask_applied(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_check_mask;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	usr2_blocked_in_handler = -1;
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(usr2_blocked_in_handler, 1);
	/* And the mask is restored afterwards. */
	sigset_t cur;
	CHECK_SYS(sigprocmask(SIG_BLOCK, NULL, &cur));
	CHECK_EQ(sigismember(&cur, SIGUSR2), 0);
}

static char *altstack;
static volatile uintptr_t handler_sp;
static volatile int ss_flags_inside;
static volatile int ss_change_errno;

static void on_alt(int sig)
{
	int local;
	(void)sig;
	handler_sp = (uintptr_t)&local;
	stack_t cur;
	sigaltstack(NULL, &cur);
	ss_flags_inside = cur.ss_flags;
	stack_t other = { .ss_sp = altstack, .ss_size = 65536, .ss_flags = 0 };
	ss_change_errno = sigaltstack(&other, NULL) == -1 ? errno : 0;
}

static void sigaltstack_onstack(void)
{
	size_t sz = 65536;
	static char stackmem[65536] __attribute__((aligned(16)));
	altstack = stackmem;
	stack_t ss = { .ss_sp = altstack, .ss_size = sz, .ss_flags = 0 };
	CHECK_SYS(sigaltstack(&ss, NULL));
	stack_t cur;
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK(cur.ss_sp == altstack);
	CHECK_EQ(cur.ss_size, sz);
	CHECK_EQ(cur.ss_flags, 0);
	CHECK_SYS(install(SIGUSR1, on_alt, SA_ONSTACK));
	handler_sp = 0;
	CHECK_SYS(raise(SIGUSR1));
	CHECK_GE(handler_sp, (uintptr_t)altstack);
	CHECK_LT(handler_sp, (uintptr_t)altstack + sz);
	CHECK_EQ(ss_flags_inside, SS_ONSTACK);
	CHECK_EQ(ss_change_errno, EPERM);
}

static void sigaltstack_not_onstack_without_flag(void)
{
	static char stackmem[65536] __attribute__((aligned(16)));
	altstack = stackmem;
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(stackmem), .ss_flags = 0 };
	CHECK_SYS(sigaltstack(&ss, NULL));
	CHECK_SYS(install(SIGUSR1, on_alt, 0));
	handler_sp = 0;
	CHECK_SYS(raise(SIGUSR1));
	CHECK(handler_sp < (uintptr_t)altstack || handler_sp >= (uintptr_t)altstack + sizeof(stackmem));
	CHECK_EQ(ss_flags_inside, 0);
}

static void sigaltstack_errors(void)
{
	static char small[1024];
	stack_t ss = { .ss_sp = small, .ss_size = sizeof(small), .ss_flags = 0 };
	CHECK_ERR(sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_size = 65536;
	ss.ss_flags = 0x1234;
	CHECK_ERR(sigaltstack(&ss, NULL), EINVAL);
	CHECK_ERR(sigaltstack((stack_t *)8, NULL), EFAULT);
	stack_t off = { .ss_flags = SS_DISABLE };
	CHECK_SYS(sigaltstack(&off, NULL));
	stack_t cur;
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK_EQ(cur.ss_flags, SS_DISABLE);
}

static void sigaction_errors(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(SIGSTOP, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(0, &sa, NULL), EINVAL);
	CHECK_ERR(sigaction(65, &sa, NULL), EINVAL);
	/* Querying SIGKILL is fine. */
	struct sigaction old;
	CHECK_SYS(sigaction(SIGKILL, NULL, &old));
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, (void *)8, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 4), EINVAL);
}

static void sigaction_roundtrip(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGHUP);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	memset(&old, 0, sizeof(old));
	CHECK_SYS(sigaction(SIGUSR1, NULL, &old));
	CHECK(old.sa_handler == on_sig);
	CHECK_EQ(old.sa_flags & (SA_RESTART | SA_NODEFER), SA_RESTART | SA_NODEFER);
	CHECK_EQ(sigismember(&old.sa_mask, SIGHUP), 1);
	CHECK_EQ(sigismember(&old.sa_mask, SIGINT), 0);
}

static void sigprocmask_errors_and_unblockable(void)
{
	sigset_t s, cur;
	sigemptyset(&s);
	CHECK_ERR(sigprocmask(42, &s, NULL), EINVAL);
	sigaddset(&s, SIGKILL);
	sigaddset(&s, SIGSTOP);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(sigprocmask(SIG_BLOCK, NULL, &cur));
	CHECK_EQ(sigismember(&cur, SIGKILL), 0);
	CHECK_EQ(sigismember(&cur, SIGSTOP), 0);
	CHECK_EQ(sigismember(&cur, SIGUSR1), 1);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, NULL, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, 8), EFAULT);
}

static void sigpending_shows_blocked(void)
{
	sigset_t s, p;
	sigemptyset(&s);
	sigaddset(&s, SIGHUP);
	CHECK_SYS(install(SIGHUP, on_sig, 0));
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(raise(SIGHUP));
	CHECK_SYS(sigpending(&p));
	CHECK_EQ(sigismember(&p, SIGHUP), 1);
	CHECK_EQ(sigismember(&p, SIGUSR1), 0);
	reset_handler_state();
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CHECK_EQ(handler_count, 1);
	CHECK_SYS(sigpending(&p));
	CHECK_EQ(sigismember(&p, SIGHUP), 0);
}

static void ignored_signal_discarded(void)
{
	CHECK_SYS(install(SIGUSR1, SIG_IGN, 0));
	sigset_t s, p;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_SYS(sigpending(&p));
	/* Blocked-and-ignored signals stay pending on Linux. */
	CHECK_EQ(sigismember(&p, SIGUSR1), 1);
	/* Setting SIG_IGN discards a pending signal. */
	CHECK_SYS(install(SIGUSR1, SIG_IGN, 0));
	CHECK_SYS(sigpending(&p));
	CHECK_EQ(sigismember(&p, SIGUSR1), 0);
}

static void on_alarm(int sig)
{
	(void)sig;
	handler_count++;
}

static void sigsuspend_returns_eintr(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, &old));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(handler_count, 0);
	CHECK_ERR(sigsuspend(&old), EINTR);
	CHECK_EQ(handler_count, 1);
	/* The mask is back to what it was before sigsuspend. */
	sigset_t cur;
	CHECK_SYS(sigprocmask(SIG_BLOCK, NULL, &cur));
	CHECK_EQ(sigismember(&cur, SIGUSR1), 1);
}

static void pause_returns_eintr(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGALRM, on_alarm, 0));
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	CHECK_ERR(pause(), EINTR);
	CHECK_EQ(handler_count, 1);
}

static void kill_from_child_siginfo(void)
{
	reset_handler_state();
	CHECK_SYS(install_info(SIGUSR1, 0));
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, &old));
	pid_t parent = getpid();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		kill(parent, SIGUSR1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	sigsuspend(&old);
	CHECK_EQ(handler_count, 1);
	CHECK_EQ(handler_pid, pid);
	CHECK_EQ(handler_code, SI_USER);
}

static void fork_inherits_handlers_not_pending(void)
{
	reset_handler_state();
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_SYS(raise(SIGUSR1));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t p, cur;
		sigpending(&p);
		CHILD_CHECK(sigismember(&p, SIGUSR1) == 0);
		sigprocmask(SIG_BLOCK, NULL, &cur);
		CHILD_CHECK(sigismember(&cur, SIGUSR1) == 1);
		struct sigaction sa;
		sigaction(SIGUSR1, NULL, &sa);
		CHILD_CHECK(sa.sa_handler == on_sig);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CHECK_EQ(handler_count, 1);
}

static void exec_resets_handlers_keeps_ignored_and_mask(void)
{
	CHECK_SYS(install(SIGUSR1, on_sig, 0));
	CHECK_SYS(install(SIGUSR2, SIG_IGN, 0));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "x", "child-sigstate", NULL };
		execve("/proc/self/exe", args, environ);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static int child_sigstate(void)
{
	struct sigaction a, b;
	sigaction(SIGUSR1, NULL, &a);
	sigaction(SIGUSR2, NULL, &b);
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	if (a.sa_handler != SIG_DFL)
		return 1;
	if (b.sa_handler != SIG_IGN)
		return 2;
	if (sigismember(&cur, SIGTERM) != 1)
		return 3;
	return 0;
}

static void kill_sig0_and_einval(void)
{
	CHECK_SYS(kill(getpid(), 0));
	CHECK_ERR(kill(getpid(), -1), EINVAL);
	CHECK_ERR(kill(getpid(), 65), EINVAL);
}

static const struct mt_case cases[] = {
	MT_CASE(tgkill_hits_that_thread),
	MT_CASE(tgkill_main_thread),
	MT_CASE(pthread_kill_hits_that_thread),
	MT_CASE(tgkill_errors),
	MT_CASE(process_signal_to_unblocked_thread),
	MT_CASE(thread_inherits_mask),
	MT_CASE(thread_directed_stays_with_thread),
	MT_CASE(sigwait_in_thread),
	MT_CASE(sigtimedwait_timeout),
	MT_CASE(sigtimedwait_pending_tkill),
	MT_CASE(sigwaitinfo_kill_si_user),
	MT_CASE(sigqueue_value_delivered),
	MT_CASE(rt_sigqueueinfo_raw),
	MT_CASE(rt_tgsigqueueinfo_thread),
	MT_CASE(rt_signals_queue_in_order),
	MT_CASE(rt_signals_lowest_first),
	MT_CASE(standard_signals_do_not_queue),
	MT_CASE(sa_restart_read_continues),
	MT_CASE(no_sa_restart_read_eintr),
	MT_CASE(sa_resethand_once),
	MT_CASE(sa_nodefer_nests),
	MT_CASE(default_defers_same_signal),
	MT_CASE(sa_mask_applied),
	MT_CASE(sigaltstack_onstack),
	MT_CASE(sigaltstack_not_onstack_without_flag),
	MT_CASE(sigaltstack_errors),
	MT_CASE(sigaction_errors),
	MT_CASE(sigaction_roundtrip),
	MT_CASE(sigprocmask_errors_and_unblockable),
	MT_CASE(sigpending_shows_blocked),
	MT_CASE(ignored_signal_discarded),
	MT_CASE(sigsuspend_returns_eintr),
	MT_CASE(pause_returns_eintr),
	MT_CASE(kill_from_child_siginfo),
	MT_CASE(fork_inherits_handlers_not_pending),
	MT_CASE(exec_resets_handlers_keeps_ignored_and_mask),
	MT_CASE(kill_sig0_and_einval),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "child-sigstate") == 0)
		return child_sigstate();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
