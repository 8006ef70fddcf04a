/*
 * syscallfuzz: issues random system calls with random and edge-case
 * arguments, to shake the Sentry. Meant to run inside a sandbox:
 *
 *   gcc -static -O1 -o syscallfuzz tools/syscallfuzz/syscallfuzz.c
 *   runsc do -- ./syscallfuzz -seed 1 -time 600 -count 0 -path /tmp/canary/f
 *
 * Never run it natively as root: even with the skip list below, random
 * syscalls can change the host (signals, scheduling, files under -path).
 *
 * Design: the supervisor (this process) forks a worker per batch. The
 * worker puts itself in its own process group, points fds 0-2 at
 * /dev/null, opens a pool of descriptors (pipes, /dev files, an eventfd,
 * an epoll, a directory, the -path files), maps scratch pages and then
 * makes -batch syscalls, each with a random number and six arguments drawn
 * from classes (small ints, pool fds, pointers good and bad, paths,
 * lengths, flags, random words). A worker may crash, block or exit early
 * through exit/exit_group: a 20 ms interval timer interrupts blocking
 * calls, and the supervisor waits up to -wait ms, then kills the worker's
 * process group. Children a worker forks exit at once. Everything
 * derives from -seed, so a run can be replayed (up to timing).
 *
 * Skipped numbers (never issued) are those that would hurt the
 * supervisor or, natively, the host; see skip[] below. kill, tkill,
 * tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo are issued, but their pid
 * arguments are rewritten to the worker itself, its group, or a pid that
 * does not exist, so they cannot reach the supervisor.
 *
 * Output: one line per -report seconds and a final
 *   syscallfuzz: done seed S syscalls N batches B crashed C timeouts T exited E
 * Exit status 0 unless the supervisor itself failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_NR 463
#define PG 4096UL

static uint64_t rng;

static uint64_t next(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t pick(uint64_t n)
{
	return n ? next() % n : 0;
}

/* Numbers never issued, with why. */
static const int skip[] = {
	SYS_reboot,           /* natively: reboots the host */
	SYS_kexec_load,       /* natively: host kernel */
	SYS_kexec_file_load,  /* natively: host kernel */
	SYS_init_module,      /* natively: host kernel */
	SYS_finit_module,     /* natively: host kernel */
	SYS_delete_module,    /* natively: host kernel */
	SYS_swapon,           /* natively: host swap */
	SYS_swapoff,          /* natively: host swap */
	SYS_acct,             /* natively: host accounting */
	SYS_settimeofday,     /* natively: host clock */
	SYS_clock_settime,    /* natively: host clock */
	SYS_adjtimex,         /* natively: host clock */
	SYS_clock_adjtime,    /* natively: host clock */
	SYS_sethostname,      /* natively: host name */
	SYS_setdomainname,    /* natively: host name */
	SYS_mount,            /* natively: host mounts */
	SYS_umount2,          /* natively: host mounts */
	SYS_pivot_root,       /* natively: host mounts */
	SYS_syslog,           /* natively: clears the host's log */
	SYS_iopl,             /* natively: port I/O */
	SYS_ioperm,           /* natively: port I/O */
	SYS_vhangup,          /* hangs up the terminal of the run */
	SYS_ptrace,           /* could attach to and stop the supervisor */
	SYS_process_vm_writev, /* could write the supervisor's memory */
	SYS_pidfd_send_signal, /* could signal the supervisor */
	SYS_pidfd_getfd,      /* could steal the supervisor's descriptors */
	SYS_perf_event_open,  /* natively: host performance counters */
	SYS_bpf,              /* natively: host BPF */
	SYS_quotactl,         /* natively: host quotas */
	SYS_setpriority,      /* could renice the supervisor */
	SYS_sched_setscheduler, /* natively: real-time policy hogs a CPU */
	SYS_sched_setattr,    /* natively: real-time policy hogs a CPU */
	SYS_ioprio_set,       /* could change the supervisor's I/O class */
	SYS_prlimit64,        /* could lower the supervisor's limits */
	SYS_migrate_pages,    /* natively: moves other processes' pages */
	SYS_move_pages,       /* natively: moves other processes' pages */
};

static int skipped[MAX_NR];

static char *paths[64];
static int npaths;
static int fds[64];
static int nfds;
static char *scratch;     /* 16 read-write pages */
static char *ro_page;     /* a read-only page */
static char *guard;       /* the page after scratch is unmapped */
static pid_t self_pid;
/* issued counts the syscalls workers made (a shared page). */
static volatile long *issued;

static const uint64_t sizes[] = {
	0, 1, 2, 7, 8, 16, 64, 100, 255, 256, 4095, 4096, 4097, 8192, 65536, 1 << 20,
	1ULL << 31, 1ULL << 32, 1ULL << 40, 0x7fffffff, 0xffffffff, ~0ULL, ~0ULL >> 1, (uint64_t)-4096,
};

