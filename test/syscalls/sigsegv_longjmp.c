//go:build ignore

/* sigsegv_longjmp: synchronous fault signals and their siginfo/ucontext:
 * SIGSEGV (SEGV_MAPERR, SEGV_ACCERR), SIGBUS past EOF of a file mapping,
 * SIGFPE on integer division, SIGILL on ud2, SIGTRAP on int3; recovery
 * with siglongjmp or by editing the saved RIP; default and blocked/ignored
 * fault signals killing the process; stack overflow on an alternate stack. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/* Functions made of a single faulting instruction, so tests know the
 * exact address of the fault. */
extern void moat_ud2(void);
extern void moat_int3(void);
__asm__(".text\n"
	".globl moat_ud2\n"
	"moat_ud2:\n"
	"  ud2\n"
	"  ret\n"
	".globl moat_int3\n"
	"moat_int3:\n"
	"  int3\n"
	"  ret\n");

static sigjmp_buf jb;
static volatile int got_sig;
static volatile int got_code;
static void *volatile got_addr;
static volatile long got_trapno, got_err;
static volatile uintptr_t got_rip;

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	got_err = uc->uc_mcontext.gregs[REG_ERR];
	got_rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	siglongjmp(jb, 1);
}

static int catch(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	got_sig = got_code = 0;
	got_addr = NULL;
	return sigaction(sig, &sa, NULL);
}

static void null_deref_maperr(void)
{
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		volatile int v = *(volatile int *)0;
		(void)v;
		FAIL("read of NULL did not fault");
	}
	CHECK_EQ(got_sig, SIGSEGV);
	CHECK_EQ(got_code, SEGV_MAPERR);
	CHECK(got_addr == NULL);
	CHECK_EQ(got_trapno, 14);
	/* Page-fault error code: user mode, read, not present. */
	CHECK_EQ(got_err & 7, 4);
}

static void unmapped_page_maperr(void)
{
	char *p = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(munmap(p + 4096, 4096));
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		p[4096 + 123] = 1;
		FAIL("write to unmapped page did not fault");
	}
	CHECK_EQ(got_code, SEGV_MAPERR);
	CHECK(got_addr == p + 4096 + 123);
	CHECK_EQ(got_err & 7, 6);
	/* The page before it is still fine. */
	p[4095] = 2;
	CHECK_EQ(p[4095], 2);
	munmap(p, 4096);
}

static void write_readonly_accerr(void)
{
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		((volatile char *)p)[100] = 1;
		FAIL("write to PROT_READ page did not fault");
	}
	CHECK_EQ(got_sig, SIGSEGV);
	CHECK_EQ(got_code, SEGV_ACCERR);
	CHECK(got_addr == p + 100);
	/* Write, user (present or not: the page was never touched). */
	CHECK_EQ(got_err & 6, 6);
	CHECK_EQ(((volatile char *)p)[100], 0);
	munmap(p, 4096);
}

static void prot_none_read_accerr(void)
{
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		volatile char c = ((volatile char *)p)[7];
		(void)c;
		FAIL("read of PROT_NONE page did not fault");
	}
	CHECK_EQ(got_code, SEGV_ACCERR);
	CHECK(got_addr == p + 7);
	munmap(p, 4096);
}

static void exec_noexec_page_accerr(void)
{
	unsigned char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	p[0] = 0xc3; /* ret */
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		((void (*)(void))p)();
		FAIL("executing a non-executable page did not fault");
	}
	CHECK_EQ(got_code, SEGV_ACCERR);
	CHECK(got_addr == p);
	CHECK_EQ(got_rip, (uintptr_t)p);
	/* Instruction fetch bit (16) in the error code. */
	CHECK_EQ(got_err & 16, 16);
	/* Made executable, it runs. */
	CHECK_SYS(mprotect(p, 4096, PROT_READ | PROT_EXEC));
	((void (*)(void))p)();
	munmap(p, 4096);
}

static void noncanonical_address_si_kernel(void)
{
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		volatile int v = *(volatile int *)0x8000000000000000UL;
		(void)v;
		FAIL("read of a non-canonical address did not fault");
	}
	CHECK_EQ(got_sig, SIGSEGV);
	CHECK_EQ(got_code, SI_KERNEL);
	CHECK(got_addr == NULL);
	CHECK_EQ(got_trapno, 13);
}

static void sigbus_past_eof(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	long pg = sysconf(_SC_PAGESIZE);
	size_t in_file = ((size_t)st.st_size + pg - 1) / pg * pg;
	size_t len = in_file + 2 * pg;
	char *p = CHECK_MAP(mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0));
	close(fd);
	/* Bytes past EOF within the last file page read as zero. */
	if ((size_t)st.st_size < in_file)
		CHECK_EQ(p[st.st_size], 0);
	CHECK_SYS(catch(SIGBUS));
	if (sigsetjmp(jb, 1) == 0) {
		volatile char c = ((volatile char *)p)[in_file + 5];
		(void)c;
		FAIL("read beyond EOF did not raise SIGBUS");
	}
	CHECK_EQ(got_sig, SIGBUS);
	CHECK_EQ(got_code, BUS_ADRERR);
	CHECK(got_addr == p + in_file + 5);
	munmap(p, len);
}

