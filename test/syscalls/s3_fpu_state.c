//go:build ignore

/* s3_fpu_state: the floating-point and vector state the kernel keeps per
 * thread: XMM and (where the CPU has AVX) the upper YMM halves surviving
 * system calls and blocking with other threads running, MXCSR and the x87
 * control word per thread, a signal handler starting from the default
 * MXCSR and the interrupted values coming back after it, the frame showing
 * the interrupted XMM registers, fork copying the state, and exec
 * resetting it. */
#include "moattest.h"

#include <cpuid.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static unsigned get_mxcsr(void)
{
	unsigned v;
	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static void set_mxcsr(unsigned v)
{
	__asm__ volatile("ldmxcsr %0" : : "m"(v));
}

static unsigned short get_fpucw(void)
{
	unsigned short v;
	__asm__ volatile("fnstcw %0" : "=m"(v));
	return v;
}

static void set_fpucw(unsigned short v)
{
	__asm__ volatile("fldcw %0" : : "m"(v));
}

#define RZ_MXCSR (0x1f80 | 0x6000) /* round toward zero */

static void xmm_across_syscalls(void)
{
	/* Load xmm8..xmm15 (not used by the C code around the calls),
	 * make system calls, read them back. */
	unsigned long in[8], out[8];
	for (int i = 0; i < 8; i++)
		in[i] = 0x0101010101010101UL * (unsigned long)(i + 1);
	__asm__ volatile("movq 0(%1), %%xmm8\n\tmovq 8(%1), %%xmm9\n\t"
			 "movq 16(%1), %%xmm10\n\tmovq 24(%1), %%xmm11\n\t"
			 "movq 32(%1), %%xmm12\n\tmovq 40(%1), %%xmm13\n\t"
			 "movq 48(%1), %%xmm14\n\tmovq 56(%1), %%xmm15\n\t"
			 "mov $39, %%eax\n\tsyscall\n\t"
			 "mov $24, %%eax\n\tsyscall\n\t"
			 "mov $39, %%eax\n\tsyscall\n\t"
			 "movq %%xmm8, 0(%0)\n\tmovq %%xmm9, 8(%0)\n\t"
			 "movq %%xmm10, 16(%0)\n\tmovq %%xmm11, 24(%0)\n\t"
			 "movq %%xmm12, 32(%0)\n\tmovq %%xmm13, 40(%0)\n\t"
			 "movq %%xmm14, 48(%0)\n\tmovq %%xmm15, 56(%0)"
			 :
			 : "r"(out), "r"(in)
			 : "rax", "rcx", "r11", "memory", "xmm8", "xmm9", "xmm10", "xmm11",
			   "xmm12", "xmm13", "xmm14", "xmm15");
	for (int i = 0; i < 8; i++)
		CHECK_EQ(out[i], in[i]);
}

static int has_avx(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	if (!(c & bit_AVX) || !(c & bit_OSXSAVE))
		return 0;
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6) == 6;
}

__attribute__((target("avx"))) static void ymm_check(unsigned long *out)
{
	static const unsigned long in[4] = {1, 2, 0xabcdef0011223344UL, 0x5566778899aabbccUL};
	__asm__ volatile("vmovdqu (%1), %%ymm9\n\t"
			 "mov $39, %%eax\n\tsyscall\n\t"
			 "mov $24, %%eax\n\tsyscall\n\t"
			 "vmovdqu %%ymm9, (%0)\n\t"
			 "vzeroupper"
			 :
			 : "r"(out), "r"(in)
			 : "rax", "rcx", "r11", "memory", "xmm9");
}

static void ymm_upper_halves(void)
{
	if (!has_avx())
		SKIP("no AVX");
	unsigned long out[4] = {0};
	ymm_check(out);
	CHECK_EQ(out[0], 1);
	CHECK_EQ(out[1], 2);
	CHECK_EQ(out[2], 0xabcdef0011223344UL);
	CHECK_EQ(out[3], 0x5566778899aabbccUL);
}

struct peer {
	int go;
	unsigned mxcsr_seen;
	unsigned short cw_seen;
};

static void *thread_changes_modes(void *arg)
{
	struct peer *p = arg;
	p->mxcsr_seen = get_mxcsr();
	p->cw_seen = get_fpucw();
	set_mxcsr(0x1f80 | 0x2000); /* round down */
	set_fpucw(0x0c7f);
	for (int i = 0; i < 50; i++)
		sched_yield();
	__atomic_store_n(&p->go, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void control_words_per_thread(void)
{
	set_mxcsr(RZ_MXCSR);
	set_fpucw(0x037f | 0x0800); /* round up */
	struct peer p = {0};
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_changes_modes, &p));
	while (!__atomic_load_n(&p.go, __ATOMIC_SEQ_CST))
		sched_yield();
	CHECK_RET0(pthread_join(t, NULL));
	unsigned m = get_mxcsr();
	unsigned short cw = get_fpucw();
	set_mxcsr(0x1f80);
	set_fpucw(0x037f);
	/* A new thread starts from its creator's state (clone copies it). */
	CHECK_EQ(p.mxcsr_seen & 0xffc0, RZ_MXCSR);
	CHECK_EQ(p.cw_seen, 0x0b7f);
	/* Its changes stay its own. */
	CHECK_EQ(m & 0xffc0, RZ_MXCSR);
	CHECK_EQ(cw, 0x0b7f);
}

