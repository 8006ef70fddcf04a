//go:build ignore

/* user_ns: user namespaces. An unprivileged process (uid and gid 1000)
 * unshares or clones a new user namespace and gets every capability in
 * it; its ids read as the overflow id 65534 until uid_map and gid_map are
 * written; the maps are written once, by Linux's rules (one line mapping
 * the writer's own id without privilege, gid_map only once setgroups is
 * "deny", EPERM or EINVAL for the rest); ids are translated in getuid,
 * setuid, stat, chown and /proc; capabilities over what the parent
 * namespace owns (the initial UTS namespace) are gone, while namespaces
 * made inside are the new namespace's to change; nesting; ns/user files,
 * their ioctls and setns; a chrooted process cannot make one; a child's
 * uid in SIGCHLD's and waitid's siginfo; SysV IPC owners; SO_PEERCRED and
 * SCM_CREDENTIALS; PRIO_USER's uid; a map file is checked against its
 * opener as well as its writer and names the namespace of the moment it
 * was opened (CVE-2013-1959); process_vm_readv's dumpable check is over
 * the namespace of the target's last exec, whose root owns a
 * non-dumpable process's /proc files; an execute-only program runs, not
 * dumpable; a file system is its mounter's namespace's to remount; root in
 * a namespace overrides mode bits only of files it maps. Results do not depend on the ids the native
 * run's namespace maps beyond 0 to 1000. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* USER_CHILD(body): body runs in a child with uid and gid 1000, no groups
 * and no capabilities, dumpable again (a uid change clears it, and a
 * non-dumpable process's /proc files belong to root). */
#define USER_CHILD(...)                                     \
	AS_USER({                                           \
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0); \
		__VA_ARGS__;                                \
	})

/* put writes s to path with one write(2) on a fresh descriptor and
 * returns its result (-1 with errno on failure). */
static int put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	int r = (int)write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	errno = e;
	return r < 0 ? -1 : 0;
}

/* get reads path into buf (NUL-terminated) and returns buf. */
static const char *get(const char *path, char *buf, size_t n)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return buf;
	ssize_t r = read(fd, buf, n - 1);
	buf[r > 0 ? r : 0] = 0;
	close(fd);
	return buf;
}

/* map_self maps uid and gid 0 of the caller's new namespace to 1000. */
static int map_self(void)
{
	if (put("/proc/self/uid_map", "0 1000 1") < 0)
		return -1;
	if (put("/proc/self/setgroups", "deny") < 0)
		return -1;
	return put("/proc/self/gid_map", "0 1000 1");
}

static int capget_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	return (int)syscall(SYS_capget, &h, d);
}

static void unshare_ids_read_overflow(void)
{
	USER_CHILD({
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(getuid() == 65534 && geteuid() == 65534);
		CHILD_CHECK(getgid() == 65534 && getegid() == 65534);
		uid_t r, e, s;
		CHILD_CHECK(getresuid(&r, &e, &s) == 0 && r == 65534 && e == 65534 && s == 65534);
		gid_t g[4];
		CHILD_CHECK(getgroups(4, g) == 0);
		char buf[256];
		CHILD_CHECK(strcmp(get("/proc/self/uid_map", buf, sizeof(buf)), "") == 0);
		CHILD_CHECK(strcmp(get("/proc/self/setgroups", buf, sizeof(buf)), "allow\n") == 0);
	});
}

static void unshare_gives_full_caps(void)
{
	USER_CHILD({
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(capget_self(d) == 0 && d[0].effective == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(capget_self(d) == 0);
		CHILD_CHECK(d[0].effective == 0xffffffff && d[0].permitted == 0xffffffff);
		CHILD_CHECK(d[1].effective == d[1].permitted && d[1].effective != 0);
		CHILD_CHECK(d[0].inheritable == 0 && d[1].inheritable == 0);
		CHILD_CHECK(prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN) == 1);
		/* Still dumpable: the new capabilities are the namespace's. */
		CHILD_CHECK(prctl(PR_GET_DUMPABLE) == 1);
	});
}

static void write_own_uid_map(void)
{
	USER_CHILD({
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(put("/proc/self/uid_map", "0 1000 1\n") == 0);
		CHILD_CHECK(getuid() == 0 && geteuid() == 0);
		CHILD_CHECK(getgid() == 65534);
		char buf[256];
		CHILD_CHECK(strcmp(get("/proc/self/uid_map", buf, sizeof(buf)),
				   "         0       1000          1\n") == 0);
		/* Written once; a page or more is EINVAL before that. */
		CHILD_ERR(put("/proc/self/uid_map", "0 1000 1\n"), EPERM);
		static char page[4097];
		memset(page, ' ', 4096);
		CHILD_ERR(put("/proc/self/uid_map", page), EINVAL);
	});
}

static void uid_map_eperm_cases(void)
{
	USER_CHILD({
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		/* Without privilege over the parent: only one's own id. */
		CHILD_ERR(put("/proc/self/uid_map", "0 1001 1"), EPERM);
		CHILD_ERR(put("/proc/self/uid_map", "0 1000 2"), EPERM);
		CHILD_ERR(put("/proc/self/uid_map", "0 1000 1\n1 1001 1\n"), EPERM);
		/* The parent's root takes CAP_SETFCAP the creator lacked. */
		CHILD_ERR(put("/proc/self/uid_map", "0 0 1"), EPERM);
		/* A malformed map is EINVAL before any of that. */
		CHILD_ERR(put("/proc/self/uid_map", "0 1000"), EINVAL);
		CHILD_ERR(put("/proc/self/uid_map", "0 1000 1 x"), EINVAL);
		CHILD_ERR(put("/proc/self/uid_map", "0 1000 0"), EINVAL);
		CHILD_ERR(put("/proc/self/uid_map", "0 1000 5\n2 2000 1\n"), EINVAL);
		CHILD_ERR(put("/proc/self/uid_map", "4294967295 1000 1"), EINVAL);
		/* None of those wrote the map. */
		CHILD_CHECK(put("/proc/self/uid_map", "7 1000 1") == 0);
		CHILD_CHECK(getuid() == 7);
	});
}

