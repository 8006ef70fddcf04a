package container

import (
	"fmt"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// deviceRule is a linux.resources.devices entry as the v1 devices
// controller reads it: "TYPE MAJOR:MINOR ACCESS", with "a" for every
// type, "*" for any number and "rwm" for an empty access.
func deviceRule(d specs.LinuxDeviceCgroup) (string, error) {
	typ := d.Type
	switch typ {
	case "", "a":
		typ = "a"
	case "c", "b":
	default:
		return "", fmt.Errorf("linux.resources.devices: invalid device type %q", d.Type)
	}
	num := func(n *int64) string {
		if n == nil || *n < 0 {
			return "*"
		}
		return strconv.FormatInt(*n, 10)
	}
	access := d.Access
	if access == "" {
		access = "rwm"
	}
	for _, c := range access {
		if c != 'r' && c != 'w' && c != 'm' {
			return "", fmt.Errorf("linux.resources.devices: invalid access %q", d.Access)
		}
	}
	if typ == "a" {
		// The controller takes "a" alone for every device.
		return "a", nil
	}
	return typ + " " + num(d.Major) + ":" + num(d.Minor) + " " + access, nil
}

// applyDevices writes the spec's device rules in order to the v1 devices
// cgroup, each to devices.allow or devices.deny, so the last rule that
// matches a device decides, as the spec says. The sandbox and gofer are
// then held to them on the host, as a runc container's processes are.
func (cg *cgroup) applyDevices(rules []specs.LinuxDeviceCgroup) error {
	for _, d := range rules {
		rule, err := deviceRule(d)
		if err != nil {
			return err
		}
		file := "devices.deny"
		if d.Allow {
			file = "devices.allow"
		}
		if err := cg.write("devices", file, rule); err != nil {
			return err
		}
	}
	return nil
}
