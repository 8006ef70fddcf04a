//go:build ignore

/* s3_fsids: which credentials file operations use: new files take the
 * filesystem uid and gid (setfsuid/setfsgid), a non-zero fsuid drops the
 * file capabilities, access() checks the real ids, set-group-ID
 * directories hand their group down, supplementary groups grant group
 * permissions, and the chown rules for owners who are not root
 * (fchown/fchownat/lchown). Works in /dev/shm. */
#include "moattest.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* IN_CHILD runs a case body in a forked child, so credential changes do
 * not leak into later cases. */
#define IN_CHILD(name)                                   \
	static void name##_body(void);                   \
	static void name(void)                           \
	{                                                \
		ENTER();                                 \
		CHECK_SYS(chmod(".", 0777));             \
		pid_t pid = CHECK_SYS(fork());           \
		if (pid == 0) {                          \
			name##_body();                   \
			_exit(0);                        \
		}                                        \
		int st = mt_wait(pid);                   \
		CHECK_EXITED(st, 0);                     \
	}                                                \
	static void name##_body(void)

static int make(const char *path, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, mode);
	if (fd < 0)
		return -1;
	fchmod(fd, mode);
	return close(fd);
}

IN_CHILD(new_files_take_fs_ids)
{
	setfsuid(1234);
	setfsgid(5678);
	CHILD_CHECK(setfsuid(-1) == 1234);
	CHILD_CHECK(make("f", 0644) == 0);
	CHILD_CHECK(mkdir("d", 0755) == 0);
	CHILD_CHECK(symlink("f", "l") == 0);
	struct stat st;
	CHILD_CHECK(stat("f", &st) == 0 && st.st_uid == 1234 && st.st_gid == 5678);
	CHILD_CHECK(stat("d", &st) == 0 && st.st_uid == 1234 && st.st_gid == 5678);
	CHILD_CHECK(lstat("l", &st) == 0 && st.st_uid == 1234 && st.st_gid == 5678);
	/* The effective ids did not move. */
	CHILD_CHECK(geteuid() == 0 && getegid() == 0);
}

