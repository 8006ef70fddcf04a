//go:build ignore

/* pipe: pipe/pipe2 flags, 64 KiB default capacity, F_GETPIPE_SZ and
 * F_SETPIPE_SZ, PIPE_BUF atomicity across writers, EPIPE and SIGPIPE, EOF
 * once every writer is gone, FIONREAD, non-blocking partial writes,
 * blocking in both directions, packet mode, splice and tee. */
#include "moattest.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void pipe_roundtrip(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_EQ(p[0], 3);
	CHECK_EQ(p[1], 4);
	CHECK_EQ(write(p[1], "hello", 5), 5);
	char buf[16];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "hello", 5);
	CHECK_EQ(write(p[1], "", 0), 0);
	CHECK_EQ(read(p[0], buf, 0), 0);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
}

static void pipe2_flags(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(fcntl(p[0], F_GETFD), 0);
	char c;
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);
	int q[2];
	CHECK_SYS(pipe2(q, O_CLOEXEC));
	CHECK_EQ(fcntl(q[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(q[1], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(q[0], F_GETFL) & O_NONBLOCK, 0);
	CHECK_ERR(pipe2(q, 0x1), EINVAL);
	CHECK_ERR(pipe2(q, O_RDWR), EINVAL);
	CHECK_ERR(syscall(SYS_pipe, (void *)8), EFAULT);
	CHECK_ERR(syscall(SYS_pipe2, (void *)8, 0), EFAULT);
}

static ssize_t fill_nonblocking(int fd)
{
	static char chunk[1024];
	ssize_t total = 0;
	for (;;) {
		ssize_t n = write(fd, chunk, sizeof(chunk));
		if (n < 0)
			return errno == EAGAIN ? total : -1;
		total += n;
	}
}

static void default_capacity_64k(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 65536);
	CHECK_EQ(fcntl(p[1], F_GETPIPE_SZ), 65536);
	CHECK_EQ(fill_nonblocking(p[1]), 65536);
	int avail = -1;
	CHECK_SYS(ioctl(p[0], FIONREAD, &avail));
	CHECK_EQ(avail, 65536);
	CHECK_ERR(write(p[1], "x", 1), EAGAIN);
}

static void setpipe_sz(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 4096);
	CHECK_EQ(fill_nonblocking(p[1]), 4096);
	/* Rounded up to a power-of-two number of pages. */
	int q[2];
	CHECK_SYS(pipe(q));
	CHECK_EQ(fcntl(q[1], F_SETPIPE_SZ, 5000), 8192);
	CHECK_EQ(fcntl(q[1], F_SETPIPE_SZ, 1), 4096);
	CHECK_EQ(fcntl(q[1], F_SETPIPE_SZ, 1048576), 1048576);
	/* Cannot shrink below what it holds. */
	char buf[8192];
	memset(buf, 'a', sizeof(buf));
	CHECK_EQ(write(q[1], buf, sizeof(buf)), (ssize_t)sizeof(buf));
	CHECK_ERR(fcntl(q[1], F_SETPIPE_SZ, 4096), EBUSY);
	CHECK_ERR(fcntl(q[1], F_SETPIPE_SZ, -1), EINVAL);
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(fcntl(fd, F_GETPIPE_SZ), EBADF);
	CHECK_ERR(fcntl(fd, F_SETPIPE_SZ, 4096), EBADF);
}

static void pipe_buf_atomic_writers(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	enum { WRITERS = 4, RECORDS = 50 };
	pid_t pids[WRITERS];
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = CHECK_SYS(fork());
		if (pids[w] == 0) {
			close(p[0]);
			char rec[PIPE_BUF];
			memset(rec, 'A' + w, sizeof(rec));
			for (int i = 0; i < RECORDS; i++)
				if (write(p[1], rec, sizeof(rec)) != (ssize_t)sizeof(rec))
					_exit(1);
			_exit(0);
		}
	}
	close(p[1]);
	int counts[WRITERS] = { 0 };
	char rec[PIPE_BUF];
	for (;;) {
		size_t got = 0;
		while (got < sizeof(rec)) {
			ssize_t n = read(p[0], rec + got, sizeof(rec) - got);
			CHECK_GE(n, 0);
			if (n == 0)
				break;
			got += (size_t)n;
		}
		if (got == 0)
			break;
		CHECK_EQ(got, sizeof(rec));
		int who = rec[0] - 'A';
		CHECK(who >= 0 && who < WRITERS);
		for (size_t i = 1; i < sizeof(rec); i++)
			if (rec[i] != rec[0])
				FAIL("record mixed: byte %zu is %c in a record of %c", i, rec[i], rec[0]);
		counts[who]++;
	}
	for (int w = 0; w < WRITERS; w++) {
		CHECK_EXITED(mt_wait(pids[w]), 0);
		CHECK_EQ(counts[w], RECORDS);
	}
}

