//go:build ignore

/* sysv_sem: System V semaphores: semget keys, limits and errors; semop
 * and semtimedop (atomic arrays, IPC_NOWAIT, blocking woken by another
 * process, timeouts, EINTR from a signal even with SA_RESTART, EIDRM on
 * removal, SEM_UNDO applied at exit and at unshare(CLONE_NEWIPC), and
 * clamped); semctl GETVAL/SETVAL,
 * GETALL/SETALL, GETPID, GETNCNT/GETZCNT, IPC_STAT/IPC_SET/IPC_RMID,
 * SEM_STAT/SEM_STAT_ANY, IPC_INFO/SEM_INFO; permissions of another user;
 * /proc/sysvipc/sem. */
#include "moattest.h"

#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SEM_STAT_ANY
#define SEM_STAT_ANY 20
#endif

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

static int mkset(int nsems)
{
	return semget(IPC_PRIVATE, nsems, IPC_CREAT | 0600);
}

static int getval(int id, int n) { return semctl(id, n, GETVAL); }

static int setval(int id, int n, int v)
{
	union semun u = {.val = v};
	return semctl(id, n, SETVAL, u);
}

static int op1(int id, int num, int op, int flg)
{
	struct sembuf b = {.sem_num = num, .sem_op = op, .sem_flg = flg};
	return semop(id, &b, 1);
}

