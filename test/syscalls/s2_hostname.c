//go:build ignore

/* s2_hostname: sethostname and setdomainname: round trips through uname
 * and /proc/sys/kernel, length limits, unterminated names, bad pointers and
 * the privilege check. */
#include "moattest.h"
#include <fcntl.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

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
	return (int)r;
}

static void sethostname_roundtrip(void)
{
	CHECK_SYS(sethostname("moat-s2", 7));
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.nodename, "moat-s2");
	char buf[128];
	CHECK_EQ(read_file("/proc/sys/kernel/hostname", buf, sizeof(buf)), 8);
	CHECK_STREQ(buf, "moat-s2\n");
}

static void sethostname_uses_len_not_nul(void)
{
	CHECK_SYS(sethostname("abcdef", 3));
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.nodename, "abc");
	CHECK_SYS(sethostname("", 0));
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.nodename, "");
}

static void sethostname_length_limits(void)
{
	char name[80];
	memset(name, 'h', sizeof(name));
	CHECK_SYS(sethostname(name, 64));
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_EQ(strlen(u.nodename), 64);
	CHECK_ERR(syscall(SYS_sethostname, name, 65), EINVAL);
	CHECK_ERR(syscall(SYS_sethostname, name, -1), EINVAL);
	CHECK_SYS(uname(&u));
	CHECK_EQ(strlen(u.nodename), 64);
}

static void sethostname_efault(void)
{
	CHECK_ERR(syscall(SYS_sethostname, (void *)1, 4), EFAULT);
	CHECK_ERR(syscall(SYS_setdomainname, (void *)1, 4), EFAULT);
	CHECK_ERR(syscall(SYS_uname, (void *)1), EFAULT);
}

static void setdomainname_roundtrip(void)
{
	CHECK_SYS(setdomainname("example.moat", 12));
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.domainname, "example.moat");
	char buf[128];
	CHECK_EQ(read_file("/proc/sys/kernel/domainname", buf, sizeof(buf)), 13);
	CHECK_STREQ(buf, "example.moat\n");
	CHECK_SYS(setdomainname("xyz", 1));
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.domainname, "x");
}

static void setdomainname_length_limits(void)
{
	char name[80];
	memset(name, 'd', sizeof(name));
	CHECK_SYS(setdomainname(name, 64));
	CHECK_ERR(syscall(SYS_setdomainname, name, 65), EINVAL);
	CHECK_ERR(syscall(SYS_setdomainname, name, -1), EINVAL);
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_EQ(strlen(u.domainname), 64);
}

static void unprivileged_eperm(void)
{
	CHECK_SYS(sethostname("before", 6));
	AS_USER(
		CHILD_ERR(sethostname("after", 5), EPERM);
		CHILD_ERR(setdomainname("after", 5), EPERM);
	);
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.nodename, "before");
}

static void hostname_inherited_by_child(void)
{
	CHECK_SYS(sethostname("parent", 6));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		struct utsname u;
		CHILD_CHECK(uname(&u) == 0 && strcmp(u.nodename, "parent") == 0);
		CHILD_CHECK(sethostname("child", 5) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
	/* Same UTS namespace: the child's change is seen by the parent. */
	struct utsname u;
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.nodename, "child");
}

static const struct mt_case cases[] = {
	MT_CASE(sethostname_roundtrip),
	MT_CASE(sethostname_uses_len_not_nul),
	MT_CASE(sethostname_length_limits),
	MT_CASE(sethostname_efault),
	MT_CASE(setdomainname_roundtrip),
	MT_CASE(setdomainname_length_limits),
	MT_CASE(unprivileged_eperm),
	MT_CASE(hostname_inherited_by_child),
};

MT_MAIN(cases)
