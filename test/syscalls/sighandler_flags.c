//go:build ignore

/* sighandler_flags: how sigaction flags shape delivery: SA_RESETHAND,
 * SA_NODEFER, SA_ONSTACK with nesting and SS_AUTODISARM, SA_SIGINFO's
 * ucontext (mask and registers, edits applied at return), sa_mask
 * blocking during the handler, SA_RESTART per signal, and default actions
 * (ignore, stop, continue, terminate) observed from a parent. */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif

static volatile int depth, max_depth, hits;

static void count(int sig)
{
	(void)sig;
	hits++;
}

static void resethand_once(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count;
	sa.sa_flags = SA_RESETHAND | SA_RESTART;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	hits = 0;
	raise(SIGUSR1);
	CHECK_EQ(hits, 1);
	struct sigaction now;
	CHECK_SYS(sigaction(SIGUSR1, NULL, &now));
	CHECK(now.sa_handler == SIG_DFL);
	/* The other flags read back unchanged (Linux keeps them). */
	CHECK(now.sa_flags & SA_RESTART);
	/* A child shows the default action now kills. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		raise(SIGUSR1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGUSR1);
}

static volatile int raises_left;

static void nest(int sig)
{
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	if (raises_left > 0) {
		raises_left--;
		raise(sig);
	}
	depth--;
}

static void nodefer_allows_nesting(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nest;
	sa.sa_flags = SA_NODEFER;
	CHECK_SYS(sigaction(SIGUSR2, &sa, NULL));
	depth = max_depth = 0;
	raises_left = 2;
	raise(SIGUSR2);
	CHECK_EQ(max_depth, 3);
	/* Without it the same signal waits for the handler to return. */
	sa.sa_flags = 0;
	CHECK_SYS(sigaction(SIGUSR2, &sa, NULL));
	depth = max_depth = 0;
	raises_left = 2;
	raise(SIGUSR2);
	CHECK_EQ(max_depth, 1);
	CHECK_EQ(raises_left, 0);
}

static volatile uintptr_t frame_addr;
static volatile int alt_flags_in_handler;

static void where(int sig)
{
	(void)sig;
	int local;
	frame_addr = (uintptr_t)&local;
	stack_t cur;
	sigaltstack(NULL, &cur);
	alt_flags_in_handler = cur.ss_flags;
}

static void onstack_uses_alternate_stack(void)
{
	static char alt[65536];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0};
	CHECK_SYS(sigaltstack(&ss, NULL));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = where;
	sa.sa_flags = SA_ONSTACK;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	raise(SIGUSR1);
	CHECK((uintptr_t)alt <= frame_addr && frame_addr < (uintptr_t)alt + sizeof(alt));
	CHECK_EQ(alt_flags_in_handler, SS_ONSTACK);
	/* Without SA_ONSTACK the normal stack is used. */
	sa.sa_flags = 0;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	raise(SIGUSR1);
	CHECK(!((uintptr_t)alt <= frame_addr && frame_addr < (uintptr_t)alt + sizeof(alt)));
	CHECK_EQ(alt_flags_in_handler, 0);
}

static void autodisarm_clears_during_handler(void)
{
	static char alt[65536];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = SS_AUTODISARM};
	CHECK_SYS(sigaltstack(&ss, NULL));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = where;
	sa.sa_flags = SA_ONSTACK;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	raise(SIGUSR1);
	CHECK((uintptr_t)alt <= frame_addr && frame_addr < (uintptr_t)alt + sizeof(alt));
	/* Inside the handler the stack reads as disabled... */
	CHECK_EQ(alt_flags_in_handler, SS_DISABLE);
	/* ...and is restored by sigreturn. */
	stack_t cur;
	CHECK_SYS(sigaltstack(NULL, &cur));
	CHECK(cur.ss_sp == alt);
	CHECK((unsigned)cur.ss_flags == SS_AUTODISARM);
}

static volatile int mask_had_usr2, mask_had_self;

static void inspect_uc(int sig, siginfo_t *si, void *ucv)
{
	(void)si;
	ucontext_t *uc = ucv;
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	mask_had_usr2 = sigismember(&now, SIGUSR2);
	mask_had_self = sigismember(&now, sig);
	/* The saved mask in the ucontext is the one before the handler. */
	if (sigismember(&uc->uc_sigmask, SIGUSR2))
		mask_had_usr2 |= 2;
	/* Blocking SIGUSR2 in the saved mask takes effect at return. */
	sigaddset(&uc->uc_sigmask, SIGTERM);
}

