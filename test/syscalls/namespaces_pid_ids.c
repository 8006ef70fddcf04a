//go:build ignore

/* namespaces_pid_ids: ids that cross PID namespaces as the caller's (or
 * receiver's) namespace numbers them: PI futex words and their owner
 * lookups, robust-list cleanup at a thread's death, the CLONE_*_SETTID
 * words; terminal job-control ids (TIOCGPGRP, TIOCSPGRP, TIOCGSID);
 * SCM_CREDENTIALS and SO_PEERCRED pids; SysV shm creator and last pids;
 * a message queue notification's sender pid. Each case runs a child as
 * the init of a new PID namespace and checks from both sides. */
#include "moattest.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <stddef.h>
#include <termios.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static char *new_stack(void)
{
	void *p = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : (char *)p + STACK_SIZE;
}

/* spawn_ns runs fn(arg) as the init of a new PID namespace. */
static pid_t spawn_ns(int (*fn)(void *), void *arg)
{
	char *stk = new_stack();
	if (stk == NULL)
		return -1;
	return clone(fn, stk, CLONE_NEWPID | SIGCHLD, arg);
}

static long futex_op(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

/* ---- futexes ---- */

struct pi_args {
	pid_t outside; /* a live process of the parent's namespace only */
	uint32_t *shared; /* a word in MAP_SHARED memory */
};

static uint32_t pi_word;
static volatile pid_t pi_waiter_tid;
static volatile uint32_t pi_seen;

static void *pi_waiter(void *arg)
{
	(void)arg;
	pi_waiter_tid = gettid_();
	if (futex_op(&pi_word, FUTEX_LOCK_PI_PRIVATE, 0) != 0)
		return (void *)1;
	pi_seen = __atomic_load_n(&pi_word, __ATOMIC_SEQ_CST);
	futex_op(&pi_word, FUTEX_UNLOCK_PI_PRIVATE, 0);
	return NULL;
}

static int pi_child(void *arg)
{
	struct pi_args *a = arg;
	uint32_t w = 0;
	if (futex_op(&w, FUTEX_LOCK_PI_PRIVATE, 0) != 0)
		return 2;
	if (w != 1) /* our tid here */
		return 3;
	if (futex_op(&w, FUTEX_TRYLOCK_PI_PRIVATE, 0) != -1 || errno != EDEADLK)
		return 4;
	if (futex_op(&w, FUTEX_UNLOCK_PI_PRIVATE, 0) != 0 || w != 0)
		return 5;
	/* A word naming a tid of the parent's namespace only names nobody
	 * here. */
	*a->shared = (uint32_t)a->outside;
	if (futex_op(a->shared, FUTEX_TRYLOCK_PI, 0) != -1 || errno != ESRCH)
		return 6;
	/* Our own tid in the parent's namespace is not ours here. */
	w = 1;
	if (futex_op(&w, FUTEX_UNLOCK_PI_PRIVATE, 0) != 0)
		return 7;

	/* Contended: the unlock hands the lock to the waiter under its tid
	 * here, with FUTEX_WAITERS. */
	pi_word = 1;
	pthread_t th;
	if (pthread_create(&th, NULL, pi_waiter, NULL) != 0)
		return 8;
	for (int i = 0; i < 20000 && !(__atomic_load_n(&pi_word, __ATOMIC_SEQ_CST) & FUTEX_WAITERS); i++)
		usleep(500);
	if (!(pi_word & FUTEX_WAITERS))
		return 9;
	if (futex_op(&pi_word, FUTEX_UNLOCK_PI_PRIVATE, 0) != 0)
		return 10;
	void *ret;
	if (pthread_join(th, &ret) != 0 || ret != NULL)
		return 11;
	if (pi_waiter_tid != 2)
		return 12;
	if (pi_seen != (2 | FUTEX_WAITERS))
		return 13;
	if (pi_word != 0)
		return 14;
	return 0;
}

static void pi_futex_words_hold_namespace_tids(void)
{
	pid_t sleeper = CHECK_SYS(fork());
	if (sleeper == 0) {
		for (;;)
			pause();
	}
	/* Here the sleeper is a live owner (of a shared futex: Linux 6.18
	 * refuses a private one whose owner is another process, EPERM). */
	uint32_t *sw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK_MAP(sw);
	*sw = (uint32_t)sleeper;
	long r = futex_op(sw, FUTEX_TRYLOCK_PI, 0);
	int e = errno;
	struct pi_args a = {.outside = sleeper, .shared = sw};
	pid_t p = spawn_ns(pi_child, &a);
	int st = p > 0 ? mt_wait(p) : -1;
	kill(sleeper, SIGKILL);
	mt_wait(sleeper);
	munmap(sw, 4096);
	CHECK_EQ(r, -1);
	CHECK_EQ(e, EAGAIN);
	CHECK_SYS(p);
	CHECK_EXITED(st, 0);
}

static pthread_mutex_t robust_mu;

static void *robust_holder(void *arg)
{
	(void)arg;
	if (pthread_mutex_lock(&robust_mu) != 0)
		return (void *)1;
	return NULL; /* dies holding it */
}

static int robust_child(void *arg)
{
	int pi = *(int *)arg;
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	if (pi)
		pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
	if (pthread_mutex_init(&robust_mu, &at) != 0)
		return 2;
	pthread_t th;
	void *ret;
	if (pthread_create(&th, NULL, robust_holder, NULL) != 0)
		return 3;
	if (pthread_join(th, &ret) != 0 || ret != NULL)
		return 4;
	/* The dying thread's robust list named it by its tid here. */
	int r = pthread_mutex_trylock(&robust_mu);
	if (r != EOWNERDEAD)
		return 10 + (r > 80 ? 80 : r);
	if (pthread_mutex_consistent(&robust_mu) != 0)
		return 5;
	if (pthread_mutex_unlock(&robust_mu) != 0)
		return 6;
	return 0;
}

static void robust_list_cleanup_uses_namespace_tid(void)
{
	for (int pi = 0; pi < 2; pi++) {
		int arg = pi;
		pid_t p = CHECK_SYS(spawn_ns(robust_child, &arg));
		CHECK_EXITED(mt_wait(p), 0);
	}
}

static uint32_t settid_child_word;

static int settid_child(void *arg)
{
	(void)arg;
	if (settid_child_word != 1)
		return 2;
	uint32_t w;
	if (syscall(SYS_set_tid_address, &w) != 1)
		return 3;
	return 0;
}

static void clone_settid_words_per_namespace(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t ptid = 0;
	settid_child_word = 0;
	pid_t p = CHECK_SYS(clone(settid_child, stk,
				  CLONE_NEWPID | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | SIGCHLD,
				  NULL, &ptid, NULL, &settid_child_word));
	int st = mt_wait(p);
	CHECK_EQ(ptid, p);
	CHECK_EQ(settid_child_word, 0); /* written in the child's copy only */
	CHECK_EXITED(st, 0);
}

/* ---- terminals ---- */

struct tty_args {
	int master;
	int ready;   /* write end: the child reports its checks done */
	int release; /* read end: the parent lets it exit */
	int other[2]; /* the parent's ends, closed in the child */
};

struct tty_gc_args {
	int fd;
	int ready[2];   /* the grandchild writes a byte when its checks are done */
	int release[2]; /* and waits for EOF here before exiting */
};

static int tty_grandchild(void *arg)
{
	struct tty_gc_args *ga = arg;
	int fd = ga->fd;
	close(ga->ready[0]);
	close(ga->release[1]);
	int v = -1;
	/* The foreground group and the session are the parent
	 * namespace's: not visible here. */
	if (ioctl(fd, TIOCGPGRP, &v) != 0 || v != 0)
		return 2;
	v = -1;
	if (ioctl(fd, TIOCGSID, &v) != 0 || v != 0)
		return 3;
	if (getpgrp() != 0 || getsid(0) != 0)
		return 4;
	v = 0;
	if (ioctl(fd, TIOCSPGRP, &v) != -1 || errno != ESRCH)
		return 5;
	v = 7;
	if (ioctl(fd, TIOCSPGRP, &v) != -1 || errno != ESRCH)
		return 6;
	/* A group of our own is visible, and in the terminal's session. */
	if (setpgid(0, 0) != 0 || getpgrp() != 1)
		return 7;
	v = 1;
	if (ioctl(fd, TIOCSPGRP, &v) != 0)
		return 8;
	v = -1;
	if (ioctl(fd, TIOCGPGRP, &v) != 0 || v != 1)
		return 9;
	/* Stay, so that the group lives while the parent looks at it. */
	char c;
	if (write(ga->ready[1], "g", 1) != 1 || read(ga->release[0], &c, 1) < 0)
		return 10;
	return 0;
}

static int tty_child(void *arg)
{
	struct tty_args *a = arg;
	close(a->other[0]);
	close(a->other[1]);
	if (setsid() != 1)
		return 2;
	char *name = ptsname(a->master);
	if (name == NULL)
		return 3;
	int fd = open(name, O_RDWR); /* becomes the controlling terminal */
	if (fd < 0)
		return 4;
	int v = -1;
	if (ioctl(fd, TIOCGPGRP, &v) != 0 || v != 1)
		return 5;
	v = -1;
	if (ioctl(fd, TIOCGSID, &v) != 0 || v != 1)
		return 6;
	signal(SIGTTOU, SIG_IGN);
	char *stk = new_stack();
	if (stk == NULL)
		return 7;
	struct tty_gc_args ga = {.fd = fd};
	if (pipe(ga.ready) != 0 || pipe(ga.release) != 0)
		return 8;
	pid_t g = clone(tty_grandchild, stk, CLONE_NEWPID | SIGCHLD, &ga);
	if (g < 0)
		return 8;
	close(ga.ready[1]);
	close(ga.release[0]);
	char gc;
	ssize_t gn = read(ga.ready[0], &gc, 1);
	/* The grandchild's group, named as this namespace numbers it. */
	v = -1;
	int gr = ioctl(fd, TIOCGPGRP, &v);
	close(ga.release[1]);
	int st;
	if (waitpid(g, &st, 0) != g)
		return 9;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 20 + (WIFEXITED(st) ? WEXITSTATUS(st) : 30);
	if (gn != 1 || gr != 0 || v != g)
		return 10;
	v = 1;
	if (ioctl(fd, TIOCSPGRP, &v) != 0)
		return 11;
	if (write(a->ready, "r", 1) != 1)
		return 12;
	char c;
	if (read(a->release, &c, 1) < 0) /* EOF: released */
		return 13;
	return 0;
}

static void tty_job_ids_per_namespace(void)
{
	int m = CHECK_SYS(posix_openpt(O_RDWR | O_NOCTTY));
	CHECK_SYS(grantpt(m));
	CHECK_SYS(unlockpt(m));
	int r[2], l[2];
	CHECK_SYS(pipe(r));
	CHECK_SYS(pipe(l));
	struct tty_args a = {.master = m, .ready = r[1], .release = l[0], .other = {r[0], l[1]}};
	pid_t p = CHECK_SYS(spawn_ns(tty_child, &a));
	close(r[1]);
	close(l[0]);
	char c = 0;
	ssize_t n = mt_read_n(r[0], &c, 1, 10000);
	int pg = -1, sid = -1;
	int e1 = ioctl(m, TIOCGPGRP, &pg);
	int e2 = ioctl(m, TIOCGSID, &sid);
	close(l[1]);
	int st = mt_wait(p);
	close(r[0]);
	close(m);
	CHECK_EXITED(st, 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(e1, 0);
	CHECK_EQ(e2, 0);
	CHECK_EQ(pg, p);
	CHECK_EQ(sid, p);
}

/* ---- unix sockets ---- */

/* send_creds sends one byte with SCM_CREDENTIALS {pid, our uid/gid}. */
static ssize_t send_creds(int fd, pid_t pid)
{
	char b = 'x';
	struct iovec iov = {.iov_base = &b, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(struct ucred));
	struct ucred cr = {.pid = pid, .uid = getuid(), .gid = getgid()};
	memcpy(CMSG_DATA(c), &cr, sizeof(cr));
	return sendmsg(fd, &m, MSG_NOSIGNAL);
}

/* recv_creds receives one byte and returns the pid of its credentials,
 * -1 on error or without them. */
static pid_t recv_creds(int fd)
{
	char b;
	struct iovec iov = {.iov_base = &b, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	if (recvmsg(fd, &m, 0) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS)
		return -1;
	struct ucred cr;
	memcpy(&cr, CMSG_DATA(c), sizeof(cr));
	return cr.pid;
}

static pid_t peer_pid(int fd)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0)
		return -1;
	return cr.pid;
}

struct scm_args {
	int fd;    /* our end of the parent's socketpair */
	int other; /* the parent's end */
	char name[32]; /* abstract name the parent listens on */
};

static int scm_child(void *arg)
{
	struct scm_args *a = arg;
	close(a->other);
	/* The pair's creator (the parent) is not visible here. */
	if (peer_pid(a->fd) != 0)
		return 2;
	/* A pid that names nobody here is ESRCH, even with CAP_SYS_ADMIN;
	 * our own is fine. */
	if (send_creds(a->fd, 4000000) != -1 || errno != ESRCH)
		return 3;
	if (send_creds(a->fd, 1) != 1)
		return 4;
	/* The parent's message: its pid means nothing here. */
	if (recv_creds(a->fd) != 0)
		return 5;
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c < 0)
		return 6;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path + 1, a->name, strlen(a->name));
	if (connect(c, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a->name)) != 0)
		return 7;
	if (peer_pid(c) != 0)
		return 8;
	char b;
	if (read(c, &b, 1) < 0) /* EOF once the parent is done */
		return 9;
	return 0;
}

