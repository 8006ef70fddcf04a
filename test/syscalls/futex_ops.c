//go:build ignore

/* futex_ops: futex(2) operations in detail: WAIT timeouts and value
 * checks, WAKE counts, REQUEUE/CMP_REQUEUE limits, every WAKE_OP operation
 * and comparison, BITSET matching, CLOCK_REALTIME rules, PI errors and
 * argument errors. */
#include "moattest.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long futex(void *uaddr, int op, uint32_t val, const void *ts, void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

struct waiter {
	uint32_t *word;
	uint32_t expect;
	int op;
	uint32_t bitset;
	pid_t tid;
	long ret;
	int err;
	atomic_int done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	w->tid = (pid_t)syscall(SYS_gettid);
	long r;
	if (w->op == FUTEX_WAIT_BITSET_PRIVATE)
		r = futex(w->word, w->op, w->expect, NULL, NULL, w->bitset);
	else
		r = futex(w->word, w->op, w->expect, NULL, NULL, 0);
	w->ret = r;
	w->err = r == -1 ? errno : 0;
	atomic_store(&w->done, 1);
	return NULL;
}

/* start_waiters starts n threads waiting on word and waits until each is
 * asleep in the kernel. */
static int start_waiters(struct waiter *w, pthread_t *th, int n)
{
	for (int i = 0; i < n; i++) {
		atomic_store(&w[i].done, 0);
		w[i].tid = 0;
		if (pthread_create(&th[i], NULL, wait_thread, &w[i]) != 0)
			return -1;
	}
	for (int i = 0; i < n; i++) {
		while (__atomic_load_n(&w[i].tid, __ATOMIC_SEQ_CST) == 0)
			sched_yield();
		if (mt_wait_blocked(w[i].tid, 5000) != 0)
			return -1;
	}
	return 0;
}

static int count_done(struct waiter *w, int n)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += atomic_load(&w[i].done);
	return c;
}

/* settle gives woken threads time to run (they are already runnable). */
static void settle(struct waiter *w, int n, int want)
{
	for (int i = 0; i < 500 && count_done(w, n) < want; i++) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
}

static void wait_timeout_etimedout(void)
{
	uint32_t word = 0;
	struct timespec ts = {0, 20 * 1000 * 1000};
	int64_t t0 = mt_now_ns();
	CHECK_ERR(futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0), ETIMEDOUT);
	CHECK_GE(mt_now_ns() - t0, 19 * 1000 * 1000);
	struct timespec zero = {0, 0};
	CHECK_ERR(futex(&word, FUTEX_WAIT_PRIVATE, 0, &zero, NULL, 0), ETIMEDOUT);
}

static void wait_bad_timeout(void)
{
	uint32_t word = 0;
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(futex(&word, FUTEX_WAIT_PRIVATE, 0, &bad, NULL, 0), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(futex(&word, FUTEX_WAIT_PRIVATE, 0, &neg, NULL, 0), EINVAL);
	CHECK_ERR(futex(&word, FUTEX_WAIT_PRIVATE, 0, (void *)1, NULL, 0), EFAULT);
}

static void wait_value_mismatch_eagain(void)
{
	uint32_t word = 5;
	CHECK_ERR(futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0), EAGAIN);
	CHECK_ERR(futex(&word, FUTEX_WAIT, 6, NULL, NULL, 0), EAGAIN);
}

