//go:build ignore

/* ids_caps: the uid/gid family (setuid, setreuid, setresuid, setfsuid and
 * their gid twins, getgroups/setgroups) and capget/capset: the rules for
 * an unprivileged process, -1 meaning "unchanged", saved ids, the fs ids
 * returned as the old value, and capability sets across id changes. Each
 * case drops privileges in a child. */
#include "moattest.h"

#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	if (pid < 0)
		return -1;
	return mt_wait(pid);
}

#define IN_CHILD(body)                            \
	static void body##_child(void);           \
	static void body(void)                    \
	{                                         \
		int st = run_child(body##_child); \
		CHECK_EXITED(st, 0);              \
	}                                         \
	static void body##_child(void)

static void getresuid_values(void)
{
	uid_t r, e, s;
	CHECK_SYS(getresuid(&r, &e, &s));
	CHECK_EQ(r, getuid());
	CHECK_EQ(e, geteuid());
	CHECK_EQ(s, 0);
	gid_t gr, ge, gs;
	CHECK_SYS(getresgid(&gr, &ge, &gs));
	CHECK_EQ(gr, getgid());
	CHECK_EQ(ge, getegid());
	CHECK_ERR(syscall(SYS_getresuid, (void *)1, &e, &s), EFAULT);
	CHECK_ERR(syscall(SYS_getresgid, &gr, &ge, (void *)1), EFAULT);
}

IN_CHILD(setresuid_keeps_saved)
{
	/* Root may set anything; -1 leaves a field alone. */
	CHILD_CHECK(setresuid(1000, 1001, -1) == 0);
	uid_t r, e, s;
	CHILD_CHECK(getresuid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 1000 && e == 1001 && s == 0);
	/* Unprivileged now: the saved 0 lets us get root back. */
	CHILD_CHECK(setresuid(-1, 0, -1) == 0);
	CHILD_CHECK(geteuid() == 0);
	/* Drop everything for good. */
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	CHILD_CHECK(setresuid(-1, 0, -1) == -1 && errno == EPERM);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	CHILD_CHECK(setresuid(-1, -1, -1) == 0);
}

IN_CHILD(setuid_as_root_sets_all)
{
	CHILD_CHECK(setuid(1234) == 0);
	uid_t r, e, s;
	CHILD_CHECK(getresuid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 1234 && e == 1234 && s == 1234);
	CHILD_CHECK(setuid(0) == -1 && errno == EPERM);
	/* An unprivileged setuid to an id it holds is fine. */
	CHILD_CHECK(setuid(1234) == 0);
}

IN_CHILD(setuid_unprivileged_sets_effective_only)
{
	CHILD_CHECK(setresuid(1000, 2000, 1000) == 0);
	/* Not root (euid 2000): setuid(1000) changes only the euid. */
	CHILD_CHECK(setuid(1000) == 0);
	uid_t r, e, s;
	CHILD_CHECK(getresuid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 1000 && e == 1000 && s == 1000);
	CHILD_CHECK(setuid(2000) == -1 && errno == EPERM);
}

IN_CHILD(setreuid_rules)
{
	CHILD_CHECK(setreuid(1000, 2000) == 0);
	uid_t r, e, s;
	CHILD_CHECK(getresuid(&r, &e, &s) == 0);
	/* Setting the real id (or the euid to something other than the old
	 * real id) also sets the saved id to the new euid. */
	CHILD_CHECK(r == 1000 && e == 2000 && s == 2000);
	/* Unprivileged: swap real and effective. */
	CHILD_CHECK(setreuid(2000, 1000) == 0);
	CHILD_CHECK(getresuid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 2000 && e == 1000 && s == 1000);
	CHILD_CHECK(setreuid(-1, 3000) == -1 && errno == EPERM);
	CHILD_CHECK(setreuid(3000, -1) == -1 && errno == EPERM);
	CHILD_CHECK(setreuid(-1, -1) == 0);
}

IN_CHILD(setregid_rules)
{
	CHILD_CHECK(setregid(100, 200) == 0);
	gid_t r, e, s;
	CHILD_CHECK(getresgid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 100 && e == 200 && s == 200);
	CHILD_CHECK(setuid(1000) == 0);
	/* Without CAP_SETGID only ids already held are allowed. */
	CHILD_CHECK(setregid(200, 100) == 0);
	CHILD_CHECK(setregid(300, -1) == -1 && errno == EPERM);
	CHILD_CHECK(setgid(300) == -1 && errno == EPERM);
	CHILD_CHECK(setgid(200) == 0);
}

IN_CHILD(setresgid_rules)
{
	CHILD_CHECK(setresgid(10, 20, 30) == 0);
	gid_t r, e, s;
	CHILD_CHECK(getresgid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 10 && e == 20 && s == 30);
	CHILD_CHECK(setuid(1000) == 0);
	CHILD_CHECK(setresgid(30, 10, 20) == 0);
	CHILD_CHECK(getresgid(&r, &e, &s) == 0);
	CHILD_CHECK(r == 30 && e == 10 && s == 20);
	CHILD_CHECK(setresgid(40, -1, -1) == -1 && errno == EPERM);
}

IN_CHILD(setfsuid_returns_old)
{
	/* setfsuid always returns the previous fsuid, even on failure. */
	CHILD_CHECK(setfsuid(500) == 0);
	CHILD_CHECK(setfsuid(600) == 500);
	CHILD_CHECK(setfsuid(-1) == 600);
	/* The fsuid follows the euid on changes. */
	CHILD_CHECK(seteuid(700) == 0);
	CHILD_CHECK(setfsuid(-1) == 700);
	/* Unprivileged: an id it does not hold is refused silently. */
	CHILD_CHECK(setfsuid(800) == 700);
	CHILD_CHECK(setfsuid(-1) == 700);
}

IN_CHILD(setfsgid_returns_old)
{
	CHILD_CHECK(setfsgid(50) == 0);
	CHILD_CHECK(setfsgid(60) == 50);
	CHILD_CHECK(setfsgid(-1) == 60);
	CHILD_CHECK(setegid(70) == 0);
	CHILD_CHECK(setfsgid(-1) == 70);
}

static void getgroups_sizes(void)
{
	gid_t g[4];
	int n = CHECK_SYS(getgroups(0, NULL));
	CHECK_GE(n, 0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		gid_t set[3] = {5, 6, 7};
		CHILD_CHECK(setgroups(3, set) == 0);
		CHILD_CHECK(getgroups(0, NULL) == 3);
		CHILD_CHECK(getgroups(2, g) == -1 && errno == EINVAL);
		CHILD_CHECK(getgroups(4, g) == 3 && g[0] == 5 && g[2] == 7);
		CHILD_CHECK(getgroups(-1, g) == -1 && errno == EINVAL);
		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(getgroups(0, NULL) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

IN_CHILD(setgroups_errors)
{
	gid_t g[1] = {1};
	CHILD_CHECK(setgroups(65537, g) == -1 && errno == EINVAL);
	CHILD_CHECK(syscall(SYS_setgroups, 2, (void *)1) == -1 && errno == EFAULT);
	CHILD_CHECK(setuid(1000) == 0);
	CHILD_CHECK(setgroups(1, g) == -1 && errno == EPERM);
}

static int capget_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	return (int)syscall(SYS_capget, &h, d);
}

static int capset_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	return (int)syscall(SYS_capset, &h, d);
}

static void capget_versions(void)
{
	struct __user_cap_header_struct h = {0, 0};
	struct __user_cap_data_struct d[2];
	/* An unknown version: EINVAL and the preferred version written. */
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
	/* With a NULL data pointer an unknown version is a probe: 0, and
	 * the preferred version written. */
	h.version = 0x12345678;
	CHECK_EQ(syscall(SYS_capget, &h, NULL), 0);
	CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
	h.version = _LINUX_CAPABILITY_VERSION_3;
	CHECK_EQ(syscall(SYS_capget, &h, NULL), 0);
	/* Version 1 has one 32-bit set. */
	h.version = _LINUX_CAPABILITY_VERSION_1;
	CHECK_EQ(syscall(SYS_capget, &h, d), 0);
	CHECK_NE(d[0].effective, 0);
	CHECK_ERR(syscall(SYS_capget, (void *)1, d), EFAULT);
	h.version = _LINUX_CAPABILITY_VERSION_3;
	CHECK_ERR(syscall(SYS_capget, &h, (void *)1), EFAULT);
	h.pid = 99999;
	CHECK_ERR(syscall(SYS_capget, &h, d), ESRCH);
	h.pid = -1;
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
}

static void capget_other_process(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct __user_cap_data_struct d[2];
		capget_self(d);
		d[0].effective = 0;
		d[1].effective = 0;
		capset_self(d);
		close(p[1]);
		pause();
		_exit(0);
	}
	close(p[1]);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 0);
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, pid};
	struct __user_cap_data_struct d[2];
	CHECK_EQ(syscall(SYS_capget, &h, d), 0);
	CHECK_EQ(d[0].effective, 0);
	CHECK_NE(d[0].permitted, 0);
	kill(pid, SIGKILL);
	mt_wait(pid);
}

