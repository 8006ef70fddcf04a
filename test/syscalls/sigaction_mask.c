//go:build ignore

/* sigaction_mask: rt_sigaction, rt_sigprocmask, rt_sigpending,
 * rt_sigsuspend, rt_sigtimedwait and sigaltstack: argument checking
 * (sigsetsize, bad pointers, bad signals), mask arithmetic, and the rules
 * for SIGKILL/SIGSTOP. Raw syscalls where libc would hide an error. */
#include "moattest.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The kernel's struct sigaction for rt_sigaction. */
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

#define SA_RESTORER_FLAG 0x04000000

static volatile int hits;

static void count_handler(int sig)
{
	(void)sig;
	hits++;
}

static uint64_t bit(int sig)
{
	return 1ULL << (sig - 1);
}

static void rt_sigaction_sigsetsize(void)
{
	struct ksigaction ka;
	memset(&ka, 0, sizeof(ka));
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &ka, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &ka, 16), EINVAL);
	CHECK_EQ(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &ka, 8), 0);
}

static void rt_sigaction_bad_signals(void)
{
	struct ksigaction ka;
	memset(&ka, 0, sizeof(ka));
	ka.handler = SIG_IGN;
	CHECK_ERR(syscall(SYS_rt_sigaction, 0, &ka, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, 65, &ka, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, -1, &ka, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGKILL, &ka, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGSTOP, &ka, NULL, 8), EINVAL);
	/* Reading the action of SIGKILL is allowed. */
	CHECK_EQ(syscall(SYS_rt_sigaction, SIGKILL, NULL, &ka, 8), 0);
	CHECK(ka.handler == SIG_DFL);
}

static void rt_sigaction_efault(void)
{
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, (void *)1, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, (void *)1, 8), EFAULT);
}

static void rt_sigaction_roundtrip_fields(void)
{
	struct ksigaction ka, old;
	memset(&ka, 0, sizeof(ka));
	ka.handler = count_handler;
	ka.flags = SA_RESTART | SA_NODEFER | SA_RESTORER_FLAG | SA_ONSTACK;
	ka.restorer = (void (*)(void))0x1234;
	ka.mask = bit(SIGUSR2) | bit(SIGKILL) | bit(SIGSTOP);
	CHECK_EQ(syscall(SYS_rt_sigaction, SIGUSR1, &ka, NULL, 8), 0);
	memset(&old, 0, sizeof(old));
	CHECK_EQ(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 8), 0);
	CHECK(old.handler == count_handler);
	CHECK_EQ(old.flags, ka.flags);
	CHECK(old.restorer == ka.restorer);
	/* SIGKILL and SIGSTOP are dropped from the handler mask. */
	CHECK_EQ(old.mask, bit(SIGUSR2));
	/* The old value comes back when replacing. */
	struct ksigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	CHECK_EQ(syscall(SYS_rt_sigaction, SIGUSR1, &dfl, &old, 8), 0);
	CHECK(old.handler == count_handler);
}

static void sig_ign_discards_pending(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGUSR1, count_handler);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	sigset_t pend;
	CHECK_SYS(sigpending(&pend));
	CHECK(sigismember(&pend, SIGUSR1));
	signal(SIGUSR1, SIG_IGN);
	CHECK_SYS(sigpending(&pend));
	CHECK(!sigismember(&pend, SIGUSR1));
	/* A blocked signal is queued even while ignored. */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(sigpending(&pend));
	CHECK(sigismember(&pend, SIGUSR1));
}

static void sigchld_default_discards(void)
{
	/* SIGCHLD's default action is to ignore: an unblocked one leaves
	 * nothing pending. */
	CHECK_SYS(kill(getpid(), SIGCHLD));
	sigset_t pend;
	CHECK_SYS(sigpending(&pend));
	CHECK(!sigismember(&pend, SIGCHLD));
}

static void rt_sigprocmask_how_values(void)
{
	uint64_t set, old;
	set = bit(SIGUSR1);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &set, NULL, 8), 0);
	set = bit(SIGUSR2);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &old, 8), 0);
	CHECK_EQ(old, bit(SIGUSR1));
	set = bit(SIGUSR1);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, &old, 8), 0);
	CHECK_EQ(old, bit(SIGUSR1) | bit(SIGUSR2));
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &old, 8), 0);
	CHECK_EQ(old, bit(SIGUSR2));
	/* An invalid how with a NULL set is not checked. */
	CHECK_EQ(syscall(SYS_rt_sigprocmask, 7, NULL, &old, 8), 0);
}

static void rt_sigprocmask_errors(void)
{
	uint64_t set = 0, old;
	CHECK_ERR(syscall(SYS_rt_sigprocmask, 3, &set, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, -1, &set, NULL, 8), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 16), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)1, NULL, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, (void *)1, 8), EFAULT);
	(void)old;
}

