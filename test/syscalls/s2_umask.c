//go:build ignore

/* s2_umask: umask: the returned old value, ignored high bits, which calls
 * apply it (open, mkdir, mknod, O_TMPFILE) and which do not (chmod,
 * symlink), inheritance by fork, sharing between threads, and the Umask
 * line of /proc/self/status. */
#include "moattest.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static mode_t mode_of(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

static void returns_old_value(void)
{
	umask(022);
	CHECK_EQ(umask(077), 022);
	CHECK_EQ(umask(0), 077);
	CHECK_EQ(umask(0777), 0);
	CHECK_EQ(umask(022), 0777);
}

static void high_bits_ignored(void)
{
	umask(0);
	CHECK_EQ(syscall(SYS_umask, 0177777), 0);
	CHECK_EQ(umask(0), 0777);
	CHECK_EQ(syscall(SYS_umask, 04022), 0);
	CHECK_EQ(umask(0), 022);
}

static void applies_to_creation(void)
{
	ENTER();
	umask(027);
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0777));
	CHECK_EQ(mode_of("f"), 0750);
	CHECK_SYS(mkdir("d", 0777));
	CHECK_EQ(mode_of("d"), 0750);
	CHECK_SYS(mknod("p", S_IFIFO | 0666, 0));
	CHECK_EQ(mode_of("p"), 0640);
	/* Special bits are not masked by a umask without them. */
	CHECK_SYS(mkdir("s", 01777));
	CHECK_EQ(mode_of("s"), 01750);
	(void)fd;
}

static void not_applied_to_chmod_or_symlink(void)
{
	ENTER();
	umask(077);
	int fd = CHECK_SYS(open("f", O_CREAT | O_RDWR, 0666));
	CHECK_EQ(mode_of("f"), 0600);
	CHECK_SYS(chmod("f", 0666));
	CHECK_EQ(mode_of("f"), 0666);
	CHECK_SYS(fchmod(fd, 0644));
	CHECK_EQ(mode_of("f"), 0644);
	CHECK_SYS(symlink("f", "l"));
	CHECK_EQ(mode_of("l"), 0777);
}

static void applies_to_tmpfile(void)
{
	ENTER();
	umask(066);
	int fd = open(".", O_TMPFILE | O_RDWR, 0666);
	if (fd < 0 && errno == EOPNOTSUPP)
		SKIP("no O_TMPFILE here");
	CHECK_SYS(fd);
	struct stat st;
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0600);
}

static void inherited_by_fork(void)
{
	umask(0123);
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(umask(0) == 0123);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
	/* The child's change did not reach us. */
	CHECK_EQ(umask(022), 0123);
}

static void *set_umask_thread(void *arg)
{
	(void)arg;
	umask(0456);
	return NULL;
}

static void shared_by_threads(void)
{
	umask(022);
	pthread_t t;
	CHECK_RET0(pthread_create(&t, NULL, set_umask_thread, NULL));
	CHECK_RET0(pthread_join(t, NULL));
	CHECK_EQ(umask(022), 0456);
}

static void proc_status_line(void)
{
	umask(0275);
	FILE *f = fopen("/proc/self/status", "r");
	CHECK(f != NULL);
	char line[256];
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Umask:", 6) == 0) {
			CHECK_STREQ(line, "Umask:\t0275\n");
			found = 1;
		}
	}
	fclose(f);
	CHECK(found);
}

static const struct mt_case cases[] = {
	MT_CASE(returns_old_value),
	MT_CASE(high_bits_ignored),
	MT_CASE(applies_to_creation),
	MT_CASE(not_applied_to_chmod_or_symlink),
	MT_CASE(applies_to_tmpfile),
	MT_CASE(inherited_by_fork),
	MT_CASE(shared_by_threads),
	MT_CASE(proc_status_line),
};

MT_MAIN(cases)
