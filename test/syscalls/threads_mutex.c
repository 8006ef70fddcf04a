//go:build ignore

/* threads_mutex: pthread mutexes, condition variables, barriers, rwlocks,
 * semaphores and thread lifecycle, with deterministic final counters. */
#include "moattest.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;

static void abs_after_ms(clockid_t clk, struct timespec *ts, long ms)
{
	clock_gettime(clk, ts);
	ts->tv_nsec += (ms % 1000) * 1000000L;
	ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

static void *incr_worker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void mutex_counter_8threads(void)
{
	pthread_t th[NTHREADS];
	counter = 0;
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, incr_worker, (void *)20000L));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(counter, NTHREADS * 20000L);
}

/* A bounded queue: 8 producers, 8 consumers, condvars not_full/not_empty. */
#define QCAP 4
static struct {
	pthread_mutex_t mu;
	pthread_cond_t not_full, not_empty;
	long buf[QCAP];
	int head, len;
	long consumed_sum, consumed_n;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0, 0 };

#define PER_PRODUCER 2000

static void *producer(void *arg)
{
	long base = (long)arg * PER_PRODUCER;
	for (long i = 1; i <= PER_PRODUCER; i++) {
		pthread_mutex_lock(&q.mu);
		while (q.len == QCAP)
			pthread_cond_wait(&q.not_full, &q.mu);
		q.buf[(q.head + q.len) % QCAP] = base + i;
		q.len++;
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.mu);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_PRODUCER; i++) {
		pthread_mutex_lock(&q.mu);
		while (q.len == 0)
			pthread_cond_wait(&q.not_empty, &q.mu);
		long v = q.buf[q.head];
		q.head = (q.head + 1) % QCAP;
		q.len--;
		q.consumed_sum += v;
		q.consumed_n++;
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.mu);
	}
	return NULL;
}

static void condvar_producer_consumer(void)
{
	pthread_t p[NTHREADS], c[NTHREADS];
	q.consumed_sum = q.consumed_n = 0;
	q.head = q.len = 0;
	for (long i = 0; i < NTHREADS; i++) {
		CHECK_RET0(pthread_create(&c[i], NULL, consumer, NULL));
		CHECK_RET0(pthread_create(&p[i], NULL, producer, (void *)i));
	}
	for (int i = 0; i < NTHREADS; i++) {
		CHECK_RET0(pthread_join(p[i], NULL));
		CHECK_RET0(pthread_join(c[i], NULL));
	}
	long n = (long)NTHREADS * PER_PRODUCER;
	CHECK_EQ(q.consumed_n, n);
	/* Sum of 1..n, since producer k makes k*P+1 .. k*P+P. */
	CHECK_EQ(q.consumed_sum, n * (n + 1) / 2);
	CHECK_EQ(q.len, 0);
}

static int go_flag;
static int woken;

static void *wait_flag(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	counter++;
	pthread_cond_broadcast(&cv);
	while (!go_flag)
		pthread_cond_wait(&cv, &mu);
	woken++;
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void condvar_broadcast(void)
{
	pthread_t th[NTHREADS];
	counter = 0;
	go_flag = 0;
	woken = 0;
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, wait_flag, NULL));
	pthread_mutex_lock(&mu);
	while (counter < NTHREADS)
		pthread_cond_wait(&cv, &mu);
	go_flag = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(woken, NTHREADS);
}

static pthread_barrier_t bar;
static int serial_count;

static void *barrier_worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < 50; r++) {
		int rc = pthread_barrier_wait(&bar);
		if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_fetch_add(&serial_count, 1, __ATOMIC_SEQ_CST);
		else if (rc != 0)
			return (void *)1;
	}
	return NULL;
}

static void barrier_rounds(void)
{
	pthread_t th[NTHREADS];
	serial_count = 0;
	CHECK_RET0(pthread_barrier_init(&bar, NULL, NTHREADS));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, barrier_worker, NULL));
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;
		CHECK_RET0(pthread_join(th[i], &ret));
		CHECK(ret == NULL);
	}
	CHECK_EQ(serial_count, 50);
	CHECK_RET0(pthread_barrier_destroy(&bar));
}

static void barrier_init_zero_einval(void)
{
	pthread_barrier_t b;
	CHECK_RET(pthread_barrier_init(&b, NULL, 0), EINVAL);
}

