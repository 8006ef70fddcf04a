//go:build ignore

/* auxv_stack: the initial process stack as execve lays it out: argc,
 * argv, envp, auxv (AT_PAGESZ, AT_RANDOM, AT_EXECFN, AT_PHDR/AT_PHNUM,
 * AT_ENTRY, ids, ...), 16-byte alignment, string placement, and the
 * /proc/self views of the same (auxv, cmdline, environ). */
#include "moattest.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
extern const ElfW(Ehdr) __ehdr_start;
extern void _start(void);

static int g_argc;
static char **g_argv;
static char **g_envp;

static const Elf64_auxv_t *auxv_start(void)
{
	char **p = g_envp;
	while (*p)
		p++;
	return (const Elf64_auxv_t *)(p + 1);
}

static int auxv_find(unsigned long type, unsigned long *val)
{
	for (const Elf64_auxv_t *a = auxv_start(); a->a_type != AT_NULL; a++) {
		if (a->a_type == type) {
			*val = a->a_un.a_val;
			return 1;
		}
	}
	return 0;
}

static void at_pagesz(void)
{
	CHECK_EQ(getauxval(AT_PAGESZ), 4096);
	CHECK_EQ(sysconf(_SC_PAGESIZE), 4096);
}

static void at_random_16_bytes(void)
{
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
	CHECK(r != NULL);
	int nonzero = 0;
	for (int i = 0; i < 16; i++)
		nonzero += r[i] != 0;
	CHECK_GT(nonzero, 0);
	/* It lives on the stack, above argv. */
	CHECK_GT((uintptr_t)r, (uintptr_t)g_argv);
}

static void at_execfn_string(void)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	CHECK(fn != NULL);
	CHECK_STREQ(fn, g_argv[0]);
	char self[4096];
	ssize_t n = CHECK_SYS(readlink("/proc/self/exe", self, sizeof(self) - 1));
	self[n] = 0;
	char *real = realpath(fn, NULL);
	CHECK(real != NULL);
	CHECK_STREQ(real, self);
	free(real);
}

static void at_phdr_phnum_consistent(void)
{
	uintptr_t phdr = getauxval(AT_PHDR);
	CHECK_EQ(phdr, (uintptr_t)&__ehdr_start + __ehdr_start.e_phoff);
	CHECK_EQ(getauxval(AT_PHNUM), __ehdr_start.e_phnum);
	CHECK_EQ(getauxval(AT_PHENT), sizeof(Elf64_Phdr));
	/* The headers are mapped, and one PT_LOAD covers them. */
	const Elf64_Phdr *ph = (const Elf64_Phdr *)phdr;
	int covered = 0;
	uintptr_t bias = (uintptr_t)&__ehdr_start;
	for (unsigned i = 0; i < getauxval(AT_PHNUM); i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		uintptr_t lo = ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
		if (__ehdr_start.e_type == ET_DYN) {
			lo += bias;
			hi += bias;
		}
		if (phdr >= lo && phdr < hi)
			covered = 1;
	}
	CHECK_EQ(covered, 1);
}

static void at_entry_is_start(void)
{
	CHECK_EQ(getauxval(AT_ENTRY), (uintptr_t)_start);
}

static void at_ids_match(void)
{
	CHECK_EQ(getauxval(AT_UID), getuid());
	CHECK_EQ(getauxval(AT_EUID), geteuid());
	CHECK_EQ(getauxval(AT_GID), getgid());
	CHECK_EQ(getauxval(AT_EGID), getegid());
	CHECK_EQ(getauxval(AT_SECURE), 0);
}

static void at_misc_values(void)
{
	CHECK_EQ(getauxval(AT_CLKTCK), 100);
	CHECK_NE(getauxval(AT_HWCAP), 0);
	const char *plat = (const char *)getauxval(AT_PLATFORM);
	CHECK(plat != NULL);
	CHECK_STREQ(plat, "x86_64");
	/* Static binary: no interpreter. */
	CHECK_EQ(getauxval(AT_BASE), 0);
	CHECK_EQ(getauxval(AT_FLAGS), 0);
	CHECK_NE(getauxval(AT_SYSINFO_EHDR), 0);
}