static void sigbus_memfd_truncated(void)
{
	int fd = CHECK_SYS(memfd_create("moat", 0));
	CHECK_SYS(ftruncate(fd, 8192));
	char *p = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	p[4096] = 'x';
	CHECK_SYS(ftruncate(fd, 4096));
	CHECK_SYS(catch(SIGBUS));
	if (sigsetjmp(jb, 1) == 0) {
		p[4096] = 'y';
		FAIL("write beyond the truncated end did not raise SIGBUS");
	}
	CHECK_EQ(got_code, BUS_ADRERR);
	CHECK(got_addr == p + 4096);
	p[0] = 'a';
	CHECK_EQ(p[0], 'a');
	munmap(p, 8192);
	close(fd);
}

static void *volatile bad_ptr = (void *)8;
static volatile int zero_divisor = 0;
static volatile int int_min = INT_MIN;
static volatile int minus_one = -1;

static void sigfpe_divide_by_zero(void)
{
	CHECK_SYS(catch(SIGFPE));
	if (sigsetjmp(jb, 1) == 0) {
		int a = 1, d = zero_divisor;
		/* idiv itself: the compiler may rewrite 1/x without one. */
		__asm__ volatile("cltd\n\tidivl %2" : "+a"(a) : "a"(a), "r"(d) : "edx");
		(void)a;
		FAIL("division by zero did not fault");
	}
	CHECK_EQ(got_sig, SIGFPE);
	CHECK_EQ(got_code, FPE_INTDIV);
	CHECK(got_addr != NULL);
	CHECK_EQ((uintptr_t)got_addr, got_rip);
	CHECK_EQ(got_trapno, 0);
}

static void sigfpe_int_min_div_minus_one(void)
{
	CHECK_SYS(catch(SIGFPE));
	if (sigsetjmp(jb, 1) == 0) {
		volatile int r = int_min / minus_one;
		(void)r;
		FAIL("INT_MIN / -1 did not fault");
	}
	CHECK_EQ(got_sig, SIGFPE);
	CHECK_EQ(got_code, FPE_INTDIV);
}

static void sigill_ud2(void)
{
	CHECK_SYS(catch(SIGILL));
	if (sigsetjmp(jb, 1) == 0) {
		moat_ud2();
		FAIL("ud2 did not fault");
	}
	CHECK_EQ(got_sig, SIGILL);
	CHECK_EQ(got_code, ILL_ILLOPN);
	CHECK(got_addr == (void *)moat_ud2);
	CHECK_EQ(got_rip, (uintptr_t)moat_ud2);
	CHECK_EQ(got_trapno, 6);
}

static volatile int trap_count;
static volatile int trap_code;
static volatile uintptr_t trap_rip;

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig;
	trap_count++;
	trap_code = si->si_code;
	trap_rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}

static void sigtrap_int3_resumes(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGTRAP, &sa, NULL));
	trap_count = 0;
	moat_int3();
	/* The handler returned; execution went on after the int3. */
	CHECK_EQ(trap_count, 1);
	CHECK_EQ(trap_code, SI_KERNEL);
	CHECK_EQ(trap_rip, (uintptr_t)moat_int3 + 1);
}

static void on_skip_ud2(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig;
	(void)si;
	trap_count++;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static void sigill_handler_edits_rip(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_skip_ud2;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGILL, &sa, NULL));
	trap_count = 0;
	moat_ud2();
	moat_ud2();
	CHECK_EQ(trap_count, 2);
}

static volatile long saved_rbx_seen;

static void on_set_rax(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig;
	(void)si;
	saved_rbx_seen = uc->uc_mcontext.gregs[REG_RBX];
	uc->uc_mcontext.gregs[REG_RAX] = 0x1234567;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static void handler_sees_and_sets_registers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_set_rax;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGILL, &sa, NULL));
	long rax, rbx = 0x5a5a5a5a5aL;
	__asm__ volatile("mov $1, %%rax\n\tud2\n\t" : "=a"(rax) : "b"(rbx) : "memory");
	CHECK_EQ(rax, 0x1234567);
	CHECK_EQ(saved_rbx_seen, 0x5a5a5a5a5aL);
}

static void segv_mask_restored_by_siglongjmp(void)
{
	CHECK_SYS(catch(SIGSEGV));
	sigset_t cur;
	if (sigsetjmp(jb, 1) == 0) {
		*(volatile int *)0 = 0;
		FAIL("no fault");
	}
	CHECK_SYS(sigprocmask(SIG_BLOCK, NULL, &cur));
	CHECK_EQ(sigismember(&cur, SIGSEGV), 0);
	/* sigsetjmp(.., 0) does not restore: SIGSEGV stays blocked. */
	if (sigsetjmp(jb, 0) == 0) {
		*(volatile int *)0 = 0;
		FAIL("no fault");
	}
	CHECK_SYS(sigprocmask(SIG_BLOCK, NULL, &cur));
	CHECK_EQ(sigismember(&cur, SIGSEGV), 1);
}

