//go:build ignore

/* mqueue: POSIX message queues: mq_open (attributes, defaults, flags,
 * errors, permissions, limits), mq_timedsend and mq_timedreceive
 * (priority order, O_NONBLOCK, timeouts, size and access errors, a
 * blocked receiver woken), mq_notify (SIGEV_SIGNAL's siginfo, SIGEV_NONE,
 * EBUSY, unregistering, firing only on an empty queue), mq_getsetattr,
 * mq_unlink, poll on a queue, the QSIZE status line, the mqueue file
 * system mounted with mount(2), and /proc/sys/fs/mqueue. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MQUEUE_MAGIC 0x19800202

/* qname returns a queue name unique to this process and tag. */
static const char *qname(const char *tag)
{
	static char buf[4][64];
	static int i;
	char *b = buf[i++ % 4];
	snprintf(b, 64, "/moat-%s-%d", tag, (int)getpid());
	return b;
}

static mqd_t open_q(const char *name, int flags, long maxmsg, long msgsize)
{
	struct mq_attr a = { .mq_maxmsg = maxmsg, .mq_msgsize = msgsize };
	return mq_open(name, flags | O_CREAT, 0600, &a);
}

/* deadline returns CLOCK_REALTIME now plus ms. */
static struct timespec deadline(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static void send_receive_attrs(void)
{
	const char *n = qname("basic");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR | O_CLOEXEC, 4, 64));
	CHECK_EQ(fcntl(q, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	struct mq_attr a;
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_maxmsg, 4);
	CHECK_EQ(a.mq_msgsize, 64);
	CHECK_EQ(a.mq_curmsgs, 0);
	CHECK_EQ(a.mq_flags, 0);
	CHECK_SYS(mq_send(q, "hello", 5, 7));
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_curmsgs, 1);
	char buf[64];
	unsigned prio = 0;
	CHECK_EQ(mq_receive(q, buf, sizeof buf, &prio), 5);
	CHECK_EQ(prio, 7);
	CHECK_MEMEQ(buf, "hello", 5);
	CHECK_SYS(mq_send(q, "", 0, 0));
	CHECK_EQ(mq_receive(q, buf, sizeof buf, NULL), 0);
	CHECK_SYS(mq_close(q));
	CHECK_SYS(mq_unlink(n));
}

static void priority_order(void)
{
	const char *n = qname("prio");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 8, 16));
	CHECK_SYS(mq_unlink(n));
	const char *msgs[] = { "a", "b", "c", "d", "e" };
	unsigned prios[] = { 1, 5, 1, 3, 32767 };
	for (int i = 0; i < 5; i++)
		CHECK_SYS(mq_send(q, msgs[i], 1, prios[i]));
	const char *want = "ebdac";
	unsigned wantp[] = { 32767, 5, 3, 1, 1 };
	for (int i = 0; i < 5; i++) {
		char buf[16];
		unsigned p;
		CHECK_EQ(mq_receive(q, buf, sizeof buf, &p), 1);
		CHECK_EQ(buf[0], want[i]);
		CHECK_EQ(p, wantp[i]);
	}
	CHECK_ERR(mq_send(q, "x", 1, 32768), EINVAL);
}

static void default_attrs(void)
{
	const char *n = qname("defaults");
	mqd_t q = CHECK_SYS(mq_open(n, O_RDONLY | O_CREAT | O_EXCL, 0640, NULL));
	struct mq_attr a;
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_maxmsg, 10);
	CHECK_EQ(a.mq_msgsize, 8192);
	/* The attributes only matter when the queue is made. */
	struct mq_attr other = { .mq_maxmsg = 2, .mq_msgsize = 2 };
	mqd_t q2 = CHECK_SYS(mq_open(n, O_WRONLY | O_CREAT, 0600, &other));
	CHECK_SYS(mq_getattr(q2, &a));
	CHECK_EQ(a.mq_maxmsg, 10);
	CHECK_SYS(mq_unlink(n));
}

