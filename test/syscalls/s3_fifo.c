//go:build ignore

/* s3_fifo: named pipes in tmpfs: a blocking open for reading waits for a
 * writer (and the other way round), O_RDWR opens at once, non-blocking
 * opens (ENXIO for a writer without readers), data and EOF across
 * processes, readers and writers coming and going (EPIPE, EOF, waiting
 * again), one pipe shared by every open of the FIFO (hard links too, and
 * after unlink), the pipe size set by F_SETPIPE_SZ seen by later opens,
 * st_size staying 0, and lseek (ESPIPE). */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* wait_sleeping waits until process pid sleeps in the kernel. */
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

static void open_read_waits_for_writer(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int fd = open("f", O_RDONLY);
		if (fd < 0)
			_exit(1);
		char b[8];
		ssize_t n = read(fd, b, sizeof b);
		_exit(n == 5 && memcmp(b, "hello", 5) == 0 ? 0 : 2);
	}
	/* The reader blocks in open until we open for writing. */
	CHECK_SYS(wait_sleeping(pid));
	int w = CHECK_SYS(open("f", O_WRONLY));
	CHECK_EQ(write(w, "hello", 5), 5);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void open_write_waits_for_reader(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int fd = open("f", O_WRONLY);
		if (fd < 0)
			_exit(1);
		_exit(write(fd, "x", 1) == 1 ? 0 : 2);
	}
	CHECK_SYS(wait_sleeping(pid));
	int r = CHECK_SYS(open("f", O_RDONLY));
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	char c;
	CHECK_EQ(read(r, &c, 1), 1);
	/* The writer is gone: EOF. */
	CHECK_EQ(read(r, &c, 1), 0);
}

static void rdwr_and_nonblocking_opens(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	/* O_RDWR never waits: it is both reader and writer. */
	int rw = CHECK_SYS(open("f", O_RDWR));
	CHECK_EQ(write(rw, "self", 4), 4);
	char b[8];
	CHECK_EQ(read(rw, b, sizeof b), 4);
	CHECK_SYS(close(rw));
	/* Non-blocking: reading opens at once, writing needs a reader. */
	CHECK_ERR(open("f", O_WRONLY | O_NONBLOCK), ENXIO);
	int r = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	/* No writer ever: a read is EOF (0), not EAGAIN. */
	CHECK_EQ(read(r, b, sizeof b), 0);
	int w = CHECK_SYS(open("f", O_WRONLY | O_NONBLOCK));
	/* With a writer and no data: EAGAIN. */
	CHECK_ERR(read(r, b, sizeof b), EAGAIN);
	CHECK_EQ(write(w, "nb", 2), 2);
	CHECK_EQ(read(r, b, sizeof b), 2);
}

static void writer_without_readers_epipe(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	signal(SIGPIPE, SIG_IGN);
	int r = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	int w = CHECK_SYS(open("f", O_WRONLY | O_NONBLOCK));
	CHECK_SYS(close(r));
	CHECK_ERR(write(w, "x", 1), EPIPE);
	/* A new reader makes writing work again. */
	r = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	CHECK_EQ(write(w, "y", 1), 1);
	char c;
	CHECK_EQ(read(r, &c, 1), 1);
	CHECK_EQ(c, 'y');
}

static void one_pipe_for_all_opens(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	CHECK_SYS(link("f", "g"));
	int r = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	int w1 = CHECK_SYS(open("f", O_WRONLY));
	int w2 = CHECK_SYS(open("g", O_WRONLY));
	CHECK_EQ(write(w1, "a", 1), 1);
	CHECK_EQ(write(w2, "b", 1), 1);
	/* After unlinking both names the open ends still share it. */
	CHECK_SYS(unlink("f"));
	CHECK_SYS(unlink("g"));
	CHECK_EQ(write(w1, "c", 1), 1);
	char b[8];
	CHECK_EQ(read(r, b, sizeof b), 3);
	CHECK_MEMEQ(b, "abc", 3);
	/* EOF only when the last writer closes. */
	CHECK_SYS(close(w1));
	CHECK_ERR(read(r, b, sizeof b), EAGAIN);
	CHECK_SYS(close(w2));
	CHECK_EQ(read(r, b, sizeof b), 0);
}

