package ptrace

import "golang.org/x/sys/unix"

// currentCPU returns the CPU the calling thread runs on, as getcpu(2) would,
// without a system call (see cpu_amd64.s). The answer may be stale by the
// time it is used; callers treat it as a hint.
func currentCPU() uint32

// follow binds t to the CPU its tracer, the calling thread, runs on. A
// PTRACE_SYSEMU round trip is a wake-up each way between tracer and tracee;
// on this kind of (virtual) machine a wake-up that crosses CPUs costs about
// as much as the rest of the round trip, and the scheduler wakes a tracer on
// the tracee's CPU when it can. So the stub thread follows its tracer: the
// tracer stays free to move, and the kernel balances tracers as it balances
// any thread.
func (t *thread) follow() {
	cpu := int32(currentCPU())
	if cpu == t.cpu {
		return
	}
	t.cpu = cpu
	var set unix.CPUSet
	set.Set(int(cpu))
	// Failure (a cpuset that excludes the CPU, say) only costs speed.
	_ = unix.SchedSetaffinity(int(t.tid), &set)
}