static void open_errors(void)
{
	const char *n = qname("errs");
	CHECK_ERR(mq_open(n, O_RDWR), ENOENT);
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	CHECK_ERR(open_q(n, O_RDWR | O_EXCL, 2, 8), EEXIST);
	CHECK_ERR(mq_open(n, O_RDWR | O_WRONLY), EINVAL);
	/* The raw syscall takes the name without its leading slash. */
	CHECK_ERR(syscall(SYS_mq_open, "a/b", O_RDWR | O_CREAT, 0600, NULL), EACCES);
	CHECK_ERR(syscall(SYS_mq_open, "", O_RDWR | O_CREAT, 0600, NULL), ENOENT);
	CHECK_ERR(syscall(SYS_mq_open, "..", O_RDWR | O_CREAT, 0600, NULL), EACCES);
	char longname[300];
	longname[0] = '/';
	memset(longname + 1, 'x', 256);
	longname[257] = 0;
	CHECK_ERR(mq_open(longname, O_RDWR | O_CREAT, 0600, NULL), ENAMETOOLONG);
	CHECK_ERR(open_q(qname("zero"), O_RDWR, 0, 8), EINVAL);
	CHECK_ERR(open_q(qname("neg"), O_RDWR, 2, -1), EINVAL);
	CHECK_ERR(mq_unlink(qname("missing")), ENOENT);
	CHECK_ERR(syscall(SYS_mq_unlink, "a/b"), EACCES);
	CHECK_SYS(mq_close(q));
	CHECK_SYS(mq_unlink(n));
}

static void user_limits_and_permissions(void)
{
	const char *n = qname("perm");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	struct stat st;
	CHECK_SYS(fstat(q, &st));
	CHECK_EQ(st.st_mode, S_IFREG | 0600);
	AS_USER({
		CHILD_ERR(mq_open(n, O_RDONLY), EACCES);
		/* The sticky directory refuses with EPERM, which glibc's
		 * mq_unlink reports as EACCES. */
		CHILD_ERR(syscall(SYS_mq_unlink, n + 1), EPERM);
		CHILD_ERR(mq_unlink(n), EACCES);
		/* Without CAP_SYS_RESOURCE, msg_max and msgsize_max bind. */
		CHILD_ERR(open_q(qname("big"), O_RDWR, 11, 8), EINVAL);
		CHILD_ERR(open_q(qname("big"), O_RDWR, 1, 8193), EINVAL);
		mqd_t u = open_q(qname("u"), O_RDWR, 10, 8192);
		CHILD_CHECK(u >= 0);
		CHILD_CHECK(mq_unlink(qname("u")) == 0);
	});
	CHECK_SYS(mq_unlink(n));
}

static void rlimit_msgqueue(void)
{
	/* In a child: the runner does not restore resource limits. */
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		struct rlimit rl = { 50000, 50000 };
		CHILD_CHECK(setrlimit(RLIMIT_MSGQUEUE, &rl) == 0);
		CHILD_ERR(open_q(qname("rl"), O_RDWR, 10, 8192), EMFILE);
		mqd_t q = open_q(qname("rl"), O_RDWR, 2, 1024);
		CHILD_CHECK(q >= 0);
		CHILD_CHECK(mq_unlink(qname("rl")) == 0);
		_exit(0);
	}
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
}

static void nonblock_and_setattr(void)
{
	const char *n = qname("nb");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR | O_NONBLOCK, 2, 8));
	CHECK_SYS(mq_unlink(n));
	char buf[8];
	CHECK_ERR(mq_receive(q, buf, sizeof buf, NULL), EAGAIN);
	CHECK_SYS(mq_send(q, "1", 1, 0));
	CHECK_SYS(mq_send(q, "2", 1, 0));
	CHECK_ERR(mq_send(q, "3", 1, 0), EAGAIN);
	struct mq_attr a, old;
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_flags, O_NONBLOCK);
	CHECK_EQ(a.mq_curmsgs, 2);
	a.mq_flags = 0;
	a.mq_maxmsg = 99; /* ignored */
	CHECK_SYS(mq_setattr(q, &a, &old));
	CHECK_EQ(old.mq_flags, O_NONBLOCK);
	CHECK_EQ(old.mq_maxmsg, 2);
	CHECK_EQ(fcntl(q, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_maxmsg, 2);
	CHECK_EQ(a.mq_flags, 0);
	a.mq_flags = O_APPEND;
	CHECK_ERR(mq_setattr(q, &a, NULL), EINVAL);
	/* F_SETFL changes what mq_getattr reports too. */
	CHECK_SYS(fcntl(q, F_SETFL, O_NONBLOCK));
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_flags, O_NONBLOCK);
}

