package mm

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// memFile is a cacheable in-memory file that counts reads.
type memFile struct {
	data  []byte
	reads int
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Size() (int64, error) { return int64(len(f.data)), nil }
func (f *memFile) CacheKey() any        { return f }

// TestFileCacheSharesPages maps one file privately in two address spaces:
// the file is read once, both see its contents, and a write stays private.
func TestFileCacheSharesPages(t *testing.T) {
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	f := &memFile{data: bytes.Repeat([]byte("0123456789abcdef"), 3*pageSize/16+10)}
	var ms []*MemoryManager
	var addrs []uintptr
	for i := 0; i < 2; i++ {
		m := New(nil, mf)
		a, err := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true, File: f})
		if err != nil {
			t.Fatal(err)
		}
		ms, addrs = append(ms, m), append(addrs, a)
	}
	got := make([]byte, 16)
	for i, m := range ms {
		if _, err := m.CopyIn(addrs[i]+3*pageSize, got); err != nil || string(got) != "0123456789abcdef" {
			t.Fatalf("mapping %d reads %q, %v", i, got, err)
		}
	}
	if f.reads != 1 {
		t.Errorf("file read %d times, want once", f.reads)
	}
	if _, err := ms[0].CopyOut(addrs[0]+3*pageSize, []byte("PRIVATE")); err != nil {
		t.Fatal(err)
	}
	ms[1].CopyIn(addrs[1]+3*pageSize, got)
	if string(got[:7]) != "0123456" {
		t.Errorf("a write to one private mapping reached the other: %q", got)
	}
	// Past the end of the file reads zero, within the last page.
	tail := make([]byte, 8)
	ms[1].CopyIn(addrs[1]+3*pageSize+200, tail)
	if !bytes.Equal(tail, make([]byte, 8)) {
		t.Errorf("bytes past EOF read %q", tail)
	}
	for _, m := range ms {
		m.DecUsers()
	}
	if used, cached := mf.Used(), mf.CachedBytes(); used != cached {
		t.Errorf("after both address spaces went, %d bytes used, %d cached", used, cached)
	}
}

// TestFileCacheEvictsUnused fills the cache with one file's chunks, drops
// its mappings, and maps another file: the unused chunks make room.
func TestFileCacheEvictsUnused(t *testing.T) {
	old := maxCacheBytes
	maxCacheBytes = 2 * cacheChunk
	defer func() { maxCacheBytes = old }()
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	a := &memFile{data: bytes.Repeat([]byte("a"), 2*cacheChunk)}
	b := &memFile{data: bytes.Repeat([]byte("b"), 2*cacheChunk)}
	read := func(f *memFile) *MemoryManager {
		m := New(nil, mf)
		addr, err := m.MMap(MMapOpts{Length: 2 * cacheChunk, Prot: unix.PROT_READ, Private: true, File: f})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2*cacheChunk)
		if _, err := m.CopyIn(addr, buf); err != nil || buf[len(buf)-1] != f.data[0] {
			t.Fatalf("CopyIn: %v", err)
		}
		return m
	}
	ma := read(a)
	if got := mf.CachedBytes(); got != 2*cacheChunk {
		t.Fatalf("cached %d after the first file", got)
	}
	// While a is mapped, b cannot use the cache.
	mb := read(b)
	if got := mf.CachedBytes(); got != 2*cacheChunk {
		t.Fatalf("cached %d while full and in use", got)
	}
	mb.DecUsers()
	ma.DecUsers()
	// Now a's chunks are unused: b's take their place.
	mb = read(b)
	if got := mf.CachedBytes(); got != 2*cacheChunk {
		t.Fatalf("cached %d after eviction", got)
	}
	reads := b.reads
	mb2 := read(b)
	if b.reads != reads {
		t.Fatal("b was read again instead of served from the cache")
	}
	mb.DecUsers()
	mb2.DecUsers()
	if u, c := mf.Used(), mf.CachedBytes(); u != c {
		t.Fatalf("%d bytes used beyond the %d cached", u, c)
	}
}

// TestFileCacheTailStaysHole reads a chunk of a file shorter than the chunk:
// the pages the file covers hold data, the rest of the chunk stays holes
// (populating the chunk before the read must not reach past the file).
func TestFileCacheTailStaysHole(t *testing.T) {
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int
	}{
		{"partial last page", 3*pageSize + 10},
		{"whole pages", 5 * pageSize},
		{"one byte", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &memFile{data: bytes.Repeat([]byte("x"), tc.size)}
			m := New(nil, mf)
			defer m.DecUsers()
			addr, err := m.MMap(MMapOpts{Length: 8 * pageSize, Prot: unix.PROT_READ, Private: true, File: f})
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			if _, err := m.CopyIn(addr, b); err != nil || b[0] != 'x' {
				t.Fatalf("CopyIn = %q, %v", b, err)
			}
			mf.cache.mu.Lock()
			off, ok := mf.cache.chunks[chunkKey{f, 0}]
			mf.cache.mu.Unlock()
			if !ok {
				t.Fatal("chunk 0 not cached")
			}
			vec := make([]byte, cacheChunk/pageSize)
			if err := mf.Resident(off, cacheChunk, vec); err != nil {
				t.Fatal(err)
			}
			filePages := (tc.size + pageSize - 1) / pageSize
			for i, r := range vec {
				want := byte(0)
				if i < filePages {
					want = 1
				}
				if r != want {
					t.Errorf("page %d (file has %d pages): resident %d, want %d", i, filePages, r, want)
				}
			}
		})
	}
}
