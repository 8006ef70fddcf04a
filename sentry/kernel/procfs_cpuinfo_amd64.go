package kernel

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file builds /proc/cpuinfo from CPUID. On the ptrace platform
// applications run CPUID natively, so the features /proc shows are the
// ones they see.

// cpuidReg names a CPUID output register.
type cpuidReg int

const (
	regEAX cpuidReg = iota
	regEBX
	regECX
	regEDX
)

// featureWord is one CPUID register whose bits are flags, with Linux's
// names by bit ("" for bits Linux does not show).
type featureWord struct {
	leaf, sub uint32
	reg       cpuidReg
	names     map[uint]string
}

// featureWords are in the order Linux prints them. The table (a dozen
// maps) is built on first use, by /proc/cpuinfo's first reader, not when
// the package is initialised in every runsc process.
var featureWords = sync.OnceValue(func() []featureWord {
	return []featureWord{
		{1, 0, regEDX, map[uint]string{0: "fpu", 1: "vme", 2: "de", 3: "pse", 4: "tsc", 5: "msr", 6: "pae", 7: "mce", 8: "cx8",
			9: "apic", 11: "sep", 12: "mtrr", 13: "pge", 14: "mca", 15: "cmov", 16: "pat", 17: "pse36", 18: "pn", 19: "clflush",
			21: "dts", 22: "acpi", 23: "mmx", 24: "fxsr", 25: "sse", 26: "sse2", 27: "ss", 28: "ht", 29: "tm", 30: "ia64", 31: "pbe"}},
		{0x80000001, 0, regEDX, map[uint]string{11: "syscall", 19: "mp", 20: "nx", 22: "mmxext", 25: "fxsr_opt", 26: "pdpe1gb",
			27: "rdtscp", 29: "lm", 30: "3dnowext", 31: "3dnow"}},
		{0x80000007, 0, regEDX, map[uint]string{8: "constant_tsc nonstop_tsc"}},
		{1, 0, regECX, map[uint]string{0: "pni", 1: "pclmulqdq", 2: "dtes64", 3: "monitor", 4: "ds_cpl", 5: "vmx", 6: "smx", 7: "est",
			8: "tm2", 9: "ssse3", 10: "cid", 11: "sdbg", 12: "fma", 13: "cx16", 14: "xtpr", 15: "pdcm", 17: "pcid", 18: "dca",
			19: "sse4_1", 20: "sse4_2", 21: "x2apic", 22: "movbe", 23: "popcnt", 24: "tsc_deadline_timer", 25: "aes", 26: "xsave",
			28: "avx", 29: "f16c", 30: "rdrand", 31: "hypervisor"}},
		{0x80000001, 0, regECX, map[uint]string{0: "lahf_lm", 1: "cmp_legacy", 2: "svm", 3: "extapic", 4: "cr8_legacy", 5: "abm",
			6: "sse4a", 7: "misalignsse", 8: "3dnowprefetch", 9: "osvw", 10: "ibs", 11: "xop", 12: "skinit", 13: "wdt", 15: "lwp",
			16: "fma4", 17: "tce", 19: "nodeid_msr", 21: "tbm", 22: "topoext", 23: "perfctr_core", 24: "perfctr_nb", 26: "bpext",
			27: "ptsc", 28: "perfctr_llc", 29: "mwaitx"}},
		{7, 0, regEBX, map[uint]string{0: "fsgsbase", 1: "tsc_adjust", 2: "sgx", 3: "bmi1", 4: "hle", 5: "avx2", 7: "smep", 8: "bmi2",
			9: "erms", 10: "invpcid", 11: "rtm", 12: "cqm", 14: "mpx", 15: "rdt_a", 16: "avx512f", 17: "avx512dq", 18: "rdseed",
			19: "adx", 20: "smap", 21: "avx512ifma", 23: "clflushopt", 24: "clwb", 25: "intel_pt", 26: "avx512pf", 27: "avx512er",
			28: "avx512cd", 29: "sha_ni", 30: "avx512bw", 31: "avx512vl"}},
		{0xd, 1, regEAX, map[uint]string{0: "xsaveopt", 1: "xsavec", 2: "xgetbv1", 3: "xsaves"}},
		{7, 1, regEAX, map[uint]string{4: "avx_vnni", 5: "avx512_bf16"}},
		{0x80000008, 0, regEBX, map[uint]string{0: "clzero", 1: "irperf", 2: "xsaveerptr", 9: "wbnoinvd"}},
		{6, 0, regEAX, map[uint]string{2: "arat"}},
		{7, 0, regECX, map[uint]string{1: "avx512vbmi", 2: "umip", 3: "pku", 4: "ospke", 5: "waitpkg", 6: "avx512_vbmi2", 8: "gfni",
			9: "vaes", 10: "vpclmulqdq", 11: "avx512_vnni", 12: "avx512_bitalg", 13: "tme", 14: "avx512_vpopcntdq", 16: "la57",
			22: "rdpid", 24: "bus_lock_detect", 25: "cldemote", 27: "movdiri", 28: "movdir64b", 29: "enqcmd", 30: "sgx_lc"}},
		{7, 0, regEDX, map[uint]string{2: "avx512_4vnniw", 3: "avx512_4fmaps", 4: "fsrm", 8: "avx512_vp2intersect", 10: "md_clear",
			14: "serialize", 16: "tsxldtrk", 18: "pconfig", 19: "arch_lbr", 20: "ibt", 22: "amx_bf16", 23: "avx512_fp16",
			24: "amx_tile", 25: "amx_int8", 28: "flush_l1d", 29: "arch_capabilities"}},
	}
})

