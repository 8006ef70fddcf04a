package vdso

// rdtsc reads the time-stamp counter, fenced on both sides (lfence) like
// the vDSO's read_tsc so it orders against the seqlock loads around it.
func rdtsc() uint64

// cpuid executes the CPUID instruction.
func cpuid(leaf, subleaf uint32) (a, b, c, d uint32)

// invariantTSC reports whether the CPU says its TSC runs at a constant rate
// in every power state (CPUID 0x80000007 EDX bit 8), the precondition for
// answering clocks from the TSC.
func invariantTSC() bool {
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if maxExt < 0x80000007 {
		return false
	}
	_, _, _, d := cpuid(0x80000007, 0)
	return d&(1<<8) != 0
}
