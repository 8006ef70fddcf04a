//go:build ignore

/* s2_process_vm: process_vm_readv and process_vm_writev: own and child
 * memory, scatter/gather across iovecs, partial transfers (remote and
 * local faults), and the errors for flags, iovec counts, missing and
 * zombie processes, bad addresses, read-only targets and permission, in
 * Linux's order (empty transfers succeed before the process is looked
 * up). */
#include "moattest.h"
#include <grp.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char secret[64] = "the quick brown fox";

static void read_own_memory(void)
{
	char buf[32] = { 0 };
	struct iovec l = { buf, 9 }, r = { secret, 9 };
	CHECK_EQ(process_vm_readv(getpid(), &l, 1, &r, 1, 0), 9);
	CHECK_MEMEQ(buf, "the quick", 9);
}

static void write_own_memory(void)
{
	char src[] = "HELLO";
	char dst[8] = "......";
	struct iovec l = { src, 5 }, r = { dst, 5 };
	CHECK_EQ(process_vm_writev(getpid(), &l, 1, &r, 1, 0), 5);
	CHECK_MEMEQ(dst, "HELLO.", 6);
}

static void scatter_gather(void)
{
	char a[4], b[6];
	struct iovec l[2] = { { a, 4 }, { b, 6 } };
	struct iovec r[2] = { { secret, 3 }, { secret + 4, 7 } };
	CHECK_EQ(process_vm_readv(getpid(), l, 2, r, 2, 0), 10);
	CHECK_MEMEQ(a, "theq", 4);
	CHECK_MEMEQ(b, "uick b", 6);
}

static void read_child_memory(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		strcpy(secret, "changed in the child");
		char x = 1;
		CHILD_CHECK(write(p[1], &x, 1) == 1);
		pause();
		_exit(0);
	}
	char x;
	CHECK_EQ(read(p[0], &x, 1), 1);
	char buf[32] = { 0 };
	struct iovec l = { buf, 20 }, r = { secret, 20 };
	CHECK_EQ(process_vm_readv(c, &l, 1, &r, 1, 0), 20);
	CHECK_MEMEQ(buf, "changed in the child", 20);
	/* Our own copy is untouched. */
	CHECK_MEMEQ(secret, "the quick brown fox", 19);
	CHECK_SYS(kill(c, SIGKILL));
	CHECK_SIGNALED(mt_wait(c), SIGKILL);
}

static void bad_flags_and_counts(void)
{
	char buf[8];
	struct iovec l = { buf, 8 }, r = { secret, 8 };
	CHECK_ERR(process_vm_readv(getpid(), &l, 1, &r, 1, 1), EINVAL);
	CHECK_ERR(process_vm_writev(getpid(), &l, 1, &r, 1, 1), EINVAL);
	CHECK_ERR(syscall(SYS_process_vm_readv, getpid(), &l, IOV_MAX + 1, &r, 1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, IOV_MAX + 1, 0), EINVAL);
	/* Zero iovecs transfer nothing. */
	CHECK_EQ(process_vm_readv(getpid(), &l, 0, &r, 1, 0), 0);
	CHECK_EQ(process_vm_readv(getpid(), &l, 1, &r, 0, 0), 0);
}

static void missing_process_esrch(void)
{
	char buf[8];
	struct iovec l = { buf, 8 }, r = { secret, 8 };
	CHECK_ERR(process_vm_readv(4194305, &l, 1, &r, 1, 0), ESRCH);
	CHECK_ERR(process_vm_writev(4194305, &l, 1, &r, 1, 0), ESRCH);
}

static void bad_addresses_efault(void)
{
	char buf[8];
	struct iovec l = { buf, 8 }, r = { (void *)1, 8 };
	CHECK_ERR(process_vm_readv(getpid(), &l, 1, &r, 1, 0), EFAULT);
	struct iovec lbad = { (void *)1, 8 }, rok = { secret, 8 };
	CHECK_ERR(process_vm_readv(getpid(), &lbad, 1, &rok, 1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_process_vm_readv, getpid(), (void *)1, 1, &rok, 1, 0), EFAULT);
	CHECK_ERR(syscall(SYS_process_vm_readv, getpid(), &l, 1, (void *)1, 1, 0), EFAULT);
}

static void partial_transfer(void)
{
	/* The second remote iovec is unmapped: the count stops before it. */
	char *m = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(munmap(m + 4096, 4096));
	memcpy(m, "abcd", 4);
	char buf[16];
	struct iovec l = { buf, 16 };
	struct iovec r[2] = { { m, 4 }, { m + 4096, 8 } };
	CHECK_EQ(process_vm_readv(getpid(), &l, 1, r, 2, 0), 4);
	CHECK_MEMEQ(buf, "abcd", 4);
	/* A remote range running off the mapping stops at its end. */
	struct iovec r2 = { m + 4096 - 3, 8 };
	CHECK_EQ(process_vm_readv(getpid(), &l, 1, &r2, 1, 0), 3);
}

