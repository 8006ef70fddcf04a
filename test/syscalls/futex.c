//go:build ignore

/* futex: FUTEX_WAIT/WAKE, value mismatch, timeouts (relative and absolute,
 * CLOCK_MONOTONIC and CLOCK_REALTIME), REQUEUE, CMP_REQUEUE, WAKE_OP,
 * bitsets, shared futexes across fork, PI futexes, futex_waitv, robust
 * lists (a thread or process dying with a robust mutex held gives
 * EOWNERDEAD) and the errors. */
#include "moattest.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long futex(void *uaddr, int op, uint32_t val, const void *timeout_or_val2,
		  void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, timeout_or_val2, uaddr2, val3);
}

static uint32_t f1, f2;

/* Waiter threads: wait on *arg while it is 0; record the result. */
struct waiter {
	pthread_t th;
	uint32_t *addr;
	int op;
	uint32_t bitset;
	long ret;
	int err;
	volatile pid_t tid;
	volatile int started, done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	w->tid = (pid_t)syscall(SYS_gettid);
	w->started = 1;
	w->ret = futex(w->addr, w->op, 0, NULL, NULL, w->bitset);
	w->err = errno;
	w->done = 1;
	return NULL;
}

static int start_waiter(struct waiter *w, uint32_t *addr, int op, uint32_t bitset)
{
	memset(w, 0, sizeof(*w));
	w->addr = addr;
	w->op = op;
	w->bitset = bitset;
	if (pthread_create(&w->th, NULL, waiter_main, w))
		return -1;
	while (!w->started)
		usleep(100);
	/* Make sure it is asleep in FUTEX_WAIT, not about to enter it. */
	return mt_wait_blocked(w->tid, 5000);
}

static void reset_futexes(void)
{
	f1 = 0;
	f2 = 0;
}

static void wait_value_mismatch(void)
{
	reset_futexes();
	f1 = 5;
	CHECK_ERR(futex(&f1, FUTEX_WAIT, 4, NULL, NULL, 0), EAGAIN);
	CHECK_ERR(futex(&f1, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EAGAIN);
}

static void wait_relative_timeout(void)
{
	reset_futexes();
	struct timespec ts = { 0, 30 * 1000000L };
	int64_t t0 = mt_now_ns();
	CHECK_ERR(futex(&f1, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0), ETIMEDOUT);
	CHECK_GE(mt_now_ns() - t0, 25 * 1000000LL);
}

static void wake_without_waiters(void)
{
	reset_futexes();
	CHECK_EQ(futex(&f1, FUTEX_WAKE, 1, NULL, NULL, 0), 0);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 0);
}

static void wait_then_wake(void)
{
	reset_futexes();
	struct waiter w;
	CHECK_SYS(start_waiter(&w, &f1, FUTEX_WAIT_PRIVATE, 0));
	CHECK_EQ(w.done, 0);
	f1 = 1;
	CHECK_EQ(futex(&f1, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 1);
	CHECK_RET0(pthread_join(w.th, NULL));
	CHECK_EQ(w.ret, 0);
}

static void wake_counts(void)
{
	reset_futexes();
	struct waiter w[4];
	for (int i = 0; i < 4; i++)
		CHECK_SYS(start_waiter(&w[i], &f1, FUTEX_WAIT_PRIVATE, 0));
	CHECK_EQ(futex(&f1, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0), 2);
	int done = 0;
	for (int tries = 0; tries < 2000 && done < 2; tries++) {
		usleep(1000);
		done = 0;
		for (int i = 0; i < 4; i++)
			done += w[i].done;
	}
	usleep(10000);
	done = 0;
	for (int i = 0; i < 4; i++)
		done += w[i].done;
	CHECK_EQ(done, 2);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 2);
	for (int i = 0; i < 4; i++)
		CHECK_RET0(pthread_join(w[i].th, NULL));
}

