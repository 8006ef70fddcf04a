//go:build ignore

/* alarm_itimer: alarm, setitimer/getitimer (REAL, VIRTUAL, PROF), POSIX
 * timers (SIGEV_SIGNAL, SIGEV_THREAD_ID, SIGEV_NONE, overruns, absolute
 * times), timerfd, nanosleep and clock_nanosleep (relative, absolute,
 * interrupted with the remaining time). */
#include "moattest.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int sig_count;
static volatile int last_code;
static volatile int last_value;
static volatile pid_t last_tid;

static void on_sig(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	sig_count++;
	last_code = si->si_code;
	last_value = si->si_value.sival_int;
	last_tid = (pid_t)syscall(SYS_gettid);
}

static int handle(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sig;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sig_count = 0;
	last_code = last_value = 0;
	return sigaction(sig, &sa, NULL);
}

static void wait_sigs(int n, int ms)
{
	for (int i = 0; i < ms && sig_count < n; i++)
		usleep(1000);
}

static void burn_cpu_ms(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	volatile uint64_t x = 0;
	for (;;) {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		if ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 >= ms)
			return;
	}
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void alarm_fires(void)
{
	CHECK_SYS(handle(SIGALRM));
	int64_t t0 = mt_now_ns();
	CHECK_EQ(alarm(1), 0);
	wait_sigs(1, 3000);
	int64_t el = mt_now_ns() - t0;
	CHECK_EQ(sig_count, 1);
	CHECK_GE(el, 900 * 1000000LL);
	CHECK_EQ(alarm(0), 0);
}

static void alarm_returns_remaining(void)
{
	CHECK_EQ(alarm(10), 0);
	CHECK_EQ(alarm(5), 10);
	CHECK_EQ(alarm(0), 5);
	CHECK_EQ(alarm(0), 0);
}

static void alarm_not_inherited_by_fork(void)
{
	CHECK_EQ(alarm(30), 0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(alarm(0));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(alarm(0), 30);
}

static void setitimer_real_oneshot(void)
{
	CHECK_SYS(handle(SIGALRM));
	struct itimerval it = { { 0, 0 }, { 0, 30000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	wait_sigs(1, 2000);
	CHECK_EQ(sig_count, 1);
	struct itimerval cur;
	CHECK_SYS(getitimer(ITIMER_REAL, &cur));
	CHECK_EQ(cur.it_value.tv_sec, 0);
	CHECK_EQ(cur.it_value.tv_usec, 0);
	usleep(50000);
	CHECK_EQ(sig_count, 1);
}

static void setitimer_real_periodic(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	int64_t t0 = mt_now_ns();
	for (int i = 0; i < 5; i++) {
		int sig;
		CHECK_RET0(sigwait(&s, &sig));
		CHECK_EQ(sig, SIGALRM);
	}
	CHECK_GE(mt_now_ns() - t0, 40 * 1000000LL);
	struct itimerval cur;
	CHECK_SYS(getitimer(ITIMER_REAL, &cur));
	CHECK_EQ(cur.it_interval.tv_sec, 0);
	CHECK_EQ(cur.it_interval.tv_usec, 10000);
	struct itimerval zero = { { 0, 0 }, { 0, 0 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &zero, NULL));
}

static void getitimer_remaining_and_old_value(void)
{
	struct itimerval it = { { 2, 500000 }, { 1, 0 } }, old, cur;
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	CHECK_SYS(getitimer(ITIMER_REAL, &cur));
	CHECK_EQ(cur.it_interval.tv_sec, 2);
	CHECK_EQ(cur.it_interval.tv_usec, 500000);
	int64_t us = cur.it_value.tv_sec * 1000000L + cur.it_value.tv_usec;
	CHECK_LE(us, 1000000);
	CHECK_GT(us, 800000);
	struct itimerval zero = { { 0, 0 }, { 0, 0 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &zero, &old));
	CHECK_EQ(old.it_interval.tv_sec, 2);
	us = old.it_value.tv_sec * 1000000L + old.it_value.tv_usec;
	CHECK_GT(us, 0);
	CHECK_LE(us, 1000000);
}

static void setitimer_errors(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 1000000 } };
	CHECK_ERR(setitimer(ITIMER_REAL, &it, NULL), EINVAL);
	it.it_value.tv_usec = -1;
	CHECK_ERR(setitimer(ITIMER_REAL, &it, NULL), EINVAL);
	it.it_value.tv_usec = 0;
	CHECK_ERR(setitimer(5, &it, NULL), EINVAL);
	struct itimerval cur;
	CHECK_ERR(getitimer(5, &cur), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, (void *)8), EFAULT);
	CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, (void *)8, NULL), EFAULT);
}