static void unix_cred_pids_per_namespace(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int one = 1;
	CHECK_SYS(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)));
	CHECK_SYS(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)));
	int l = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct scm_args a = {.fd = sv[1], .other = sv[0]};
	snprintf(a.name, sizeof(a.name), "moat-nsids-%d", getpid());
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path + 1, a.name, strlen(a.name));
	CHECK_SYS(bind(l, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.name)));
	CHECK_SYS(listen(l, 1));
	pid_t p = CHECK_SYS(spawn_ns(scm_child, &a));
	close(sv[1]);
	pid_t got = recv_creds(sv[0]);
	ssize_t sent = send_creds(sv[0], getpid());
	/* Accept only once the child connects: it may have failed. */
	struct pollfd pfd = {.fd = l, .events = POLLIN};
	int c = poll(&pfd, 1, 10000) == 1 ? accept(l, NULL, NULL) : -1;
	pid_t peer = c >= 0 ? peer_pid(c) : -2;
	pid_t own = peer_pid(sv[0]);
	if (c >= 0)
		close(c);
	int st = mt_wait(p);
	close(l);
	close(sv[0]);
	CHECK_EXITED(st, 0);
	CHECK_EQ(got, p);
	CHECK_EQ(sent, 1);
	CHECK_EQ(peer, p);
	CHECK_EQ(own, getpid());
}

