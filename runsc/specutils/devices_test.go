package specutils

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestSentryDevice(t *testing.T) {
	for _, tc := range []struct {
		d    specs.LinuxDevice
		want bool
	}{
		{specs.LinuxDevice{Path: "/dev/null", Type: "c", Major: 1, Minor: 3}, true},
		{specs.LinuxDevice{Path: "/dev/tty", Type: "u", Major: 5, Minor: 0}, true},
		{specs.LinuxDevice{Path: "/dev/fifo", Type: "p"}, true},
		{specs.LinuxDevice{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229}, false},
		{specs.LinuxDevice{Path: "/dev/sda", Type: "b", Major: 8, Minor: 0}, false},
		{specs.LinuxDevice{Path: "/dev/nullblk", Type: "b", Major: 1, Minor: 3}, false},
	} {
		t.Run(tc.d.Path, func(t *testing.T) {
			if got := sentryDevice(tc.d); got != tc.want {
				t.Errorf("sentryDevice = %v, want %v", got, tc.want)
			}
		})
	}
}
