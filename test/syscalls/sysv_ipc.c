//go:build ignore

/* sysv_ipc: what System V semaphores, message queues and shared memory
 * share: each IPC namespace (unshare(CLONE_NEWIPC)) has its own keys,
 * ids and counts, /proc/sysvipc/{sem,msg,shm} list the objects of the
 * reader's namespace, and recorded pids read in the reader's PID
 * namespace (0 when the process is not visible there). */
#define _GNU_SOURCE
#include "moattest.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

/* proc_lines counts the lines of /proc/sysvipc/NAME after its header, -1
 * if it cannot be read. */
static int proc_lines(const char *name)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/sysvipc/%s", name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = -1;
	while (fgets(line, sizeof line, f))
		n++;
	fclose(f);
	return n;
}

static void namespaces_are_separate(void)
{
	key_t key = 0x1c000000 + (getpid() & 0xffff);
	int sem = CHECK_SYS(semget(key, 1, IPC_CREAT | IPC_EXCL | 0600));
	int msg = CHECK_SYS(msgget(key, IPC_CREAT | IPC_EXCL | 0600));
	int shm = CHECK_SYS(shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600));
	int sems = proc_lines("sem"), msgs = proc_lines("msg"), shms = proc_lines("shm");
	CHECK_GE(sems, 1);
	CHECK_GE(msgs, 1);
	CHECK_GE(shms, 1);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWIPC) == 0);
		CHILD_CHECK(semget(key, 1, 0) == -1 && errno == ENOENT);
		CHILD_CHECK(msgget(key, 0) == -1 && errno == ENOENT);
		CHILD_CHECK(shmget(key, 4096, 0) == -1 && errno == ENOENT);
		CHILD_CHECK(semctl(sem, 0, GETVAL) == -1 && errno == EINVAL);
		CHILD_CHECK(msgctl(msg, IPC_RMID, NULL) == -1 && errno == EINVAL);
		struct seminfo si;
		CHILD_CHECK(semctl(0, 0, SEM_INFO, &si) >= 0 && si.semusz == 0);
		struct msginfo mi;
		CHILD_CHECK(msgctl(0, MSG_INFO, (struct msqid_ds *)&mi) >= 0 && mi.msgpool == 0);
		CHILD_CHECK(proc_lines("sem") == 0 && proc_lines("msg") == 0 && proc_lines("shm") == 0);
		/* The same key makes new objects here. */
		int s2 = semget(key, 2, IPC_CREAT | IPC_EXCL | 0600);
		CHILD_CHECK(s2 >= 0);
		CHILD_CHECK(msgget(key, IPC_CREAT | IPC_EXCL | 0600) >= 0);
		CHILD_CHECK(proc_lines("sem") == 1 && proc_lines("msg") == 1);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(semget(key, 1, 0), sem);
	CHECK_EQ(msgget(key, 0), msg);
	CHECK_EQ(proc_lines("sem"), sems);
	CHECK_EQ(proc_lines("msg"), msgs);
	CHECK_SYS(semctl(sem, 0, IPC_RMID));
	CHECK_SYS(msgctl(msg, IPC_RMID, NULL));
	CHECK_SYS(shmctl(shm, IPC_RMID, NULL));
}

static void proc_sysvipc_shm(void)
{
	key_t key = 0x1c010000 + (getpid() & 0xffff);
	int id = CHECK_SYS(shmget(key, 5000, IPC_CREAT | IPC_EXCL | 0640));
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	CHECK(f != NULL);
	char line[512];
	CHECK(fgets(line, sizeof line, f) != NULL);
	CHECK_STREQ(line, "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n");
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		int k, i, cpid, lpid;
		unsigned perms;
		unsigned long size, nattch;
		if (sscanf(line, "%d %d %o %lu %d %d %lu", &k, &i, &perms, &size, &cpid, &lpid, &nattch) == 7 && i == id) {
			found = 1;
			CHECK_EQ(k, key);
			CHECK_EQ(perms, 0640);
			CHECK_EQ(size, 5000);
			CHECK_EQ(cpid, getpid());
			CHECK_EQ(lpid, getpid());
			CHECK_EQ(nattch, 1);
		}
	}
	fclose(f);
	CHECK(found);
	CHECK_SYS(shmdt(p));
	CHECK_SYS(shmctl(id, IPC_RMID, NULL));
}

static void pids_in_reader_pid_namespace(void)
{
	int q = CHECK_SYS(msgget(IPC_PRIVATE, IPC_CREAT | 0600));
	int sem = CHECK_SYS(semget(IPC_PRIVATE, 1, IPC_CREAT | 0600));
	struct { long type; char c; } m = {1, 'x'};
	CHECK_SYS(msgsnd(q, &m, 1, 0));
	int p[2];
	CHECK_SYS(pipe(p));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWPID) == 0);
		pid_t g = fork();
		CHILD_CHECK(g >= 0);
		if (g == 0) {
			struct msqid_ds ds;
			/* The sender is outside this namespace. */
			CHILD_CHECK(msgctl(q, IPC_STAT, &ds) == 0 && ds.msg_lspid == 0);
			CHILD_CHECK(msgsnd(q, &m, 1, 0) == 0);
			CHILD_CHECK(msgctl(q, IPC_STAT, &ds) == 0 && ds.msg_lspid == 1);
			struct sembuf b = {0, 1, 0};
			CHILD_CHECK(semop(sem, &b, 1) == 0);
			CHILD_CHECK(semctl(sem, 0, GETPID) == 1);
			_exit(0);
		}
		CHILD_CHECK(write(p[1], &g, sizeof g) == sizeof g);
		int st;
		CHILD_CHECK(waitpid(g, &st, 0) == g);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	pid_t g = 0;
	CHECK_EQ(read(p[0], &g, sizeof g), (ssize_t)sizeof g);
	CHECK_EXITED(mt_wait(pid), 0);
	struct msqid_ds ds;
	CHECK_SYS(msgctl(q, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_lspid, g);
	CHECK_EQ(semctl(sem, 0, GETPID), g);
	close(p[0]);
	close(p[1]);
	CHECK_SYS(msgctl(q, IPC_RMID, NULL));
	CHECK_SYS(semctl(sem, 0, IPC_RMID));
}

static const struct mt_case cases[] = {
	MT_CASE(namespaces_are_separate),
	MT_CASE(proc_sysvipc_shm),
	MT_CASE(pids_in_reader_pid_namespace),
};

MT_MAIN(cases)
