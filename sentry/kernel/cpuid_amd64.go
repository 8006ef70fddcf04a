package kernel

import "sync"

func cpuidEDX1() uint32

// cpuidCount runs CPUID with leaf in EAX and sub in ECX.
func cpuidCount(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xsaveSize is the size of the XSAVE area for the features the host enables
// (CPUID leaf 0xD, sub-leaf 0, EBX): the FP state a signal frame carries.
// 512 (the legacy FXSAVE area) if the CPU has no XSAVE.
func xsaveSize() uint64 {
	if max, _, _, _ := cpuidCount(0, 0); max < 0xd {
		return 512
	}
	_, ebx, _, _ := cpuidCount(0xd, 0)
	if ebx < 512 {
		return 512
	}
	return uint64(ebx)
}

// minSigStackSize is AT_MINSIGSTKSZ: the most stack setupSignalFrame can use
// for one frame (the XSAVE area, FP_XSTATE_MAGIC2, the frame and their
// alignment padding), rounded up to 16.
var minSigStackSize = sync.OnceValue(func() uint64 {
	n := xsaveSize() + 4 + 63 + frameSize + 15 + 8
	return (n + 15) &^ 15
})
