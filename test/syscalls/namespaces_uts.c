//go:build ignore

/* namespaces_uts: UTS namespaces made by unshare(2) and clone(2): private
 * host and domain names that start as copies, are shared with children,
 * and show in uname(2) and /proc/sys/kernel; CAP_SYS_ADMIN; unshare's
 * flag checks and its non-namespace flags (CLONE_FILES, CLONE_FS). */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static char *new_stack(void)
{
	void *p = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : (char *)p + STACK_SIZE;
}

static int hostname_is(const char *want)
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.nodename, want) == 0;
}

static void unshare_uts_private_hostname(void)
{
	struct utsname before;
	CHECK_SYS(uname(&before));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		CHILD_CHECK(sethostname("moat-ns-child", 13) == 0);
		CHILD_CHECK(setdomainname("child.dom", 9) == 0);
		struct utsname u;
		CHILD_CHECK(uname(&u) == 0);
		CHILD_CHECK(strcmp(u.nodename, "moat-ns-child") == 0);
		CHILD_CHECK(strcmp(u.domainname, "child.dom") == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
	struct utsname after;
	CHECK_SYS(uname(&after));
	CHECK_STREQ(after.nodename, before.nodename);
	CHECK_STREQ(after.domainname, before.domainname);
}

static void unshare_uts_starts_as_copy(void)
{
	struct utsname before;
	CHECK_SYS(uname(&before));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		struct utsname u;
		CHILD_CHECK(uname(&u) == 0);
		CHILD_CHECK(strcmp(u.nodename, before.nodename) == 0);
		CHILD_CHECK(strcmp(u.domainname, before.domainname) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static int set_name_child(void *arg)
{
	(void)arg;
	if (sethostname("cloned-uts", 10) != 0)
		return 2;
	return hostname_is("cloned-uts") ? 0 : 3;
}

static void clone_newuts_private_hostname(void)
{
	struct utsname before;
	CHECK_SYS(uname(&before));
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t p = CHECK_SYS(clone(set_name_child, stk, CLONE_NEWUTS | SIGCHLD, NULL));
	CHECK_EXITED(mt_wait(p), 0);
	CHECK(hostname_is(before.nodename));
}

static void uts_namespace_inherited_by_children(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		CHILD_CHECK(sethostname("parent-ns", 9) == 0);
		pid_t c = fork();
		CHILD_CHECK(c >= 0);
		if (c == 0) {
			/* The grandchild shares the namespace both ways. */
			if (!hostname_is("parent-ns"))
				_exit(2);
			_exit(sethostname("grandchild", 10) == 0 ? 0 : 3);
		}
		int st;
		CHILD_CHECK(waitpid(c, &st, 0) == c);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHILD_CHECK(hostname_is("grandchild"));
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static int read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return 0;
}

static void proc_sys_hostname_follows_namespace(void)
{
	struct utsname before;
	CHECK_SYS(uname(&before));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		int fd = open("/proc/sys/kernel/hostname", O_WRONLY);
		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(write(fd, "via-proc\n", 9) == 9);
		close(fd);
		CHILD_CHECK(hostname_is("via-proc"));
		char buf[80];
		CHILD_CHECK(read_file("/proc/sys/kernel/hostname", buf, sizeof buf) == 0);
		CHILD_CHECK(strcmp(buf, "via-proc\n") == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
	char buf[80];
	CHECK_SYS(read_file("/proc/sys/kernel/hostname", buf, sizeof buf));
	CHECK_EQ(strlen(buf), strlen(before.nodename) + 1);
	CHECK(strncmp(buf, before.nodename, strlen(before.nodename)) == 0);
}

static void unshare_uts_needs_cap_sys_admin(void)
{
	char *stk = new_stack();
	CHECK(stk != NULL);
	AS_USER({
		if (unshare(CLONE_NEWUTS) != -1 || errno != EPERM)
			_exit(2);
		if (clone(set_name_child, stk, CLONE_NEWUTS | SIGCHLD, NULL) != -1 || errno != EPERM)
			_exit(3);
	});
}

static void unshare_zero_is_noop(void)
{
	CHECK_SYS(unshare(0));
}

static void unshare_bad_flags_einval(void)
{
	CHECK_ERR(unshare(CLONE_PARENT), EINVAL);
	CHECK_ERR(unshare(CLONE_VFORK), EINVAL);
	CHECK_ERR(unshare(CLONE_SETTLS), EINVAL);
	CHECK_ERR(unshare(0x80000000u), EINVAL);
}

static void *idle_thread(void *arg)
{
	int *fds = arg;
	char c;
	(void)read(fds[0], &c, 1);
	return NULL;
}

static void unshare_thread_flags_single_threaded(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_THREAD) == 0);
		CHILD_CHECK(unshare(CLONE_SIGHAND) == 0);
		CHILD_CHECK(unshare(CLONE_VM) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static void unshare_thread_flags_multithreaded_einval(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		int fds[2];
		CHILD_CHECK(pipe(fds) == 0);
		pthread_t th;
		CHILD_CHECK(pthread_create(&th, NULL, idle_thread, fds) == 0);
		CHILD_ERR(unshare(CLONE_THREAD), EINVAL);
		CHILD_ERR(unshare(CLONE_SIGHAND), EINVAL);
		CHILD_ERR(unshare(CLONE_VM), EINVAL);
		/* Namespaces and the rest are per-thread and fine. */
		CHILD_CHECK(unshare(CLONE_NEWUTS) == 0);
		CHILD_CHECK(write(fds[1], "x", 1) == 1);
		pthread_join(th, NULL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static int unshare_files_and_close(void *arg)
{
	if (unshare(CLONE_FILES) != 0)
		return 2;
	return close((int)(long)arg) == 0 ? 0 : 3;
}

static void unshare_files_private_table(void)
{
	int p[2];
	CHECK_SYS(pipe(p));
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t pid = CHECK_SYS(clone(unshare_files_and_close, stk,
				    CLONE_VM | CLONE_FILES | SIGCHLD, (void *)(long)p[0]));
	CHECK_EXITED(mt_wait(pid), 0);
	/* The child closed its own copy: ours is still open. */
	CHECK_SYS(fcntl(p[0], F_GETFD));
	close(p[0]);
	close(p[1]);
}

static int unshare_fs_and_chdir(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FS) != 0)
		return 2;
	return chdir("/proc") == 0 ? 0 : 3;
}

static void unshare_fs_private_cwd(void)
{
	CHECK_SYS(chdir("/"));
	char *stk = new_stack();
	CHECK(stk != NULL);
	pid_t pid = CHECK_SYS(clone(unshare_fs_and_chdir, stk,
				    CLONE_VM | CLONE_FS | SIGCHLD, NULL));
	CHECK_EXITED(mt_wait(pid), 0);
	char cwd[64];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK_STREQ(cwd, "/");
}

static void clone_newns_with_fs_einval(void)
{
	/* A new mount namespace cannot share the filesystem context. */
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		long r = syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		CHILD_CHECK(r == -1 && errno == EINVAL);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(unshare_uts_private_hostname),
	MT_CASE(unshare_uts_starts_as_copy),
	MT_CASE(clone_newuts_private_hostname),
	MT_CASE(uts_namespace_inherited_by_children),
	MT_CASE(proc_sys_hostname_follows_namespace),
	MT_CASE(unshare_uts_needs_cap_sys_admin),
	MT_CASE(unshare_zero_is_noop),
	MT_CASE(unshare_bad_flags_einval),
	MT_CASE(unshare_thread_flags_single_threaded),
	MT_CASE(unshare_thread_flags_multithreaded_einval),
	MT_CASE(unshare_files_private_table),
	MT_CASE(unshare_fs_private_cwd),
	MT_CASE(clone_newns_with_fs_einval),
};

MT_MAIN(cases)
