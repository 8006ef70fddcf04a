//go:build ignore

/* cow_fork: copy-on-write after fork for data, heap, stack, private anon
 * and private file mappings; MAP_SHARED (anon and memfd) visible across
 * fork; fork of a large heap; MADV_DONTFORK / MADV_WIPEONFORK; protections
 * and unmaps staying per process. */
#include "moattest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char data_page[4096] __attribute__((aligned(4096))) = { 'd' };

/* Two pipes for a lock-step parent/child exchange. */
struct sync {
	int to_child[2], to_parent[2];
};

static int sync_init(struct sync *s)
{
	if (pipe(s->to_child) || pipe(s->to_parent))
		return -1;
	return 0;
}

static void sync_signal(int fd)
{
	char c = 'x';
	if (write(fd, &c, 1) != 1)
		_exit(97);
}

static void sync_wait(int fd)
{
	char c;
	if (read(fd, &c, 1) != 1)
		_exit(96);
}

static void data_page_cow(void)
{
	struct sync s;
	CHECK_SYS(sync_init(&s));
	memset(data_page, 'd', sizeof(data_page));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		memset(data_page, 'c', sizeof(data_page));
		sync_signal(s.to_parent[1]);
		sync_wait(s.to_child[0]);
		for (size_t i = 0; i < sizeof(data_page); i++)
			CHILD_CHECK(data_page[i] == 'c');
		_exit(0);
	}
	sync_wait(s.to_parent[0]);
	memset(data_page, 'p', sizeof(data_page));
	sync_signal(s.to_child[1]);
	CHECK_EXITED(mt_wait(pid), 0);
	for (size_t i = 0; i < sizeof(data_page); i++)
		CHECK_EQ(data_page[i], 'p');
}

static void parent_writes_first(void)
{
	struct sync s;
	CHECK_SYS(sync_init(&s));
	memset(data_page, 'o', sizeof(data_page));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sync_wait(s.to_child[0]);
		/* The parent has written by now; we keep the old contents. */
		CHILD_CHECK(data_page[0] == 'o' && data_page[4095] == 'o');
		_exit(0);
	}
	memset(data_page, 'n', sizeof(data_page));
	sync_signal(s.to_child[1]);
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(data_page[0], 'n');
}

static void heap_cow(void)
{
	size_t n = 1 << 20;
	unsigned char *h = malloc(n);
	CHECK(h != NULL);
	for (size_t i = 0; i < n; i++)
		h[i] = (unsigned char)(i * 7);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (size_t i = 0; i < n; i++)
			CHILD_CHECK(h[i] == (unsigned char)(i * 7));
		for (size_t i = 0; i < n; i++)
			h[i] = 0xee;
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	for (size_t i = 0; i < n; i += 4093)
		CHECK_EQ(h[i], (unsigned char)(i * 7));
	free(h);
}

static void stack_cow(void)
{
	volatile int local = 1234;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		local = 5678;
		_exit(local == 5678 ? 0 : 1);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(local, 1234);
}

static void private_anon_cow(void)
{
	size_t len = 16 * 4096;
	int *p = CHECK_MAP(mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	/* Touch half of the pages before fork; the rest stay untouched. */
	for (size_t i = 0; i < len / sizeof(int) / 2; i++)
		p[i] = (int)i;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		for (size_t i = 0; i < len / sizeof(int); i++) {
			int want = i < len / sizeof(int) / 2 ? (int)i : 0;
			CHILD_CHECK(p[i] == want);
			p[i] = -1;
		}
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	for (size_t i = 0; i < len / sizeof(int); i++)
		CHECK_EQ(p[i], i < len / sizeof(int) / 2 ? (int)i : 0);
	munmap(p, len);
}

static void shared_anon_child_to_parent(void)
{
	int *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	p[0] = 1;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(p[0] == 1);
		p[0] = 2;
		p[1000] = 3;
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[0], 2);
	CHECK_EQ(p[1000], 3);
	munmap(p, 4096);
}

static void shared_anon_parent_to_child(void)
{
	struct sync s;
	CHECK_SYS(sync_init(&s));
	volatile int *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		sync_wait(s.to_child[0]);
		_exit(p[5] == 55 ? 0 : 1);
	}
	p[5] = 55;
	sync_signal(s.to_child[1]);
	CHECK_EXITED(mt_wait(pid), 0);
	munmap((void *)p, 4096);
}

