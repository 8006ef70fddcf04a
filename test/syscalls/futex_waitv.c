//go:build ignore

/* futex_waitv: waiting on several futexes at once: which one woke the
 * caller (the index returned), value mismatches (EAGAIN), absolute
 * timeouts on CLOCK_MONOTONIC and CLOCK_REALTIME (ETIMEDOUT), and argument
 * errors (count 0 or above 128, flags, sizes, reserved fields, bad
 * pointers, unaligned words). */
#include "moattest.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE 128
#endif

struct waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

static long waitv(struct waitv *w, unsigned n, unsigned flags, struct timespec *ts, int clock)
{
	return syscall(SYS_futex_waitv, w, n, flags, ts, clock);
}

static uint32_t words[4];

static void fill(struct waitv *w, int n)
{
	for (int i = 0; i < n; i++) {
		w[i].val = words[i];
		w[i].uaddr = (uint64_t)(uintptr_t)&words[i];
		w[i].flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
		w[i].reserved = 0;
	}
}

static struct timespec deadline(int clock, int ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	while (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static atomic_int target;
static atomic_int waiter_tid;

static void *waker(void *arg)
{
	(void)arg;
	while (atomic_load(&waiter_tid) == 0)
		sched_yield();
	mt_wait_blocked(atomic_load(&waiter_tid), 5000);
	int i = atomic_load(&target);
	syscall(SYS_futex, &words[i], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static void returns_index_of_woken(void)
{
	for (int t = 0; t < 4; t++) {
		memset(words, 0, sizeof(words));
		struct waitv w[4];
		fill(w, 4);
		atomic_store(&target, t);
		atomic_store(&waiter_tid, 0);
		pthread_t th;
		CHECK_RET0(pthread_create(&th, NULL, waker, NULL));
		atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
		struct timespec ts = deadline(CLOCK_MONOTONIC, 10000);
		long r = waitv(w, 4, 0, &ts, CLOCK_MONOTONIC);
		pthread_join(th, NULL);
		if (r != t)
			FAIL("woke word %d, got %ld (%s)", t, r, r < 0 ? mt_errname(errno) : "");
	}
}

static void mismatch_eagain(void)
{
	memset(words, 0, sizeof(words));
	struct waitv w[3];
	fill(w, 3);
	w[2].val = 5;
	CHECK_ERR(waitv(w, 3, 0, NULL, 0), EAGAIN);
}

static void timeouts_on_both_clocks(void)
{
	memset(words, 0, sizeof(words));
	struct waitv w[2];
	fill(w, 2);
	struct timespec ts = deadline(CLOCK_MONOTONIC, 20);
	CHECK_ERR(waitv(w, 2, 0, &ts, CLOCK_MONOTONIC), ETIMEDOUT);
	ts = deadline(CLOCK_REALTIME, 20);
	CHECK_ERR(waitv(w, 2, 0, &ts, CLOCK_REALTIME), ETIMEDOUT);
	/* Other clocks: EINVAL. */
	ts = deadline(CLOCK_BOOTTIME, 20);
	CHECK_ERR(waitv(w, 2, 0, &ts, CLOCK_BOOTTIME), EINVAL);
}

static void count_and_flag_errors(void)
{
	memset(words, 0, sizeof(words));
	struct waitv w[4];
	fill(w, 4);
	CHECK_ERR(waitv(w, 0, 0, NULL, 0), EINVAL);
	CHECK_ERR(waitv(w, 129, 0, NULL, 0), EINVAL);
	CHECK_ERR(waitv(w, 2, 1, NULL, 0), EINVAL);
	CHECK_ERR(waitv(NULL, 2, 0, NULL, 0), EINVAL);
	CHECK_ERR(waitv((void *)8, 2, 0, NULL, 0), EFAULT);
}

static void entry_errors(void)
{
	memset(words, 0, sizeof(words));
	struct waitv w[2];
	fill(w, 2);
	w[1].reserved = 1;
	CHECK_ERR(waitv(w, 2, 0, NULL, 0), EINVAL);
	fill(w, 2);
	/* Only 32-bit futexes exist. */
	w[0].flags = 0x03 | FUTEX2_PRIVATE;
	CHECK_ERR(waitv(w, 2, 0, NULL, 0), EINVAL);
	fill(w, 2);
	w[0].uaddr += 1;
	CHECK_ERR(waitv(w, 2, 0, NULL, 0), EINVAL);
	fill(w, 2);
	w[1].uaddr = 8;
	CHECK_ERR(waitv(w, 2, 0, NULL, 0), EFAULT);
	fill(w, 2);
	/* A value that does not fit in 32 bits. */
	w[0].val = 1ULL << 32;
	CHECK_ERR(waitv(w, 2, 0, NULL, 0), EINVAL);
}

static void bad_timeout(void)
{
	memset(words, 0, sizeof(words));
	struct waitv w[1];
	fill(w, 1);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(waitv(w, 1, 0, &bad, CLOCK_MONOTONIC), EINVAL);
	CHECK_ERR(waitv(w, 1, 0, (void *)8, CLOCK_MONOTONIC), EFAULT);
}

static const struct mt_case cases[] = {
	MT_CASE(returns_index_of_woken),
	MT_CASE(mismatch_eagain),
	MT_CASE(timeouts_on_both_clocks),
	MT_CASE(count_and_flag_errors),
	MT_CASE(entry_errors),
	MT_CASE(bad_timeout),
};

MT_MAIN(cases)