static void *try_other(void *arg)
{
	return (void *)(long)pthread_mutex_trylock((pthread_mutex_t *)arg);
}

static void mutex_trylock_ebusy(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RET0(pthread_mutex_lock(&m));
	CHECK_RET(pthread_mutex_trylock(&m), EBUSY);
	pthread_t th;
	void *ret;
	CHECK_RET0(pthread_create(&th, NULL, try_other, &m));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, EBUSY);
	CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET0(pthread_mutex_trylock(&m));
	CHECK_RET0(pthread_mutex_unlock(&m));
}

static void *unlock_other(void *arg)
{
	return (void *)(long)pthread_mutex_unlock((pthread_mutex_t *)arg);
}

static void mutex_errorcheck(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	CHECK_RET0(pthread_mutexattr_init(&a));
	CHECK_RET0(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	CHECK_RET0(pthread_mutex_init(&m, &a));
	CHECK_RET(pthread_mutex_unlock(&m), EPERM);
	CHECK_RET0(pthread_mutex_lock(&m));
	CHECK_RET(pthread_mutex_lock(&m), EDEADLK);
	pthread_t th;
	void *ret;
	CHECK_RET0(pthread_create(&th, NULL, unlock_other, &m));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, EPERM);
	CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET0(pthread_mutex_destroy(&m));
}

static void mutex_recursive(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	CHECK_RET0(pthread_mutexattr_init(&a));
	CHECK_RET0(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
	CHECK_RET0(pthread_mutex_init(&m, &a));
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_mutex_lock(&m));
	pthread_t th;
	void *ret;
	CHECK_RET0(pthread_create(&th, NULL, try_other, &m));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, EBUSY);
	for (int i = 0; i < 3; i++)
		CHECK_RET0(pthread_mutex_unlock(&m));
	CHECK_RET0(pthread_create(&th, NULL, try_other, &m));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, 0);
}

static void mutex_timedlock_timeout(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RET0(pthread_mutex_lock(&m));
	struct timespec ts;
	abs_after_ms(CLOCK_REALTIME, &ts, 50);
	int64_t t0 = mt_now_ns();
	/* Same thread: a normal mutex's timedlock by the owner times out. */
	CHECK_RET(pthread_mutex_timedlock(&m, &ts), ETIMEDOUT);
	int64_t el = mt_now_ns() - t0;
	CHECK_GE(el, 40 * 1000000LL);
	CHECK_LT(el, 5000 * 1000000LL);
}

static void mutex_timedlock_bad_timespec(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RET0(pthread_mutex_lock(&m));
	struct timespec ts = { .tv_sec = time(NULL) + 10, .tv_nsec = 2000000000L };
	CHECK_RET(pthread_mutex_timedlock(&m, &ts), EINVAL);
}

