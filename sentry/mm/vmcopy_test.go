package mm

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCopyBetween(t *testing.T) {
	src := newTestMM(t)
	dst := newTestMM(t)
	defer src.DecUsers()
	defer dst.DecUsers()
	rw := unix.PROT_READ | unix.PROT_WRITE
	sa, err := src.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 2*pageSize/16)
	if _, err := src.CopyOut(sa, data); err != nil {
		t.Fatal(err)
	}
	da, err := dst.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := dst.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	hole := sa + 2*pageSize + 16*pageSize // never mapped
	for _, tc := range []struct {
		name    string
		dst     []Segment
		src     []Segment
		want    int64
		err     error
		wantDst uintptr // where the copied bytes start in dst
		wantSrc uintptr // and where they came from
	}{
		{name: "one to one", dst: []Segment{{da, 10}}, src: []Segment{{sa, 10}}, want: 10, wantDst: da, wantSrc: sa},
		{name: "gather", dst: []Segment{{da, 8}}, src: []Segment{{sa, 3}, {sa + 3, 0}, {sa + 3, 5}}, want: 8, wantDst: da, wantSrc: sa},
		{name: "scatter across pages", dst: []Segment{{da + pageSize - 2, 4}, {da + pageSize + 2, 6}}, src: []Segment{{sa + 100, 10}}, want: 10, wantDst: da + pageSize - 2, wantSrc: sa + 100},
		{name: "dst shorter", dst: []Segment{{da, 4}}, src: []Segment{{sa, 10}}, want: 4, wantDst: da, wantSrc: sa},
		{name: "src runs off its mapping", dst: []Segment{{da, 64}}, src: []Segment{{sa + 2*pageSize - 5, 64}}, want: 5, wantDst: da, wantSrc: sa + 2*pageSize - 5},
		{name: "src hole first", dst: []Segment{{da, 8}}, src: []Segment{{hole, 8}}, err: unix.EFAULT},
		{name: "src hole second", dst: []Segment{{da, 16}}, src: []Segment{{sa, 4}, {hole, 8}}, want: 4, wantDst: da, wantSrc: sa},
		{name: "read-only dst", dst: []Segment{{ro, 8}}, src: []Segment{{sa, 8}}, err: unix.EFAULT},
		{name: "nothing", dst: nil, src: []Segment{{sa, 8}}},
		{name: "large", dst: []Segment{{da, 2 * pageSize}}, src: []Segment{{sa, 2 * pageSize}}, want: 2 * pageSize, wantDst: da, wantSrc: sa},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := dst.ZeroOut(da, 2*pageSize); err != nil {
				t.Fatal(err)
			}
			n, err := CopyBetween(dst, tc.dst, src, tc.src)
			if n != tc.want || err != tc.err {
				t.Fatalf("CopyBetween = %d, %v; want %d, %v", n, err, tc.want, tc.err)
			}
			if n == 0 {
				return
			}
			// Read the destination back through its segments.
			got := make([]byte, 0, n)
			for _, s := range tc.dst {
				l := min(int64(s.Len), n-int64(len(got)))
				b := make([]byte, l)
				if _, err := dst.CopyIn(s.Addr, b); err != nil {
					t.Fatal(err)
				}
				got = append(got, b...)
			}
			off := tc.wantSrc - sa
			if want := data[off : off+uintptr(n)]; !bytes.Equal(got, want) {
				t.Fatalf("copied %q, want %q", got, want)
			}
		})
	}
}