IN_CHILD(capset_rules)
{
	struct __user_cap_data_struct d[2];
	CHILD_CHECK(capget_self(d) == 0);
	/* Effective must be a subset of permitted. */
	d[0].permitted &= ~(1u << CAP_KILL);
	d[0].effective |= 1u << CAP_KILL;
	CHILD_CHECK(capset_self(d) == -1 && errno == EPERM);
	d[0].effective &= ~(1u << CAP_KILL);
	CHILD_CHECK(capset_self(d) == 0);
	/* A permitted capability once dropped cannot come back. */
	d[0].permitted |= 1u << CAP_KILL;
	CHILD_CHECK(capset_self(d) == -1 && errno == EPERM);
	/* Another process cannot be the target. */
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 1};
	CHILD_CHECK(capget_self(d) == 0);
	CHILD_CHECK(syscall(SYS_capset, &h, d) == -1 && errno == EPERM);
	h.pid = 0;
	h.version = 0;
	CHILD_CHECK(syscall(SYS_capset, &h, d) == -1 && errno == EINVAL);
}

IN_CHILD(setuid_clears_capabilities)
{
	struct __user_cap_data_struct d[2];
	CHILD_CHECK(setuid(1000) == 0);
	CHILD_CHECK(capget_self(d) == 0);
	CHILD_CHECK(d[0].effective == 0 && d[0].permitted == 0 && d[1].permitted == 0);
}