static void gid_map_needs_setgroups_deny(void)
{
	USER_CHILD({
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_ERR(put("/proc/self/gid_map", "0 1000 1"), EPERM);
		CHILD_ERR(put("/proc/self/setgroups", "maybe"), EINVAL);
		CHILD_ERR(put("/proc/self/setgroups", "deny x"), EINVAL);
		{
			/* One write, at offset 0: no pwrite (a seq file), not
			 * after a seek, not a second one on the descriptor. */
			int fd = open("/proc/self/setgroups", O_WRONLY);
			CHILD_CHECK(fd >= 0);
			CHILD_CHECK(pwrite(fd, "deny", 4, 0) == -1 && errno == ESPIPE);
			CHILD_CHECK(lseek(fd, 1, SEEK_SET) == 1);
			CHILD_CHECK(write(fd, "deny", 4) == -1 && errno == EINVAL);
			CHILD_CHECK(lseek(fd, 0, SEEK_SET) == 0);
			CHILD_CHECK(write(fd, "deny", 4) == 4);
			CHILD_CHECK(write(fd, "deny", 4) == -1 && errno == EINVAL);
			close(fd);
			fd = open("/proc/self/uid_map", O_WRONLY);
			CHILD_CHECK(fd >= 0);
			CHILD_CHECK(pwrite(fd, "0 1000 1", 8, 0) == -1 && errno == ESPIPE);
			close(fd);
		}
		CHILD_CHECK(put("/proc/self/setgroups", "deny") == 0);
		char buf[64];
		CHILD_CHECK(strcmp(get("/proc/self/setgroups", buf, sizeof(buf)), "deny\n") == 0);
		CHILD_ERR(put("/proc/self/setgroups", "allow"), EPERM);
		CHILD_CHECK(put("/proc/self/setgroups", "deny\n") == 0);
		CHILD_CHECK(put("/proc/self/gid_map", "0 1000 1") == 0);
		CHILD_CHECK(getgid() == 0 && getegid() == 0);
		/* Once gid_map is written, "deny" cannot be written again. */
		CHILD_ERR(put("/proc/self/setgroups", "deny"), EPERM);
		/* setgroups(2) is refused in a namespace that denies it. */
		CHILD_ERR(setgroups(0, NULL), EPERM);
	});
}