static void cond_timedwait_realtime(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec ts;
	CHECK_RET0(pthread_mutex_lock(&m));
	abs_after_ms(CLOCK_REALTIME, &ts, 30);
	int64_t t0 = mt_now_ns();
	CHECK_RET(pthread_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	/* The mutex is held again after the timeout. */
	CHECK_RET(pthread_mutex_trylock(&m), EBUSY);
	CHECK_RET0(pthread_mutex_unlock(&m));
}

static void cond_timedwait_monotonic(void)
{
	pthread_condattr_t a;
	pthread_cond_t c;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RET0(pthread_condattr_init(&a));
	CHECK_RET0(pthread_condattr_setclock(&a, CLOCK_MONOTONIC));
	clockid_t got;
	CHECK_RET0(pthread_condattr_getclock(&a, &got));
	CHECK_EQ(got, CLOCK_MONOTONIC);
	CHECK_RET0(pthread_cond_init(&c, &a));
	struct timespec ts;
	abs_after_ms(CLOCK_MONOTONIC, &ts, 30);
	CHECK_RET0(pthread_mutex_lock(&m));
	int64_t t0 = mt_now_ns();
	CHECK_RET(pthread_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	CHECK_RET0(pthread_mutex_unlock(&m));
}

static void condattr_setclock_einval(void)
{
	pthread_condattr_t a;
	CHECK_RET0(pthread_condattr_init(&a));
	CHECK_RET(pthread_condattr_setclock(&a, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_value;
static int rw_readers_max, rw_readers_now;

static void *rw_worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 2000; i++) {
		if ((i + id) % 4 == 0) {
			pthread_rwlock_wrlock(&rw);
			long v = rw_value;
			rw_value = v + 1;
			pthread_rwlock_unlock(&rw);
		} else {
			pthread_rwlock_rdlock(&rw);
			int n = __atomic_add_fetch(&rw_readers_now, 1, __ATOMIC_SEQ_CST);
			int m = __atomic_load_n(&rw_readers_max, __ATOMIC_SEQ_CST);
			while (n > m && !__atomic_compare_exchange_n(&rw_readers_max, &m, n, 0,
								      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			}
			__atomic_sub_fetch(&rw_readers_now, 1, __ATOMIC_SEQ_CST);
			pthread_rwlock_unlock(&rw);
		}
	}
	return NULL;
}

static void rwlock_counter(void)
{
	pthread_t th[NTHREADS];
	rw_value = 0;
	for (long i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, rw_worker, (void *)i));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(rw_value, NTHREADS * 500);
}

static void *try_rw(void *arg)
{
	long mode = (long)arg;
	if (mode == 0)
		return (void *)(long)pthread_rwlock_tryrdlock(&rw);
	return (void *)(long)pthread_rwlock_trywrlock(&rw);
}

static void rwlock_try_ebusy(void)
{
	pthread_t th;
	void *ret;
	CHECK_RET0(pthread_rwlock_wrlock(&rw));
	CHECK_RET0(pthread_create(&th, NULL, try_rw, (void *)0L));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, EBUSY);
	CHECK_RET0(pthread_rwlock_unlock(&rw));
	CHECK_RET0(pthread_rwlock_rdlock(&rw));
	CHECK_RET0(pthread_create(&th, NULL, try_rw, (void *)1L));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, EBUSY);
	/* A second reader gets in (and leaves the lock read-held). */
	CHECK_RET0(pthread_create(&th, NULL, try_rw, (void *)0L));
	CHECK_RET0(pthread_join(th, &ret));
	CHECK_EQ((long)ret, 0);
	CHECK_RET0(pthread_rwlock_unlock(&rw));
	CHECK_RET0(pthread_rwlock_unlock(&rw));
}

static void *ret_arg(void *arg)
{
	return arg;
}

static void *exit_arg(void *arg)
{
	pthread_exit((char *)arg + 1);
	return NULL;
}

static void join_return_values(void)
{
	pthread_t a, b;
	void *ra, *rb;
	CHECK_RET0(pthread_create(&a, NULL, ret_arg, (void *)0x1234));
	CHECK_RET0(pthread_create(&b, NULL, exit_arg, (void *)0x4000));
	CHECK_RET0(pthread_join(a, &ra));
	CHECK_RET0(pthread_join(b, &rb));
	CHECK_EQ((long)ra, 0x1234);
	CHECK_EQ((long)rb, 0x4001);
}

static void join_self_edeadlk(void)
{
	CHECK_RET(pthread_join(pthread_self(), NULL), EDEADLK);
}

static pid_t tids[NTHREADS];
static pid_t pids[NTHREADS];

static void *record_ids(void *arg)
{
	long i = (long)arg;
	tids[i] = (pid_t)syscall(SYS_gettid);
	pids[i] = getpid();
	return NULL;
}

static void thread_ids_distinct(void)
{
	pthread_t th[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, record_ids, (void *)i));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	for (int i = 0; i < NTHREADS; i++) {
		CHECK_EQ(pids[i], getpid());
		CHECK_NE(tids[i], getpid());
		CHECK_GT(tids[i], 0);
		for (int j = 0; j < i; j++)
			CHECK_NE(tids[i], tids[j]);
	}
	CHECK_EQ(syscall(SYS_gettid), getpid());
}

static pthread_spinlock_t spin;
static long spin_counter;

static void *spin_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_spin_lock(&spin);
		spin_counter++;
		pthread_spin_unlock(&spin);
	}
	return NULL;
}

static void spinlock_counter(void)
{
	pthread_t th[NTHREADS];
	spin_counter = 0;
	CHECK_RET0(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, spin_worker, NULL));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(spin_counter, NTHREADS * 20000L);
	CHECK_RET0(pthread_spin_destroy(&spin));
}

static long atomic_counter;

static void *atomic_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50000; i++)
		__atomic_fetch_add(&atomic_counter, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void atomic_counter_8threads(void)
{
	pthread_t th[NTHREADS];
	atomic_counter = 0;
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, atomic_worker, NULL));
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(atomic_counter, NTHREADS * 50000L);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;

