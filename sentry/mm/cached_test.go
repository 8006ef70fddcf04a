package mm

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// memBacking is a file in memory.
type memBacking struct {
	mu     sync.Mutex
	data   []byte
	writes int
}

func (b *memBacking) ReadAt(p []byte, off int64) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if off >= int64(len(b.data)) {
		return 0, io.EOF
	}
	n := copy(p, b.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (b *memBacking) WriteAt(p []byte, off int64) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if end := int(off) + len(p); end > len(b.data) {
		b.data = append(b.data, make([]byte, end-len(b.data))...)
	}
	b.writes++
	return copy(b.data[off:], p), nil
}

func (b *memBacking) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.data...)
}

func TestCachedObjectSharedMapping(t *testing.T) {
	m := newTestMM(t)
	file := &memBacking{data: bytes.Repeat([]byte("f"), 2*pageSize+100)}
	o := NewCachedObject(m.mf, int64(len(file.data)), file)
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(MMapOpts{Length: 3 * pageSize, Prot: rw, MaxProt: rw, Object: o})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func(t *testing.T)
	}{
		{"mapping reads the file", func(t *testing.T) {
			got := make([]byte, 4)
			if _, err := m.CopyIn(addr+pageSize, got); err != nil || string(got) != "ffff" {
				t.Fatalf("read %q %v", got, err)
			}
		}},
		{"bytes past the end of the file read as zeros", func(t *testing.T) {
			got := make([]byte, 2)
			if _, err := m.CopyIn(addr+2*pageSize+99, got); err != nil || !bytes.Equal(got, []byte{'f', 0}) {
				t.Fatalf("read %q %v", got, err)
			}
		}},
		{"mapped writes show in reads of the file", func(t *testing.T) {
			if _, err := m.CopyOut(addr+10, []byte("MAPPED")); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 6)
			if n, err := o.ReadAt(got, 10); n != 6 || err != nil || string(got) != "MAPPED" {
				t.Fatalf("ReadAt %d %v %q", n, err, got)
			}
			if bytes.Contains(file.bytes(), []byte("MAPPED")) {
				t.Fatal("reached the file before any writeback")
			}
		}},
		{"writes of the file show in the mapping", func(t *testing.T) {
			n, err := o.WriteThrough([]byte("WRITTEN"), pageSize+5, file.WriteAt)
			if n != 7 || err != nil {
				t.Fatalf("WriteThrough %d %v", n, err)
			}
			got := make([]byte, 7)
			if _, err := m.CopyIn(addr+pageSize+5, got); err != nil || string(got) != "WRITTEN" {
				t.Fatalf("mapping reads %q %v", got, err)
			}
		}},
		{"writeback writes the mapped bytes and not past the end", func(t *testing.T) {
			m.CopyOut(addr+2*pageSize+100, []byte("beyond"))
			if err := m.SyncRange(addr, 3*pageSize); err != nil {
				t.Fatal(err)
			}
			data := file.bytes()
			if len(data) != 2*pageSize+100 {
				t.Fatalf("file is %d bytes, want %d", len(data), 2*pageSize+100)
			}
			if string(data[10:16]) != "MAPPED" || string(data[pageSize+5:pageSize+12]) != "WRITTEN" {
				t.Fatalf("file lacks the writes: %q %q", data[10:16], data[pageSize+5:pageSize+12])
			}
		}},
		{"write through grows the object", func(t *testing.T) {
			if _, err := o.WriteThrough([]byte("tail"), 2*pageSize+200, file.WriteAt); err != nil {
				t.Fatal(err)
			}
			if got := o.Size(); got != 2*pageSize+204 {
				t.Fatalf("size %d", got)
			}
			got := make([]byte, 104)
			m.CopyIn(addr+2*pageSize+100, got)
			// The bytes past the old end written through the mapping
			// are gone: the file's zeros are there.
			if want := append(make([]byte, 100), "tail"...); !bytes.Equal(got, want) {
				t.Fatalf("mapping reads %q", got)
			}
		}},
		{"truncation shrinks both", func(t *testing.T) {
			if err := o.TruncateThrough(pageSize, func(size int64) error {
				file.mu.Lock()
				file.data = file.data[:size]
				file.mu.Unlock()
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := o.Writeback(0, -1); err != nil {
				t.Fatal(err)
			}
			if n := len(file.bytes()); n != pageSize {
				t.Fatalf("writeback grew the file to %d", n)
			}
		}},
		{"last munmap writes back and cleans", func(t *testing.T) {
			m.CopyOut(addr+20, []byte("LAST"))
			o.SetDetachHook(func(vmas int) {
				if vmas == 0 {
					o.Writeback(0, -1)
				}
			})
			if err := m.MUnmap(addr, 3*pageSize); err != nil {
				t.Fatal(err)
			}
			if string(file.bytes()[20:24]) != "LAST" {
				t.Fatal("munmap did not write back")
			}
			if d := o.Dirty(); d != 0 {
				t.Fatalf("%d dirty pages with no mapping", d)
			}
			if !o.Unused() {
				t.Fatal("object still used")
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.do) {
			break
		}
	}
	m.DecUsers()
	o.DecRef()
	if u := m.mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

// A read-only shared mapping never dirties pages.
func TestCachedObjectReadOnlyMapping(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	file := &memBacking{data: bytes.Repeat([]byte("r"), pageSize)}
	o := NewCachedObject(m.mf, pageSize, file)
	defer o.DecRef()
	addr, err := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ, MaxProt: unix.PROT_READ, Object: o})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Populate(addr, pageSize); err != nil {
		t.Fatal(err)
	}
	if d := o.Dirty(); d != 0 {
		t.Fatalf("%d dirty pages", d)
	}
	o.Writeback(0, -1)
	if file.writes != 0 {
		t.Fatalf("%d writes to the file", file.writes)
	}
	m.MUnmap(addr, pageSize)
}

// Writeback cleans what it writes: a second one writes only pages
// written since.
func TestCachedObjectWritebackCleans(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	file := &memBacking{data: make([]byte, 4*pageSize)}
	o := NewCachedObject(m.mf, 4*pageSize, file)
	defer o.DecRef()
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: rw, MaxProt: rw, Object: o})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		writeAt    []uintptr
		wantWrites int
	}{
		{"two pages written", []uintptr{0, 2 * pageSize}, 2},
		{"nothing written since", nil, 0},
		{"one page written again", []uintptr{2*pageSize + 7}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, a := range tc.writeAt {
				if _, err := m.CopyOut(addr+a, []byte("w")); err != nil {
					t.Fatal(err)
				}
			}
			before := file.writes
			if err := m.SyncRange(addr, 4*pageSize); err != nil {
				t.Fatal(err)
			}
			if got := file.writes - before; got != tc.wantWrites {
				t.Fatalf("%d page writes, want %d", got, tc.wantWrites)
			}
		})
	}
	m.MUnmap(addr, 4*pageSize)
}