static void mapped_ids_in_syscalls(void)
{
	USER_CHILD({
		int mfd = memfd_create("owned", 0);
		CHILD_CHECK(mfd >= 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		struct stat st;
		/* Unmapped owners read as the overflow ids. */
		CHILD_CHECK(fstat(mfd, &st) == 0 && st.st_uid == 65534 && st.st_gid == 65534);
		CHILD_CHECK(map_self() == 0);
		/* The file the task made is its own root's; root's is nobody's. */
		CHILD_CHECK(fstat(mfd, &st) == 0 && st.st_uid == 0 && st.st_gid == 0);
		CHILD_CHECK(stat("/", &st) == 0 && st.st_uid == 65534 && st.st_gid == 65534);
		struct statx sx;
		CHILD_CHECK(statx(mfd, "", AT_EMPTY_PATH, STATX_UID | STATX_GID, &sx) == 0);
		CHILD_CHECK(sx.stx_uid == 0 && sx.stx_gid == 0);
		/* chown and setuid take ids of the namespace: 5 is unmapped. */
		CHILD_ERR(fchown(mfd, 5, -1), EINVAL);
		CHILD_ERR(fchown(mfd, -1, 5), EINVAL);
		CHILD_CHECK(fchown(mfd, 0, 0) == 0);
		CHILD_ERR(setuid(5), EINVAL);
		CHILD_ERR(setresuid(-1, 5, -1), EINVAL);
		CHILD_ERR(setgid(5), EINVAL);
		CHILD_CHECK(setuid(0) == 0);
		/* /proc/self/status shows the namespace's ids. */
		char buf[4096];
		get("/proc/self/status", buf, sizeof(buf));
		CHILD_CHECK(strstr(buf, "\nUid:\t0\t0\t0\t0\n") != NULL);
		CHILD_CHECK(strstr(buf, "\nGid:\t0\t0\t0\t0\n") != NULL);
		CHILD_CHECK(stat("/proc/self/status", &st) == 0 && st.st_uid == 0);
	});
}

static void caps_do_not_reach_the_parent(void)
{
	USER_CHILD({
		char host[65];
		CHILD_CHECK(gethostname(host, sizeof(host)) == 0);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		/* The UTS namespace belongs to the parent user namespace. */
		CHILD_ERR(sethostname("inner", 5), EPERM);
		/* A UTS namespace made inside is the new namespace's. */
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		CHILD_CHECK(sethostname("inner", 5) == 0);
		char got[65];
		CHILD_CHECK(gethostname(got, sizeof(got)) == 0 && strcmp(got, "inner") == 0);
	});
}

static void clone_newuser_newuts(void)
{
	char host[65];
	CHECK_SYS(gethostname(host, sizeof(host)));
	USER_CHILD({
		pid_t p = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
		CHILD_CHECK(p >= 0);
		if (p == 0) {
			if (getuid() != 65534)
				_exit(2);
			if (sethostname("cloned", 6) != 0)
				_exit(3);
			_exit(0);
		}
		int st;
		CHILD_CHECK(waitpid(p, &st, 0) == p);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		/* Without the user namespace, CLONE_NEWUTS needs privilege. */
		CHILD_ERR(syscall(SYS_clone, CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0), EPERM);
		CHILD_ERR(syscall(SYS_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EINVAL);
	});
	char after[65];
	CHECK_SYS(gethostname(after, sizeof(after)));
	CHECK_STREQ(after, host);
}

static void nested_namespaces(void)
{
	USER_CHILD({
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(getuid() == 65534);
		/* Lower ids are the parent namespace's: its 0 is our 1000. */
		CHILD_CHECK(put("/proc/self/uid_map", "5 0 1") == 0);
		CHILD_CHECK(getuid() == 5);
		char buf[128];
		CHILD_CHECK(strcmp(get("/proc/self/uid_map", buf, sizeof(buf)),
				   "         5          0          1\n") == 0);
		/* A parent id outside the parent's map cannot be mapped. */
		CHILD_CHECK(put("/proc/self/setgroups", "deny") == 0);
		CHILD_ERR(put("/proc/self/gid_map", "0 1 1"), EPERM);
		CHILD_CHECK(put("/proc/self/gid_map", "0 0 1") == 0);
		/* Ten more levels, each mapping its creator's ids. */
		for (int i = 0; i < 10; i++) {
			char m[32];
			snprintf(m, sizeof(m), "0 %d 1", (int)getuid());
			CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
			CHILD_CHECK(put("/proc/self/uid_map", m) == 0);
			CHILD_CHECK(put("/proc/self/setgroups", "deny") == 0);
			CHILD_CHECK(put("/proc/self/gid_map", "0 0 1") == 0);
			CHILD_CHECK(getuid() == 0 && getgid() == 0);
		}
		/* Without a mapped euid, no further namespace. */
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_ERR(unshare(CLONE_NEWUSER), EPERM);
	});
}

static void parent_writes_child_maps(void)
{
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		close(go[0]);
		close(done[1]);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(write(go[1], "x", 1) == 1);
		char c;
		CHILD_CHECK(read(done[0], &c, 1) == 1);
		/* The parent's root mapped a range: our uid 0 is its 0. */
		CHILD_CHECK(getuid() == 0 && getgid() == 0);
		struct stat st;
		CHILD_CHECK(stat("/", &st) == 0 && st.st_uid == 0);
		/* The parent wrote gid_map with setgroups allowed. */
		CHILD_CHECK(setgroups(0, NULL) == 0);
		_exit(0);
	}
	close(go[1]);
	close(done[0]);
	char c;
	CHECK_EQ(read(go[0], &c, 1), 1);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/uid_map", p);
	CHECK_SYS(put(path, "0 0 1000\n"));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", p);
	CHECK_SYS(put(path, "0 0 1000\n"));
	snprintf(path, sizeof(path), "/proc/%d/setgroups", p);
	CHECK_ERR(put(path, "deny"), EPERM);
	char buf[64];
	CHECK_STREQ(get(path, buf, sizeof(buf)), "allow\n");
	/* The parent reads the map in its own terms. */
	snprintf(path, sizeof(path), "/proc/%d/uid_map", p);
	CHECK_STREQ(get(path, buf, sizeof(buf)), "         0          0       1000\n");
	CHECK_EQ(write(done[1], "x", 1), 1);
	int st;
	CHECK_SYS(waitpid(p, &st, 0));
	CHECK_EXITED(st, 0);
}

static void ns_user_files(void)
{
	struct stat before;
	CHECK_SYS(stat("/proc/self/ns/user", &before));
	int parent = open("/proc/self/ns/user", O_RDONLY);
	CHECK(parent >= 0);
	USER_CHILD({
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		struct stat now;
		CHILD_CHECK(stat("/proc/self/ns/user", &now) == 0 && now.st_ino != before.st_ino);
		char link[64], want[64];
		ssize_t n = readlink("/proc/self/ns/user", link, sizeof(link) - 1);
		CHILD_CHECK(n > 0);
		link[n] = 0;
		snprintf(want, sizeof(want), "user:[%lu]", (unsigned long)now.st_ino);
		CHILD_CHECK(strcmp(link, want) == 0);
		int self = open("/proc/self/ns/user", O_RDONLY);
		CHILD_CHECK(self >= 0);
		CHILD_CHECK(ioctl(self, NS_GET_NSTYPE) == CLONE_NEWUSER);
		uid_t owner = 1;
		/* The owner, 1000, is unmapped until the map is written. */
		CHILD_CHECK(ioctl(self, NS_GET_OWNER_UID, &owner) == 0 && owner == 65534);
		CHILD_CHECK(map_self() == 0);
		CHILD_CHECK(ioctl(self, NS_GET_OWNER_UID, &owner) == 0 && owner == 0);
		/* The parent is outside the namespace: not to be had. */
		CHILD_ERR(ioctl(self, NS_GET_PARENT), EPERM);
		CHILD_ERR(ioctl(self, NS_GET_USERNS), EPERM);
		/* Re-entering one's own namespace is EINVAL; going back to the
		 * parent takes CAP_SYS_ADMIN there. */
		CHILD_ERR(setns(self, CLONE_NEWUSER), EINVAL);
		CHILD_ERR(setns(parent, CLONE_NEWUSER), EPERM);
		CHILD_ERR(setns(self, CLONE_NEWUTS), EINVAL);
		/* A UTS namespace made here is owned by this namespace. */
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		int uts = open("/proc/self/ns/uts", O_RDONLY);
		CHILD_CHECK(uts >= 0);
		int own = ioctl(uts, NS_GET_USERNS);
		CHILD_CHECK(own >= 0);
		struct stat ps;
		CHILD_CHECK(fstat(own, &ps) == 0 && ps.st_ino == now.st_ino);
	});
	close(parent);
}

static void *park(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static void unshare_multithreaded_einval(void)
{
	USER_CHILD({
		pthread_t th;
		CHILD_CHECK(pthread_create(&th, NULL, park, NULL) == 0);
		CHILD_ERR(unshare(CLONE_NEWUSER), EINVAL);
	});
}

static void setns_into_child_as_owner(void)
{
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	USER_CHILD({
		pid_t p = fork();
		CHILD_CHECK(p >= 0);
		if (p == 0) {
			CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
			CHILD_CHECK(write(go[1], "x", 1) == 1);
			char c;
			CHILD_CHECK(read(done[0], &c, 1) == 1);
			_exit(0);
		}
		char c;
		CHILD_CHECK(read(go[0], &c, 1) == 1);
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", p);
		int fd = open(path, O_RDONLY);
		CHILD_CHECK(fd >= 0);
		/* Its parent, seen from the parent, is the parent. */
		struct stat mine, ps;
		CHILD_CHECK(stat("/proc/self/ns/user", &mine) == 0);
		int up = ioctl(fd, NS_GET_PARENT);
		CHILD_CHECK(up >= 0);
		CHILD_CHECK(fstat(up, &ps) == 0 && ps.st_ino == mine.st_ino);
		up = ioctl(fd, NS_GET_USERNS);
		CHILD_CHECK(up >= 0);
		CHILD_CHECK(fstat(up, &ps) == 0 && ps.st_ino == mine.st_ino);
		/* Its owner may join it, and has every capability there. */
		CHILD_CHECK(setns(fd, CLONE_NEWUSER) == 0);
		struct __user_cap_data_struct d[2];
		CHILD_CHECK(capget_self(d) == 0 && d[0].effective == 0xffffffff);
		CHILD_CHECK(getuid() == 65534);
		CHILD_CHECK(write(done[1], "x", 1) == 1);
		int st;
		CHILD_CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	});
}

static void chrooted_cannot_unshare(void)
{
	USER_CHILD({
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		CHILD_CHECK(chroot("/proc") == 0);
		CHILD_ERR(unshare(CLONE_NEWUSER), EPERM);
		CHILD_ERR(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
	});
}

static volatile sig_atomic_t chld_uid = -1;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	chld_uid = (int)si->si_uid;
}

/* child_uid_reported forks a child that exits as uid 1000 (after setuid
 * if as_root) and returns the si_uid of its SIGCHLD and of waitid, or -1
 * on failure. */
static int child_uid_reported(int setuid_first, int *from_sigchld)
{
	struct sigaction sa = {0};
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGCHLD, &sa, NULL) < 0)
		return -1;
	chld_uid = -1;
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		if (setuid_first && setresuid(1000, 1000, 1000) < 0)
			_exit(1);
		_exit(0);
	}
	siginfo_t si = {0};
	if (waitid(P_PID, p, &si, WEXITED) < 0)
		return -1;
	*from_sigchld = (int)chld_uid;
	return (int)si.si_uid;
}