IN_CHILD(seteuid_clears_effective_only)
{
	struct __user_cap_data_struct d[2];
	CHILD_CHECK(seteuid(1000) == 0);
	CHILD_CHECK(capget_self(d) == 0);
	CHILD_CHECK(d[0].effective == 0 && d[0].permitted != 0);
	/* Back to euid 0: effective comes back from permitted. */
	CHILD_CHECK(seteuid(0) == 0);
	CHILD_CHECK(capget_self(d) == 0);
	CHILD_CHECK(d[0].effective == d[0].permitted);
}

IN_CHILD(keepcaps_keeps_permitted)
{
	struct __user_cap_data_struct d[2];
	CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 1);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	CHILD_CHECK(capget_self(d) == 0);
	CHILD_CHECK(d[0].effective == 0 && d[0].permitted != 0);
	CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0) == -1 && errno == EINVAL);
}

IN_CHILD(kill_needs_matching_uid)
{
	/* An unprivileged process may signal only processes whose real or
	 * saved uid matches its real or effective uid. */
	pid_t victim = fork();
	if (victim == 0) {
		pause();
		_exit(0);
	}
	CHILD_CHECK(victim > 0);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	CHILD_CHECK(kill(victim, SIGTERM) == -1 && errno == EPERM);
	CHILD_CHECK(kill(victim, 0) == -1 && errno == EPERM);
	CHILD_CHECK(kill(getpid(), 0) == 0);
	/* Our own child is still root-owned: ask the parent (root) to kill
	 * it by exiting; init reaps it. */
}

static const struct mt_case cases[] = {
	MT_CASE(getresuid_values),
	MT_CASE(setresuid_keeps_saved),
	MT_CASE(setuid_as_root_sets_all),
	MT_CASE(setuid_unprivileged_sets_effective_only),
	MT_CASE(setreuid_rules),
	MT_CASE(setregid_rules),
	MT_CASE(setresgid_rules),
	MT_CASE(setfsuid_returns_old),
	MT_CASE(setfsgid_returns_old),
	MT_CASE(getgroups_sizes),
	MT_CASE(setgroups_errors),
	MT_CASE(capget_versions),
	MT_CASE(capget_other_process),
	MT_CASE(capset_rules),
	MT_CASE(setuid_clears_capabilities),
	MT_CASE(seteuid_clears_effective_only),
	MT_CASE(keepcaps_keeps_permitted),
	MT_CASE(kill_needs_matching_uid),
};

MT_MAIN(cases)
