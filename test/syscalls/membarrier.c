//go:build ignore

/* membarrier: QUERY, argument checks, registration (EPERM before it,
 * GET_REGISTRATIONS, kept across fork, dropped by exec), the global and
 * expedited barriers, and barriers while another thread spins in
 * application code without making syscalls. */
#include "moattest.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MEMBARRIER_CMD_GET_REGISTRATIONS
#define MEMBARRIER_CMD_GET_REGISTRATIONS (1 << 9)
#endif

static long membarrier(int cmd, unsigned flags, int cpu) { return syscall(SYS_membarrier, cmd, flags, cpu); }

/* The commands every Linux this runs on answers (RSEQ ones depend on
 * CONFIG_RSEQ, GLOBAL on nohz_full being off). */
#define REQUIRED                                                                              \
	(MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |                            \
	 MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED |         \
	 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE | \
	 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE | MEMBARRIER_CMD_GET_REGISTRATIONS)

static void query(void)
{
	long q = CHECK_SYS(membarrier(MEMBARRIER_CMD_QUERY, 0, 0));
	CHECK_EQ(q & REQUIRED, REQUIRED);
	CHECK_EQ(q & ~1023L, 0);
	/* RSEQ commands: EPERM before registration where supported. */
	if (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)
		CHECK_ERR(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0), EPERM);
	else
		CHECK_ERR(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0), EINVAL);
}

static void bad_arguments(void)
{
	CHECK_ERR(membarrier(MEMBARRIER_CMD_QUERY, 1, 0), EINVAL);
	CHECK_ERR(membarrier(MEMBARRIER_CMD_GLOBAL, 1, 0), EINVAL);
	CHECK_ERR(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 1, 0), EINVAL);
	CHECK_ERR(membarrier(MEMBARRIER_CMD_QUERY, 2, 0), EINVAL);
	CHECK_ERR(membarrier(3, 0, 0), EINVAL);
	CHECK_ERR(membarrier(1 << 10, 0, 0), EINVAL);
	CHECK_ERR(membarrier(-1, 0, 0), EINVAL);
	/* cpu_id is ignored without MEMBARRIER_CMD_FLAG_CPU. */
	CHECK_SYS(membarrier(MEMBARRIER_CMD_QUERY, 0, -5));
}

/* Each case runs in a fresh child: registrations last as long as the
 * address space. */
#define IN_CHILD(...)                                   \
	do {                                            \
		pid_t __c = fork();                     \
		CHECK(__c >= 0);                        \
		if (__c == 0) {                         \
			__VA_ARGS__;                    \
			_exit(0);                       \
		}                                       \
		int __st;                               \
		CHECK_SYS(waitpid(__c, &__st, 0));      \
		CHECK_EXITED(__st, 0);                  \
	} while (0)

static void private_needs_registration(void)
{
	IN_CHILD({
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_GET_REGISTRATIONS, 0, 0) == 0);
		CHILD_ERR(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0), EPERM);
		CHILD_ERR(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0), EPERM);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0);
		/* SYNC_CORE has its own registration. */
		CHILD_ERR(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0), EPERM);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_GET_REGISTRATIONS, 0, 0) ==
			    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_GET_REGISTRATIONS, 0, 0) ==
			    (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED |
			     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
			     MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED));
	});
}

static char *self_exe;

static void registration_fork_and_exec(void)
{
	IN_CHILD({
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
		pid_t g = fork();
		if (g == 0) {
			/* fork copies the address space with its registrations. */
			if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
				_exit(3);
			/* exec starts a new one without. */
			execl(self_exe, self_exe, "membarrier-exec-child", (char *)NULL);
			_exit(4);
		}
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	});
}

static void global_barriers(void)
{
	CHECK_SYS(membarrier(MEMBARRIER_CMD_GLOBAL, 0, 0));
	/* Needs no registration of the caller. */
	CHECK_SYS(membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0));
}

static volatile int stop_spin;
static volatile unsigned long spins;

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop_spin)
		spins++;
	return NULL;
}

static void barrier_with_spinning_threads(void)
{
	IN_CHILD({
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0);
		pthread_t th[2];
		for (int i = 0; i < 2; i++)
			CHILD_CHECK(pthread_create(&th[i], NULL, spinner, NULL) == 0);
		while (spins < 1000)
			;
		for (int i = 0; i < 50; i++) {
			CHILD_CHECK(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0);
			CHILD_CHECK(membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0);
		}
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_GLOBAL, 0, 0) == 0);
		/* The spinners go on after the barriers. */
		unsigned long before = spins;
		while (spins == before)
			;
		stop_spin = 1;
		for (int i = 0; i < 2; i++)
			CHILD_CHECK(pthread_join(th[i], NULL) == 0);
	});
}

/* Dekker's pattern with the fence on one side only: the fast side orders
 * its store and load with a compiler barrier, the slow side with
 * membarrier. Both loads reading 0 would mean the barrier did not order
 * the fast side's accesses. */
static volatile int dx, dy, go_round, done_round;
static volatile int r_fast;

static void *fast_side(void *arg)
{
	(void)arg;
	for (int round = 1; round <= 2000; round++) {
		while (go_round != round)
			;
		dx = 1;
		__asm__ volatile("" ::: "memory");
		r_fast = dy;
		__atomic_store_n(&done_round, round, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void asymmetric_fence(void)
{
	IN_CHILD({
		CHILD_CHECK(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
		pthread_t th;
		CHILD_CHECK(pthread_create(&th, NULL, fast_side, NULL) == 0);
		for (int round = 1; round <= 2000; round++) {
			dx = dy = 0;
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			__atomic_store_n(&go_round, round, __ATOMIC_RELEASE);
			dy = 1;
			__asm__ volatile("" ::: "memory");
			if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
				_exit(5);
			int r_slow = dx;
			while (__atomic_load_n(&done_round, __ATOMIC_ACQUIRE) != round)
				;
			if (r_slow == 0 && r_fast == 0)
				_exit(6);
		}
		CHILD_CHECK(pthread_join(th, NULL) == 0);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(query),
	MT_CASE(bad_arguments),
	MT_CASE(private_needs_registration),
	MT_CASE(registration_fork_and_exec),
	MT_CASE(global_barriers),
	MT_CASE(barrier_with_spinning_threads),
	MT_CASE(asymmetric_fence),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "membarrier-exec-child") == 0) {
		if (membarrier(MEMBARRIER_CMD_GET_REGISTRATIONS, 0, 0) != 0)
			return 1;
		if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != -1 || errno != EPERM)
			return 2;
		return 0;
	}
	self_exe = argv[0];
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