static void timeouts(void)
{
	const char *n = qname("timeout");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 1, 8));
	CHECK_SYS(mq_unlink(n));
	char buf[8];
	struct timespec ts = deadline(50);
	int64_t t0 = mt_now_ns();
	CHECK_ERR(mq_timedreceive(q, buf, sizeof buf, NULL, &ts), ETIMEDOUT);
	CHECK_GE(mt_now_ns() - t0, 30 * 1000000LL);
	CHECK_SYS(mq_send(q, "x", 1, 0));
	struct timespec past = { 1, 0 };
	CHECK_ERR(mq_timedsend(q, "y", 1, 0, &past), ETIMEDOUT);
	struct timespec bad = { 0, 1000000000L };
	CHECK_ERR(mq_timedsend(q, "y", 1, 0, &bad), EINVAL);
	/* A message that is there is taken whatever the deadline. */
	CHECK_EQ(mq_timedreceive(q, buf, sizeof buf, NULL, &past), 1);
}

static void size_and_access_errors(void)
{
	const char *n = qname("size");
	mqd_t q = CHECK_SYS(open_q(n, O_WRONLY, 2, 16));
	mqd_t r = CHECK_SYS(mq_open(n, O_RDONLY));
	CHECK_SYS(mq_unlink(n));
	char buf[64] = { 0 };
	CHECK_ERR(mq_send(q, buf, 17, 0), EMSGSIZE);
	CHECK_ERR(mq_send(r, buf, 1, 0), EBADF);
	CHECK_ERR(mq_receive(q, buf, sizeof buf, NULL), EBADF);
	CHECK_SYS(mq_send(q, buf, 16, 0));
	CHECK_ERR(mq_receive(r, buf, 15, NULL), EMSGSIZE);
	CHECK_EQ(mq_receive(r, buf, 16, NULL), 16);
	int p[2];
	CHECK_SYS(pipe(p));
	struct mq_attr a;
	CHECK_ERR(mq_send(p[1], "x", 1, 0), EBADF);
	CHECK_ERR(mq_getattr(p[0], &a), EBADF);
	CHECK_ERR(mq_getattr(99, &a), EBADF);
}

static void *receiver(void *arg)
{
	mqd_t q = *(mqd_t *)arg;
	static char buf[8];
	static long got;
	got = mq_receive(q, buf, sizeof buf, NULL);
	return &got;
}

static void blocked_receiver_woken(void)
{
	const char *n = qname("block");
	static mqd_t q;
	q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	CHECK_SYS(mq_unlink(n));
	static pid_t tid;
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, receiver, &q));
	/* Find the thread's id: the other entry of /proc/self/task. */
	for (int i = 0; i < 200 && !tid; i++) {
		char path[64];
		for (pid_t t = getpid() + 1; t < getpid() + 64; t++) {
			snprintf(path, sizeof path, "/proc/self/task/%d", t);
			if (access(path, F_OK) == 0) {
				tid = t;
				break;
			}
		}
		if (!tid)
			usleep(5000);
	}
	CHECK_NE(tid, 0);
	CHECK_SYS(mt_wait_blocked(tid, 5000));
	CHECK_SYS(mq_send(q, "wake", 4, 0));
	void *res;
	CHECK_RET0(pthread_join(th, &res));
	CHECK_EQ(*(long *)res, 4);
}

