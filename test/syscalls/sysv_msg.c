//go:build ignore

/* sysv_msg: System V message queues: msgget keys and errors; msgsnd and
 * msgrcv by type (0, >0, <0, MSG_EXCEPT), sizes (E2BIG, MSG_NOERROR,
 * empty messages), MSG_COPY, blocking on a full queue and on an empty
 * one, EINTR from a signal even with SA_RESTART, EIDRM on removal;
 * msgctl IPC_STAT/IPC_SET/IPC_RMID, MSG_STAT/MSG_STAT_ANY,
 * IPC_INFO/MSG_INFO; permissions of another user; /proc/sysvipc/msg. */
#include "moattest.h"

#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif
#ifndef MSG_STAT_ANY
#define MSG_STAT_ANY 13
#endif

struct m {
	long type;
	char text[9000];
};

static int mkq(void) { return msgget(IPC_PRIVATE, IPC_CREAT | 0600); }

static int snd(int id, long type, const char *s, int flags)
{
	struct m b;
	b.type = type;
	memcpy(b.text, s, strlen(s));
	return msgsnd(id, &b, strlen(s), flags);
}

/* rcv receives into a static buffer, NUL-terminating the text. */
static struct m rb;
static ssize_t rcv(int id, size_t size, long type, int flags)
{
	memset(&rb, 0, sizeof rb);
	return msgrcv(id, &rb, size, type, flags);
}

