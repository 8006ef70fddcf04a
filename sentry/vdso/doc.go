// Package vdso is Moat's own vDSO: the ELF image the Sentry maps into every
// address space (the one AT_SYSINFO_EHDR names) and the time keeper, Clock,
// that feeds it. A trapped syscall costs a full ptrace round trip (about
// 11 us); through the vDSO, clock_gettime, gettimeofday, time, getcpu and
// clock_getres cost a few dozen nanoseconds and never leave the
// application.
//
// It owns: Image (the embedded vdso.so, padded to pages), VVarSize, the
// layout of the data page, SymbolOffset, and Clock (NewClock, Update, Now,
// Resolution, SetCPU, UsesTSC). Locks: Clock.mu only, which serialises the
// writers (Update, SetCPU) and UsesTSC; Now takes no lock.
//
// # The mapping
//
// In every address space the Sentry maps, read-only, one data page (the
// "vvar" page, VVarSize bytes) and right above it the image (read+execute,
// len(Image) bytes; AT_SYSINFO_EHDR is the image's first byte):
//
//	vvar page      [base-4096, base)   written by the Sentry, read by the vDSO
//	vdso.so        [base, base+len)    ELF headers, dynamic tables, text
//
// The image has a single PT_LOAD at file offset 0 and address 0, no
// relocations, no writable data, no GOT: it is position-independent code
// that reaches the page RIP-relative through vvar_page, a symbol vdso.lds
// defines 4096 bytes below the image. All address spaces should map the
// same page of the memory file, shared (never copied on fork or write), so
// one Update serves every process. The image pages can be shared the same
// way or copied per address space; nothing ever writes them. The
// page must stay read-only for the application (mprotect must not make it
// writable); if an application ever got a private copy it could only fool
// itself, since Clock.Now reads the Sentry's own copy of the parameters.
//
// The image exports __vdso_clock_gettime, __vdso_gettimeofday, __vdso_time,
// __vdso_getcpu and __vdso_clock_getres, and weak aliases clock_gettime,
// gettimeofday, time, getcpu and clock_getres, all with symbol version
// LINUX_2.6, with both DT_HASH and DT_GNU_HASH tables, an .eh_frame and
// SONAME linux-vdso.so.1: what glibc, musl and the Go runtime look up.
// Functions return 0 or a negated errno, like the kernel's vDSO.
//
// # The data page
//
// The page starts with struct vvar_data (vdso.c), mirrored by vvarData
// (vvar.go); both sides check the layout at compile time. Little-endian:
//
//	off  size  field
//	0    8     seq        seqlock sequence: odd while the Sentry writes
//	8    8     tsc_base   TSC value at the switch point of every curve
//	16   4     shift      fixed-point shift of the mults (32)
//	20   4     -
//	24   4     cpu        what getcpu answers
//	28   4     node
//	32   4     tz_minuteswest  what gettimeofday reports as timezone
//	36   4     tz_dsttime
//	40   8     coarse_res resolution of the *_COARSE clocks in ns (the tick)
//	48   16    -
//	64   768   clocks[16], indexed by clock id, 48 bytes each:
//	             0  base      int64  ns at tsc_base
//	             8  mult      uint64 ns per cycle << shift, first segment
//	            16  slew_end  uint64 cycles after tsc_base the segment ends
//	            24  base_end  int64  ns at tsc_base + slew_end
//	            32  mult_end  uint64 ns per cycle << shift, afterwards
//	            40  mode      uint32 0 syscall, 1 fine, 2 coarse
//
// A clock is a continuous, non-decreasing, piecewise-linear function of the
// TSC. With delta = tsc - tsc_base (taken as 0 if negative, i.e. a counter
// read before the switch point):
//
//	delta <  slew_end: ns = base     + (delta*mult) >> shift
//	delta >= slew_end: ns = base_end + ((delta-slew_end)*mult_end) >> shift
//
// computed with a 128-bit product, so any delta is safe. The first segment
// slews the clock towards the host's; the second runs at the estimated
// rate, so a Sentry that stops updating leaves the clocks running at the
// right speed rather than drifting off. A coarse clock is its fine clock's
// curve rounded down to a multiple of coarse_res (so never ahead of the
// fine clock and never behind by a tick or more). Mode 0 (also the state
// of an all-zero, never written page) makes the vDSO issue the real
// syscall instruction, which the Sentry traps and serves.
//
// # Seqlock protocol
//
// Writer (only Clock.Update, holding Clock.mu): make seq odd (an atomic
// store, an xchg on amd64, so nothing later passes it); read the TSC into
// t1, the new switch point; compute each clock's new curve so that it
// starts at the old curve's value at t1; store every field with atomic
// 64/32-bit stores; make seq even again (seq+1). Readers (the vDSO's
// read_ns, and vvarData.read which Clock.Now uses): load seq, retry
// (pausing) while it is odd; copy the fields; read the TSC between lfences;
// load seq again and retry if it changed; then evaluate the copy. Because
// t1 is read inside the write section, every reader that used the old
// curves read its TSC before t1 and every reader of the new curves after
// t1; as the new curves start where the old ones were at t1 and never
// decrease, no clock goes back across an update, for the vDSO and Now
// alike (they read the same parameters: Now's copy and the page are
// written in the same write section).
//
// # Following the host
//
// The Sentry's clocks follow the host's, read by the Sentry's own host
// syscalls and host vDSO (never on behalf of an application):
//
//   - NewClock checks CPUID for an invariant TSC and pairs the TSC with
//     the host's CLOCK_MONOTONIC; the first Update pairs them again, at
//     least 4 ms later (sleeping out the rest), and takes the slope
//     between as the rate (within a few ppm on these machines; a
//     caller that makes the clock early waits for none of it). Until
//     then, and for good without an invariant TSC, the Clock answers
//     every reading from the host and publishes mode 0 for every clock
//     (the vDSO then always traps).
//   - Two clocks are tracked independently: MONOTONIC (paired with the
//     TSC through the host vDSO) and MONOTONIC_RAW (through a syscall,
//     tightest of three pairings). Each Update refines the rate from up
//     to 8 s of history (a reading far off the prediction, a jump of the
//     host clock, restarts the history so it cannot skew the rate) and
//     sets a slew segment that cancels the
//     remaining error over four update intervals (100 ms to 2 s), at most
//     500 ppm off the rate. A clock more than 1 ms behind the host (a
//     paused VM) jumps forward; one ahead of it only slows down.
//   - REALTIME, BOOTTIME and TAI are MONOTONIC plus offsets that the
//     kernel only changes in steps: REALTIME-MONOTONIC when the host
//     clock is set (a change above 1 us; smaller ones are measurement
//     noise), BOOTTIME-MONOTONIC when the host suspends (only grows),
//     TAI-REALTIME in whole seconds. So they stay exactly parallel to
//     MONOTONIC, and REALTIME and TAI jump (back too) when the host's do.
//   - The *_COARSE clocks round their fine clock down to the host's
//     coarse resolution (clock_getres of CLOCK_MONOTONIC_COARSE).
//
// The Sentry calls Update about every 50 ms with the shared page. Clock.Now
// serves trapped clock_gettime calls for REALTIME, MONOTONIC, MONOTONIC_RAW,
// the coarse clocks, BOOTTIME, TAI and the two alarm clocks (read as their
// base clock), with exactly the vDSO's arithmetic. CPU-time clocks and
// negative (per-process/thread) clock ids fall back to the syscall in the
// vDSO and are the kernel's business (Now returns EINVAL for them).
//
// getcpu answers the cpu and node fields (0 and 0 unless SetCPU says
// otherwise; there is one page for all tasks, so this cannot be per task).
// gettimeofday reports a zero timezone, as Linux does unless settimeofday
// set one. time returns REALTIME's seconds.
//
// # Limits
//
// The TSC must be synchronised across CPUs (true on these kvm-clock hosts:
// constant, nonstop and tsc_known_freq); a reading on a CPU whose counter
// lags the writer's by d cycles can be up to d cycles' worth behind a
// reading made just before an update on the writer's CPU. If the TSC jumps
// back (a restored snapshot), clocks stand still at the last switch point
// until the next Update, which then steps them forward to the host's time.
// A page that misses updates (Update called with different pages in turn)
// is not guaranteed monotonic across them: use one page.
//
// # Building
//
// vdso.c, vdso.lds and vdso.map are built into vdso.so by mkvdso.sh
// (`go generate ./sentry/vdso`, gcc only), and vdso.so is committed and
// embedded so `go build` needs no C compiler. TestImageUpToDate rebuilds it
// when the same gcc is present and fails if the committed file is stale.
// vdso.c carries a `//go:build ignore` line so the go command does not
// take it for a cgo source.
package vdso
