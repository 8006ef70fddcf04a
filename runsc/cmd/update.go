package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Update is `runsc update`: change a container's resource limits, with
// runc's flags.
type Update struct {
	resources string
	// The flags, kept as given: only those set change anything.
	blkioWeight, cpuPeriod, cpuQuota, cpuShares       string
	cpuRtPeriod, cpuRtRuntime, cpusetCpus, cpusetMems string
	kernelMemory, kernelMemoryTCP, memory             string
	memoryReservation, memorySwap, pidsLimit          string
	l3CacheSchema, memBwSchema                        string
}

// Name implements subcommands.Command.
func (*Update) Name() string { return "update" }

// Synopsis implements subcommands.Command.
func (*Update) Synopsis() string { return "update a container's resource limits" }

// Usage implements subcommands.Command.
func (*Update) Usage() string {
	return `update [--resources FILE|-] [flags] ID

Changes the limits of container ID's cgroup (its sandbox and gofer on the
host): from --resources, a spec's linux.resources as JSON ("-" reads it
from stdin), then from the flags. Memory sizes take a k, m, g or t suffix.
Fields that cannot be applied to a sandbox (devices, hugepages, network,
rdma, unified, realtime CPU, per-device block I/O) are refused by name.

`
}

// SetFlags implements subcommands.Command.
func (u *Update) SetFlags(f *flag.FlagSet) {
	f.StringVar(&u.resources, "resources", "", `JSON file of the resources to apply ("-": stdin)`)
	f.StringVar(&u.resources, "r", "", "short for --resources")
	for _, fl := range []struct {
		p          *string
		name, help string
	}{
		{&u.blkioWeight, "blkio-weight", "block I/O weight (10 to 1000)"},
		{&u.cpuPeriod, "cpu-period", "CPU CFS period in microseconds"},
		{&u.cpuQuota, "cpu-quota", "CPU CFS quota in microseconds (-1: none)"},
		{&u.cpuShares, "cpu-share", "CPU shares (relative weight)"},
		{&u.cpuShares, "cpu-shares", "same as --cpu-share"},
		{&u.cpuRtPeriod, "cpu-rt-period", "realtime CPU period (not supported)"},
		{&u.cpuRtRuntime, "cpu-rt-runtime", "realtime CPU runtime (not supported)"},
		{&u.cpusetCpus, "cpuset-cpus", "CPUs to run on (0-3, 0,1)"},
		{&u.cpusetMems, "cpuset-mems", "memory nodes to use (0-3, 0,1)"},
		{&u.kernelMemory, "kernel-memory", "kernel memory limit (best effort)"},
		{&u.kernelMemoryTCP, "kernel-memory-tcp", "kernel TCP buffer memory limit (best effort)"},
		{&u.memory, "memory", "memory limit (-1: none)"},
		{&u.memoryReservation, "memory-reservation", "memory soft limit"},
		{&u.memorySwap, "memory-swap", "memory plus swap limit (-1: none)"},
		{&u.pidsLimit, "pids-limit", "maximum number of tasks (0 or -1: none)"},
		{&u.l3CacheSchema, "l3-cache-schema", "Intel RDT L3 cache schema (not supported)"},
		{&u.memBwSchema, "mem-bw-schema", "Intel RDT memory bandwidth schema (not supported)"},
	} {
		f.StringVar(fl.p, fl.name, "", fl.help)
	}
}

// Execute implements subcommands.Command.
func (u *Update) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "update")
	if !ok {
		return exitError
	}
	r, err := u.build(os.Stdin)
	if err != nil {
		return ociFail(conf, log, "update", err)
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "update", err)
	}
	notes, err := c.Update(r)
	if err != nil {
		return ociFail(conf, log, "update", err)
	}
	for _, n := range notes {
		log.Warn("update: " + n)
	}
	return subcommands.ExitSuccess
}

// build returns the resources to apply: --resources's, then the flags.
func (u *Update) build(stdin io.Reader) (*specs.LinuxResources, error) {
	r := &specs.LinuxResources{}
	if u.resources != "" {
		var b []byte
		var err error
		if u.resources == "-" {
			b, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
		} else {
			b, err = os.ReadFile(u.resources)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the resources: %w", err)
		}
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("parsing the resources: %w", err)
		}
	}
	if u.l3CacheSchema != "" || u.memBwSchema != "" {
		return nil, errors.New("cannot update l3-cache-schema, mem-bw-schema: Intel RDT is not supported for a sandbox")
	}
	cpu := func() *specs.LinuxCPU {
		if r.CPU == nil {
			r.CPU = &specs.LinuxCPU{}
		}
		return r.CPU
	}
	mem := func() *specs.LinuxMemory {
		if r.Memory == nil {
			r.Memory = &specs.LinuxMemory{}
		}
		return r.Memory
	}
	for _, fl := range []struct {
		name, val string
		set       func(int64)
		bytes     bool
	}{
		{"blkio-weight", u.blkioWeight, func(v int64) {
			w := uint16(v)
			if r.BlockIO == nil {
				r.BlockIO = &specs.LinuxBlockIO{}
			}
			r.BlockIO.Weight = &w
		}, false},
		{"cpu-period", u.cpuPeriod, func(v int64) { p := uint64(v); cpu().Period = &p }, false},
		{"cpu-quota", u.cpuQuota, func(v int64) { cpu().Quota = &v }, false},
		{"cpu-share", u.cpuShares, func(v int64) { s := uint64(v); cpu().Shares = &s }, false},
		{"cpu-rt-period", u.cpuRtPeriod, func(v int64) { p := uint64(v); cpu().RealtimePeriod = &p }, false},
		{"cpu-rt-runtime", u.cpuRtRuntime, func(v int64) { cpu().RealtimeRuntime = &v }, false},
		{"kernel-memory", u.kernelMemory, func(v int64) { mem().Kernel = &v }, true},
		{"kernel-memory-tcp", u.kernelMemoryTCP, func(v int64) { mem().KernelTCP = &v }, true},
		{"memory", u.memory, func(v int64) { mem().Limit = &v }, true},
		{"memory-reservation", u.memoryReservation, func(v int64) { mem().Reservation = &v }, true},
		{"memory-swap", u.memorySwap, func(v int64) { mem().Swap = &v }, true},
		{"pids-limit", u.pidsLimit, func(v int64) {
			if r.Pids == nil {
				r.Pids = &specs.LinuxPids{}
			}
			r.Pids.Limit = &v
		}, false},
	} {
		if fl.val == "" {
			continue
		}
		var v int64
		var err error
		if fl.bytes {
			v, err = parseBytes(fl.val)
		} else {
			v, err = strconv.ParseInt(fl.val, 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("invalid value for --%s: %q", fl.name, fl.val)
		}
		// -1 means no limit, where a limit can be lifted.
		if v < 0 && (v != -1 || !fl.bytes && fl.name != "cpu-quota" && fl.name != "pids-limit") {
			return nil, fmt.Errorf("invalid value for --%s: %q", fl.name, fl.val)
		}
		fl.set(v)
	}
	if u.cpusetCpus != "" {
		cpu().Cpus = u.cpusetCpus
	}
	if u.cpusetMems != "" {
		cpu().Mems = u.cpusetMems
	}
	return r, nil
}

// parseBytes parses a size as runc's flags take it: a number of bytes
// with an optional k, m, g or t suffix (powers of 1024, an optional b,
// any case), or -1.
func parseBytes(s string) (int64, error) {
	if s == "-1" {
		return -1, nil
	}
	t := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "b")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return int64(v * float64(mult)), nil
}