static void itimer_virtual_fires_on_cpu(void)
{
	CHECK_SYS(handle(SIGVTALRM));
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	CHECK_SYS(setitimer(ITIMER_VIRTUAL, &it, NULL));
	/* Sleeping does not count. */
	usleep(50000);
	CHECK_EQ(sig_count, 0);
	for (int i = 0; i < 100 && sig_count == 0; i++)
		burn_cpu_ms(5);
	CHECK_EQ(sig_count, 1);
}

static void itimer_prof_fires_on_cpu(void)
{
	CHECK_SYS(handle(SIGPROF));
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	CHECK_SYS(setitimer(ITIMER_PROF, &it, NULL));
	for (int i = 0; i < 100 && sig_count == 0; i++)
		burn_cpu_ms(5);
	CHECK_EQ(sig_count, 1);
	struct itimerval cur;
	CHECK_SYS(getitimer(ITIMER_PROF, &cur));
	CHECK_EQ(cur.it_value.tv_sec, 0);
	CHECK_EQ(cur.it_value.tv_usec, 0);
}

static void timer_sigev_signal(void)
{
	CHECK_SYS(handle(SIGRTMIN));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN;
	sev.sigev_value.sival_int = 99;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 20 * 1000000L } };
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	wait_sigs(1, 2000);
	CHECK_EQ(sig_count, 1);
	CHECK_EQ(last_code, SI_TIMER);
	CHECK_EQ(last_value, 99);
	CHECK_SYS(timer_delete(t));
}

static void timer_default_sigalrm(void)
{
	CHECK_SYS(handle(SIGALRM));
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_REALTIME, NULL, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 10 * 1000000L } };
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	wait_sigs(1, 2000);
	CHECK_EQ(sig_count, 1);
	CHECK_EQ(last_code, SI_TIMER);
	CHECK_SYS(timer_delete(t));
}

static void timer_overrun_counted(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 0, 1000000L }, { 0, 1000000L } };
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	usleep(60000);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigwaitinfo(&s, &si), SIGRTMIN);
	CHECK_EQ(si.si_code, SI_TIMER);
	/* Only one signal was queued for many expirations. */
	CHECK_GT(si.si_overrun, 5);
	struct itimerspec zero = { { 0, 0 }, { 0, 0 } };
	CHECK_SYS(timer_settime(t, 0, &zero, NULL));
	CHECK_GE(timer_getoverrun(t), 0);
	CHECK_SYS(timer_delete(t));
}

static void timer_gettime_counts_down(void)
{
	/* SIGEV_SIGNAL, not SIGEV_NONE: Linux 6.18 keeps reporting the old
	 * remaining time of a disarmed SIGEV_NONE timer (a kernel bug). */
	CHECK_SYS(handle(SIGUSR1));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 1, 0 }, { 5, 0 } }, cur, old;
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	usleep(20000);
	CHECK_SYS(timer_gettime(t, &cur));
	CHECK_EQ(cur.it_interval.tv_sec, 1);
	CHECK_LT(ts_ns(&cur.it_value), 5000000000LL - 15000000LL);
	CHECK_GT(ts_ns(&cur.it_value), 3000000000LL);
	struct itimerspec zero = { { 0, 0 }, { 0, 0 } };
	CHECK_SYS(timer_settime(t, 0, &zero, &old));
	CHECK_GT(ts_ns(&old.it_value), 0);
	CHECK_SYS(timer_gettime(t, &cur));
	CHECK_EQ(ts_ns(&cur.it_value), 0);
	CHECK_SYS(timer_delete(t));
}

