//go:build ignore

/* micro: syscall micro-benchmarks for tools/bench. `micro NAME ITERS [ARG]`
 * runs ITERS operations of NAME and prints the mean nanoseconds per
 * operation. ARG is a path some benchmarks need (a file to read, a
 * directory to fill). Built static, run natively and under `runsc do`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
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

static const char *arg; /* the optional path argument */

static void bench_gettid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_gettid);
}

static int zero_fd = -1;

static void bench_readzero(long n)
{
	char c;
	if (zero_fd < 0 && (zero_fd = open("/dev/zero", O_RDONLY)) < 0)
		die("open /dev/zero");
	for (long i = 0; i < n; i++)
		if (read(zero_fd, &c, 1) != 1)
			die("read /dev/zero");
}

static void bench_forkexec(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			char *argv[] = { "true", NULL };
			execve("/bin/true", argv, (char *[]){ NULL });
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("fork+exec /bin/true");
	}
}

static void *thread_body(void *a) { return a; }

static void bench_thread(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, thread_body, NULL))
			die("pthread_create");
		pthread_join(th, NULL);
	}
}

/* pipethru: ns per 64 KiB chunk streamed through a pipe to a child. */
static void bench_pipethru(long n)
{
	static char buf[65536];
	int p[2];
	if (pipe(p))
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], buf, sizeof buf) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	for (long i = 0; i < n; i++) {
		size_t done = 0;
		while (done < sizeof buf) {
			ssize_t w = write(p[1], buf + done, sizeof buf - done);
			if (w <= 0)
				die("write pipe");
			done += w;
		}
	}
	close(p[1]);
	waitpid(pid, NULL, 0);
}

/* getdents: ns per full listing of ARG, a directory of 10,000 files the
 * first call creates. */
static void bench_getdents(long n)
{
	static int made;
	if (!made) {
		mkdir(arg, 0755);
		char path[4096];
		for (int i = 0; i < 10000; i++) {
			snprintf(path, sizeof path, "%s/f%05d", arg, i);
			int fd = open(path, O_CREAT | O_WRONLY, 0644);
			if (fd < 0)
				die("create");
			close(fd);
		}
		made = 1;
	}
	for (long i = 0; i < n; i++) {
		DIR *d = opendir(arg);
		if (!d)
			die("opendir");
		long count = 0;
		while (readdir(d))
			count++;
		closedir(d);
		if (count != 10002) {
			fprintf(stderr, "getdents: %ld entries\n", count);
			exit(2);
		}
	}
}

static char bigbuf[1 << 20];

/* seqread: ns per pass over the file ARG in 1 MiB reads. */
static void bench_seqread(long n)
{
	for (long i = 0; i < n; i++) {
		int fd = open(arg, O_RDONLY);
		if (fd < 0)
			die("open");
		ssize_t r;
		while ((r = read(fd, bigbuf, sizeof bigbuf)) > 0)
			;
		if (r < 0)
			die("read");
		close(fd);
	}
}

/* seqwrite: ns per 1 GiB written in 1 MiB writes to the new file ARG,
 * removed after each pass. */
static void bench_seqwrite(long n)
{
	memset(bigbuf, 'w', sizeof bigbuf);
	for (long i = 0; i < n; i++) {
		int fd = open(arg, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0)
			die("open");
		for (int j = 0; j < 1024; j++)
			if (write(fd, bigbuf, sizeof bigbuf) != sizeof bigbuf)
				die("write");
		close(fd);
		unlink(arg);
	}
}

/* randread: ns per 4 KiB pread at a random aligned offset of ARG. */
static void bench_randread(long n)
{
	static int fd = -1;
	static off_t pages;
	if (fd < 0) {
		if ((fd = open(arg, O_RDONLY)) < 0)
			die("open");
		pages = lseek(fd, 0, SEEK_END) / 4096;
		if (pages <= 0)
			die("empty file");
	}
	uint64_t x = 88172645463325252ull;
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (pread(fd, bigbuf, 4096, (off_t)(x % pages) * 4096) != 4096)
			die("pread");
	}
}

/* mmapfault: ns per page first touched in a fresh anonymous mapping. */
static void bench_mmapfault(long n)
{
	size_t len = (size_t)n * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	for (long i = 0; i < n; i++)
		p[i * 4096] = 1;
	munmap(p, len);
}

/* untar: ns per extraction of the tarball ARG by /bin/tar into a new
 * directory below $MOAT_BENCH_DIR. */
static void bench_untar(long n)
{
	static int seq;
	const char *base = getenv("MOAT_BENCH_DIR");
	if (!base)
		base = "/dev/shm";
	for (long i = 0; i < n; i++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/moat-untar-%d-%d", base, (int)getpid(), seq++);
		if (mkdir(dir, 0755))
			die("mkdir");
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			char *argv[] = { "tar", "-xf", (char *)arg, "-C", dir, NULL };
			execve("/bin/tar", argv, (char *[]){ NULL });
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("tar -x");
	}
}

/* sysemu: the floor of a ptrace sandbox on this machine: ns per getpid of
 * a child trapped with PTRACE_SYSEMU, with the GETREGS and SETREGS a
 * user-space kernel needs to serve each call. Native only. The child
 * follows the tracer's CPU, as Moat's stub threads do: a round trip whose
 * wake-ups cross CPUs costs half as much again on this VM. */
static void bench_sysemu(long n)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		for (long i = 0; i < n; i++)
			syscall(SYS_getpid);
		syscall(SYS_exit_group, 0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		die("waitpid stop");
	struct user_regs_struct regs;
	int bound = -1;
	for (long i = 0; i < n; i++) {
		int cpu = sched_getcpu();
		if (cpu != bound) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(pid, sizeof(set), &set);
			bound = cpu;
		}
		if (ptrace(PTRACE_SYSEMU, pid, 0, 0))
			die("PTRACE_SYSEMU");
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			die("waitpid");
		if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
			die("GETREGS");
		regs.rax = pid; /* what getpid returns */
		if (ptrace(PTRACE_SETREGS, pid, 0, &regs))
			die("SETREGS");
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
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
	{ "gettid", bench_gettid },
	{ "readzero", bench_readzero },
	{ "forkexec", bench_forkexec },
	{ "thread", bench_thread },
	{ "pipethru", bench_pipethru },
	{ "getdents", bench_getdents },
	{ "seqread", bench_seqread },
	{ "seqwrite", bench_seqwrite },
	{ "randread", bench_randread },
	{ "mmapfault", bench_mmapfault },
	{ "untar", bench_untar },
	{ "sysemu", bench_sysemu },
};

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: micro NAME ITERS [ARG]\n");
		return 2;
	}
	arg = argc == 4 ? argv[3] : "";
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