static void shared_anon_atomic_counter(void)
{
	long *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	pid_t pids[4];
	for (int k = 0; k < 4; k++) {
		pids[k] = CHECK_SYS(fork());
		if (pids[k] == 0) {
			for (int i = 0; i < 10000; i++)
				__atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST);
			_exit(0);
		}
	}
	for (int k = 0; k < 4; k++)
		CHECK_EXITED(mt_wait(pids[k]), 0);
	CHECK_EQ(*p, 40000);
	munmap(p, 4096);
}

static void memfd_shared_across_fork(void)
{
	int fd = CHECK_SYS(memfd_create("cow", 0));
	CHECK_SYS(ftruncate(fd, 4096));
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		memcpy(p, "from child", 11);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_STREQ(p, "from child");
	char buf[11];
	CHECK_EQ(pread(fd, buf, 11, 0), 11);
	CHECK_STREQ(buf, "from child");
	munmap(p, 4096);
	close(fd);
}

static void memfd_private_mapping_cow(void)
{
	int fd = CHECK_SYS(memfd_create("cowp", 0));
	CHECK_SYS(pwrite(fd, "original", 9, 0));
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	CHECK_STREQ(p, "original");
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		memcpy(p, "childcpy", 9);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_STREQ(p, "original");
	memcpy(p, "parentcp", 9);
	char buf[9];
	CHECK_EQ(pread(fd, buf, 9, 0), 9);
	CHECK_STREQ(buf, "original");
	munmap(p, 4096);
	close(fd);
}

static void file_private_mapping_cow(void)
{
	int fd = CHECK_SYS(open("/etc/passwd", O_RDONLY));
	char first[8];
	CHECK_EQ(pread(fd, first, 8, 0), 8);
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	CHECK_MEMEQ(p, first, 8);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		memset(p, 'X', 8);
		_exit(p[0] == 'X' ? 0 : 1);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_MEMEQ(p, first, 8);
	p[0] = 'Y';
	char again[8];
	CHECK_EQ(pread(fd, again, 8, 0), 8);
	CHECK_MEMEQ(again, first, 8);
	munmap(p, 4096);
	close(fd);
}

static void large_heap_fork(void)
{
	size_t n = 64UL << 20;
	uint64_t *h = malloc(n);
	CHECK(h != NULL);
	size_t words = n / sizeof(uint64_t);
	uint64_t sum = 0;
	for (size_t i = 0; i < words; i++) {
		h[i] = i * 0x9e3779b97f4a7c15ULL;
		sum += h[i];
	}
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		uint64_t s2 = 0;
		for (size_t i = 0; i < words; i++)
			s2 += h[i];
		CHILD_CHECK(s2 == sum);
		/* Dirty one word in every 16th page. */
		for (size_t i = 0; i < words; i += 512 * 16)
			h[i] = 0;
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	uint64_t s3 = 0;
	for (size_t i = 0; i < words; i++)
		s3 += h[i];
	CHECK_EQ(s3, sum);
	free(h);
}

static void fork_chain_generations(void)
{
	static int gen_value = 0;
	gen_value = 0;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		gen_value = 1;
		pid_t gc = fork();
		if (gc == 0) {
			if (gen_value != 1)
				_exit(10);
			gen_value = 2;
			pid_t ggc = fork();
			if (ggc == 0)
				_exit(gen_value == 2 ? 3 : 11);
			int st = mt_wait(ggc);
			_exit(WIFEXITED(st) && WEXITSTATUS(st) == 3 && gen_value == 2 ? 2 : 12);
		}
		int st = mt_wait(gc);
		_exit(WIFEXITED(st) && WEXITSTATUS(st) == 2 && gen_value == 1 ? 1 : 13);
	}
	CHECK_EXITED(mt_wait(pid), 1);
	CHECK_EQ(gen_value, 0);
}