static void once_init(void)
{
	usleep(1000);
	once_runs++;
}

static void *once_worker(void *arg)
{
	(void)arg;
	pthread_once(&once, once_init);
	return (void *)(long)once_runs;
}

static void once_runs_once(void)
{
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, once_worker, NULL));
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		CHECK_RET0(pthread_join(th[i], &r));
		CHECK_EQ((long)r, 1);
	}
	CHECK_EQ(once_runs, 1);
}

static __thread long tls_value = 7;

static void *tls_worker(void *arg)
{
	long mine = (long)arg;
	long start = tls_value;
	for (int i = 0; i < 1000; i++)
		tls_value += mine;
	if (start != 7)
		return (void *)-1L;
	return (void *)tls_value;
}

static void tls_per_thread(void)
{
	pthread_t th[NTHREADS];
	tls_value = 99;
	for (long i = 0; i < NTHREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, tls_worker, (void *)(i + 1)));
	for (long i = 0; i < NTHREADS; i++) {
		void *r;
		CHECK_RET0(pthread_join(th[i], &r));
		CHECK_EQ((long)r, 7 + 1000 * (i + 1));
	}
	CHECK_EQ(tls_value, 99);
}

static void *deep_stack(void *arg)
{
	volatile char buf[48 * 1024];
	buf[0] = 1;
	buf[sizeof(buf) - 1] = 2;
	(void)arg;
	return (void *)(long)(buf[0] + buf[sizeof(buf) - 1]);
}

static void thread_stack_size(void)
{
	pthread_attr_t a;
	pthread_t th;
	void *r;
	size_t sz;
	CHECK_RET0(pthread_attr_init(&a));
	CHECK_RET(pthread_attr_setstacksize(&a, 1024), EINVAL);
	CHECK_RET0(pthread_attr_setstacksize(&a, 128 * 1024));
	CHECK_RET0(pthread_attr_getstacksize(&a, &sz));
	CHECK_EQ(sz, 128 * 1024);
	CHECK_RET0(pthread_create(&th, &a, deep_stack, NULL));
	CHECK_RET0(pthread_join(th, &r));
	CHECK_EQ((long)r, 3);
}

static void *user_stack_thread(void *arg)
{
	int local;
	return (void *)((char *)&local - (char *)arg);
}

static void thread_user_stack(void)
{
	size_t sz = 256 * 1024;
	void *stk = CHECK_MAP(mmap(NULL, sz, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	pthread_attr_t a;
	pthread_t th;
	void *r;
	CHECK_RET0(pthread_attr_init(&a));
	CHECK_RET0(pthread_attr_setstack(&a, stk, sz));
	CHECK_RET0(pthread_create(&th, &a, user_stack_thread, stk));
	CHECK_RET0(pthread_join(th, &r));
	long off = (long)r;
	CHECK_GT(off, 0);
	CHECK_LT(off, (long)sz);
	munmap(stk, sz);
}

static sem_t sem_items;
static long sem_sum;

static void *sem_consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		while (sem_wait(&sem_items) != 0) {
		}
		__atomic_fetch_add(&sem_sum, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void semaphore_counts(void)
{
	pthread_t th[4];
	sem_sum = 0;
	CHECK_SYS(sem_init(&sem_items, 0, 0));
	for (int i = 0; i < 4; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, sem_consumer, NULL));
	for (int i = 0; i < 4000; i++)
		CHECK_SYS(sem_post(&sem_items));
	for (int i = 0; i < 4; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	CHECK_EQ(sem_sum, 4000);
	int v;
	CHECK_SYS(sem_getvalue(&sem_items, &v));
	CHECK_EQ(v, 0);
	CHECK_ERR(sem_trywait(&sem_items), EAGAIN);
	struct timespec ts;
	abs_after_ms(CLOCK_REALTIME, &ts, 20);
	CHECK_ERR(sem_timedwait(&sem_items, &ts), ETIMEDOUT);
	CHECK_SYS(sem_destroy(&sem_items));
}

static int cancel_pipe[2];

static void *blocked_reader(void *arg)
{
	char c;
	(void)arg;
	for (;;)
		(void)read(cancel_pipe[0], &c, 1);
	return NULL;
}

static void cancel_blocked_read(void)
{
	pthread_t th;
	void *r;
	CHECK_SYS(pipe(cancel_pipe));
	CHECK_RET0(pthread_create(&th, NULL, blocked_reader, NULL));
	usleep(20000);
	CHECK_RET0(pthread_cancel(th));
	CHECK_RET0(pthread_join(th, &r));
	CHECK(r == PTHREAD_CANCELED);
}

static void *sleeper(void *arg)
{
	(void)arg;
	usleep(50000);
	return NULL;
}

static void pthread_kill_zero_alive(void)
{
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, sleeper, NULL));
	CHECK_RET0(pthread_kill(th, 0));
	CHECK_RET(pthread_kill(th, 12345), EINVAL);
	CHECK_RET0(pthread_join(th, NULL));
}

static void *noop(void *arg)
{
	return arg;
}

static void create_join_many(void)
{
	for (int round = 0; round < 16; round++) {
		pthread_t th[16];
		for (long i = 0; i < 16; i++)
			CHECK_RET0(pthread_create(&th[i], NULL, noop, (void *)i));
		for (long i = 0; i < 16; i++) {
			void *r;
			CHECK_RET0(pthread_join(th[i], &r));
			CHECK_EQ((long)r, i);
		}
	}
}

static void detached_threads_finish(void)
{
	pthread_attr_t a;
	CHECK_RET0(pthread_attr_init(&a));
	CHECK_RET0(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED));
	counter = 0;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_t th;
		CHECK_RET0(pthread_create(&th, &a, incr_worker, (void *)100L));
	}
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&mu);
		long c = counter;
		pthread_mutex_unlock(&mu);
		if (c == NTHREADS * 100L)
			break;
		usleep(2000);
	}
	pthread_mutex_lock(&mu);
	long c = counter;
	pthread_mutex_unlock(&mu);
	CHECK_EQ(c, NTHREADS * 100L);
}

