//go:build ignore

/* mount_ns: mount namespaces. unshare(CLONE_NEWNS) and clone(CLONE_NEWNS)
 * give a copy of the caller's mount tree in which mounts and unmounts are
 * private to it; /proc/[pid]/ns/mnt names the namespace and setns(2)
 * joins it again; pivot_root in a new namespace; CAP_SYS_ADMIN and
 * setns's conditions; propagation types (shared, slave, private,
 * unbindable) as /proc/self/mountinfo shows them and as mount events
 * travel between peers and to slaves. Every namespace change happens in
 * a forked child; the checks compare relative facts (the same mount seen
 * from two namespaces), never the host's mount table. Works under
 * /dev/shm. */
#include "moattest.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, strlen(data));
	close(fd);
	return n == (ssize_t)strlen(data) ? 0 : -1;
}

/* mountinfo_line finds, in /proc/PID/mountinfo (pid 0: self), the last
 * line whose mount point ends with "/" suffix and copies it to line;
 * returns 1 if found, 0 if not, -1 on error. */
static int mountinfo_line(pid_t pid, const char *suffix, char *line, size_t len)
{
	char path[64];
	if (pid)
		snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
	else
		snprintf(path, sizeof path, "/proc/self/mountinfo");
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char buf[4096], want[256];
	snprintf(want, sizeof want, "/%s", suffix);
	size_t wl = strlen(want);
	int found = 0;
	while (fgets(buf, sizeof buf, f)) {
		char point[4096];
		if (sscanf(buf, "%*s %*s %*s %*s %4095s", point) != 1)
			continue;
		size_t pl = strlen(point);
		if (pl >= wl && strcmp(point + pl - wl, want) == 0) {
			found = 1;
			snprintf(line, len, "%s", buf);
		}
	}
	fclose(f);
	return found;
}

static int mounted(pid_t pid, const char *suffix)
{
	char line[4096];
	return mountinfo_line(pid, suffix, line, sizeof line);
}

/* prop reads the optional fields of the mount at suffix: the shared and
 * master group ids (0 if absent) and unbindable; -1 if not mounted. */
static int prop(pid_t pid, const char *suffix, int *shared, int *master, int *unbindable)
{
	char line[4096];
	if (mountinfo_line(pid, suffix, line, sizeof line) != 1)
		return -1;
	*shared = *master = *unbindable = 0;
	char *save = NULL, *tok = strtok_r(line, " \n", &save);
	for (int i = 0; tok; i++, tok = strtok_r(NULL, " \n", &save)) {
		if (strcmp(tok, "-") == 0)
			break;
		if (i < 6)
			continue;
		if (strncmp(tok, "shared:", 7) == 0)
			*shared = atoi(tok + 7);
		else if (strncmp(tok, "master:", 7) == 0)
			*master = atoi(tok + 7);
		else if (strcmp(tok, "unbindable") == 0)
			*unbindable = 1;
	}
	return 0;
}

/* mount_id returns the id (first field) of the mount at suffix. */
static int mount_id(pid_t pid, const char *suffix)
{
	char line[4096];
	if (mountinfo_line(pid, suffix, line, sizeof line) != 1)
		return -1;
	return atoi(line);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = 0, c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void ns_link(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len - 1);
	buf[n < 0 ? 0 : n] = 0;
}

/* A child in its own namespace and its parent, stepping together: each
 * side writes one byte to say it reached a step and reads one to wait
 * for the other. */
struct sync {
	int to_child[2], to_parent[2];
};

static int sync_init(struct sync *s)
{
	if (pipe(s->to_child) < 0 || pipe(s->to_parent) < 0)
		return -1;
	return 0;
}

static void sync_close(struct sync *s)
{
	close(s->to_child[0]);
	close(s->to_child[1]);
	close(s->to_parent[0]);
	close(s->to_parent[1]);
}

static int step(int fd) { return write(fd, "x", 1) == 1 ? 0 : -1; }

static int await(int fd)
{
	char c;
	return read(fd, &c, 1) == 1 ? 0 : -1;
}

