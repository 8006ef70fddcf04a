package boot

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestDeviceMode(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want uint32
		ok   bool
	}{
		{"c", unix.S_IFCHR, true},
		{"u", unix.S_IFCHR, true},
		{"b", unix.S_IFBLK, true},
		{"p", unix.S_IFIFO, true},
		{"", 0, false},
		{"s", 0, false},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			got, err := deviceMode(tc.typ)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("deviceMode(%q) = %#o, %v", tc.typ, got, err)
			}
		})
	}
}
