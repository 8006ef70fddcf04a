package container

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestDeviceRule(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		d    specs.LinuxDeviceCgroup
		want string
		err  bool
	}{
		{"all", specs.LinuxDeviceCgroup{Access: "rwm"}, "a", false},
		{"all typed", specs.LinuxDeviceCgroup{Type: "a"}, "a", false},
		{"char", specs.LinuxDeviceCgroup{Type: "c", Major: n(10), Minor: n(229), Access: "rwm"}, "c 10:229 rwm", false},
		{"block any minor", specs.LinuxDeviceCgroup{Type: "b", Major: n(8), Access: "r"}, "b 8:* r", false},
		{"char any", specs.LinuxDeviceCgroup{Type: "c", Access: "m"}, "c *:* m", false},
		{"no access", specs.LinuxDeviceCgroup{Type: "c", Major: n(1), Minor: n(3)}, "c 1:3 rwm", false},
		{"bad type", specs.LinuxDeviceCgroup{Type: "p", Access: "r"}, "", true},
		{"bad access", specs.LinuxDeviceCgroup{Type: "c", Access: "x"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := deviceRule(tc.d)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("deviceRule = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}