IN_CHILD(fsuid_drops_dac_override)
{
	CHILD_CHECK(make("secret", 0600) == 0);
	CHILD_CHECK(chown("secret", 4000, 4000) == 0);
	/* Root with fsuid 0 may open anything. */
	int fd = open("secret", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	close(fd);
	/* A non-zero fsuid clears the file capabilities from the effective
	 * set: the mode bits apply. */
	setfsuid(1000);
	CHILD_CHECK(open("secret", O_RDONLY) == -1 && errno == EACCES);
	/* The fsuid counts as the owner. */
	setfsuid(4000);
	fd = open("secret", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	close(fd);
	/* Back to 0: the capabilities return. */
	setfsuid(0);
	CHILD_CHECK(chmod("secret", 0000) == 0);
	fd = open("secret", O_RDONLY);
	CHILD_CHECK(fd >= 0);
}

IN_CHILD(fsgid_grants_group_access)
{
	CHILD_CHECK(make("g", 0040) == 0);
	CHILD_CHECK(chown("g", 4000, 5678) == 0);
	CHILD_CHECK(setgroups(0, NULL) == 0);
	setfsuid(1000);
	CHILD_CHECK(open("g", O_RDONLY) == -1 && errno == EACCES);
	setfsgid(5678);
	int fd = open("g", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	/* Group read does not give write. */
	CHILD_CHECK(open("g", O_WRONLY) == -1 && errno == EACCES);
}

IN_CHILD(access_checks_real_ids)
{
	CHILD_CHECK(make("mine", 0600) == 0);
	CHILD_CHECK(chown("mine", 1000, 1000) == 0);
	CHILD_CHECK(setgroups(0, NULL) == 0);
	/* Real uid 2000, effective (and fs) uid 1000, the owner. */
	CHILD_CHECK(setresgid(2000, 1000, 1000) == 0);
	CHILD_CHECK(setresuid(2000, 1000, 1000) == 0);
	int fd = open("mine", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	close(fd);
	/* access() asks about the real uid 2000: no. */
	CHILD_CHECK(access("mine", R_OK) == -1 && errno == EACCES);
	/* faccessat with AT_EACCESS uses the effective ids: yes. */
	CHILD_CHECK(faccessat(AT_FDCWD, "mine", R_OK, AT_EACCESS) == 0);
	/* The existence test does not check permissions. */
	CHILD_CHECK(access("mine", F_OK) == 0);
}

IN_CHILD(setgid_directory_passes_group)
{
	CHILD_CHECK(mkdir("sg", 0777) == 0);
	CHILD_CHECK(chown("sg", 0, 777) == 0);
	CHILD_CHECK(chmod("sg", 02777) == 0);
	CHILD_CHECK(make("sg/f", 0644) == 0);
	CHILD_CHECK(mkdir("sg/sub", 0755) == 0);
	struct stat st;
	CHILD_CHECK(stat("sg/f", &st) == 0 && st.st_gid == 777);
	/* A file does not inherit the set-group-ID bit; a directory does. */
	CHILD_CHECK((st.st_mode & S_ISGID) == 0);
	CHILD_CHECK(stat("sg/sub", &st) == 0 && st.st_gid == 777);
	CHILD_CHECK((st.st_mode & S_ISGID) != 0);
	/* Outside it, the fsgid decides. */
	setfsgid(55);
	CHILD_CHECK(make("plain", 0644) == 0);
	CHILD_CHECK(stat("plain", &st) == 0 && st.st_gid == 55);
	CHILD_CHECK(make("sg/g", 0644) == 0);
	CHILD_CHECK(stat("sg/g", &st) == 0 && st.st_gid == 777);
}

IN_CHILD(supplementary_groups_grant_access)
{
	CHILD_CHECK(make("grp", 0060) == 0);
	CHILD_CHECK(chown("grp", 4000, 4242) == 0);
	gid_t gs[2] = {100, 4242};
	CHILD_CHECK(setgroups(2, gs) == 0);
	CHILD_CHECK(setresgid(1000, 1000, 1000) == 0);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	int fd = open("grp", O_RDWR);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(access("grp", R_OK | W_OK) == 0);
	CHILD_CHECK(access("grp", X_OK) == -1 && errno == EACCES);
	/* The owner class wins over the group class: an owner without
	 * owner bits is refused even though the group would allow it. */
	CHILD_CHECK(make("own", 0060) == 0);
	struct stat st;
	CHILD_CHECK(stat("own", &st) == 0 && st.st_uid == 1000);
	CHILD_CHECK(fchownat(AT_FDCWD, "own", -1, 4242, 0) == 0);
	CHILD_CHECK(chmod("own", 0060) == 0);
	CHILD_CHECK(open("own", O_RDONLY) == -1 && errno == EACCES);
}

IN_CHILD(owner_chown_rules)
{
	CHILD_CHECK(make("f", 0644) == 0);
	CHILD_CHECK(chown("f", 1000, 1000) == 0);
	CHILD_CHECK(symlink("f", "l") == 0);
	CHILD_CHECK(lchown("l", 1000, 1000) == 0);
	gid_t gs[1] = {300};
	CHILD_CHECK(setgroups(1, gs) == 0);
	CHILD_CHECK(setresgid(1000, 1000, 1000) == 0);
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0);
	int fd = open("f", O_RDONLY);
	CHILD_CHECK(fd >= 0);
	/* An owner may give the file to a group it belongs to... */
	CHILD_CHECK(fchown(fd, -1, 300) == 0);
	CHILD_CHECK(fchown(fd, 1000, 1000) == 0);
	/* ...but not to a group it is not in, nor to another user. */
	CHILD_CHECK(fchown(fd, -1, 301) == -1 && errno == EPERM);
	CHILD_CHECK(fchown(fd, 1001, -1) == -1 && errno == EPERM);
	/* A no-op chown is allowed. */
	CHILD_CHECK(fchown(fd, -1, -1) == 0);
	/* lchown changes the link, fchownat without NOFOLLOW the target. */
	CHILD_CHECK(lchown("l", -1, 300) == 0);
	struct stat st;
	CHILD_CHECK(lstat("l", &st) == 0 && st.st_gid == 300);
	CHILD_CHECK(stat("l", &st) == 0 && st.st_gid == 1000);
	CHILD_CHECK(fchownat(AT_FDCWD, "l", -1, 300, 0) == 0);
	CHILD_CHECK(stat("f", &st) == 0 && st.st_gid == 300);
	/* Not the owner: EPERM. */
	CHILD_CHECK(fchownat(AT_FDCWD, ".", -1, 300, 0) == -1 && errno == EPERM);
	CHILD_CHECK(fchownat(AT_FDCWD, "f", -1, 300, 0x1) == -1 && errno == EINVAL);
}

IN_CHILD(fsuid_in_proc_status)
{
	setfsuid(321);
	setfsgid(654);
	FILE *f = fopen("/proc/self/status", "r");
	CHILD_CHECK(f != NULL);
	char line[256];
	int seen = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned a, b, c, d;
		if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &c, &d) == 4) {
			CHILD_CHECK(a == 0 && b == 0 && c == 0 && d == 321);
			seen++;
		}
		if (sscanf(line, "Gid: %u %u %u %u", &a, &b, &c, &d) == 4) {
			CHILD_CHECK(a == 0 && b == 0 && c == 0 && d == 654);
			seen++;
		}
	}
	CHILD_CHECK(seen == 2);
	/* A later seteuid moves the fsuid with it. */
	CHILD_CHECK(seteuid(99) == 0);
	CHILD_CHECK(setfsuid(-1) == 99);
}

static const struct mt_case cases[] = {
	MT_CASE(new_files_take_fs_ids),
	MT_CASE(fsuid_drops_dac_override),
	MT_CASE(fsgid_grants_group_access),
	MT_CASE(access_checks_real_ids),
	MT_CASE(setgid_directory_passes_group),
	MT_CASE(supplementary_groups_grant_access),
	MT_CASE(owner_chown_rules),
	MT_CASE(fsuid_in_proc_status),
};

MT_MAIN(cases)