static void unprivileged_eperm(void)
{
	pid_t parent = getpid();
	AS_USER(
		char b[8];
		struct iovec l = { b, 8 }, r = { secret, 8 };
		CHILD_ERR(process_vm_readv(parent, &l, 1, &r, 1, 0), EPERM);
		CHILD_ERR(process_vm_writev(parent, &l, 1, &r, 1, 0), EPERM);
		CHILD_CHECK(process_vm_readv(getpid(), &l, 1, &r, 1, 0) == 8);
	);
}

static void write_child_memory(void)
{
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		char x = 1;
		CHILD_CHECK(write(done[1], &x, 1) == 1);
		CHILD_CHECK(read(go[0], &x, 1) == 1);
		_exit(memcmp(secret, "THE QUICK", 9) == 0 ? 0 : 1);
	}
	char x;
	CHECK_EQ(read(done[0], &x, 1), 1);
	char src[] = "THE QUICK";
	struct iovec l = { src, 9 }, r = { secret, 9 };
	CHECK_EQ(process_vm_writev(c, &l, 1, &r, 1, 0), 9);
	/* Only the child's copy changed. */
	CHECK_MEMEQ(secret, "the quick", 9);
	CHECK_EQ(write(go[1], &x, 1), 1);
	CHECK_EXITED(mt_wait(c), 0);
}

static void readonly_target_efault(void)
{
	char *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	char src[4] = "abc";
	struct iovec l = { src, 4 }, r = { m, 4 };
	CHECK_ERR(process_vm_writev(getpid(), &l, 1, &r, 1, 0), EFAULT);
	CHECK_EQ(m[0], 0);
	/* A read into a read-only local buffer fails the same way. */
	char *s = secret;
	struct iovec l2 = { m, 4 }, r2 = { s, 4 };
	CHECK_ERR(process_vm_readv(getpid(), &l2, 1, &r2, 1, 0), EFAULT);
	CHECK_SYS(munmap(m, 4096));
}

static void local_fault_partial(void)
{
	char *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(munmap(m, 4096));
	char buf[4];
	struct iovec l[2] = { { buf, 4 }, { m, 4 } };
	struct iovec r = { secret, 8 };
	CHECK_EQ(process_vm_readv(getpid(), l, 2, &r, 1, 0), 4);
	CHECK_MEMEQ(buf, "the ", 4);
	/* Writing from an unmapped local buffer copies what came before. */
	char dst[8] = "........";
	struct iovec w[2] = { { "ABCD", 4 }, { m, 4 } };
	struct iovec rd = { dst, 8 };
	CHECK_EQ(process_vm_writev(getpid(), w, 2, &rd, 1, 0), 4);
	CHECK_MEMEQ(dst, "ABCD....", 8);
}

static void empty_transfers_skip_lookup(void)
{
	char buf[8];
	struct iovec l = { buf, 8 }, r = { secret, 8 };
	struct iovec lz = { buf, 0 }, rz = { secret, 0 };
	/* Nothing to move: no process is looked up, no remote iovec read. */
	CHECK_EQ(process_vm_readv(4194305, &lz, 1, &r, 1, 0), 0);
	CHECK_EQ(syscall(SYS_process_vm_readv, 4194305, &lz, 1, (void *)1, 1, 0), 0);
	CHECK_EQ(process_vm_readv(4194305, &l, 1, &rz, 1, 0), 0);
	CHECK_EQ(process_vm_writev(4194305, &l, 1, &r, 0, 0), 0);
	/* But the flags are checked first. */
	CHECK_ERR(process_vm_readv(4194305, &lz, 1, &r, 1, 2), EINVAL);
}

static void zombie_esrch(void)
{
	pid_t c = CHECK_SYS(fork());
	if (c == 0)
		_exit(0);
	siginfo_t si;
	CHECK_SYS(waitid(P_PID, c, &si, WEXITED | WNOWAIT));
	char buf[8];
	struct iovec l = { buf, 8 }, r = { secret, 8 };
	CHECK_ERR(process_vm_readv(c, &l, 1, &r, 1, 0), ESRCH);
	CHECK_EXITED(mt_wait(c), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(read_own_memory),
	MT_CASE(write_own_memory),
	MT_CASE(scatter_gather),
	MT_CASE(read_child_memory),
	MT_CASE(bad_flags_and_counts),
	MT_CASE(missing_process_esrch),
	MT_CASE(bad_addresses_efault),
	MT_CASE(partial_transfer),
	MT_CASE(unprivileged_eperm),
	MT_CASE(write_child_memory),
	MT_CASE(readonly_target_efault),
	MT_CASE(local_fault_partial),
	MT_CASE(empty_transfers_skip_lookup),
	MT_CASE(zombie_esrch),
};

MT_MAIN(cases)
