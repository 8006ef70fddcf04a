package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// This file puts a container's sandbox and gofer in a cgroup on the host
// and applies the spec's linux.resources to it: pids, memory (and swap),
// CPU shares, quota and period, and the block I/O weight where the kernel
// has it. Both cgroup v1 (one hierarchy per controller, as on hosts with
// the hybrid layout) and v2 (the unified hierarchy) are handled, and
// cpuset's cpus and mems. Device rules are applied by the v1 devices
// controller (cgroup_devices.go); on v2 they would take an eBPF program,
// which runsc does not load (a note says so).
//
// The cgroup is linux.cgroupsPath, taken relative to each hierarchy's
// mount point (a relative path too, rather than relative to runsc's own
// cgroup); with --systemd-cgroup, "slice:prefix:name" names
// <slice>/<prefix>-<name>.scope. Without cgroupsPath, a container that
// asks for resources gets /runsc/<id>. Only the directories runsc made
// are removed by delete.

// cgroupRoot is where the cgroup hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// v1Controllers are the v1 hierarchies a container's cgroup is made in.
var v1Controllers = []string{"pids", "memory", "cpu", "cpuacct", "cpuset", "blkio", "devices"}

// cgroup is a container's cgroup: the directories it is made of, and
// which of them runsc created (and so removes).
type cgroup struct {
	// Dirs maps a v1 controller (or "" for v2) to the cgroup's directory.
	Dirs map[string]string `json:"dirs"`
	// Created are the directories runsc made, parents first.
	Created []string `json:"created,omitempty"`
}

// cgroupPath returns the cgroup path for a container, "" for none.
func cgroupPath(spec *specs.Spec, id string, systemd bool) (string, error) {
	l := spec.Linux
	if l == nil || (l.CgroupsPath == "" && l.Resources == nil) {
		return "", nil
	}
	p := l.CgroupsPath
	if p == "" {
		return "/runsc/" + id, nil
	}
	if systemd {
		parts := strings.Split(p, ":")
		if len(parts) != 3 {
			return "", fmt.Errorf("linux.cgroupsPath %q is not of the systemd form slice:prefix:name", p)
		}
		slice, prefix, name := parts[0], parts[1], parts[2]
		if slice == "" {
			slice = "system.slice"
		}
		p = "/" + slice + "/" + prefix + "-" + name + ".scope"
	}
	clean := filepath.Clean("/" + p)
	if clean == "/" {
		return "", fmt.Errorf("linux.cgroupsPath %q names the root cgroup", l.CgroupsPath)
	}
	return clean, nil
}

func isCgroup2() bool {
	_, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	return err == nil
}

// newCgroup makes the cgroup at path (see cgroupPath) in every hierarchy.
// On error, what it made is removed.
func newCgroup(path string) (cg *cgroup, err error) {
	cg = &cgroup{Dirs: map[string]string{}}
	defer func() {
		if err != nil {
			cg.remove()
		}
	}()
	if isCgroup2() {
		if err := cg.mkdir(cgroupRoot, path); err != nil {
			return nil, err
		}
		cg.Dirs[""] = filepath.Join(cgroupRoot, path)
		// Let the new cgroup's children (none) and itself use the
		// controllers: enable them on every ancestor up to it.
		for dir := filepath.Join(cgroupRoot, path); ; {
			parent := filepath.Dir(dir)
			if len(parent) < len(cgroupRoot) {
				break
			}
			// Best effort: a controller the parent lacks stays off.
			for _, c := range []string{"+pids", "+memory", "+cpu", "+cpuset", "+io"} {
				os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte(c), 0)
			}
			if parent == cgroupRoot {
				break
			}
			dir = parent
		}
		return cg, nil
	}
	for _, c := range v1Controllers {
		mount := filepath.Join(cgroupRoot, c)
		if _, err := os.Stat(mount); err != nil {
			continue // not mounted here
		}
		if err := cg.mkdir(mount, path); err != nil {
			return nil, err
		}
		cg.Dirs[c] = filepath.Join(mount, path)
		if c == "cpuset" {
			if err := cg.initCpuset(mount); err != nil {
				return nil, err
			}
		}
	}
	if len(cg.Dirs) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted under " + cgroupRoot)
	}
	return cg, nil
}