static void semget_keys_and_errors(void)
{
	key_t key = 0x5e300000 + (getpid() & 0xffff);
	CHECK_ERR(semget(IPC_PRIVATE, 0, IPC_CREAT | 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, -1, IPC_CREAT | 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, 32001, IPC_CREAT | 0600), EINVAL);
	CHECK_ERR(semget(key, 1, 0600), ENOENT);
	int id = CHECK_SYS(semget(key, 3, IPC_CREAT | IPC_EXCL | 0600));
	CHECK_ERR(semget(key, 3, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(semget(key, 3, 0), id);
	CHECK_EQ(semget(key, 0, 0), id);
	CHECK_EQ(semget(key, 2, IPC_CREAT | 0600), id);
	CHECK_ERR(semget(key, 4, 0), EINVAL);
	/* Two private sets are distinct. */
	int a = CHECK_SYS(mkset(1)), b = CHECK_SYS(mkset(1));
	CHECK_NE(a, b);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
	CHECK_ERR(semget(key, 1, 0600), ENOENT);
	CHECK_ERR(getval(id, 0), EINVAL);
	CHECK_ERR(semctl(-1, 0, GETVAL), EINVAL);
	CHECK_SYS(semctl(a, 0, IPC_RMID));
	CHECK_SYS(semctl(b, 0, IPC_RMID));
}

static void semop_values_and_errors(void)
{
	int id = CHECK_SYS(mkset(2));
	CHECK_EQ(getval(id, 0), 0);
	CHECK_SYS(op1(id, 0, 3, 0));
	CHECK_EQ(getval(id, 0), 3);
	CHECK_EQ(semctl(id, 0, GETPID), getpid());
	CHECK_EQ(semctl(id, 1, GETPID), 0);
	CHECK_SYS(op1(id, 0, -2, 0));
	CHECK_EQ(getval(id, 0), 1);
	CHECK_ERR(op1(id, 0, -2, IPC_NOWAIT), EAGAIN);
	CHECK_ERR(op1(id, 0, 0, IPC_NOWAIT), EAGAIN);
	CHECK_SYS(op1(id, 1, 0, 0)); /* zero already */
	CHECK_ERR(op1(id, 2, 1, 0), EFBIG);
	CHECK_ERR(op1(id, 0, 32767, 0), ERANGE);
	CHECK_EQ(getval(id, 0), 1);
	struct sembuf none[1];
	CHECK_ERR(semop(id, none, 0), EINVAL);
	static struct sembuf many[501];
	CHECK_ERR(semop(id, many, 501), E2BIG);
	CHECK_ERR(semop(id, (struct sembuf *)8, 1), EFAULT);
	/* An array goes all or nothing. */
	struct sembuf arr[2] = {{0, 5, 0}, {1, -1, IPC_NOWAIT}};
	CHECK_ERR(semop(id, arr, 2), EAGAIN);
	CHECK_EQ(getval(id, 0), 1);
	struct sembuf arr2[3] = {{0, 5, 0}, {1, 2, 0}, {0, -6, 0}};
	CHECK_SYS(semop(id, arr2, 3));
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(getval(id, 1), 2);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
	CHECK_ERR(op1(id, 0, 1, 0), EINVAL);
}

static void semctl_values(void)
{
	int id = CHECK_SYS(mkset(3));
	CHECK_ERR(setval(id, 0, -1), ERANGE);
	CHECK_ERR(setval(id, 0, 32768), ERANGE);
	CHECK_ERR(setval(id, 3, 1), EINVAL);
	CHECK_ERR(getval(id, 3), EINVAL);
	CHECK_ERR(getval(id, -1), EINVAL);
	CHECK_SYS(setval(id, 1, 32767));
	CHECK_EQ(getval(id, 1), 32767);
	unsigned short all[3] = {7, 8, 9}, got[3] = {0};
	union semun u = {.array = all};
	CHECK_SYS(semctl(id, 0, SETALL, u));
	u.array = got;
	CHECK_SYS(semctl(id, 0, GETALL, u));
	CHECK_EQ(got[0], 7);
	CHECK_EQ(got[1], 8);
	CHECK_EQ(got[2], 9);
	unsigned short bad[3] = {1, 40000, 2};
	u.array = bad;
	CHECK_ERR(semctl(id, 0, SETALL, u), ERANGE);
	CHECK_EQ(getval(id, 0), 7);
	u.array = (unsigned short *)8;
	CHECK_ERR(semctl(id, 0, GETALL, u), EFAULT);
	CHECK_ERR(semctl(id, 0, SETALL, u), EFAULT);
	CHECK_ERR(semctl(id, 0, 1234), EINVAL);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	CHECK_EQ(semctl(id, 0, GETZCNT), 0);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
	CHECK_ERR(semctl(id, 0, IPC_RMID), EINVAL);
}

static void stat_set_and_info(void)
{
	key_t key = 0x5e310000 + (getpid() & 0xffff);
	int id = CHECK_SYS(semget(key, 4, IPC_CREAT | IPC_EXCL | 0640));
	struct semid_ds ds;
	union semun u = {.buf = &ds};
	CHECK_SYS(semctl(id, 0, IPC_STAT, u));
	CHECK_EQ(ds.sem_perm.__key, key);
	CHECK_EQ(ds.sem_perm.mode & 0777, 0640);
	CHECK_EQ(ds.sem_perm.uid, geteuid());
	CHECK_EQ(ds.sem_perm.cuid, geteuid());
	CHECK_EQ(ds.sem_perm.gid, getegid());
	CHECK_EQ(ds.sem_nsems, 4);
	CHECK_EQ(ds.sem_otime, 0);
	CHECK_NE(ds.sem_ctime, 0);
	CHECK_SYS(op1(id, 0, 0, 0));
	CHECK_SYS(semctl(id, 0, IPC_STAT, u));
	CHECK_NE(ds.sem_otime, 0);
	ds.sem_perm.mode = 0604;
	CHECK_SYS(semctl(id, 0, IPC_SET, u));
	CHECK_SYS(semctl(id, 0, IPC_STAT, u));
	CHECK_EQ(ds.sem_perm.mode & 0777, 0604);
	u.buf = (struct semid_ds *)8;
	CHECK_ERR(semctl(id, 0, IPC_STAT, u), EFAULT);

	struct seminfo si;
	union semun ui = {.__buf = &si};
	int highest = CHECK_SYS(semctl(0, 0, IPC_INFO, ui));
	CHECK_EQ(si.semmsl, 32000);
	CHECK_EQ(si.semopm, 500);
	CHECK_EQ(si.semvmx, 32767);
	CHECK_EQ(si.semaem, 32767);
	CHECK_EQ(si.semusz, 20);
	CHECK_GE(si.semmni, 1);
	CHECK_SYS(semctl(0, 0, SEM_INFO, ui));
	CHECK_EQ(si.semusz, 1);
	CHECK_EQ(si.semaem, 4);
	/* SEM_STAT takes the slot index and returns the id. */
	int found = 0;
	for (int i = 0; i <= highest; i++) {
		u.buf = &ds;
		int r = semctl(i, 0, SEM_STAT, u);
		if (r == id) {
			found = 1;
			CHECK_EQ(ds.sem_nsems, 4);
			CHECK_EQ(semctl(i, 0, SEM_STAT_ANY, u), id);
		}
	}
	CHECK(found);
	CHECK_ERR(semctl(highest + 1, 0, SEM_STAT, u), EINVAL);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
	CHECK_SYS(semctl(0, 0, SEM_INFO, ui));
	CHECK_EQ(si.semusz, 0);
	CHECK_EQ(si.semaem, 0);
}

/* blocked_child forks a child that runs op on sem 0 of id and exits with
 * its errno (0 on success). */
static pid_t blocked_child(int id, int op)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct sembuf b = {0, op, 0};
		_exit(semop(id, &b, 1) == 0 ? 0 : errno);
	}
	return pid;
}

