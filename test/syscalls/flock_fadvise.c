//go:build ignore

/* flock_fadvise: flock(2) on read-only files (shared and exclusive locks,
 * conflicts between open file descriptions, sharing through dup and fork,
 * conversion, release on close, a blocked locker woken by unlock, errors)
 * and fadvise64 (valid advice, errors on pipes and bad values). */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int open_hello(void)
{
	return open(mt_data("hello.txt"), O_RDONLY);
}

static void shared_locks_coexist(void)
{
	int a = CHECK_SYS(open_hello());
	int b = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_SH));
	CHECK_SYS(flock(b, LOCK_SH | LOCK_NB));
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_SYS(flock(a, LOCK_UN));
	/* Now b alone holds a shared lock: it may upgrade. */
	CHECK_SYS(flock(b, LOCK_EX | LOCK_NB));
	CHECK_ERR(flock(a, LOCK_SH | LOCK_NB), EWOULDBLOCK);
}

static void exclusive_conflicts_between_descriptions(void)
{
	int a = CHECK_SYS(open_hello());
	int b = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_EX));
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CHECK_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
	/* Relocking through the same description is fine. */
	CHECK_SYS(flock(a, LOCK_EX | LOCK_NB));
	CHECK_SYS(flock(a, LOCK_SH | LOCK_NB));
	CHECK_SYS(flock(b, LOCK_SH | LOCK_NB));
}

static void dup_shares_the_lock(void)
{
	int a = CHECK_SYS(open_hello());
	int d = CHECK_SYS(dup(a));
	int b = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_EX));
	/* Closing one of two descriptors keeps the lock... */
	close(a);
	CHECK_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	/* ...unlocking through the other releases it. */
	CHECK_SYS(flock(d, LOCK_UN));
	CHECK_SYS(flock(b, LOCK_EX | LOCK_NB));
}

static void close_of_last_descriptor_releases(void)
{
	int a = CHECK_SYS(open_hello());
	int b = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_EX));
	close(a);
	CHECK_SYS(flock(b, LOCK_EX | LOCK_NB));
}

static void fork_shares_description_lock(void)
{
	int a = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_EX));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* Same description: the child "holds" it too and can unlock. */
		CHILD_CHECK(flock(a, LOCK_EX | LOCK_NB) == 0);
		CHILD_CHECK(flock(a, LOCK_UN) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	int b = CHECK_SYS(open_hello());
	CHECK_SYS(flock(b, LOCK_EX | LOCK_NB));
}

static void blocked_locker_woken_by_unlock(void)
{
	int a = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_EX));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int b = open_hello();
		char c = 1;
		CHILD_CHECK(write(p[1], &c, 1) == 1);
		CHILD_CHECK(flock(b, LOCK_EX) == 0);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	int st;
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	CHECK_SYS(flock(a, LOCK_UN));
	st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void noop(int sig)
{
	(void)sig;
}

static void blocked_lock_interrupted(void)
{
	int a = CHECK_SYS(open_hello());
	CHECK_SYS(flock(a, LOCK_EX));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		/* Not signal(): glibc's sets SA_RESTART. */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = noop;
		sigaction(SIGALRM, &sa, NULL);
		alarm(1);
		int b = open_hello();
		_exit(flock(b, LOCK_EX) == -1 && errno == EINTR ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void flock_errors(void)
{
	int a = CHECK_SYS(open_hello());
	CHECK_ERR(flock(a, 0), EINVAL);
	CHECK_ERR(flock(a, LOCK_SH | LOCK_EX), EINVAL);
	CHECK_ERR(flock(a, 0x40), EINVAL);
	CHECK_ERR(flock(-1, LOCK_SH), EBADF);
	CHECK_ERR(flock(999, LOCK_SH), EBADF);
	/* O_PATH descriptors cannot be locked. */
	int o = CHECK_SYS(open(mt_data("hello.txt"), O_PATH));
	CHECK_ERR(flock(o, LOCK_SH), EBADF);
	/* Unlocking what is not locked is fine. */
	CHECK_SYS(flock(a, LOCK_UN));
}

static void flock_on_pipe_and_dir(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(flock(p[0], LOCK_EX | LOCK_NB));
	int d = CHECK_SYS(open("/", O_RDONLY | O_DIRECTORY));
	CHECK_SYS(flock(d, LOCK_SH | LOCK_NB));
	CHECK_SYS(flock(d, LOCK_UN));
}

static void fadvise_values(void)
{
	int a = CHECK_SYS(open_hello());
	static const int adv[] = {POSIX_FADV_NORMAL, POSIX_FADV_RANDOM, POSIX_FADV_SEQUENTIAL,
				  POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE};
	for (size_t i = 0; i < sizeof(adv) / sizeof(adv[0]); i++)
		if (syscall(SYS_fadvise64, a, 0L, 0L, adv[i]) != 0)
			FAIL("advice %d: %s", adv[i], mt_errname(errno));
	CHECK_ERR(syscall(SYS_fadvise64, a, 0L, 0L, 99), EINVAL);
	CHECK_ERR(syscall(SYS_fadvise64, a, 0L, -1L, POSIX_FADV_NORMAL), EINVAL);
	CHECK_ERR(syscall(SYS_fadvise64, 999, 0L, 0L, POSIX_FADV_NORMAL), EBADF);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(syscall(SYS_fadvise64, p[0], 0L, 0L, POSIX_FADV_NORMAL), ESPIPE);
	/* The data is unchanged by any of it. */
	char buf[5];
	CHECK_EQ(pread(a, buf, 5, 0), 5);
	CHECK_MEMEQ(buf, "hello", 5);
}

static const struct mt_case cases[] = {
	MT_CASE(shared_locks_coexist),
	MT_CASE(exclusive_conflicts_between_descriptions),
	MT_CASE(dup_shares_the_lock),
	MT_CASE(close_of_last_descriptor_releases),
	MT_CASE(fork_shares_description_lock),
	MT_CASE(blocked_locker_woken_by_unlock),
	MT_CASE(blocked_lock_interrupted),
	MT_CASE(flock_errors),
	MT_CASE(flock_on_pipe_and_dir),
	MT_CASE(fadvise_values),
};

MT_MAIN(cases)
