//go:build ignore

/* sysv_shm: System V shared memory: shmget keys and errors, shmat
 * sharing across fork with attach counts, shmctl IPC_STAT/IPC_SET/
 * IPC_RMID (destroyed on last detach), SHM_RDONLY, SHM_RND, SHM_REMAP,
 * shmdt errors, IPC_INFO/SHM_INFO and the /proc/self/maps name. */
#include "moattest.h"

#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SHM_REMAP
#define SHM_REMAP 040000
#endif
#ifndef SHM_DEST
#define SHM_DEST 01000
#endif

static unsigned long nattch(int id)
{
	struct shmid_ds ds;
	if (shmctl(id, IPC_STAT, &ds) != 0)
		return (unsigned long)-1;
	return ds.shm_nattch;
}

static void share_across_fork(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600));
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	CHECK_EQ(nattch(id), 1);
	p[5000] = 'p';
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(nattch(id) == 2);
		CHILD_CHECK(p[5000] == 'p');
		p[1] = 'c';
		/* A second attachment of the same segment in the child. */
		char *q = shmat(id, NULL, SHM_RDONLY);
		CHILD_CHECK(q != (void *)-1);
		CHILD_CHECK(q[1] == 'c');
		CHILD_CHECK(nattch(id) == 3);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[1], 'c');
	CHECK_EQ(nattch(id), 1);
	CHECK_SYS(shmdt(p));
	CHECK_EQ(nattch(id), 0);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void keys_and_errors(void)
{
	key_t key = 0x4d4f4154;
	int id = CHECK_SYS(shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600));
	CHECK_ERR(shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(shmget(key, 100, 0), id);
	CHECK_EQ(shmget(key, 0, IPC_CREAT), id);
	CHECK_ERR(shmget(key, 8192, 0), EINVAL);
	CHECK_ERR(shmget(key + 1, 4096, 0600), ENOENT);
	CHECK_ERR(shmget(IPC_PRIVATE, 0, IPC_CREAT | 0600), EINVAL);
	CHECK_ERR(shmat(12345678, NULL, 0) == (void *)-1 ? -1 : 0, EINVAL);
	CHECK_ERR(shmctl(12345678, IPC_STAT, &(struct shmid_ds){0}), EINVAL);
	CHECK_ERR(shmctl(id, 99, NULL), EINVAL);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
	CHECK_ERR(shmget(key, 4096, 0600), ENOENT);
}

static void stat_set_and_remove(void)
{
	key_t key = 0x4d4f4155;
	int id = CHECK_SYS(shmget(key, 5000, IPC_CREAT | 0640));
	struct shmid_ds ds;
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_segsz, 5000);
	CHECK_EQ(ds.shm_perm.mode & 0777, 0640);
	CHECK_EQ(ds.shm_perm.__key, key);
	CHECK_EQ(ds.shm_perm.uid, geteuid());
	CHECK_EQ(ds.shm_perm.cuid, geteuid());
	CHECK_EQ(ds.shm_cpid, getpid());
	CHECK_EQ(ds.shm_nattch, 0);
	CHECK_EQ(ds.shm_atime, 0);
	CHECK_GT(ds.shm_ctime, 0);
	ds.shm_perm.mode = 0600;
	CHECK_SYS(shmctl(id, IPC_SET, &ds));
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_perm.mode & 0777, 0600);
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK_GT(ds.shm_atime, 0);
	CHECK_EQ(ds.shm_lpid, getpid());
	/* The tail of the last page is usable. */
	p[8191] = 't';
	/* Removed while attached: the key is gone, the memory stays. */
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
	CHECK_ERR(shmget(key, 0, 0), ENOENT);
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK(ds.shm_perm.mode & SHM_DEST);
	CHECK_EQ(ds.shm_perm.__key, 0);
	p[0] = 'x';
	CHECK_EQ(p[0], 'x');
	CHECK_SYS(shmdt(p));
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
}

static void attach_flags(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	char *ro = shmat(id, NULL, SHM_RDONLY);
	CHECK(ro != (void *)-1);
	CHECK_ERR(mprotect(ro, 4096, PROT_READ | PROT_WRITE), EACCES);
	/* An address: aligned, or rounded with SHM_RND. */
	char *area = CHECK_MAP(mmap(NULL, 4 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_SYS(munmap(area, 4 * 4096));
	CHECK_ERR(shmat(id, area + 10, 0) == (void *)-1 ? -1 : 0, EINVAL);
	char *r = shmat(id, area + 4096 + 10, SHM_RND);
	CHECK(r == area + 4096);
	/* Over a mapping: EINVAL unless SHM_REMAP. */
	CHECK_ERR(shmat(id, area + 4096, 0) == (void *)-1 ? -1 : 0, EINVAL);
	char *again = shmat(id, area + 4096, SHM_REMAP);
	CHECK(again == area + 4096);
	again[0] = 'a';
	CHECK_EQ(ro[0], 'a');
	CHECK_EQ(nattch(id), 2);
	/* shmdt needs the start of an attachment. */
	CHECK_ERR(shmdt(again + 1), EINVAL);
	char *plain = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_ERR(shmdt(plain), EINVAL);
	CHECK_SYS(shmdt(again));
	CHECK_ERR(shmdt(again), EINVAL);
	CHECK_SYS(shmdt(ro));
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
	munmap(plain, 4096);
}

static void info_and_maps_name(void)
{
	key_t key = 0x4d4f4156;
	int id = CHECK_SYS(shmget(key, 4096, IPC_CREAT | 0600));
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	struct shminfo info;
	CHECK_GE(shmctl(0, IPC_INFO, (struct shmid_ds *)&info), 0);
	CHECK_EQ(info.shmmni, 4096);
	CHECK_EQ(info.shmmin, 1);
	struct shm_info si;
	CHECK_GE(shmctl(0, SHM_INFO, (struct shmid_ds *)&si), 0);
	CHECK_GE(si.used_ids, 1);
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	char line[512], want[64];
	snprintf(want, sizeof(want), "/SYSV%08x (deleted)", key);
	int found = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want))
			found = 1;
	fclose(f);
	CHECK(found);
	CHECK_SYS(shmdt(p));
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static const struct mt_case cases[] = {
	MT_CASE(share_across_fork),
	MT_CASE(keys_and_errors),
	MT_CASE(stat_set_and_remove),
	MT_CASE(attach_flags),
	MT_CASE(info_and_maps_name),
};

MT_MAIN(cases)
