//go:build ignore

/* memfd_signalfd: memfd_create (flags, size, names, mappings, seals) and
 * signalfd (reading queued signals as records, masks, readiness, errors). */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void memfd_basic_io(void)
{
	int fd = CHECK_SYS(memfd_create("moat-io", 0));
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	CHECK_EQ(write(fd, "hello memfd", 11), 11);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 11);
	char buf[16];
	CHECK_EQ(pread(fd, buf, sizeof(buf), 6), 5);
	CHECK_MEMEQ(buf, "memfd", 5);
	CHECK_SYS(ftruncate(fd, 4096));
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_size, 4096);
	CHECK_EQ(pread(fd, buf, 1, 100), 1);
	CHECK_EQ(buf[0], 0);
	CHECK_SYS(ftruncate(fd, 3));
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 3);
}

static void memfd_flags_and_errors(void)
{
	int fd = CHECK_SYS(memfd_create("moat-cloexec", MFD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_ERR(memfd_create("x", 0x100), EINVAL);
	char longname[300];
	memset(longname, 'n', sizeof(longname));
	longname[sizeof(longname) - 1] = 0;
	CHECK_ERR(memfd_create(longname, 0), EINVAL);
	CHECK_ERR(syscall(SYS_memfd_create, (char *)8, 0), EFAULT);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
}

static void memfd_proc_link_name(void)
{
	int fd = CHECK_SYS(memfd_create("moat-name", 0));
	char path[64], link[128];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	CHECK_STREQ(link, "/memfd:moat-name (deleted)");
}

static void memfd_mmap_shared_view(void)
{
	int fd = CHECK_SYS(memfd_create("moat-map", 0));
	CHECK_SYS(ftruncate(fd, 8192));
	char *a = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	char *b = CHECK_MAP(mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0));
	a[5000] = 'z';
	CHECK_EQ(b[5000], 'z');
	char c;
	CHECK_EQ(pread(fd, &c, 1, 5000), 1);
	CHECK_EQ(c, 'z');
	CHECK_EQ(pwrite(fd, "w", 1, 10), 1);
	CHECK_EQ(a[10], 'w');
	munmap(a, 8192);
	munmap(b, 8192);
}

static void memfd_seals(void)
{
	int fd = CHECK_SYS(memfd_create("moat-seal", MFD_ALLOW_SEALING));
	CHECK_EQ(fcntl(fd, F_GET_SEALS), 0);
	CHECK_EQ(write(fd, "data", 4), 4);
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW);
	CHECK_ERR(ftruncate(fd, 2), EPERM);
	CHECK_ERR(ftruncate(fd, 100), EPERM);
	CHECK_ERR(write(fd, "more", 4), EPERM);
	/* Overwriting within the size is allowed. */
	CHECK_EQ(pwrite(fd, "DA", 2, 0), 2);
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	CHECK_ERR(pwrite(fd, "x", 1, 0), EPERM);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EPERM);
	void *ro = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	munmap(ro, 4096);
	CHECK_SYS(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL));
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), EPERM);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
}

static void memfd_seal_errors(void)
{
	int fd = CHECK_SYS(memfd_create("moat-noseal", 0));
	/* Without MFD_ALLOW_SEALING the file starts with F_SEAL_SEAL. */
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
	int s = CHECK_SYS(memfd_create("moat-seal2", MFD_ALLOW_SEALING));
	CHECK_ERR(fcntl(s, F_ADD_SEALS, 0x1000), EINVAL);
	/* F_SEAL_WRITE while a writable shared mapping exists: EBUSY. */
	CHECK_SYS(ftruncate(s, 4096));
	void *w = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, s, 0));
	CHECK_ERR(fcntl(s, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);
	munmap(w, 4096);
	CHECK_SYS(fcntl(s, F_ADD_SEALS, F_SEAL_WRITE));
	int pfd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	CHECK_ERR(fcntl(pfd, F_GET_SEALS), EINVAL);
}

static int block(int sig, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, sig);
	return sigprocmask(SIG_BLOCK, set, NULL);
}