/* ---- SysV shm and message queues ---- */

struct shm_args {
	int outer;           /* a segment the parent made */
	volatile int *inner; /* MAP_SHARED: the segment the child makes */
};

static int shm_child(void *arg)
{
	struct shm_args *a = arg;
	struct shmid_ds d;
	if (shmctl(a->outer, IPC_STAT, &d) != 0)
		return 2;
	if (d.shm_cpid != 0) /* the parent is not visible here */
		return 3;
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (id < 0)
		return 4;
	*a->inner = id;
	void *m = shmat(id, NULL, 0);
	if (m == (void *)-1)
		return 5;
	if (shmctl(id, IPC_STAT, &d) != 0)
		return 6;
	if (d.shm_cpid != 1 || d.shm_lpid != 1)
		return 7;
	if (shmdt(m) != 0)
		return 8;
	return 0;
}

static void shm_pids_per_namespace(void)
{
	volatile int *inner = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK_MAP(inner);
	*inner = -1;
	int outer = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	struct shm_args a = {.outer = outer, .inner = inner};
	pid_t p = spawn_ns(shm_child, &a);
	int st = p > 0 ? mt_wait(p) : -1;
	struct shmid_ds d = {0}, od = {0};
	int r = *inner >= 0 ? shmctl(*inner, IPC_STAT, &d) : -1;
	int orr = shmctl(outer, IPC_STAT, &od);
	if (*inner >= 0)
		shmctl(*inner, IPC_RMID, NULL);
	shmctl(outer, IPC_RMID, NULL);
	munmap((void *)inner, 4096);
	CHECK_SYS(p);
	CHECK_EXITED(st, 0);
	CHECK_EQ(r, 0);
	CHECK_EQ(orr, 0);
	/* The child has gone: its ids are still those it had here. */
	CHECK_EQ(d.shm_cpid, p);
	CHECK_EQ(d.shm_lpid, p);
	CHECK_EQ(od.shm_cpid, getpid());
}