static void timer_sigev_none_expires_silently(void)
{
	CHECK_SYS(handle(SIGALRM));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_NONE;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 5000000L } }, cur;
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	usleep(30000);
	CHECK_EQ(sig_count, 0);
	CHECK_SYS(timer_gettime(t, &cur));
	CHECK_EQ(ts_ns(&cur.it_value), 0);
	CHECK_SYS(timer_delete(t));
}

static void timer_abstime_past_fires_now(void)
{
	CHECK_SYS(handle(SIGUSR1));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &its.it_value));
	its.it_value.tv_sec -= 1;
	CHECK_SYS(timer_settime(t, TIMER_ABSTIME, &its, NULL));
	wait_sigs(1, 1000);
	CHECK_EQ(sig_count, 1);
	CHECK_SYS(timer_delete(t));
}

static void timer_abstime_future(void)
{
	CHECK_SYS(handle(SIGUSR1));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_REALTIME, &sev, &t));
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &its.it_value));
	its.it_value.tv_nsec += 30000000L;
	if (its.it_value.tv_nsec >= 1000000000L) {
		its.it_value.tv_nsec -= 1000000000L;
		its.it_value.tv_sec++;
	}
	int64_t t0 = mt_now_ns();
	CHECK_SYS(timer_settime(t, TIMER_ABSTIME, &its, NULL));
	wait_sigs(1, 2000);
	CHECK_EQ(sig_count, 1);
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	CHECK_SYS(timer_delete(t));
}

static volatile pid_t target_tid;
static volatile int target_stop;

static void *target_thread(void *arg)
{
	(void)arg;
	target_tid = (pid_t)syscall(SYS_gettid);
	while (!target_stop)
		usleep(1000);
	return NULL;
}

static void timer_sigev_thread_id(void)
{
	CHECK_SYS(handle(SIGUSR2));
	pthread_t th;
	target_tid = 0;
	target_stop = 0;
	CHECK_RET0(pthread_create(&th, NULL, target_thread, NULL));
	while (!target_tid)
		usleep(100);
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR2;
	sev._sigev_un._tid = target_tid;
	sev.sigev_value.sival_int = 5;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 10 * 1000000L } };
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	wait_sigs(1, 2000);
	target_stop = 1;
	pid_t tt = target_tid;
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(sig_count, 1);
	CHECK_EQ(last_tid, tt);
	CHECK_EQ(last_value, 5);
	CHECK_SYS(timer_delete(t));
}

static void timer_create_errors(void)
{
	timer_t t;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	CHECK_ERR(timer_create(99, &sev, &t), EINVAL);
	sev.sigev_notify = 42;
	CHECK_ERR(timer_create(CLOCK_MONOTONIC, &sev, &t), EINVAL);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = 0;
	CHECK_ERR(timer_create(CLOCK_MONOTONIC, &sev, &t), EINVAL);
	sev.sigev_signo = 65;
	CHECK_ERR(timer_create(CLOCK_MONOTONIC, &sev, &t), EINVAL);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = 424242;
	CHECK_ERR(timer_create(CLOCK_MONOTONIC, &sev, &t), EINVAL);
}

static void timer_use_after_delete(void)
{
	long id;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_NONE;
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id));
	CHECK_SYS(syscall(SYS_timer_delete, id));
	struct itimerspec its = { { 0, 0 }, { 1, 0 } };
	CHECK_ERR(syscall(SYS_timer_settime, id, 0, &its, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_timer_gettime, id, &its), EINVAL);
	CHECK_ERR(syscall(SYS_timer_delete, id), EINVAL);
	CHECK_ERR(syscall(SYS_timer_getoverrun, id), EINVAL);
}