static volatile unsigned handler_mxcsr;
static volatile unsigned short handler_cw;
static volatile unsigned long frame_xmm8;

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ctx;
	handler_mxcsr = get_mxcsr();
	handler_cw = get_fpucw();
	frame_xmm8 = uc->uc_mcontext.fpregs ? ((unsigned long)uc->uc_mcontext.fpregs->_xmm[8].element[1] << 32 |
					       uc->uc_mcontext.fpregs->_xmm[8].element[0])
					    : 0;
	/* Scribble over the handler's own state. */
	set_mxcsr(0x1f80 | 0x4000);
	set_fpucw(0x0e7f);
	__asm__ volatile("pxor %%xmm8, %%xmm8" : : : "xmm8");
}

/* interrupt sets XMM8, MXCSR and the x87 control word, takes SIGUSR1 and
 * reports what came back. */
static void interrupt(unsigned long v, unsigned long *back, unsigned *mx, unsigned short *cw)
{
	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
	sigaction(SIGUSR1, &sa, NULL);
	set_mxcsr(RZ_MXCSR);
	set_fpucw(0x0b7f);
	__asm__ volatile("movq %2, %%xmm8\n\t"
			 "syscall\n\t"
			 "movq %%xmm8, %0"
			 : "=r"(*back)
			 : "a"((long)SYS_tgkill), "r"(v), "D"((long)getpid()), "S"((long)syscall(SYS_gettid)),
			   "d"((long)SIGUSR1)
			 : "rcx", "r11", "memory", "xmm8");
	*mx = get_mxcsr();
	*cw = get_fpucw();
	set_mxcsr(0x1f80);
	set_fpucw(0x037f);
}

static void sigreturn_restores_interrupted_state(void)
{
	unsigned long v = 0x1234567887654321UL, back;
	unsigned mx;
	unsigned short cw;
	interrupt(v, &back, &mx, &cw);
	/* The frame showed the interrupted XMM8... */
	CHECK_EQ(frame_xmm8, v);
	/* ...and the handler's changes were undone by sigreturn. */
	CHECK_EQ(back, v);
	CHECK_EQ(mx & 0xffc0, RZ_MXCSR);
	CHECK_EQ(cw, 0x0b7f);
}

static void signal_handler_gets_fresh_state(void)
{
	unsigned long back;
	unsigned mx;
	unsigned short cw;
	interrupt(1, &back, &mx, &cw);
	/* The handler ran with the default MXCSR and x87 control word. */
	CHECK_EQ(handler_mxcsr & 0xffc0, 0x1f80);
	CHECK_EQ(handler_cw, 0x037f);
}

static void fork_copies_state(void)
{
	set_mxcsr(RZ_MXCSR);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit((get_mxcsr() & 0xffc0) == RZ_MXCSR ? 0 : 1);
	set_mxcsr(0x1f80);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void exec_resets_state(void)
{
	set_mxcsr(RZ_MXCSR);
	set_fpucw(0x0f7f);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		execl(mt_argv0, mt_argv0, "--fpu-probe", (char *)NULL);
		_exit(9);
	}
	set_mxcsr(0x1f80);
	set_fpucw(0x037f);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

struct spinner {
	int stop;
	unsigned long mismatches;
};

static void *xmm_spinner(void *arg)
{
	struct spinner *s = arg;
	while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
		unsigned long got;
		__asm__ volatile("mov $0x5a5a5a5a5a5a5a5a, %%rax\n\t"
				 "movq %%rax, %%xmm10\n\t"
				 "mov $24, %%eax\n\tsyscall\n\t"
				 "movq %%xmm10, %0"
				 : "=r"(got)
				 :
				 : "rax", "rcx", "r11", "memory", "xmm10");
		if (got != 0x5a5a5a5a5a5a5a5aUL)
			s->mismatches++;
	}
	return NULL;
}

static void threads_do_not_share_registers(void)
{
	struct spinner s = {0};
	pthread_t t[2];
	CHECK_RET0(pthread_create(&t[0], NULL, xmm_spinner, &s));
	CHECK_RET0(pthread_create(&t[1], NULL, xmm_spinner, &s));
	unsigned long bad = 0;
	for (int i = 0; i < 2000; i++) {
		unsigned long got;
		__asm__ volatile("mov $0x1111222233334444, %%rax\n\t"
				 "movq %%rax, %%xmm10\n\t"
				 "mov $24, %%eax\n\tsyscall\n\t"
				 "movq %%xmm10, %0"
				 : "=r"(got)
				 :
				 : "rax", "rcx", "r11", "memory", "xmm10");
		if (got != 0x1111222233334444UL)
			bad++;
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_SEQ_CST);
	CHECK_RET0(pthread_join(t[0], NULL));
	CHECK_RET0(pthread_join(t[1], NULL));
	CHECK_EQ(bad, 0);
	CHECK_EQ(s.mismatches, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(xmm_across_syscalls),
	MT_CASE(ymm_upper_halves),
	MT_CASE(control_words_per_thread),
	MT_CASE(sigreturn_restores_interrupted_state),
	MT_CASE(signal_handler_gets_fresh_state),
	MT_CASE(fork_copies_state),
	MT_CASE(exec_resets_state),
	MT_CASE(threads_do_not_share_registers),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--fpu-probe") == 0)
		return (get_mxcsr() & 0xffc0) == 0x1f80 && get_fpucw() == 0x037f ? 0 : 1;
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
