//go:build ignore

/* s3_stop_restart: blocking calls stopped by SIGSTOP and resumed by
 * SIGCONT (no handler runs): read on a pipe, poll, ppoll, select, a futex
 * wait with a timeout and clock_nanosleep (through restart_syscall),
 * wait4 and accept continue transparently and complete normally, while
 * the calls signal(7) names (epoll_wait, sigtimedwait, a socket read with
 * SO_RCVTIMEO) fail with EINTR. */
#include "moattest.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* wait_sleeping waits until process pid is asleep in the kernel. */
static int wait_sleeping(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 5000; i++) {
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (n > 0) {
				buf[n] = 0;
				char *p = strrchr(buf, ')');
				if (p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D'))
					return 0;
			}
		}
		usleep(1000);
	}
	return -1;
}

/* stop_and_continue stops pid once it sleeps, checks the stop, and
 * continues it. */
static int stop_and_continue(pid_t pid)
{
	if (wait_sleeping(pid) < 0)
		return -1;
	if (kill(pid, SIGSTOP) < 0)
		return -1;
	int st;
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st))
		return -1;
	return kill(pid, SIGCONT);
}

#define STOP_CONT(pid)                               \
	do {                                         \
		if (stop_and_continue(pid) < 0)      \
			FAIL("stop/continue of %d failed", (int)(pid)); \
	} while (0)

static void pipe_read(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		ssize_t r = read(p[0], &c, 1);
		_exit(r == 1 && c == 'x' ? 0 : 1);
	}
	STOP_CONT(pid);
	CHECK_EQ(write(p[1], "x", 1), 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void poll_with_timeout(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int r = poll(&pf, 1, 20000);
		_exit(r == 1 ? 0 : 1);
	}
	STOP_CONT(pid);
	CHECK_EQ(write(p[1], "x", 1), 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void ppoll_and_select(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		struct timespec ts = {20, 0};
		int r = ppoll(&pf, 1, &ts, NULL);
		if (r != 1)
			_exit(1);
		char c;
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		fd_set rs;
		FD_ZERO(&rs);
		FD_SET(p[0], &rs);
		struct timeval tv = {20, 0};
		r = select(p[0] + 1, &rs, NULL, NULL, &tv);
		_exit(r == 1 ? 0 : 3);
	}
	STOP_CONT(pid);
	CHECK_EQ(write(p[1], "x", 1), 1);
	/* Now the select. */
	STOP_CONT(pid);
	CHECK_EQ(write(p[1], "y", 1), 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void epoll_wait_blocked(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int ep = CHECK_SYS(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct epoll_event out;
		int r = epoll_wait(ep, &out, 1, 20000);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	/* One of the calls signal(7) lists: a stop and continue make it
	 * fail with EINTR, even without a handler. */
	STOP_CONT(pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void futex_timed_wait(void)
{
	uint32_t *w = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	*w = 0;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec ts = {20, 0};
		long r = syscall(SYS_futex, w, FUTEX_WAIT, 0, &ts, NULL, 0);
		_exit(r == 0 ? 0 : 1);
	}
	STOP_CONT(pid);
	/* Wake until it is gone (the resumed wait may not be queued yet). */
	int st = 0;
	for (int i = 0; i < 5000; i++) {
		*w = 0;
		syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		usleep(1000);
	}
	CHECK_EXITED(st, 0);
}

static void clock_nanosleep_completes(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		struct timespec req = {0, 300 * 1000 * 1000};
		int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		int64_t ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
		/* The whole sleep happened (the stop counts toward it). */
		_exit(r == 0 && ns >= 300 * 1000 * 1000LL ? 0 : 1);
	}
	STOP_CONT(pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void wait4_for_grandchild(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		pid_t g = fork();
		if (g == 0) {
			char c;
			read(p[0], &c, 1);
			_exit(9);
		}
		int st;
		pid_t r = wait4(g, &st, 0, NULL);
		_exit(r == g && WIFEXITED(st) && WEXITSTATUS(st) == 9 ? 0 : 1);
	}
	/* The child sleeps in wait4 (the grandchild in read). */
	STOP_CONT(pid);
	CHECK_EQ(write(p[1], "x", 1), 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void sigtimedwait_blocked(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigprocmask(SIG_BLOCK, &s, NULL);
		struct timespec ts = {20, 0};
		int r = sigtimedwait(&s, NULL, &ts);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	/* Also in signal(7)'s list: EINTR after a stop. */
	STOP_CONT(pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void recv_timeout_socket_eintr(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct timeval tv = {20, 0};
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		ssize_t r = recv(sv[0], &c, 1, 0);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	/* A socket with SO_RCVTIMEO is the third such case. */
	STOP_CONT(pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void accept_blocked(void)
{
	ENTER();
	int l = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "s"};
	CHECK_SYS(bind(l, (struct sockaddr *)&a, sizeof a));
	CHECK_SYS(listen(l, 1));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int c = accept(l, NULL, NULL);
		_exit(c >= 0 ? 0 : 1);
	}
	STOP_CONT(pid);
	int c = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_SYS(connect(c, (struct sockaddr *)&a, sizeof a));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(pipe_read),
	MT_CASE(poll_with_timeout),
	MT_CASE(ppoll_and_select),
	MT_CASE(epoll_wait_blocked),
	MT_CASE(futex_timed_wait),
	MT_CASE(clock_nanosleep_completes),
	MT_CASE(wait4_for_grandchild),
	MT_CASE(sigtimedwait_blocked),
	MT_CASE(recv_timeout_socket_eintr),
	MT_CASE(accept_blocked),
};

MT_MAIN(cases)
