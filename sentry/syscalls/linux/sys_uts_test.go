package linux

import "testing"

func TestUname26Release(t *testing.T) {
	for _, tc := range []struct{ release, want string }{
		{"6.1.0", "2.6.61"},
		{"6.18.44-fc-v769", "2.6.78-fc-v769"},
		{"3.2.0", "2.6.62"},
		{"5.10", "2.6.70"},
		{"4.19.0-rc1", "2.6.79-rc1"},
		{"6.1.0.7", "2.6.61.7"},
		{"", "2.6.60"},
	} {
		t.Run(tc.release, func(t *testing.T) {
			if got := uname26Release(tc.release); got != tc.want {
				t.Errorf("uname26Release(%q) = %q, want %q", tc.release, got, tc.want)
			}
		})
	}
}
