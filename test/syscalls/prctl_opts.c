//go:build ignore

/* prctl_opts: prctl(2) options one by one (names, death signal, dumpable,
 * no_new_privs, subreaper, keepcaps, capability bounding set, timer slack,
 * seccomp mode, THP, unknown options) and arch_prctl(2) FS/GS bases. */
#include "moattest.h"

#include <asm/prctl.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void set_name_truncates(void)
{
	char old[16], buf[32];
	CHECK_SYS(prctl(PR_GET_NAME, old, 0, 0, 0));
	CHECK_SYS(prctl(PR_SET_NAME, "a-very-long-thread-name-indeed", 0, 0, 0));
	memset(buf, 'x', sizeof(buf));
	CHECK_SYS(prctl(PR_GET_NAME, buf, 0, 0, 0));
	CHECK_STREQ(buf, "a-very-long-thr");
	CHECK_EQ(buf[16], 'x');
	CHECK_SYS(prctl(PR_SET_NAME, "", 0, 0, 0));
	CHECK_SYS(prctl(PR_GET_NAME, buf, 0, 0, 0));
	CHECK_STREQ(buf, "");
	CHECK_ERR(prctl(PR_SET_NAME, (void *)1, 0, 0, 0), EFAULT);
	CHECK_ERR(prctl(PR_GET_NAME, (void *)1, 0, 0, 0), EFAULT);
	CHECK_SYS(prctl(PR_SET_NAME, old, 0, 0, 0));
}

static void name_shows_in_proc_comm(void)
{
	char old[16], buf[64];
	CHECK_SYS(prctl(PR_GET_NAME, old, 0, 0, 0));
	CHECK_SYS(prctl(PR_SET_NAME, "commtest", 0, 0, 0));
	int fd = CHECK_SYS(open("/proc/self/comm", O_RDONLY));
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf) - 1));
	close(fd);
	buf[n] = 0;
	prctl(PR_SET_NAME, old, 0, 0, 0);
	CHECK_STREQ(buf, "commtest\n");
}

static void pdeathsig_values(void)
{
	int sig = -1, saved = -1;
	/* The harness may have set one for us (natively SIGKILL). */
	CHECK_SYS(prctl(PR_GET_PDEATHSIG, &saved, 0, 0, 0));
	CHECK(saved >= 0 && saved < 65);
	CHECK_SYS(prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0));
	CHECK_SYS(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
	CHECK_EQ(sig, SIGUSR1);
	CHECK_ERR(prctl(PR_SET_PDEATHSIG, 65, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_SET_PDEATHSIG, -1, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_GET_PDEATHSIG, (void *)1, 0, 0, 0), EFAULT);
	CHECK_SYS(prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0));
	CHECK_SYS(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
	CHECK_EQ(sig, 0);
	/* Not inherited by a child. */
	CHECK_SYS(prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int s = -1;
		prctl(PR_GET_PDEATHSIG, &s, 0, 0, 0);
		_exit(s == 0 ? 0 : 1);
	}
	int st = mt_wait(pid);
	prctl(PR_SET_PDEATHSIG, saved, 0, 0, 0);
	CHECK_EXITED(st, 0);
}

