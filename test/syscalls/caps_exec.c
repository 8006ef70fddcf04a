//go:build ignore

/* caps_exec: capability sets across execve and the ambient set: root
 * keeps full sets through exec, a non-root process loses them, ambient
 * capabilities (PR_CAP_AMBIENT raise/lower/is_set/clear_all) need the
 * capability in permitted and inheritable and survive exec for non-root,
 * and dropping from the bounding set limits what exec can grant. The
 * program re-executes itself with --caps to report its sets. */
#include "moattest.h"

#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* exec_report execs ourselves with --caps and returns what it printed
 * ("eff perm inh" in hex of the low word) or "" on failure. */
static void exec_report(char *out, size_t n)
{
	int p[2];
	if (pipe(p) != 0) {
		out[0] = 0;
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		char *argv[] = {(char *)mt_argv0, "--caps", NULL};
		execv(mt_argv0, argv);
		_exit(127);
	}
	close(p[1]);
	ssize_t r = read(p[0], out, n - 1);
	out[r > 0 ? r : 0] = 0;
	close(p[0]);
	mt_wait(pid);
}

static void root_keeps_caps_across_exec(void)
{
	char out[128];
	exec_report(out, sizeof(out));
	struct __user_cap_data_struct d[2];
	CHECK_SYS(capget_self(d));
	char want[128];
	snprintf(want, sizeof(want), "%x %x\n", d[0].effective, d[0].permitted);
	CHECK_STREQ(out, want);
}

static void nonroot_loses_caps_at_exec(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(capget_self(d) == 0 && d[0].permitted != 0);
		/* Effective caps let us reach the binary wherever it is
		 * (the suite's cache directory is 0700 root). */
		d[0].effective = d[0].permitted;
		d[1].effective = d[1].permitted;
		CHILD_CHECK(capset_self(d) == 0);
		char out[128];
		exec_report(out, sizeof(out));
		CHILD_CHECK(strcmp(out, "0 0\n") == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void ambient_rules(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) == 0);
		/* Not in the inheritable set: EPERM. */
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == -1 && errno == EPERM);
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(capget_self(d) == 0);
		d[0].inheritable |= 1u << CAP_NET_RAW;
		CHILD_CHECK(capset_self(d) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) == 1);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_NET_RAW, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) == 0);
		/* Bad arguments. */
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, 99, 0, 0, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 200, 0, 0) == -1 && errno == EINVAL);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0) == -1 && errno == EINVAL);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void ambient_survives_exec_for_nonroot(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(capget_self(d) == 0);
		d[0].inheritable |= 1u << CAP_NET_RAW;
		CHILD_CHECK(capset_self(d) == 0);
		CHILD_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
		CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
		CHILD_CHECK(capget_self(d) == 0);
		d[0].effective = d[0].permitted;
		CHILD_CHECK(capset_self(d) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == 0);
		char out[128];
		exec_report(out, sizeof(out));
		char want[64];
		snprintf(want, sizeof(want), "%x %x\n", 1u << CAP_NET_RAW, 1u << CAP_NET_RAW);
		CHILD_CHECK(strcmp(out, want) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void ambient_lowered_with_permitted(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(capget_self(d) == 0);
		d[0].inheritable |= 1u << CAP_NET_RAW;
		CHILD_CHECK(capset_self(d) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == 0);
		/* Dropping it from permitted drops it from ambient too. */
		d[0].permitted &= ~(1u << CAP_NET_RAW);
		d[0].effective &= ~(1u << CAP_NET_RAW);
		CHILD_CHECK(capset_self(d) == 0);
		CHILD_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) == 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static void bounding_drop_limits_root_exec(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(prctl(PR_CAPBSET_DROP, CAP_KILL, 0, 0, 0) == 0);
		char out[128];
		exec_report(out, sizeof(out));
		unsigned eff = 0, perm = 0;
		CHILD_CHECK(sscanf(out, "%x %x", &eff, &perm) == 2);
		/* Root's exec grants only what the bounding set allows. */
		CHILD_CHECK((perm & (1u << CAP_KILL)) == 0);
		CHILD_CHECK((perm & (1u << CAP_CHOWN)) != 0);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(root_keeps_caps_across_exec),
	MT_CASE(nonroot_loses_caps_at_exec),
	MT_CASE(ambient_rules),
	MT_CASE(ambient_survives_exec_for_nonroot),
	MT_CASE(ambient_lowered_with_permitted),
	MT_CASE(bounding_drop_limits_root_exec),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--caps") == 0) {
		struct __user_cap_data_struct d[2];
		if (capget_self(d) != 0)
			return 1;
		printf("%x %x\n", d[0].effective, d[0].permitted);
		fflush(stdout);
		return 0;
	}
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
