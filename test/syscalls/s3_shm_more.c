//go:build ignore

/* s3_shm_more: System V shared memory beyond the basics: permissions for
 * other users (shmget checking only the permissions asked for, shmat
 * EACCES, read-only attaches, IPC_SET and
 * IPC_RMID by non-owners EPERM, a new owner set by IPC_SET), SHM_LOCK and
 * SHM_UNLOCK, SHM_REMAP over an existing mapping, attachments dropped by
 * exit and exec, shmdt of a fragment left by a partial munmap, SHM_STAT by index, and
 * IPC_INFO/SHM_INFO limits. */
#include "moattest.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SHM_REMAP
#define SHM_REMAP 040000
#endif

static int nattch(int id)
{
	struct shmid_ds ds;
	if (shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	return (int)ds.shm_nattch;
}

static void other_user_permissions(void)
{
	int ro = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0644));
	int none = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	AS_USER({
		/* Read permission allows a read-only attach only. */
		if (shmat(ro, NULL, 0) != (void *)-1 || errno != EACCES)
			_exit(1);
		void *p = shmat(ro, NULL, SHM_RDONLY);
		if (p == (void *)-1)
			_exit(2);
		if (shmat(none, NULL, SHM_RDONLY) != (void *)-1 || errno != EACCES)
			_exit(3);
		struct shmid_ds ds;
		if (shmctl(none, IPC_STAT, &ds) != -1 || errno != EACCES)
			_exit(4);
		/* Only the owner (or creator) may change or remove it. */
		if (shmctl(ro, IPC_STAT, &ds) != 0)
			_exit(5);
		if (shmctl(ro, IPC_SET, &ds) != -1 || errno != EPERM)
			_exit(6);
		if (shmctl(ro, IPC_RMID, NULL) != -1 || errno != EPERM)
			_exit(7);
	});
	CHECK_SYS(shmctl(ro, IPC_RMID, NULL));
	CHECK_SYS(shmctl(none, IPC_RMID, NULL));
}

static void shmget_key_permissions(void)
{
	key_t key = 0x53330000 + (getpid() & 0xffff);
	int id = CHECK_SYS(shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600));
	AS_USER({
		/* shmget checks only the permissions its flags ask for:
		 * none asked, the id comes back; read asked, EACCES. */
		if (shmget(key, 0, 0) != id)
			_exit(1);
		if (shmget(key, 0, 0400) != -1 || errno != EACCES)
			_exit(2);
	});
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void new_owner_by_ipc_set(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	struct shmid_ds ds;
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	ds.shm_perm.uid = 1000;
	ds.shm_perm.gid = 1000;
	CHECK_SYS(shmctl(id, IPC_SET, &ds));
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_perm.uid, 1000);
	/* The creator stays. */
	CHECK_EQ(ds.shm_perm.cuid, 0);
	AS_USER({
		/* The new owner may attach read-write and remove it. */
		void *p = shmat(id, NULL, 0);
		if (p == (void *)-1)
			_exit(1);
		if (shmctl(id, IPC_RMID, NULL) != 0)
			_exit(2);
	});
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
}

static void lock_and_unlock(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	struct shmid_ds ds;
	CHECK_SYS(shmctl(id, SHM_LOCK, NULL));
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK(ds.shm_perm.mode & SHM_LOCKED);
	CHECK_SYS(shmctl(id, SHM_UNLOCK, NULL));
	CHECK_SYS(shmctl(id, IPC_STAT, &ds));
	CHECK(!(ds.shm_perm.mode & SHM_LOCKED));
	/* The mode bits stay as created. */
	CHECK_EQ(ds.shm_perm.mode & 0777, 0600);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void remap_over_mapping(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	char *m = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	m[0] = 'm';
	/* Without SHM_REMAP an occupied address is EINVAL. */
	CHECK(shmat(id, m, 0) == (void *)-1);
	CHECK_EQ(errno, EINVAL);
	char *p = shmat(id, m, SHM_REMAP);
	CHECK(p == m);
	CHECK_EQ(p[0], 0);
	p[0] = 's';
	CHECK_SYS(shmdt(p));
	/* SHM_REMAP needs an address. */
	CHECK(shmat(id, NULL, SHM_REMAP) == (void *)-1);
	CHECK_EQ(errno, EINVAL);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void exit_and_exec_detach(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		if (shmat(id, NULL, 0) == (void *)-1)
			_exit(1);
		write(p[1], "a", 1);
		/* exec drops the attachment. */
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(2);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	/* Wait for the exec to have happened: nattch back to 0. */
	int n = -1;
	for (int i = 0; i < 5000 && (n = nattch(id)) != 0; i++)
		usleep(1000);
	CHECK_EQ(n, 0);
	CHECK_SYS(kill(pid, SIGKILL));
	mt_wait(pid);
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		if (shmat(id, NULL, 0) == (void *)-1)
			_exit(1);
		_exit(0);
	}
	int st = mt_wait(pid);
	CHECK_EXITED(st, 0);
	/* And so does exit. */
	CHECK_EQ(nattch(id), 0);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void partial_munmap_then_shmdt(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 3 * 4096, IPC_CREAT | 0600));
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	/* Unmapping the first page leaves the rest attached... */
	CHECK_SYS(munmap(p, 4096));
	CHECK_EQ(nattch(id), 1);
	p[4096] = 'x';
	/* ...shmdt at the second page is not at an attach address (its
	 * offset in the segment is one page)... */
	CHECK_ERR(shmdt(p + 4096), EINVAL);
	/* ...but at the original address it finds the remaining fragment
	 * and detaches it. */
	CHECK_SYS(shmdt(p));
	CHECK_EQ(nattch(id), 0);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void info_and_stat_by_index(void)
{
	struct shminfo si;
	int maxidx = CHECK_SYS(shmctl(0, IPC_INFO, (struct shmid_ds *)&si));
	CHECK_GE(maxidx, 0);
	CHECK(si.shmmax != 0);
	CHECK(si.shmmni != 0);
	CHECK_EQ(si.shmmin, 1);
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	struct shm_info info;
	int top = CHECK_SYS(shmctl(0, SHM_INFO, (struct shmid_ds *)&info));
	CHECK_GE(info.used_ids, 1);
	/* SHM_STAT takes an index and returns the id there. */
	int found = 0;
	for (int i = 0; i <= top; i++) {
		struct shmid_ds ds;
		int r = shmctl(i, SHM_STAT, &ds);
		if (r == id) {
			found = 1;
			CHECK_EQ(ds.shm_segsz, 4096);
		}
	}
	CHECK(found);
	struct shmid_ds ds;
	CHECK_ERR(shmctl(top + 1000, SHM_STAT, &ds), EINVAL);
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static const struct mt_case cases[] = {
	MT_CASE(other_user_permissions),
	MT_CASE(shmget_key_permissions),
	MT_CASE(new_owner_by_ipc_set),
	MT_CASE(lock_and_unlock),
	MT_CASE(remap_over_mapping),
	MT_CASE(exit_and_exec_detach),
	MT_CASE(partial_munmap_then_shmdt),
	MT_CASE(info_and_stat_by_index),
};

MT_MAIN(cases)