static void sigpipe_kills_writer(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	close(p[0]);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		(void)write(p[1], "x", 1);
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGPIPE);
}

static volatile int pipe_sigs;

static void on_pipe(int sig)
{
	(void)sig;
	pipe_sigs++;
}

static void epipe_with_handler_or_ignored(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	pipe_sigs = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_pipe;
	CHECK_SYS(sigaction(SIGPIPE, &sa, NULL));
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK_EQ(pipe_sigs, 1);
	/* Blocked: the signal stays pending, write still fails. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	sigset_t pend;
	CHECK_SYS(sigpending(&pend));
	CHECK_EQ(sigismember(&pend, SIGPIPE), 1);
	CHECK_SYS(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CHECK_EQ(pipe_sigs, 2);
}

static void eof_after_all_writers_close(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int extra = CHECK_SYS(dup(p[1]));
	CHECK_EQ(write(p[1], "ab", 2), 2);
	close(p[1]);
	char buf[4];
	CHECK_EQ(read(p[0], buf, 4), 2);
	/* One writer remains: no EOF, would block. */
	CHECK_SYS(fcntl(p[0], F_SETFL, O_NONBLOCK));
	CHECK_ERR(read(p[0], buf, 4), EAGAIN);
	close(extra);
	CHECK_EQ(read(p[0], buf, 4), 0);
	CHECK_EQ(read(p[0], buf, 4), 0);
}

static void eof_when_child_writer_exits(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		close(p[0]);
		usleep(30000);
		(void)write(p[1], "bye", 3);
		_exit(0);
	}
	close(p[1]);
	char buf[8];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 3);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 0);
	CHECK_EXITED(mt_wait(pid), 0);
}

static void fionread_counts(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	int n = -1;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 0);
	CHECK_EQ(write(p[1], "12345", 5), 5);
	CHECK_EQ(write(p[1], "678", 3), 3);
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 8);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_SYS(ioctl(p[1], FIONREAD, &n));
	CHECK_EQ(n, 7);
	CHECK_ERR(ioctl(p[0], FIONREAD, (int *)8), EFAULT);
}

static void nonblocking_partial_and_atomic(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_NONBLOCK));
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	static char big[8192];
	/* More than PIPE_BUF: a partial write. */
	CHECK_EQ(write(p[1], big, sizeof(big)), 4096);
	CHECK_ERR(write(p[1], big, 1), EAGAIN);
	char drain[4096];
	CHECK_EQ(read(p[0], drain, sizeof(drain)), 4096);
	CHECK_EQ(write(p[1], big, 4000), 4000);
	/* 200 <= PIPE_BUF bytes do not fit in the 96 left: all or nothing. */
	CHECK_ERR(write(p[1], big, 200), EAGAIN);
	CHECK_EQ(write(p[1], big, 50), 50);
	int n = 0;
	CHECK_SYS(ioctl(p[0], FIONREAD, &n));
	CHECK_EQ(n, 4050);
}

static int blk[2];

static void *slow_writer(void *arg)
{
	(void)arg;
	usleep(30000);
	(void)write(blk[1], "late", 4);
	return NULL;
}

static void blocking_read_woken(void)
{
	CHECK_SYS(pipe(blk));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, slow_writer, NULL));
	char buf[8];
	int64_t t0 = mt_now_ns();
	CHECK_EQ(read(blk[0], buf, sizeof(buf)), 4);
	CHECK_GE(mt_now_ns() - t0, 20 * 1000000LL);
	CHECK_MEMEQ(buf, "late", 4);
	CHECK_RET0(pthread_join(th, NULL));
}

static void *big_writer(void *arg)
{
	static char data[256 * 1024];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i % 251);
	ssize_t n = write(blk[1], data, sizeof(data));
	(void)arg;
	return (void *)n;
}

static void blocking_write_completes(void)
{
	CHECK_SYS(pipe(blk));
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, big_writer, NULL));
	static char got[256 * 1024];
	size_t total = 0;
	while (total < sizeof(got)) {
		ssize_t n = read(blk[0], got + total, sizeof(got) - total);
		CHECK_GT(n, 0);
		total += (size_t)n;
	}
	void *r;
	CHECK_RET0(pthread_join(th, &r));
	CHECK_EQ((long)r, (long)sizeof(got));
	for (size_t i = 0; i < sizeof(got); i++)
		if (got[i] != (char)(i % 251))
			FAIL("byte %zu differs", i);
}