struct mq_args {
	char name[64];  /* the parent's queue, notified to it */
	char name2[64]; /* the child's, notified to the child */
	int ready;      /* the child has registered */
	int other;
};

static int mq_child(void *arg)
{
	struct mq_args *a = arg;
	close(a->other);
	mqd_t q2 = mq_open(a->name2, O_RDWR);
	if (q2 == (mqd_t)-1)
		return 2;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2};
	if (mq_notify(q2, &ev) != 0)
		return 3;
	if (write(a->ready, "r", 1) != 1)
		return 4;
	/* The parent's send: its pid means nothing here. */
	struct timespec ts = {.tv_sec = 10};
	siginfo_t si;
	if (sigtimedwait(&set, &si, &ts) != SIGUSR2)
		return 5;
	if (si.si_code != SI_MESGQ || si.si_pid != 0)
		return 6;
	mqd_t q = mq_open(a->name, O_WRONLY);
	if (q == (mqd_t)-1)
		return 7;
	if (mq_send(q, "c", 1, 0) != 0)
		return 8;
	return 0;
}

static void mq_notify_sender_pid_per_namespace(void)
{
	struct mq_args a;
	snprintf(a.name, sizeof(a.name), "/moat-nsids-a-%d", getpid());
	snprintf(a.name2, sizeof(a.name2), "/moat-nsids-b-%d", getpid());
	struct mq_attr at = {.mq_maxmsg = 4, .mq_msgsize = 16};
	mqd_t q = CHECK_SYS(mq_open(a.name, O_RDWR | O_CREAT | O_EXCL, 0600, &at));
	mqd_t q2 = mq_open(a.name2, O_RDWR | O_CREAT | O_EXCL, 0600, &at);
	if (q2 == (mqd_t)-1) {
		mq_unlink(a.name);
		mq_close(q);
		FAIL("mq_open: %s", strerror(errno));
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	int nr = mq_notify(q, &ev);
	int pfd[2];
	CHECK_SYS(pipe(pfd));
	a.ready = pfd[1];
	a.other = pfd[0];
	pid_t p = spawn_ns(mq_child, &a);
	close(pfd[1]);
	char c;
	ssize_t n = mt_read_n(pfd[0], &c, 1, 10000);
	close(pfd[0]);
	int sr = mq_send(q2, "p", 1, 0);
	struct timespec ts = {.tv_sec = 10};
	siginfo_t si = {0};
	int sig = sigtimedwait(&set, &si, &ts);
	int st = p > 0 ? mt_wait(p) : -1;
	mq_unlink(a.name);
	mq_unlink(a.name2);
	mq_close(q);
	mq_close(q2);
	CHECK_EQ(nr, 0);
	CHECK_SYS(p);
	CHECK_EQ(n, 1);
	CHECK_EQ(sr, 0);
	CHECK_EXITED(st, 0);
	CHECK_EQ(sig, SIGUSR1);
	CHECK_EQ(si.si_code, SI_MESGQ);
	CHECK_EQ(si.si_pid, p);
}

static int read_notify_pid(mqd_t q)
{
	char buf[128];
	ssize_t r = pread(q, buf, sizeof(buf) - 1, 0);
	if (r < 0)
		return -1;
	buf[r] = 0;
	char *p = strstr(buf, "NOTIFY_PID:");
	return p == NULL ? -1 : atoi(p + strlen("NOTIFY_PID:"));
}

struct mqs_args {
	mqd_t q;  /* notified to the parent */
	mqd_t q2; /* the child registers on it */
	int ready, release, other[2];
};

static int mq_status_child(void *arg)
{
	struct mqs_args *a = arg;
	close(a->other[0]);
	close(a->other[1]);
	if (read_notify_pid(a->q) != 0) /* the parent is not visible here */
		return 2;
	struct sigevent ev = {.sigev_notify = SIGEV_NONE};
	if (mq_notify(a->q2, &ev) != 0)
		return 3;
	if (read_notify_pid(a->q2) != 1)
		return 4;
	char c;
	if (write(a->ready, "r", 1) != 1 || read(a->release, &c, 1) < 0)
		return 5;
	return 0;
}

static void mq_status_notify_pid_per_namespace(void)
{
	char n1[64], n2[64];
	snprintf(n1, sizeof(n1), "/moat-nsids-c-%d", getpid());
	snprintf(n2, sizeof(n2), "/moat-nsids-d-%d", getpid());
	struct mq_attr at = {.mq_maxmsg = 4, .mq_msgsize = 16};
	mqd_t q = CHECK_SYS(mq_open(n1, O_RDWR | O_CREAT | O_EXCL, 0600, &at));
	mq_unlink(n1);
	mqd_t q2 = CHECK_SYS(mq_open(n2, O_RDWR | O_CREAT | O_EXCL, 0600, &at));
	mq_unlink(n2);
	struct sigevent ev = {.sigev_notify = SIGEV_NONE};
	CHECK_SYS(mq_notify(q, &ev));
	int r[2], l[2];
	CHECK_SYS(pipe(r));
	CHECK_SYS(pipe(l));
	struct mqs_args a = {.q = q, .q2 = q2, .ready = r[1], .release = l[0], .other = {r[0], l[1]}};
	pid_t p = CHECK_SYS(spawn_ns(mq_status_child, &a));
	close(r[1]);
	close(l[0]);
	char c;
	ssize_t n = mt_read_n(r[0], &c, 1, 10000);
	int mine = read_notify_pid(q);
	int theirs = read_notify_pid(q2);
	close(l[1]);
	int st = mt_wait(p);
	close(r[0]);
	mq_close(q);
	mq_close(q2);
	CHECK_EXITED(st, 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(mine, getpid());
	CHECK_EQ(theirs, p);
}

static const struct mt_case cases[] = {
	MT_CASE(pi_futex_words_hold_namespace_tids),
	MT_CASE(robust_list_cleanup_uses_namespace_tid),
	MT_CASE(clone_settid_words_per_namespace),
	MT_CASE(tty_job_ids_per_namespace),
	MT_CASE(unix_cred_pids_per_namespace),
	MT_CASE(shm_pids_per_namespace),
	MT_CASE(mq_notify_sender_pid_per_namespace),
	MT_CASE(mq_status_notify_pid_per_namespace),
};

MT_MAIN(cases)