static void child_uid_in_siginfo(void)
{
	int from_sigchld;
	CHECK_EQ(child_uid_reported(1, &from_sigchld), 1000);
	CHECK_EQ(from_sigchld, 1000);
	USER_CHILD({
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		int s;
		/* Our uid 0, as the parent in the namespace sees it. */
		CHILD_CHECK(child_uid_reported(0, &s) == 0 && s == 0);
	});
}

static void ipc_owner_translated(void)
{
	USER_CHILD({
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWIPC) == 0);
		CHILD_CHECK(map_self() == 0);
		int q = msgget(IPC_PRIVATE, 0600);
		CHILD_CHECK(q >= 0);
		struct msqid_ds ds;
		CHILD_CHECK(msgctl(q, IPC_STAT, &ds) == 0);
		CHILD_CHECK(ds.msg_perm.uid == 0 && ds.msg_perm.cuid == 0);
		CHILD_CHECK(ds.msg_perm.gid == 0 && ds.msg_perm.cgid == 0);
		/* IPC_SET takes ids of the namespace: 5 is unmapped. */
		ds.msg_perm.uid = 5;
		CHILD_ERR(msgctl(q, IPC_SET, &ds), EINVAL);
		ds.msg_perm.uid = 0;
		CHILD_CHECK(msgctl(q, IPC_SET, &ds) == 0);
		CHILD_CHECK(msgctl(q, IPC_RMID, NULL) == 0);
	});
}