static void msgget_keys_and_errors(void)
{
	key_t key = 0x35300000 + (getpid() & 0xffff);
	CHECK_ERR(msgget(key, 0600), ENOENT);
	int id = CHECK_SYS(msgget(key, IPC_CREAT | IPC_EXCL | 0600));
	CHECK_ERR(msgget(key, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(msgget(key, 0), id);
	CHECK_EQ(msgget(key, IPC_CREAT | 0600), id);
	int a = CHECK_SYS(mkq()), b = CHECK_SYS(mkq());
	CHECK_NE(a, b);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
	CHECK_ERR(msgget(key, 0), ENOENT);
	CHECK_ERR(msgctl(id, IPC_RMID, NULL), EINVAL);
	CHECK_ERR(snd(id, 1, "x", 0), EINVAL);
	CHECK_ERR(msgctl(-1, IPC_RMID, NULL), EINVAL);
	CHECK_SYS(msgctl(a, IPC_RMID, NULL));
	CHECK_SYS(msgctl(b, IPC_RMID, NULL));
}

static void receive_by_type(void)
{
	int id = CHECK_SYS(mkq());
	CHECK_SYS(snd(id, 3, "c", 0));
	CHECK_SYS(snd(id, 1, "a1", 0));
	CHECK_SYS(snd(id, 2, "b", 0));
	CHECK_SYS(snd(id, 1, "a2", 0));
	CHECK_EQ(rcv(id, 100, -2, 0), 2);
	CHECK_EQ(rb.type, 1);
	CHECK_STREQ(rb.text, "a1");
	CHECK_EQ(rcv(id, 100, 1, MSG_EXCEPT), 1);
	CHECK_STREQ(rb.text, "c");
	CHECK_ERR(rcv(id, 100, 5, IPC_NOWAIT), ENOMSG);
	CHECK_EQ(rcv(id, 100, 1, 0), 2);
	CHECK_STREQ(rb.text, "a2");
	CHECK_EQ(rcv(id, 100, 0, 0), 1);
	CHECK_EQ(rb.type, 2);
	CHECK_ERR(rcv(id, 100, 0, IPC_NOWAIT), ENOMSG);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static void sizes_and_errors(void)
{
	int id = CHECK_SYS(mkq());
	struct m b = {.type = 1};
	CHECK_ERR(msgsnd(id, &b, 8193, 0), EINVAL);
	CHECK_SYS(msgsnd(id, &b, 8192, 0));
	CHECK_EQ(rcv(id, 8192, 0, 0), 8192);
	b.type = 0;
	CHECK_ERR(msgsnd(id, &b, 1, 0), EINVAL);
	b.type = -1;
	CHECK_ERR(msgsnd(id, &b, 1, 0), EINVAL);
	CHECK_ERR(msgsnd(id, (void *)8, 1, 0), EFAULT);
	CHECK_ERR(msgsnd(-1, &b, 1, 0), EINVAL);
	CHECK_SYS(snd(id, 4, "0123456789", 0));
	CHECK_ERR(rcv(id, 5, 0, 0), E2BIG);
	CHECK_EQ(rcv(id, 5, 0, MSG_NOERROR), 5);
	CHECK_STREQ(rb.text, "01234");
	CHECK_ERR(rcv(id, 5, 0, IPC_NOWAIT), ENOMSG);
	CHECK_ERR(rcv(id, -1, 0, 0), EINVAL);
	CHECK_ERR(rcv(-1, 5, 0, 0), EINVAL);
	/* An empty message. */
	CHECK_SYS(snd(id, 9, "", 0));
	CHECK_EQ(rcv(id, 0, 0, 0), 0);
	CHECK_EQ(rb.type, 9);
	/* A fault on the way out loses the message. */
	CHECK_SYS(snd(id, 1, "lost", 0));
	CHECK_ERR(msgrcv(id, (void *)8, 100, 0, 0), EFAULT);
	CHECK_ERR(rcv(id, 100, 0, IPC_NOWAIT), ENOMSG);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static void msg_copy(void)
{
	int id = CHECK_SYS(mkq());
	CHECK_SYS(snd(id, 1, "first", 0));
	CHECK_SYS(snd(id, 2, "second", 0));
	ssize_t n = rcv(id, 100, 1, MSG_COPY | IPC_NOWAIT);
	if (n < 0 && errno == ENOSYS) {
		msgctl(id, IPC_RMID, NULL);
		SKIP("kernel without CONFIG_CHECKPOINT_RESTORE");
	}
	CHECK_EQ(n, 6);
	CHECK_STREQ(rb.text, "second");
	CHECK_EQ(rcv(id, 100, 0, MSG_COPY | IPC_NOWAIT), 5);
	CHECK_ERR(rcv(id, 100, 2, MSG_COPY | IPC_NOWAIT), ENOMSG);
	CHECK_ERR(rcv(id, 100, 0, MSG_COPY), EINVAL);
	CHECK_ERR(rcv(id, 100, 0, MSG_COPY | IPC_NOWAIT | MSG_EXCEPT), EINVAL);
	struct msqid_ds ds;
	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_qnum, 2);
	CHECK_EQ(ds.msg_lrpid, 0);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static void stat_set_and_info(void)
{
	key_t key = 0x35310000 + (getpid() & 0xffff);
	int id = CHECK_SYS(msgget(key, IPC_CREAT | IPC_EXCL | 0640));
	struct msqid_ds ds;
	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_perm.__key, key);
	CHECK_EQ(ds.msg_perm.mode & 0777, 0640);
	CHECK_EQ(ds.msg_perm.uid, geteuid());
	CHECK_EQ(ds.msg_perm.cuid, geteuid());
	CHECK_EQ(ds.msg_qbytes, 16384);
	CHECK_EQ(ds.msg_qnum, 0);
	CHECK_EQ(ds.msg_stime, 0);
	CHECK_NE(ds.msg_ctime, 0);
	CHECK_SYS(snd(id, 1, "abc", 0));
	CHECK_SYS(snd(id, 1, "de", 0));
	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_qnum, 2);
	CHECK_EQ(ds.__msg_cbytes, 5);
	CHECK_EQ(ds.msg_lspid, getpid());
	CHECK_EQ(ds.msg_lrpid, 0);
	CHECK_NE(ds.msg_stime, 0);
	CHECK_EQ(rcv(id, 10, 0, 0), 3);
	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_lrpid, getpid());
	CHECK_NE(ds.msg_rtime, 0);

	struct msginfo mi;
	int highest = CHECK_SYS(msgctl(0, IPC_INFO, (struct msqid_ds *)&mi));
	CHECK_EQ(mi.msgmax, 8192);
	CHECK_EQ(mi.msgmnb, 16384);
	CHECK_EQ(mi.msgmni, 32000);
	CHECK_EQ(mi.msgssz, 16);
	CHECK_EQ(mi.msgseg, 0xffff);
	CHECK_EQ(mi.msgtql, 16384);
	CHECK_SYS(msgctl(0, MSG_INFO, (struct msqid_ds *)&mi));
	CHECK_EQ(mi.msgpool, 1);
	CHECK_EQ(mi.msgmap, 1);
	CHECK_EQ(mi.msgtql, 2);
	int found = 0;
	for (int i = 0; i <= highest; i++) {
		if (msgctl(i, MSG_STAT, &ds) == id) {
			found = 1;
			CHECK_EQ(ds.msg_qnum, 1);
			CHECK_EQ(msgctl(i, MSG_STAT_ANY, &ds), id);
		}
	}
	CHECK(found);
	CHECK_ERR(msgctl(highest + 1, MSG_STAT, &ds), EINVAL);

	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	ds.msg_perm.mode = 0600;
	ds.msg_qbytes = 100;
	CHECK_SYS(msgctl(id, IPC_SET, &ds));
	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_perm.mode & 0777, 0600);
	CHECK_EQ(ds.msg_qbytes, 100);
	CHECK_ERR(msgctl(id, IPC_STAT, (struct msqid_ds *)8), EFAULT);
	CHECK_ERR(msgctl(id, 1234, &ds), EINVAL);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
	CHECK_SYS(msgctl(0, MSG_INFO, (struct msqid_ds *)&mi));
	CHECK_EQ(mi.msgpool, 0);
	CHECK_EQ(mi.msgmap, 0);
}