static void semop_blocks_until_woken(void)
{
	int id = CHECK_SYS(mkset(1));
	pid_t pid = CHECK_SYS(blocked_child(id, -2));
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_EQ(semctl(id, 0, GETNCNT), 1);
	CHECK_EQ(semctl(id, 0, GETZCNT), 0);
	CHECK_SYS(op1(id, 0, 1, 0));
	CHECK_EQ(getval(id, 0), 1); /* not enough yet */
	CHECK_SYS(op1(id, 0, 1, 0));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(semctl(id, 0, GETPID), pid);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);

	/* Waiting for zero. */
	CHECK_SYS(setval(id, 0, 1));
	pid = CHECK_SYS(blocked_child(id, 0));
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_EQ(semctl(id, 0, GETZCNT), 1);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	CHECK_SYS(setval(id, 0, 0));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

static void semtimedop_timeout(void)
{
	int id = CHECK_SYS(mkset(1));
	struct timespec ts = {0, 20 * 1000 * 1000};
	struct sembuf b = {0, -1, 0};
	int64_t t0 = mt_now_ns();
	CHECK_ERR(semtimedop(id, &b, 1, &ts), EAGAIN);
	CHECK_GE(mt_now_ns() - t0, 15 * 1000 * 1000);
	struct timespec zero = {0, 0};
	CHECK_ERR(semtimedop(id, &b, 1, &zero), EAGAIN);
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(semtimedop(id, &b, 1, &bad), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(semtimedop(id, &b, 1, &neg), EINVAL);
	CHECK_ERR(semtimedop(id, &b, 1, (struct timespec *)8), EFAULT);
	/* A timeout that is not needed. */
	CHECK_SYS(setval(id, 0, 1));
	CHECK_SYS(semtimedop(id, &b, 1, &ts));
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

static void on_usr1(int sig) { (void)sig; }

static void semop_eintr_not_restarted(void)
{
	int id = CHECK_SYS(mkset(1));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
		struct sembuf b = {0, -1, 0};
		int r = semop(id, &b, 1);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(kill(pid, SIGUSR1));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

/* A stop and continue ends semop with EINTR too (signal(7)). */
static void semop_eintr_after_stop(void)
{
	int id = CHECK_SYS(mkset(1));
	pid_t pid = CHECK_SYS(blocked_child(id, -1));
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_EXITED(mt_wait(pid), EINTR);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

static void rmid_wakes_with_eidrm(void)
{
	int id = CHECK_SYS(mkset(1));
	pid_t pid = CHECK_SYS(blocked_child(id, -1));
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(semctl(id, 0, IPC_RMID));
	CHECK_EXITED(mt_wait(pid), EIDRM);
}

static void sem_undo_at_exit(void)
{
	int id = CHECK_SYS(mkset(2));
	CHECK_SYS(setval(id, 0, 5));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct sembuf b[2] = {{0, -2, SEM_UNDO}, {1, 3, SEM_UNDO}};
		_exit(semop(id, b, 2) == 0 ? 0 : 1);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(getval(id, 0), 5);
	CHECK_EQ(getval(id, 1), 0);
	CHECK_EQ(semctl(id, 0, GETPID), pid);

	/* The adjustment is clamped at zero. */
	/* p: child to parent; q: parent to child. */
	int p[2], q[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(pipe(q));
	CHECK_SYS(setval(id, 1, 0));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		if (op1(id, 1, 2, SEM_UNDO) != 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_SYS(op1(id, 1, -1, 0));
	CHECK_EQ(write(q[1], "y", 1), 1);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(getval(id, 1), 0);

	/* SETVAL clears the adjustments. */
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		if (op1(id, 1, 4, SEM_UNDO) != 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_SYS(setval(id, 1, 4));
	CHECK_EQ(write(q[1], "y", 1), 1);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(getval(id, 1), 4);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

/* Leaving the IPC namespace (unshare(CLONE_NEWIPC)) applies the SEM_UNDO
 * adjustments made in the old one, as exit does. */
static void sem_undo_at_unshare(void)
{
	int id = CHECK_SYS(mkset(1));
	int p[2], q[2];
	CHECK_SYS(pipe(p));
	CHECK_SYS(pipe(q));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;
		if (op1(id, 0, 3, SEM_UNDO) != 0)
			_exit(1);
		if (unshare(CLONE_NEWIPC) != 0)
			_exit(2);
		if (write(p[1], "x", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(write(q[1], "y", 1), 1);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(getval(id, 0), 0);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

static void other_user_permissions(void)
{
	key_t key = 0x5e320000 + (getpid() & 0xffff);
	int priv = CHECK_SYS(semget(key, 1, IPC_CREAT | IPC_EXCL | 0600));
	int ro = CHECK_SYS(semget(IPC_PRIVATE, 1, IPC_CREAT | 0644));
	AS_USER({
		if (semget(key, 1, 0) != priv)
			_exit(1);
		if (semget(key, 1, 0400) != -1 || errno != EACCES)
			_exit(2);
		if (semctl(priv, 0, GETVAL) != -1 || errno != EACCES)
			_exit(3);
		if (op1(priv, 0, 0, IPC_NOWAIT) != -1 || errno != EACCES)
			_exit(4);
		if (semctl(ro, 0, GETVAL) != 0)
			_exit(5);
		if (op1(ro, 0, 0, IPC_NOWAIT) != 0)
			_exit(6);
		if (op1(ro, 0, 1, IPC_NOWAIT) != -1 || errno != EACCES)
			_exit(7);
		union semun u = {.val = 1};
		if (semctl(ro, 0, SETVAL, u) != -1 || errno != EACCES)
			_exit(8);
		struct semid_ds ds;
		u.buf = &ds;
		if (semctl(priv, 0, IPC_STAT, u) != -1 || errno != EACCES)
			_exit(9);
		if (semctl(ro, 0, IPC_STAT, u) != 0)
			_exit(10);
		if (semctl(ro, 0, IPC_SET, u) != -1 || errno != EPERM)
			_exit(11);
		if (semctl(ro, 0, IPC_RMID) != -1 || errno != EPERM)
			_exit(12);
	});
	CHECK_SYS(semctl(priv, 0, IPC_RMID));
	CHECK_SYS(semctl(ro, 0, IPC_RMID));
}

static void proc_sysvipc_sem(void)
{
	key_t key = 0x5e330000 + (getpid() & 0xffff);
	int id = CHECK_SYS(semget(key, 3, IPC_CREAT | IPC_EXCL | 0640));
	FILE *f = fopen("/proc/sysvipc/sem", "r");
	CHECK(f != NULL);
	char line[256];
	CHECK(fgets(line, sizeof line, f) != NULL);
	CHECK_STREQ(line, "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n");
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		int k, i, n;
		unsigned perms;
		if (sscanf(line, "%d %d %o %d", &k, &i, &perms, &n) == 4 && i == id) {
			found = 1;
			CHECK_EQ(k, key);
			CHECK_EQ(perms, 0640);
			CHECK_EQ(n, 3);
		}
	}
	fclose(f);
	CHECK(found);
	CHECK_SYS(semctl(id, 0, IPC_RMID));
}

static const struct mt_case cases[] = {
	MT_CASE(semget_keys_and_errors),
	MT_CASE(semop_values_and_errors),
	MT_CASE(semctl_values),
	MT_CASE(stat_set_and_info),
	MT_CASE(semop_blocks_until_woken),
	MT_CASE(semtimedop_timeout),
	MT_CASE(semop_eintr_not_restarted),
	MT_CASE(semop_eintr_after_stop),
	MT_CASE(rmid_wakes_with_eidrm),
	MT_CASE(sem_undo_at_exit),
	MT_CASE(sem_undo_at_unshare),
	MT_CASE(other_user_permissions),
	MT_CASE(proc_sysvipc_sem),
};

MT_MAIN(cases)
