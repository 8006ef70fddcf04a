//go:build ignore

/* namespaces_setns: /proc/[pid]/ns links name each namespace by its own
 * inode (kind:[inode], the same for tasks sharing it, new after unshare
 * and in pid_for_children), and setns(2) on them joins a UTS, IPC or PID
 * namespace, with its type, descriptor and CAP_SYS_ADMIN checks. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static ino_t ns_ino(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void links_name_their_inode(void)
{
	const char *kinds[] = {"uts", "ipc", "pid", "pid_for_children"};
	for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		char path[64], link[64], want[64];
		snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
		ssize_t n = readlink(path, link, sizeof link - 1);
		CHECK_GT(n, 0);
		link[n] = 0;
		const char *k = strcmp(kinds[i], "pid_for_children") == 0 ? "pid" : kinds[i];
		snprintf(want, sizeof want, "%s:[%lu]", k, (unsigned long)ns_ino(path));
		CHECK_STREQ(link, want);
	}
}

static void children_share_namespace_inodes(void)
{
	ino_t uts = ns_ino("/proc/self/ns/uts"), pid = ns_ino("/proc/self/ns/pid");
	CHECK_NE(uts, 0);
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(ns_ino("/proc/self/ns/uts") == uts);
		CHILD_CHECK(ns_ino("/proc/self/ns/pid") == pid);
		CHILD_CHECK(ns_ino("/proc/self/ns/pid_for_children") == pid);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void unshare_gives_new_inodes(void)
{
	ino_t uts = ns_ino("/proc/self/ns/uts"), ipc = ns_ino("/proc/self/ns/ipc");
	ino_t pid = ns_ino("/proc/self/ns/pid");
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID) == 0);
		ino_t nuts = ns_ino("/proc/self/ns/uts"), nipc = ns_ino("/proc/self/ns/ipc");
		CHILD_CHECK(nuts != 0 && nuts != uts);
		CHILD_CHECK(nipc != 0 && nipc != ipc && nipc != nuts);
		/* The process stays in its PID namespace; children do not,
		 * and the children's namespace has no name until the
		 * first of them, its init, exists. */
		CHILD_CHECK(ns_ino("/proc/self/ns/pid") == pid);
		struct stat st;
		CHILD_CHECK(stat("/proc/self/ns/pid_for_children", &st) == -1 && errno == ENOENT);
		int hold[2];
		CHILD_CHECK(pipe(hold) == 0);
		pid_t c = fork();
		CHILD_CHECK(c >= 0);
		if (c == 0) {
			char b;
			close(hold[1]);
			(void)!read(hold[0], &b, 1);
			_exit(0);
		}
		close(hold[0]);
		ino_t kids = ns_ino("/proc/self/ns/pid_for_children");
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/ns/pid", c);
		ino_t cns = ns_ino(path);
		close(hold[1]);
		waitpid(c, NULL, 0);
		CHILD_CHECK(kids != 0 && kids != pid);
		CHILD_CHECK(cns == kids);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