static void notify_signal(void)
{
	const char *n = qname("notify");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 4, 8));
	CHECK_SYS(mq_unlink(n));
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &set, NULL));
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	ev.sigev_value.sival_int = 42;
	CHECK_SYS(mq_notify(q, &ev));
	CHECK_ERR(mq_notify(q, &ev), EBUSY);
	CHECK_SYS(mq_send(q, "m", 1, 0));
	struct timespec zero = { 5, 0 };
	siginfo_t si;
	CHECK_EQ(sigtimedwait(&set, &si, &zero), SIGUSR1);
	CHECK_EQ(si.si_code, SI_MESGQ);
	CHECK_EQ(si.si_value.sival_int, 42);
	CHECK_EQ(si.si_pid, getpid());
	CHECK_EQ(si.si_uid, getuid());
	/* The registration is gone once used. */
	CHECK_SYS(mq_notify(q, &ev));
	/* A message into a non-empty queue notifies nobody. */
	CHECK_SYS(mq_send(q, "n", 1, 0));
	struct timespec none = { 0, 0 };
	CHECK_ERR(sigtimedwait(&set, &si, &none), EAGAIN);
	char buf[8];
	CHECK_SYS(mq_receive(q, buf, sizeof buf, NULL));
	CHECK_SYS(mq_receive(q, buf, sizeof buf, NULL));
	CHECK_SYS(mq_send(q, "o", 1, 0));
	CHECK_EQ(sigtimedwait(&set, &si, &zero), SIGUSR1);
	struct sigevent bad = { .sigev_notify = 77 };
	CHECK_ERR(mq_notify(q, &bad), EINVAL);
	bad.sigev_notify = SIGEV_SIGNAL;
	bad.sigev_signo = 65;
	CHECK_ERR(mq_notify(q, &bad), EINVAL);
	CHECK_ERR(mq_notify(99, &ev), EBADF);
}

static int read_status(int fd, char *buf, size_t n)
{
	ssize_t r = pread(fd, buf, n - 1, 0);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return (int)r;
}

static void notify_none_status_line(void)
{
	const char *n = qname("status");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 4, 64));
	CHECK_SYS(mq_unlink(n));
	char buf[128], want[128];
	CHECK_SYS(read_status(q, buf, sizeof buf));
	CHECK_STREQ(buf, "QSIZE:0          NOTIFY:0     SIGNO:0     NOTIFY_PID:0     \n");
	CHECK_SYS(mq_send(q, "12345", 5, 0));
	CHECK_SYS(mq_send(q, "123", 3, 9));
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	CHECK_SYS(mq_notify(q, &ev));
	CHECK_SYS(read_status(q, buf, sizeof buf));
	snprintf(want, sizeof want, "QSIZE:8          NOTIFY:1     SIGNO:0     NOTIFY_PID:%-6d\n", (int)getpid());
	CHECK_STREQ(buf, want);
	CHECK_SYS(mq_notify(q, NULL));
	struct sigevent sig = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
	CHECK_SYS(mq_notify(q, &sig));
	CHECK_SYS(read_status(q, buf, sizeof buf));
	snprintf(want, sizeof want, "QSIZE:8          NOTIFY:0     SIGNO:%-5d NOTIFY_PID:%-6d\n", SIGUSR2, (int)getpid());
	CHECK_STREQ(buf, want);
	/* Unregistering is the owner's: a child's mq_notify(NULL) does
	 * nothing, and its registration attempt is EBUSY. */
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(mq_notify(q, NULL) == 0);
		CHILD_ERR(mq_notify(q, &sig), EBUSY);
		_exit(0);
	}
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	CHECK_SYS(mq_notify(q, NULL));
	CHECK_SYS(read_status(q, buf, sizeof buf));
	CHECK_STREQ(buf, "QSIZE:8          NOTIFY:0     SIGNO:0     NOTIFY_PID:0     \n");
	/* The owner's close of any descriptor of the queue unregisters. */
	CHECK_SYS(mq_notify(q, &ev));
	int dup = CHECK_SYS(fcntl(q, F_DUPFD_CLOEXEC, 0));
	CHECK_SYS(close(dup));
	CHECK_SYS(read_status(q, buf, sizeof buf));
	CHECK_STREQ(buf, "QSIZE:8          NOTIFY:0     SIGNO:0     NOTIFY_PID:0     \n");
	CHECK_ERR(write(q, "x", 1), EINVAL);
	struct stat s;
	CHECK_SYS(fstat(q, &s));
	CHECK_EQ(s.st_size, 80);
}

static void poll_readiness(void)
{
	const char *n = qname("poll");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	CHECK_SYS(mq_unlink(n));
	struct pollfd p = { .fd = q, .events = POLLIN | POLLOUT };
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLOUT);
	CHECK_SYS(mq_send(q, "a", 1, 0));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN | POLLOUT);
	CHECK_SYS(mq_send(q, "b", 1, 0));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN);
	p.events = POLLOUT;
	CHECK_EQ(poll(&p, 1, 0), 0);
}

