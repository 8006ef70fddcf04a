//go:build ignore

/* s3_signal_frame: the x86-64 signal frame as a handler sees it: the stack
 * pointer at entry (16-byte aligned minus the return address), the
 * 128-byte red zone below the interrupted stack left intact, the frame on
 * the alternate stack when SA_ONSTACK applies, uc_stack describing the
 * alternate stack and uc_link NULL, the FPU state pointer 64-byte
 * aligned inside the frame, the return address being the sa_restorer,
 * and si_code/si_pid/si_uid for kill, tgkill and sigqueue. */
#include "moattest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

static volatile unsigned long entry_rsp;
static volatile unsigned long frame_uc;
static volatile unsigned long fpregs_at;
static volatile unsigned long ret_addr;
static volatile unsigned long ss_sp, ss_size;
static volatile int ss_flags;
static volatile unsigned long uc_link_v;
static volatile int code, spid, suid, sval;

/* The handler's first instruction records the stack pointer: naked
 * functions are not available, so a small assembly trampoline saves
 * %rsp and jumps to the C handler. */
void s3_frame_c(int sig, siginfo_t *si, void *ctx);
__asm__(".globl s3_frame_entry\n"
	"s3_frame_entry:\n\t"
	"mov %rsp, entry_rsp_slot(%rip)\n\t"
	"jmp s3_frame_c\n"
	".data\n"
	".globl entry_rsp_slot\n"
	"entry_rsp_slot: .quad 0\n"
	".text\n");
extern void s3_frame_entry(int, siginfo_t *, void *);
extern unsigned long entry_rsp_slot;

void s3_frame_c(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	ucontext_t *uc = ctx;
	entry_rsp = entry_rsp_slot;
	frame_uc = (unsigned long)uc;
	fpregs_at = (unsigned long)uc->uc_mcontext.fpregs;
	ret_addr = *(unsigned long *)entry_rsp_slot;
	ss_sp = (unsigned long)uc->uc_stack.ss_sp;
	ss_size = uc->uc_stack.ss_size;
	ss_flags = uc->uc_stack.ss_flags;
	uc_link_v = (unsigned long)uc->uc_link;
	code = si->si_code;
	spid = si->si_pid;
	suid = (int)si->si_uid;
	sval = si->si_value.sival_int;
}

static void install(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = s3_frame_entry;
	sa.sa_flags = SA_SIGINFO | flags;
	sigaction(SIGUSR1, &sa, NULL);
}

static void entry_alignment(void)
{
	install(0);
	CHECK_SYS(raise(SIGUSR1));
	/* As after a call: rsp + 8 is 16-byte aligned. */
	CHECK_EQ((entry_rsp + 8) % 16, 0);
	/* The return address is the frame's first word (the restorer). */
	struct sigaction cur;
	CHECK_SYS(sigaction(SIGUSR1, NULL, &cur));
	CHECK(cur.sa_flags & SA_RESTORER);
	CHECK_EQ(ret_addr, (unsigned long)cur.sa_restorer);
	/* The ucontext lies above the return address. */
	CHECK_GT(frame_uc, entry_rsp);
}

static void fpstate_aligned_in_frame(void)
{
	install(0);
	CHECK_SYS(raise(SIGUSR1));
	CHECK_NE(fpregs_at, 0);
	/* XSAVE needs 64-byte alignment. */
	CHECK_EQ(fpregs_at % 64, 0);
	/* It lives in the frame, above the ucontext. */
	CHECK_GT(fpregs_at, frame_uc);
	CHECK_LT(fpregs_at - frame_uc, 64 * 1024);
}

