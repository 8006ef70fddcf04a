package proc

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseOOMScoreAdj(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
		err  error
	}{
		{"0", 0, nil},
		{"1000\n", 1000, nil},
		{"-1000", -1000, nil},
		{"  42  \n", 42, nil},
		{"0x10", 16, nil},
		{"010", 8, nil},
		{"+5", 5, nil},
		{"1001", 0, unix.EINVAL},
		{"-1001", 0, unix.EINVAL},
		{"", 0, unix.EINVAL},
		{"1 2", 0, unix.EINVAL},
		{"1_0", 0, unix.EINVAL},
		{"0b11", 0, unix.EINVAL},
		{"0o7", 0, unix.EINVAL},
		{"+-1", 0, unix.EINVAL},
		{"99999999999999999999", 0, unix.EINVAL},
	} {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			v, err := parseOOMScoreAdj([]byte(tc.in))
			if v != tc.want || err != tc.err {
				t.Errorf("parseOOMScoreAdj(%q) = %d, %v; want %d, %v", tc.in, v, err, tc.want, tc.err)
			}
		})
	}
}

// FuzzParseOOMScoreAdj checks that any write either fails with EINVAL or
// yields a value in range that the trimmed text spells.
func FuzzParseOOMScoreAdj(f *testing.F) {
	for _, s := range []string{"0", "-1000\n", "0x3e8", " 7 ", "abc", "1_000", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseOOMScoreAdj(data)
		if err != nil {
			if err != unix.EINVAL {
				t.Fatalf("error %v, want EINVAL", err)
			}
			return
		}
		if v < -1000 || v > 1000 {
			t.Fatalf("%q gave %d, out of range", data, v)
		}
		if len(data) > 23 {
			data = data[:23]
		}
		w, perr := strconv.ParseInt(strings.TrimSpace(string(data)), 0, 32)
		if perr != nil || int32(w) != v {
			t.Fatalf("%q gave %d, strconv says %d, %v", data, v, w, perr)
		}
	})
}