static void unaligned_address_einval(void)
{
	uint32_t words[2] = {0, 0};
	char *p = (char *)words + 1;
	CHECK_ERR(futex(p, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EINVAL);
	CHECK_ERR(futex(p, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), EINVAL);
}

static void bad_op_enosys(void)
{
	uint32_t word = 0;
	CHECK_ERR(futex(&word, 99, 0, NULL, NULL, 0), ENOSYS);
	CHECK_ERR(futex(&word, FUTEX_PRIVATE_FLAG | 99, 0, NULL, NULL, 0), ENOSYS);
}

static void clock_realtime_rules(void)
{
	uint32_t word = 0;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	/* WAIT_BITSET takes an absolute CLOCK_REALTIME deadline. */
	CHECK_ERR(futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &now, NULL,
			FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	/* WAKE with FUTEX_CLOCK_REALTIME is not a thing. */
	CHECK_ERR(futex(&word, FUTEX_WAKE_PRIVATE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0), ENOSYS);
}

static void wake_count_limits(void)
{
	uint32_t word = 0;
	struct waiter w[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		w[i].word = &word;
		w[i].expect = 0;
		w[i].op = FUTEX_WAIT_PRIVATE;
	}
	CHECK_EQ(start_waiters(w, th, 3), 0);
	/* A count of 0 still wakes one waiter on Linux. */
	CHECK_EQ(futex(&word, FUTEX_WAKE_PRIVATE, 0, NULL, NULL, 0), 1);
	CHECK_EQ(futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 1);
	settle(w, 3, 2);
	CHECK_EQ(count_done(w, 3), 2);
	CHECK_EQ(futex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(w[i].ret, 0);
}

static void private_wake_misses_shared_wait(void)
{
	/* On private memory both namespaces resolve to the same futex on
	 * Linux: a shared wait is woken by a private wake. */
	uint32_t word = 0;
	struct waiter w = {.word = &word, .expect = 0, .op = FUTEX_WAIT};
	pthread_t th;
	CHECK_EQ(start_waiters(&w, &th, 1), 0);
	long woke = futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	if (woke == 0)
		futex(&word, FUTEX_WAKE, 1, NULL, NULL, 0);
	pthread_join(th, NULL);
	/* Linux keys private futexes by (mm, address) and shared ones on
	 * private memory by (mm, address) too, so they do not match: a
	 * private wake wakes nobody. */
	CHECK_EQ(woke, 0);
}

static void requeue_moves_waiters(void)
{
	uint32_t a = 0, b = 0;
	struct waiter w[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		w[i].word = &a;
		w[i].expect = 0;
		w[i].op = FUTEX_WAIT_PRIVATE;
	}
	CHECK_EQ(start_waiters(w, th, 3), 0);
	/* Wake 1, move up to 1 (val2 goes in the timeout slot). */
	CHECK_EQ(futex(&a, FUTEX_REQUEUE_PRIVATE, 1, (void *)1L, &b, 0), 2);
	settle(w, 3, 1);
	CHECK_EQ(count_done(w, 3), 1);
	/* One still on a, one on b. */
	CHECK_EQ(futex(&b, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 1);
	CHECK_EQ(futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
}

static void cmp_requeue_value_check(void)
{
	uint32_t a = 3, b = 0;
	CHECK_ERR(futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &b, 4), EAGAIN);
	CHECK_EQ(futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &b, 3), 0);
	/* Negative counts are invalid. */
	CHECK_ERR(futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, -1, (void *)1L, &b, 3), EINVAL);
	CHECK_ERR(futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)-1L, &b, 3), EINVAL);
	/* Requeue onto itself is EINVAL for CMP_REQUEUE_PI only; a plain one
	 * to the same word is allowed. */
	CHECK_EQ(futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &a, 3), 0);
}

struct wakeop_case {
	const char *name;
	int op, oparg, cmp, cmparg;
	uint32_t old, want_new;
	int want_cond;
};

static void wake_op_all_operations(void)
{
	static const struct wakeop_case cs[] = {
		{"set", FUTEX_OP_SET, 9, FUTEX_OP_CMP_EQ, 5, 5, 9, 1},
		{"add", FUTEX_OP_ADD, 3, FUTEX_OP_CMP_NE, 5, 5, 8, 0},
		{"or", FUTEX_OP_OR, 0x10, FUTEX_OP_CMP_LT, 6, 5, 0x15, 1},
		{"andn", FUTEX_OP_ANDN, 0x4, FUTEX_OP_CMP_LE, 4, 5, 1, 0},
		{"xor", FUTEX_OP_XOR, 0xf, FUTEX_OP_CMP_GT, 4, 5, 0xa, 1},
		{"ge", FUTEX_OP_SET, 0, FUTEX_OP_CMP_GE, 5, 5, 0, 1},
		{"ge_false", FUTEX_OP_SET, 0, FUTEX_OP_CMP_GE, 6, 5, 0, 0},
		{"shift", FUTEX_OP_SET | (FUTEX_OP_OPARG_SHIFT << 0), 4, FUTEX_OP_CMP_EQ, 5, 5, 16, 1},
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		const struct wakeop_case *c = &cs[i];
		uint32_t w1 = 0, w2 = c->old;
		struct waiter w = {.word = &w2, .expect = c->old, .op = FUTEX_WAIT_PRIVATE};
		pthread_t th;
		if (start_waiters(&w, &th, 1) != 0)
			FAIL("%s: waiter did not block", c->name);
		uint32_t op = FUTEX_OP(c->op, c->oparg, c->cmp, c->cmparg);
		long r = futex(&w1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &w2, op);
		if (w2 != c->want_new)
			FAIL("%s: word became %u, want %u", c->name, w2, c->want_new);
		if (r != c->want_cond)
			FAIL("%s: woke %ld, want %d", c->name, r, c->want_cond);
		if (!c->want_cond)
			futex(&w2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		pthread_join(th, NULL);
	}
}

static void wake_op_bad_op_enosys(void)
{
	uint32_t a = 0, b = 0;
	/* Operation 7 does not exist. */
	CHECK_ERR(futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b, FUTEX_OP(7, 0, 0, 0)), ENOSYS);
	/* Comparison 7 does not exist. */
	CHECK_ERR(futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b, FUTEX_OP(0, 0, 7, 0)), ENOSYS);
	CHECK_ERR(futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, (void *)8, FUTEX_OP(0, 0, 0, 0)), EFAULT);
}

