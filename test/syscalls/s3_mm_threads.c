//go:build ignore

/* s3_mm_threads: one address space shared by threads: mappings made,
 * protected, moved, zapped or removed by one thread seen at once by the
 * others (writes after another thread's mprotect or munmap fault),
 * the program break shared, and fork from a second thread copying the
 * whole address space (other threads' stacks included) but only the
 * calling thread. */
#include "moattest.h"

#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

/* in_thread runs fn(arg) in a new thread and joins it. */
static int in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg) != 0)
		return -1;
	return pthread_join(t, NULL);
}

static sigjmp_buf jb;
static volatile int faulted;

static void on_segv(int sig)
{
	(void)sig;
	faulted = 1;
	siglongjmp(jb, 1);
}

/* write_faults reports whether writing *p raises SIGSEGV. */
static int write_faults(volatile char *p)
{
	struct sigaction sa = {.sa_handler = on_segv};
	sigaction(SIGSEGV, &sa, NULL);
	faulted = 0;
	if (sigsetjmp(jb, 1) == 0)
		*p = 1;
	signal(SIGSEGV, SIG_DFL);
	return faulted;
}

static void *map_page(void *arg)
{
	char **out = arg;
	*out = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*out != MAP_FAILED)
		memcpy(*out, "made", 4);
	return NULL;
}

static void mapping_from_thread_visible(void)
{
	char *p = NULL;
	CHECK_SYS(in_thread(map_page, &p));
	CHECK(p != MAP_FAILED && p != NULL);
	CHECK_MEMEQ(p, "made", 4);
	CHECK_SYS(munmap(p, PG));
}

static void *protect_ro(void *arg)
{
	mprotect(arg, PG, PROT_READ);
	return NULL;
}

static void mprotect_from_thread_applies(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK_EQ(write_faults(p), 0);
	CHECK_SYS(in_thread(protect_ro, p));
	CHECK_EQ(write_faults(p), 1);
	CHECK_SYS(munmap(p, PG));
}

static void *unmap_it(void *arg)
{
	munmap(arg, PG);
	return NULL;
}

static void munmap_from_thread_applies(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	p[0] = 1;
	CHECK_SYS(in_thread(unmap_it, p));
	CHECK_EQ(write_faults(p), 1);
	/* mincore agrees the page is gone. */
	unsigned char v;
	CHECK_ERR(mincore(p, PG, &v), ENOMEM);
}

static void *zap(void *arg)
{
	madvise(arg, PG, MADV_DONTNEED);
	return NULL;
}

static void dontneed_from_thread_zeroes(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	memcpy(p, "data", 4);
	CHECK_SYS(in_thread(zap, p));
	CHECK_EQ(p[0], 0);
	CHECK_SYS(munmap(p, PG));
}

static void *replace_fixed(void *arg)
{
	char *p = arg;
	mmap(p, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	return NULL;
}

static void map_fixed_from_thread_replaces(void)
{
	char *p = CHECK_MAP(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	memcpy(p, "old page", 8);
	CHECK_SYS(in_thread(replace_fixed, p));
	/* A fresh zero page took its place for everyone. */
	CHECK_EQ(p[0], 0);
	CHECK_EQ(write_faults(p), 0);
	CHECK_SYS(munmap(p, PG));
}

struct move {
	char *old, *new_;
};

static void *move_it(void *arg)
{
	struct move *m = arg;
	m->new_ = mremap(m->old, PG, 4 * PG, MREMAP_MAYMOVE);
	return NULL;
}

static void mremap_from_thread_moves(void)
{
	/* Block the space after it so growing must move. */
	char *p = CHECK_MAP(mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	memcpy(p, "moved", 5);
	struct move m = {p, NULL};
	CHECK_SYS(in_thread(move_it, &m));
	CHECK(m.new_ != MAP_FAILED);
	CHECK_MEMEQ(m.new_, "moved", 5);
	if (m.new_ != p)
		CHECK_EQ(write_faults(p), 1);
	CHECK_SYS(munmap(m.new_, 4 * PG));
	munmap(p + PG, PG);
}

static void *grow_brk(void *arg)
{
	unsigned long *b = arg;
	unsigned long cur = (unsigned long)syscall(SYS_brk, 0);
	b[0] = cur;
	b[1] = (unsigned long)syscall(SYS_brk, cur + 2 * PG);
	return NULL;
}

static void brk_is_shared(void)
{
	unsigned long b[2];
	CHECK_SYS(in_thread(grow_brk, b));
	CHECK_EQ(b[1], b[0] + 2 * PG);
	CHECK_EQ((unsigned long)syscall(SYS_brk, 0), b[0] + 2 * PG);
	((volatile char *)b[0])[PG] = 1;
	CHECK_EQ((unsigned long)syscall(SYS_brk, b[0]), b[0]);
}

struct forker {
	int status;
	volatile char *stack_var;
};

static volatile int sleeper_stop;

static void *sleeper(void *arg)
{
	volatile char local[16] = "sleeper-stack";
	*(volatile char **)arg = local;
	while (!sleeper_stop)
		usleep(1000);
	return NULL;
}

static int count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void *fork_here(void *arg)
{
	struct forker *f = arg;
	pid_t pid = fork();
	if (pid == 0) {
		/* Only the forking thread exists in the child... */
		if (count_tasks() != 1)
			_exit(1);
		/* ...yet the other thread's stack is mapped and readable. */
		if (!f->stack_var || strcmp((const char *)f->stack_var, "sleeper-stack") != 0)
			_exit(2);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	f->status = st;
	return NULL;
}

static void fork_from_thread_copies_everything(void)
{
	volatile char *sv = NULL;
	pthread_t s;
	sleeper_stop = 0;
	CHECK_RET0(pthread_create(&s, NULL, sleeper, (void *)&sv));
	while (!sv)
		usleep(1000);
	struct forker f = {0, sv};
	CHECK_SYS(in_thread(fork_here, &f));
	sleeper_stop = 1;
	CHECK_RET0(pthread_join(s, NULL));
	CHECK_EXITED(f.status, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(mapping_from_thread_visible),
	MT_CASE(mprotect_from_thread_applies),
	MT_CASE(munmap_from_thread_applies),
	MT_CASE(dontneed_from_thread_zeroes),
	MT_CASE(map_fixed_from_thread_replaces),
	MT_CASE(mremap_from_thread_moves),
	MT_CASE(brk_is_shared),
	MT_CASE(fork_from_thread_copies_everything),
};

MT_MAIN(cases)
