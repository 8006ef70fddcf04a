//go:build ignore

/* futex_requeue_pi: PI condition variables: FUTEX_WAIT_REQUEUE_PI and
 * FUTEX_CMP_REQUEUE_PI argument checks, the requeue taking a free mutex
 * for the oldest waiter, waiters queued behind a held mutex and handed it
 * by FUTEX_UNLOCK_PI, plain operations refusing requeue-PI waiters, and
 * timeouts. */
#include "moattest.h"
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long futex(void *uaddr, int op, uint32_t val, const void *ts, void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

/* cmp_requeue_pi passes nr_requeue in the timeout slot, as futex(2) says. */
static long cmp_requeue_pi(uint32_t *cv, int nwake, long nreq, uint32_t *mutex, uint32_t val)
{
	return syscall(SYS_futex, cv, FUTEX_CMP_REQUEUE_PI_PRIVATE, nwake, (void *)nreq, mutex, val);
}

static void cmp_requeue_pi_errors(void)
{
	uint32_t cv = 0, mutex = 0;
	CHECK_ERR(cmp_requeue_pi(&cv, 0, 1, &mutex, 0), EINVAL);
	CHECK_ERR(cmp_requeue_pi(&cv, 2, 1, &mutex, 0), EINVAL);
	CHECK_ERR(cmp_requeue_pi(&cv, 1, -1, &mutex, 0), EINVAL);
	CHECK_ERR(cmp_requeue_pi(&cv, 1, 1, &cv, 0), EINVAL);
	CHECK_ERR(cmp_requeue_pi(&cv, 1, 1, (uint32_t *)((char *)&mutex + 1), 0), EINVAL);
	CHECK_ERR(cmp_requeue_pi(&cv, 1, 1, &mutex, 5), EAGAIN);
	/* Nobody waits: nothing to do. */
	CHECK_EQ(cmp_requeue_pi(&cv, 1, 1, &mutex, 0), 0);
	CHECK_EQ(mutex, 0);
}

static void wait_requeue_pi_errors(void)
{
	uint32_t cv = 3, mutex = 0;
	CHECK_ERR(futex(&cv, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 3, NULL, &cv, 0), EINVAL);
	CHECK_ERR(futex(&cv, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 4, NULL, &mutex, 0), EAGAIN);
	/* The timeout is absolute on CLOCK_MONOTONIC. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 20 * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	CHECK_ERR(futex(&cv, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 3, &ts, &mutex, 0), ETIMEDOUT);
	CHECK_EQ(mutex, 0);
}

struct cvwait {
	uint32_t *cv, *mutex;
	volatile pid_t tid;
	long ret;
	int err;
	uint32_t seen; /* the mutex word once the wait returned */
	int unlock;    /* FUTEX_UNLOCK_PI the mutex after */
};

static void *cv_waiter(void *arg)
{
	struct cvwait *w = arg;
	w->tid = gettid();
	w->ret = futex(w->cv, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, NULL, w->mutex, 0);
	w->err = errno;
	w->seen = __atomic_load_n(w->mutex, __ATOMIC_SEQ_CST);
	if (w->ret == 0 && w->unlock)
		futex(w->mutex, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

static int start_waiter(pthread_t *th, struct cvwait *w)
{
	if (pthread_create(th, NULL, cv_waiter, w) != 0)
		return -1;
	while (w->tid == 0)
		usleep(100);
	return mt_wait_blocked(w->tid, 5000);
}

static void requeue_takes_free_mutex(void)
{
	uint32_t cv = 0, mutex = 0;
	struct cvwait w = { .cv = &cv, .mutex = &mutex };
	pthread_t th;
	CHECK_SYS(start_waiter(&th, &w));
	/* The mutex is free: the waiter is woken owning it. */
	CHECK_EQ(cmp_requeue_pi(&cv, 1, 0, &mutex, 0), 1);
	pthread_join(th, NULL);
	CHECK_EQ(w.ret, 0);
	CHECK_EQ(w.seen, (uint32_t)w.tid);
}

static void requeue_behind_held_mutex(void)
{
	uint32_t cv = 0, mutex = gettid();
	struct cvwait w = { .cv = &cv, .mutex = &mutex, .unlock = 1 };
	pthread_t th;
	CHECK_SYS(start_waiter(&th, &w));
	/* Held: the waiter moves to the mutex and keeps sleeping. */
	CHECK_EQ(cmp_requeue_pi(&cv, 1, 1, &mutex, 0), 1);
	CHECK_EQ(mutex, (uint32_t)gettid() | FUTEX_WAITERS);
	CHECK_SYS(mt_wait_blocked(w.tid, 5000));
	CHECK_EQ(w.ret, 0);
	/* Nothing waits on the condition variable any more. */
	CHECK_EQ(futex(&cv, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 0);
	/* Unlocking hands the mutex over. */
	CHECK_SYS(futex(&mutex, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	pthread_join(th, NULL);
	CHECK_EQ(w.ret, 0);
	CHECK_EQ(w.seen, (uint32_t)w.tid | FUTEX_WAITERS);
	/* It unlocked in turn. */
	CHECK_EQ(mutex, 0);
}

static void broadcast_wakes_one_requeues_rest(void)
{
	uint32_t cv = 0, mutex = 0;
	struct cvwait w[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		w[i] = (struct cvwait){ .cv = &cv, .mutex = &mutex, .unlock = 1 };
		CHECK_SYS(start_waiter(&th[i], &w[i]));
	}
	/* pthread_cond_broadcast's shape: wake one, requeue the rest. */
	CHECK_EQ(cmp_requeue_pi(&cv, 1, 2, &mutex, 0), 3);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(w[i].ret, 0);
	/* The first took the mutex at once; the others through unlocks. */
	CHECK_EQ(w[0].seen, (uint32_t)w[0].tid | FUTEX_WAITERS);
	CHECK_EQ(mutex, 0);
}

static void plain_ops_refuse_requeue_pi_waiters(void)
{
	uint32_t cv = 0, mutex = 0, other = 0;
	struct cvwait w = { .cv = &cv, .mutex = &mutex, .unlock = 1 };
	pthread_t th;
	CHECK_SYS(start_waiter(&th, &w));
	long wake = futex(&cv, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	int wake_err = errno;
	long req = futex(&cv, FUTEX_REQUEUE_PRIVATE, 0, (void *)1L, &other, 0);
	int req_err = errno;
	/* A requeue to another mutex than the waiter named. */
	long wrong = cmp_requeue_pi(&cv, 1, 1, &other, 0);
	int wrong_err = errno;
	/* Let it go. */
	long ok = cmp_requeue_pi(&cv, 1, 0, &mutex, 0);
	pthread_join(th, NULL);
	CHECK_EQ(wake, -1);
	CHECK_EQ(wake_err, EINVAL);
	CHECK_EQ(req, -1);
	CHECK_EQ(req_err, EINVAL);
	CHECK_EQ(wrong, -1);
	CHECK_EQ(wrong_err, EINVAL);
	CHECK_EQ(ok, 1);
	CHECK_EQ(w.ret, 0);
	CHECK_EQ(mutex, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(cmp_requeue_pi_errors),
	MT_CASE(wait_requeue_pi_errors),
	MT_CASE(requeue_takes_free_mutex),
	MT_CASE(requeue_behind_held_mutex),
	MT_CASE(broadcast_wakes_one_requeues_rest),
	MT_CASE(plain_ops_refuse_requeue_pi_waiters),
};

MT_MAIN(cases)
