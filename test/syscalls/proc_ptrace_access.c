//go:build ignore

/* proc_ptrace_access: the /proc files that show a process's memory (mem,
 * environ, auxv, maps) open only for those that pass the ptrace access
 * check (Linux's mm_access with PTRACE_MODE_FSCREDS): the process
 * itself, a process whose filesystem ids equal the target's real,
 * effective and saved ids while the target is dumpable, or one with
 * CAP_SYS_PTRACE. Mode bits are not enough: root without CAP_SYS_PTRACE
 * (CAP_DAC_OVERRIDE passes the bits) gets EACCES for another user's
 * process, and maps, mode 0444, is EACCES for other users. Likewise
 * readlink of the magic links exe, cwd, root and fd/N
 * (proc_fd_access_allowed) and ns/*, and fdinfo/N, also when access(2)
 * walks through them. A mem descriptor stays with the address space it
 * was opened on: after the process's execve it reads nothing. */
#include "moattest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const files[] = {"mem", "environ", "auxv", "maps", "fdinfo/0", "smaps", "smaps_rollup"};
static const char *const links[] = {"exe", "cwd", "root", "fd/0", "ns/net"};
/* Paths access(2) checks through the magic links. */
static const char *const walks[] = {"cwd/.", "root/."};

/* target forks a process of uid and gid 1000, dumpable, that waits for
 * a byte on *release (the write end is returned there). */
static pid_t target(int *release)
{
	int go[2], hold[2];
	if (pipe(go) < 0 || pipe(hold) < 0)
		return -1;
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		close(go[0]);
		close(hold[1]);
		CHILD_CHECK(setgroups(0, NULL) == 0 && setresgid(1000, 1000, 1000) == 0 &&
			    setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(write(go[1], "x", 1) == 1);
		char c;
		CHILD_CHECK(read(hold[0], &c, 1) == 1);
		_exit(0);
	}
	close(go[1]);
	close(hold[0]);
	char c;
	if (read(go[0], &c, 1) != 1) {
		close(go[0]);
		return -1;
	}
	close(go[0]);
	*release = hold[1];
	return p;
}

/* drop_ptrace removes CAP_SYS_PTRACE from the caller's effective and
 * permitted sets, keeping the rest (CAP_DAC_OVERRIDE too). */
static int drop_ptrace(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[0].effective &= ~(1u << CAP_SYS_PTRACE);
	d[0].permitted &= ~(1u << CAP_SYS_PTRACE);
	return (int)syscall(SYS_capset, &h, d);
}

/* as_reader forks a reader that becomes uid (root keeps its capabilities
 * but CAP_SYS_PTRACE unless keep_ptrace), runs probe on process p and
 * sends back its result; it returns that, or -1 if the reader failed. */
static int as_reader(uid_t uid, int keep_ptrace, int (*probe)(pid_t), pid_t p)
{
	int out[2];
	if (pipe(out) < 0)
		return -1;
	pid_t r = fork();
	if (r < 0)
		return -1;
	if (r == 0) {
		close(out[0]);
		if (uid != 0)
			CHILD_CHECK(setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0 &&
				    setresuid(uid, uid, uid) == 0);
		else if (!keep_ptrace)
			CHILD_CHECK(drop_ptrace() == 0);
		int bits = probe(p);
		CHILD_CHECK(write(out[1], &bits, sizeof(bits)) == sizeof(bits));
		_exit(0);
	}
	close(out[1]);
	int bits = -1;
	if (read(out[0], &bits, sizeof(bits)) != sizeof(bits))
		bits = -1;
	close(out[0]);
	int st;
	if (waitpid(r, &st, 0) != r || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bits = -1;
	return bits;
}

/* open_bits opens each of files of process p, reads each of links and
 * access(2)es each of walks: a bit per file that opened (7), then one per
 * link read (5), then one per walk allowed (2). Every refusal must be
 * EACCES. It runs in a reader (as_reader). */
static int open_bits(pid_t p)
{
	int bits = 0;
	char path[64];
	for (int i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", p, files[i]);
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			bits |= 1 << i;
			close(fd);
		} else {
			CHILD_CHECK(errno == EACCES);
		}
	}
	for (int i = 0; i < 5; i++) {
		char buf[256];
		snprintf(path, sizeof(path), "/proc/%d/%s", p, links[i]);
		if (readlink(path, buf, sizeof(buf)) > 0)
			bits |= 128 << i;
		else
			CHILD_CHECK(errno == EACCES);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", p, walks[i]);
		if (access(path, F_OK) == 0)
			bits |= 4096 << i;
		else
			CHILD_CHECK(errno == EACCES);
	}
	return bits;
}