static uint64_t arg_int(void)
{
	static const int64_t v[] = {0, 1, 2, 3, -1, -2, 4, 5, 8, 9, 15, 16, 31, 32, 63, 64, 65, 100, 1024,
				    INT32_MAX, INT32_MIN, -4096, 0x80000000LL};
	return (uint64_t)v[pick(sizeof(v) / sizeof(v[0]))];
}

static uint64_t arg_fd(void)
{
	switch (pick(8)) {
	case 0:
		return (uint64_t)-1;
	case 1:
		return 1000 + pick(100);
	case 2:
		return (uint64_t)(int64_t)-100; /* AT_FDCWD */
	default:
		return nfds ? (uint64_t)fds[pick(nfds)] : 0;
	}
}

static uint64_t arg_ptr(void)
{
	switch (pick(12)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 0xffff800000000000ULL; /* kernel half */
	case 3:
		return 0x0000800000000000ULL; /* first non-canonical */
	case 4:
		return (uint64_t)(uintptr_t)guard; /* unmapped */
	case 5:
		return (uint64_t)(uintptr_t)(guard - 1 - pick(16)); /* crosses into it */
	case 6:
		return (uint64_t)(uintptr_t)ro_page;
	case 7:
		return next();
	default:
		return (uint64_t)(uintptr_t)(scratch + pick(16 * PG - 256));
	}
}

static uint64_t arg_path(void)
{
	if (pick(6) == 0)
		return arg_ptr();
	return (uint64_t)(uintptr_t)paths[pick(npaths)];
}

static uint64_t arg_len(void)
{
	return sizes[pick(sizeof(sizes) / sizeof(sizes[0]))];
}

static uint64_t arg_flags(void)
{
	switch (pick(5)) {
	case 0:
		return 0;
	case 1:
		return ~0ULL;
	case 2:
		return 1ULL << pick(32);
	case 3:
		return (1ULL << pick(32)) | (1ULL << pick(32));
	default:
		return next() & 0xffffffffULL;
	}
}

static uint64_t arg_any(void)
{
	switch (pick(7)) {
	case 0:
		return arg_int();
	case 1:
		return arg_fd();
	case 2:
		return arg_ptr();
	case 3:
		return arg_path();
	case 4:
		return arg_len();
	case 5:
		return arg_flags();
	default:
		return next();
	}
}

static void open_pool(void)
{
	nfds = 0;
	int p[2];
	if (pipe(p) == 0) {
		fds[nfds++] = p[0];
		fds[nfds++] = p[1];
	}
	if (pipe2(p, O_NONBLOCK) == 0) {
		fds[nfds++] = p[0];
		fds[nfds++] = p[1];
		if (write(p[1], "data", 4) < 0) {
		}
	}
	const char *files[] = {"/dev/null", "/dev/zero", "/dev/urandom", "/", "/proc/self", "/proc/self/maps", "/tmp"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = open(files[i], O_RDONLY);
		if (fd >= 0)
			fds[nfds++] = fd;
	}
	for (int i = 0; i < npaths && nfds < 60; i++) {
		int fd = open(paths[i], O_RDWR);
		if (fd < 0)
			fd = open(paths[i], O_RDONLY);
		if (fd >= 0)
			fds[nfds++] = fd;
	}
	int fd = (int)syscall(SYS_eventfd2, 3, 0);
	if (fd >= 0)
		fds[nfds++] = fd;
	fd = (int)syscall(SYS_epoll_create1, 0);
	if (fd >= 0)
		fds[nfds++] = fd;
	fds[nfds++] = 0;
	fds[nfds++] = 1;
	fds[nfds++] = 2;
}

