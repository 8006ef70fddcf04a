//go:build ignore

/* vdso: the vDSO is mapped (AT_SYSINFO_EHDR), is a proper ELF image that
 * exports the x86-64 time functions, and those agree with the syscalls. */
#include "moattest.h"

#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*clock_getres_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef long (*getcpu_fn)(unsigned *, unsigned *, void *);

/* vdso_sym looks a symbol up in the vDSO's dynamic symbol table (through
 * its section headers). Returns NULL if absent. */
static void *vdso_sym(const char *name)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	uintptr_t load_vaddr = 0;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			load_vaddr = ph[i].p_vaddr;
			break;
		}
	uintptr_t bias = base - load_vaddr;
	if (eh->e_shoff == 0)
		return NULL;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *syms = (const Elf64_Sym *)(base + sh[i].sh_offset);
		const char *strs = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		for (size_t j = 0; j < n; j++) {
			if (syms[j].st_shndx == SHN_UNDEF)
				continue;
			if (strcmp(strs + syms[j].st_name, name) == 0)
				return (void *)(bias + syms[j].st_value);
		}
	}
	return NULL;
}

static int64_t ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void auxv_sysinfo_ehdr(void)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	CHECK_NE(base, 0);
	CHECK_EQ(base % 4096, 0);
}

static void vdso_is_elf(void)
{
	const unsigned char *p = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	CHECK(p != NULL);
	CHECK_MEMEQ(p, ELFMAG, SELFMAG);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	CHECK_EQ(eh->e_ident[EI_CLASS], ELFCLASS64);
	CHECK_EQ(eh->e_ident[EI_DATA], ELFDATA2LSB);
	CHECK_EQ(eh->e_type, ET_DYN);
	CHECK_EQ(eh->e_machine, EM_X86_64);
	CHECK_GT(eh->e_phnum, 0);
}

static void vdso_in_proc_maps(void)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	char line[512];
	int found = 0;
	char perms[5] = "";
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (strstr(line, "[vdso]") && lo == base) {
			found = 1;
			break;
		}
	}
	fclose(f);
	CHECK_EQ(found, 1);
	CHECK_STREQ(perms, "r-xp");
}

static void vdso_exports_time_functions(void)
{
	static const char *const names[] = {
		"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
		"__vdso_getcpu", "__vdso_clock_getres",
	};
	for (size_t i = 0; i < MT_NCASES(names); i++) {
		void *p = vdso_sym(names[i]);
		if (p == NULL)
			FAIL("vDSO does not export %s", names[i]);
	}
}

static void vdso_clock_gettime_monotonic_agrees(void)
{
	clock_gettime_fn fn = (clock_gettime_fn)vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	for (int i = 0; i < 100; i++) {
		struct timespec a, v, b;
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a));
		CHECK_EQ(fn(CLOCK_MONOTONIC, &v), 0);
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b));
		CHECK_LE(ns(&a), ns(&v));
		CHECK_LE(ns(&v), ns(&b));
	}
}

static void vdso_clock_gettime_realtime_agrees(void)
{
	clock_gettime_fn fn = (clock_gettime_fn)vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	for (int i = 0; i < 100; i++) {
		struct timespec a, v, b;
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_REALTIME, &a));
		CHECK_EQ(fn(CLOCK_REALTIME, &v), 0);
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_REALTIME, &b));
		CHECK_LE(ns(&a), ns(&v));
		CHECK_LE(ns(&v), ns(&b));
	}
}

static void vdso_clock_gettime_other_clocks(void)
{
	clock_gettime_fn fn = (clock_gettime_fn)vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	static const clockid_t clocks[] = {
		CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE,
		CLOCK_REALTIME_COARSE, CLOCK_TAI,
	};
	for (size_t i = 0; i < MT_NCASES(clocks); i++) {
		struct timespec a, v;
		CHECK_SYS(syscall(SYS_clock_gettime, clocks[i], &a));
		CHECK_EQ(fn(clocks[i], &v), 0);
		/* Coarse clocks can be up to a tick apart from each other. */
		CHECK_GE(ns(&v), ns(&a) - 20000000);
		CHECK_LT(ns(&v) - ns(&a), 1000000000LL);
	}
	/* CPU-time clocks fall back to the syscall inside the vDSO. */
	struct timespec t;
	CHECK_EQ(fn(CLOCK_PROCESS_CPUTIME_ID, &t), 0);
	CHECK_GT(ns(&t), 0);
}

static void vdso_invalid_clock(void)
{
	clock_gettime_fn fn = (clock_gettime_fn)vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	struct timespec t;
	/* The vDSO returns the negated errno itself. */
	CHECK_EQ(fn(100, &t), -EINVAL);
}

static void libc_clock_gettime_agrees(void)
{
	for (int i = 0; i < 100; i++) {
		struct timespec a, v, b;
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a));
		CHECK_SYS(clock_gettime(CLOCK_MONOTONIC, &v));
		CHECK_SYS(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b));
		CHECK_LE(ns(&a), ns(&v));
		CHECK_LE(ns(&v), ns(&b));
	}
}

