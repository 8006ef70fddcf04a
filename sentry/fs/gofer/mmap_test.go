package gofer

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// TestSharedCache checks the cache a MAP_SHARED mapping gives a gofer
// file: reads and writes of the file and the cache's pages agree, size
// changes reach both, writeback reaches the host, and the cache goes once
// unused.
func TestSharedCache(t *testing.T) {
	dir := makeTree(t)
	host := filepath.Join(dir, "shared")
	if err := os.WriteFile(host, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := serveRW(t, dir)
	ctx := fstest.NewContext()
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/shared"}, fs.OpenOptions{Flags: unix.O_RDWR})
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	sm, ok := f.Impl().(mm.SharedMappable)
	if !ok {
		t.Fatal("a gofer file is not SharedMappable")
	}
	o, err := sm.SharedObject(mf)
	if err != nil {
		t.Fatal(err)
	}
	m := mm.New(nil, mf)
	defer m.DecUsers()
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(mm.MMapOpts{Length: 4096, Prot: rw, MaxProt: rw, Object: o})
	o.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	read := func(off int64, n int) string {
		t.Helper()
		b := make([]byte, n)
		k, err := f.PRead(ctx, b, off)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:k])
	}
	steps := []struct {
		name string
		do   func(t *testing.T)
	}{
		{"mapped write read through the file", func(t *testing.T) {
			m.CopyOut(addr+2, []byte("AB"))
			if got := read(0, 10); got != "01AB456789" {
				t.Fatalf("read %q", got)
			}
			if got := hostFile(t, host); got != "0123456789" {
				t.Fatalf("host has %q before writeback", got)
			}
		}},
		{"file write seen in the mapping", func(t *testing.T) {
			if _, err := f.PWrite(ctx, []byte("xyz"), 12); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 15)
			m.CopyIn(addr, b)
			if string(b) != "01AB456789\x00\x00xyz" {
				t.Fatalf("mapping reads %q", b)
			}
		}},
		{"fsync writes back", func(t *testing.T) {
			if err := f.Impl().(fs.Syncer).Sync(ctx, f, false); err != nil {
				t.Fatal(err)
			}
			if got := hostFile(t, host); got != "01AB456789\x00\x00xyz" {
				t.Fatalf("host has %q", got)
			}
		}},
		{"truncate reaches the mapping", func(t *testing.T) {
			vd := f.VirtualDentry()
			if err := vd.Dentry.Node().(fs.SetAttrNode).SetAttr(ctx, &fs.SetAttrOptions{Mask: fs.SetAttrSize, Size: 3}); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 5)
			m.CopyIn(addr, b)
			if string(b) != "01A\x00\x00" {
				t.Fatalf("mapping reads %q", b)
			}
			if got := hostFile(t, host); got != "01A" {
				t.Fatalf("host has %q", got)
			}
		}},
		{"munmap writes back and drops the cache", func(t *testing.T) {
			m.CopyOut(addr+1, []byte("Z"))
			if err := m.MUnmap(addr, 4096); err != nil {
				t.Fatal(err)
			}
			if got := hostFile(t, host); got != "0ZA" {
				t.Fatalf("host has %q", got)
			}
			n := f.Impl().(*regularFile).node
			n.dropCache(o) // what the hook started, done now
			n.cache.mu.RLock()
			gone := n.cache.obj == nil
			n.cache.mu.RUnlock()
			if !gone {
				t.Fatal("cache kept with nothing mapping it")
			}
			if got := read(0, 10); got != "0ZA" {
				t.Fatalf("read after the cache went: %q", got)
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.do) {
			break
		}
	}
}
