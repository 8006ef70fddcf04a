//go:build ignore

// This file is C, built by mkvdso.sh with gcc; the constraint above keeps
// the go command from treating it as a cgo source.

// Moat's vDSO: clock_gettime, gettimeofday, time, getcpu and clock_getres
// answered in the application's own address space, without a syscall, from
// parameters the Sentry keeps in the data page ("vvar") mapped right below
// this image. doc.go describes the page and its protocol; vvar.go holds the
// Go mirror of struct vvar_data, which must stay byte-for-byte identical.
//
// Built by mkvdso.sh (go generate). No libc, no relocations, no writable
// data: everything the code touches is either on the stack or in the vvar
// page, reached RIP-relative through the linker-script symbol vvar_page.

#include <stdint.h>

#define NSEC_PER_SEC 1000000000LL

// EXPORT marks the entry points; vdso.map gives them their version.
#define EXPORT __attribute__((visibility("default")))

// Syscall numbers (x86-64) used when the vvar page cannot answer.
#define NR_GETTIMEOFDAY 96
#define NR_TIME 201
#define NR_CLOCK_GETTIME 228
#define NR_CLOCK_GETRES 229

// Clock modes, per clock id (vvar_clock.mode).
#define MODE_SYSCALL 0 // not served here: make the real syscall
#define MODE_FINE 1    // nanosecond clock
#define MODE_COARSE 2  // clock rounded down to coarse_res

#define NCLOCKS 16
#define CLOCK_REALTIME 0

struct vvar_clock {
	int64_t base;      // ns at tsc_base
	uint64_t mult;     // ns per cycle << shift, for the first slew_end cycles
	uint64_t slew_end; // cycles after tsc_base where the slew segment ends
	int64_t base_end;  // ns at tsc_base + slew_end
	uint64_t mult_end; // ns per cycle << shift after the slew segment
	uint32_t mode;     // MODE_*
	uint32_t pad;
};

struct vvar_data {
	uint64_t seq;      // odd while the Sentry writes
	uint64_t tsc_base; // TSC value every clock's curve starts from
	uint32_t shift;    // fixed-point shift of all mult values
	uint32_t pad0;
	uint32_t cpu; // answer of getcpu
	uint32_t node;
	int32_t tz_minuteswest; // answer of gettimeofday's timezone
	int32_t tz_dsttime;
	int64_t coarse_res; // ns, resolution of the coarse clocks
	uint64_t reserved[2];
	struct vvar_clock clocks[NCLOCKS]; // indexed by clock id
};

_Static_assert(sizeof(struct vvar_clock) == 48, "vvar_clock layout");
_Static_assert(__builtin_offsetof(struct vvar_data, clocks) == 64, "vvar_data layout");
_Static_assert(sizeof(struct vvar_data) <= 4096, "vvar_data fits a page");

// vvar_page is defined by vdso.lds as the page just below the image.
extern const struct vvar_data vvar_page __attribute__((visibility("hidden")));

struct kernel_timespec {
	int64_t tv_sec;
	int64_t tv_nsec;
};

struct kernel_timeval {
	int64_t tv_sec;
	int64_t tv_usec;
};

struct kernel_timezone {
	int32_t tz_minuteswest;
	int32_t tz_dsttime;
};

static inline long raw_syscall1(long nr, long a0)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long raw_syscall2(long nr, long a0, long a1)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1)
			 : "rcx", "r11", "memory");
	return ret;
}

// read_tsc reads the time-stamp counter after every earlier instruction has
// completed and before any later one starts, so the reading falls inside the
// seqlock window that surrounds it.
static inline uint64_t read_tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence"
			 : "=a"(lo), "=d"(hi)
			 :
			 : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t scale(uint64_t cycles, uint64_t mult, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)cycles * mult) >> (shift & 127));
}