/* A process-shared mutex in a shared mapping, contended across fork. */
static void mutex_pshared_fork(void)
{
	struct shared {
		pthread_mutex_t m;
		long n;
	} *s = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	pthread_mutexattr_t a;
	CHECK_RET0(pthread_mutexattr_init(&a));
	CHECK_RET0(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED));
	CHECK_RET0(pthread_mutex_init(&s->m, &a));
	s->n = 0;
	pid_t pids2[2];
	for (int k = 0; k < 2; k++) {
		pids2[k] = CHECK_SYS(fork());
		if (pids2[k] == 0) {
			for (int i = 0; i < 20000; i++) {
				pthread_mutex_lock(&s->m);
				s->n++;
				pthread_mutex_unlock(&s->m);
			}
			_exit(0);
		}
	}
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&s->m);
		s->n++;
		pthread_mutex_unlock(&s->m);
	}
	for (int k = 0; k < 2; k++)
		CHECK_EXITED(mt_wait(pids2[k]), 0);
	CHECK_EQ(s->n, 60000);
	munmap(s, 4096);
}

static const struct mt_case cases[] = {
	MT_CASE(mutex_counter_8threads),
	MT_CASE(condvar_producer_consumer),
	MT_CASE(condvar_broadcast),
	MT_CASE(barrier_rounds),
	MT_CASE(barrier_init_zero_einval),
	MT_CASE(mutex_trylock_ebusy),
	MT_CASE(mutex_errorcheck),
	MT_CASE(mutex_recursive),
	MT_CASE(mutex_timedlock_timeout),
	MT_CASE(mutex_timedlock_bad_timespec),
	MT_CASE(cond_timedwait_realtime),
	MT_CASE(cond_timedwait_monotonic),
	MT_CASE(condattr_setclock_einval),
	MT_CASE(rwlock_counter),
	MT_CASE(rwlock_try_ebusy),
	MT_CASE(join_return_values),
	MT_CASE(join_self_edeadlk),
	MT_CASE(thread_ids_distinct),
	MT_CASE(spinlock_counter),
	MT_CASE(atomic_counter_8threads),
	MT_CASE(once_runs_once),
	MT_CASE(tls_per_thread),
	MT_CASE(thread_stack_size),
	MT_CASE(thread_user_stack),
	MT_CASE(semaphore_counts),
	MT_CASE(cancel_blocked_read),
	MT_CASE(pthread_kill_zero_alive),
	MT_CASE(create_join_many),
	MT_CASE(detached_threads_finish),
	MT_CASE(mutex_pshared_fork),
};

MT_MAIN(cases)
