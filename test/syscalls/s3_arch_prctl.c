//go:build ignore

/* s3_arch_prctl: the x86-64 segment bases through arch_prctl: the GS base
 * per thread, kept over fork and signal delivery and cleared by exec, each
 * thread's FS base its own TLS block, setting FS and GS and reading
 * through them, the highest base allowed (TASK_SIZE_MAX, below 2^47 by a
 * page), ARCH_GET_CPUID/ARCH_SET_CPUID, and the errors (EINVAL, EFAULT,
 * EPERM). */
#include "moattest.h"

#include <asm/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long ap(int code, unsigned long arg)
{
	return syscall(SYS_arch_prctl, code, arg);
}

static unsigned long get_base(int code)
{
	unsigned long v = 0xdead;
	if (ap(code, (unsigned long)&v) != 0)
		return 0xdead;
	return v;
}

static unsigned long gs_word(void)
{
	unsigned long v;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(v));
	return v;
}

static unsigned long gs_area[4] = {0xabcdef0123456789UL, 1, 2, 3};
static unsigned long thread_area[4] = {0x1111222233334444UL, 0, 0, 0};

static void *thread_sets_gs(void *arg)
{
	unsigned long *seen = arg;
	seen[0] = get_base(ARCH_GET_GS);
	ap(ARCH_SET_GS, (unsigned long)thread_area);
	seen[1] = gs_word();
	seen[2] = get_base(ARCH_GET_FS);
	seen[3] = (unsigned long)pthread_self();
	return NULL;
}

static void gs_is_per_thread(void)
{
	CHECK_SYS(ap(ARCH_SET_GS, (unsigned long)gs_area));
	unsigned long seen[4];
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_sets_gs, seen));
	CHECK_RET0(pthread_join(t, NULL));
	/* A new thread starts with its creator's GS base (clone copies the
	 * registers)... */
	CHECK_EQ(seen[0], (unsigned long)gs_area);
	/* ...and its change is its own. */
	CHECK_EQ(seen[1], 0x1111222233334444UL);
	CHECK_EQ(get_base(ARCH_GET_GS), (unsigned long)gs_area);
	CHECK_EQ(gs_word(), 0xabcdef0123456789UL);
	CHECK_SYS(ap(ARCH_SET_GS, 0));
}

static void fs_is_each_threads_tls(void)
{
	unsigned long seen[4];
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, thread_sets_gs, seen));
	CHECK_RET0(pthread_join(t, NULL));
	/* glibc's pthread_t is the thread's TCB, which FS points at. */
	CHECK_EQ(seen[2], seen[3]);
	CHECK_NE(seen[2], get_base(ARCH_GET_FS));
	CHECK_EQ(get_base(ARCH_GET_FS), (unsigned long)pthread_self());
}

static void gs_kept_over_fork(void)
{
	CHECK_SYS(ap(ARCH_SET_GS, (unsigned long)gs_area));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(get_base(ARCH_GET_GS) == (unsigned long)gs_area);
		CHILD_CHECK(gs_word() == 0xabcdef0123456789UL);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_SYS(ap(ARCH_SET_GS, 0));
	CHECK_EXITED(st, 0);
}

static void gs_cleared_by_exec(void)
{
	CHECK_SYS(ap(ARCH_SET_GS, (unsigned long)gs_area));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		execl(mt_argv0, mt_argv0, "--gs-probe", (char *)NULL);
		_exit(2);
	}
	int st = mt_wait(pid);
	CHECK_SYS(ap(ARCH_SET_GS, 0));
	CHECK_EXITED(st, 0);
}

static volatile unsigned long in_handler;

static void read_gs(int sig)
{
	(void)sig;
	in_handler = gs_word();
}

static void gs_kept_over_signals(void)
{
	struct sigaction sa = {.sa_handler = read_gs};
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	CHECK_SYS(ap(ARCH_SET_GS, (unsigned long)gs_area));
	in_handler = 0;
	CHECK_SYS(raise(SIGUSR1));
	unsigned long after = gs_word();
	CHECK_SYS(ap(ARCH_SET_GS, 0));
	CHECK_EQ(in_handler, 0xabcdef0123456789UL);
	CHECK_EQ(after, 0xabcdef0123456789UL);
}

static void set_fs_and_read_through_it(void)
{
	unsigned long saved = get_base(ARCH_GET_FS);
	static unsigned long area[2] = {0x5555666677778888UL, 0x9999UL};
	unsigned long v0, v1;
	/* No library calls while FS is not glibc's. */
	long r = ap(ARCH_SET_FS, (unsigned long)area);
	__asm__ volatile("mov %%fs:0, %0" : "=r"(v0));
	__asm__ volatile("mov %%fs:8, %0" : "=r"(v1));
	long r2 = syscall(SYS_arch_prctl, ARCH_SET_FS, saved);
	CHECK_EQ(r, 0);
	CHECK_EQ(r2, 0);
	CHECK_EQ(v0, 0x5555666677778888UL);
	CHECK_EQ(v1, 0x9999UL);
	CHECK_EQ(get_base(ARCH_GET_FS), saved);
}

static void highest_base(void)
{
	/* Bases must lie below TASK_SIZE_MAX, one page under 2^47. */
	unsigned long top = (1UL << 47) - 4096;
	CHECK_SYS(ap(ARCH_SET_GS, top - 4096));
	CHECK_EQ(get_base(ARCH_GET_GS), top - 4096);
	CHECK_ERR(ap(ARCH_SET_GS, top), EPERM);
	CHECK_ERR(ap(ARCH_SET_GS, 1UL << 47), EPERM);
	CHECK_ERR(ap(ARCH_SET_FS, 0xffff800000000000UL), EPERM);
	CHECK_SYS(ap(ARCH_SET_GS, 0));
}

static void cpuid_state(void)
{
	CHECK_EQ(ap(ARCH_GET_CPUID, 0), 1);
	/* Enabling CPUID is a no-op where faulting is supported and ENODEV
	 * where the CPU (or the sandbox) cannot make CPUID fault. */
	errno = 0;
	long r = ap(ARCH_SET_CPUID, 1);
	CHECK(r == 0 || errno == ENODEV);
	CHECK_EQ(ap(ARCH_GET_CPUID, 0), 1);
	/* The argument of ARCH_GET_CPUID is ignored. */
	CHECK_EQ(ap(ARCH_GET_CPUID, 12345), 1);
}

static void argument_errors(void)
{
	CHECK_ERR(ap(0x1000, 0), EINVAL);
	CHECK_ERR(ap(0, 0), EINVAL);
	CHECK_ERR(ap(ARCH_GET_GS, 1), EFAULT);
	CHECK_ERR(ap(ARCH_GET_FS, 0), EFAULT);
	/* A failed set leaves the base alone. */
	unsigned long fs = get_base(ARCH_GET_FS);
	CHECK_ERR(ap(ARCH_SET_FS, ~0UL), EPERM);
	CHECK_EQ(get_base(ARCH_GET_FS), fs);
}

static const struct mt_case cases[] = {
	MT_CASE(gs_is_per_thread),
	MT_CASE(fs_is_each_threads_tls),
	MT_CASE(gs_kept_over_fork),
	MT_CASE(gs_cleared_by_exec),
	MT_CASE(gs_kept_over_signals),
	MT_CASE(set_fs_and_read_through_it),
	MT_CASE(cpuid_state),
	MT_CASE(argument_errors),
	/* Last: in the sandbox it currently kills the process. */
	MT_CASE(highest_base),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--gs-probe") == 0)
		return get_base(ARCH_GET_GS) == 0 ? 0 : 1;
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