// initCpuset gives each cpuset directory runsc made under mount its
// parent's cpus and mems: a v1 cpuset starts with none, and takes no
// process until it has some.
func (cg *cgroup) initCpuset(mount string) error {
	for _, dir := range cg.Created {
		if !strings.HasPrefix(dir, mount+"/") {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err == nil && strings.TrimSpace(string(b)) != "" {
				continue
			}
			parent, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
			if err != nil {
				return fmt.Errorf("cgroup: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), parent, 0); err != nil {
				return fmt.Errorf("cgroup: %s: %w", f, err)
			}
		}
	}
	return nil
}

// mkdir makes mount/path and the parents missing, recording each.
func (cg *cgroup) mkdir(mount, path string) error {
	dir := mount
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		dir = filepath.Join(dir, part)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			cg.Created = append(cg.Created, dir)
			continue
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return nil
}

// write writes value to file of the controller's directory.
func (cg *cgroup) write(controller, file, value string) error {
	dir, ok := cg.Dirs[controller]
	if !ok {
		return fmt.Errorf("cgroup: no %s hierarchy", controller)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("cgroup: %s: %w", file, err)
	}
	return nil
}

// has reports whether the controller's directory has file.
func (cg *cgroup) has(controller, file string) bool {
	dir, ok := cg.Dirs[controller]
	if !ok {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, file))
	return err == nil
}

