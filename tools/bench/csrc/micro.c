//go:build ignore

/* micro: syscall micro-benchmarks for tools/bench. `micro NAME ITERS` runs
 * ITERS operations of NAME and prints the mean nanoseconds per operation.
 * Built static, run natively and under `runsc do`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void bench_getpid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
}

static void bench_clock_gettime(long n)
{
	struct timespec ts;
	for (long i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
}

static void bench_fork(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		int st;
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
	}
}

static void bench_pipe(long n)
{
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	char c = 'x';
	if (pid == 0) {
		for (long i = 0; i < n; i++) {
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (long i = 0; i < n; i++) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			die("pipe ping-pong");
	}
	waitpid(pid, NULL, 0);
}

static uint32_t fut;

static void fwait(uint32_t val)
{
	while (__atomic_load_n(&fut, __ATOMIC_ACQUIRE) == val)
		syscall(SYS_futex, &fut, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void fset(uint32_t val)
{
	__atomic_store_n(&fut, val, __ATOMIC_RELEASE);
	syscall(SYS_futex, &fut, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static long futex_n;

static void *futex_partner(void *arg)
{
	(void)arg;
	for (long i = 0; i < futex_n; i++) {
		fwait(0); /* wait for 1 */
		fset(0);
	}
	return NULL;
}

static void bench_futex(long n)
{
	futex_n = n;
	fut = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, futex_partner, NULL))
		die("pthread_create");
	for (long i = 0; i < n; i++) {
		fset(1);
		fwait(1); /* wait for 0 */
	}
	pthread_join(th, NULL);
}

static void bench_openclose(long n)
{
	for (long i = 0; i < n; i++) {
		int fd = open("/etc/passwd", O_RDONLY);
		if (fd < 0)
			die("open");
		close(fd);
	}
}

static void bench_stat(long n)
{
	struct stat st;
	for (long i = 0; i < n; i++)
		if (stat("/etc/passwd", &st))
			die("stat");
}

static const struct {
	const char *name;
	void (*fn)(long);
} benches[] = {
	{ "getpid", bench_getpid },
	{ "clock_gettime", bench_clock_gettime },
	{ "fork", bench_fork },
	{ "pipe", bench_pipe },
	{ "futex", bench_futex },
	{ "openclose", bench_openclose },
	{ "stat", bench_stat },
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: micro NAME ITERS\n");
		return 2;
	}
	long n = atol(argv[2]);
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++) {
		if (strcmp(argv[1], benches[i].name) == 0) {
			benches[i].fn(n / 10 + 1); /* warm up */
			int64_t t0 = now_ns();
			benches[i].fn(n);
			int64_t t1 = now_ns();
			printf("%.1f\n", (double)(t1 - t0) / (double)n);
			return 0;
		}
	}
	fprintf(stderr, "micro: unknown benchmark %s\n", argv[1]);
	return 2;
}