static void at_minsigstksz(void)
{
	unsigned long v;
	if (!auxv_find(AT_MINSIGSTKSZ, &v))
		FAIL("no AT_MINSIGSTKSZ entry");
	CHECK_GE(v, 1024);
	CHECK_LE(v, 65536);
}

static void auxv_entries_unique_and_terminated(void)
{
	int n = 0;
	int seen[64] = { 0 };
	const Elf64_auxv_t *a = auxv_start();
	for (; a->a_type != AT_NULL; a++) {
		n++;
		CHECK_LT(n, 64);
		if (a->a_type < 64) {
			CHECK_EQ(seen[a->a_type], 0);
			seen[a->a_type] = 1;
		}
	}
	CHECK_GE(n, 15);
	CHECK_EQ(a->a_un.a_val, 0);
}

static void stack_layout_argc_argv_envp(void)
{
	/* Static glibc passes main the pointers of the initial stack. */
	long *sp = (long *)g_argv - 1;
	CHECK_EQ(*sp, g_argc);
	CHECK(g_argv[g_argc] == NULL);
	CHECK(g_envp == g_argv + g_argc + 1);
	CHECK(environ == g_envp);
}

static void stack_pointer_aligned_at_entry(void)
{
	uintptr_t sp = (uintptr_t)((long *)g_argv - 1);
	CHECK_EQ(sp % 16, 0);
}

static void strings_above_vectors(void)
{
	/* argv strings, then environment strings, then the exec file name,
	 * all above the auxv, in that order. */
	const Elf64_auxv_t *a = auxv_start();
	while (a->a_type != AT_NULL)
		a++;
	CHECK_GT((uintptr_t)g_argv[0], (uintptr_t)a);
	for (int i = 1; i < g_argc; i++)
		CHECK_GT((uintptr_t)g_argv[i], (uintptr_t)g_argv[i - 1]);
	char *last = g_argv[g_argc - 1];
	CHECK_EQ((uintptr_t)g_argv[g_argc - 1] + strlen(last) + 1,
		 (uintptr_t)(g_envp[0] ? g_envp[0] : last + strlen(last) + 1));
	const char *fn = (const char *)getauxval(AT_EXECFN);
	int n = 0;
	while (g_envp[n])
		n++;
	if (n > 0)
		CHECK_GT((uintptr_t)fn, (uintptr_t)g_envp[n - 1]);
}

static void proc_self_auxv_matches(void)
{
	int fd = CHECK_SYS(open("/proc/self/auxv", O_RDONLY));
	Elf64_auxv_t buf[64];
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf)));
	close(fd);
	CHECK_EQ(n % sizeof(Elf64_auxv_t), 0);
	const Elf64_auxv_t *a = auxv_start();
	size_t count = 0;
	while (a[count].a_type != AT_NULL)
		count++;
	CHECK_EQ((size_t)n / sizeof(Elf64_auxv_t), count + 1);
	CHECK_MEMEQ(buf, a, (size_t)n);
}

static void proc_self_cmdline_matches(void)
{
	int fd = CHECK_SYS(open("/proc/self/cmdline", O_RDONLY));
	char buf[8192];
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf)));
	close(fd);
	size_t off = 0;
	for (int i = 0; i < g_argc; i++) {
		size_t l = strlen(g_argv[i]) + 1;
		CHECK_LE(off + l, (size_t)n);
		CHECK_MEMEQ(buf + off, g_argv[i], l);
		off += l;
	}
	CHECK_EQ(off, (size_t)n);
}

