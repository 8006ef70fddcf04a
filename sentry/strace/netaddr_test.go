package strace

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// TestAppendIP checks the address formatting against net/netip's, which
// it replaces, on edge cases and random addresses rich in zero groups.
func TestAppendIP(t *testing.T) {
	cases := []string{
		"::", "::1", "1::", "1::1", "::ffff:1.2.3.4", "::ffff:0.0.0.0", "::fffe:1.2.3.4",
		"::1.2.3.4", "1:0:1:0:1:0:1:0", "1:0:0:1:0:0:0:1", "1:0:0:1:0:0:1:1", "0:0:1:0:0:1::",
		"2001:db8::ff00:42:8329", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "0:1::",
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			a := netip.MustParseAddr(c).As16()
			if got, want := string(appendIPv6(nil, a[:])), netip.AddrFrom16(a).String(); got != want {
				t.Errorf("appendIPv6(%v) = %q, want %q", a, got, want)
			}
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var a [16]byte
		for i := 0; i < 16; i += 2 {
			if r.IntN(2) == 0 {
				a[i], a[i+1] = byte(r.IntN(3)), byte(r.IntN(256))
			}
		}
		if got, want := string(appendIPv6(nil, a[:])), netip.AddrFrom16(a).String(); got != want {
			t.Fatalf("appendIPv6(%v) = %q, want %q", a, got, want)
		}
		v4 := [4]byte(a[:4])
		if got, want := string(appendIPv4(nil, v4[:])), netip.AddrFrom4(v4).String(); got != want {
			t.Fatalf("appendIPv4(%v) = %q, want %q", v4, got, want)
		}
	}
}

// FuzzAppendIPv6 compares the formatting with net/netip's for any
// address.
func FuzzAppendIPv6(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 16 {
			return
		}
		a := [16]byte(b[:16])
		if got, want := string(appendIPv6(nil, a[:])), netip.AddrFrom16(a).String(); got != want {
			t.Fatalf("appendIPv6(%v) = %q, want %q", a, got, want)
		}
	})
}
