package mm

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPinBlocks(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(MMapOpts{Length: 8 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := m.MMap(MMapOpts{Addr: addr + 8*pageSize, Length: pageSize, Prot: unix.PROT_READ, Private: true, Fixed: true})
	if err != nil || ro != addr+8*pageSize {
		t.Fatalf("read-only mapping: %#x %v", ro, err)
	}
	tests := []struct {
		name    string
		addr    uintptr
		length  int
		write   bool
		wantN   int
		wantErr error
	}{
		{"write pin of one page", addr + 10, 100, true, 100, nil},
		{"write pin across pages", addr + pageSize - 3, 3 * pageSize, true, 3 * pageSize, nil},
		{"write pin stops at read-only page", addr + 7*pageSize, 2 * pageSize, true, pageSize, unix.EFAULT},
		{"read pin of read-only page", addr + 8*pageSize, pageSize, false, pageSize, nil},
		{"pin past the mappings", addr + 8*pageSize, 2 * pageSize, false, pageSize, unix.EFAULT},
		{"empty", addr, 0, true, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p Pinned
			n, err := m.Pin(&p, tc.addr, tc.length, tc.write)
			defer p.Unpin()
			if n != tc.wantN || err != tc.wantErr {
				t.Fatalf("Pin: %d %v, want %d %v", n, err, tc.wantN, tc.wantErr)
			}
			if p.Len() != n {
				t.Fatalf("blocks hold %d bytes, Pin said %d", p.Len(), n)
			}
			if !tc.write || n == 0 {
				return
			}
			// Writing the blocks is writing the application's memory.
			data := bytes.Repeat([]byte{'p'}, n)
			done := 0
			for _, b := range p.Blocks {
				done += copy(b, data[done:])
			}
			got := make([]byte, n)
			if k, err := m.CopyIn(tc.addr, got); k != n || err != nil || !bytes.Equal(got, data) {
				t.Fatalf("CopyIn after writing the blocks: %d %v equal=%v", k, err, bytes.Equal(got, data))
			}
		})
	}
}

// A page pinned for a read that munmap drops is not reused until it is
// unpinned.
func TestPinSurvivesMunmap(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	var p Pinned
	if n, err := m.Pin(&p, addr, 4*pageSize, true); n != 4*pageSize || err != nil {
		t.Fatalf("Pin: %d %v", n, err)
	}
	used := m.mf.Used()
	if err := m.MUnmap(addr, 4*pageSize); err != nil {
		t.Fatal(err)
	}
	if got := m.mf.Used(); got != used {
		t.Fatalf("munmap freed pinned pages: used %d, was %d", got, used)
	}
	// New memory must not get the pinned pages.
	other, err := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	var q Pinned
	if _, err := m.Pin(&q, other, 4*pageSize, true); err != nil {
		t.Fatal(err)
	}
	for _, b := range q.Blocks {
		for _, pb := range p.Blocks {
			if m.mf.offsetOf(b) < m.mf.offsetOf(pb)+uint64(len(pb)) && m.mf.offsetOf(pb) < m.mf.offsetOf(b)+uint64(len(b)) {
				t.Fatal("a pinned page was allocated again")
			}
		}
	}
	// The late write of the I/O goes nowhere anyone sees.
	for _, b := range p.Blocks {
		clear(b)
		b[0] = 'x'
	}
	q.Unpin()
	p.Unpin()
	if got := m.mf.Used(); got != used {
		t.Fatalf("after unpin: used %d, want %d (the second mapping only)", got, used)
	}
	if err := m.MUnmap(other, 4*pageSize); err != nil {
		t.Fatal(err)
	}
	if got := m.mf.Used(); got != 0 {
		t.Fatalf("%d bytes leaked", got)
	}
}

// Fork while a page is pinned for a read: the parent keeps the page the
// read fills, even after a write fault in it.
func TestPinForkKeepsParentPage(t *testing.T) {
	m := newTestMM(t)
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CopyOut(addr, []byte("before")); err != nil {
		t.Fatal(err)
	}
	var p Pinned
	if _, err := m.Pin(&p, addr+100, 100, true); err != nil {
		t.Fatal(err)
	}
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	// Another thread of the parent writes the page: no copy may happen
	// behind the read.
	if _, err := m.CopyOut(addr+2000, []byte("other")); err != nil {
		t.Fatal(err)
	}
	copy(p.Blocks[0], "read data")
	p.Unpin()
	got := make([]byte, 9)
	m.CopyIn(addr+100, got)
	if string(got) != "read data" {
		t.Fatalf("parent sees %q, want the read's data", got)
	}
	c.CopyIn(addr, got[:6])
	if string(got[:6]) != "before" {
		t.Fatalf("child sees %q, want its copy", got[:6])
	}
	c.DecUsers()
	m.DecUsers()
	if u := m.mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}