static void pipe_size_is_per_fifo(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	int rw = CHECK_SYS(open("f", O_RDWR | O_NONBLOCK));
	CHECK_EQ(fcntl(rw, F_SETPIPE_SZ, 8192), 8192);
	int r2 = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	CHECK_EQ(fcntl(r2, F_GETPIPE_SZ), 8192);
	/* Only 8192 bytes fit. */
	static char big[16384];
	CHECK_EQ(write(rw, big, sizeof big), 8192);
	CHECK_ERR(write(rw, big, 1), EAGAIN);
	/* When every end closes, the pipe goes: a new open starts at the
	 * default size and empty. */
	CHECK_SYS(close(rw));
	CHECK_SYS(close(r2));
	int again = CHECK_SYS(open("f", O_RDWR | O_NONBLOCK));
	CHECK_EQ(fcntl(again, F_GETPIPE_SZ), 65536);
	char c;
	CHECK_ERR(read(again, &c, 1), EAGAIN);
}

static void stat_and_seek(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0640));
	int rw = CHECK_SYS(open("f", O_RDWR));
	CHECK_EQ(write(rw, "12345", 5), 5);
	struct stat st, st2;
	CHECK_SYS(fstat(rw, &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0640);
	/* Queued data does not make a size. */
	CHECK_EQ(st.st_size, 0);
	CHECK_SYS(stat("f", &st2));
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_ERR(lseek(rw, 0, SEEK_SET), ESPIPE);
	CHECK_ERR(pread(rw, &st, 1, 0), ESPIPE);
	int avail = -1;
	CHECK_SYS(ioctl(rw, FIONREAD, &avail));
	CHECK_EQ(avail, 5);
}

static void poll_states(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	int r = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	struct pollfd p = {.fd = r, .events = POLLIN};
	int w = CHECK_SYS(open("f", O_WRONLY | O_NONBLOCK));
	CHECK_EQ(write(w, "x", 1), 1);
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN);
	char c;
	CHECK_EQ(read(r, &c, 1), 1);
	/* The writer leaves: POLLHUP. */
	CHECK_SYS(close(w));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents & POLLHUP, POLLHUP);
	/* And the writer end sees POLLERR once readers leave. */
	int rw = CHECK_SYS(open("f", O_RDWR | O_NONBLOCK));
	int w2 = CHECK_SYS(open("f", O_WRONLY | O_NONBLOCK));
	CHECK_SYS(close(r));
	CHECK_SYS(close(rw));
	struct pollfd q = {.fd = w2, .events = POLLOUT};
	CHECK_EQ(poll(&q, 1, 0), 1);
	CHECK_EQ(q.revents & POLLERR, POLLERR);
}

static void reader_before_any_writer_not_hung_up(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	int r = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	struct pollfd p = {.fd = r, .events = POLLIN};
	/* A reader that has never seen a writer: neither readable nor hung
	 * up, so poll waits (Linux counts writers per open). */
	CHECK_EQ(poll(&p, 1, 0), 0);
	/* A writer that came and went makes it POLLHUP. */
	int w = CHECK_SYS(open("f", O_WRONLY | O_NONBLOCK));
	CHECK_SYS(close(w));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents & POLLHUP, POLLHUP);
	/* A new reader opened after that starts fresh again. */
	int r2 = CHECK_SYS(open("f", O_RDONLY | O_NONBLOCK));
	struct pollfd p2 = {.fd = r2, .events = POLLIN};
	CHECK_EQ(poll(&p2, 1, 0), 0);
}

static void open_errors(void)
{
	ENTER();
	CHECK_SYS(mkfifo("f", 0600));
	CHECK_ERR(mkfifo("f", 0600), EEXIST);
	CHECK_ERR(mkfifo("none/f", 0600), ENOENT);
	CHECK_ERR(open("f/x", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("f", O_RDONLY | O_NONBLOCK | O_DIRECTORY), ENOTDIR);
	/* O_TRUNC and O_CREAT on an existing FIFO are harmless. */
	int fd = CHECK_SYS(open("f", O_RDWR | O_TRUNC | O_CREAT, 0644));
	CHECK_SYS(close(fd));
	/* A FIFO cannot be mapped or executed. */
	CHECK_SYS(chmod("f", 0700));
	CHECK_ERR(execl("./f", "f", (char *)NULL), EACCES);
	AS_USER({
		if (open("f", O_RDONLY | O_NONBLOCK) != -1 || errno != EACCES)
			_exit(1);
	});
}

static const struct mt_case cases[] = {
	MT_CASE(open_read_waits_for_writer),
	MT_CASE(open_write_waits_for_reader),
	MT_CASE(rdwr_and_nonblocking_opens),
	MT_CASE(writer_without_readers_epipe),
	MT_CASE(one_pipe_for_all_opens),
	MT_CASE(pipe_size_is_per_fifo),
	MT_CASE(stat_and_seek),
	MT_CASE(poll_states),
	MT_CASE(reader_before_any_writer_not_hung_up),
	MT_CASE(open_errors),
};

MT_MAIN(cases)