/* against_target starts a target, runs probe on it from a reader of uid
 * (as_reader), lets the target go and reaps it; it returns the probe's
 * result, or -1 if anything failed. */
static int against_target(uid_t uid, int keep_ptrace, int (*probe)(pid_t))
{
	int release;
	pid_t p = target(&release);
	if (p <= 0)
		return -1;
	int bits = as_reader(uid, keep_ptrace, probe, p);
	if (write(release, "x", 1) != 1 || mt_wait(p) < 0)
		return -1;
	return bits;
}

static void root_without_cap_sys_ptrace_refused(void)
{
	CHECK_EQ(against_target(0, 0, open_bits), 0);
}

static void root_with_cap_sys_ptrace_allowed(void)
{
	CHECK_EQ(against_target(0, 1, open_bits), 0x3fff);
}

static void same_user_allowed(void)
{
	CHECK_EQ(against_target(1000, 0, open_bits), 0x3fff);
}

static void other_user_refused_even_maps(void)
{
	CHECK_EQ(against_target(999, 0, open_bits), 0);
}

/* stat_fields forks a reader that becomes uid, reads /proc/p/stat and
 * returns its fields startcode, endcode and startstack (26-28) and the
 * sum of start_data..env_end (45-51) in f, or -1. */
static int stat_fields(pid_t p, uid_t uid, unsigned long long f[4])
{
	int out[2];
	if (pipe(out) < 0)
		return -1;
	pid_t r = fork();
	if (r < 0)
		return -1;
	if (r == 0) {
		close(out[0]);
		CHILD_CHECK(setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0 &&
			    setresuid(uid, uid, uid) == 0);
		char path[64], buf[1024];
		snprintf(path, sizeof(path), "/proc/%d/stat", p);
		int fd = open(path, O_RDONLY);
		CHILD_CHECK(fd >= 0);
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		CHILD_CHECK(n > 0);
		buf[n] = 0;
		char *q = strrchr(buf, ')');
		CHILD_CHECK(q != NULL);
		unsigned long long v[4] = {0, 0, 0, 0};
		/* Field 3 (state) follows the ')'. */
		int field = 2;
		for (char *tok = strtok(q + 1, " \n"); tok; tok = strtok(NULL, " \n")) {
			field++;
			unsigned long long x = strtoull(tok, NULL, 10);
			if (field >= 26 && field <= 28)
				v[field - 26] = x;
			if (field >= 45 && field <= 51)
				v[3] += x;
		}
		CHILD_CHECK(field >= 51);
		CHILD_CHECK(write(out[1], v, sizeof(v)) == sizeof(v));
		_exit(0);
	}
	close(out[1]);
	int ret = 0;
	if (read(out[0], f, 4 * sizeof(f[0])) != 4 * sizeof(f[0]))
		ret = -1;
	close(out[0]);
	int st;
	if (waitpid(r, &st, 0) != r || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		ret = -1;
	return ret;
}

/* /proc/[pid]/stat's code, stack, data and argument addresses show as
 * startcode = endcode = 1 and zeros to a reader that fails the check. */
static void stat_hides_addresses_from_others(void)
{
	int release;
	pid_t p = target(&release);
	CHECK(p > 0);
	unsigned long long other[4], same[4];
	int r1 = stat_fields(p, 999, other);
	int r2 = stat_fields(p, 1000, same);
	CHECK_EQ(write(release, "x", 1), 1);
	CHECK_SYS(mt_wait(p));
	CHECK_EQ(r1, 0);
	CHECK_EQ(r2, 0);
	CHECK_EQ(other[0], 1);
	CHECK_EQ(other[1], 1);
	CHECK_EQ(other[2], 0);
	CHECK_EQ(other[3], 0);
	CHECK_GT(same[0], 1);
	CHECK_GT(same[2], 0);
	CHECK_GT(same[3], 0);
}

static volatile char marker[16] = "moat-mem-marker";

static void mem_fd_stays_with_its_address_space(void)
{
	int sync[2], hold[2];
	CHECK_SYS(pipe(sync));
	CHECK_SYS(pipe(hold));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		close(sync[0]);
		close(hold[1]);
		char c;
		CHILD_CHECK(write(sync[1], "a", 1) == 1);
		CHILD_CHECK(read(hold[0], &c, 1) == 1);
		CHILD_CHECK(dup2(sync[1], 3) == 3);
		execl("/bin/sh", "sh", "-c", "echo x >&3; exec sleep 100", (char *)NULL);
		_exit(127);
	}
	close(sync[1]);
	close(hold[0]);
	char c;
	CHECK_EQ(read(sync[0], &c, 1), 1);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", p);
	int fd = CHECK_SYS(open(path, O_RDONLY));
	char buf[16];
	CHECK_EQ(pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)marker), 16);
	CHECK(memcmp(buf, (const char *)marker, sizeof(buf)) == 0);
	/* The child execs; its shell writes once the new image runs. */
	CHECK_EQ(write(hold[1], "b", 1), 1);
	ssize_t got = read(sync[0], &c, 1);
	ssize_t n = pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)marker);
	kill(p, SIGKILL);
	mt_wait(p);
	close(fd);
	CHECK_EQ(got, 1);
	CHECK_EQ(n, 0);
}