static void private_and_shared_namespaces(void)
{
	/* FUTEX_PRIVATE_FLAG keys a futex apart from the shared one on the
	 * same address: a shared wake does not find a private waiter. */
	reset_futexes();
	struct waiter w;
	CHECK_SYS(start_waiter(&w, &f1, FUTEX_WAIT_PRIVATE, 0));
	long shared = futex(&f1, FUTEX_WAKE, 1, NULL, NULL, 0);
	long priv = futex(&f1, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	CHECK_RET0(pthread_join(w.th, NULL));
	CHECK_EQ(shared, 0);
	CHECK_EQ(priv, 1);
	CHECK_EQ(w.ret, 0);
}

static void shared_futex_across_fork(void)
{
	uint32_t *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	*p = 0;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec ts = { 5, 0 };
		while (__atomic_load_n(p, __ATOMIC_SEQ_CST) == 0) {
			long r = futex(p, FUTEX_WAIT, 0, &ts, NULL, 0);
			if (r == -1 && errno == ETIMEDOUT)
				_exit(2);
		}
		_exit(*p == 1 ? 0 : 3);
	}
	usleep(30000);
	__atomic_store_n(p, 1, __ATOMIC_SEQ_CST);
	long woke = futex(p, FUTEX_WAKE, 1, NULL, NULL, 0);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_LE(woke, 1);
	munmap(p, 4096);
}

static void requeue(void)
{
	reset_futexes();
	struct waiter w[3];
	for (int i = 0; i < 3; i++)
		CHECK_SYS(start_waiter(&w[i], &f1, FUTEX_WAIT_PRIVATE, 0));
	/* Wake 1, move the rest to f2: returns woken + requeued. */
	long moved = futex(&f1, FUTEX_REQUEUE_PRIVATE, 1, (void *)(long)INT_MAX, &f2, 0);
	usleep(20000);
	long left1 = futex(&f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	long left2 = futex(&f2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_join(w[i].th, NULL));
	CHECK_EQ(moved, 3);
	CHECK_EQ(left1, 0);
	CHECK_EQ(left2, 2);
}

static void cmp_requeue(void)
{
	reset_futexes();
	struct waiter w[3];
	for (int i = 0; i < 3; i++)
		CHECK_SYS(start_waiter(&w[i], &f1, FUTEX_WAIT_PRIVATE, 0));
	errno = 0;
	long mismatch = futex(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &f2, 7);
	int mismatch_err = errno;
	/* Wake 1, requeue 1: returns woken + requeued. */
	long moved = futex(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &f2, 0);
	usleep(20000);
	long left2 = futex(&f2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	long left1 = futex(&f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_join(w[i].th, NULL));
	CHECK_EQ(mismatch, -1);
	CHECK_EQ(mismatch_err, EAGAIN);
	CHECK_EQ(moved, 2);
	CHECK_EQ(left2, 1);
	CHECK_EQ(left1, 1);
	CHECK_ERR(futex(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)-1L, &f2, 0), EINVAL);
}

static void wake_op(void)
{
	reset_futexes();
	struct waiter a, b;
	CHECK_SYS(start_waiter(&a, &f1, FUTEX_WAIT_PRIVATE, 0));
	CHECK_SYS(start_waiter(&b, &f2, FUTEX_WAIT_PRIVATE, 0));
	/* *f2 = 5 (old 0); wake 1 on f1; if old == 0 wake 1 on f2. */
	uint32_t op = FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &f2, op), 2);
	CHECK_EQ(f2, 5);
	CHECK_RET0(pthread_join(a.th, NULL));
	CHECK_RET0(pthread_join(b.th, NULL));
	/* Comparison false: only uaddr woken (nobody), f2 += 3. */
	op = FUTEX_OP(FUTEX_OP_ADD, 3, FUTEX_OP_CMP_GT, 100);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &f2, op), 0);
	CHECK_EQ(f2, 8);
	op = FUTEX_OP(FUTEX_OP_OR, 0x10, FUTEX_OP_CMP_EQ, 8);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &f2, op), 0);
	CHECK_EQ(f2, 0x18);
	op = FUTEX_OP(FUTEX_OP_ANDN, 0x8, FUTEX_OP_CMP_EQ, 0);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &f2, op), 0);
	CHECK_EQ(f2, 0x10);
	op = FUTEX_OP(FUTEX_OP_XOR, 0x11, FUTEX_OP_CMP_EQ, 0);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &f2, op), 0);
	CHECK_EQ(f2, 0x1);
	/* Bad op code: ENOSYS. */
	op = (7u << 28);
	CHECK_ERR(futex(&f1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &f2, op), ENOSYS);
}

