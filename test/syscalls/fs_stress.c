//go:build ignore

/* fs_stress: threads racing namespace changes (create, mkdir, rmdir,
 * unlink, link, rename, RENAME_EXCHANGE, lookups) on a few names, then a
 * consistency check: what getdents lists is exactly what stat finds, and
 * directory link counts match their subdirectories. Catches stale lookup
 * caches and deadlocks. Works in /dev/shm. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAMES 6
#define THREADS 4
#define OPS 3000

static const char *dirs[] = {"a", "b", "a/sub"};

static void name(char *buf, size_t n, unsigned r)
{
	snprintf(buf, n, "%s/n%u", dirs[r % 3], (r / 3) % NAMES);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
	char p[64], q[64];
	for (int i = 0; i < OPS; i++) {
		unsigned r = rand_r(&seed);
		name(p, sizeof(p), r >> 4);
		name(q, sizeof(q), r >> 12);
		struct stat st;
		int fd;
		switch (r % 9) {
		case 0:
			mkdir(p, 0755);
			break;
		case 1:
			rmdir(p);
			break;
		case 2:
			fd = open(p, O_CREAT | O_WRONLY, 0644);
			if (fd >= 0)
				close(fd);
			break;
		case 3:
			unlink(p);
			break;
		case 4:
			link(p, q);
			break;
		case 5:
			rename(p, q);
			break;
		case 6:
			syscall(SYS_renameat2, AT_FDCWD, p, AT_FDCWD, q, RENAME_EXCHANGE);
			break;
		case 7:
			stat(p, &st);
			break;
		case 8:
			symlink("target", p);
			break;
		}
	}
	return NULL;
}

/* check verifies one directory: every listed name stats, every name
 * that stats is listed, and nlink is 2 plus the subdirectories. */
static int check_dir(const char *dir, char *why, size_t whylen)
{
	char listed[NAMES + 8][256];
	int nlisted = 0, subdirs = 0;
	DIR *d = opendir(dir);
	if (d == NULL) {
		snprintf(why, whylen, "opendir %s: %s", dir, mt_errname(errno));
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char p[300];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) < 0) {
			snprintf(why, whylen, "%s listed but lstat: %s", p, mt_errname(errno));
			closedir(d);
			return -1;
		}
		if (st.st_ino != e->d_ino) {
			snprintf(why, whylen, "%s: d_ino %lu, st_ino %lu", p, (unsigned long)e->d_ino, (unsigned long)st.st_ino);
			closedir(d);
			return -1;
		}
		if (S_ISDIR(st.st_mode))
			subdirs++;
		if (nlisted < NAMES + 8)
			snprintf(listed[nlisted++], sizeof(listed[0]), "%s", e->d_name);
	}
	closedir(d);
	for (int i = 0; i < NAMES; i++) {
		char n[16], p[128];
		snprintf(n, sizeof(n), "n%d", i);
		snprintf(p, sizeof(p), "%s/%s", dir, n);
		struct stat st;
		int found = lstat(p, &st) == 0, in = 0;
		for (int j = 0; j < nlisted; j++)
			if (strcmp(listed[j], n) == 0)
				in = 1;
		if (found != in) {
			snprintf(why, whylen, "%s: lstat finds it %d, getdents lists it %d", p, found, in);
			return -1;
		}
	}
	struct stat st;
	if (stat(dir, &st) < 0) {
		snprintf(why, whylen, "stat %s: %s", dir, mt_errname(errno));
		return -1;
	}
	if ((int)st.st_nlink != 2 + subdirs) {
		snprintf(why, whylen, "%s: nlink %lu with %d subdirectories", dir, (unsigned long)st.st_nlink, subdirs);
		return -1;
	}
	return 0;
}

static void race_namespace_changes(void)
{
	ENTER();
	CHECK_SYS(mkdir("a", 0755));
	CHECK_SYS(mkdir("b", 0755));
	CHECK_SYS(mkdir("a/sub", 0755));
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		CHECK_RET0(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)));
	for (int i = 0; i < THREADS; i++)
		CHECK_RET0(pthread_join(th[i], NULL));
	char why[256];
	for (int i = 0; i < 2; i++)
		if (check_dir(dirs[i], why, sizeof(why)) < 0)
			FAIL("%s", why);
	/* a/sub may have been renamed away or replaced by a file. */
	struct stat st;
	if (stat("a/sub", &st) == 0 && S_ISDIR(st.st_mode) && check_dir("a/sub", why, sizeof(why)) < 0)
		FAIL("%s", why);
}

static const struct mt_case cases[] = {
	MT_CASE(race_namespace_changes),
};

MT_MAIN(cases)