static void pipe_fstat_and_link(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	struct stat a, b;
	CHECK_SYS(fstat(p[0], &a));
	CHECK_SYS(fstat(p[1], &b));
	CHECK(S_ISFIFO(a.st_mode));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_mode & 0777, 0600);
	char path[64], link[64], want[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)a.st_ino);
	CHECK_STREQ(link, want);
}

static void wrong_end_ebadf(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char c = 'x';
	CHECK_ERR(write(p[0], &c, 1), EBADF);
	CHECK_ERR(read(p[1], &c, 1), EBADF);
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(syscall(SYS_write, p[1], (void *)8, 1), EFAULT);
}

static void reopen_through_proc(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	int w = CHECK_SYS(open(path, O_WRONLY));
	CHECK_EQ(write(w, "via-proc", 8), 8);
	char buf[16];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 8);
	CHECK_MEMEQ(buf, "via-proc", 8);
}

static void packet_mode(void)
{
	int p[2];
	CHECK_SYS(pipe2(p, O_DIRECT));
	CHECK_EQ(write(p[1], "one", 3), 3);
	CHECK_EQ(write(p[1], "two!", 4), 4);
	char buf[64];
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 3);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 4);
	CHECK_MEMEQ(buf, "two!", 4);
	/* A short read discards the rest of the packet. */
	CHECK_EQ(write(p[1], "abcdef", 6), 6);
	CHECK_EQ(write(p[1], "gh", 2), 2);
	CHECK_EQ(read(p[0], buf, 2), 2);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);
	CHECK_MEMEQ(buf, "gh", 2);
}

static void splice_and_tee(void)
{
	int a[2], b[2];
	CHECK_SYS(pipe(a));
	CHECK_SYS(pipe(b));
	CHECK_EQ(write(a[1], "spliced!", 8), 8);
	/* tee copies without consuming. */
	CHECK_EQ(tee(a[0], b[1], 8, 0), 8);
	int n = 0;
	CHECK_SYS(ioctl(a[0], FIONREAD, &n));
	CHECK_EQ(n, 8);
	char buf[16];
	CHECK_EQ(read(b[0], buf, sizeof(buf)), 8);
	CHECK_MEMEQ(buf, "spliced!", 8);
	/* splice moves. */
	CHECK_EQ(splice(a[0], NULL, b[1], NULL, 5, 0), 5);
	CHECK_SYS(ioctl(a[0], FIONREAD, &n));
	CHECK_EQ(n, 3);
	CHECK_EQ(read(b[0], buf, sizeof(buf)), 5);
	CHECK_MEMEQ(buf, "splic", 5);
	/* From a file into a pipe. */
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	loff_t off = 0;
	CHECK_EQ(splice(fd, &off, b[1], NULL, 4, 0), 4);
	CHECK_EQ(off, 4);
	CHECK_EQ(read(b[0], buf, 4), 4);
	CHECK_ERR(tee(a[0], a[1], 1, 0), EINVAL);
	CHECK_ERR(splice(a[0], &off, b[1], NULL, 1, 0), ESPIPE);
	close(fd);
}

static void many_pipes(void)
{
	int fds[200][2];
	for (int i = 0; i < 200; i++)
		CHECK_SYS(pipe(fds[i]));
	for (int i = 0; i < 200; i++) {
		char c = (char)i;
		CHECK_EQ(write(fds[i][1], &c, 1), 1);
	}
	for (int i = 199; i >= 0; i--) {
		char c;
		CHECK_EQ(read(fds[i][0], &c, 1), 1);
		CHECK_EQ(c, (char)i);
		close(fds[i][0]);
		close(fds[i][1]);
	}
}

static const struct mt_case cases[] = {
	MT_CASE(pipe_roundtrip),
	MT_CASE(pipe2_flags),
	MT_CASE(default_capacity_64k),
	MT_CASE(setpipe_sz),
	MT_CASE(pipe_buf_atomic_writers),
	MT_CASE(sigpipe_kills_writer),
	MT_CASE(epipe_with_handler_or_ignored),
	MT_CASE(eof_after_all_writers_close),
	MT_CASE(eof_when_child_writer_exits),
	MT_CASE(fionread_counts),
	MT_CASE(nonblocking_partial_and_atomic),
	MT_CASE(blocking_read_woken),
	MT_CASE(blocking_write_completes),
	MT_CASE(pipe_fstat_and_link),
	MT_CASE(wrong_end_ebadf),
	MT_CASE(reopen_through_proc),
	MT_CASE(packet_mode),
	MT_CASE(splice_and_tee),
	MT_CASE(many_pipes),
};

MT_MAIN(cases)