// cpuidRegs returns the four registers of leaf/sub, or zeros if the CPU
// does not have the leaf.
func cpuidRegs(leaf, sub uint32) [4]uint32 {
	maxLeaf, _, _, _ := cpuidCount(leaf&0x80000000, 0)
	if leaf > maxLeaf {
		return [4]uint32{}
	}
	a, b, c, d := cpuidCount(leaf, sub)
	return [4]uint32{a, b, c, d}
}

func cpuFlags() string {
	var flags []string
	for _, w := range featureWords() {
		v := cpuidRegs(w.leaf, w.sub)[w.reg]
		for bit := uint(0); bit < 32; bit++ {
			if v&(1<<bit) != 0 && w.names[bit] != "" {
				flags = append(flags, w.names[bit])
			}
		}
		if w.leaf == 0x80000007 {
			flags = append(flags, "cpuid")
		}
	}
	return strings.Join(flags, " ")
}

// regString is the bytes of registers as a string, NULs and surrounding
// blanks dropped.
func regString(regs ...uint32) string {
	b := make([]byte, 0, 4*len(regs))
	for _, r := range regs {
		b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	return strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
}

// procRDTSC reads the time stamp counter.
func procRDTSC() uint64

// measureMHz estimates the TSC's rate over 20 ms of wall time.
func measureMHz() float64 {
	t0, c0 := time.Now(), procRDTSC()
	time.Sleep(20 * time.Millisecond)
	t1, c1 := time.Now(), procRDTSC()
	us := t1.Sub(t0).Microseconds()
	if us <= 0 || c1 <= c0 {
		return 0
	}
	return float64(c1-c0) / float64(us)
}

// cpuMHz is the nominal frequency: CPUID leaf 0x16, the hypervisor's
// timing leaf, the brand string's "@ x.yzGHz", or else the invariant
// TSC's measured rate; 0 if none says.
func cpuMHz(brand string) float64 {
	if r := cpuidRegs(0x16, 0); r[0] != 0 {
		return float64(r[0])
	}
	if cpuidRegs(1, 0)[2]&(1<<31) != 0 {
		if a, _, _, _ := cpuidCount(0x40000000, 0); a >= 0x40000010 {
			if khz, _, _, _ := cpuidCount(0x40000010, 0); khz != 0 {
				return float64(khz) / 1000
			}
		}
	}
	if i := strings.LastIndex(brand, "@ "); i >= 0 {
		s := strings.TrimSpace(brand[i+2:])
		mult := 1.0
		switch {
		case strings.HasSuffix(s, "GHz"):
			s, mult = strings.TrimSuffix(s, "GHz"), 1000
		case strings.HasSuffix(s, "MHz"):
			s = strings.TrimSuffix(s, "MHz")
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f * mult
		}
	}
	if cpuidRegs(0x80000007, 0)[3]&(1<<8) != 0 {
		return measureMHz()
	}
	return 0
}

// cacheKB is the size Linux shows as "cache size": AMD's L2, else the
// largest cache CPUID leaf 4 describes.
func cacheKB(vendor string) uint32 {
	if vendor == "AuthenticAMD" || vendor == "HygonGenuine" {
		return cpuidRegs(0x80000006, 0)[2] >> 16
	}
	var best uint32
	for sub := uint32(0); sub < 16; sub++ {
		r := cpuidRegs(4, sub)
		if r[0]&0x1f == 0 {
			break
		}
		ways, parts, line, sets := r[1]>>22+1, (r[1]>>12)&0x3ff+1, r[1]&0xfff+1, r[2]+1
		best = max(best, ways*parts*line*sets/1024)
	}
	return best
}

// cpuInfoText is /proc/cpuinfo for ncpu CPUs, built once.
var cpuInfoText = sync.OnceValue(func() string { return buildCPUInfo(NumCPUs()) })

func buildCPUInfo(ncpu int) string {
	l0 := cpuidRegs(0, 0)
	vendor := regString(l0[1], l0[3], l0[2])
	sig := cpuidRegs(1, 0)
	family := sig[0] >> 8 & 0xf
	model := sig[0] >> 4 & 0xf
	if family == 0xf {
		family += sig[0] >> 20 & 0xff
	}
	if family == 6 || family >= 0xf {
		model += (sig[0] >> 16 & 0xf) << 4
	}
	var brandRegs []uint32
	for leaf := uint32(0x80000002); leaf <= 0x80000004; leaf++ {
		r := cpuidRegs(leaf, 0)
		brandRegs = append(brandRegs, r[:]...)
	}
	brand := regString(brandRegs...)
	mhz := cpuMHz(brand)
	addr := cpuidRegs(0x80000008, 0)[0]
	flags := cpuFlags()
	clflush := (sig[1] >> 8 & 0xff) * 8
	var b strings.Builder
	for i := 0; i < ncpu; i++ {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\nmodel name\t: %s\nstepping\t: %d\n",
			i, vendor, family, model, brand, sig[0]&0xf)
		fmt.Fprintf(&b, "cpu MHz\t\t: %.3f\ncache size\t: %d KB\nphysical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n",
			mhz, cacheKB(vendor), ncpu, i, ncpu)
		fmt.Fprintf(&b, "apicid\t\t: %d\ninitial apicid\t: %d\nfpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: %d\nwp\t\t: yes\n",
			i, i, l0[0])
		fmt.Fprintf(&b, "flags\t\t: %s\nbugs\t\t:\nbogomips\t: %.2f\nclflush size\t: %d\ncache_alignment\t: %d\n",
			flags, 2*mhz, clflush, max(clflush, 64))
		fmt.Fprintf(&b, "address sizes\t: %d bits physical, %d bits virtual\npower management:\n\n", addr&0xff, addr>>8&0xff)
	}
	return b.String()
}