static void full_queue_blocks_sender(void)
{
	int id = CHECK_SYS(mkq());
	struct msqid_ds ds;
	CHECK_SYS(msgctl(id, IPC_STAT, &ds));
	ds.msg_qbytes = 10;
	CHECK_SYS(msgctl(id, IPC_SET, &ds));
	CHECK_SYS(snd(id, 1, "12345678", 0));
	CHECK_ERR(snd(id, 1, "abcd", IPC_NOWAIT), EAGAIN);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(snd(id, 2, "abcd", 0) == 0 ? 0 : errno);
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_EQ(rcv(id, 100, 0, 0), 8);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(rcv(id, 100, 0, IPC_NOWAIT), 4);
	CHECK_EQ(rb.type, 2);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static void empty_queue_blocks_receiver(void)
{
	int id = CHECK_SYS(mkq());
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		ssize_t n = rcv(id, 100, 7, 0);
		_exit(n == 3 && rb.type == 7 ? 0 : 1);
	}
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(snd(id, 6, "no", 0));
	CHECK_SYS(snd(id, 7, "yes", 0));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(rcv(id, 100, 0, IPC_NOWAIT), 2);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static void on_usr1(int sig) { (void)sig; }

static void msgrcv_eintr_with_sa_restart(void)
{
	int id = CHECK_SYS(mkq());
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
		_exit(rcv(id, 100, 0, 0) == -1 && errno == EINTR ? 0 : 1);
	}
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(kill(pid, SIGUSR1));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

/* After a stop and continue msgrcv goes on waiting (signal(7)). */
static void msgrcv_restarts_after_stop(void)
{
	int id = CHECK_SYS(mkq());
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(rcv(id, 100, 0, 0) == 2 ? 0 : 1);
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(kill(pid, SIGSTOP));
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK(WIFSTOPPED(st));
	CHECK_SYS(kill(pid, SIGCONT));
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(snd(id, 1, "ok", 0));
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static void rmid_wakes_with_eidrm(void)
{
	int id = CHECK_SYS(mkq());
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(rcv(id, 100, 0, 0) == -1 ? errno : 0);
	CHECK_SYS(mt_wait_blocked(pid, 5000));
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
	CHECK_EXITED(mt_wait(pid), EIDRM);
}

static void other_user_permissions(void)
{
	int priv = CHECK_SYS(msgget(IPC_PRIVATE, IPC_CREAT | 0600));
	int wo = CHECK_SYS(msgget(IPC_PRIVATE, IPC_CREAT | 0622));
	int given = CHECK_SYS(mkq());
	struct msqid_ds ds;
	CHECK_SYS(msgctl(given, IPC_STAT, &ds));
	ds.msg_perm.uid = 1000;
	CHECK_SYS(msgctl(given, IPC_SET, &ds));
	CHECK_SYS(snd(priv, 1, "x", 0));
	AS_USER({
		if (snd(priv, 1, "x", IPC_NOWAIT) != -1 || errno != EACCES)
			_exit(1);
		if (rcv(priv, 10, 0, IPC_NOWAIT) != -1 || errno != EACCES)
			_exit(2);
		struct msqid_ds d;
		if (msgctl(priv, IPC_STAT, &d) != -1 || errno != EACCES)
			_exit(3);
		if (msgctl(priv, IPC_RMID, NULL) != -1 || errno != EPERM)
			_exit(4);
		if (snd(wo, 1, "x", IPC_NOWAIT) != 0)
			_exit(5);
		if (rcv(wo, 10, 0, IPC_NOWAIT) != -1 || errno != EACCES)
			_exit(6);
		/* The owner may set msg_qbytes up to msgmnb only. */
		if (msgctl(given, IPC_STAT, &d) != 0)
			_exit(7);
		d.msg_qbytes = 20000;
		if (msgctl(given, IPC_SET, &d) != -1 || errno != EPERM)
			_exit(8);
		d.msg_qbytes = 16000;
		if (msgctl(given, IPC_SET, &d) != 0)
			_exit(9);
		if (msgctl(given, IPC_RMID, NULL) != 0)
			_exit(10);
	});
	CHECK_SYS(msgctl(priv, IPC_RMID, NULL));
	CHECK_SYS(msgctl(wo, IPC_RMID, NULL));
}

static void proc_sysvipc_msg(void)
{
	key_t key = 0x35330000 + (getpid() & 0xffff);
	int id = CHECK_SYS(msgget(key, IPC_CREAT | IPC_EXCL | 0640));
	CHECK_SYS(snd(id, 1, "hello", 0));
	FILE *f = fopen("/proc/sysvipc/msg", "r");
	CHECK(f != NULL);
	char line[256];
	CHECK(fgets(line, sizeof line, f) != NULL);
	CHECK_STREQ(line, "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n");
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		int k, i, lspid, lrpid;
		unsigned perms;
		unsigned long cbytes, qnum;
		if (sscanf(line, "%d %d %o %lu %lu %d %d", &k, &i, &perms, &cbytes, &qnum, &lspid, &lrpid) == 7 && i == id) {
			found = 1;
			CHECK_EQ(k, key);
			CHECK_EQ(perms, 0640);
			CHECK_EQ(cbytes, 5);
			CHECK_EQ(qnum, 1);
			CHECK_EQ(lspid, getpid());
			CHECK_EQ(lrpid, 0);
		}
	}
	fclose(f);
	CHECK(found);
	CHECK_SYS(msgctl(id, IPC_RMID, NULL));
}

static const struct mt_case cases[] = {
	MT_CASE(msgget_keys_and_errors),
	MT_CASE(receive_by_type),
	MT_CASE(sizes_and_errors),
	MT_CASE(msg_copy),
	MT_CASE(stat_set_and_info),
	MT_CASE(full_queue_blocks_sender),
	MT_CASE(empty_queue_blocks_receiver),
	MT_CASE(msgrcv_eintr_with_sa_restart),
	MT_CASE(msgrcv_restarts_after_stop),
	MT_CASE(rmid_wakes_with_eidrm),
	MT_CASE(other_user_permissions),
	MT_CASE(proc_sysvipc_msg),
};

MT_MAIN(cases)
