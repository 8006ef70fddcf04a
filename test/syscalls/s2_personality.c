//go:build ignore

/* s2_personality: personality: the 0xffffffff query, old values, arbitrary
 * values stored as given, UNAME26's release rewrite, READ_IMPLIES_EXEC on
 * new mappings (anonymous and file) and mprotect, ADDR_NO_RANDOMIZE,
 * inheritance by fork and threads (each thread has its own), and exec
 * (which keeps the personality but READ_IMPLIES_EXEC on x86-64).
 * Every case restores PER_LINUX before returning. */
#include "moattest.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define QUERY 0xffffffffUL

static unsigned long cur(void)
{
	return (unsigned long)(unsigned)personality(QUERY);
}

static void query_is_linux(void)
{
	CHECK_EQ(cur(), PER_LINUX);
	/* Querying twice changes nothing. */
	CHECK_EQ(cur(), PER_LINUX);
}

static void set_returns_old(void)
{
	CHECK_EQ(personality(PER_LINUX | ADDR_NO_RANDOMIZE), PER_LINUX);
	CHECK_EQ(cur(), PER_LINUX | ADDR_NO_RANDOMIZE);
	CHECK_EQ(personality(PER_LINUX), PER_LINUX | ADDR_NO_RANDOMIZE);
	CHECK_EQ(cur(), PER_LINUX);
}

static void arbitrary_values_stored(void)
{
	/* Linux stores any value but the query one, without checking it. */
	personality(0x12345678);
	unsigned long v = cur();
	personality(PER_LINUX);
	CHECK_EQ(v, 0x12345678);
	personality(0xfffffffe);
	v = cur();
	personality(PER_LINUX);
	CHECK_EQ(v, 0xfffffffe);
}

static void uname26_release(void)
{
	struct utsname before, u;
	CHECK_SYS(uname(&before));
	personality(PER_LINUX | UNAME26);
	int r = uname(&u);
	personality(PER_LINUX);
	CHECK_SYS(r);
	CHECK_EQ(strncmp(u.release, "2.6.", 4), 0);
	/* The rest of the structure is unchanged. */
	CHECK_STREQ(u.sysname, before.sysname);
	CHECK_STREQ(u.machine, before.machine);
	CHECK_SYS(uname(&u));
	CHECK_STREQ(u.release, before.release);
}

static int perms_of(void *addr, char out[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[512];
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 &&
		    (unsigned long)addr >= lo && (unsigned long)addr < hi) {
			memcpy(out, p, 5);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static void read_implies_exec(void)
{
	personality(PER_LINUX | READ_IMPLIES_EXEC);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	personality(PER_LINUX);
	CHECK_MAP(m);
	void *n = CHECK_MAP(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	char p[5];
	CHECK_SYS(perms_of(m, p));
	CHECK_STREQ(p, "r-xp");
	CHECK_SYS(perms_of(n, p));
	CHECK_STREQ(p, "r--p");
}

static void read_implies_exec_mprotect_and_files(void)
{
	char *m = CHECK_MAP(mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	int fd = open(mt_data("hello.txt"), O_RDONLY);
	CHECK_SYS(fd);
	personality(PER_LINUX | READ_IMPLIES_EXEC);
	int r1 = mprotect(m, 4096, PROT_READ);
	int r2 = mprotect(m + 4096, 4096, PROT_WRITE);
	int r3 = mprotect(m + 2 * 4096, 4096, PROT_READ | PROT_WRITE);
	void *f = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	personality(PER_LINUX);
	close(fd);
	CHECK_SYS(r1);
	CHECK_SYS(r2);
	CHECK_SYS(r3);
	CHECK_MAP(f);
	char p[5];
	CHECK_SYS(perms_of(m, p));
	CHECK_STREQ(p, "r-xp");
	/* Without PROT_READ nothing is added. */
	CHECK_SYS(perms_of(m + 4096, p));
	CHECK_STREQ(p, "-w-p");
	CHECK_SYS(perms_of(m + 2 * 4096, p));
	CHECK_STREQ(p, "rwxp");
	CHECK_SYS(perms_of(f, p));
	CHECK_STREQ(p, "r-xp");
	/* Once the flag is off, mprotect gives what is asked. */
	CHECK_SYS(mprotect(m, 4096, PROT_READ));
	CHECK_SYS(perms_of(m, p));
	CHECK_STREQ(p, "r--p");
}

/* Exit codes of the program re-executed with --personality. */
enum { EXEC_OK = 0, EXEC_RIE_KEPT = 2, EXEC_OTHER = 3, EXEC_UNAME = 4 };

static int report_personality(void)
{
	unsigned long p = cur();
	if (p & READ_IMPLIES_EXEC)
		return EXEC_RIE_KEPT;
	if (p != (PER_LINUX | UNAME26 | ADDR_NO_RANDOMIZE))
		return EXEC_OTHER;
	struct utsname u;
	if (uname(&u) != 0 || strncmp(u.release, "2.6.", 4) != 0)
		return EXEC_UNAME;
	return EXEC_OK;
}

static void exec_keeps_all_but_read_implies_exec(void)
{
	pid_t p = CHECK_SYS(fork());
	if (p == 0) {
		personality(PER_LINUX | UNAME26 | ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC);
		char *argv[] = {(char *)mt_argv0, "--personality", NULL};
		execv(mt_argv0, argv);
		_exit(127);
	}
	CHECK_EXITED(mt_wait(p), EXEC_OK);
}

static void inherited_by_fork(void)
{
	personality(PER_LINUX | ADDR_NO_RANDOMIZE);
	pid_t p = fork();
	if (p == 0)
		_exit(cur() == (PER_LINUX | ADDR_NO_RANDOMIZE) ? 0 : 1);
	personality(PER_LINUX);
	CHECK_SYS(p);
	CHECK_EXITED(mt_wait(p), 0);
}

static void *query_thread(void *arg)
{
	*(unsigned long *)arg = cur();
	personality(PER_LINUX | SHORT_INODE);
	return NULL;
}

static void per_thread(void)
{
	/* personality belongs to each thread (task_struct): a new thread
	 * starts with its creator's, and its change stays its own. */
	personality(PER_LINUX | ADDR_NO_RANDOMIZE);
	unsigned long seen = 0;
	pthread_t t;
	int r = pthread_create(&t, NULL, query_thread, &seen);
	if (r == 0)
		pthread_join(t, NULL);
	unsigned long after = cur();
	personality(PER_LINUX);
	CHECK_RET0(r);
	CHECK_EQ(seen, PER_LINUX | ADDR_NO_RANDOMIZE);
	CHECK_EQ(after, PER_LINUX | ADDR_NO_RANDOMIZE);
}

static const struct mt_case cases[] = {
	MT_CASE(query_is_linux),
	MT_CASE(set_returns_old),
	MT_CASE(arbitrary_values_stored),
	MT_CASE(uname26_release),
	MT_CASE(read_implies_exec),
	MT_CASE(read_implies_exec_mprotect_and_files),
	MT_CASE(exec_keeps_all_but_read_implies_exec),
	MT_CASE(inherited_by_fork),
	MT_CASE(per_thread),
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--personality") == 0)
		return report_personality();
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