/* checked_bits opens each of files of process p write-only (bits 0-6),
 * then opens p's personality (bit 7) and reads it (bit 8), and returns
 * the bits of what succeeded. A refused open must be EACCES, a refused
 * read EPERM. It runs in a reader (as_reader). */
static int checked_bits(pid_t p)
{
	int bits = 0;
	char path[64];
	for (int i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", p, files[i]);
		int fd = open(path, O_WRONLY);
		if (fd >= 0) {
			bits |= 1 << i;
			close(fd);
		} else {
			CHILD_CHECK(errno == EACCES);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/personality", p);
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		bits |= 128;
		char buf[32];
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n == 9)
			bits |= 256;
		else
			CHILD_CHECK(n < 0 && errno == EPERM);
		close(fd);
	} else {
		CHILD_CHECK(errno == EACCES);
	}
	return bits;
}

/* A write-only open takes the check too (Linux's proc_mem_open and
 * permission hook), and personality is refused at read. */
static void write_opens_and_personality_checked(void)
{
	/* personality opens, reads nothing */
	CHECK_EQ(against_target(0, 0, checked_bits), 128);
	CHECK_EQ(against_target(0, 1, checked_bits), 0x1ff);
}

static const struct mt_case cases[] = {
	MT_CASE(root_without_cap_sys_ptrace_refused),
	MT_CASE(root_with_cap_sys_ptrace_allowed),
	MT_CASE(same_user_allowed),
	MT_CASE(other_user_refused_even_maps),
	MT_CASE(mem_fd_stays_with_its_address_space),
	MT_CASE(stat_hides_addresses_from_others),
	MT_CASE(write_opens_and_personality_checked),
};

MT_MAIN(cases)
