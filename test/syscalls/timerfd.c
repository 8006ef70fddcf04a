//go:build ignore

/* timerfd: timerfd_create/settime/gettime on the wall clocks, relative and
 * absolute times, periodic expiration counts, blocking and non-blocking
 * reads, poll and epoll readiness, TFD_IOC_SET_TICKS, and the errors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET (1 << 1)
#endif
#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

static int64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static void timerfd_oneshot_blocking_read(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = { { 0, 0 }, { 0, 20 * 1000000L } };
	int64_t t0 = mt_now_ns();
	CHECK_SYS(timerfd_settime(fd, 0, &its, NULL));
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_EQ(n, 1);
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	/* One shot: disarmed now. */
	struct itimerspec cur;
	CHECK_SYS(timerfd_gettime(fd, &cur));
	CHECK_EQ(ts_ns(&cur.it_value), 0);
	CHECK_EQ(ts_ns(&cur.it_interval), 0);
	/* A larger buffer still reads 8 bytes. */
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));
	char big[64];
	CHECK_ERR(read(fd, big, sizeof(big)), EAGAIN);
}

static void timerfd_absolute_realtime(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK));
	struct timespec now;
	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &now));
	/* An absolute time in the past expires at once. */
	struct itimerspec its = { { 0, 0 }, now };
	CHECK_SYS(timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL));
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 5000), 1);
	CHECK_EQ(pf.revents, POLLIN);
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_EQ(n, 1);
	/* One 30 ms ahead: pending, then due. */
	its.it_value.tv_nsec += 30 * 1000000L;
	if (its.it_value.tv_nsec >= 1000000000L) {
		its.it_value.tv_sec++;
		its.it_value.tv_nsec -= 1000000000L;
	}
	CHECK_SYS(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
	struct itimerspec cur;
	CHECK_SYS(timerfd_gettime(fd, &cur));
	CHECK_GT(ts_ns(&cur.it_value), 0);
	CHECK_LE(ts_ns(&cur.it_value), 30 * 1000000LL);
	CHECK_EQ(poll(&pf, 1, 5000), 1);
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_EQ(n, 1);
}

static void timerfd_absolute_monotonic(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	struct timespec now;
	CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &now));
	struct itimerspec its = { { 0, 0 }, { now.tv_sec + 1, now.tv_nsec } };
	CHECK_SYS(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
	struct itimerspec cur;
	CHECK_SYS(timerfd_gettime(fd, &cur));
	/* About a second left, not an epoch's worth. */
	CHECK_GT(ts_ns(&cur.it_value), 500 * 1000000LL);
	CHECK_LE(ts_ns(&cur.it_value), 1000 * 1000000LL);
	/* Relative to the boot clock too. */
	int b = CHECK_SYS(timerfd_create(CLOCK_BOOTTIME, 0));
	CHECK_SYS(clock_gettime(CLOCK_BOOTTIME, &now));
	its.it_value.tv_sec = now.tv_sec + 2;
	its.it_value.tv_nsec = now.tv_nsec;
	CHECK_SYS(timerfd_settime(b, TFD_TIMER_ABSTIME, &its, NULL));
	CHECK_SYS(timerfd_gettime(b, &cur));
	CHECK_GT(ts_ns(&cur.it_value), 1500 * 1000000LL);
	CHECK_LE(ts_ns(&cur.it_value), 2000 * 1000000LL);
}

static void timerfd_settime_old_value_and_disarm(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = { { 3, 0 }, { 10, 0 } }, old;
	memset(&old, 0x55, sizeof(old));
	CHECK_SYS(timerfd_settime(fd, 0, &its, &old));
	CHECK_EQ(ts_ns(&old.it_value), 0);
	CHECK_EQ(ts_ns(&old.it_interval), 0);
	struct itimerspec zero = { { 0, 0 }, { 0, 0 } };
	CHECK_SYS(timerfd_settime(fd, 0, &zero, &old));
	CHECK_GT(ts_ns(&old.it_value), 9 * 1000000000LL);
	CHECK_LE(ts_ns(&old.it_value), 10 * 1000000000LL);
	CHECK_EQ(old.it_interval.tv_sec, 3);
	CHECK_EQ(old.it_interval.tv_nsec, 0);
	struct itimerspec cur;
	CHECK_SYS(timerfd_gettime(fd, &cur));
	CHECK_EQ(ts_ns(&cur.it_value), 0);
	CHECK_EQ(ts_ns(&cur.it_interval), 0);
}

static void timerfd_periodic_counts_and_reset(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	struct itimerspec its = { { 0, 2000000L }, { 0, 2000000L } };
	CHECK_SYS(timerfd_settime(fd, 0, &its, NULL));
	usleep(50000);
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	/* About 25 expirations; allow for a loaded machine. */
	CHECK_GE(n, 10);
	CHECK_LE(n, 60);
	/* Setting again drops the unread count. */
	usleep(10000);
	struct itimerspec later = { { 0, 0 }, { 100, 0 } };
	CHECK_SYS(timerfd_settime(fd, 0, &later, NULL));
	CHECK_ERR(read(fd, &n, sizeof(n)), EAGAIN);
}