static int wait_ok(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* A mount made after unshare(CLONE_NEWNS) is the child's alone: the
 * parent does not see it, in its mountinfo or through the path, while the
 * child's /proc/PID/mountinfo, read by the parent, shows it. */
static void unshare_hides_new_mounts(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	struct sync s;
	CHECK_SYS(sync_init(&s));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount("none", "m", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(write_file("m/f", "child") == 0);
		CHILD_CHECK(mounted(0, "m") == 1);
		CHILD_CHECK(step(s.to_parent[1]) == 0);
		CHILD_CHECK(await(s.to_child[0]) == 0);
		_exit(0);
	}
	CHECK_SYS(await(s.to_parent[0]));
	CHECK_ERR(access("m/f", F_OK), ENOENT);
	CHECK_EQ(mounted(0, "m"), 0);
	CHECK_EQ(mounted(pid, "m"), 1);
	/* The parent's own mount is not the child's either. */
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	CHECK_EQ(mounted(pid, "m"), 1);
	CHECK_ERR(access("m/f", F_OK), ENOENT);
	CHECK_SYS(umount2("m", 0));
	CHECK_SYS(step(s.to_child[1]));
	CHECK_SYS(wait_ok(pid));
	sync_close(&s);
}

/* The copy holds every mount of the caller's namespace, in the same
 * places, under new mount ids; unmounting in the copy leaves the
 * original alone. */
static void unshare_copies_the_tree(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mount("none", "m", "tmpfs", 0, NULL));
	CHECK_SYS(write_file("m/f", "parent"));
	int lines = CHECK_SYS(count_lines("/proc/self/mountinfo"));
	int id = mount_id(0, "m");
	CHECK_GT(id, 0);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(count_lines("/proc/self/mountinfo") == lines);
		CHILD_CHECK(access("m/f", F_OK) == 0);
		int cid = mount_id(0, "m");
		CHILD_CHECK(cid > 0 && cid != id);
		/* The working directory moved onto the copy: "." still works
		 * and the copy unmounts from here. */
		CHILD_CHECK(umount2("m", 0) == 0);
		CHILD_CHECK(access("m/f", F_OK) == -1 && errno == ENOENT);
		CHILD_CHECK(mounted(0, "m") == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
	CHECK_SYS(access("m/f", F_OK));
	CHECK_EQ(mount_id(0, "m"), id);
	CHECK_SYS(umount2("m", 0));
}

/* clone(CLONE_NEWNS) gives the child a namespace of its own. */
static char clone_stack[64 * 1024] __attribute__((aligned(16)));

static int clone_child(void *arg)
{
	(void)arg;
	if (mount("none", "m", "tmpfs", 0, NULL) < 0)
		return 1;
	if (write_file("m/f", "x") < 0)
		return 2;
	return mounted(0, "m") == 1 ? 0 : 3;
}

static void clone_newns(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	char before[64], after[64];
	ns_link("/proc/self/ns/mnt", before, sizeof before);
	pid_t pid = CHECK_SYS(clone(clone_child, clone_stack + sizeof clone_stack, CLONE_NEWNS | SIGCHLD, NULL));
	int st;
	CHECK_SYS(waitpid(pid, &st, 0));
	CHECK_EXITED(st, 0);
	CHECK_ERR(access("m/f", F_OK), ENOENT);
	CHECK_EQ(mounted(0, "m"), 0);
	ns_link("/proc/self/ns/mnt", after, sizeof after);
	CHECK_STREQ(before, after);
	CHECK_ERR(syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EINVAL);
}

/* /proc/PID/ns/mnt names the namespace: a new one after unshare, with
 * the inode stat gives; a child shares its parent's. */
static void ns_mnt_link(void)
{
	ENTER();
	char mine[64];
	ns_link("/proc/self/ns/mnt", mine, sizeof mine);
	CHECK_EQ(strncmp(mine, "mnt:[", 5), 0);
	struct stat st;
	CHECK_SYS(stat("/proc/self/ns/mnt", &st));
	CHECK_EQ(st.st_ino, strtoull(mine + 5, NULL, 10));
	struct sync s;
	CHECK_SYS(sync_init(&s));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char l[64];
		ns_link("/proc/self/ns/mnt", l, sizeof l);
		CHILD_CHECK(strcmp(l, mine) == 0);
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		ns_link("/proc/self/ns/mnt", l, sizeof l);
		CHILD_CHECK(strncmp(l, "mnt:[", 5) == 0 && strcmp(l, mine) != 0);
		struct stat cst;
		CHILD_CHECK(stat("/proc/self/ns/mnt", &cst) == 0);
		CHILD_CHECK(cst.st_ino == strtoull(l + 5, NULL, 10));
		CHILD_CHECK(step(s.to_parent[1]) == 0);
		CHILD_CHECK(await(s.to_child[0]) == 0);
		_exit(0);
	}
	CHECK_SYS(await(s.to_parent[0]));
	char path[64], theirs[64];
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	ns_link(path, theirs, sizeof theirs);
	CHECK_NE(strcmp(theirs, mine), 0);
	struct stat a, b;
	CHECK_SYS(stat(path, &a));
	CHECK_SYS(stat("/proc/self/ns/mnt", &b));
	CHECK_NE(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
	CHECK_SYS(step(s.to_child[1]));
	CHECK_SYS(wait_ok(pid));
	sync_close(&s);
}

/* setns back into the first namespace by a descriptor opened before
 * unshare: the child's mounts are out of sight again and its working
 * directory is the namespace's root. The type check and descriptors of
 * other kinds are EINVAL. */
static void setns_back(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int orig = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		CHILD_CHECK(orig >= 0);
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		int mine = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		CHILD_CHECK(mine >= 0);
		CHILD_CHECK(mount("none", "m", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(write_file("m/f", "x") == 0);
		CHILD_ERR(setns(orig, CLONE_NEWUTS), EINVAL);
		int uts = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
		CHILD_ERR(setns(uts, CLONE_NEWNS), EINVAL);
		CHILD_CHECK(setns(orig, CLONE_NEWNS) == 0);
		char buf[4096];
		CHILD_CHECK(getcwd(buf, sizeof buf) != NULL && strcmp(buf, "/") == 0);
		CHILD_CHECK(chdir(cwd) == 0);
		CHILD_CHECK(access("m/f", F_OK) == -1 && errno == ENOENT);
		CHILD_CHECK(mounted(0, "m") == 0);
		/* And forth again, with 0 for "any type". */
		CHILD_CHECK(setns(mine, 0) == 0);
		CHILD_CHECK(chdir(cwd) == 0);
		CHILD_CHECK(access("m/f", F_OK) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
	CHECK_ERR(access("m/f", F_OK), ENOENT);
}

/* A namespace lives while a descriptor names it: the child's, held open
 * by its parent after the child exited, can be joined, with the child's
 * mount still in it. */
static void ns_fd_keeps_namespace(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	struct sync s;
	CHECK_SYS(sync_init(&s));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount("none", "m", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(write_file("m/f", "kept") == 0);
		CHILD_CHECK(step(s.to_parent[1]) == 0);
		CHILD_CHECK(await(s.to_child[0]) == 0);
		_exit(0);
	}
	CHECK_SYS(await(s.to_parent[0]));
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	int fd = CHECK_SYS(open(path, O_RDONLY | O_CLOEXEC));
	CHECK_SYS(step(s.to_child[1]));
	CHECK_SYS(wait_ok(pid));
	sync_close(&s);
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(setns(fd, CLONE_NEWNS) == 0);
		CHILD_CHECK(chdir(cwd) == 0);
		char buf[8] = {0};
		int f = open("m/f", O_RDONLY);
		CHILD_CHECK(f >= 0 && read(f, buf, sizeof buf) == 4 && strcmp(buf, "kept") == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
	close(fd);
}

static void *sleeper(void *arg)
{
	int fd = *(int *)arg;
	char c;
	(void)!read(fd, &c, 1);
	return NULL;
}

/* setns of a mount namespace is EINVAL while another thread shares the
 * fs context (CLONE_FS, as every pthread does). */
static void setns_with_shared_fs_einval(void)
{
	ENTER();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		CHILD_CHECK(fd >= 0);
		int p[2];
		CHILD_CHECK(pipe(p) == 0);
		pthread_t th;
		CHILD_CHECK(pthread_create(&th, NULL, sleeper, &p[0]) == 0);
		CHILD_ERR(setns(fd, CLONE_NEWNS), EINVAL);
		CHILD_CHECK(write(p[1], "x", 1) == 1);
		CHILD_CHECK(pthread_join(th, NULL) == 0);
		CHILD_CHECK(setns(fd, CLONE_NEWNS) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* Without CAP_SYS_ADMIN, unshare(CLONE_NEWNS) and setns are EPERM. */
static void needs_cap_sys_admin(void)
{
	ENTER();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		CHILD_CHECK(fd >= 0);
		struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct d[2] = {{0}};
		CHILD_CHECK(syscall(SYS_capset, &h, d) == 0);
		CHILD_ERR(unshare(CLONE_NEWNS), EPERM);
		CHILD_ERR(setns(fd, CLONE_NEWNS), EPERM);
		CHILD_ERR(syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0), EPERM);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* pivot_root in a new namespace: the child's root becomes a tmpfs, the
 * parent's stays. */
static void pivot_root_in_new_ns(void)
{
	ENTER();
	CHECK_SYS(mkdir("r", 0755));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("none", "r", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("r/old", 0755) == 0);
		CHILD_CHECK(write_file("r/marker", "new root") == 0);
		CHILD_CHECK(syscall(SYS_pivot_root, "r", "r/old") == 0);
		CHILD_CHECK(chdir("/") == 0);
		CHILD_CHECK(access("/marker", F_OK) == 0);
		CHILD_CHECK(access("/old/proc/self", F_OK) == 0);
		CHILD_CHECK(umount2("/old", MNT_DETACH) == 0);
		CHILD_CHECK(access("/old/proc", F_OK) == -1 && errno == ENOENT);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
	CHECK_ERR(access("/marker", F_OK), ENOENT);
	CHECK_SYS(access("/proc/self", F_OK));
	CHECK_EQ(mounted(0, "r"), 0);
}

/* mount --make-rprivate / leaves no mount shared or a slave. */
static void make_rprivate(void)
{
	ENTER();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		FILE *f = fopen("/proc/self/mountinfo", "r");
		CHILD_CHECK(f != NULL);
		char line[4096];
		while (fgets(line, sizeof line, f)) {
			CHILD_CHECK(strstr(line, " shared:") == NULL);
			CHILD_CHECK(strstr(line, " master:") == NULL);
		}
		fclose(f);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* The propagation types as mountinfo shows them. */
static void propagation_fields(void)
{
	ENTER();
	CHECK_SYS(mkdir("m", 0755));
	CHECK_SYS(mkdir("b", 0755));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int shared, master, unb;
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("none", "m", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(prop(0, "m", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == 0 && unb == 0);
		CHILD_CHECK(mount(NULL, "m", NULL, MS_SHARED, NULL) == 0);
		CHILD_CHECK(prop(0, "m", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared > 0 && master == 0 && unb == 0);
		int group = shared;
		/* A bind of a shared mount is its peer. */
		CHILD_CHECK(mount("m", "b", NULL, MS_BIND, NULL) == 0);
		CHILD_CHECK(prop(0, "b", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == group && master == 0);
		/* A slave of the group it leaves. */
		CHILD_CHECK(mount(NULL, "b", NULL, MS_SLAVE, NULL) == 0);
		CHILD_CHECK(prop(0, "b", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == group);
		/* Shared and a slave at once. */
		CHILD_CHECK(mount(NULL, "b", NULL, MS_SHARED, NULL) == 0);
		CHILD_CHECK(prop(0, "b", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared > 0 && shared != group && master == group);
		CHILD_CHECK(mount(NULL, "b", NULL, MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(prop(0, "b", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == 0 && unb == 0);
		CHILD_CHECK(umount2("b", 0) == 0);
		/* Unbindable: shown, and no bind of it. */
		CHILD_CHECK(mount(NULL, "m", NULL, MS_UNBINDABLE, NULL) == 0);
		CHILD_CHECK(prop(0, "m", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == 0 && unb == 1);
		CHILD_ERR(mount("m", "b", NULL, MS_BIND, NULL), EINVAL);
		/* The last peer made a slave has no master: private. */
		CHILD_CHECK(mount(NULL, "m", NULL, MS_SHARED, NULL) == 0);
		CHILD_CHECK(mount(NULL, "m", NULL, MS_SLAVE, NULL) == 0);
		CHILD_CHECK(prop(0, "m", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == 0 && unb == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* The copies of a shared mount in a new namespace are its peers: a mount
 * below one shows below the other, both ways, and its unmount too; a
 * slave copy receives from the original but does not send back; a
 * private one does neither. */
static void shared_propagation(void)
{
	ENTER();
	CHECK_SYS(mkdir("p", 0755));
	struct sync s;
	CHECK_SYS(sync_init(&s));
	/* The parent runs in a namespace of its own too, so the test's
	 * process keeps its tree. */
	pid_t top = CHECK_SYS(fork());
	if (top == 0) {
		int shared, master, unb;
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("none", "p", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("p/a", 0755) == 0);
		CHILD_CHECK(mkdir("p/b", 0755) == 0);
		CHILD_CHECK(mkdir("p/c", 0755) == 0);
		CHILD_CHECK(mount(NULL, "p", NULL, MS_SHARED, NULL) == 0);
		CHILD_CHECK(prop(0, "p", &shared, &master, &unb) == 0);
		int group = shared;
		CHILD_CHECK(group > 0);
		pid_t pid = fork();
		CHILD_CHECK(pid >= 0);
		if (pid == 0) {
			CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
			CHILD_CHECK(prop(0, "p", &shared, &master, &unb) == 0);
			CHILD_CHECK(shared == group && master == 0);
			/* A mount in the copy shows in the original. */
			CHILD_CHECK(mount("none", "p/a", "tmpfs", 0, NULL) == 0);
			CHILD_CHECK(write_file("p/a/f", "from the copy") == 0);
			CHILD_CHECK(step(s.to_parent[1]) == 0);
			CHILD_CHECK(await(s.to_child[0]) == 0);
			/* The original's mount shows here. */
			CHILD_CHECK(access("p/b/g", F_OK) == 0);
			/* Now a slave: receives, does not send. */
			CHILD_CHECK(mount(NULL, "p", NULL, MS_SLAVE, NULL) == 0);
			CHILD_CHECK(prop(0, "p", &shared, &master, &unb) == 0);
			CHILD_CHECK(shared == 0 && master == group);
			CHILD_CHECK(mount("none", "p/c", "tmpfs", 0, NULL) == 0);
			CHILD_CHECK(step(s.to_parent[1]) == 0);
			CHILD_CHECK(await(s.to_child[0]) == 0);
			/* It went under the slave's own mount there. */
			CHILD_CHECK(access("p/c/h", F_OK) == -1 && errno == ENOENT);
			CHILD_CHECK(umount2("p/c", 0) == 0);
			CHILD_CHECK(access("p/c/h", F_OK) == 0);
			_exit(0);
		}
		CHILD_CHECK(await(s.to_parent[0]) == 0);
		CHILD_CHECK(access("p/a/f", F_OK) == 0);
		CHILD_CHECK(prop(0, "p/a", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared > 0 && shared != group);
		int agroup = shared;
		CHILD_CHECK(prop(pid, "p/a", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == agroup);
		/* Its unmount here takes the copy's away too. */
		CHILD_CHECK(umount2("p/a", 0) == 0);
		CHILD_CHECK(mounted(pid, "p/a") == 0);
		CHILD_CHECK(mount("none", "p/b", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(write_file("p/b/g", "from the original") == 0);
		CHILD_CHECK(step(s.to_child[1]) == 0);
		CHILD_CHECK(await(s.to_parent[0]) == 0);
		/* The slave's mount on p/c did not come here; a mount made
		 * here on p/c goes there, under its own. */
		CHILD_CHECK(mounted(0, "p/c") == 0);
		CHILD_CHECK(mount("none", "p/c", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(write_file("p/c/h", "to the slave") == 0);
		CHILD_CHECK(step(s.to_child[1]) == 0);
		CHILD_CHECK(wait_ok(pid) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(top));
	sync_close(&s);
	CHECK_EQ(mounted(0, "p"), 0);
}

/* A private copy neither sends nor receives. */
static void private_copy_isolated(void)
{
	ENTER();
	CHECK_SYS(mkdir("p", 0755));
	struct sync s;
	CHECK_SYS(sync_init(&s));
	pid_t top = CHECK_SYS(fork());
	if (top == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("none", "p", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("p/a", 0755) == 0);
		CHILD_CHECK(mount(NULL, "p", NULL, MS_SHARED, NULL) == 0);
		pid_t pid = fork();
		CHILD_CHECK(pid >= 0);
		if (pid == 0) {
			CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
			CHILD_CHECK(mount(NULL, "p", NULL, MS_PRIVATE, NULL) == 0);
			CHILD_CHECK(mount("none", "p/a", "tmpfs", 0, NULL) == 0);
			CHILD_CHECK(step(s.to_parent[1]) == 0);
			CHILD_CHECK(await(s.to_child[0]) == 0);
			CHILD_CHECK(mounted(0, "p/a") == 1);
			CHILD_CHECK(umount2("p/a", 0) == 0);
			CHILD_CHECK(mounted(0, "p/a") == 0);
			_exit(0);
		}
		CHILD_CHECK(await(s.to_parent[0]) == 0);
		CHILD_CHECK(mounted(0, "p/a") == 0);
		CHILD_CHECK(mount("none", "p/a", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(step(s.to_child[1]) == 0);
		CHILD_CHECK(wait_ok(pid) == 0);
		CHILD_CHECK(mounted(0, "p/a") == 1);
		_exit(0);
	}
	CHECK_SYS(wait_ok(top));
	sync_close(&s);
}

/* A mount namespace made with a new user namespace: its copies of shared
 * mounts are slaves (until the masters' namespace goes), its mounts are
 * locked (no unmount alone, no clearing
 * of read-only), new tmpfs mounts work, proc needs the PID namespace's
 * owner and sysfs is refused. */
static void user_ns_copy_is_locked(void)
{
	ENTER();
	CHECK_SYS(mkdir("p", 0755));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		int shared, master, unb;
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("none", "p", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("p/d", 0755) == 0);
		CHILD_CHECK(mount("none", "p/d", "tmpfs", MS_RDONLY, NULL) == 0);
		CHILD_CHECK(mount(NULL, "p", NULL, MS_SHARED, NULL) == 0);
		CHILD_CHECK(prop(0, "p", &shared, &master, &unb) == 0);
		int group = shared;
		/* The first namespace stays while a descriptor names it. */
		int first = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		CHILD_CHECK(first >= 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
		CHILD_CHECK(prop(0, "p", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == group);
		/* Its going takes the master's peer group away: private. */
		CHILD_CHECK(close(first) == 0);
		CHILD_CHECK(prop(0, "p", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared == 0 && master == 0);
		CHILD_ERR(umount2("p/d", 0), EINVAL);
		CHILD_ERR(umount2("p/d", MNT_DETACH), EINVAL);
		/* The tmpfs is the parent user namespace's to remount; the
		 * mount's flags are ours, the locked ones kept. */
		CHILD_ERR(mount(NULL, "p/d", NULL, MS_REMOUNT | MS_RDONLY, NULL), EPERM);
		CHILD_ERR(mount(NULL, "p/d", NULL, MS_REMOUNT | MS_BIND, NULL), EPERM);
		CHILD_CHECK(mount(NULL, "p/d", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL) == 0);
		CHILD_ERR(mount("none", "p", "proc", 0, NULL), EPERM);
		CHILD_ERR(mount("none", "p", "sysfs", 0, NULL), EPERM);
		/* Its own mounts are its to change. */
		CHILD_CHECK(mount("none", "p", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mount(NULL, "p", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
		CHILD_CHECK(umount2("p", 0) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* What bubblewrap does in a user namespace: pivot into a tmpfs of its
 * own, then unmount the old root, which pivot_root unlocked (the new
 * root carries the lock). */
static void user_ns_pivot_then_drop_old_root(void)
{
	ENTER();
	CHECK_SYS(mkdir("r", 0755));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
		/* Root inside is root outside, so files can be made. */
		CHILD_CHECK(write_file("/proc/self/setgroups", "deny") == 0);
		CHILD_CHECK(write_file("/proc/self/uid_map", "0 0 1") == 0);
		CHILD_CHECK(write_file("/proc/self/gid_map", "0 0 1") == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0);
		CHILD_CHECK(mount("none", "r", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("r/old", 0755) == 0);
		CHILD_CHECK(syscall(SYS_pivot_root, "r", "r/old") == 0);
		CHILD_CHECK(chdir("/") == 0);
		CHILD_CHECK(access("/old/proc/self", F_OK) == 0);
		CHILD_CHECK(mount("/old", "/old", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(umount2("/old", MNT_DETACH) == 0);
		CHILD_CHECK(access("/old/proc", F_OK) == -1 && errno == ENOENT);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
	CHECK_SYS(access("/proc/self", F_OK));
}

/* A tree moved below a shared mount becomes shared and shows in the
 * peers, its submounts too; a mount below a shared one does not move. */
static void move_below_shared_propagates(void)
{
	ENTER();
	CHECK_SYS(mkdir("p", 0755));
	CHECK_SYS(mkdir("q", 0755));
	struct sync s;
	CHECK_SYS(sync_init(&s));
	pid_t top = CHECK_SYS(fork());
	if (top == 0) {
		int shared, master, unb;
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("none", "p", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("p/x", 0755) == 0);
		CHILD_CHECK(mount(NULL, "p", NULL, MS_SHARED, NULL) == 0);
		CHILD_CHECK(mount("none", "q", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("q/sub", 0755) == 0);
		CHILD_CHECK(write_file("q/f", "moved") == 0);
		CHILD_CHECK(mount("none", "q/sub", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(write_file("q/sub/g", "below") == 0);
		pid_t pid = fork();
		CHILD_CHECK(pid >= 0);
		if (pid == 0) {
			CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
			CHILD_CHECK(step(s.to_parent[1]) == 0);
			CHILD_CHECK(await(s.to_child[0]) == 0);
			CHILD_CHECK(access("p/x/f", F_OK) == 0);
			CHILD_CHECK(access("p/x/sub/g", F_OK) == 0);
			_exit(0);
		}
		CHILD_CHECK(await(s.to_parent[0]) == 0);
		CHILD_CHECK(mount("q", "p/x", NULL, MS_MOVE, NULL) == 0);
		CHILD_CHECK(prop(0, "p/x", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared > 0);
		CHILD_CHECK(prop(0, "p/x/sub", &shared, &master, &unb) == 0);
		CHILD_CHECK(shared > 0);
		CHILD_CHECK(mkdir("q2", 0755) == 0);
		CHILD_ERR(mount("p/x", "q2", NULL, MS_MOVE, NULL), EINVAL);
		CHILD_CHECK(step(s.to_child[1]) == 0);
		CHILD_CHECK(wait_ok(pid) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(top));
	sync_close(&s);
}

/* Binds in a user namespace's copy keep its locks: a bind of a read-only
 * locked mount cannot be remounted writable, a bind of a mount alone
 * cannot uncover what a locked mount below it hides (EINVAL), and in a
 * recursive bind the copies below the top stay locked. */
static void user_ns_bind_keeps_locks(void)
{
	ENTER();
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mkdir("p", 0755) == 0);
		CHILD_CHECK(mount("none", "p", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(mkdir("p/ro", 0755) == 0);
		CHILD_CHECK(mkdir("p/x", 0755) == 0);
		CHILD_CHECK(mkdir("p/y", 0755) == 0);
		CHILD_CHECK(mkdir("p/cov", 0755) == 0);
		CHILD_CHECK(mkdir("p/cov/hidden", 0755) == 0);
		CHILD_CHECK(write_file("p/cov/hidden/file", "secret") == 0);
		CHILD_CHECK(mount("none", "p/ro", "tmpfs", MS_RDONLY, NULL) == 0);
		CHILD_CHECK(mount("none", "p/cov/hidden", "tmpfs", 0, NULL) == 0);
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
		CHILD_CHECK(mount("p/ro", "p/x", NULL, MS_BIND, NULL) == 0);
		CHILD_ERR(mount(NULL, "p/x", NULL, MS_REMOUNT | MS_BIND, NULL), EPERM);
		CHILD_ERR(mount("p/cov", "p/y", NULL, MS_BIND, NULL), EINVAL);
		CHILD_CHECK(mount("p/cov", "p/y", NULL, MS_BIND | MS_REC, NULL) == 0);
		CHILD_ERR(umount2("p/y/hidden", 0), EINVAL);
		CHILD_ERR(access("p/y/hidden/file", F_OK), ENOENT);
		/* The top of the recursive bind is not locked. */
		CHILD_CHECK(umount2("p/y", MNT_DETACH) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* tmpfs's uid= and gid= are ids of the mounter's user namespace: in a
 * namespace mapping its 0 to 1000 outside, uid=0 makes a root directory
 * the namespace sees as its root's, and an unmapped id is EINVAL. */
static void user_ns_tmpfs_owner_ids(void)
{
	ENTER();
	CHECK_SYS(mkdir("t", 0777));
	struct sync sy;
	CHECK_SYS(sync_init(&sy));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
		CHILD_CHECK(step(sy.to_parent[1]) == 0);
		CHILD_CHECK(await(sy.to_child[0]) == 0);
		CHILD_CHECK(mount("none", "t", "tmpfs", 0, "uid=0,gid=0") == 0);
		struct stat st;
		CHILD_CHECK(stat("t", &st) == 0);
		CHILD_CHECK(st.st_uid == 0 && st.st_gid == 0);
		CHILD_CHECK(umount2("t", 0) == 0);
		CHILD_ERR(mount("none", "t", "tmpfs", 0, "uid=5"), EINVAL);
		CHILD_ERR(mount("none", "t", "tmpfs", 0, "gid=5"), EINVAL);
		_exit(0);
	}
	CHECK_SYS(await(sy.to_parent[0]));
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
	CHECK_SYS(write_file(path, "0 1000 1"));
	snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
	CHECK_SYS(write_file(path, "0 1000 1"));
	CHECK_SYS(step(sy.to_child[1]));
	CHECK_SYS(wait_ok(pid));
	sync_close(&sy);
}

/* An mqueue instance needs CAP_SYS_ADMIN over the owner of the caller's
 * IPC namespace: not from a user namespace alone (EPERM), but with an IPC
 * namespace of its own. */
static void user_ns_mqueue_needs_own_ipc_ns(void)
{
	ENTER();
	CHECK_SYS(mkdir("q", 0777));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
		CHILD_ERR(mount("mq", "q", "mqueue", 0, NULL), EPERM);
		CHILD_CHECK(unshare(CLONE_NEWIPC) == 0);
		CHILD_CHECK(mount("mq", "q", "mqueue", 0, NULL) == 0);
		CHILD_CHECK(umount2("q", 0) == 0);
		_exit(0);
	}
	CHECK_SYS(wait_ok(pid));
}

/* Once the main thread has exited, /proc/self/ns/mnt (the main thread's)
 * names no namespace: ENOENT, as Linux, rather than some other one that
 * setns could join. */
static void *ns_after_leader_exit(void *arg)
{
	(void)arg;
	char buf[128];
	int gone = 0;
	for (int i = 0; i < 500 && !gone; i++) {
		if (readlink("/proc/self/ns/mnt", buf, sizeof buf) < 0)
			gone = 1;
		else
			usleep(10000);
	}
	if (!gone)
		_exit(10); /* the link still names a namespace after 5 s */
	if (errno != ENOENT)
		_exit(11);
	int fd = open("/proc/self/ns/mnt", O_RDONLY);
	if (fd >= 0)
		_exit(setns(fd, CLONE_NEWNS) == 0 ? 12 : 13);
	_exit(errno == ENOENT ? 0 : 14);
}

static void ns_mnt_gone_with_leader(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			_exit(20);
		pthread_t th;
		if (pthread_create(&th, NULL, ns_after_leader_exit, NULL) != 0)
			_exit(21);
		pthread_exit(NULL);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(unshare_hides_new_mounts),
	MT_CASE(unshare_copies_the_tree),
	MT_CASE(clone_newns),
	MT_CASE(ns_mnt_link),
	MT_CASE(setns_back),
	MT_CASE(ns_fd_keeps_namespace),
	MT_CASE(setns_with_shared_fs_einval),
	MT_CASE(needs_cap_sys_admin),
	MT_CASE(pivot_root_in_new_ns),
	MT_CASE(make_rprivate),
	MT_CASE(propagation_fields),
	MT_CASE(shared_propagation),
	MT_CASE(private_copy_isolated),
	MT_CASE(user_ns_copy_is_locked),
	MT_CASE(user_ns_pivot_then_drop_old_root),
	MT_CASE(move_below_shared_propagates),
	MT_CASE(ns_mnt_gone_with_leader),
	MT_CASE(user_ns_bind_keeps_locks),
	MT_CASE(user_ns_tmpfs_owner_ids),
	MT_CASE(user_ns_mqueue_needs_own_ipc_ns),
};

MT_MAIN(cases)