static void red_zone_untouched(void)
{
	install(0);
	unsigned long got[16];
	long pid = getpid(), tid = syscall(SYS_gettid);
	__asm__ volatile("xor %%ecx, %%ecx\n"
			 "1: lea 0x1000(%%rcx), %%r8\n\t"
			 "mov %%r8, -128(%%rsp,%%rcx,8)\n\t"
			 "inc %%rcx\n\t"
			 "cmp $16, %%rcx\n\t"
			 "jne 1b\n\t"
			 "mov $234, %%eax\n\t"
			 "syscall\n\t"
			 "xor %%ecx, %%ecx\n"
			 "2: mov -128(%%rsp,%%rcx,8), %%r8\n\t"
			 "mov %%r8, (%[g],%%rcx,8)\n\t"
			 "inc %%rcx\n\t"
			 "cmp $16, %%rcx\n\t"
			 "jne 2b"
			 :
			 : "D"(pid), "S"(tid), "d"((long)SIGUSR1), [g] "r"(got)
			 : "rax", "rcx", "r8", "r11", "memory");
	for (int i = 0; i < 16; i++)
		CHECK_EQ(got[i], 0x1000 + i);
	/* The frame was placed below the red zone. */
	CHECK_GT(entry_rsp, 0);
}

static void frame_on_alternate_stack(void)
{
	static char alt[64 * 1024] __attribute__((aligned(16)));
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
	CHECK_SYS(sigaltstack(&ss, NULL));
	install(SA_ONSTACK);
	CHECK_SYS(raise(SIGUSR1));
	CHECK_GE(entry_rsp, (unsigned long)alt);
	CHECK_LT(entry_rsp, (unsigned long)alt + sizeof alt);
	CHECK_EQ((entry_rsp + 8) % 16, 0);
	/* uc_stack describes the alternate stack as it was. */
	CHECK_EQ(ss_sp, (unsigned long)alt);
	CHECK_EQ(ss_size, sizeof alt);
	CHECK_EQ(ss_flags, 0);
	CHECK_EQ(uc_link_v, 0);
}

static void no_onstack_flag_stays_put(void)
{
	static char alt[64 * 1024] __attribute__((aligned(16)));
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
	CHECK_SYS(sigaltstack(&ss, NULL));
	install(0);
	CHECK_SYS(raise(SIGUSR1));
	CHECK(entry_rsp < (unsigned long)alt || entry_rsp >= (unsigned long)alt + sizeof alt);
	/* uc_stack still reports the registered alternate stack. */
	CHECK_EQ(ss_sp, (unsigned long)alt);
	CHECK_EQ(ss_size, sizeof alt);
}

static void uc_stack_without_altstack(void)
{
	install(SA_ONSTACK);
	CHECK_SYS(raise(SIGUSR1));
	/* No alternate stack: SS_DISABLE. */
	CHECK_EQ(ss_flags, SS_DISABLE);
	CHECK_EQ(uc_link_v, 0);
}

static void siginfo_of_senders(void)
{
	install(0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(code, SI_USER);
	CHECK_EQ(spid, getpid());
	CHECK_EQ(suid, (int)getuid());
	CHECK_SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1));
	CHECK_EQ(code, SI_TKILL);
	CHECK_EQ(spid, getpid());
	union sigval v = {.sival_int = 77};
	CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	CHECK_EQ(code, SI_QUEUE);
	CHECK_EQ(sval, 77);
	/* From a child: its pid. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_EQ(spid, pid);
	CHECK_EQ(code, SI_USER);
}

static void rt_sigqueueinfo_rules(void)
{
	install(0);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = 12345;
	si.si_value.sival_int = 5;
	/* A process may forge the fields of its own siginfo with a
	 * negative si_code... */
	CHECK_SYS(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si));
	CHECK_EQ(code, SI_QUEUE);
	CHECK_EQ(spid, 12345);
	CHECK_EQ(sval, 5);
	/* ...but not claim to be the kernel (si_code >= 0) when signalling
	 * another process; to itself it may. */
	si.si_code = SI_USER;
	CHECK_SYS(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		siginfo_t c;
		memset(&c, 0, sizeof c);
		c.si_signo = SIGUSR1;
		c.si_code = SI_USER;
		long r = syscall(SYS_rt_sigqueueinfo, getppid(), SIGUSR1, &c);
		_exit(r == -1 && errno == EPERM ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, (void *)1), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(entry_alignment),
	MT_CASE(fpstate_aligned_in_frame),
	MT_CASE(red_zone_untouched),
	MT_CASE(frame_on_alternate_stack),
	MT_CASE(no_onstack_flag_stays_put),
	MT_CASE(uc_stack_without_altstack),
	MT_CASE(siginfo_of_senders),
	MT_CASE(rt_sigqueueinfo_rules),
};

MT_MAIN(cases)
