//go:build ignore

/* fasync: signal-driven I/O: fcntl F_SETOWN/F_GETOWN, F_SETOWN_EX/
 * F_GETOWN_EX, F_SETSIG/F_GETSIG and O_ASYNC (F_SETFL and FIOASYNC):
 * SIGIO, or the F_SETSIG signal with si_code, si_band and si_fd, sent to
 * a process, a thread or a process group when a pipe, a FIFO or an
 * inotify file becomes readable or writable, or a pseudo-terminal side
 * gets data; eventfd has no O_ASYNC. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static volatile int last_signo, last_code, last_fd;
static volatile long last_band;
static volatile pid_t last_tid;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hits++;
	last_signo = sig;
	last_code = si->si_code;
	last_fd = si->si_fd;
	last_band = si->si_band;
	last_tid = (pid_t)syscall(SYS_gettid);
}

static int catch(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	hits = 0;
	last_signo = last_code = last_fd = 0;
	last_band = 0;
	return sigaction(sig, &sa, NULL);
}

static int async_on(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_ASYNC);
}

static void owner_defaults_and_errors(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(fcntl(p[0], F_GETOWN), 0);
	CHECK_EQ(fcntl(p[0], F_GETSIG), 0);
	struct f_owner_ex ex = {.type = 7, .pid = 7};
	CHECK_SYS(fcntl(p[0], F_GETOWN_EX, &ex));
	CHECK_EQ(ex.type, F_OWNER_TID);
	CHECK_EQ(ex.pid, 0);
	/* A process that is gone. */
	pid_t dead = CHECK_SYS(fork());
	if (dead == 0)
		_exit(0);
	CHECK_EXITED(mt_wait(dead), 0);
	CHECK_ERR(fcntl(p[0], F_SETOWN, dead), ESRCH);
	CHECK_ERR(fcntl(p[0], F_SETOWN, -dead), ESRCH);
	ex.type = 3;
	ex.pid = getpid();
	CHECK_ERR(fcntl(p[0], F_SETOWN_EX, &ex), EINVAL);
	ex.type = F_OWNER_PID;
	ex.pid = dead;
	CHECK_ERR(fcntl(p[0], F_SETOWN_EX, &ex), ESRCH);
	CHECK_ERR(fcntl(p[0], F_SETSIG, 65), EINVAL);
	CHECK_ERR(fcntl(p[0], F_SETSIG, -1), EINVAL);
	CHECK_SYS(fcntl(p[0], F_SETSIG, 64));
	CHECK_EQ(fcntl(p[0], F_GETSIG), 64);
	CHECK_SYS(fcntl(p[0], F_SETSIG, 0));
	CHECK_EQ(fcntl(p[0], F_GETSIG), 0);
}

static void owner_round_trips(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(fcntl(p[0], F_SETOWN, getpid()));
	CHECK_EQ(fcntl(p[0], F_GETOWN), getpid());
	struct f_owner_ex ex;
	CHECK_SYS(fcntl(p[0], F_GETOWN_EX, &ex));
	CHECK_EQ(ex.type, F_OWNER_PID);
	CHECK_EQ(ex.pid, getpid());
	/* The owner belongs to the description: dup shares it, the other
	 * end has its own. */
	int d = CHECK_SYS(dup(p[0]));
	CHECK_EQ(fcntl(d, F_GETOWN), getpid());
	CHECK_EQ(fcntl(p[1], F_GETOWN), 0);
	ex.type = F_OWNER_TID;
	ex.pid = (pid_t)syscall(SYS_gettid);
	CHECK_SYS(fcntl(p[0], F_SETOWN_EX, &ex));
	CHECK_EQ(fcntl(p[0], F_GETOWN), ex.pid);
	struct f_owner_ex got;
	CHECK_SYS(fcntl(p[0], F_GETOWN_EX, &got));
	CHECK_EQ(got.type, F_OWNER_TID);
	CHECK_EQ(got.pid, ex.pid);
	/* Clearing. */
	CHECK_SYS(fcntl(p[0], F_SETOWN, 0));
	CHECK_EQ(fcntl(p[0], F_GETOWN), 0);
	/* A process group, in a child that leads one. */
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setpgid(0, 0) == 0);
		CHILD_CHECK(fcntl(p[0], F_SETOWN, -getpid()) == 0);
		CHILD_CHECK(fcntl(p[0], F_GETOWN) == -getpid());
		struct f_owner_ex e;
		CHILD_CHECK(fcntl(p[0], F_GETOWN_EX, &e) == 0);
		CHILD_CHECK(e.type == F_OWNER_PGRP && e.pid == getpid());
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	/* The child's group is gone. */
	CHECK_EQ(fcntl(p[0], F_GETOWN), 0);
}

