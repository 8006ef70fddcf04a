// setid_probe runs every set*id transition of a small grid of ids from a
// few starting credentials, on Linux, and prints one line per call. Its
// output is setid_linux.txt, which TestSetIDMatchesLinux replays against
// the kernel package's transitions. Regenerate as root (with CAP_SETUID,
// CAP_SETGID and CAP_SETPCAP):
//
//	gcc -O2 -o /tmp/setid_probe setid_probe.c && /tmp/setid_probe > setid_linux.txt
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const long ids[] = {-1, 0, 1000, 2000, 3000, 4000};
#define NIDS 6

static void caps(unsigned long long *eff, unsigned long long *perm) {
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	syscall(SYS_capget, &h, d);
	*eff = (unsigned long long)d[1].effective << 32 | d[0].effective;
	*perm = (unsigned long long)d[1].permitted << 32 | d[0].permitted;
}

struct start {
	const char *name;
	long r, e, s;   // uids set with setresuid (-1: stay root)
	long gr, ge, gs; // gids set first with setresgid
	int keepcaps;
};

static const struct start starts[] = {
	{"root", -1, -1, -1, 10, 20, 30, 0},
	{"rootkeep", -1, -1, -1, 10, 20, 30, 1},
	{"user", 1000, 2000, 3000, 1000, 2000, 3000, 0},
	{"euid0", 1000, 0, 0, 10, 20, 30, 0},
	{"ruid0", 0, 1000, 1000, 10, 20, 30, 0},
	{"suid0", 1000, 1000, 0, 10, 20, 30, 0},
};

static void run(const struct start *st, const char *op, long a, long b, long c) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid != 0) {
		waitpid(pid, NULL, 0);
		return;
	}
	syscall(SYS_setresgid, st->gr, st->ge, st->gs);
	if (st->keepcaps)
		prctl(PR_SET_KEEPCAPS, 1);
	if (st->r != -1)
		syscall(SYS_setresuid, st->r, st->e, st->s);
	prctl(PR_SET_DUMPABLE, 1);
	long ret;
	errno = 0;
	switch (op[3]) {
	case 'u': ret = syscall(SYS_setuid, a); break;
	case 'g': ret = syscall(SYS_setgid, a); break;
	case 'r':
		if (op[5] == 'u') ret = syscall(SYS_setreuid, a, b);
		else if (op[5] == 'g') ret = syscall(SYS_setregid, a, b);
		else if (op[6] == 'u') ret = syscall(SYS_setresuid, a, b, c);
		else ret = syscall(SYS_setresgid, a, b, c);
		break;
	default:
		ret = syscall(op[5] == 'u' ? SYS_setfsuid : SYS_setfsgid, a);
		break;
	}
	int err = ret < 0 ? errno : 0;
	uid_t r, e, s, g1, g2, g3;
	getresuid(&r, &e, &s);
	getresgid(&g1, &g2, &g3);
	long fsu = syscall(SYS_setfsuid, -1), fsg = syscall(SYS_setfsgid, -1);
	unsigned long long eff, perm;
	caps(&eff, &perm);
	printf("%s %s %ld %ld %ld -> %ld %d uid %u %u %u %ld gid %u %u %u %ld caps %llx %llx dump %d\n", st->name, op, a, b, c,
	       err ? -1 : ret, err, r, e, s, fsu, g1, g2, g3, fsg, eff, perm, prctl(PR_GET_DUMPABLE));
	fflush(stdout);
	_exit(0);
}

int main(void) {
	unsigned long long eff, perm;
	caps(&eff, &perm);
	printf("initial caps %llx %llx\n", eff, perm);
	for (unsigned i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		const struct start *st = &starts[i];
		for (int x = 0; x < NIDS; x++) {
			run(st, "setuid", ids[x], 0, 0);
			run(st, "setgid", ids[x], 0, 0);
			run(st, "setfsuid", ids[x], 0, 0);
			run(st, "setfsgid", ids[x], 0, 0);
			for (int y = 0; y < NIDS; y++) {
				run(st, "setreuid", ids[x], ids[y], 0);
				run(st, "setregid", ids[x], ids[y], 0);
				for (int z = 0; z < NIDS; z++) {
					run(st, "setresuid", ids[x], ids[y], ids[z]);
					run(st, "setresgid", ids[x], ids[y], ids[z]);
				}
			}
		}
	}
	return 0;
}
