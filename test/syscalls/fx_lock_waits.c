//go:build ignore

/* fx_lock_waits: blocking and ownership corners of record locks on a
 * /dev/shm file: F_SETLKW interrupted by a signal (EINTR), OFD F_OFD_SETLKW between threads, POSIX
 * locks shared by the threads of a process, POSIX and OFD owners reported
 * to each other, read-lock upgrades, converting part of a range, and
 * fchownat/linkat with AT_EMPTY_PATH, F_SETLKW deadlock detection
 * (EDEADLK) and F_GETLK on merged ranges. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char path[256];

static int scratch_file(const char *name)
{
	if (path[0])
		unlink(path);
	snprintf(path, sizeof(path), "/dev/shm/tfiles-%s-%d", name, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		mt_fail(__FILE__, __LINE__, "open %s: %s", path, mt_errname(errno));
	return fd;
}

#define SCRATCH(fd)                               \
	int fd = scratch_file(__func__);          \
	MT_BAIL()

__attribute__((destructor)) static void remove_last(void)
{
	if (path[0])
		unlink(path);
}

static int lk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &fl);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void setlkw_interrupted_by_signal(void)
{
	SCRATCH(fd);
	int ready[2], done[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(pipe(done));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, 0, 0) == 0);
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		char x;
		CHILD_CHECK(read(done[0], &x, 1) == 1);
		_exit(0);
	}
	char b;
	CHECK_EQ(read(ready[0], &b, 1), 1);
	struct sigaction sa = { .sa_handler = on_alarm };
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	/* A repeating timer, so a tick arriving before the call blocks
	 * cannot leave it waiting forever. */
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	int r = lk(fd, F_SETLKW, F_WRLCK, 0, 1);
	int e = errno;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	CHECK_EQ(r, -1);
	CHECK_EQ(e, EINTR);
	CHECK_EQ(write(done[1], "d", 1), 1);
	CHECK_EXITED(mt_wait(c), 0);
}

struct ofd_waiter {
	int fd;
	pid_t tid;
	int ret, err;
};

static void *ofd_wait_thread(void *arg)
{
	struct ofd_waiter *w = arg;
	w->tid = (pid_t)syscall(SYS_gettid);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	w->ret = lk(w->fd, F_OFD_SETLKW, F_WRLCK, 0, 10);
	w->err = errno;
	return NULL;
}

static void ofd_setlkw_between_threads(void)
{
	SCRATCH(fd);
	int fd2 = CHECK_SYS(open(path, O_RDWR));
	CHECK_SYS(lk(fd, F_OFD_SETLK, F_WRLCK, 5, 1));
	struct ofd_waiter w = { .fd = fd2, .tid = 0, .ret = 99 };
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, ofd_wait_thread, &w));
	while (__atomic_load_n(&w.tid, __ATOMIC_SEQ_CST) == 0)
		usleep(1000);
	if (mt_wait_blocked(w.tid, 5000) < 0)
		FAIL("thread never blocked");
	CHECK_EQ(__atomic_load_n(&w.ret, __ATOMIC_SEQ_CST), 99);
	CHECK_SYS(lk(fd, F_OFD_SETLK, F_UNLCK, 5, 1));
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(w.ret, 0);
	/* Now fd2's description owns it. */
	CHECK_ERR(lk(fd, F_OFD_SETLK, F_RDLCK, 0, 1), EAGAIN);
}

static void *posix_lock_thread(void *arg)
{
	int fd = *(int *)arg;
	return (void *)(long)lk(fd, F_SETLK, F_WRLCK, 0, 10);
}

