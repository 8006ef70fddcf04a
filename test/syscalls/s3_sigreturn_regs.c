//go:build ignore

/* s3_sigreturn_regs: what rt_sigreturn restores from a signal frame a
 * handler has edited: general registers, the instruction pointer, the
 * flags (DF and AC kept, IOPL dropped, TF single-stepping into SIGTRAP),
 * the signal mask (SIGKILL and SIGSTOP never blocked), XMM registers from
 * the FPU state, a NULL fpstate resetting the FPU, and frames that cannot
 * be returned to (a zeroed frame, a non-canonical RIP, the kernel's code
 * segment, a bad stack segment) ending in SIGSEGV; NT is never restored. */
#include "moattest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

enum edit { E_NONE, E_R12, E_RIP, E_FLAGS, E_TF, E_MASK, E_XMM, E_NOFP, E_BADRIP, E_CS, E_SS, E_NT };

static volatile int what;
extern char s3_landing[];

static void handler(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ctx;
	switch (what) {
	case E_NONE:
		break;
	case E_R12:
		uc->uc_mcontext.gregs[REG_R12] = 0x1234567890abcdefLL;
		uc->uc_mcontext.gregs[REG_R13] = 42;
		break;
	case E_RIP:
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s3_landing;
		break;
	case E_FLAGS:
		/* DF (0x400) and AC (0x40000) may be set; IOPL (0x3000) may
		 * not. */
		uc->uc_mcontext.gregs[REG_EFL] |= 0x400 | 0x40000 | 0x3000;
		break;
	case E_TF:
		uc->uc_mcontext.gregs[REG_EFL] |= 0x100;
		break;
	case E_MASK:
		sigaddset(&uc->uc_sigmask, SIGUSR2);
		sigaddset(&uc->uc_sigmask, SIGKILL);
		sigaddset(&uc->uc_sigmask, SIGSTOP);
		break;
	case E_XMM:
		uc->uc_mcontext.fpregs->_xmm[0].element[0] = 0xcafef00d;
		uc->uc_mcontext.fpregs->_xmm[0].element[1] = 0x11223344;
		break;
	case E_NOFP:
		uc->uc_mcontext.fpregs = NULL;
		break;
	case E_BADRIP:
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)0x8000000000000000ULL;
		break;
	case E_CS:
		/* The kernel's code segment (0x10); returning to it with RPL
		 * 3 faults. */
		uc->uc_mcontext.gregs[REG_CSGSFS] =
			(uc->uc_mcontext.gregs[REG_CSGSFS] & ~0xffffLL) | 0x10;
		break;
	case E_SS:
		/* The stack selector lives in the top 16 bits. */
		uc->uc_mcontext.gregs[REG_CSGSFS] =
			(uc->uc_mcontext.gregs[REG_CSGSFS] & ~(0xffffLL << 48)) | (0x8LL << 48);
		break;
	case E_NT:
		uc->uc_mcontext.gregs[REG_EFL] |= 0x4000;
		break;
	}
}

static void install(void)
{
	struct sigaction sa = {.sa_sigaction = handler, .sa_flags = SA_SIGINFO};
	sigaction(SIGUSR1, &sa, NULL);
}

static long self_tid(void)
{
	return syscall(SYS_gettid);
}

static void general_registers(void)
{
	install();
	what = E_R12;
	unsigned long r12, r13;
	__asm__ volatile("xor %%r12, %%r12\n\t"
			 "xor %%r13, %%r13\n\t"
			 "syscall\n\t"
			 "mov %%r12, %0\n\t"
			 "mov %%r13, %1"
			 : "=r"(r12), "=r"(r13)
			 : "a"((long)SYS_tgkill), "D"((long)getpid()), "S"(self_tid()), "d"((long)SIGUSR1)
			 : "rcx", "r11", "r12", "r13", "memory");
	CHECK_EQ(r12, 0x1234567890abcdefULL);
	CHECK_EQ(r13, 42);
}

__attribute__((noinline)) static int jump_test(long pid, long tid)
{
	int where;
	__asm__ volatile("syscall\n\t"
			 "mov $1, %0\n\t"
			 "jmp 2f\n\t"
			 ".globl s3_landing\n"
			 "s3_landing:\n\t"
			 "mov $2, %0\n"
			 "2:"
			 : "=r"(where)
			 : "a"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"((long)SIGUSR1)
			 : "rcx", "r11", "memory");
	return where;
}

static void instruction_pointer(void)
{
	install();
	what = E_RIP;
	CHECK_EQ(jump_test(getpid(), self_tid()), 2);
	what = E_NONE;
	CHECK_EQ(jump_test(getpid(), self_tid()), 1);
}

