package container

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/runsc/boot"
)

// specDevices turns the spec's linux.devices into the nodes the sandbox
// makes at boot.
func specDevices(devs []specs.LinuxDevice) []boot.SpecDevice {
	var out []boot.SpecDevice
	for _, d := range devs {
		bd := boot.SpecDevice{Path: d.Path, Type: d.Type, Major: d.Major, Minor: d.Minor, UID: d.UID, GID: d.GID}
		if d.FileMode != nil {
			m := uint32(d.FileMode.Perm())
			bd.FileMode = &m
		}
		out = append(out, bd)
	}
	return out
}