static void posix_locks_shared_by_threads(void)
{
	SCRATCH(fd);
	pthread_t t;
	void *ret;
	CHECK_RET0(pthread_create(&t, NULL, posix_lock_thread, &fd));
	CHECK_RET0(pthread_join(t, &ret));
	CHECK_EQ((long)ret, 0);
	/* The lock belongs to the process: no conflict for the main thread. */
	struct flock g = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	CHECK_SYS(fcntl(fd, F_GETLK, &g));
	CHECK_EQ(g.l_type, F_UNLCK);
	pid_t me = getpid();
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock h = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
		CHILD_CHECK(fcntl(f, F_GETLK, &h) == 0);
		CHILD_CHECK(h.l_type == F_WRLCK && h.l_pid == me);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void posix_and_ofd_owners(void)
{
	SCRATCH(fd);
	int ready[2], done[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(pipe(done));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_RDLCK, 0, 5) == 0);
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		char x;
		CHILD_CHECK(read(done[0], &x, 1) == 1);
		_exit(0);
	}
	char b;
	CHECK_EQ(read(ready[0], &b, 1), 1);
	/* An OFD probe sees the POSIX lock with its owner's pid. */
	struct flock g = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	CHECK_SYS(fcntl(fd, F_OFD_GETLK, &g));
	CHECK_EQ(g.l_type, F_RDLCK);
	CHECK_EQ(g.l_pid, c);
	CHECK_EQ(g.l_len, 5);
	/* Read locks share; an OFD write lock conflicts. */
	CHECK_SYS(lk(fd, F_OFD_SETLK, F_RDLCK, 0, 5));
	CHECK_ERR(lk(fd, F_OFD_SETLK, F_WRLCK, 0, 5), EAGAIN);
	CHECK_SYS(lk(fd, F_OFD_SETLK, F_WRLCK, 5, 5));
	/* A POSIX probe of the OFD lock reports pid -1. */
	int other = CHECK_SYS(open(path, O_RDWR));
	struct flock h = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 1 };
	CHECK_SYS(fcntl(other, F_GETLK, &h));
	CHECK_EQ(h.l_type, F_WRLCK);
	CHECK_EQ(h.l_pid, -1);
	CHECK_EQ(write(done[1], "d", 1), 1);
	CHECK_EXITED(mt_wait(c), 0);
}

static void upgrade_blocked_by_other_reader(void)
{
	SCRATCH(fd);
	int go[2], back[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(back));
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, 0, 10));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		char x;
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_RDLCK, 0, 10) == 0);
		errno = 0;
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, 0, 10) == -1 && errno == EAGAIN);
		/* The failed upgrade keeps the read lock. */
		CHILD_CHECK(write(back[1], "1", 1) == 1);
		CHILD_CHECK(read(go[0], &x, 1) == 1);
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, 0, 10) == 0);
		CHILD_CHECK(write(back[1], "2", 1) == 1);
		CHILD_CHECK(read(go[0], &x, 1) == 1);
		_exit(0);
	}
	char b;
	CHECK_EQ(read(back[0], &b, 1), 1);
	CHECK_ERR(lk(fd, F_SETLK, F_WRLCK, 0, 10), EAGAIN);
	CHECK_SYS(lk(fd, F_SETLK, F_UNLCK, 0, 10));
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(read(back[0], &b, 1), 1);
	CHECK_ERR(lk(fd, F_SETLK, F_RDLCK, 9, 1), EAGAIN);
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EXITED(mt_wait(c), 0);
}

static void adjacent_ranges_and_conversion(void)
{
	SCRATCH(fd);
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 0, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 10, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 30, 10));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 20, .l_len = 0 };
		CHILD_CHECK(fcntl(f, F_GETLK, &g) == 0);
		CHILD_CHECK(g.l_start == 30 && g.l_len == 10);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
	/* Converting the middle to a read lock splits the write range. */
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, 5, 10));
	c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		struct flock g = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 30 };
		CHILD_CHECK(fcntl(f, F_GETLK, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_start == 0 && g.l_len == 5);
		CHILD_CHECK(lk(f, F_SETLK, F_RDLCK, 5, 10) == 0);
		g = (struct flock){ .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 30 };
		CHILD_CHECK(fcntl(f, F_GETLK, &g) == 0);
		CHILD_CHECK(g.l_type == F_WRLCK && g.l_start == 15 && g.l_len == 5);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

/* sleeping waits until process pid sleeps in the kernel (its
 * /proc/PID/stat state is S), up to five seconds. */
static int sleeping(pid_t pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 5000; i++) {
		int f = open(p, O_RDONLY);
		if (f >= 0) {
			ssize_t n = read(f, buf, sizeof(buf) - 1);
			close(f);
			if (n > 0) {
				buf[n] = 0;
				char *q = strrchr(buf, ')');
				if (q && q[1] == ' ' && q[2] == 'S')
					return 1;
			}
		}
		usleep(1000);
	}
	return 0;
}

static void setlkw_deadlock_edeadlk(void)
{
	SCRATCH(fd);
	int ready[2];
	CHECK_SYS(pipe(ready));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 0, 1));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		CHILD_CHECK(lk(f, F_SETLK, F_WRLCK, 1, 1) == 0);
		CHILD_CHECK(write(ready[1], "r", 1) == 1);
		/* Waits for the parent's byte 0, then holds both. */
		CHILD_CHECK(lk(f, F_SETLKW, F_WRLCK, 0, 1) == 0);
		_exit(0);
	}
	char b;
	CHECK_EQ(read(ready[0], &b, 1), 1);
	CHECK(sleeping(c));
	/* Waiting for the child's byte would close the cycle. */
	CHECK_ERR(lk(fd, F_SETLKW, F_WRLCK, 1, 1), EDEADLK);
	CHECK_ERR(lk(fd, F_SETLKW, F_RDLCK, 0, 2), EDEADLK);
	/* Without waiting it is only a conflict. */
	CHECK_ERR(lk(fd, F_SETLK, F_WRLCK, 1, 1), EAGAIN);
	/* The failed requests left the parent's own lock alone. */
	struct flock g = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	CHECK_SYS(fcntl(fd, F_GETLK, &g));
	CHECK_EQ(g.l_type, F_WRLCK);
	CHECK_EQ(g.l_start, 1);
	CHECK_EQ(g.l_pid, c);
	CHECK_SYS(lk(fd, F_SETLK, F_UNLCK, 0, 1));
	CHECK_EXITED(mt_wait(c), 0);
}