static void timer_settime_einval(void)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_NONE;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 1000000000L } };
	CHECK_ERR(timer_settime(t, 0, &its, NULL), EINVAL);
	its.it_value.tv_nsec = -1;
	CHECK_ERR(timer_settime(t, 0, &its, NULL), EINVAL);
	CHECK_SYS(timer_delete(t));
}

static void timer_process_cputime(void)
{
	CHECK_SYS(handle(SIGUSR1));
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 20 * 1000000L } };
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	usleep(30000);
	CHECK_EQ(sig_count, 0);
	for (int i = 0; i < 100 && sig_count == 0; i++)
		burn_cpu_ms(5);
	CHECK_EQ(sig_count, 1);
	CHECK_SYS(timer_delete(t));
}

static void timerfd_expirations(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = { { 0, 5000000L }, { 0, 5000000L } };
	CHECK_SYS(timerfd_settime(fd, 0, &its, NULL));
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_GE(n, 1);
	usleep(30000);
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_GE(n, 3);
	struct itimerspec cur;
	CHECK_SYS(timerfd_gettime(fd, &cur));
	CHECK_EQ(cur.it_interval.tv_nsec, 5000000L);
	close(fd);
}

static void timerfd_nonblock_and_errors(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC));
	uint64_t n;
	CHECK_ERR(read(fd, &n, sizeof(n)), EAGAIN);
	char small[4];
	CHECK_ERR(read(fd, small, sizeof(small)), EINVAL);
	CHECK_ERR(timerfd_create(99, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_MONOTONIC, 0x1234), EINVAL);
	struct itimerspec its = { { 0, 0 }, { 0, 1000000000L } };
	CHECK_ERR(timerfd_settime(fd, 0, &its, NULL), EINVAL);
	CHECK_ERR(timerfd_settime(0, 0, &its, NULL), EINVAL);
	CHECK_ERR(timerfd_gettime(999, &its), EBADF);
	close(fd);
}

static void nanosleep_relative(void)
{
	struct timespec req = { 0, 20 * 1000000L }, rem = { 7, 7 };
	int64_t t0 = mt_now_ns();
	CHECK_SYS(nanosleep(&req, &rem));
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	struct timespec zero = { 0, 0 };
	CHECK_SYS(nanosleep(&zero, NULL));
}

static void nanosleep_errors(void)
{
	struct timespec req = { 0, 1000000000L };
	CHECK_ERR(nanosleep(&req, NULL), EINVAL);
	req.tv_nsec = -1;
	CHECK_ERR(nanosleep(&req, NULL), EINVAL);
	req.tv_sec = -1;
	req.tv_nsec = 0;
	CHECK_ERR(nanosleep(&req, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_nanosleep, (void *)8, NULL), EFAULT);
}

static void nanosleep_interrupted_remaining(void)
{
	CHECK_SYS(handle(SIGALRM));
	/* No SA_RESTART: nanosleep is never restarted after a handler anyway. */
	struct itimerval it = { { 0, 0 }, { 0, 30000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	struct timespec req = { 1, 0 }, rem = { 0, 0 };
	CHECK_ERR(nanosleep(&req, &rem), EINTR);
	CHECK_EQ(sig_count, 1);
	int64_t r = ts_ns(&rem);
	CHECK_GT(r, 800 * 1000000LL);
	CHECK_LT(r, 1000 * 1000000LL);
}

static void clock_nanosleep_relative(void)
{
	struct timespec req = { 0, 20 * 1000000L };
	int64_t t0 = mt_now_ns();
	CHECK_RET0(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL));
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	t0 = mt_now_ns();
	CHECK_RET0(clock_nanosleep(CLOCK_BOOTTIME, 0, &req, NULL));
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
}

static void clock_nanosleep_absolute(void)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	for (size_t i = 0; i < MT_NCASES(clocks); i++) {
		struct timespec now, after;
		CHECK_SYS(clock_gettime(clocks[i], &now));
		struct timespec deadline = now;
		deadline.tv_nsec += 30000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_nsec -= 1000000000L;
			deadline.tv_sec++;
		}
		CHECK_RET0(clock_nanosleep(clocks[i], TIMER_ABSTIME, &deadline, NULL));
		CHECK_SYS(clock_gettime(clocks[i], &after));
		CHECK_GE(ts_ns(&after), ts_ns(&deadline));
	}
}