static void signalfd_reads_record(void)
{
	sigset_t s;
	CHECK_SYS(block(SIGUSR1, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	struct signalfd_siginfo si;
	CHECK_ERR(read(fd, &si, sizeof(si)), EAGAIN);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	memset(&si, 0, sizeof(si));
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGUSR1);
	CHECK_EQ(si.ssi_code, SI_USER);
	CHECK_EQ(si.ssi_pid, (uint32_t)getpid());
	CHECK_EQ(si.ssi_uid, getuid());
	/* Consumed: no longer pending. */
	sigset_t p;
	CHECK_SYS(sigpending(&p));
	CHECK_EQ(sigismember(&p, SIGUSR1), 0);
}

static void signalfd_sigqueue_value(void)
{
	sigset_t s;
	CHECK_SYS(block(SIGRTMIN, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, 0));
	union sigval v = { .sival_int = 31337 };
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN, v));
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN, v));
	struct signalfd_siginfo si[4];
	/* Both queued instances come back in one read. */
	CHECK_EQ(read(fd, si, sizeof(si)), (ssize_t)(2 * sizeof(si[0])));
	CHECK_EQ(si[0].ssi_code, SI_QUEUE);
	CHECK_EQ(si[0].ssi_int, 31337);
	CHECK_EQ(si[1].ssi_signo, (uint32_t)SIGRTMIN);
}

static void signalfd_poll_and_mask_update(void)
{
	sigset_t s;
	CHECK_SYS(block(SIGUSR1, &s));
	sigaddset(&s, SIGUSR2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	sigset_t only1;
	sigemptyset(&only1);
	sigaddset(&only1, SIGUSR1);
	int fd = CHECK_SYS(signalfd(-1, &only1, SFD_NONBLOCK | SFD_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_SYS(raise(SIGUSR2));
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	CHECK_EQ(poll(&pf, 1, 0), 0);
	/* Widen the mask of the same descriptor. */
	CHECK_EQ(signalfd(fd, &s, 0), fd);
	CHECK_EQ(poll(&pf, 1, 0), 1);
	struct signalfd_siginfo si;
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGUSR2);
}

static void signalfd_errors(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CHECK_ERR(signalfd(-1, &s, 0x1), EINVAL);
	int p[2];
	CHECK_SYS(pipe(p));
	CHECK_ERR(signalfd(p[0], &s, 0), EINVAL);
	CHECK_ERR(signalfd(999, &s, 0), EBADF);
	CHECK_ERR(syscall(SYS_signalfd4, -1, &s, 4, 0), EINVAL);
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	char small[8];
	CHECK_ERR(read(fd, small, sizeof(small)), EINVAL);
	CHECK_ERR(write(fd, small, sizeof(small)), EINVAL);
}

static void signalfd_ignores_sigkill_stop(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGKILL);
	sigaddset(&s, SIGSTOP);
	sigaddset(&s, SIGUSR2);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &s, NULL));
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	CHECK_SYS(raise(SIGUSR2));
	struct signalfd_siginfo si;
	CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	CHECK_EQ(si.ssi_signo, SIGUSR2);
}

static void signalfd_child_own_signals(void)
{
	sigset_t s;
	CHECK_SYS(block(SIGUSR1, &s));
	int fd = CHECK_SYS(signalfd(-1, &s, SFD_NONBLOCK));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct signalfd_siginfo si;
		/* The parent's pending signals are not ours. */
		CHILD_CHECK(read(fd, &si, sizeof(si)) == -1 && errno == EAGAIN);
		raise(SIGUSR1);
		CHILD_CHECK(read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si));
		CHILD_CHECK(si.ssi_pid == (uint32_t)getpid());
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	struct signalfd_siginfo si;
	CHECK_ERR(read(fd, &si, sizeof(si)), EAGAIN);
}

static const struct mt_case cases[] = {
	MT_CASE(memfd_basic_io),
	MT_CASE(memfd_flags_and_errors),
	MT_CASE(memfd_proc_link_name),
	MT_CASE(memfd_mmap_shared_view),
	MT_CASE(memfd_seals),
	MT_CASE(memfd_seal_errors),
	MT_CASE(signalfd_reads_record),
	MT_CASE(signalfd_sigqueue_value),
	MT_CASE(signalfd_poll_and_mask_update),
	MT_CASE(signalfd_errors),
	MT_CASE(signalfd_ignores_sigkill_stop),
	MT_CASE(signalfd_child_own_signals),
};

MT_MAIN(cases)
