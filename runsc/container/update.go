package container

import (
	"errors"
	"fmt"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Update changes the resource limits of a created, running or paused
// container's cgroup (runc update). Fields that cannot be applied to the
// sandbox's cgroup are refused, by name, before anything changes; the
// notes name those applied only in part (best effort, as at create). A
// pids limit of 0 or less, or a negative memory limit, removes the limit.
func (c *Container) Update(r *specs.LinuxResources) (notes []string, err error) {
	if r == nil {
		return nil, errors.New("no resources to update")
	}
	if bad := unsupportedResources(r); len(bad) > 0 {
		return nil, fmt.Errorf("cannot update %s: not supported for a sandbox", strings.Join(bad, ", "))
	}
	err = c.withLock(func() error {
		switch c.rec.Status {
		case Created, Running, Paused:
		default:
			return errors.New("container not running")
		}
		cg := c.rec.Cgroup
		if cg == nil {
			return fmt.Errorf("container %s has no cgroup to update: it was created without linux.cgroupsPath or linux.resources", c.rec.ID)
		}
		if p := r.Pids; p != nil && p.Limit != nil && *p.Limit <= 0 {
			ctl := "pids"
			if cg.Dirs[""] != "" {
				ctl = ""
			}
			if err := cg.write(ctl, "pids.max", "max"); err != nil {
				return err
			}
		}
		if m := r.Memory; m != nil && m.Limit != nil && *m.Limit < 0 {
			ctl, file, val := "memory", "memory.limit_in_bytes", "-1"
			if cg.Dirs[""] != "" {
				ctl, file, val = "", "memory.max", "max"
			}
			if err := cg.write(ctl, file, val); err != nil {
				return err
			}
		}
		var err error
		notes, err = cg.apply(r)
		return err
	})
	return notes, err
}

// unsupportedResources names the fields of r that Update refuses.
func unsupportedResources(r *specs.LinuxResources) []string {
	var bad []string
	if len(r.Devices) > 0 {
		bad = append(bad, "devices")
	}
	if len(r.HugepageLimits) > 0 {
		bad = append(bad, "hugepageLimits")
	}
	if r.Network != nil {
		bad = append(bad, "network")
	}
	if len(r.Rdma) > 0 {
		bad = append(bad, "rdma")
	}
	if len(r.Unified) > 0 {
		bad = append(bad, "unified")
	}
	if c := r.CPU; c != nil && (c.RealtimeRuntime != nil || c.RealtimePeriod != nil) {
		bad = append(bad, "cpu.realtimeRuntime/realtimePeriod")
	}
	if b := r.BlockIO; b != nil && (b.LeafWeight != nil || len(b.WeightDevice) > 0 || len(b.ThrottleReadBpsDevice) > 0 ||
		len(b.ThrottleWriteBpsDevice) > 0 || len(b.ThrottleReadIOPSDevice) > 0 || len(b.ThrottleWriteIOPSDevice) > 0) {
		bad = append(bad, "blockIO device weights and throttles")
	}
	return bad
}