static void add_ms(struct timespec *ts, long ms)
{
	ts->tv_nsec += ms * 1000000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void wait_bitset_abs_monotonic(void)
{
	reset_futexes();
	struct timespec dl, after;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &dl));
	add_ms(&dl, 30);
	CHECK_ERR(futex(&f1, FUTEX_WAIT_BITSET_PRIVATE, 0, &dl, NULL, FUTEX_BITSET_MATCH_ANY), ETIMEDOUT);
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &after));
	CHECK(after.tv_sec > dl.tv_sec || (after.tv_sec == dl.tv_sec && after.tv_nsec >= dl.tv_nsec));
}

static void wait_bitset_abs_realtime(void)
{
	reset_futexes();
	struct timespec dl, after;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &dl));
	add_ms(&dl, 30);
	CHECK_ERR(futex(&f1, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &dl, NULL,
			FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &after));
	CHECK(after.tv_sec > dl.tv_sec || (after.tv_sec == dl.tv_sec && after.tv_nsec >= dl.tv_nsec));
	/* A deadline in the past times out at once. */
	dl.tv_sec -= 10;
	int64_t t0 = mt_now_ns();
	CHECK_ERR(futex(&f1, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &dl, NULL,
			FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	CHECK_LT(mt_now_ns() - t0, 500 * 1000000LL);
}

static void wake_bitset_selects(void)
{
	reset_futexes();
	struct waiter w;
	CHECK_SYS(start_waiter(&w, &f1, FUTEX_WAIT_BITSET_PRIVATE, 0x1));
	CHECK_EQ(futex(&f1, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0x2), 0);
	CHECK_EQ(w.done, 0);
	CHECK_EQ(futex(&f1, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0x3), 1);
	CHECK_RET0(pthread_join(w.th, NULL));
	CHECK_EQ(w.ret, 0);
}

static void bitset_zero_einval(void)
{
	reset_futexes();
	CHECK_ERR(futex(&f1, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, 0), EINVAL);
	CHECK_ERR(futex(&f1, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0), EINVAL);
}

static void futex_errors(void)
{
	reset_futexes();
	CHECK_ERR(futex(&f1, 99, 0, NULL, NULL, 0), ENOSYS);
	CHECK_ERR(futex((char *)&f1 + 1, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EINVAL);
	CHECK_ERR(futex(NULL, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EFAULT);
	struct timespec bad = { 0, 1000000000L };
	CHECK_ERR(futex(&f1, FUTEX_WAIT_PRIVATE, 0, &bad, NULL, 0), EINVAL);
	bad.tv_sec = -1;
	bad.tv_nsec = 0;
	CHECK_ERR(futex(&f1, FUTEX_WAIT_PRIVATE, 0, &bad, NULL, 0), EINVAL);
	CHECK_ERR(futex(&f1, FUTEX_WAIT_PRIVATE, 0, (void *)8, NULL, 0), EFAULT);
	/* FUTEX_CLOCK_REALTIME with plain FUTEX_WAIT is allowed since 4.5;
	 * with FUTEX_WAKE it is not. */
	CHECK_ERR(futex(&f1, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0), ENOSYS);
}

static void wait_on_unmapped_efault(void)
{
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	/* Read-only memory is fine for WAIT (it only reads). */
	CHECK_ERR(futex(p, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), EAGAIN);
	munmap(p, 4096);
	CHECK_ERR(futex(p, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EFAULT);
	CHECK_EQ(futex(p, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 0);
}

static volatile int got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static void *futex_eintr_thread(void *arg)
{
	struct waiter *w = arg;
	w->tid = (pid_t)syscall(SYS_gettid);
	w->started = 1;
	w->ret = futex(w->addr, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	w->err = errno;
	w->done = 1;
	return NULL;
}

static void wait_interrupted_eintr(void)
{
	reset_futexes();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	struct waiter w;
	memset(&w, 0, sizeof(w));
	w.addr = &f1;
	got_usr1 = 0;
	CHECK_RET0(pthread_create(&w.th, NULL, futex_eintr_thread, &w));
	while (!w.started)
		usleep(100);
	CHECK_SYS(mt_wait_blocked(w.tid, 5000));
	CHECK_RET0(pthread_kill(w.th, SIGUSR1));
	CHECK_RET0(pthread_join(w.th, NULL));
	CHECK_EQ(got_usr1, 1);
	CHECK_EQ(w.ret, -1);
	CHECK_EQ(w.err, EINTR);
}

static uint32_t pi_lock;
static long pi_counter;

static void *pi_worker(void *arg)
{
	(void)arg;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	for (int i = 0; i < 2000; i++) {
		uint32_t zero = 0;
		if (!__atomic_compare_exchange_n(&pi_lock, &zero, tid, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			while (futex(&pi_lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0) {
			}
		}
		pi_counter++;
		uint32_t me = tid;
		if (!__atomic_compare_exchange_n(&pi_lock, &me, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			futex(&pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	}
	return NULL;
}

static void pi_futex_counter(void)
{
	pi_lock = 0;
	pi_counter = 0;
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, pi_worker, NULL));
	for (int i = 0; i < 4; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(pi_counter, 8000);
	CHECK_EQ(pi_lock, 0);
}

static void pi_lock_uncontended_and_errors(void)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	pi_lock = 0;
	CHECK_SYS(futex(&pi_lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	CHECK_EQ(pi_lock & FUTEX_TID_MASK, tid);
	CHECK_ERR(futex(&pi_lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0), EDEADLK);
	CHECK_ERR(futex(&pi_lock, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0), EDEADLK);
	CHECK_SYS(futex(&pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	CHECK_EQ(pi_lock, 0);
	CHECK_ERR(futex(&pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0), EPERM);
	CHECK_SYS(futex(&pi_lock, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	CHECK_EQ(pi_lock & FUTEX_TID_MASK, tid);
	CHECK_SYS(futex(&pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	/* An owner TID that does not exist: ESRCH. */
	pi_lock = 424242;
	CHECK_ERR(futex(&pi_lock, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0), ESRCH);
	pi_lock = 0;
}

struct futex_waitv_ {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

static void *wake_f2_later(void *arg)
{
	(void)arg;
	usleep(30000);
	futex(&f2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static void futex_waitv_second(void)
{
	reset_futexes();
	struct futex_waitv_ v[2];
	memset(v, 0, sizeof(v));
	v[0].uaddr = (uintptr_t)&f1;
	v[0].flags = 2 | 128; /* FUTEX2_SIZE_U32 | FUTEX2_PRIVATE */
	v[1].uaddr = (uintptr_t)&f2;
	v[1].flags = 2 | 128;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, wake_f2_later, NULL));
	struct timespec dl;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &dl));
	dl.tv_sec += 5;
	long r = syscall(449 /* futex_waitv */, v, 2, 0, &dl, CLOCK_MONOTONIC);
	int e = errno;
	CHECK_RET0(pthread_join(th, NULL));
	if (r == -1 && e == ENOSYS)
		SKIP("futex_waitv not available");
	CHECK_EQ(r, 1);
	/* A value mismatch: EAGAIN. */
	v[0].val = 9;
	CHECK_ERR(syscall(449, v, 2, 0, NULL, CLOCK_MONOTONIC), EAGAIN);
	CHECK_ERR(syscall(449, v, 0, 0, NULL, CLOCK_MONOTONIC), EINVAL);
}

static pthread_mutex_t robust_mu;

static void *lock_and_die(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust_mu);
	return NULL; /* exits holding it */
}

static int robust_init(pthread_mutex_t *m, int pshared)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	return pthread_mutex_init(m, &a);
}

static void robust_thread_dies_eownerdead(void)
{
	CHECK_RET0(robust_init(&robust_mu, 0));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, lock_and_die, NULL));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_RET(pthread_mutex_lock(&robust_mu), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_consistent(&robust_mu));
	CHECK_RET0(pthread_mutex_unlock(&robust_mu));
	CHECK_RET0(pthread_mutex_lock(&robust_mu));
	CHECK_RET0(pthread_mutex_unlock(&robust_mu));
}

static void robust_not_made_consistent(void)
{
	CHECK_RET0(robust_init(&robust_mu, 0));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, lock_and_die, NULL));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_RET(pthread_mutex_lock(&robust_mu), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_unlock(&robust_mu));
	CHECK_RET(pthread_mutex_lock(&robust_mu), ENOTRECOVERABLE);
}

static void robust_process_dies_eownerdead(void)
{
	pthread_mutex_t *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	CHECK_RET0(robust_init(m, 1));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_mutex_lock(m);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_RET(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_consistent(m));
	CHECK_RET0(pthread_mutex_unlock(m));
	munmap(m, 4096);
}

static void robust_waiter_woken_on_death(void)
{
	/* A waiter blocked on the mutex is woken when the owner dies. */
	pthread_mutex_t *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	CHECK_RET0(robust_init(m, 1));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pthread_mutex_lock(m);
		char c = 'l';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		usleep(50000);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_RET(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_RET0(pthread_mutex_consistent(m));
	CHECK_RET0(pthread_mutex_unlock(m));
	CHECK_EXITED(mt_wait(pid), 0);
	munmap(m, 4096);
}

static void robust_list_syscalls(void)
{
	void *head = NULL;
	size_t len = 0;
	CHECK_SYS(syscall(SYS_get_robust_list, 0, &head, &len));
	CHECK(head != NULL); /* glibc registers one per thread */
	CHECK_EQ(len, 24);
	CHECK_ERR(syscall(SYS_set_robust_list, head, 7), EINVAL);
	CHECK_ERR(syscall(SYS_get_robust_list, 424242, &head, &len), ESRCH);
	CHECK_ERR(syscall(SYS_get_robust_list, 0, (void *)8, &len), EFAULT);
	CHECK_SYS(syscall(SYS_set_robust_list, head, len));
}

static const struct mt_case cases[] = {
	MT_CASE(wait_value_mismatch),
	MT_CASE(wait_relative_timeout),
	MT_CASE(wake_without_waiters),
	MT_CASE(wait_then_wake),
	MT_CASE(wake_counts),
	MT_CASE(private_and_shared_namespaces),
	MT_CASE(shared_futex_across_fork),
	MT_CASE(requeue),
	MT_CASE(cmp_requeue),
	MT_CASE(wake_op),
	MT_CASE(wait_bitset_abs_monotonic),
	MT_CASE(wait_bitset_abs_realtime),
	MT_CASE(wake_bitset_selects),
	MT_CASE(bitset_zero_einval),
	MT_CASE(futex_errors),
	MT_CASE(wait_on_unmapped_efault),
	MT_CASE(wait_interrupted_eintr),
	MT_CASE(pi_futex_counter),
	MT_CASE(pi_lock_uncontended_and_errors),
	MT_CASE(futex_waitv_second),
	MT_CASE(robust_thread_dies_eownerdead),
	MT_CASE(robust_not_made_consistent),
	MT_CASE(robust_process_dies_eownerdead),
	MT_CASE(robust_waiter_woken_on_death),
	MT_CASE(robust_list_syscalls),
};

MT_MAIN(cases)