static void pipe_write_signals_reader_owner(void)
{
	CHECK_SYS(catch(SIGIO));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(fcntl(p[0], F_SETOWN, getpid()));
	/* No O_ASYNC yet: nothing. */
	CHECK_EQ(write(p[1], "a", 1), 1);
	CHECK_EQ(hits, 0);
	CHECK_SYS(async_on(p[0]));
	CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);
	CHECK_EQ(write(p[1], "b", 1), 1);
	CHECK_EQ(hits, 1);
	CHECK_EQ(last_signo, SIGIO);
	CHECK_EQ(last_code, SI_KERNEL);
	CHECK_EQ(write(p[1], "c", 1), 1);
	CHECK_EQ(hits, 2);
	/* Turning O_ASYNC off stops the signals. */
	CHECK_SYS(fcntl(p[0], F_SETFL, 0));
	CHECK_EQ(write(p[1], "d", 1), 1);
	CHECK_EQ(hits, 2);
}

static void setsig_fills_siginfo(void)
{
	int sig = SIGRTMIN + 1;
	CHECK_SYS(catch(sig));
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	int r = CHECK_SYS(dup2(p[0], 20));
	CHECK_SYS(fcntl(r, F_SETOWN, getpid()));
	CHECK_SYS(fcntl(r, F_SETSIG, sig));
	CHECK_SYS(async_on(r));
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(hits, 1);
	CHECK_EQ(last_signo, sig);
	CHECK_EQ(last_code, POLL_IN);
	CHECK_EQ(last_fd, 20);
	CHECK_EQ(last_band, POLLIN | POLLRDNORM);
	/* The write end's owner hears of room. */
	CHECK_SYS(fcntl(p[1], F_SETOWN, getpid()));
	CHECK_SYS(fcntl(p[1], F_SETSIG, sig));
	CHECK_SYS(async_on(p[1]));
	CHECK_SYS(fcntl(r, F_SETFL, O_NONBLOCK));
	hits = 0;
	char c;
	CHECK_EQ(read(r, &c, 1), 1);
	CHECK_GE(hits, 1);
	CHECK_EQ(last_code, POLL_OUT);
	CHECK_EQ(last_fd, p[1]);
	CHECK_EQ(last_band, POLLOUT | POLLWRNORM | POLLWRBAND);
}

static void fioasync_toggles(void)
{
	CHECK_SYS(catch(SIGIO));
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(fcntl(p[0], F_SETOWN, getpid()));
	int on = 1;
	CHECK_SYS(ioctl(p[0], FIOASYNC, &on));
	CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);
	CHECK_EQ(write(p[1], "a", 1), 1);
	CHECK_EQ(hits, 1);
	on = 0;
	CHECK_SYS(ioctl(p[0], FIOASYNC, &on));
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ASYNC, 0);
	CHECK_EQ(write(p[1], "b", 1), 1);
	CHECK_EQ(hits, 1);
}

static pid_t waiter_tid;
static volatile int stop_waiter;

static void *waiter_thread(void *arg)
{
	(void)arg;
	waiter_tid = (pid_t)syscall(SYS_gettid);
	while (!stop_waiter)
		usleep(1000);
	return NULL;
}