static void unlink_while_open(void)
{
	const char *n = qname("unlink");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	CHECK_SYS(mq_send(q, "kept", 4, 0));
	CHECK_SYS(mq_unlink(n));
	CHECK_ERR(mq_unlink(n), ENOENT);
	CHECK_ERR(mq_open(n, O_RDWR), ENOENT);
	/* A new queue of the same name is another queue. */
	mqd_t q2 = CHECK_SYS(open_q(n, O_RDWR | O_EXCL, 2, 8));
	struct mq_attr a;
	CHECK_SYS(mq_getattr(q2, &a));
	CHECK_EQ(a.mq_curmsgs, 0);
	char buf[8];
	CHECK_EQ(mq_receive(q, buf, sizeof buf, NULL), 4);
	CHECK_SYS(mq_unlink(n));
}

static void mounted_filesystem(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mount("mqueue", "m", "mqueue", 0, NULL));
	struct statfs sfs;
	CHECK_SYS(statfs("m", &sfs));
	CHECK_EQ(sfs.f_type, MQUEUE_MAGIC);
	struct stat st;
	CHECK_SYS(stat("m", &st));
	CHECK_EQ(st.st_mode, S_IFDIR | S_ISVTX | 0777);
	const char *n = qname("mnt");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 3, 32));
	CHECK_SYS(mq_send(q, "abc", 3, 0));
	char path[128], buf[128];
	snprintf(path, sizeof path, "m%s", n);
	CHECK_SYS(stat(path, &st));
	CHECK_EQ(st.st_mode, S_IFREG | 0600);
	CHECK_EQ(st.st_size, 80);
	int fd = CHECK_SYS(open(path, O_RDONLY));
	CHECK_SYS(read_status(fd, buf, sizeof buf));
	CHECK_STREQ(buf, "QSIZE:3          NOTIFY:0     SIGNO:0     NOTIFY_PID:0     \n");
	/* The file is the queue: mq_receive works on it. */
	CHECK_EQ(mq_receive(fd, buf, sizeof buf, NULL), 3);
	close(fd);
	/* open(O_CREAT) there makes a queue with the default attributes. */
	CHECK_SYS(close(CHECK_SYS(open("m/fromopen", O_RDWR | O_CREAT, 0644))));
	mqd_t q2 = CHECK_SYS(mq_open("/fromopen", O_RDWR));
	struct mq_attr a;
	CHECK_SYS(mq_getattr(q2, &a));
	CHECK_EQ(a.mq_maxmsg, 10);
	CHECK_EQ(a.mq_msgsize, 8192);
	CHECK_ERR(mkdir("m/d", 0755), EPERM);
	CHECK_ERR(mknod("m/fifo", S_IFIFO | 0644, 0), EPERM);
	CHECK_ERR(symlink("x", "m/l"), EPERM);
	CHECK_SYS(unlink("m/fromopen"));
	CHECK_ERR(mq_open("/fromopen", O_RDWR), ENOENT);
	CHECK_SYS(mq_unlink(n));
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_SYS(umount2("m", 0));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* receive_after_alarm blocks in mq_receive on q until SIGALRM comes from
 * a timer 50 ms away, with or without SA_RESTART, and returns what
 * mq_receive gave (errno in *err). With SA_RESTART the receive goes on,
 * so a child sends a message 300 ms on to end it. */
static long receive_after_alarm(mqd_t q, int flags, int *err)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = flags };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	pid_t c = -1;
	if (flags & SA_RESTART) {
		c = fork();
		if (c == 0) {
			usleep(300 * 1000);
			mq_send(q, "late", 4, 0);
			_exit(0);
		}
	}
	struct itimerval it = { .it_value = { 0, 50 * 1000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	char buf[8];
	errno = 0;
	long r = mq_receive(q, buf, sizeof buf, NULL);
	*err = errno;
	if (c > 0)
		mt_wait(c);
	return r;
}

static void signal_interrupts_or_restarts(void)
{
	const char *n = qname("sig");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	CHECK_SYS(mq_unlink(n));
	int err;
	CHECK_EQ(receive_after_alarm(q, 0, &err), -1);
	CHECK_EQ(err, EINTR);
	CHECK_EQ(receive_after_alarm(q, SA_RESTART, &err), 4);
}

static void fork_shares_queue(void)
{
	const char *n = qname("fork");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 4, 16));
	CHECK_SYS(mq_unlink(n));
	int go[2];
	CHECK_SYS(pipe(go));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(mq_send(q, "from child", 10, 3) == 0);
		/* Wait for the parent's turn: it takes ours, then sends. */
		char b;
		CHILD_CHECK(read(go[0], &b, 1) == 1);
		char buf[16];
		unsigned p;
		CHILD_CHECK(mq_receive(q, buf, sizeof buf, &p) == 11 && p == 9);
		_exit(0);
	}
	char buf[16];
	unsigned p;
	CHECK_EQ(mq_receive(q, buf, sizeof buf, &p), 10);
	CHECK_MEMEQ(buf, "from child", 10);
	CHECK_EQ(p, 3);
	CHECK_SYS(mq_send(q, "from parent", 11, 9));
	CHECK_EQ(write(go[1], "g", 1), 1);
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	close(go[0]);
	close(go[1]);
}

