// Package sys is a minimal, read-only sysfs: what language runtimes read
// at start-up to size themselves. It has the CPU list and topology
// (devices/system/cpu), one NUMA node (devices/system/node), an empty
// cgroup mount point (fs/cgroup) and the transparent huge page settings
// (kernel/mm/transparent_hugepage). Every value describes the sandbox.
// The tree is built once; no locks of its own.
package sys

import (
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// SysfsMagic is statfs's f_type for sysfs (SYSFS_MAGIC).
const SysfsMagic = 0x62656572

// cpuList formats CPUs first..last as Linux's cpulist ("0", "0-3").
func cpuList(first, last int) string {
	if first == last {
		return fmt.Sprintf("%d\n", first)
	}
	return fmt.Sprintf("%d-%d\n", first, last)
}

// cpuMask formats a set of CPUs as Linux's hexadecimal cpumask ("%*pb"):
// 32-bit chunks, most significant first, comma separated; the first chunk
// as wide as the bits left over, the others 8 digits.
func cpuMask(ncpu int, cpus ...int) string {
	words := make([]uint32, (ncpu+31)/32)
	for _, c := range cpus {
		words[c/32] |= 1 << (c % 32)
	}
	firstWidth := ((ncpu-1)%32 + 1 + 3) / 4
	parts := make([]string, 0, len(words))
	for i := len(words) - 1; i >= 0; i-- {
		w := 8
		if i == len(words)-1 {
			w = firstWidth
		}
		parts = append(parts, fmt.Sprintf("%0*x", w, words[i]))
	}
	return strings.Join(parts, ",") + "\n"
}

func file(s string) *synth.File { return synth.NewStaticFile(0o444, []byte(s)) }

// cpuDir is devices/system/cpu/cpuN: each CPU a core of its own in one
// package, as the sandbox shows them.
func cpuDir(n, ncpu int) fs.Node {
	all := make([]int, ncpu)
	for i := range all {
		all[i] = i
	}
	topo := map[string]fs.Node{
		"core_id":              file(fmt.Sprintf("%d\n", n)),
		"physical_package_id":  file("0\n"),
		"die_id":               file("0\n"),
		"core_cpus":            file(cpuMask(ncpu, n)),
		"core_cpus_list":       file(cpuList(n, n)),
		"thread_siblings":      file(cpuMask(ncpu, n)),
		"thread_siblings_list": file(cpuList(n, n)),
		"core_siblings":        file(cpuMask(ncpu, all...)),
		"core_siblings_list":   file(cpuList(0, ncpu-1)),
		"package_cpus":         file(cpuMask(ncpu, all...)),
		"package_cpus_list":    file(cpuList(0, ncpu-1)),
		"die_cpus":             file(cpuMask(ncpu, all...)),
		"die_cpus_list":        file(cpuList(0, ncpu-1)),
	}
	entries := map[string]fs.Node{
		"topology": synth.NewDir(0o755, topo),
		"node0":    synth.NewSymlink("../../node/node0"),
	}
	if n > 0 {
		entries["online"] = file("1\n")
	}
	return synth.NewDir(0o755, entries)
}

// New returns a sysfs showing ncpu CPUs.
func New(ncpu int) *fs.Filesystem {
	ncpu = max(ncpu, 1)
	all := cpuList(0, ncpu-1)
	cpu := synth.NewDir(0o755, map[string]fs.Node{
		"online":     file(all),
		"possible":   file(all),
		"present":    file(all),
		"offline":    file("\n"),
		"kernel_max": file("8191\n"),
	})
	for i := 0; i < ncpu; i++ {
		cpu.Add(fmt.Sprintf("cpu%d", i), cpuDir(i, ncpu))
	}
	thp := synth.NewDir(0o755, map[string]fs.Node{
		"enabled":        file("always [madvise] never\n"),
		"defrag":         file("always defer defer+madvise [madvise] never\n"),
		"hpage_pmd_size": file("2097152\n"),
		"shmem_enabled":  file("always within_size advise [never] deny force\n"),
	})
	dir := func(entries map[string]fs.Node) *synth.Dir { return synth.NewDir(0o755, entries) }
	cpus := make([]int, ncpu)
	for i := range cpus {
		cpus[i] = i
	}
	// One NUMA node holding every CPU and all memory.
	node := dir(map[string]fs.Node{
		"online":            file("0\n"),
		"possible":          file("0\n"),
		"has_cpu":           file("0\n"),
		"has_memory":        file("0\n"),
		"has_normal_memory": file("0\n"),
		"node0": dir(map[string]fs.Node{
			"cpulist":  file(all),
			"cpumap":   file(cpuMask(ncpu, cpus...)),
			"distance": file("10\n"),
		}),
	})
	root := dir(map[string]fs.Node{
		"devices": dir(map[string]fs.Node{
			"system": dir(map[string]fs.Node{"cpu": cpu, "node": node}),
		}),
		"fs": dir(map[string]fs.Node{
			"cgroup": dir(nil),
		}),
		"kernel": dir(map[string]fs.Node{
			"mm": dir(map[string]fs.Node{"transparent_hugepage": thp}),
		}),
		"class":    dir(nil),
		"bus":      dir(nil),
		"block":    dir(nil),
		"module":   dir(nil),
		"firmware": dir(nil),
	})
	return synth.NewFilesystem("sysfs", SysfsMagic, root, true)
}