static void thread_owner_gets_signal(void)
{
	CHECK_SYS(catch(SIGIO));
	pthread_t th;
	waiter_tid = 0;
	stop_waiter = 0;
	CHECK_EQ(pthread_create(&th, NULL, waiter_thread, NULL), 0);
	while (!__atomic_load_n(&waiter_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	int p[2];
	CHECK_SYS(pipe(p));
	struct f_owner_ex ex = {.type = F_OWNER_TID, .pid = waiter_tid};
	CHECK_SYS(fcntl(p[0], F_SETOWN_EX, &ex));
	CHECK_SYS(async_on(p[0]));
	CHECK_EQ(write(p[1], "a", 1), 1);
	for (int i = 0; i < 5000 && !hits; i++)
		usleep(1000);
	stop_waiter = 1;
	pthread_join(th, NULL);
	CHECK_EQ(hits, 1);
	CHECK_EQ(last_tid, waiter_tid);
}

static void process_group_owner(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(catch(SIGIO) == 0);
		CHILD_CHECK(setpgid(0, 0) == 0);
		CHILD_CHECK(fcntl(p[0], F_SETOWN, -getpid()) == 0);
		CHILD_CHECK(async_on(p[0]) == 0);
		CHILD_CHECK(write(p[1], "a", 1) == 1);
		CHILD_CHECK(hits == 1);
		CHILD_CHECK(last_signo == SIGIO);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void fifo_and_inotify_signal(void)
{
	ENTER();
	CHECK_SYS(catch(SIGIO));
	CHECK_SYS(mkfifo("fifo", 0600));
	int f = CHECK_SYS(open("fifo", O_RDWR | O_NONBLOCK));
	CHECK_SYS(fcntl(f, F_SETOWN, getpid()));
	CHECK_SYS(async_on(f));
	CHECK_EQ(write(f, "a", 1), 1);
	CHECK_GE(hits, 1);
	CHECK_SYS(close(f));

	CHECK_SYS(catch(SIGIO));
	int in = CHECK_SYS(inotify_init1(IN_NONBLOCK));
	CHECK_SYS(inotify_add_watch(in, ".", IN_CREATE));
	CHECK_SYS(fcntl(in, F_SETOWN, getpid()));
	CHECK_SYS(async_on(in));
	CHECK_EQ(hits, 0);
	CHECK_SYS(close(CHECK_SYS(open("new", O_CREAT | O_WRONLY, 0600))));
	CHECK_EQ(hits, 1);
}

static void eventfd_has_no_sigio(void)
{
	CHECK_SYS(catch(SIGIO));
	int e = CHECK_SYS(eventfd(0, 0));
	CHECK_SYS(fcntl(e, F_SETOWN, getpid()));
	CHECK_EQ(fcntl(e, F_GETOWN), getpid());
	/* F_SETFL drops the flag, FIOASYNC refuses it. */
	CHECK_SYS(async_on(e));
	CHECK_EQ(fcntl(e, F_GETFL) & O_ASYNC, 0);
	int on = 1;
	CHECK_ERR(ioctl(e, FIOASYNC, &on), ENOTTY);
	uint64_t v = 1;
	CHECK_EQ(write(e, &v, 8), 8);
	CHECK_EQ(hits, 0);
}

/* wait_hits waits up to 5 s for a signal: a terminal's input and output
 * reach the other side from a work queue on Linux. */
static int wait_hits(void)
{
	for (int i = 0; i < 5000 && !hits; i++)
		usleep(1000);
	return hits;
}

static void pty_signals_both_sides(void)
{
	int m = CHECK_SYS(posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK));
	CHECK_SYS(grantpt(m));
	CHECK_SYS(unlockpt(m));
	int s = CHECK_SYS(open(ptsname(m), O_RDWR | O_NOCTTY | O_NONBLOCK));
	CHECK_SYS(catch(SIGIO));
	CHECK_SYS(fcntl(m, F_SETOWN, getpid()));
	CHECK_SYS(async_on(m));
	CHECK(fcntl(m, F_GETFL) & O_ASYNC);
	CHECK_EQ(write(s, "out\n", 4), 4);
	CHECK_GE(wait_hits(), 1);
	CHECK_EQ(last_signo, SIGIO);
	/* Input: a whole line for the slave's canonical reader. */
	CHECK_SYS(fcntl(m, F_SETFL, O_NONBLOCK));
	CHECK_SYS(catch(SIGIO));
	CHECK_SYS(fcntl(s, F_SETOWN, getpid()));
	CHECK_SYS(async_on(s));
	CHECK_EQ(write(m, "in\n", 3), 3);
	CHECK_GE(wait_hits(), 1);
}

static void socket_owner_ioctls(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int pid = getpid();
	CHECK_ERR(ioctl(p[0], FIOSETOWN, &pid), ENOTTY);
	int s[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) < 0) {
		SKIP("socketpair: %s", mt_errname(errno));
		return;
	}
	CHECK_SYS(ioctl(s[0], FIOSETOWN, &pid));
	int got = 0;
	CHECK_SYS(ioctl(s[0], FIOGETOWN, &got));
	CHECK_EQ(got, pid);
	CHECK_EQ(fcntl(s[0], F_GETOWN), pid);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(setpgid(0, 0) == 0);
		int g = -getpid();
		CHILD_CHECK(ioctl(s[1], SIOCSPGRP, &g) == 0);
		int r = 0;
		CHILD_CHECK(ioctl(s[1], SIOCGPGRP, &r) == 0 && r == -getpid());
		CHILD_CHECK(fcntl(s[1], F_GETOWN) == -getpid());
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(owner_defaults_and_errors),
	MT_CASE(owner_round_trips),
	MT_CASE(pipe_write_signals_reader_owner),
	MT_CASE(setsig_fills_siginfo),
	MT_CASE(fioasync_toggles),
	MT_CASE(thread_owner_gets_signal),
	MT_CASE(process_group_owner),
	MT_CASE(fifo_and_inotify_signal),
	MT_CASE(eventfd_has_no_sigio),
	MT_CASE(pty_signals_both_sides),
	MT_CASE(socket_owner_ioctls),
};

MT_MAIN(cases)