static void epoll_wakes_on_send(void)
{
	const char *n = qname("epoll");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 1, 8));
	CHECK_SYS(mq_unlink(n));
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 };
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev));
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		usleep(50 * 1000);
		CHILD_CHECK(mq_send(q, "e", 1, 0) == 0);
		_exit(0);
	}
	CHECK_EQ(epoll_wait(ep, &ev, 1, 10000), 1);
	CHECK_EQ(ev.data.u32, 7);
	CHECK_EQ(ev.events, EPOLLIN);
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	close(ep);
}

static void ipc_namespace_isolates(void)
{
	const char *n = qname("ipcns");
	mqd_t q = CHECK_SYS(open_q(n, O_RDWR, 2, 8));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		CHILD_CHECK(unshare(CLONE_NEWIPC) == 0);
		/* A new IPC namespace has queues of its own. */
		CHILD_ERR(mq_open(n, O_RDWR), ENOENT);
		mqd_t mine = open_q(n, O_RDWR | O_EXCL, 1, 4);
		CHILD_CHECK(mine >= 0);
		CHILD_CHECK(mq_send(mine, "c", 1, 0) == 0);
		/* A descriptor from before still reaches the old queue. */
		CHILD_CHECK(mq_send(q, "p", 1, 0) == 0);
		_exit(0);
	}
	int st = mt_wait(c);
	CHECK_EXITED(st, 0);
	struct mq_attr a;
	CHECK_SYS(mq_getattr(q, &a));
	CHECK_EQ(a.mq_curmsgs, 1);
	CHECK_EQ(a.mq_msgsize, 8);
	CHECK_SYS(mq_unlink(n));
}

static void proc_sys_limits(void)
{
	static const struct {
		const char *file, *want;
	} files[] = {
		{ "msg_max", "10\n" },
		{ "msgsize_max", "8192\n" },
		{ "msg_default", "10\n" },
		{ "msgsize_default", "8192\n" },
		{ "queues_max", "256\n" },
	};
	for (size_t i = 0; i < MT_NCASES(files); i++) {
		char path[128], buf[32];
		snprintf(path, sizeof path, "/proc/sys/fs/mqueue/%s", files[i].file);
		int fd = CHECK_SYS(open(path, O_RDONLY));
		ssize_t r = CHECK_SYS(read(fd, buf, sizeof buf - 1));
		buf[r] = 0;
		close(fd);
		CHECK_STREQ(buf, files[i].want);
	}
}

static const struct mt_case cases[] = {
	MT_CASE(send_receive_attrs),
	MT_CASE(priority_order),
	MT_CASE(default_attrs),
	MT_CASE(open_errors),
	MT_CASE(user_limits_and_permissions),
	MT_CASE(rlimit_msgqueue),
	MT_CASE(nonblock_and_setattr),
	MT_CASE(timeouts),
	MT_CASE(size_and_access_errors),
	MT_CASE(blocked_receiver_woken),
	MT_CASE(notify_signal),
	MT_CASE(notify_none_status_line),
	MT_CASE(poll_readiness),
	MT_CASE(unlink_while_open),
	MT_CASE(mounted_filesystem),
	MT_CASE(signal_interrupts_or_restarts),
	MT_CASE(fork_shares_queue),
	MT_CASE(epoll_wakes_on_send),
	MT_CASE(ipc_namespace_isolates),
	MT_CASE(proc_sys_limits),
};

MT_MAIN(cases)