static void sigprocmask_kill_stop_unblockable(void)
{
	uint64_t set = ~0ULL, old;
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &set, NULL, 8), 0);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &old, 8), 0);
	CHECK_EQ(old, ~0ULL & ~(bit(SIGKILL) | bit(SIGSTOP)));
}

static void sigpending_union_of_thread_and_process(void)
{
	uint64_t set = bit(SIGUSR1) | bit(SIGUSR2);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR2));
	uint64_t pend = 0;
	CHECK_EQ(syscall(SYS_rt_sigpending, &pend, 8), 0);
	CHECK_EQ(pend & set, set);
	CHECK_ERR(syscall(SYS_rt_sigpending, &pend, 16), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigpending, (void *)1, 8), EFAULT);
	/* sigsetsize below 8 is accepted by rt_sigpending (it copies that
	 * many bytes). */
	uint32_t small = 0;
	CHECK_EQ(syscall(SYS_rt_sigpending, &small, 4), 0);
	CHECK_EQ(small & (uint32_t)set, (uint32_t)set);
}

static void sigsuspend_replaces_mask_and_restores(void)
{
	signal(SIGUSR1, count_handler);
	uint64_t set = bit(SIGUSR1);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	hits = 0;
	uint64_t during = bit(SIGUSR2);
	CHECK_ERR(syscall(SYS_rt_sigsuspend, &during, 8), EINTR);
	CHECK_EQ(hits, 1);
	uint64_t now;
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, 8), 0);
	CHECK_EQ(now, bit(SIGUSR1));
}

static void sigsuspend_errors(void)
{
	uint64_t set = 0;
	CHECK_ERR(syscall(SYS_rt_sigsuspend, &set, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigsuspend, (void *)1, 8), EFAULT);
}

static void sigtimedwait_errors(void)
{
	uint64_t set = bit(SIGUSR1);
	siginfo_t si;
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, &si, &bad, 8), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, &si, &neg, 8), EINVAL);
	struct timespec zero = {0, 0};
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, &si, &zero, 8), EAGAIN);
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, &si, &zero, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, (void *)1, &si, &zero, 8), EFAULT);
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, &si, (void *)1, 8), EFAULT);
}

static void sigtimedwait_timeout_elapses(void)
{
	uint64_t set = bit(SIGUSR1);
	struct timespec ts = {0, 50 * 1000 * 1000};
	int64_t t0 = mt_now_ns();
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, NULL, &ts, 8), EAGAIN);
	CHECK_GE(mt_now_ns() - t0, 49 * 1000 * 1000);
}

static void sigtimedwait_takes_lowest_first(void)
{
	uint64_t set = bit(SIGUSR1) | bit(SIGUSR2) | bit(SIGHUP);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), 0);
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGHUP);
	kill(getpid(), SIGUSR1);
	struct timespec zero = {0, 0};
	CHECK_EQ(syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, 8), SIGHUP);
	CHECK_EQ(syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, 8), SIGUSR1);
	CHECK_EQ(syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, 8), SIGUSR2);
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, 8), EAGAIN);
}

static void sigtimedwait_unblocked_signal_runs_handler(void)
{
	/* A signal outside the waited set that is delivered interrupts the
	 * wait with EINTR. */
	signal(SIGALRM, count_handler);
	hits = 0;
	alarm(1);
	uint64_t set = bit(SIGUSR1);
	struct timespec ts = {10, 0};
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, NULL, &ts, 8), EINTR);
	CHECK_EQ(hits, 1);
}

static void sigaltstack_query_and_set(void)
{
	static char mem[65536];
	stack_t ss, old;
	memset(&old, 0, sizeof(old));
	CHECK_SYS(sigaltstack(NULL, &old));
	CHECK_EQ(old.ss_flags, SS_DISABLE);
	ss.ss_sp = mem;
	ss.ss_size = sizeof(mem);
	ss.ss_flags = 0;
	CHECK_SYS(sigaltstack(&ss, NULL));
	CHECK_SYS(sigaltstack(NULL, &old));
	CHECK(old.ss_sp == mem);
	CHECK_EQ(old.ss_size, sizeof(mem));
	CHECK_EQ(old.ss_flags, 0);
	/* Disabling ignores sp and size. */
	ss.ss_flags = SS_DISABLE;
	ss.ss_size = 0;
	CHECK_SYS(sigaltstack(&ss, NULL));
	CHECK_SYS(sigaltstack(NULL, &old));
	CHECK_EQ(old.ss_flags, SS_DISABLE);
}