static void repeated_faults(void)
{
	CHECK_SYS(catch(SIGSEGV));
	volatile int n = 0;
	for (int i = 0; i < 100; i++) {
		if (sigsetjmp(jb, 1) == 0)
			*(volatile int *)(uintptr_t)(8 * i) = 0;
		else
			n++;
	}
	CHECK_EQ(n, 100);
	CHECK(got_addr == (void *)(8 * 99));
}

static void raise_sigsegv_not_a_fault(void)
{
	CHECK_SYS(catch(SIGSEGV));
	if (sigsetjmp(jb, 1) == 0) {
		raise(SIGSEGV);
		FAIL("raise(SIGSEGV) returned without running the handler");
	}
	CHECK_EQ(got_sig, SIGSEGV);
	CHECK(got_code == SI_TKILL || got_code == SI_USER);
}

static int child_fault(int how)
{
	struct rlimit rl = { 0, 0 };
	setrlimit(RLIMIT_CORE, &rl);
	if (how == 1) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGSEGV);
		sigprocmask(SIG_BLOCK, &s, NULL);
	} else if (how == 2) {
		signal(SIGSEGV, SIG_IGN);
	}
	*(volatile int *)0 = 0;
	return 0;
}

static void default_sigsegv_kills(void)
{
	for (int how = 0; how < 3; how++) {
		pid_t pid = CHECK_SYS(fork());
		if (pid == 0)
			_exit(child_fault(how));
		int st = mt_wait(pid);
		CHECK_SIGNALED(st, SIGSEGV);
		CHECK(!WCOREDUMP(st));
	}
}

static void fault_in_handler_kills(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		/* A handler that faults again: SIGSEGV is blocked inside it, so
		 * the second fault kills the process. */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = (void (*)(int))(uintptr_t)0x10; /* not code */
		sigaction(SIGSEGV, &sa, NULL);
		*(volatile int *)0 = 0;
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGSEGV);
}

static void sigill_default_kills(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		moat_ud2();
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGILL);
}

static void on_overflow(int sig)
{
	(void)sig;
	_exit(42);
}

static volatile int recurse_limit = 1 << 30;

static int recurse(int n)
{
	volatile char buf[1024];
	buf[0] = (char)n;
	if (n > recurse_limit)
		return 0;
	return recurse(n + 1) + buf[0];
}

static void stack_overflow_on_altstack(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		struct rlimit stk = { 1 << 20, 1 << 20 };
		setrlimit(RLIMIT_STACK, &stk);
		static char alt[65536];
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
		sigaltstack(&ss, NULL);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_overflow;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		_exit(recurse(0) & 1);
	}
	CHECK_EXITED(mt_wait(pid), 42);
}

static void stack_overflow_without_altstack_kills(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		struct rlimit stk = { 1 << 20, 1 << 20 };
		setrlimit(RLIMIT_STACK, &stk);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_overflow;
		sigaction(SIGSEGV, &sa, NULL);
		_exit(recurse(0) & 1);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGSEGV);
}

static void bad_pointer_in_syscall_is_efault(void)
{
	CHECK_SYS(catch(SIGSEGV));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(write(p[1], bad_ptr, 4), EFAULT);
	CHECK_SYS(write(p[1], "abcd", 4));
	CHECK_ERR(read(p[0], bad_ptr, 4), EFAULT);
	CHECK_EQ(got_sig, 0);
	char *ro = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_ERR(read(p[0], ro, 4), EFAULT);
	CHECK_EQ(got_sig, 0);
	munmap(ro, 4096);
}

static const struct mt_case cases[] = {
	MT_CASE(null_deref_maperr),
	MT_CASE(unmapped_page_maperr),
	MT_CASE(write_readonly_accerr),
	MT_CASE(prot_none_read_accerr),
	MT_CASE(exec_noexec_page_accerr),
	MT_CASE(noncanonical_address_si_kernel),
	MT_CASE(sigbus_past_eof),
	MT_CASE(sigbus_memfd_truncated),
	MT_CASE(sigfpe_divide_by_zero),
	MT_CASE(sigfpe_int_min_div_minus_one),
	MT_CASE(sigill_ud2),
	MT_CASE(sigtrap_int3_resumes),
	MT_CASE(sigill_handler_edits_rip),
	MT_CASE(handler_sees_and_sets_registers),
	MT_CASE(segv_mask_restored_by_siglongjmp),
	MT_CASE(repeated_faults),
	MT_CASE(raise_sigsegv_not_a_fault),
	MT_CASE(default_sigsegv_kills),
	MT_CASE(fault_in_handler_kills),
	MT_CASE(sigill_default_kills),
	MT_CASE(stack_overflow_on_altstack),
	MT_CASE(stack_overflow_without_altstack_kills),
	MT_CASE(bad_pointer_in_syscall_is_efault),
};

MT_MAIN(cases)