static void flags_filtered(void)
{
	install();
	what = E_FLAGS;
	unsigned long fl;
	__asm__ volatile("syscall\n\t"
			 "pushf\n\t"
			 "pop %0\n\t"
			 "cld\n\t"
			 "push %0\n\t"
			 "andq $~0x40400, (%%rsp)\n\t"
			 "popf"
			 : "=&r"(fl)
			 : "a"((long)SYS_tgkill), "D"((long)getpid()), "S"(self_tid()), "d"((long)SIGUSR1)
			 : "rcx", "r11", "memory", "cc");
	CHECK_EQ(fl & 0x400, 0x400);
	CHECK_EQ(fl & 0x40000, 0x40000);
	CHECK_EQ(fl & 0x3000, 0);
}

static void trap_flag_single_steps(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		install();
		what = E_TF;
		syscall(SYS_tgkill, getpid(), self_tid(), SIGUSR1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK(st != -1);
	CHECK_SIGNALED(st, SIGTRAP);
}

static void mask_from_frame(void)
{
	install();
	what = E_MASK;
	CHECK_SYS(raise(SIGUSR1));
	sigset_t now;
	CHECK_SYS(sigprocmask(SIG_SETMASK, NULL, &now));
	CHECK(sigismember(&now, SIGUSR2));
	CHECK(!sigismember(&now, SIGKILL));
	CHECK(!sigismember(&now, SIGSTOP));
	CHECK(!sigismember(&now, SIGUSR1));
}

static void xmm_from_fpstate(void)
{
	install();
	what = E_XMM;
	unsigned long lo;
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\t"
			 "syscall\n\t"
			 "movq %%xmm0, %0"
			 : "=r"(lo)
			 : "a"((long)SYS_tgkill), "D"((long)getpid()), "S"(self_tid()), "d"((long)SIGUSR1)
			 : "rcx", "r11", "xmm0", "memory");
	CHECK_EQ(lo, 0x11223344cafef00dULL);
}

static void null_fpstate_resets_fpu(void)
{
	install();
	what = E_NOFP;
	unsigned long lo;
	unsigned int csr = 0;
	unsigned int odd = 0x1f80 | 0x6000; /* round toward zero */
	__asm__ volatile("ldmxcsr %2\n\t"
			 "mov $-1, %%rcx\n\t"
			 "movq %%rcx, %%xmm0\n\t"
			 "syscall\n\t"
			 "movq %%xmm0, %0\n\t"
			 "stmxcsr %1"
			 : "=r"(lo), "=m"(csr)
			 : "m"(odd), "a"((long)SYS_tgkill), "D"((long)getpid()), "S"(self_tid()), "d"((long)SIGUSR1)
			 : "rcx", "r11", "xmm0", "memory");
	CHECK_EQ(lo, 0);
	CHECK_EQ(csr, 0x1f80);
}

static char zero_stack[8192] __attribute__((aligned(16)));

static void zeroed_frame_segv(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* rt_sigreturn reads its frame at the stack pointer: all
		 * zeros, so RIP 0. */
		__asm__ volatile("mov %0, %%rsp\n\t"
				 "mov %1, %%eax\n\t"
				 "syscall\n\t"
				 "ud2"
				 :
				 : "r"(zero_stack + 4096), "i"(SYS_rt_sigreturn)
				 : "memory");
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
}

static int child_with(enum edit e)
{
	pid_t pid = fork();
	if (pid == 0) {
		install();
		what = e;
		syscall(SYS_tgkill, getpid(), self_tid(), SIGUSR1);
		unsigned long fl;
		__asm__ volatile("pushf\n\tpop %0" : "=r"(fl));
		/* Exit 3 if NT survived the return. */
		_exit(fl & 0x4000 ? 3 : 0);
	}
	return pid;
}

static void nt_flag_dropped(void)
{
	pid_t pid = CHECK_SYS(child_with(E_NT));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void kernel_code_segment_segv(void)
{
	pid_t pid = CHECK_SYS(child_with(E_CS));
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
}

static void bad_stack_segment_segv(void)
{
	pid_t pid = CHECK_SYS(child_with(E_SS));
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
}

static void noncanonical_rip_segv(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		install();
		what = E_BADRIP;
		syscall(SYS_tgkill, getpid(), self_tid(), SIGUSR1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGSEGV);
}

static const struct mt_case cases[] = {
	MT_CASE(general_registers),
	MT_CASE(instruction_pointer),
	MT_CASE(flags_filtered),
	MT_CASE(mask_from_frame),
	MT_CASE(xmm_from_fpstate),
	MT_CASE(null_fpstate_resets_fpu),
	MT_CASE(trap_flag_single_steps),
	MT_CASE(zeroed_frame_segv),
	MT_CASE(nt_flag_dropped),
	MT_CASE(kernel_code_segment_segv),
	MT_CASE(bad_stack_segment_segv),
	MT_CASE(noncanonical_rip_segv),
};

MT_MAIN(cases)