static void vdso_gettimeofday_agrees(void)
{
	gettimeofday_fn fn = (gettimeofday_fn)vdso_sym("__vdso_gettimeofday");
	CHECK(fn != NULL);
	struct timeval a, v, b;
	CHECK_SYS(syscall(SYS_gettimeofday, &a, NULL));
	CHECK_EQ(fn(&v, NULL), 0);
	CHECK_SYS(syscall(SYS_gettimeofday, &b, NULL));
	int64_t ua = a.tv_sec * 1000000LL + a.tv_usec;
	int64_t uv = v.tv_sec * 1000000LL + v.tv_usec;
	int64_t ub = b.tv_sec * 1000000LL + b.tv_usec;
	CHECK_LE(ua, uv);
	CHECK_LE(uv, ub);
}

static void vdso_time_agrees(void)
{
	time_fn fn = (time_fn)vdso_sym("__vdso_time");
	CHECK(fn != NULL);
	time_t a = (time_t)syscall(SYS_time, NULL);
	time_t out = 0;
	time_t v = fn(&out);
	time_t b = (time_t)syscall(SYS_time, NULL);
	CHECK_EQ(v, out);
	CHECK_LE(a, v);
	CHECK_LE(v, b);
}

static void vdso_clock_getres_agrees(void)
{
	clock_getres_fn fn = (clock_getres_fn)vdso_sym("__vdso_clock_getres");
	CHECK(fn != NULL);
	static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE };
	for (size_t i = 0; i < MT_NCASES(clocks); i++) {
		struct timespec a, v;
		CHECK_SYS(syscall(SYS_clock_getres, clocks[i], &a));
		CHECK_EQ(fn(clocks[i], &v), 0);
		CHECK_EQ(ns(&a), ns(&v));
	}
}

static void vdso_getcpu_in_affinity(void)
{
	getcpu_fn fn = (getcpu_fn)vdso_sym("__vdso_getcpu");
	CHECK(fn != NULL);
	cpu_set_t set;
	CHECK_SYS(sched_getaffinity(0, sizeof(set), &set));
	unsigned cpu = 9999, node = 9999;
	CHECK_EQ(fn(&cpu, &node, NULL), 0);
	CHECK_LT(cpu, CPU_SETSIZE);
	CHECK(CPU_ISSET(cpu, &set));
	CHECK_EQ(node, 0);
	unsigned scpu = 9999;
	CHECK_SYS(syscall(SYS_getcpu, &scpu, NULL, NULL));
	CHECK(CPU_ISSET(scpu, &set));
}

static void vdso_monotonic_loop(void)
{
	clock_gettime_fn fn = (clock_gettime_fn)vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	struct timespec prev, cur;
	CHECK_EQ(fn(CLOCK_MONOTONIC, &prev), 0);
	for (int i = 0; i < 100000; i++) {
		CHECK_EQ(fn(CLOCK_MONOTONIC, &cur), 0);
		CHECK_GE(ns(&cur), ns(&prev));
		prev = cur;
	}
}

static void vdso_after_fork(void)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	clock_gettime_fn fn = (clock_gettime_fn)vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		struct timespec a, v;
		CHILD_CHECK(getauxval(AT_SYSINFO_EHDR) == base);
		CHILD_CHECK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a) == 0);
		CHILD_CHECK(fn(CLOCK_MONOTONIC, &v) == 0);
		CHILD_CHECK(ns(&v) >= ns(&a));
		_exit(0);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static void vdso_after_exec(void)
{
	pid_t pid = CHECK_SYS(fork());
	if (pid == 0) {
		char *args[] = { "vdso", "--only", "vdso_clock_gettime_monotonic_agrees", NULL };
		char *env[] = { NULL };
		int devnull = open("/dev/null", 1);
		dup2(devnull, 1);
		execve("/proc/self/exe", args, env);
		_exit(98);
	}
	CHECK_EXITED(mt_wait(pid), 0);
}

static const struct mt_case cases[] = {
	MT_CASE(auxv_sysinfo_ehdr),
	MT_CASE(vdso_is_elf),
	MT_CASE(vdso_in_proc_maps),
	MT_CASE(vdso_exports_time_functions),
	MT_CASE(vdso_clock_gettime_monotonic_agrees),
	MT_CASE(vdso_clock_gettime_realtime_agrees),
	MT_CASE(vdso_clock_gettime_other_clocks),
	MT_CASE(vdso_invalid_clock),
	MT_CASE(libc_clock_gettime_agrees),
	MT_CASE(vdso_gettimeofday_agrees),
	MT_CASE(vdso_time_agrees),
	MT_CASE(vdso_clock_getres_agrees),
	MT_CASE(vdso_getcpu_in_affinity),
	MT_CASE(vdso_monotonic_loop),
	MT_CASE(vdso_after_fork),
	MT_CASE(vdso_after_exec),
};

MT_MAIN(cases)