/* sanitize rewrites arguments that could reach the supervisor. */
static void sanitize(long nr, uint64_t *a)
{
	pid_t me = (pid_t)syscall(SYS_getpid);
	uint64_t safe_pid[] = {(uint64_t)me, 0, (uint64_t)(-(int64_t)me), 99999};
	switch (nr) {
	case SYS_kill:
	case SYS_rt_sigqueueinfo:
		a[0] = safe_pid[pick(4)];
		break;
	case SYS_tkill:
		a[0] = pick(2) ? (uint64_t)syscall(SYS_gettid) : 99999;
		break;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		a[0] = me;
		a[1] = pick(2) ? (uint64_t)syscall(SYS_gettid) : 99999;
		break;
	case SYS_setpgid:
		a[0] = 0;
		break;
	case SYS_mmap:
		/* No populating or locking of huge ranges: that measures the
		 * machine's memory, not the Sentry. */
		if (a[1] > (64ULL << 20))
			a[3] &= ~(uint64_t)(MAP_POPULATE | MAP_LOCKED);
		break;
	case SYS_mlock:
	case SYS_mlock2:
		if (a[1] > (64ULL << 20))
			a[1] = 64ULL << 20;
		break;
	case SYS_mlockall:
		a[0] &= ~(uint64_t)MCL_CURRENT;
		break;
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void worker(uint64_t seed, long batch)
{
	rng = seed ? seed : 1;
	setpgid(0, 0);
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
	scratch = mmap(NULL, 18 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED)
		_exit(90);
	ro_page = scratch + 16 * PG;
	guard = scratch + 17 * PG;
	munmap(guard, PG);
	/* The read-only page holds a path, an iovec-like pattern. */
	strcpy(ro_page, "/dev/null");
	mprotect(ro_page, PG, PROT_READ);
	for (size_t i = 0; i < 16 * PG; i++)
		scratch[i] = (char)next();
	open_pool();
	/* A 20 ms interval timer interrupts calls that block (EINTR), unless
	 * the random calls change it; the supervisor's deadline is the
	 * backstop. */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 20000}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < batch; i++) {
		long nr;
		do {
			nr = (long)pick(MAX_NR);
		} while (skipped[nr]);
		uint64_t a[6];
		for (int j = 0; j < 6; j++)
			a[j] = arg_any();
		sanitize(nr, a);
		__atomic_add_fetch(issued, 1, __ATOMIC_RELAXED);
		long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (r == 0 && (nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone || nr == SYS_clone3)) {
			/* A child (or a thread on our stack): leave at once. */
			syscall(SYS_exit_group, 0);
		}
		if ((pid_t)syscall(SYS_getpid) != self_pid && self_pid != 0) {
			/* Something made us a different process. */
			syscall(SYS_exit_group, 0);
		}
	}
	syscall(SYS_exit_group, 0);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1;
	long seconds = 20, count = 0, batch = 500, wait_ms = 1000, report = 5;
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "-seed") == 0)
			seed = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-time") == 0)
			seconds = strtol(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-count") == 0)
			count = strtol(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-batch") == 0)
			batch = strtol(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-wait") == 0)
			wait_ms = strtol(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-report") == 0)
			report = strtol(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-path") == 0 && npaths < 48)
			paths[npaths++] = argv[++i];
		else {
			fprintf(stderr,
				"usage: %s [-seed N] [-time SECONDS] [-count SYSCALLS] [-batch N] [-wait MS] [-report S] [-path P]...\n",
				argv[0]);
			return 2;
		}
	}
	static const char *fixed[] = {"/", "/dev/null", "/proc/self/status", "/nonexistent", "/tmp", "",
				      "/etc/passwd", "/proc/self/fd/0", "..", "/dev/zero"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && npaths < 64; i++)
		paths[npaths++] = (char *)fixed[i];
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		skipped[skip[i]] = 1;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	int64_t start = now_ms(), last_report = start;
	long calls = 0, batches = 0, crashed = 0, timeouts = 0, exited_early = 0;
	issued = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (issued == MAP_FAILED) {
		fprintf(stderr, "syscallfuzz: mmap: %s\n", strerror(errno));
		return 1;
	}
	rng = seed;
	for (;;) {
		if (seconds > 0 && now_ms() - start >= seconds * 1000)
			break;
		calls = *issued;
		if (count > 0 && calls >= count)
			break;
		uint64_t wseed = next();
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "syscallfuzz: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			self_pid = getpid();
			worker(wseed, batch);
		}
		batches++;
		int64_t deadline = now_ms() + wait_ms;
		int st = 0;
		pid_t r;
		for (;;) {
			r = waitpid(pid, &st, WNOHANG);
			if (r == pid || (r < 0 && errno != EINTR))
				break;
			if (now_ms() >= deadline) {
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				timeouts++;
				r = waitpid(pid, &st, 0);
				break;
			}
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (r == pid && WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL)
			crashed++;
		if (r == pid && WIFEXITED(st) && WEXITSTATUS(st) != 0)
			exited_early++;
		/* Reap anything a worker left behind (we may be init). */
		kill(-pid, SIGKILL);
		while (waitpid(-1, NULL, WNOHANG | __WALL) > 0) {
		}
		if (report > 0 && now_ms() - last_report >= report * 1000) {
			last_report = now_ms();
			printf("syscallfuzz: %lds syscalls %ld batches %ld crashed %ld timeouts %ld\n",
			       (long)((last_report - start) / 1000), calls, batches, crashed, timeouts);
		}
	}
	calls = *issued;
	printf("syscallfuzz: done seed %llu syscalls %ld batches %ld crashed %ld timeouts %ld exited %ld\n",
	       (unsigned long long)seed, calls, batches, crashed, timeouts, exited_early);
	return 0;
}
