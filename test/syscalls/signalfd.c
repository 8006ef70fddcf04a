//go:build ignore

/* signalfd: records of the signals a signalfd reads (kill, sigqueue,
 * tgkill, SIGCHLD, POSIX timers), blocking reads, poll and epoll
 * readiness, per-thread pending signals, and the errors. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int block2(int a, int b, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, a);
	if (b)
		sigaddset(set, b);
	return sigprocmask(SIG_BLOCK, set, NULL);
}

static void signalfd_sigchld_record(void)
{
	sigset_t s;
	CHECK_SYS(block2(SIGCHLD, 0, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, 0));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(7);
	struct signalfd_siginfo si;
	/* Blocks until the child's SIGCHLD arrives. */
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGCHLD);
	CHECK_EQ(si.ssi_code, CLD_EXITED);
	CHECK_EQ(si.ssi_pid, (uint32_t)pid);
	CHECK_EQ(si.ssi_status, 7);
	CHECK_EQ(si.ssi_uid, getuid());
	CHECK_EXITED(mt_wait(pid), 7);
}

static void signalfd_timer_record(void)
{
	sigset_t s;
	CHECK_SYS(block2(SIGALRM, 0, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, 0));
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGALRM;
	sev.sigev_value.sival_int = 4242;
	timer_t t;
	CHECK_SYS(timer_create(CLOCK_MONOTONIC, &sev, &t));
	struct itimerspec its = { { 0, 0 }, { 0, 5 * 1000000L } };
	CHECK_SYS(timer_settime(t, 0, &its, NULL));
	struct signalfd_siginfo si;
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGALRM);
	CHECK_EQ(si.ssi_code, SI_TIMER);
	CHECK_EQ(si.ssi_int, 4242);
	CHECK_EQ(si.ssi_overrun, 0);
	CHECK_EQ(si.ssi_pid, 0);
	CHECK_SYS(timer_delete(t));
}

static void signalfd_epoll_readiness(void)
{
	sigset_t s;
	CHECK_SYS(block2(SIGUSR1, 0, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 9 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	struct epoll_event out;
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
	CHECK_EQ(out.events, EPOLLIN);
	CHECK_EQ(out.data.u64, 9);
	struct signalfd_siginfo si;
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	/* Never writable. */
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&pf, 1, 0), 0);
}

static pthread_t main_thread;

static void *send_soon(void *arg)
{
	(void)arg;
	usleep(20000);
	pthread_kill(main_thread, SIGUSR2);
	return NULL;
}

static void signalfd_blocking_read_woken(void)
{
	sigset_t s;
	CHECK_SYS(block2(SIGUSR2, 0, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_CLOEXEC));
	main_thread = pthread_self();
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, send_soon, NULL));
	struct signalfd_siginfo si;
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGUSR2);
	CHECK_EQ(si.ssi_code, SI_TKILL);
	CHECK_EQ(si.ssi_pid, (uint32_t)getpid());
	CHECK_RET0(pthread_join(th, NULL));
}

static int other_fd;
static volatile int other_done;

static void *read_other(void *arg)
{
	struct signalfd_siginfo si;
	/* Another thread's own pending signal is not ours; the process's
	 * are. */
	ssize_t r = read(other_fd, &si, sizeof(si));
	*(int *)arg = r == -1 ? -errno : (int)si.ssi_signo;
	return NULL;
}

static void signalfd_thread_directed(void)
{
	sigset_t s;
	CHECK_SYS(block2(SIGUSR1, SIGUSR2, &s));
	other_fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	/* SIGUSR1 to this thread only. */
	CHECK_SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1));
	int got = 0;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, read_other, &got));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(got, -EAGAIN);
	/* SIGUSR2 to the process: any thread may read it. */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_RET0(pthread_create(&th, NULL, read_other, &got));
	CHECK_RET0(pthread_join(th, NULL));
	CHECK_EQ(got, SIGUSR2);
	struct signalfd_siginfo si;
	CHECK_EQ(read(other_fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGUSR1);
}

static void signalfd_more_errors(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_ERR(signalfd(-2, &s, 0), EBADF);
	CHECK_ERR(syscall(SYS_signalfd4, -1, &s, 16, 0), EINVAL);
	CHECK_ERR(syscall(SYS_signalfd, -1, &s, 4), EINVAL);
	CHECK_ERR(syscall(SYS_signalfd4, -1, (void *)8, 8, 0), EFAULT);
	int fd = CHECK_SYS(signalfd(-1, &s, 0));
	/* lseek is a no-op reporting 0; pread has no offset to use. */
	CHECK_EQ(lseek(fd, 5, SEEK_SET), 0);
	struct signalfd_siginfo si;
	CHECK_ERR(pread(fd, &si, sizeof(si), 0), ESPIPE);
	CHECK_ERR(pwrite(fd, &si, sizeof(si), 0), ESPIPE);
	/* Updating keeps the descriptor's flags: SFD_NONBLOCK is ignored. */
	CHECK_EQ(signalfd(fd, &s, SFD_NONBLOCK), fd);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	/* Bad flags on an update are still EINVAL. */
	CHECK_ERR(signalfd(fd, &s, 0x1), EINVAL);
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t r = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[r] = 0;
	CHECK_STREQ(link, "anon_inode:[signalfd]");
}

static void signalfd_partial_buffer(void)
{
	sigset_t s;
	CHECK_SYS(block2(SIGUSR1, SIGUSR2, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	CHECK_SYS(raise(SIGUSR1));
	CHECK_SYS(raise(SIGUSR2));
	/* Room for one and a half records: one is read. */
	char buf[sizeof(struct signalfd_siginfo) * 3 / 2];
	CHECK_EQ(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(struct signalfd_siginfo));
	struct signalfd_siginfo si;
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGUSR2);
	CHECK_ERR(read(fd, &si, sizeof(si)), EAGAIN);
}

static void signalfd_unblocked_delivered_normally(void)
{
	/* A signal the thread does not block is delivered as usual; the
	 * signalfd does not see it afterwards. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGURG);
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	CHECK_SYS(raise(SIGURG)); /* default action: ignore */
	struct signalfd_siginfo si;
	CHECK_ERR(read(fd, &si, sizeof(si)), EAGAIN);
}

static const struct mt_case cases[] = {
	MT_CASE(signalfd_sigchld_record),
	MT_CASE(signalfd_timer_record),
	MT_CASE(signalfd_epoll_readiness),
	MT_CASE(signalfd_blocking_read_woken),
	MT_CASE(signalfd_thread_directed),
	MT_CASE(signalfd_more_errors),
	MT_CASE(signalfd_partial_buffer),
	MT_CASE(signalfd_unblocked_delivered_normally),
};

MT_MAIN(cases)