/* getlk_probe returns what F_GETLK reports for a one-byte write lock at
 * at. */
static int getlk_probe(int f, off_t at, short *type, off_t *start, off_t *len)
{
	struct flock g = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };
	if (fcntl(f, F_GETLK, &g) < 0)
		return -1;
	*type = g.l_type;
	*start = g.l_start;
	*len = g.l_len;
	return 0;
}

static void getlk_reports_merged_ranges(void)
{
	SCRATCH(fd);
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 0, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 10, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, 100, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, 105, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 200, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 220, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 210, 10));
	/* A different type next to a range stays separate. */
	CHECK_SYS(lk(fd, F_SETLK, F_RDLCK, 300, 10));
	CHECK_SYS(lk(fd, F_SETLK, F_WRLCK, 310, 10));
	pid_t c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		short t;
		off_t s, l;
		CHILD_CHECK(getlk_probe(f, 15, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_WRLCK && s == 0 && l == 20);
		CHILD_CHECK(getlk_probe(f, 101, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_RDLCK && s == 100 && l == 15);
		CHILD_CHECK(getlk_probe(f, 229, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_WRLCK && s == 200 && l == 30);
		CHILD_CHECK(getlk_probe(f, 305, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_RDLCK && s == 300 && l == 10);
		CHILD_CHECK(getlk_probe(f, 310, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_WRLCK && s == 310 && l == 10);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
	/* Unlocking the middle of a merged range splits it again. */
	CHECK_SYS(lk(fd, F_SETLK, F_UNLCK, 5, 10));
	c = CHECK_SYS(fork());
	if (c == 0) {
		int f = open(path, O_RDWR);
		CHILD_CHECK(f >= 0);
		short t;
		off_t s, l;
		CHILD_CHECK(getlk_probe(f, 0, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_WRLCK && s == 0 && l == 5);
		CHILD_CHECK(getlk_probe(f, 7, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_UNLCK);
		CHILD_CHECK(getlk_probe(f, 19, &t, &s, &l) == 0);
		CHILD_CHECK(t == F_WRLCK && s == 15 && l == 5);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(c), 0);
}

static void fchownat_empty_path(void)
{
	SCRATCH(fd);
	CHECK_SYS(fchownat(fd, "", 4321, 4321, AT_EMPTY_PATH));
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_uid, 4321);
	CHECK_EQ(st.st_gid, 4321);
	/* -1 leaves an id alone. */
	CHECK_SYS(fchownat(fd, "", -1, 1234, AT_EMPTY_PATH));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_uid, 4321);
	CHECK_EQ(st.st_gid, 1234);
	CHECK_ERR(fchownat(fd, "", 0, 0, 0), ENOENT);
	CHECK_ERR(fchownat(fd, "x", 0, 0, AT_EMPTY_PATH), ENOTDIR);
	CHECK_ERR(fchownat(AT_FDCWD, path, 0, 0, 0x4000), EINVAL);
	CHECK_ERR(fchownat(99, "", 0, 0, AT_EMPTY_PATH), EBADF);
	/* A path-less AT_FDCWD names the working directory. */
	CHECK_SYS(chdir("/dev/shm"));
	struct stat before;
	CHECK_SYS(stat(".", &before));
	CHECK_SYS(fchownat(AT_FDCWD, "", -1, -1, AT_EMPTY_PATH));
}

static const struct mt_case cases[] = {
	MT_CASE(setlkw_interrupted_by_signal),
	MT_CASE(ofd_setlkw_between_threads),
	MT_CASE(posix_locks_shared_by_threads),
	MT_CASE(posix_and_ofd_owners),
	MT_CASE(upgrade_blocked_by_other_reader),
	MT_CASE(adjacent_ranges_and_conversion),
	MT_CASE(fchownat_empty_path),
	MT_CASE(setlkw_deadlock_edeadlk),
	MT_CASE(getlk_reports_merged_ranges),
};

MT_MAIN(cases)