static void timerfd_epoll_readiness(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE), O_NONBLOCK | O_RDWR);
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	struct epoll_event out;
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	struct itimerspec its = { { 0, 0 }, { 0, 10 * 1000000L } };
	CHECK_SYS(timerfd_settime(fd, 0, &its, NULL));
	CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
	CHECK_EQ(out.events, EPOLLIN);
	CHECK_EQ(out.data.u64, 42);
	uint64_t n;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	/* Never writable. */
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 0);
}

static void timerfd_set_ticks_ioctl(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	uint64_t v = 7;
	CHECK_SYS(ioctl(fd, TFD_IOC_SET_TICKS, &v));
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 1);
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_EQ(n, 7);
	v = 0;
	CHECK_ERR(ioctl(fd, TFD_IOC_SET_TICKS, &v), EINVAL);
	CHECK_ERR(ioctl(fd, TFD_IOC_SET_TICKS, (void *)8), EFAULT);
	CHECK_ERR(ioctl(fd, TCGETS, &v), ENOTTY);
}

static void timerfd_create_errors(void)
{
	CHECK_ERR(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_THREAD_CPUTIME_ID, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_MONOTONIC_RAW, 0), EINVAL);
	CHECK_ERR(timerfd_create(-1, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_MONOTONIC, O_RDWR), EINVAL);
	/* The alarm clocks need CAP_WAKE_ALARM in the initial namespace. */
	CHECK_ERR(timerfd_create(CLOCK_REALTIME_ALARM, 0), EPERM);
	CHECK_ERR(timerfd_create(CLOCK_BOOTTIME_ALARM, 0), EPERM);
	/* Bad flags beat the capability check. */
	CHECK_ERR(timerfd_create(CLOCK_BOOTTIME_ALARM, 0x4), EINVAL);
}

static void timerfd_settime_errors(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = { { 0, 0 }, { 1, 0 } };
	CHECK_ERR(timerfd_settime(fd, 4, &its, NULL), EINVAL);
	its.it_interval.tv_nsec = -1;
	CHECK_ERR(timerfd_settime(fd, 0, &its, NULL), EINVAL);
	its.it_interval.tv_nsec = 0;
	its.it_value.tv_sec = -1;
	CHECK_ERR(timerfd_settime(fd, 0, &its, NULL), EINVAL);
	its.it_value.tv_sec = 1;
	CHECK_ERR(timerfd_settime(fd, 0, (void *)8, NULL), EFAULT);
	CHECK_ERR(timerfd_settime(fd, 0, &its, (void *)8), EFAULT);
	CHECK_ERR(timerfd_settime(999, 0, &its, NULL), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(timerfd_settime(p[0], 0, &its, NULL), EINVAL);
	CHECK_ERR(timerfd_gettime(p[0], &its), EINVAL);
	CHECK_ERR(timerfd_gettime(fd, (void *)8), EFAULT);
	/* Nothing to write. */
	uint64_t n = 1;
	CHECK_ERR(write(fd, &n, sizeof(n)), EINVAL);
	/* lseek is a no-op reporting 0; pread and pwrite have no offset. */
	CHECK_EQ(lseek(fd, 5, SEEK_SET), 0);
	CHECK_ERR(pread(fd, &n, sizeof(n), 0), ESPIPE);
	CHECK_ERR(pwrite(fd, &n, sizeof(n), 0), ESPIPE);
}

static void timerfd_proc_link(void)
{
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t r = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[r] = 0;
	CHECK_STREQ(link, "anon_inode:[timerfd]");
}

static void *set_soon(void *arg)
{
	int fd = *(int *)arg;
	usleep(20000);
	struct itimerspec its = { { 0, 0 }, { 0, 1000000L } };
	timerfd_settime(fd, 0, &its, NULL);
	return NULL;
}

static void timerfd_read_waits_for_arming(void)
{
	/* A blocking read of a disarmed timer waits until another thread
	 * arms it and it fires. */
	int fd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, 0));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, set_soon, &fd));
	uint64_t n = 0;
	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	CHECK_EQ(n, 1);
	CHECK_RET0(pthread_join(th, NULL));
}

static const struct mt_case cases[] = {
	MT_CASE(timerfd_oneshot_blocking_read),
	MT_CASE(timerfd_absolute_realtime),
	MT_CASE(timerfd_absolute_monotonic),
	MT_CASE(timerfd_settime_old_value_and_disarm),
	MT_CASE(timerfd_periodic_counts_and_reset),
	MT_CASE(timerfd_epoll_readiness),
	MT_CASE(timerfd_set_ticks_ioctl),
	MT_CASE(timerfd_create_errors),
	MT_CASE(timerfd_settime_errors),
	MT_CASE(timerfd_proc_link),
	MT_CASE(timerfd_read_waits_for_arming),
};

MT_MAIN(cases)