/* send_creds sends one byte with SCM_CREDENTIALS (pid, uid, gid). */
static ssize_t send_creds(int fd, pid_t pid, uid_t uid, gid_t gid)
{
	struct ucred uc = {pid, uid, gid};
	char cbuf[CMSG_SPACE(sizeof(uc))];
	char byte = 'x';
	struct iovec iov = {&byte, 1};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(uc));
	memcpy(CMSG_DATA(cm), &uc, sizeof(uc));
	return sendmsg(fd, &m, 0);
}

/* recv_creds receives one byte and its credentials into uc. */
static int recv_creds(int fd, struct ucred *uc)
{
	char cbuf[CMSG_SPACE(sizeof(*uc))];
	char byte;
	struct iovec iov = {&byte, 1};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(fd, &m, 0) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (cm == NULL || cm->cmsg_type != SCM_CREDENTIALS)
		return -1;
	memcpy(uc, CMSG_DATA(cm), sizeof(*uc));
	return 0;
}

static void socket_credentials_translated(void)
{
	USER_CHILD({
		int sv[2];
		CHILD_CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
		int on = 1;
		CHILD_CHECK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		/* The peer made the pair as 1000: our root. */
		struct ucred uc;
		socklen_t len = sizeof(uc);
		CHILD_CHECK(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0);
		CHILD_CHECK(uc.uid == 0 && uc.gid == 0);
		/* Ids sent are the namespace's; an unmapped one is EINVAL. */
		CHILD_ERR(send_creds(sv[0], getpid(), 5, 0), EINVAL);
		CHILD_CHECK(send_creds(sv[0], getpid(), 0, 0) == 1);
		CHILD_CHECK(recv_creds(sv[1], &uc) == 0 && uc.uid == 0 && uc.gid == 0 && uc.pid == getpid());
		/* Without them, the sender's own real ids. */
		CHILD_CHECK(write(sv[0], "y", 1) == 1);
		CHILD_CHECK(recv_creds(sv[1], &uc) == 0 && uc.uid == 0 && uc.gid == 0);
	});
}

static void priority_of_user_ids(void)
{
	USER_CHILD({
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		/* PRIO_USER names a uid of the namespace: 0 is us, 5 nobody. */
		CHILD_CHECK(getpriority(PRIO_USER, 0) == getpriority(PRIO_PROCESS, 0));
		CHILD_ERR(getpriority(PRIO_USER, 5), ESRCH);
		CHILD_ERR(setpriority(PRIO_USER, 5, 1), ESRCH);
		CHILD_CHECK(setpriority(PRIO_USER, 0, 1) == 0);
		CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 1);
	});
}

static int setns_fd = -1;

/* setns_fs_child is a child sharing its parent's fs context. */
static int setns_fs_child(void *arg)
{
	(void)arg;
	return setns(setns_fd, CLONE_NEWUSER) == -1 && errno == EINVAL ? 0 : 1;
}