// apply writes the spec's resources, returning notes for what it leaves
// out.
func (cg *cgroup) apply(r *specs.LinuxResources) (notes []string, err error) {
	if r == nil {
		return nil, nil
	}
	v2 := cg.Dirs[""] != ""
	ctl := func(v1 string) string {
		if v2 {
			return ""
		}
		return v1
	}
	if r.Pids != nil && r.Pids.Limit != nil && *r.Pids.Limit > 0 {
		if err := cg.write(ctl("pids"), "pids.max", strconv.FormatInt(*r.Pids.Limit, 10)); err != nil {
			return nil, err
		}
	}
	if m := r.Memory; m != nil {
		if m.Limit != nil && *m.Limit > 0 {
			file := "memory.limit_in_bytes"
			if v2 {
				file = "memory.max"
			}
			if err := cg.write(ctl("memory"), file, strconv.FormatInt(*m.Limit, 10)); err != nil {
				return nil, err
			}
		}
		if m.Swap != nil && *m.Swap > 0 {
			switch {
			case v2 && m.Limit != nil && *m.Swap >= *m.Limit:
				// v1's memsw is memory+swap; v2's swap.max is swap.
				if err := cg.write("", "memory.swap.max", strconv.FormatInt(*m.Swap-*m.Limit, 10)); err != nil {
					return nil, err
				}
			case !v2 && cg.has("memory", "memory.memsw.limit_in_bytes"):
				if err := cg.write("memory", "memory.memsw.limit_in_bytes", strconv.FormatInt(*m.Swap, 10)); err != nil {
					return nil, err
				}
			default:
				notes = append(notes, "linux.resources.memory.swap is not applied: no swap accounting")
			}
		}
		notes = append(notes, cg.applyMemoryExtras(m, v2)...)
	}
	if c := r.CPU; c != nil {
		if c.Shares != nil && *c.Shares > 0 {
			if v2 {
				// The usual shares-to-weight mapping: 2..262144 onto
				// 1..10000.
				w := 1 + ((*c.Shares-2)*9999)/262142
				if err := cg.write("", "cpu.weight", strconv.FormatUint(w, 10)); err != nil {
					return nil, err
				}
			} else if err := cg.write("cpu", "cpu.shares", strconv.FormatUint(*c.Shares, 10)); err != nil {
				return nil, err
			}
		}
		if c.Period != nil && *c.Period > 0 || c.Quota != nil && *c.Quota != 0 {
			period := uint64(100000)
			if c.Period != nil && *c.Period > 0 {
				period = *c.Period
			}
			quota := int64(-1)
			if c.Quota != nil && *c.Quota > 0 {
				quota = *c.Quota
			}
			if v2 {
				q := "max"
				if quota > 0 {
					q = strconv.FormatInt(quota, 10)
				}
				if err := cg.write("", "cpu.max", q+" "+strconv.FormatUint(period, 10)); err != nil {
					return nil, err
				}
			} else {
				if err := cg.write("cpu", "cpu.cfs_period_us", strconv.FormatUint(period, 10)); err != nil {
					return nil, err
				}
				if err := cg.write("cpu", "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)); err != nil {
					return nil, err
				}
			}
		}
		for _, s := range []struct{ file, value string }{{"cpuset.cpus", c.Cpus}, {"cpuset.mems", c.Mems}} {
			if s.value == "" {
				continue
			}
			if err := cg.write(ctl("cpuset"), s.file, s.value); err != nil {
				return nil, err
			}
		}
		if c.RealtimeRuntime != nil || c.RealtimePeriod != nil {
			notes = append(notes, "linux.resources.cpu realtimeRuntime and realtimePeriod are not applied")
		}
	}
	if b := r.BlockIO; b != nil && b.Weight != nil && *b.Weight > 0 {
		switch {
		case v2 && cg.has("", "io.weight"):
			if err := cg.write("", "io.weight", "default "+strconv.Itoa(int(*b.Weight))); err != nil {
				return nil, err
			}
		case !v2 && cg.has("blkio", "blkio.weight"):
			if err := cg.write("blkio", "blkio.weight", strconv.Itoa(int(*b.Weight))); err != nil {
				return nil, err
			}
		default:
			notes = append(notes, "linux.resources.blockIO.weight is not applied: the host's I/O scheduler has no weights")
		}
	}
	if len(r.Devices) > 0 {
		switch {
		case !v2 && cg.Dirs["devices"] != "":
			if err := cg.applyDevices(r.Devices); err != nil {
				return nil, err
			}
		default:
			// cgroup v2 controls devices with an eBPF program, which
			// runsc does not load.
			notes = append(notes, "linux.resources.devices are not applied: the host has no cgroup v1 devices hierarchy (the cgroup v2 device filter is not supported); the sandbox opens no host devices for the container")
		}
	}
	if len(r.HugepageLimits) > 0 || r.Network != nil || r.Rdma != nil || len(r.Unified) > 0 {
		notes = append(notes, "linux.resources hugepageLimits, network, rdma and unified are not applied")
	}
	return notes, nil
}

// add moves process pid into the cgroup, in every hierarchy.
func (cg *cgroup) add(pid int) error {
	for _, dir := range cg.Dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup: adding pid %d to %s: %w", pid, dir, err)
		}
	}
	return nil
}

