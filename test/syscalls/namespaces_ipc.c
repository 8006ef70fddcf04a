//go:build ignore

/* namespaces_ipc: IPC namespaces made by unshare(2) and clone(2): System V
 * shared memory keys and ids of one namespace are invisible from another,
 * segments already attached stay attached, CAP_SYS_ADMIN is needed and
 * CLONE_NEWIPC does not go with CLONE_SYSVSEM. */
#include "moattest.h"

#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEY 0x6d6f6174

static void unshare_ipc_hides_keys_and_ids(void)
{
	int id = CHECK_SYS(shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600));
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(shmget(KEY, 0, 0) == id);
		CHILD_CHECK(unshare(CLONE_NEWIPC) == 0);
		CHILD_ERR(shmget(KEY, 0, 0), ENOENT);
		struct shmid_ds ds;
		CHILD_CHECK(shmctl(id, IPC_STAT, &ds) == -1);
		CHILD_ERR(shmat(id, NULL, 0), EINVAL);
		/* The same key names a new segment here. */
		int nid = shmget(KEY, 8192, IPC_CREAT | IPC_EXCL | 0600);
		CHILD_CHECK(nid >= 0);
		CHILD_CHECK(shmctl(nid, IPC_STAT, &ds) == 0);
		CHILD_CHECK(ds.shm_segsz == 8192);
		_exit(0);
	}
	int st = mt_wait(p);
	struct shmid_ds ds;
	int ok = shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_segsz == 4096 &&
		 shmget(KEY, 0, 0) == id;
	shmctl(id, IPC_RMID, NULL);
	CHECK_EXITED(st, 0);
	CHECK(ok);
}

static void attached_segment_survives_unshare(void)
{
	int id = CHECK_SYS(shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
	char *mem = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	CHECK(mem != (void *)-1);
	mem[0] = 0;
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWIPC) == 0);
		mem[0] = 'z';
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
	CHECK_EQ(mem[0], 'z');
	CHECK_SYS(shmdt(mem));
}

static int child_fn(void *arg)
{
	int id = (int)(long)arg;
	struct shmid_ds ds;
	if (shmctl(id, IPC_STAT, &ds) != -1)
		return 2;
	return shmget(KEY, 0, 0) == -1 && errno == ENOENT ? 0 : 3;
}

static void clone_newipc_private_namespace(void)
{
	int id = CHECK_SYS(shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600));
	char *stk = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stk != MAP_FAILED);
	pid_t p = clone(child_fn, stk + 65536, CLONE_NEWIPC | SIGCHLD, (void *)(long)id);
	int st = p > 0 ? mt_wait(p) : -1;
	shmctl(id, IPC_RMID, NULL);
	CHECK_SYS(p);
	CHECK_EXITED(st, 0);
}

static void clone_newipc_with_sysvsem_einval(void)
{
	long r = syscall(SYS_clone, CLONE_NEWIPC | CLONE_SYSVSEM | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r > 0) {
		mt_wait(r);
		FAIL("clone succeeded");
	}
	CHECK_EQ(errno, EINVAL);
}

static void unshare_ipc_needs_cap_sys_admin(void)
{
	AS_USER({
		if (unshare(CLONE_NEWIPC) != -1 || errno != EPERM)
			_exit(2);
	});
}

static void unshare_ipc_with_sysvsem_ok(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		CHILD_CHECK(unshare(CLONE_NEWIPC | CLONE_SYSVSEM) == 0);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(p), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(unshare_ipc_hides_keys_and_ids),
	MT_CASE(attached_segment_survives_unshare),
	MT_CASE(clone_newipc_private_namespace),
	MT_CASE(clone_newipc_with_sysvsem_einval),
	MT_CASE(unshare_ipc_needs_cap_sys_admin),
	MT_CASE(unshare_ipc_with_sysvsem_ok),
};

MT_MAIN(cases)