static void setns_user_needs_own_fs_and_thread(void)
{
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	USER_CHILD({
		pid_t p = fork();
		CHILD_CHECK(p >= 0);
		if (p == 0) {
			CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
			CHILD_CHECK(write(go[1], "x", 1) == 1);
			char c;
			CHILD_CHECK(read(done[0], &c, 1) == 1);
			_exit(0);
		}
		char c;
		CHILD_CHECK(read(go[0], &c, 1) == 1);
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", p);
		setns_fd = open(path, O_RDONLY);
		CHILD_CHECK(setns_fd >= 0);
		/* A process sharing its fs context with another cannot. */
		static char stack[64 * 1024];
		pid_t q = clone(setns_fs_child, stack + sizeof(stack), CLONE_FS | SIGCHLD, NULL);
		CHILD_CHECK(q > 0);
		int st;
		CHILD_CHECK(waitpid(q, &st, 0) == q && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		/* Nor can a process of two threads. */
		pthread_t th;
		CHILD_CHECK(pthread_create(&th, NULL, park, NULL) == 0);
		CHILD_ERR(setns(setns_fd, CLONE_NEWUSER), EINVAL);
		CHILD_CHECK(write(done[1], "x", 1) == 1);
		CHILD_CHECK(waitpid(p, &st, 0) == p);
	});
}

static volatile sig_atomic_t mq_uid = -1;

static void on_mq(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	mq_uid = (int)si->si_uid;
}

static void mq_notify_uid_translated(void)
{
	USER_CHILD({
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		char name[64];
		snprintf(name, sizeof(name), "/moat-userns-%d", (int)getpid());
		struct mq_attr attr = {0};
		attr.mq_maxmsg = 1;
		attr.mq_msgsize = 8;
		mqd_t q = mq_open(name, O_CREAT | O_RDWR, 0600, &attr);
		CHILD_CHECK(q != (mqd_t)-1);
		mq_unlink(name);
		struct sigaction sa = {0};
		sa.sa_sigaction = on_mq;
		sa.sa_flags = SA_SIGINFO;
		CHILD_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
		struct sigevent ev = {0};
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGUSR1;
		CHILD_CHECK(mq_notify(q, &ev) == 0);
		CHILD_CHECK(mq_send(q, "m", 1, 0) == 0);
		for (int i = 0; i < 200 && mq_uid == -1; i++)
			usleep(10000);
		/* The sender's uid as the registrant's namespace sees it. */
		CHILD_CHECK(mq_uid == 0);
	});
}

/* become_user makes a forked child uid and gid 1000 with no groups and
 * no capabilities, dumpable again (as USER_CHILD's). */
static int become_user(void)
{
	if (setgroups(0, NULL) < 0 || setresgid(1000, 1000, 1000) < 0 || setresuid(1000, 1000, 1000) < 0)
		return -1;
	return prctl(PR_SET_DUMPABLE, 1);
}

/* send_two_fds sends a and b in one message on s. */
static int send_two_fds(int s, int a, int b)
{
	char byte = 'f';
	struct iovec iov = {&byte, 1};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	int fds[2] = {a, b};
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(s, &mh, 0) == 1 ? 0 : -1;
}

/* recv_two_fds receives the two descriptors send_two_fds sent. */
static int recv_two_fds(int s, int *a, int *b)
{
	char byte;
	struct iovec iov = {&byte, 1};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	if (recvmsg(s, &mh, 0) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c == NULL || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		return -1;
	int fds[2];
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	*a = fds[0];
	*b = fds[1];
	return 0;
}

/* CVE-2013-1959's pattern: an unprivileged process opens its new
 * namespace's uid_map and gid_map and hands them to a privileged one
 * (as a setuid program's stdout): the writer's privilege does not count,
 * the opener's does. Only the opener's own id can be mapped. */
static void map_opener_needs_privilege_too(void)
{
	int sv[2];
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		close(sv[0]);
		CHILD_CHECK(become_user() == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		int u = open("/proc/self/uid_map", O_WRONLY);
		int g = open("/proc/self/gid_map", O_WRONLY);
		CHILD_CHECK(u >= 0 && g >= 0);
		CHILD_CHECK(send_two_fds(sv[1], u, g) == 0);
		char c;
		CHILD_CHECK(read(sv[1], &c, 1) == 1);
		/* Only the opener's own uid was mapped, no gid. */
		CHILD_CHECK(getuid() == 0 && getgid() == 65534);
		_exit(0);
	}
	close(sv[1]);
	int u = -1, g = -1;
	CHECK_SYS(recv_two_fds(sv[0], &u, &g));
	/* The parent's root: the opener lacked CAP_SETFCAP when it made
	 * the namespace. */
	CHECK_ERR(write(u, "0 0 1000\n", 9), EPERM);
	/* Another id, or a range: the opener has no CAP_SETUID over the
	 * parent, though the writer has. */
	CHECK_ERR(write(u, "0 1001 1\n", 9), EPERM);
	CHECK_ERR(write(u, "0 1000 2\n", 9), EPERM);
	/* gid_map before setgroups is denied needs CAP_SETGID over the
	 * parent in the opener too. */
	CHECK_ERR(write(g, "0 1000 1\n", 9), EPERM);
	/* The opener's own id is fine, whoever writes it. */
	CHECK_EQ(write(u, "0 1000 1\n", 9), 9);
	CHECK_EQ(write(sv[0], "x", 1), 1);
	int st;
	CHECK_SYS(waitpid(p, &st, 0));
	CHECK_EXITED(st, 0);
}

/* A map file names the namespace its process was in when it was opened:
 * written after an unshare, it changes the old namespace (already
 * mapped, or the initial one: EPERM), not the new one. */
static void map_file_names_open_time_namespace(void)
{
	USER_CHILD({
		int u = open("/proc/self/uid_map", O_WRONLY);
		CHILD_CHECK(u >= 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_ERR(write(u, "0 1000 1\n", 9), EPERM);
		CHILD_CHECK(getuid() == 65534);
		/* A fresh open names the new namespace. */
		CHILD_CHECK(put("/proc/self/uid_map", "0 1000 1") == 0);
		CHILD_CHECK(getuid() == 0);
	});
}

/* setgroups is checked when opened for writing (CAP_SYS_ADMIN in the
 * namespace), not when written: a descriptor root opened works in the
 * hands of a process without that capability. */
static void setgroups_checked_at_open(void)
{
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		close(go[0]);
		close(done[1]);
		CHILD_CHECK(become_user() == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(write(go[1], "x", 1) == 1);
		char c;
		CHILD_CHECK(read(done[0], &c, 1) == 1);
		char buf[64];
		CHILD_CHECK(strcmp(get("/proc/self/setgroups", buf, sizeof(buf)), "deny\n") == 0);
		_exit(0);
	}
	close(go[1]);
	close(done[0]);
	char c;
	CHECK_EQ(read(go[0], &c, 1), 1);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/setgroups", p);
	int fd = CHECK_SYS(open(path, O_WRONLY));
	pid_t w = fork();
	CHECK(w >= 0);
	if (w == 0) {
		/* Neither the owner nor privileged over the namespace. */
		CHILD_CHECK(setgroups(0, NULL) == 0 && setresgid(999, 999, 999) == 0 &&
			    setresuid(999, 999, 999) == 0);
		CHILD_ERR(open(path, O_WRONLY), EACCES);
		CHILD_CHECK(write(fd, "deny", 4) == 4);
		_exit(0);
	}
	int st;
	CHECK_SYS(waitpid(w, &st, 0));
	CHECK_EXITED(st, 0);
	CHECK_EQ(write(done[1], "x", 1), 1);
	CHECK_SYS(waitpid(p, &st, 0));
	CHECK_EXITED(st, 0);
}

static volatile int vm_secret = 0x5ec2e7;

/* process_vm_readv of a non-dumpable process needs CAP_SYS_PTRACE over
 * the user namespace its address space was made in (at its exec: Linux's
 * mm->user_ns), not the one it is in now: after it unshares one, the new
 * namespace's owner, though it has every capability there, still may
 * not read it; once dumpable, it may. */
static void vm_read_checks_exec_time_namespace(void)
{
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		close(go[0]);
		close(done[1]);
		CHILD_CHECK(become_user() == 0);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 0) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(prctl(PR_GET_DUMPABLE) == 0);
		char c;
		CHILD_CHECK(write(go[1], "x", 1) == 1);
		CHILD_CHECK(read(done[0], &c, 1) == 1);
		CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
		CHILD_CHECK(write(go[1], "x", 1) == 1);
		CHILD_CHECK(read(done[0], &c, 1) == 1);
		_exit(0);
	}
	close(go[1]);
	close(done[0]);
	char c;
	CHECK_EQ(read(go[0], &c, 1), 1);
	/* The reader: uid 1000 like the target, the owner of its new
	 * namespace, without capabilities where the target last exec'd. */
	AS_USER({
		int v = 0;
		struct iovec l = {&v, sizeof(v)}, r = {(void *)&vm_secret, sizeof(v)};
		CHILD_ERR(process_vm_readv(p, &l, 1, &r, 1, 0), EPERM);
	});
	CHECK_EQ(write(done[1], "x", 1), 1);
	CHECK_EQ(read(go[0], &c, 1), 1);
	AS_USER({
		int v = 0;
		struct iovec l = {&v, sizeof(v)}, r = {(void *)&vm_secret, sizeof(v)};
		CHILD_CHECK(process_vm_readv(p, &l, 1, &r, 1, 0) == sizeof(v));
		CHILD_CHECK(v == 0x5ec2e7);
	});
	CHECK_EQ(write(done[1], "x", 1), 1);
	int st;
	CHECK_SYS(waitpid(p, &st, 0));
	CHECK_EXITED(st, 0);
}

/* copy_self copies this program to path with mode 0755 (the cached
 * binary may be unreadable to other users, which would make an exec of it
 * non-dumpable and move its address space to the outer namespace). */
static int copy_self(const char *path)
{
	int in = open("/proc/self/exe", O_RDONLY);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		return -1;
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	if (fchmod(out, 0755) < 0 || close(out) < 0)
		return -1;
	return n == 0 ? 0 : -1;
}

/* nondumpable_owner runs (a copy with mode `mode` of) this program with
 * --nondumpable as uid 1000 in a new user namespace mapping 0 to 1000,
 * and returns the uid that owns its /proc/PID/environ and fd (-1 if
 * they differ or something failed). */
static int nondumpable_owner(mode_t mode)
{
	if (copy_self("exe") < 0 || chmod("exe", mode) < 0)
		return -1;
	int go[2], done[2];
	if (pipe(go) < 0 || pipe(done) < 0)
		return -1;
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		CHILD_CHECK(become_user() == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		CHILD_CHECK(dup2(done[0], 0) == 0 && dup2(go[1], 1) == 1);
		char *argv[] = {"exe", "--nondumpable", NULL};
		execv("exe", argv);
		_exit(MT_CHILD_FAIL);
	}
	close(go[1]);
	close(done[0]);
	int owner = -1;
	char c, path[64];
	struct stat a, b;
	if (read(go[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/environ", p);
		int ra = stat(path, &a);
		snprintf(path, sizeof(path), "/proc/%d/fd", p);
		if (ra == 0 && stat(path, &b) == 0 && a.st_uid == b.st_uid && a.st_gid == a.st_uid &&
		    b.st_gid == b.st_uid)
			owner = (int)a.st_uid;
	}
	if (write(done[1], "x", 1) != 1)
		owner = -1;
	int ws;
	if (waitpid(p, &ws, 0) != p || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		owner = -1;
	close(go[0]);
	close(done[1]);
	unlink("exe");
	return owner;
}

/* A non-dumpable process's /proc files belong to the root of the user
 * namespace its address space belongs to (Linux's task_dump_owner uses
 * mm->user_ns): the one it last exec'd in, here root is 1000 outside,
 * not the global root. An exec of a program its user may not read
 * (execute only, owned by root, unmapped inside) moves the address space
 * up to the outer namespace (would_dump): its root owns them. */
static void nondumpable_files_owned_by_namespace_root(void)
{
	ENTER();
	CHECK_EQ(nondumpable_owner(0755), 1000);
	CHECK_EQ(nondumpable_owner(0711), 0);
}

/* A program its user may execute but not read runs (the kernel reads
 * it, not the user) and is not dumpable, so the user cannot read it
 * through /proc/PID/mem or process_vm_readv either (would_dump). */
static void exec_only_program_runs_not_dumpable(void)
{
	ENTER();
	CHECK_SYS(copy_self("exe"));
	for (int i = 0; i < 2; i++) {
		mode_t mode = i == 0 ? 0755 : 0711;
		CHECK_SYS(chmod("exe", mode));
		int out[2];
		CHECK_SYS(pipe(out));
		AS_USER({
			CHILD_CHECK(dup2(out[1], 1) == 1);
			char *argv[] = {"exe", "--dumpable", NULL};
			execv("exe", argv);
			_exit(MT_CHILD_FAIL);
		});
		close(out[1]);
		char c = 0;
		CHECK_EQ(read(out[0], &c, 1), 1);
		close(out[0]);
		CHECK_EQ(c, mode == 0755 ? '1' : '0');
	}
}

/* A file system belongs to the user namespace of the task that mounted
 * it (for proc, the PID namespace's owner; Linux's s_user_ns), not to the
 * owner of the mount namespace it went into: a tmpfs root mounted into
 * a user namespace's mount namespace (after setns) is not that
 * namespace's root to remount, though its own tmpfs is. */
static void remount_needs_mounters_namespace(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0777));
	CHECK_SYS(mkdir("own", 0777));
	int go[2], done[2];
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		close(go[0]);
		close(done[1]);
		CHILD_CHECK(become_user() == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
		CHILD_CHECK(map_self() == 0);
		CHILD_CHECK(write(go[1], "x", 1) == 1);
		char c;
		CHILD_CHECK(read(done[0], &c, 1) == 1);
		/* The outsider's tmpfs is there, and not ours to remount. */
		struct stat st;
		CHILD_CHECK(stat("m/outsider", &st) == 0);
		CHILD_ERR(mount(NULL, "m", NULL, MS_REMOUNT | MS_RDONLY, NULL), EPERM);
		/* The mount's own flags are the namespace's to change. */
		CHILD_CHECK(mount(NULL, "m", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
		/* A tmpfs of our own is ours. */
		CHILD_CHECK(mount("none", "own", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mount(NULL, "own", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
		_exit(0);
	}
	close(go[1]);
	close(done[0]);
	char c;
	CHECK_EQ(read(go[0], &c, 1), 1);
	pid_t h = fork();
	CHECK(h >= 0);
	if (h == 0) {
		/* Root outside joins the namespace's mount namespace, keeping
		 * its own user namespace, and mounts a tmpfs there. */
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", p);
		int ns = open(path, O_RDONLY);
		CHILD_CHECK(ns >= 0);
		char cwd[256];
		CHILD_CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
		CHILD_CHECK(setns(ns, CLONE_NEWNS) == 0);
		CHILD_CHECK(chdir(cwd) == 0);
		CHILD_CHECK(mount("none", "m", "tmpfs", 0, "mode=0777") == 0);
		int fd = open("m/outsider", O_WRONLY | O_CREAT, 0644);
		CHILD_CHECK(fd >= 0);
		close(fd);
		_exit(0);
	}
	int st;
	CHECK_SYS(waitpid(h, &st, 0));
	CHECK_EXITED(st, 0);
	CHECK_EQ(write(done[1], "x", 1), 1);
	CHECK_SYS(waitpid(p, &st, 0));
	CHECK_EXITED(st, 0);
}

/* Root in a user namespace overrides the mode bits of files whose owner
 * and group the namespace maps (Linux's capable_wrt_inode_uidgid), and
 * of no others. */
static void dac_override_over_mapped_files(void)
{
	ENTER();
	int fd = CHECK_SYS(open("mine", O_WRONLY | O_CREAT | O_TRUNC, 0));
	CHECK_SYS(fchown(fd, 1000, 1000));
	CHECK_SYS(fchmod(fd, 0));
	close(fd);
	fd = CHECK_SYS(open("roots", O_WRONLY | O_CREAT | O_TRUNC, 0));
	CHECK_SYS(fchmod(fd, 0));
	close(fd);
	USER_CHILD({
		CHILD_ERR(open("mine", O_RDONLY), EACCES);
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(map_self() == 0);
		int f = open("mine", O_RDWR);
		CHILD_CHECK(f >= 0);
		close(f);
		CHILD_ERR(open("roots", O_RDONLY), EACCES);
	});
	unlink("mine");
	unlink("roots");
}

static const struct mt_case cases[] = {
	MT_CASE(unshare_ids_read_overflow),
	MT_CASE(unshare_gives_full_caps),
	MT_CASE(write_own_uid_map),
	MT_CASE(uid_map_eperm_cases),
	MT_CASE(gid_map_needs_setgroups_deny),
	MT_CASE(mapped_ids_in_syscalls),
	MT_CASE(caps_do_not_reach_the_parent),
	MT_CASE(clone_newuser_newuts),
	MT_CASE(nested_namespaces),
	MT_CASE(parent_writes_child_maps),
	MT_CASE(ns_user_files),
	MT_CASE(unshare_multithreaded_einval),
	MT_CASE(setns_into_child_as_owner),
	MT_CASE(chrooted_cannot_unshare),
	MT_CASE(child_uid_in_siginfo),
	MT_CASE(ipc_owner_translated),
	MT_CASE(socket_credentials_translated),
	MT_CASE(priority_of_user_ids),
	MT_CASE(setns_user_needs_own_fs_and_thread),
	MT_CASE(mq_notify_uid_translated),
	MT_CASE(map_opener_needs_privilege_too),
	MT_CASE(map_file_names_open_time_namespace),
	MT_CASE(setgroups_checked_at_open),
	MT_CASE(vm_read_checks_exec_time_namespace),
	MT_CASE(nondumpable_files_owned_by_namespace_root),
	MT_CASE(exec_only_program_runs_not_dumpable),
	MT_CASE(remount_needs_mounters_namespace),
	MT_CASE(dac_override_over_mapped_files),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--nondumpable") == 0) {
		/* nondumpable_files_owned_by_namespace_root's process: not
		 * dumpable, it says so on stdout and waits for a byte. */
		char c;
		if (prctl(PR_SET_DUMPABLE, 0) < 0 || write(1, "r", 1) != 1 || read(0, &c, 1) != 1)
			return 1;
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--dumpable") == 0) {
		/* exec_only_program_runs_not_dumpable's program. */
		char c = (char)('0' + prctl(PR_GET_DUMPABLE));
		return write(1, &c, 1) == 1 ? 0 : 1;
	}
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