static void bitset_wait_and_wake(void)
{
	uint32_t word = 0;
	struct waiter w[2] = {
		{.word = &word, .expect = 0, .op = FUTEX_WAIT_BITSET_PRIVATE, .bitset = 0x1},
		{.word = &word, .expect = 0, .op = FUTEX_WAIT_BITSET_PRIVATE, .bitset = 0x6},
	};
	pthread_t th[2];
	CHECK_EQ(start_waiters(w, th, 2), 0);
	CHECK_EQ(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 0x8), 0);
	CHECK_EQ(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 0x4), 1);
	settle(w, 2, 1);
	CHECK_EQ(atomic_load(&w[1].done), 1);
	CHECK_EQ(atomic_load(&w[0].done), 0);
	/* A plain WAKE matches every bitset. */
	CHECK_EQ(futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0), 1);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	CHECK_ERR(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0), EINVAL);
}

static void wait_on_readonly_page(void)
{
	uint32_t *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	/* Reading is enough for WAIT. */
	struct timespec zero = {0, 0};
	CHECK_ERR(futex(p, FUTEX_WAIT_PRIVATE, 0, &zero, NULL, 0), ETIMEDOUT);
	CHECK_ERR(futex(p, FUTEX_WAIT_PRIVATE, 1, &zero, NULL, 0), EAGAIN);
	/* WAKE_OP writes the second word: EFAULT on a read-only page. */
	uint32_t a = 0;
	CHECK_ERR(futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, p, FUTEX_OP(0, 1, 0, 0)), EFAULT);
	munmap(p, 4096);
}

static void pi_errors(void)
{
	uint32_t word = 0;
	/* Unlocking a lock we do not own. */
	CHECK_ERR(futex(&word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0), EPERM);
	word = (uint32_t)syscall(SYS_gettid);
	/* Locking a lock we already own. */
	CHECK_ERR(futex(&word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0), EDEADLK);
	CHECK_ERR(futex(&word, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0), EDEADLK);
	CHECK_EQ(futex(&word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0), 0);
	CHECK_EQ(word, 0);
	CHECK_EQ(futex(&word, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0), 0);
	CHECK_EQ(word, (uint32_t)syscall(SYS_gettid));
	CHECK_EQ(futex(&word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0), 0);
	/* An owner tid that does not exist. */
	word = 99999;
	CHECK_ERR(futex(&word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0), ESRCH);
}

static void wait_requeue_pi_mismatch(void)
{
	uint32_t a = 0, b = 0;
	/* WAIT_REQUEUE_PI with the same word for both is EINVAL. */
	CHECK_ERR(futex(&a, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, NULL, &a, 0), EINVAL);
	(void)b;
}

static void shared_futex_in_shared_mapping(void)
{
	uint32_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	*p = 0;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		long r = futex(p, FUTEX_WAIT, 0, NULL, NULL, 0);
		_exit(r == 0 && *p == 1 ? 0 : 1);
	}
	/* Wait until the child sleeps in the futex. */
	for (int i = 0; i < 1000; i++) {
		char path[64], buf[256];
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		FILE *f = fopen(path, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[n] = 0;
			char *rp = strrchr(buf, ')');
			if (rp && rp[2] == 'S')
				break;
		}
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(p, 1, __ATOMIC_SEQ_CST);
	long woke = 0;
	for (int i = 0; i < 1000 && woke == 0; i++) {
		woke = futex(p, FUTEX_WAKE, 1, NULL, NULL, 0);
		if (woke == 0) {
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	CHECK_EQ(woke, 1);
}

static const struct mt_case cases[] = {
	MT_CASE(wait_timeout_etimedout),
	MT_CASE(wait_bad_timeout),
	MT_CASE(wait_value_mismatch_eagain),
	MT_CASE(unaligned_address_einval),
	MT_CASE(bad_op_enosys),
	MT_CASE(clock_realtime_rules),
	MT_CASE(wake_count_limits),
	MT_CASE(private_wake_misses_shared_wait),
	MT_CASE(requeue_moves_waiters),
	MT_CASE(cmp_requeue_value_check),
	MT_CASE(wake_op_all_operations),
	MT_CASE(wake_op_bad_op_enosys),
	MT_CASE(bitset_wait_and_wake),
	MT_CASE(wait_on_readonly_page),
	MT_CASE(pi_errors),
	MT_CASE(wait_requeue_pi_mismatch),
	MT_CASE(shared_futex_in_shared_mapping),
};

MT_MAIN(cases)