static void dumpable_values(void)
{
	CHECK_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	CHECK_ERR(prctl(PR_SET_DUMPABLE, 2, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_SET_DUMPABLE, 3, 0, 0, 0), EINVAL);
	CHECK_SYS(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
	CHECK_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	CHECK_SYS(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
}

static void no_new_privs_sticky(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
		CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 && errno == EINVAL);
		pid_t g = fork();
		if (g == 0)
			_exit(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 1);
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void child_subreaper(void)
{
	int v = -1;
	CHECK_SYS(prctl(PR_GET_CHILD_SUBREAPER, &v, 0, 0, 0));
	CHECK_EQ(v, 0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* A subreaper adopts its orphaned grandchildren. */
		CHILD_CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
		int s = 0;
		CHILD_CHECK(prctl(PR_GET_CHILD_SUBREAPER, &s, 0, 0, 0) == 0 && s == 1);
		int p[2];
		CHILD_CHECK(pipe(p) == 0);
		pid_t mid = fork();
		if (mid == 0) {
			pid_t g = fork();
			if (g == 0) {
				char c;
				close(p[1]);
				if (read(p[0], &c, 1) < 0)
					_exit(3);
				_exit(getppid() == getppid() ? 7 : 8);
			}
			_exit(0);
		}
		int st;
		CHILD_CHECK(waitpid(mid, &st, 0) == mid);
		close(p[0]);
		close(p[1]);
		/* The grandchild is now our child. */
		pid_t r = waitpid(-1, &st, 0);
		CHILD_CHECK(r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void keepcaps_values(void)
{
	CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 0);
	CHECK_ERR(prctl(PR_SET_KEEPCAPS, 5, 0, 0, 0), EINVAL);
	CHECK_SYS(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 1);
	CHECK_SYS(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0));
}

static void capbset_read_and_drop(void)
{
	CHECK_EQ(prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0), 1);
	CHECK_ERR(prctl(PR_CAPBSET_READ, 200, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_CAPBSET_READ, -1, 0, 0, 0), EINVAL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(prctl(PR_CAPBSET_DROP, CAP_MKNOD, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAPBSET_READ, CAP_MKNOD, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAPBSET_DROP, 200, 0, 0, 0) == -1 && errno == EINVAL);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* The parent's set is untouched. */
	CHECK_EQ(prctl(PR_CAPBSET_READ, CAP_MKNOD, 0, 0, 0), 1);
}

static void timerslack_roundtrip(void)
{
	long def = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	CHECK_EQ(def, 50000);
	CHECK_SYS(prctl(PR_SET_TIMERSLACK, 12345, 0, 0, 0));
	CHECK_EQ(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 12345);
	/* 0 restores the default. */
	CHECK_SYS(prctl(PR_SET_TIMERSLACK, 0, 0, 0, 0));
	CHECK_EQ(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 50000);
}

static void seccomp_mode_query(void)
{
	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
	CHECK_ERR(prctl(PR_SET_SECCOMP, 42, 0, 0, 0), EINVAL);
}

static void seccomp_strict_mode(void)
{
	/* Strict mode in a child: only read/write/exit/sigreturn remain. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0)
			_exit(2);
		syscall(SYS_getpid);
		_exit(3);
	}
	int st = mt_wait(pid);
	CHECK_SIGNALED(st, SIGKILL);
}

static void thp_disable_roundtrip(void)
{
	CHECK_EQ(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), 0);
	CHECK_SYS(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	CHECK_EQ(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), 1);
	CHECK_SYS(prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0));
}

static void unknown_options(void)
{
	CHECK_ERR(prctl(0, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(9999, 0, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(-1, 0, 0, 0, 0), EINVAL);
}

static void arch_prctl_fs_gs(void)
{
	unsigned long fs = 0, gs = 1;
	CHECK_SYS(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs));
	CHECK_NE(fs, 0);
	/* glibc keeps the TCB self pointer at %fs:0. */
	unsigned long self;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(self));
	CHECK_EQ(self, fs);
	CHECK_SYS(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs));
	CHECK_EQ(gs, 0);
	static unsigned long gsarea[4] = {0x1122334455667788UL, 2, 3, 4};
	CHECK_SYS(syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)gsarea));
	unsigned long v;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(v));
	CHECK_EQ(v, 0x1122334455667788UL);
	CHECK_SYS(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs));
	CHECK_EQ(gs, (unsigned long)gsarea);
	CHECK_SYS(syscall(SYS_arch_prctl, ARCH_SET_GS, 0UL));
}

static void arch_prctl_errors(void)
{
	CHECK_ERR(syscall(SYS_arch_prctl, 0x9999, 0UL), EINVAL);
	CHECK_ERR(syscall(SYS_arch_prctl, ARCH_GET_FS, (void *)1), EFAULT);
	/* A non-canonical base is refused. */
	CHECK_ERR(syscall(SYS_arch_prctl, ARCH_SET_GS, 0x8000000000000000UL), EPERM);
	/* CPUID faulting state reads as 1 (cpuid allowed). */
	CHECK_EQ(syscall(SYS_arch_prctl, ARCH_GET_CPUID, 0UL), 1);
}

static const struct mt_case cases[] = {
	MT_CASE(set_name_truncates),
	MT_CASE(name_shows_in_proc_comm),
	MT_CASE(pdeathsig_values),
	MT_CASE(dumpable_values),
	MT_CASE(no_new_privs_sticky),
	MT_CASE(child_subreaper),
	MT_CASE(keepcaps_values),
	MT_CASE(capbset_read_and_drop),
	MT_CASE(timerslack_roundtrip),
	MT_CASE(seccomp_mode_query),
	MT_CASE(seccomp_strict_mode),
	MT_CASE(thp_disable_roundtrip),
	MT_CASE(unknown_options),
	MT_CASE(arch_prctl_fs_gs),
	MT_CASE(arch_prctl_errors),
};

MT_MAIN(cases)
