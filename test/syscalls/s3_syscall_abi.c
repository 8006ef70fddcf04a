//go:build ignore

/* s3_syscall_abi: the x86-64 system call convention itself: every
 * register but RAX, RCX and R11 preserved, RCX holding the return address
 * and R11 the flags afterwards, numbers out of range (ENOSYS, with the
 * upper 32 bits of RAX ignored), and arguments of int type taking only
 * their low 32 bits (close, dup2, kill, lseek's whence, umask). */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw6(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

static void registers_preserved(void)
{
	unsigned long in[10] = {0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777, 0x8888, 0x9999, 0xaaaa};
	unsigned long out[10];
	/* getpid with every register loaded; rbp and rbx too. */
	__asm__ volatile("mov %[i], %%r14\n\t"
			 "mov %[o], %%r15\n\t"
			 "push %%rbp\n\t"
			 "push %%rbx\n\t"
			 "mov 0(%%r14), %%rbx\n\t"
			 "mov 8(%%r14), %%rbp\n\t"
			 "mov 16(%%r14), %%rdi\n\t"
			 "mov 24(%%r14), %%rsi\n\t"
			 "mov 32(%%r14), %%rdx\n\t"
			 "mov 40(%%r14), %%r8\n\t"
			 "mov 48(%%r14), %%r9\n\t"
			 "mov 56(%%r14), %%r10\n\t"
			 "mov 64(%%r14), %%r12\n\t"
			 "mov 72(%%r14), %%r13\n\t"
			 "mov $39, %%eax\n\t"
			 "syscall\n\t"
			 "mov %%rbx, 0(%%r15)\n\t"
			 "mov %%rbp, 8(%%r15)\n\t"
			 "mov %%rdi, 16(%%r15)\n\t"
			 "mov %%rsi, 24(%%r15)\n\t"
			 "mov %%rdx, 32(%%r15)\n\t"
			 "mov %%r8, 40(%%r15)\n\t"
			 "mov %%r9, 48(%%r15)\n\t"
			 "mov %%r10, 56(%%r15)\n\t"
			 "mov %%r12, 64(%%r15)\n\t"
			 "mov %%r13, 72(%%r15)\n\t"
			 "pop %%rbx\n\t"
			 "pop %%rbp"
			 :
			 : [i] "r"(in), [o] "r"(out)
			 : "rax", "rcx", "rdi", "rsi", "rdx", "r8", "r9", "r10", "r11", "r12", "r13",
			   "r14", "r15", "memory");
	for (int i = 0; i < 10; i++)
		CHECK_EQ(out[i], in[i]);
}

static void rcx_and_r11_after_syscall(void)
{
	unsigned long rcx, r11, next, flags;
	__asm__ volatile("pushf\n\t"
			 "pop %[f]\n\t"
			 "mov $39, %%eax\n\t"
			 "syscall\n"
			 "1:\n\t"
			 "lea 1b(%%rip), %[n]\n\t"
			 "mov %%rcx, %[c]\n\t"
			 "mov %%r11, %[r]"
			 : [c] "=&r"(rcx), [r] "=&r"(r11), [n] "=&r"(next), [f] "=&r"(flags)
			 :
			 : "rax", "rcx", "r11", "memory");
	/* SYSCALL leaves the return address in RCX and the flags in R11. */
	CHECK_EQ(rcx, next);
	/* R11 holds the flags as they were (RF aside), with the reserved
	 * bit 1 set. */
	CHECK_EQ(r11 & ~0x10000UL, flags & ~0x10000UL);
	CHECK_EQ(r11 & 2, 2);
}

static void unknown_numbers_enosys(void)
{
	CHECK_EQ(raw6(-1, 0, 0, 0), -ENOSYS);
	CHECK_EQ(raw6(1000, 0, 0, 0), -ENOSYS);
	CHECK_EQ(raw6(600, 0, 0, 0), -ENOSYS);
	CHECK_EQ(raw6(0x7fffffff, 0, 0, 0), -ENOSYS);
	/* Numbers in the unused gap of the table. */
	CHECK_EQ(raw6(400, 0, 0, 0), -ENOSYS);
}

static void upper_bits_of_number_ignored(void)
{
	/* Since Linux 5.10 the entry code uses only EAX (the number is an
	 * int): getpid with junk above it. */
	CHECK_EQ(raw6(0x100000000L | SYS_getpid, 0, 0, 0), getpid());
	CHECK_EQ(raw6((long)0xdead000000000000UL | SYS_gettid, 0, 0, 0), syscall(SYS_gettid));
}

static void int_arguments_truncated(void)
{
	int fd = CHECK_SYS(dup(1));
	/* close(unsigned int fd): the upper half is not looked at. */
	CHECK_EQ(raw6(SYS_close, (1L << 32) | fd, 0, 0), 0);
	CHECK_ERR(fcntl(fd, F_GETFD), EBADF);
	/* dup2(unsigned int, unsigned int). */
	CHECK_EQ(raw6(SYS_dup2, (7L << 32) | 1, (9L << 32) | 40, 0), 40);
	CHECK_SYS(fcntl(40, F_GETFD));
	/* kill(pid_t, int): signal 0 to ourselves with junk above. */
	CHECK_EQ(raw6(SYS_kill, (5L << 32) | getpid(), (3L << 32) | 0, 0), 0);
	/* umask(int). */
	long old = raw6(SYS_umask, (1L << 40) | 077, 0, 0);
	CHECK_EQ(old, 022);
	CHECK_EQ(raw6(SYS_umask, 022, 0, 0), 077);
}

static void lseek_whence_truncated(void)
{
	int fd = CHECK_SYS(memfd_create("m", 0));
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	/* lseek(unsigned int fd, off_t, unsigned int whence). */
	CHECK_EQ(raw6(SYS_lseek, fd, 3, (1L << 32) | SEEK_SET), 3);
	CHECK_EQ(raw6(SYS_lseek, (2L << 32) | fd, 2, SEEK_CUR), 5);
	/* The offset is a full 64-bit value: not truncated. */
	CHECK_EQ(raw6(SYS_lseek, fd, (1L << 32), SEEK_SET), 1L << 32);
	CHECK_EQ(raw6(SYS_lseek, fd, 0, (1L << 32) | 7), -EINVAL);
}

static void negative_returns_are_errnos(void)
{
	/* Errors come back as -4095..-1 in RAX. */
	long r = raw6(SYS_close, 99, 0, 0);
	CHECK_EQ(r, -EBADF);
	r = raw6(SYS_open, (long)"/nonexistent", O_RDONLY, 0);
	CHECK_EQ(r, -ENOENT);
	r = raw6(SYS_getppid, 0, 0, 0);
	CHECK_GE(r, 0);
}

static void leftover_arguments_ignored(void)
{
	/* Calls taking no arguments ignore whatever the argument registers
	 * hold. */
	CHECK_EQ(raw6(SYS_getpid, -1, -1, -1), getpid());
	CHECK_EQ(raw6(SYS_getuid, 12345, 0, 0), getuid());
}

static const struct mt_case cases[] = {
	MT_CASE(registers_preserved),
	MT_CASE(rcx_and_r11_after_syscall),
	MT_CASE(unknown_numbers_enosys),
	MT_CASE(upper_bits_of_number_ignored),
	MT_CASE(int_arguments_truncated),
	MT_CASE(lseek_whence_truncated),
	MT_CASE(negative_returns_are_errnos),
	MT_CASE(leftover_arguments_ignored),
};

MT_MAIN(cases)
