package mm

import (
	"bytes"
	"testing"
)

// Large writes go to the memory file with pwrite, per run of contiguous
// pages; the result must read back the same whatever the runs are.
func TestObjectLargeWriteRuns(t *testing.T) {
	tests := []struct {
		name string
		// pre are small writes made first, leaving pages scattered in
		// the memory file.
		pre []int64
		off int64
		n   int
	}{
		{"fresh", nil, 0, 40 << 10},
		{"unaligned", nil, 123, 40<<10 + 7},
		{"over scattered pages", []int64{pageSize, 5 * pageSize, 3 * pageSize}, 100, 10 * pageSize},
		{"over a hole at the end", []int64{0}, 2 * pageSize, 6 * pageSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, mf := newTestObject(t, 0)
			want := []byte{}
			for _, p := range tc.pre {
				if _, err := o.WriteAt([]byte("x"), p); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, readAll(t, o)...)
			data := make([]byte, tc.n)
			for i := range data {
				data[i] = byte(i*7 + 3)
			}
			if n, err := o.WriteAt(data, tc.off); n != len(data) || err != nil {
				t.Fatalf("WriteAt: %d %v", n, err)
			}
			if end := int(tc.off) + len(data); end > len(want) {
				want = append(want, make([]byte, end-len(want))...)
			}
			copy(want[tc.off:], data)
			if got := readAll(t, o); !bytes.Equal(got, want) {
				t.Fatalf("contents differ after the write (len %d, want %d)", len(got), len(want))
			}
			o.DecRef()
			if u := mf.Used(); u != 0 {
				t.Fatalf("%d bytes leaked", u)
			}
		})
	}
}