static void siginfo_ucontext_mask(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = inspect_uc;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	mask_had_usr2 = mask_had_self = 0;
	raise(SIGUSR1);
	CHECK_EQ(mask_had_usr2, 1);
	CHECK_EQ(mask_had_self, 1);
	sigset_t after;
	sigprocmask(SIG_BLOCK, NULL, &after);
	CHECK(sigismember(&after, SIGTERM));
	CHECK(!sigismember(&after, SIGUSR2));
	CHECK(!sigismember(&after, SIGUSR1));
}

static volatile long saw_rax_marker;

static void edit_rip(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ucv;
	/* Skip the 2-byte ud2 instruction. */
	uc->uc_mcontext.gregs[REG_RIP] += 2;
	uc->uc_mcontext.gregs[REG_RAX] = 0x1234;
}

static void ucontext_register_edits_apply(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = edit_rip;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGILL, &sa, NULL));
	long rax = 0;
	__asm__ volatile("xor %%eax, %%eax\n\tud2\n\tmov %%rax, %0" : "=r"(rax) : : "rax");
	CHECK_EQ(rax, 0x1234);
}

static void default_ignore_actions(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* SIGCHLD, SIGURG and SIGWINCH are ignored by default. */
		raise(SIGCHLD);
		raise(SIGURG);
		raise(SIGWINCH);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void default_terminate_actions(void)
{
	int sigs[] = {SIGHUP, SIGINT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGPROF, SIGVTALRM, SIGRTMIN, SIGRTMAX};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0) {
			raise(sigs[i]);
			_exit(0);
		}
		int st = mt_wait(pid);
		CHECK_SIGNALED(st, sigs[i]);
	}
}

static void default_core_actions_no_core(void)
{
	/* Core-dumping signals kill; with RLIMIT_CORE 0 no core flag. */
	int sigs[] = {SIGQUIT, SIGABRT, SIGSYS, SIGXCPU, SIGTRAP};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0) {
			struct rlimit { unsigned long c, m; } rl = {0, 0};
			syscall(SYS_setrlimit, 4 /* RLIMIT_CORE */, &rl);
			kill(getpid(), sigs[i]);
			_exit(0);
		}
		int st = mt_wait(pid);
		CHECK_SIGNALED(st, sigs[i]);
		CHECK_EQ(WCOREDUMP(st), 0);
	}
}

static void ignored_fatal_signal_survives(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		raise(SIGTERM);
		raise(SIGHUP);
		_exit(3);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 3);
}

static pid_t restart_reader;

static void *restart_signaller(void *arg)
{
	(void)arg;
	/* Each signal goes only once the reader sleeps in its read (the
	 * first time, then again after the SIGUSR1 handler ran): sent
	 * earlier, both could reach one read, or none. */
	if (mt_wait_blocked(restart_reader, 10000) < 0)
		return (void *)1;
	if (syscall(SYS_tgkill, getpid(), restart_reader, SIGUSR1) < 0)
		return (void *)2;
	for (int i = 0; i < 10000 && hits < 1; i++)
		usleep(1000);
	if (mt_wait_blocked(restart_reader, 10000) < 0)
		return (void *)3;
	if (syscall(SYS_tgkill, getpid(), restart_reader, SIGUSR2) < 0)
		return (void *)4;
	return NULL;
}

static void sa_restart_is_per_signal(void)
{
	/* SIGUSR1 restarts, SIGUSR2 does not: the same read sees both. */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count;
	sa.sa_flags = SA_RESTART;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	sa.sa_flags = 0;
	CHECK_SYS(sigaction(SIGUSR2, &sa, NULL));
	int p[2];
	CHECK_SYS(pipe(p));
	hits = 0;
	restart_reader = (pid_t)syscall(SYS_gettid);
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, restart_signaller, NULL));
	char c;
	CHECK_ERR(read(p[0], &c, 1), EINTR);
	void *ret;
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, 0);
	CHECK_EQ(hits, 2);
	close(p[0]);
	close(p[1]);
}

static const struct mt_case cases[] = {
	MT_CASE(resethand_once),
	MT_CASE(nodefer_allows_nesting),
	MT_CASE(onstack_uses_alternate_stack),
	MT_CASE(autodisarm_clears_during_handler),
	MT_CASE(siginfo_ucontext_mask),
	MT_CASE(ucontext_register_edits_apply),
	MT_CASE(default_ignore_actions),
	MT_CASE(default_terminate_actions),
	MT_CASE(default_core_actions_no_core),
	MT_CASE(ignored_fatal_signal_survives),
	MT_CASE(sa_restart_is_per_signal),
};

MT_MAIN(cases)
