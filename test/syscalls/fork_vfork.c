//go:build ignore

/* fork_vfork: the raw fork and vfork syscalls and what a child inherits
 * or not: memory copies, descriptors and their offsets, locks on the
 * descriptor table, signal state (handlers, mask, pending, alternate
 * stack), timers, resource usage, parent death, and vfork's suspension of
 * the parent. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void raw_fork_returns_twice(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	long pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		pid_t me = getpid();
		if (write(p[1], &me, sizeof(me)) != sizeof(me))
			_exit(1);
		_exit(getppid() == 1 ? 0 : 2);
	}
	pid_t seen;
	CHECK_EQ(read(p[0], &seen, sizeof(seen)), sizeof(seen));
	CHECK_EQ(seen, pid);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void fork_shares_file_offsets(void)
{
	int fd = CHECK_SYS(open(mt_data("hello.txt"), O_RDONLY));
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		char b[6];
		_exit(read(fd, b, 6) == 6 ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* The child's read moved the shared offset. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
}

static void fork_copies_fd_table(void)
{
	int fd = CHECK_SYS(dup(1));
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		close(fd);
		int n = open("/dev/null", O_RDONLY);
		_exit(n == fd ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* Our copy is still open and still ours. */
	CHECK_SYS(fcntl(fd, F_GETFD));
}

static void fork_keeps_mask_and_handlers_drops_pending(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGUSR2, SIG_IGN);
	kill(getpid(), SIGUSR1);
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		sigset_t m, p;
		sigprocmask(SIG_BLOCK, NULL, &m);
		sigpending(&p);
		struct sigaction sa;
		sigaction(SIGUSR2, NULL, &sa);
		int ok = sigismember(&m, SIGUSR1) && !sigismember(&p, SIGUSR1) && sa.sa_handler == SIG_IGN;
		_exit(ok ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	sigset_t p;
	sigpending(&p);
	CHECK(sigismember(&p, SIGUSR1));
}

static void fork_keeps_altstack(void)
{
	static char mem[65536];
	stack_t ss = {.ss_sp = mem, .ss_size = sizeof(mem), .ss_flags = 0};
	CHECK_SYS(sigaltstack(&ss, NULL));
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		stack_t c;
		sigaltstack(NULL, &c);
		_exit(c.ss_sp == mem && c.ss_size == sizeof(mem) ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static long utime_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
}

static void fork_resets_timers_and_usage(void)
{
	struct itimerval it = {{0, 0}, {100, 0}};
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	/* Use 200 ms of user time, so that a child that inherited it could
	 * not pass for one that starts from zero (the sandbox counts time in
	 * application code by the wall clock: on a loaded host a new child
	 * may wait for a CPU for some milliseconds). */
	volatile unsigned long x = 0;
	while (utime_ms() < 200)
		for (int i = 0; i < 1000000; i++)
			x += i;
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		struct itimerval c;
		getitimer(ITIMER_REAL, &c);
		long ms = utime_ms();
		_exit(c.it_value.tv_sec == 0 && c.it_value.tv_usec == 0 && ms < 100 ? 0 : 1);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void *spin_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void fork_copies_only_calling_thread(void)
{
	pthread_t th;
	CHECK_RET0(pthread_create(&th, NULL, spin_thread, NULL));
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		/* /proc/self/task has one entry in the child. */
		char buf[64];
		snprintf(buf, sizeof(buf), "/proc/%d/status", getpid());
		int fd = open(buf, O_RDONLY);
		char s[4096];
		ssize_t n = read(fd, s, sizeof(s) - 1);
		if (n <= 0)
			_exit(2);
		s[n] = 0;
		_exit(strstr(s, "\nThreads:\t1\n") ? 0 : 1);
	}
	int st = mt_wait(pid);
	pthread_cancel(th);
	pthread_join(th, NULL);
	CHECK_EXITED(st, 0);
}

static void fork_private_and_shared_memory(void)
{
	int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED);
	static int priv;
	priv = 1;
	*shared = 1;
	pid_t pid = CHECK_SYS(syscall(SYS_fork));
	if (pid == 0) {
		priv = 2;
		*shared = 2;
		_exit(0);
	}
	mt_wait(pid);
	CHECK_EQ(priv, 1);
	CHECK_EQ(*shared, 2);
}

static volatile int vfork_var;

static void raw_vfork_suspends_parent(void)
{
	vfork_var = 0;
	int64_t t0 = mt_now_ns();
	pid_t pid = vfork();
	if (pid == 0) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		vfork_var = 42;
		_exit(0);
	}
	CHECK_GE(pid, 1);
	/* We resume after the child's exit, and see its writes. */
	CHECK_EQ(vfork_var, 42);
	CHECK_GE(mt_now_ns() - t0, 49 * 1000 * 1000);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void vfork_resumes_at_exec(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = vfork();
	if (pid == 0) {
		char *argv[] = {"/bin/sh", "-c", "read x; exit 7", NULL};
		dup2(p[0], 0);
		execv(argv[0], argv);
		_exit(127);
	}
	/* The child is blocked in read after exec; we run. */
	CHECK_EQ(write(p[1], "\n", 1), 1);
	int st = mt_wait(pid);
	CHECK_EXITED(st, 7);
}

static void parent_death_reparents_to_init(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t mid = CHECK_SYS(syscall(SYS_fork));
	if (mid == 0) {
		pid_t g = syscall(SYS_fork);
		if (g == 0) {
			char c;
			close(p[1]);
			/* Wait until our parent has died and we were
			 * reparented, then for init's go-ahead (EOF). */
			while (getppid() != 1) {
				struct timespec ts = {0, 2 * 1000 * 1000};
				nanosleep(&ts, NULL);
			}
			if (read(p[0], &c, 1) < 0)
				_exit(3);
			_exit(getppid() == 1 ? 9 : 8);
		}
		_exit(0);
	}
	close(p[0]);
	int st = mt_wait(mid);
	CHECK_EXITED(st, 0);
	close(p[1]);
	/* We are init: the orphan becomes our child. */
	int st2;
	pid_t r = CHECK_SYS(waitpid(-1, &st2, 0));
	CHECK_NE(r, mid);
	CHECK_EXITED(st2, 9);
}

static void fork_many_sequentially(void)
{
	for (int i = 0; i < 100; i++) {
		pid_t pid = syscall(SYS_fork);
		if (pid == 0)
			_exit(i & 0x7f);
		if (pid < 0)
			FAIL("fork %d: %s", i, mt_errname(errno));
		int st = mt_wait(pid);
		CHECK_EXITED(st, i & 0x7f);
	}
}

static const struct mt_case cases[] = {
	MT_CASE(raw_fork_returns_twice),
	MT_CASE(fork_shares_file_offsets),
	MT_CASE(fork_copies_fd_table),
	MT_CASE(fork_keeps_mask_and_handlers_drops_pending),
	MT_CASE(fork_keeps_altstack),
	MT_CASE(fork_resets_timers_and_usage),
	MT_CASE(fork_copies_only_calling_thread),
	MT_CASE(fork_private_and_shared_memory),
	MT_CASE(raw_vfork_suspends_parent),
	MT_CASE(vfork_resumes_at_exec),
	MT_CASE(parent_death_reparents_to_init),
	MT_CASE(fork_many_sequentially),
};

MT_MAIN(cases)