static void proc_self_environ_matches(void)
{
	int fd = CHECK_SYS(open("/proc/self/environ", O_RDONLY));
	static char buf[65536];
	ssize_t n = CHECK_SYS(read(fd, buf, sizeof(buf)));
	close(fd);
	size_t off = 0;
	for (char **e = g_envp; *e; e++) {
		size_t l = strlen(*e) + 1;
		CHECK_LE(off + l, (size_t)n);
		CHECK_MEMEQ(buf + off, *e, l);
		off += l;
	}
	CHECK_EQ(off, (size_t)n);
}

static void stack_in_proc_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	char line[512];
	int found = 0;
	uintptr_t sp = (uintptr_t)g_argv;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (sp >= lo && sp < hi && strstr(line, "[stack]"))
			found = 1;
	}
	fclose(f);
	CHECK_EQ(found, 1);
}

static int deep(int n)
{
	volatile char buf[4096];
	buf[0] = (char)n;
	if (n == 0)
		return buf[0];
	return deep(n - 1) + buf[0];
}

static void stack_grows_on_demand(void)
{
	/* 2 MiB of frames: well past what exec mapped initially. */
	int want = 0;
	for (int n = 0; n <= 512; n++)
		want += (char)n;
	CHECK_EQ(deep(512), want);
	struct rlimit rl;
	CHECK_SYS(getrlimit(RLIMIT_STACK, &rl));
	CHECK_GE(rl.rlim_cur, 4UL << 20);
}

static void exec_many_args(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		static char *args[1003];
		static char bufs[1000][8];
		args[0] = "auxv_stack";
		args[1] = "count-args";
		for (int i = 0; i < 1000; i++) {
			snprintf(bufs[i], sizeof(bufs[i]), "a%d", i);
			args[2 + i] = bufs[i];
		}
		args[1002] = NULL;
		char *env[] = { "A=1", "B=2", NULL };
		execve("/proc/self/exe", args, env);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static int count_args_child(int argc, char **argv, char **envp)
{
	if (argc != 1002)
		return 1;
	for (int i = 0; i < 1000; i++) {
		char want[8];
		snprintf(want, sizeof(want), "a%d", i);
		if (strcmp(argv[2 + i], want))
			return 2;
	}
	if (!envp[0] || strcmp(envp[0], "A=1") || !envp[1] || strcmp(envp[1], "B=2") || envp[2])
		return 3;
	if ((uintptr_t)((long *)argv - 1) % 16)
		return 4;
	return 0;
}

static void exec_empty_env(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "auxv_stack", "check-empty-env", NULL };
		char *env[] = { NULL };
		execve("/proc/self/exe", args, env);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(at_pagesz),
	MT_CASE(at_random_16_bytes),
	MT_CASE(at_execfn_string),
	MT_CASE(at_phdr_phnum_consistent),
	MT_CASE(at_entry_is_start),
	MT_CASE(at_ids_match),
	MT_CASE(at_misc_values),
	MT_CASE(at_minsigstksz),
	MT_CASE(auxv_entries_unique_and_terminated),
	MT_CASE(stack_layout_argc_argv_envp),
	MT_CASE(stack_pointer_aligned_at_entry),
	MT_CASE(strings_above_vectors),
	MT_CASE(proc_self_auxv_matches),
	MT_CASE(proc_self_cmdline_matches),
	MT_CASE(proc_self_environ_matches),
	MT_CASE(stack_in_proc_maps),
	MT_CASE(stack_grows_on_demand),
	MT_CASE(exec_many_args),
	MT_CASE(exec_empty_env),
};

int main(int argc, char **argv, char **envp)
{
	g_argc = argc;
	g_argv = argv;
	g_envp = envp;
	if (argc >= 2 && strcmp(argv[1], "count-args") == 0)
		return count_args_child(argc, argv, envp);
	if (argc == 2 && strcmp(argv[1], "check-empty-env") == 0)
		return envp[0] == NULL && environ == envp ? 0 : 1;
	return mt_main(argc, argv, cases, MT_NCASES(cases));
}
