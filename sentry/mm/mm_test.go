package mm

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

func newTestMM(t *testing.T) *MemoryManager {
	t.Helper()
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, mf)
}

func TestCopyInOutAndCOW(t *testing.T) {
	m := newTestMM(t)
	addr, err := m.MMap(MMapOpts{Length: 3 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("moat"), 2000) // spans pages
	if n, err := m.CopyOut(addr+100, data); err != nil || n != len(data) {
		t.Fatalf("CopyOut: %d %v", n, err)
	}
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyOut(addr+100, []byte("CHILD")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	m.CopyIn(addr+100, got)
	if string(got) != "moatm" {
		t.Fatalf("parent sees %q after child write", got)
	}
	c.CopyIn(addr+100, got)
	if string(got) != "CHILD" {
		t.Fatalf("child sees %q", got)
	}
	// The parent's write must not reach the child either.
	m.CopyOut(addr+4000, []byte("PARENT"))
	got = make([]byte, 6)
	c.CopyIn(addr+4000, got)
	if string(got) == "PARENT" {
		t.Fatal("child sees parent's write after fork")
	}
	c.DecUsers()
	m.DecUsers()
	if u := m.mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestFaultsAndProtections(t *testing.T) {
	m := newTestMM(t)
	addr, _ := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ, Private: true})
	if _, err := m.CopyOut(addr, []byte{1}); err != unix.EFAULT {
		t.Fatalf("write to read-only mapping: %v, want EFAULT", err)
	}
	if _, err := m.CopyIn(addr+pageSize, make([]byte, 1)); err != unix.EFAULT {
		t.Fatalf("read past mapping: %v, want EFAULT", err)
	}
	if err := m.MProtect(addr, pageSize, unix.PROT_READ|unix.PROT_WRITE, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CopyOut(addr, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := m.MProtect(addr, 2*pageSize, unix.PROT_READ, MProtectOpts{}); err != unix.ENOMEM {
		t.Fatalf("mprotect over a hole: %v, want ENOMEM", err)
	}
	if _, err := m.MMap(MMapOpts{Addr: addr, Length: pageSize, Prot: unix.PROT_READ, Private: true, NoReplace: true}); err != unix.EEXIST {
		t.Fatalf("MAP_FIXED_NOREPLACE over a mapping: %v", err)
	}
	if err := m.MUnmap(addr, pageSize); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CopyIn(addr, make([]byte, 1)); err != unix.EFAULT {
		t.Fatalf("read after munmap: %v", err)
	}
}

func TestMRemapMovesContents(t *testing.T) {
	m := newTestMM(t)
	addr, _ := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true})
	m.CopyOut(addr+pageSize, []byte("hello"))
	// Block in-place growth.
	m.MMap(MMapOpts{Addr: addr + 2*pageSize, Length: pageSize, Prot: unix.PROT_READ, Private: true, Fixed: true})
	n, err := m.MRemap(addr, 2*pageSize, 8*pageSize, MRemapOpts{MayMove: true})
	if err != nil || n == addr {
		t.Fatalf("mremap: %#x %v", n, err)
	}
	got := make([]byte, 5)
	if _, err := m.CopyIn(n+pageSize, got); err != nil || string(got) != "hello" {
		t.Fatalf("after move: %q %v", got, err)
	}
	if _, err := m.CopyIn(addr, got); err != unix.EFAULT {
		t.Fatal("old range still mapped")
	}
}

func TestSharedAnonSurvivesFork(t *testing.T) {
	m := newTestMM(t)
	addr, _ := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE})
	c, _ := m.Fork()
	c.CopyOut(addr, []byte("shared"))
	got := make([]byte, 6)
	m.CopyIn(addr, got)
	if string(got) != "shared" {
		t.Fatalf("parent sees %q", got)
	}
}

func TestBrk(t *testing.T) {
	m := newTestMM(t)
	Loader{M: m}.SetBrkStart(0x600000)
	if got := m.Brk(0x600000+3*pageSize+1, nil); got != 0x600000+3*pageSize+1 {
		t.Fatalf("brk = %#x", got)
	}
	if _, err := m.CopyOut(0x600000+3*pageSize, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if got := m.Brk(0x500000, nil); got != 0x600000+3*pageSize+1 {
		t.Fatalf("brk below start moved the break: %#x", got)
	}
	m.Brk(0x600000, nil)
	if _, err := m.CopyOut(0x600000, []byte{1}); err != unix.EFAULT {
		t.Fatal("heap still mapped after shrink")
	}
}