static void clock_nanosleep_absolute_past(void)
{
	struct timespec now;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &now));
	now.tv_sec -= 5;
	int64_t t0 = mt_now_ns();
	CHECK_RET0(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &now, NULL));
	CHECK_LT(mt_now_ns() - t0, 500 * 1000000LL);
}

static void clock_nanosleep_errors(void)
{
	struct timespec req = { 0, 1000 };
	/* clock_nanosleep returns the error number; errno is untouched. */
	CHECK_RET(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL), EINVAL);
	CHECK_RET(clock_nanosleep(99, 0, &req, NULL), EINVAL);
	req.tv_nsec = 1000000000L;
	CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), EINVAL);
	req.tv_nsec = 0;
	CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0x10, &req, NULL), 0);
	CHECK_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (void *)8, NULL), EFAULT);
}

static void clock_nanosleep_interrupted(void)
{
	CHECK_SYS(handle(SIGALRM));
	struct itimerval it = { { 0, 0 }, { 0, 30000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	struct timespec req = { 2, 0 }, rem = { 0, 0 };
	CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem), EINTR);
	int64_t r = ts_ns(&rem);
	CHECK_GT(r, 1500 * 1000000LL);
	CHECK_LT(r, 2000 * 1000000LL);
	/* Absolute sleeps do not report a remainder. */
	struct timespec dl;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &dl));
	dl.tv_sec += 2;
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	rem.tv_sec = 77;
	CHECK_RET(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, &rem), EINTR);
	CHECK_EQ(rem.tv_sec, 77);
}

static void sleep_zero_and_usleep(void)
{
	CHECK_EQ(sleep(0), 0);
	int64_t t0 = mt_now_ns();
	CHECK_SYS(usleep(10000));
	CHECK_GE(mt_now_ns() - t0, 10 * 1000000LL);
}

static const struct mt_case cases[] = {
	MT_CASE(alarm_fires),
	MT_CASE(alarm_returns_remaining),
	MT_CASE(alarm_not_inherited_by_fork),
	MT_CASE(setitimer_real_oneshot),
	MT_CASE(setitimer_real_periodic),
	MT_CASE(getitimer_remaining_and_old_value),
	MT_CASE(setitimer_errors),
	MT_CASE(itimer_virtual_fires_on_cpu),
	MT_CASE(itimer_prof_fires_on_cpu),
	MT_CASE(timer_sigev_signal),
	MT_CASE(timer_default_sigalrm),
	MT_CASE(timer_overrun_counted),
	MT_CASE(timer_gettime_counts_down),
	MT_CASE(timer_sigev_none_expires_silently),
	MT_CASE(timer_abstime_past_fires_now),
	MT_CASE(timer_abstime_future),
	MT_CASE(timer_sigev_thread_id),
	MT_CASE(timer_create_errors),
	MT_CASE(timer_use_after_delete),
	MT_CASE(timer_settime_einval),
	MT_CASE(timer_process_cputime),
	MT_CASE(timerfd_expirations),
	MT_CASE(timerfd_nonblock_and_errors),
	MT_CASE(nanosleep_relative),
	MT_CASE(nanosleep_errors),
	MT_CASE(nanosleep_interrupted_remaining),
	MT_CASE(clock_nanosleep_relative),
	MT_CASE(clock_nanosleep_absolute),
	MT_CASE(clock_nanosleep_absolute_past),
	MT_CASE(clock_nanosleep_errors),
	MT_CASE(clock_nanosleep_interrupted),
	MT_CASE(sleep_zero_and_usleep),
};

MT_MAIN(cases)
