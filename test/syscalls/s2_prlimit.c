//go:build ignore

/* s2_prlimit: prlimit64, getrlimit and setrlimit: reading and setting our
 * own and a child's limits, the old value, and the errors for resources,
 * soft above hard, raising hard limits, other users' processes, missing
 * processes, bad pointers and RLIMIT_NOFILE above fs.nr_open. Limits are
 * changed only in children so they do not outlive a case. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw_prlimit(pid_t pid, int res, const struct rlimit *n, struct rlimit *o)
{
	return syscall(SYS_prlimit64, pid, res, n, o);
}

static void get_self_matches_getrlimit(void)
{
	static const int res[] = { RLIMIT_NOFILE, RLIMIT_STACK, RLIMIT_CORE,
				   RLIMIT_FSIZE, RLIMIT_NPROC, RLIMIT_AS };
	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		struct rlimit a, b;
		CHECK_SYS(getrlimit(res[i], &a));
		CHECK_SYS(raw_prlimit(0, res[i], NULL, &b));
		CHECK_EQ(a.rlim_cur, b.rlim_cur);
		CHECK_EQ(a.rlim_max, b.rlim_max);
		CHECK_SYS(raw_prlimit(getpid(), res[i], NULL, &b));
		CHECK_EQ(a.rlim_cur, b.rlim_cur);
	}
}

static void set_returns_old_value(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		struct rlimit n = { 1000, 2000 }, o;
		CHILD_CHECK(raw_prlimit(0, RLIMIT_CORE, &n, NULL) == 0);
		struct rlimit n2 = { 500, 1500 };
		CHILD_CHECK(raw_prlimit(0, RLIMIT_CORE, &n2, &o) == 0);
		CHILD_CHECK(o.rlim_cur == 1000 && o.rlim_max == 2000);
		CHILD_CHECK(getrlimit(RLIMIT_CORE, &o) == 0);
		CHILD_CHECK(o.rlim_cur == 500 && o.rlim_max == 1500);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void bad_resource_einval(void)
{
	struct rlimit r;
	CHECK_ERR(raw_prlimit(0, RLIM_NLIMITS, NULL, &r), EINVAL);
	CHECK_ERR(raw_prlimit(0, -1, NULL, &r), EINVAL);
	CHECK_ERR(syscall(SYS_getrlimit, RLIM_NLIMITS, &r), EINVAL);
	r.rlim_cur = r.rlim_max = 0;
	CHECK_ERR(syscall(SYS_setrlimit, 100, &r), EINVAL);
}

static void soft_above_hard_einval(void)
{
	struct rlimit n = { 200, 100 };
	CHECK_ERR(raw_prlimit(0, RLIMIT_CORE, &n, NULL), EINVAL);
	CHECK_ERR(setrlimit(RLIMIT_CORE, &n), EINVAL);
	n.rlim_cur = RLIM_INFINITY;
	CHECK_ERR(setrlimit(RLIMIT_CORE, &n), EINVAL);
}

static void unprivileged_raise_eperm(void)
{
	AS_USER(
		struct rlimit n = { 10, 20 };
		CHILD_CHECK(setrlimit(RLIMIT_CORE, &n) == 0);
		/* Lowering is allowed, raising the hard limit back is not. */
		struct rlimit up = { 10, 21 };
		CHILD_ERR(setrlimit(RLIMIT_CORE, &up), EPERM);
		CHILD_ERR(raw_prlimit(0, RLIMIT_CORE, &up, NULL), EPERM);
		struct rlimit soft = { 20, 20 };
		CHILD_CHECK(setrlimit(RLIMIT_CORE, &soft) == 0);
	);
}

static void child_limits(void)
{
	int go[2];
	CHECK_SYS(pipe(go));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		char c;
		CHILD_CHECK(read(go[0], &c, 1) == 1);
		struct rlimit r;
		CHILD_CHECK(getrlimit(RLIMIT_CORE, &r) == 0);
		_exit(r.rlim_cur == 4096 && r.rlim_max == 8192 ? 0 : 1);
	}
	struct rlimit n = { 4096, 8192 }, o;
	CHECK_SYS(raw_prlimit(p, RLIMIT_CORE, &n, NULL));
	CHECK_SYS(raw_prlimit(p, RLIMIT_CORE, NULL, &o));
	CHECK_EQ(o.rlim_cur, 4096);
	CHECK_EQ(o.rlim_max, 8192);
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EXITED(mt_wait(p), 0);
}

static void missing_process_esrch(void)
{
	struct rlimit r;
	CHECK_ERR(raw_prlimit(4194305, RLIMIT_CORE, NULL, &r), ESRCH);
}

static void other_user_eperm(void)
{
	pid_t parent = getpid();
	AS_USER(
		struct rlimit r;
		CHILD_ERR(raw_prlimit(parent, RLIMIT_CORE, NULL, &r), EPERM);
		CHILD_CHECK(raw_prlimit(getpid(), RLIMIT_CORE, NULL, &r) == 0);
	);
}

static void bad_pointers_efault(void)
{
	CHECK_ERR(raw_prlimit(0, RLIMIT_CORE, NULL, (void *)1), EFAULT);
	CHECK_ERR(raw_prlimit(0, RLIMIT_CORE, (void *)1, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_CORE, (void *)1), EFAULT);
	CHECK_ERR(syscall(SYS_setrlimit, RLIMIT_CORE, (void *)1), EFAULT);
}

static void nofile_above_nr_open_eperm(void)
{
	int fd = open("/proc/sys/fs/nr_open", O_RDONLY);
	if (fd < 0)
		SKIP("no /proc/sys/fs/nr_open");
	char buf[32] = { 0 };
	CHECK_GT(read(fd, buf, sizeof(buf) - 1), 0);
	unsigned long nr = strtoul(buf, NULL, 10);
	CHECK_GT(nr, 0);
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		/* EPERM even with CAP_SYS_RESOURCE: nr_open caps the hard
		 * limit (in the native run's user namespace the capability
		 * check alone would already refuse it). */
		struct rlimit n = { nr + 1, nr + 1 };
		CHILD_ERR(setrlimit(RLIMIT_NOFILE, &n), EPERM);
		struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
		CHILD_ERR(setrlimit(RLIMIT_NOFILE, &inf), EPERM);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(get_self_matches_getrlimit),
	MT_CASE(set_returns_old_value),
	MT_CASE(bad_resource_einval),
	MT_CASE(soft_above_hard_einval),
	MT_CASE(unprivileged_raise_eperm),
	MT_CASE(child_limits),
	MT_CASE(missing_process_esrch),
	MT_CASE(other_user_eperm),
	MT_CASE(bad_pointers_efault),
	MT_CASE(nofile_above_nr_open_eperm),
};

MT_MAIN(cases)
