package mm

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestForcedAccess(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	rw := unix.PROT_READ | unix.PROT_WRITE
	priv, err := m.MMap(MMapOpts{Length: pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CopyOut(priv, []byte("hidden")); err != nil {
		t.Fatal(err)
	}
	if err := m.MProtect(priv, pageSize, unix.PROT_NONE, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	// PROT_NONE: plain reads fault, forced ones read.
	b := make([]byte, 6)
	if _, err := m.CopyIn(priv, b); err != unix.EFAULT {
		t.Fatalf("CopyIn of PROT_NONE: %v, want EFAULT", err)
	}
	if n, err := m.ForceCopyIn(priv, b); n != 6 || err != nil || string(b) != "hidden" {
		t.Fatalf("ForceCopyIn = %d, %v, %q", n, err, b)
	}
	// Read-only private: forced writes go through copy on write.
	if err := m.MProtect(priv, pageSize, unix.PROT_READ, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CopyOut(priv, []byte("x")); err != unix.EFAULT {
		t.Fatalf("CopyOut to read-only: %v, want EFAULT", err)
	}
	if n, err := m.ForceCopyOut(priv, []byte("forced")); n != 6 || err != nil {
		t.Fatalf("ForceCopyOut = %d, %v", n, err)
	}
	if _, err := m.CopyIn(priv, b); err != nil || string(b) != "forced" {
		t.Fatalf("after ForceCopyOut: %q, %v", b, err)
	}
	// Read-only shared: never written.
	shared, err := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ, MaxProt: unix.PROT_READ})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ForceCopyOut(shared, []byte("x")); err != unix.EFAULT {
		t.Fatalf("ForceCopyOut to read-only shared: %v, want EFAULT", err)
	}
	// Unmapped: EFAULT either way.
	if _, err := m.ForceCopyIn(priv+16*pageSize, b); err != unix.EFAULT {
		t.Fatalf("ForceCopyIn of a hole: %v, want EFAULT", err)
	}
}