// read_ns evaluates clock id's curve at the current TSC. It returns 0 when
// the clock is not served from the page (the caller makes the syscall).
// Precondition: id < NCLOCKS.
static inline int read_ns(unsigned id, int64_t *out)
{
	const volatile struct vvar_data *v = &vvar_page;
	const volatile struct vvar_clock *c = &v->clocks[id];
	uint64_t seq, tsc, tsc_base, mult, slew_end, mult_end;
	int64_t base, base_end, res = 0;
	uint32_t shift, mode;

	for (;;) {
		seq = v->seq;
		if (seq & 1) {
			__builtin_ia32_pause();
			continue;
		}
		mode = c->mode;
		if (mode == MODE_SYSCALL)
			return 0;
		tsc_base = v->tsc_base;
		shift = v->shift;
		base = c->base;
		mult = c->mult;
		slew_end = c->slew_end;
		base_end = c->base_end;
		mult_end = c->mult_end;
		if (mode == MODE_COARSE)
			res = v->coarse_res;
		tsc = read_tsc();
		if (v->seq == seq)
			break;
	}

	uint64_t delta = tsc - tsc_base;
	if ((int64_t)delta < 0) // a reading from before the switch point
		delta = 0;
	int64_t ns;
	if (delta < slew_end)
		ns = base + (int64_t)scale(delta, mult, shift);
	else
		ns = base_end + (int64_t)scale(delta - slew_end, mult_end, shift);
	if (mode == MODE_COARSE && res > 0) {
		int64_t rem = ns % res;
		if (rem < 0)
			rem += res;
		ns -= rem;
	}
	*out = ns;
	return 1;
}

static inline void split_ns(int64_t ns, int64_t *sec, int64_t *nsec)
{
	int64_t s = ns / NSEC_PER_SEC, r = ns % NSEC_PER_SEC;
	if (r < 0) {
		r += NSEC_PER_SEC;
		s--;
	}
	*sec = s;
	*nsec = r;
}

EXPORT int __vdso_clock_gettime(int id, struct kernel_timespec *ts)
{
	int64_t ns;
	if ((unsigned)id < NCLOCKS && ts != 0 && read_ns((unsigned)id, &ns)) {
		split_ns(ns, &ts->tv_sec, &ts->tv_nsec);
		return 0;
	}
	return (int)raw_syscall2(NR_CLOCK_GETTIME, id, (long)ts);
}

EXPORT int __vdso_gettimeofday(struct kernel_timeval *tv, struct kernel_timezone *tz)
{
	if (tv != 0) {
		int64_t ns, nsec;
		if (!read_ns(CLOCK_REALTIME, &ns))
			return (int)raw_syscall2(NR_GETTIMEOFDAY, (long)tv, (long)tz);
		split_ns(ns, &tv->tv_sec, &nsec);
		tv->tv_usec = nsec / 1000;
	}
	if (tz != 0) {
		const volatile struct vvar_data *v = &vvar_page;
		tz->tz_minuteswest = v->tz_minuteswest;
		tz->tz_dsttime = v->tz_dsttime;
	}
	return 0;
}

EXPORT long __vdso_time(long *t)
{
	int64_t ns, sec, nsec;
	if (!read_ns(CLOCK_REALTIME, &ns))
		return raw_syscall1(NR_TIME, (long)t);
	split_ns(ns, &sec, &nsec);
	if (t != 0)
		*t = sec;
	return sec;
}

EXPORT long __vdso_getcpu(unsigned *cpu, unsigned *node, void *cache)
{
	const volatile struct vvar_data *v = &vvar_page;
	(void)cache;
	if (cpu != 0)
		*cpu = v->cpu;
	if (node != 0)
		*node = v->node;
	return 0;
}

EXPORT int __vdso_clock_getres(int id, struct kernel_timespec *res)
{
	const volatile struct vvar_data *v = &vvar_page;
	if ((unsigned)id < NCLOCKS) {
		uint32_t mode = v->clocks[id].mode;
		if (mode == MODE_FINE || mode == MODE_COARSE) {
			if (res != 0) {
				int64_t r = mode == MODE_FINE ? 1 : v->coarse_res;
				split_ns(r, &res->tv_sec, &res->tv_nsec);
			}
			return 0;
		}
	}
	return (int)raw_syscall2(NR_CLOCK_GETRES, id, (long)res);
}

EXPORT int clock_gettime(int, struct kernel_timespec *)
	__attribute__((weak, alias("__vdso_clock_gettime")));
EXPORT int gettimeofday(struct kernel_timeval *, struct kernel_timezone *)
	__attribute__((weak, alias("__vdso_gettimeofday")));
EXPORT long time(long *) __attribute__((weak, alias("__vdso_time")));
EXPORT long getcpu(unsigned *, unsigned *, void *)
	__attribute__((weak, alias("__vdso_getcpu")));
EXPORT int clock_getres(int, struct kernel_timespec *)
	__attribute__((weak, alias("__vdso_clock_getres")));