static void many_children_private_copies(void)
{
	memset(data_page, 0, sizeof(data_page));
	pid_t pids[10];
	for (int k = 0; k < 10; k++) {
		pids[k] = CHECK_SYS(fork());
		if (pids[k] == 0) {
			for (int i = 0; i < 100; i++) {
				data_page[i] = (char)k;
				usleep(100);
				if (data_page[i] != (char)k)
					_exit(1);
			}
			_exit(0);
		}
	}
	for (int k = 0; k < 10; k++)
		CHECK_EXITED(mt_wait(pids[k]), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(data_page[i], 0);
}

static void madv_dontfork(void)
{
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	p[0] = 1;
	CHECK_SYS(madvise(p, 4096, MADV_DONTFORK));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		volatile char c = p[0]; /* not mapped in the child */
		(void)c;
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGSEGV);
	CHECK_EQ(p[0], 1);
	munmap(p, 4096);
}

static void madv_wipeonfork(void)
{
	char *p = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	memset(p, 7, 8192);
	CHECK_SYS(madvise(p, 4096, MADV_WIPEONFORK));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(p[0] == 0 && p[4095] == 0);
		CHILD_CHECK(p[4096] == 7);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[0], 7);
	/* WIPEONFORK on a shared mapping is EINVAL. */
	char *s = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	CHECK_ERR(madvise(s, 4096, MADV_WIPEONFORK), EINVAL);
	munmap(s, 4096);
	munmap(p, 8192);
}

static void protection_inherited(void)
{
	char *p = CHECK_MAP(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	p[0] = 9;
	CHECK_SYS(mprotect(p, 4096, PROT_READ));
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		if (p[0] != 9)
			_exit(1);
		p[0] = 10;
		_exit(0);
	}
	CHECK_SIGNALED(mt_wait(pid), SIGSEGV);
	munmap(p, 4096);
}

static void child_unmap_and_mprotect_private(void)
{
	char *p = CHECK_MAP(mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	p[0] = 1;
	p[4096] = 2;
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		munmap(p, 4096);
		mprotect(p + 4096, 4096, PROT_NONE);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(p[0], 1);
	CHECK_EQ(p[4096], 2);
	p[4096] = 3;
	CHECK_EQ(p[4096], 3);
	munmap(p, 8192);
}

static void *fork_from_thread(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		/* One thread in the child: it is the thread group leader. */
		_exit(syscall(SYS_gettid) == getpid() ? 0 : 1);
	}
	int st = mt_wait(pid);
	return (void *)(long)(WIFEXITED(st) ? WEXITSTATUS(st) : 100);
}

static void fork_in_thread(void)
{
	pthread_t th;
	void *r;
	CHECK_RET0(pthread_create(&th, NULL, fork_from_thread, NULL));
	CHECK_RET0(pthread_join(th, &r));
	CHECK_EQ((long)r, 0);
}

static void brk_heap_cow(void)
{
	char *old = sbrk(0);
	CHECK(old != (void *)-1);
	CHECK(sbrk(8192) == old);
	memset(old, 'b', 8192);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		CHILD_CHECK(old[8191] == 'b');
		memset(old, 'c', 8192);
		/* The child's brk moves alone. */
		CHILD_CHECK(sbrk(4096) == old + 8192);
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
	CHECK_EQ(old[0], 'b');
	CHECK(sbrk(0) == old + 8192);
	CHECK(sbrk(-8192) != (void *)-1);
}

static const struct mt_case cases[] = {
	MT_CASE(data_page_cow),
	MT_CASE(parent_writes_first),
	MT_CASE(heap_cow),
	MT_CASE(stack_cow),
	MT_CASE(private_anon_cow),
	MT_CASE(shared_anon_child_to_parent),
	MT_CASE(shared_anon_parent_to_child),
	MT_CASE(shared_anon_atomic_counter),
	MT_CASE(memfd_shared_across_fork),
	MT_CASE(memfd_private_mapping_cow),
	MT_CASE(file_private_mapping_cow),
	MT_CASE(large_heap_fork),
	MT_CASE(fork_chain_generations),
	MT_CASE(many_children_private_copies),
	MT_CASE(madv_dontfork),
	MT_CASE(madv_wipeonfork),
	MT_CASE(protection_inherited),
	MT_CASE(child_unmap_and_mprotect_private),
	MT_CASE(fork_in_thread),
	MT_CASE(brk_heap_cow),
};

MT_MAIN(cases)
