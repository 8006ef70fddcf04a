//go:build ignore

/* s3_cpu_traps: what privileged and faulting instructions deliver: hlt,
 * cli, port I/O and software interrupts through non-user gates give
 * SIGSEGV with si_code SI_KERNEL and a general-protection trap (13, the
 * error code naming the gate), a misaligned movaps is a general
 * protection fault too, int $3 is SIGTRAP with RIP past it, page faults
 * report the address in cr2, and cpuid/rdtsc run without a fault. */
#include "moattest.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf jb;
static volatile int got_sig, got_code;
static void *volatile got_addr;
static volatile long got_trapno, got_err;
static volatile unsigned long got_cr2, got_rip;

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	got_err = uc->uc_mcontext.gregs[REG_ERR];
	got_cr2 = (unsigned long)uc->uc_mcontext.gregs[REG_CR2];
	got_rip = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
	siglongjmp(jb, 1);
}

static int catch(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	got_sig = got_code = 0;
	got_addr = (void *)1;
	got_trapno = got_err = -1;
	return sigaction(sig, &sa, NULL);
}

/* GP_CASE runs one instruction expected to raise #GP. */
#define GP_CASE(name, insn, err)                                      \
	static void name(void)                                        \
	{                                                             \
		CHECK_SYS(catch(SIGSEGV));                            \
		if (sigsetjmp(jb, 1) == 0) {                          \
			__asm__ volatile(insn ::: "memory");          \
			FAIL(#insn " did not fault");                 \
		}                                                     \
		CHECK_EQ(got_sig, SIGSEGV);                           \
		CHECK_EQ(got_code, SI_KERNEL);                        \
		CHECK(got_addr == NULL);                              \
		CHECK_EQ(got_trapno, 13);                             \
		CHECK_EQ(got_err, err);                               \
	}

GP_CASE(hlt_is_gp, "hlt", 0)
GP_CASE(cli_is_gp, "cli", 0)
GP_CASE(port_io_is_gp, "in $0x80, %%al", 0)
/* A software interrupt through a kernel-only gate: the error code is
 * the vector * 8 + 2 (IDT). */
GP_CASE(int_0x81_is_gp, "int $0x81", 0x81 * 8 + 2)

static void misaligned_movaps_is_gp(void)
{
	static char buf[64] __attribute__((aligned(16)));
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		__asm__ volatile("movaps (%0), %%xmm0" : : "r"(buf + 4) : "xmm0", "memory");
		FAIL("misaligned movaps did not fault");
	}
	CHECK_EQ(got_sig, SIGSEGV);
	CHECK_EQ(got_code, SI_KERNEL);
	CHECK_EQ(got_trapno, 13);
}

static volatile unsigned long trap_rip;
static volatile int trap_code;

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	trap_rip = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
	trap_code = si->si_code;
}

extern char s3_after_int3[];

static void int_3_is_sigtrap(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGTRAP, &sa, NULL));
	trap_rip = 0;
	/* The two-byte form "int $3" (cd 03), not int3 (cc). */
	__asm__ volatile(".byte 0xcd, 0x03\n"
			 ".globl s3_after_int3\n"
			 "s3_after_int3:" ::: "memory");
	/* The handler ran and execution continued after the instruction. */
	CHECK_EQ(trap_rip, (unsigned long)s3_after_int3);
	CHECK_EQ(trap_code, SI_KERNEL);
}

static void page_fault_cr2(void)
{
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		((volatile char *)p)[321] = 1;
		FAIL("write to PROT_NONE did not fault");
	}
	CHECK_EQ(got_trapno, 14);
	CHECK_EQ(got_cr2, (unsigned long)p + 321);
	CHECK(got_addr == p + 321);
	munmap(p, 4096);
}

static void user_instructions_run(void)
{
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	CHECK_GT(a, 0);
	unsigned lo, hi, lo2, hi2;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	__asm__ volatile("rdtsc" : "=a"(lo2), "=d"(hi2));
	unsigned long t1 = (unsigned long)hi << 32 | lo, t2 = (unsigned long)hi2 << 32 | lo2;
	CHECK_GE(t2, t1);
	/* pause and nop and reading the flags need no privilege either. */
	__asm__ volatile("pause\n\tnop\n\tpushf\n\tpopf" ::: "memory", "cc");
}

static const struct mt_case cases[] = {
	MT_CASE(hlt_is_gp),
	MT_CASE(cli_is_gp),
	MT_CASE(port_io_is_gp),
	MT_CASE(int_0x81_is_gp),
	MT_CASE(misaligned_movaps_is_gp),
	MT_CASE(int_3_is_sigtrap),
	MT_CASE(page_fault_cr2),
	MT_CASE(user_instructions_run),
};

MT_MAIN(cases)