// remove removes the directories runsc made, deepest first. Processes
// still in them (stub processes the kernel has not finished killing after
// their Sentry died, say) are killed, as runc kills what is left in a
// container's cgroup; a cgroup whose processes are still exiting is busy
// for a moment, so it retries for a while.
func (cg *cgroup) remove() error {
	if cg == nil {
		return nil
	}
	var firstErr error
	for i := len(cg.Created) - 1; i >= 0; i-- {
		dir := cg.Created[i]
		var err error
		for try := 0; try < 500; try++ {
			err = os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			if try%50 == 0 {
				killAllIn(dir)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("cgroup: %w", err)
		}
	}
	return firstErr
}

// killAllIn sends SIGKILL to every process in the cgroup directory dir.
func killAllIn(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// readInt reads an integer file of the controller's directory.
func (cg *cgroup) readInt(controller, file string) (uint64, bool) {
	dir, ok := cg.Dirs[controller]
	if !ok {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// CgroupStats are the host's figures for a container's cgroup (the
// sandbox and the gofer, Sentry included). Zero means unknown or no
// limit.
type CgroupStats struct {
	MemoryUsage, MemoryLimit uint64
	PidsLimit                uint64
	// CPUUsageNS is the CPU time used, in nanoseconds.
	CPUUsageNS uint64
}

// noLimit is above any limit a v1 file reports as "unlimited" (it shows a
// page-rounded 2^63-1).
const noLimit = 1 << 62

func (cg *cgroup) stats() *CgroupStats {
	st := &CgroupStats{}
	if cg.Dirs[""] != "" {
		st.MemoryUsage, _ = cg.readInt("", "memory.current")
		st.MemoryLimit, _ = cg.readInt("", "memory.max") // "max" fails: 0
		st.PidsLimit, _ = cg.readInt("", "pids.max")
		if b, err := os.ReadFile(filepath.Join(cg.Dirs[""], "cpu.stat")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
					n, _ := strconv.ParseUint(v, 10, 64)
					st.CPUUsageNS = n * 1000
				}
			}
		}
		return st
	}
	st.MemoryUsage, _ = cg.readInt("memory", "memory.usage_in_bytes")
	if l, ok := cg.readInt("memory", "memory.limit_in_bytes"); ok && l < noLimit {
		st.MemoryLimit = l
	}
	st.PidsLimit, _ = cg.readInt("pids", "pids.max")
	st.CPUUsageNS, _ = cg.readInt("cpuacct", "cpuacct.usage")
	return st
}

// applyMemoryExtras writes the memory settings beyond limit and swap,
// best effort: a file the kernel lacks or refuses (kernel memory limits
// are gone from recent kernels) gives a note.
func (cg *cgroup) applyMemoryExtras(m *specs.LinuxMemory, v2 bool) (notes []string) {
	type setting struct {
		name, file, value string
	}
	var set []setting
	if m.Reservation != nil && *m.Reservation > 0 {
		file := "memory.soft_limit_in_bytes"
		if v2 {
			file = "memory.low"
		}
		set = append(set, setting{"reservation", file, strconv.FormatInt(*m.Reservation, 10)})
	}
	if !v2 {
		if m.Kernel != nil && *m.Kernel > 0 {
			set = append(set, setting{"kernel", "memory.kmem.limit_in_bytes", strconv.FormatInt(*m.Kernel, 10)})
		}
		if m.KernelTCP != nil && *m.KernelTCP > 0 {
			set = append(set, setting{"kernelTCP", "memory.kmem.tcp.limit_in_bytes", strconv.FormatInt(*m.KernelTCP, 10)})
		}
		if m.Swappiness != nil && *m.Swappiness <= 100 {
			set = append(set, setting{"swappiness", "memory.swappiness", strconv.FormatUint(*m.Swappiness, 10)})
		}
		if m.DisableOOMKiller != nil && *m.DisableOOMKiller {
			set = append(set, setting{"disableOOMKiller", "memory.oom_control", "1"})
		}
	} else if m.Kernel != nil || m.KernelTCP != nil || m.Swappiness != nil || m.DisableOOMKiller != nil {
		notes = append(notes, "linux.resources.memory kernel, kernelTCP, swappiness and disableOOMKiller do not exist in cgroup v2")
	}
	ctl := "memory"
	if v2 {
		ctl = ""
	}
	for _, s := range set {
		if err := cg.write(ctl, s.file, s.value); err != nil {
			notes = append(notes, fmt.Sprintf("linux.resources.memory.%s is not applied: %v", s.name, err))
		}
	}
	return notes
}