/* A child in a new UTS namespace named "joined", waiting on a pipe. */
static pid_t uts_holder(int *wfd)
{
	int ready[2], hold[2];
	if (pipe(ready) < 0 || pipe(hold) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		close(ready[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWUTS) != 0 || sethostname("joined", 6) != 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		char c;
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	char c;
	if (p < 0 || mt_read_n(ready[0], &c, 1, 10000) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	*wfd = hold[1];
	return p;
}

static void setns_joins_uts_namespace(void)
{
	struct utsname mine;
	CHECK_SYS(uname(&mine));
	int hold;
	pid_t h = CHECK_SYS(uts_holder(&hold));
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/uts", h);
	int fd = open(path, O_RDONLY);
	pid_t p = fork();
	if (p == 0) {
		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(setns(fd, CLONE_NEWUTS) == 0);
		struct utsname u;
		CHILD_CHECK(uname(&u) == 0 && strcmp(u.nodename, "joined") == 0);
		char self[64];
		snprintf(self, sizeof self, "/proc/%d/ns/uts", h);
		CHILD_CHECK(ns_ino("/proc/self/ns/uts") == ns_ino(self));
		_exit(0);
	}
	close(hold);
	int st = p > 0 ? mt_wait(p) : -1;
	mt_wait(h);
	if (fd >= 0)
		close(fd);
	CHECK_SYS(fd);
	CHECK_EXITED(st, 0);
	struct utsname now;
	CHECK_SYS(uname(&now));
	CHECK_STREQ(now.nodename, mine.nodename);
}

static void setns_checks_type_and_descriptor(void)
{
	int fd = CHECK_SYS(open("/proc/self/ns/uts", O_RDONLY));
	int nul = open("/dev/null", O_RDONLY);
	int e1 = setns(fd, CLONE_NEWIPC) == -1 ? errno : 0;
	int e2 = setns(nul, 0) == -1 ? errno : 0;
	int e3 = setns(1000, 0) == -1 ? errno : 0;
	/* Rejoining one's own UTS namespace is fine. */
	int r = setns(fd, CLONE_NEWUTS);
	close(fd);
	close(nul);
	CHECK_EQ(e1, EINVAL);
	CHECK_EQ(e2, EINVAL);
	CHECK_EQ(e3, EBADF);
	CHECK_EQ(r, 0);
}

static void setns_needs_cap_sys_admin(void)
{
	int fd = CHECK_SYS(open("/proc/self/ns/uts", O_RDONLY));
	AS_USER({
		if (setns(fd, 0) != -1 || errno != EPERM)
			_exit(2);
	});
	close(fd);
}

static int wait_on_pipe(void *arg)
{
	int *fds = arg;
	close(fds[1]);
	char c;
	(void)!read(fds[0], &c, 1);
	return 0;
}

static void setns_pid_sets_childrens_namespace(void)
{
	int fds[2];
	CHECK_SYS(pipe(fds));
	char *stk = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stk != MAP_FAILED);
	pid_t init = clone(wait_on_pipe, stk + STACK_SIZE, CLONE_NEWPID | SIGCHLD, fds);
	close(fds[0]);
	CHECK_SYS(init);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/pid", init);
	int fd = open(path, O_RDONLY);
	pid_t p = fork();
	if (p == 0) {
		pid_t me = getpid();
		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(setns(fd, CLONE_NEWPID) == 0);
		CHILD_CHECK(getpid() == me);
		CHILD_CHECK(ns_ino("/proc/self/ns/pid_for_children") == ns_ino(path));
		pid_t c = fork();
		CHILD_CHECK(c >= 0);
		if (c == 0)
			_exit(getpid() == 2 && getppid() == 0 ? 0 : 1);
		int st;
		CHILD_CHECK(waitpid(c, &st, 0) == c);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		_exit(0);
	}
	int st = p > 0 ? mt_wait(p) : -1;
	close(fds[1]);
	mt_wait(init);
	if (fd >= 0)
		close(fd);
	CHECK_SYS(fd);
	CHECK_EXITED(st, 0);
}

static int setns_to_parent(void *arg)
{
	int fd = (int)(long)arg;
	if (setns(fd, CLONE_NEWPID) != -1 || errno != EINVAL)
		return 2;
	return 0;
}

static void setns_pid_to_ancestor_einval(void)
{
	int fd = CHECK_SYS(open("/proc/self/ns/pid", O_RDONLY));
	char *stk = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stk != MAP_FAILED);
	pid_t p = clone(setns_to_parent, stk + STACK_SIZE, CLONE_NEWPID | SIGCHLD, (void *)(long)fd);
	int st = p > 0 ? mt_wait(p) : -1;
	close(fd);
	CHECK_SYS(p);
	CHECK_EXITED(st, 0);
}

static void setns_joins_ipc_namespace(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		int orig = open("/proc/self/ns/ipc", O_RDONLY);
		CHILD_CHECK(orig >= 0);
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
		CHILD_CHECK(id >= 0);
		CHILD_CHECK(unshare(CLONE_NEWIPC) == 0);
		struct shmid_ds ds;
		CHILD_CHECK(shmctl(id, IPC_STAT, &ds) == -1);
		CHILD_CHECK(setns(orig, CLONE_NEWIPC) == 0);
		CHILD_CHECK(shmctl(id, IPC_STAT, &ds) == 0);
		shmctl(id, IPC_RMID, NULL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(links_name_their_inode),
	MT_CASE(children_share_namespace_inodes),
	MT_CASE(unshare_gives_new_inodes),
	MT_CASE(setns_joins_uts_namespace),
	MT_CASE(setns_checks_type_and_descriptor),
	MT_CASE(setns_needs_cap_sys_admin),
	MT_CASE(setns_pid_sets_childrens_namespace),
	MT_CASE(setns_pid_to_ancestor_einval),
	MT_CASE(setns_joins_ipc_namespace),
};

MT_MAIN(cases)