static void sigaltstack_errors(void)
{
	static char mem[65536];
	stack_t ss;
	ss.ss_sp = mem;
	ss.ss_size = 1024; /* below MINSIGSTKSZ */
	ss.ss_flags = 0;
	CHECK_ERR(sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_size = sizeof(mem);
	ss.ss_flags = 0x1234;
	CHECK_ERR(sigaltstack(&ss, NULL), EINVAL);
	ss.ss_flags = SS_ONSTACK;
	/* SS_ONSTACK as input is accepted as 0 (old programs pass it). */
	CHECK_SYS(sigaltstack(&ss, NULL));
	CHECK_ERR(sigaltstack((stack_t *)1, NULL), EFAULT);
	CHECK_ERR(sigaltstack(NULL, (stack_t *)1), EFAULT);
}

static volatile int on_alt_flags;
static volatile int eperm_seen;

static void alt_handler(int sig)
{
	(void)sig;
	stack_t cur;
	sigaltstack(NULL, &cur);
	on_alt_flags = cur.ss_flags;
	static char other[65536];
	stack_t ss = {.ss_sp = other, .ss_size = sizeof(other), .ss_flags = 0};
	eperm_seen = (sigaltstack(&ss, NULL) == -1 && errno == EPERM);
}

static void sigaltstack_eperm_while_on_it(void)
{
	static char mem[65536];
	stack_t ss = {.ss_sp = mem, .ss_size = sizeof(mem), .ss_flags = 0};
	CHECK_SYS(sigaltstack(&ss, NULL));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alt_handler;
	sa.sa_flags = SA_ONSTACK;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	on_alt_flags = -1;
	eperm_seen = 0;
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(on_alt_flags, SS_ONSTACK);
	CHECK_EQ(eperm_seen, 1);
}

static volatile int usr2_pending_in_handler;

static void raise_usr2_handler(int s)
{
	(void)s;
	kill(getpid(), SIGUSR2);
	sigset_t p;
	sigpending(&p);
	usr2_pending_in_handler = sigismember(&p, SIGUSR2);
}

static void handler_mask_blocks_during_handler(void)
{
	usr2_pending_in_handler = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_handler;
	CHECK_SYS(sigaction(SIGUSR2, &sa, NULL));
	sa.sa_handler = raise_usr2_handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	hits = 0;
	CHECK_SYS(raise(SIGUSR1));
	CHECK_EQ(usr2_pending_in_handler, 1);
	/* Delivered once the handler returned and the mask was restored. */
	CHECK_EQ(hits, 1);
}

static volatile int info_code, info_pid, info_val;

static void info_handler(int s, siginfo_t *si, void *uc)
{
	(void)s;
	(void)uc;
	info_code = si->si_code;
	info_pid = si->si_pid;
	info_val = si->si_value.sival_int;
}

static void sa_siginfo_handler_gets_info(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGRTMIN + 2, &sa, NULL));
	union sigval v = {.sival_int = 99};
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 2, v));
	CHECK_EQ(info_code, SI_QUEUE);
	CHECK_EQ(info_pid, getpid());
	CHECK_EQ(info_val, 99);
}

static void rt_signal_queue_limit_many(void)
{
	/* Real-time signals queue: 100 sent, 100 received. */
	uint64_t set = bit(SIGRTMIN + 1);
	CHECK_EQ(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), 0);
	for (int i = 0; i < 100; i++) {
		union sigval v = {.sival_int = i};
		CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 1, v));
	}
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 1);
	for (int i = 0; i < 100; i++) {
		siginfo_t si;
		struct timespec zero = {0, 0};
		CHECK_EQ(sigtimedwait(&s, &si, &zero), SIGRTMIN + 1);
		CHECK_EQ(si.si_value.sival_int, i);
	}
	struct timespec zero = {0, 0};
	CHECK_ERR(sigtimedwait(&s, NULL, &zero), EAGAIN);
}

static const struct mt_case cases[] = {
	MT_CASE(rt_sigaction_sigsetsize),
	MT_CASE(rt_sigaction_bad_signals),
	MT_CASE(rt_sigaction_efault),
	MT_CASE(rt_sigaction_roundtrip_fields),
	MT_CASE(sig_ign_discards_pending),
	MT_CASE(sigchld_default_discards),
	MT_CASE(rt_sigprocmask_how_values),
	MT_CASE(rt_sigprocmask_errors),
	MT_CASE(sigprocmask_kill_stop_unblockable),
	MT_CASE(sigpending_union_of_thread_and_process),
	MT_CASE(sigsuspend_replaces_mask_and_restores),
	MT_CASE(sigsuspend_errors),
	MT_CASE(sigtimedwait_errors),
	MT_CASE(sigtimedwait_timeout_elapses),
	MT_CASE(sigtimedwait_takes_lowest_first),
	MT_CASE(sigtimedwait_unblocked_signal_runs_handler),
	MT_CASE(sigaltstack_query_and_set),
	MT_CASE(sigaltstack_errors),
	MT_CASE(sigaltstack_eperm_while_on_it),
	MT_CASE(handler_mask_blocks_during_handler),
	MT_CASE(sa_siginfo_handler_gets_info),
	MT_CASE(rt_signal_queue_limit_many),
};

MT_MAIN(cases)
