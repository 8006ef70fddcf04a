package mm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/platform"
)

// fakeAS models what a stub process shows: per page, a memory-file page,
// a page of a host descriptor, or nothing.
type fakeAS struct {
	mf    *MemoryFile
	pages map[uintptr]stubPage
	// refuse makes MapHostFD fail (a host without pidfd_getfd access).
	refuse    bool
	hostMaps  int
	refused   int
	unmaps    int
	fileMaps  int
	lastProts map[uintptr]int
}

type stubPage struct {
	hostFD int // -1: the memory file
	off    uint64
	prot   int
}

func (a *fakeAS) MapFile(addr uintptr, off uint64, length uintptr, prot int) error {
	a.fileMaps++
	for p := uintptr(0); p < length; p += pageSize {
		a.pages[addr+p] = stubPage{hostFD: -1, off: off + uint64(p), prot: prot}
	}
	return nil
}

func (a *fakeAS) Unmap(addr, length uintptr) error {
	a.unmaps++
	for p := uintptr(0); p < length; p += pageSize {
		delete(a.pages, addr+p)
	}
	return nil
}

func (a *fakeAS) MapHostFD(addr, length uintptr, prot int, fd int, off uint64) error {
	if prot&unix.PROT_WRITE != 0 {
		return unix.EINVAL
	}
	if a.refuse {
		a.refused++
		return errors.New("refused")
	}
	a.hostMaps++
	for p := uintptr(0); p < length; p += pageSize {
		a.pages[addr+p] = stubPage{hostFD: fd, off: off + uint64(p), prot: prot}
	}
	return nil
}

func (a *fakeAS) Release() {}

// view returns the page at addr as the application would read it, and
// whether anything is mapped there.
func (a *fakeAS) view(t *testing.T, addr uintptr) ([]byte, stubPage, bool) {
	t.Helper()
	sp, ok := a.pages[addr]
	if !ok {
		return nil, sp, false
	}
	if sp.hostFD < 0 {
		return append([]byte(nil), a.mf.Bytes(sp.off, pageSize)...), sp, true
	}
	b := make([]byte, pageSize)
	if _, err := unix.Pread(sp.hostFD, b, int64(sp.off)); err != nil {
		t.Fatal(err)
	}
	return b, sp, true
}

type fakePlatform struct {
	mf     *MemoryFile
	refuse bool
	spaces []*fakeAS
}

func (p *fakePlatform) NewAddressSpace() (platform.AddressSpace, error) {
	as := &fakeAS{mf: p.mf, pages: map[uintptr]stubPage{}, refuse: p.refuse}
	p.spaces = append(p.spaces, as)
	return as, nil
}
func (p *fakePlatform) NewContext() platform.Context { return nil }
func (p *fakePlatform) MemoryFileFD() int            { return p.mf.FD() }

// hostFile is a file of the gofer's read-only tree as the memory manager
// sees it: cacheable and host-mappable (fd -1: not mappable).
type hostFile struct {
	f  *os.File
	fd int
}

func (h *hostFile) ReadAt(p []byte, off int64) (int, error) { return h.f.ReadAt(p, off) }
func (h *hostFile) Size() (int64, error) {
	st, err := h.f.Stat()
	return st.Size(), err
}
func (h *hostFile) CacheKey() any  { return h }
func (h *hostFile) HostMapFD() int { return h.fd }

const hostFilePages = 8

// newHostFile makes a file of hostFilePages pages, page i filled with byte
// 'a'+i.
func newHostFile(t *testing.T) (*hostFile, []byte) {
	t.Helper()
	return newHostFileN(t, hostFilePages)
}

func newHostFileN(t *testing.T, pages int) (*hostFile, []byte) {
	t.Helper()
	var data []byte
	for i := 0; i < pages; i++ {
		data = append(data, bytes.Repeat([]byte{byte('a' + i)}, pageSize)...)
	}
	p := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &hostFile{f: f, fd: int(f.Fd())}, data
}

func newHostMapMM(t *testing.T) (*MemoryManager, *fakePlatform) {
	t.Helper()
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePlatform{mf: mf}
	m := New(p, mf)
	if _, err := m.AddressSpace(); err != nil {
		t.Fatal(err)
	}
	return m, p
}

func (m *MemoryManager) fakeAS() *fakeAS { return m.as.(*fakeAS) }

// mapText maps the host file's pages [1, 1+n) at a fresh address, private,
// readable and executable, as a program's text.
func mapText(t *testing.T, m *MemoryManager, f File, n int) uintptr {
	t.Helper()
	addr, err := m.MMap(MMapOpts{Length: uintptr(n) * pageSize, Prot: unix.PROT_READ | unix.PROT_EXEC, Private: true, File: f, Offset: pageSize, Name: "/lib/lib.so"})
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func fault(t *testing.T, m *MemoryManager, addr uintptr, code int32) {
	t.Helper()
	if res, si := m.HandleFault(addr, code); res != FaultHandled {
		t.Fatalf("fault at %#x: outcome %d, si_code %d", addr, res, si)
	}
}

// wantView checks what the stub shows at addr: the file's page filePage,
// from the host descriptor when host is set.
func wantView(t *testing.T, as *fakeAS, addr uintptr, data []byte, filePage int, host bool) {
	t.Helper()
	got, sp, ok := as.view(t, addr)
	if !ok {
		t.Fatalf("nothing mapped at %#x", addr)
	}
	if (sp.hostFD >= 0) != host {
		t.Fatalf("page at %#x: host mapping %v, want %v", addr, sp.hostFD >= 0, host)
	}
	if want := data[filePage*pageSize : (filePage+1)*pageSize]; !bytes.Equal(got, want) {
		t.Fatalf("page at %#x shows %q..., want file page %d", addr, got[:4], filePage)
	}
}

func TestHostMapFirstFaultMapsWholeVMA(t *testing.T) {
	m, _ := newHostMapMM(t)
	f, data := newHostFile(t)
	addr := mapText(t, m, f, 4)
	as := m.fakeAS()
	if as.hostMaps != 0 {
		t.Fatal("the mapping was made before any fault")
	}
	fault(t, m, addr+2*pageSize, SEGV_MAPERR)
	if as.hostMaps != 1 || as.fileMaps != 0 {
		t.Fatalf("%d host maps, %d memory-file maps; want one host map", as.hostMaps, as.fileMaps)
	}
	for i := 0; i < 4; i++ {
		wantView(t, as, addr+uintptr(i)*pageSize, data, 1+i, true)
	}
	if sp := as.pages[addr]; sp.prot != unix.PROT_READ|unix.PROT_EXEC {
		t.Fatalf("host mapping prot %#x", sp.prot)
	}
	if m.mf.Used() != 0 {
		t.Fatalf("%d bytes of the memory file used by a host mapping", m.mf.Used())
	}
	// The Sentry's own reads see the same bytes (through the file cache).
	got := make([]byte, 2*pageSize)
	if _, err := m.CopyIn(addr+pageSize, got); err != nil || !bytes.Equal(got, data[2*pageSize:4*pageSize]) {
		t.Fatalf("CopyIn: %v", err)
	}
	// ... and leave the stub alone.
	wantView(t, as, addr+pageSize, data, 2, true)
	// /proc/[pid]/maps names the file; mincore sees the pages.
	if maps := m.Maps(); !strings.Contains(maps, "r-xp 00001000") || !strings.Contains(maps, "/lib/lib.so") {
		t.Fatalf("maps:\n%s", maps)
	}
	res, err := m.Resident(addr, 4*pageSize)
	if err != nil || !bytes.Equal(res, []byte{1, 1, 1, 1}) {
		t.Fatalf("mincore: %v %v", res, err)
	}
	// A write to the text faults as on Linux: SIGSEGV, SEGV_ACCERR.
	fault(t, m, addr, SEGV_ACCERR) // maps the cached page in place of the host's
	if res, si := m.HandleFault(addr, SEGV_ACCERR); res != FaultSIGSEGV || si != SEGV_ACCERR {
		t.Fatalf("write to text: outcome %d si_code %d", res, si)
	}
	wantView(t, as, addr, data, 1, false)
}

func TestHostMapFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fd     bool
		refuse bool
		prot   int
	}{
		{name: "no host descriptor", fd: false, prot: unix.PROT_READ},
		{name: "platform refuses", fd: true, refuse: true, prot: unix.PROT_READ},
		{name: "writable", fd: true, prot: unix.PROT_READ | unix.PROT_WRITE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, p := newHostMapMM(t)
			m.fakeAS().refuse = tc.refuse
			_ = p
			f, data := newHostFile(t)
			if !tc.fd {
				f.fd = -1
			}
			addr, err := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: tc.prot, Private: true, File: f})
			if err != nil {
				t.Fatal(err)
			}
			fault(t, m, addr+pageSize, SEGV_MAPERR)
			wantView(t, m.fakeAS(), addr+pageSize, data, 1, false)
			if m.fakeAS().hostMaps != 0 {
				t.Fatal("host-mapped")
			}
		})
	}
}

// TestHostMapRefusedOnce checks that a vma the platform refused to
// host-map is not tried again at each fault: a retry would take the pages
// of the vma mapped since out of the stub each time.
func TestHostMapRefusedOnce(t *testing.T) {
	m, _ := newHostMapMM(t)
	as := m.fakeAS()
	as.refuse = true
	f, data := newHostFileN(t, 2*populateChunk/pageSize+1)
	addr := mapText(t, m, f, 2*populateChunk/pageSize)
	fault(t, m, addr, SEGV_MAPERR)
	fault(t, m, addr+populateChunk, SEGV_MAPERR)
	if as.refused != 1 {
		t.Fatalf("MapHostFD tried %d times, want once", as.refused)
	}
	if as.unmaps != 0 {
		t.Fatalf("%d unmaps from the stub, want none", as.unmaps)
	}
	wantView(t, as, addr, data, 1, false)
	wantView(t, as, addr+populateChunk, data, 1+populateChunk/pageSize, false)
}

func TestHostMapMProtectToWriteFallsBack(t *testing.T) {
	m, _ := newHostMapMM(t)
	f, data := newHostFile(t)
	addr := mapText(t, m, f, 4)
	as := m.fakeAS()
	fault(t, m, addr, SEGV_MAPERR)
	if err := m.MProtect(addr+pageSize, 2*pageSize, unix.PROT_READ|unix.PROT_WRITE, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	// The changed pages left the stub; the others keep the host file.
	for i, want := range []bool{true, false, false, true} {
		if _, _, ok := as.view(t, addr+uintptr(i)*pageSize); ok != want {
			t.Fatalf("page %d mapped %v after mprotect, want %v", i, ok, want)
		}
	}
	if _, err := m.CopyOut(addr+pageSize, []byte("XYZ")); err != nil {
		t.Fatal(err)
	}
	fault(t, m, addr+pageSize, SEGV_MAPERR)
	got, sp, _ := as.view(t, addr+pageSize)
	if sp.hostFD >= 0 || sp.prot&unix.PROT_WRITE == 0 || string(got[:4]) != "XYZc" {
		t.Fatalf("after the write: %q host fd %d prot %#x", got[:4], sp.hostFD, sp.prot)
	}
	// Read-only again, it must still show the written bytes, not the file.
	if err := m.MProtect(addr+pageSize, 2*pageSize, unix.PROT_READ, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	fault(t, m, addr+pageSize, SEGV_MAPERR)
	if got, sp, _ := as.view(t, addr+pageSize); sp.hostFD >= 0 || string(got[:4]) != "XYZc" {
		t.Fatalf("after mprotect back: %q host fd %d", got[:4], sp.hostFD)
	}
	// A protection change that keeps it read-only maps the host file
	// again at the next fault, with the new protection.
	if err := m.MProtect(addr+3*pageSize, pageSize, unix.PROT_READ, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	fault(t, m, addr+3*pageSize, SEGV_MAPERR)
	wantView(t, as, addr+3*pageSize, data, 4, true)
	if sp := as.pages[addr+3*pageSize]; sp.prot != unix.PROT_READ {
		t.Fatalf("prot %#x after mprotect", sp.prot)
	}
	if file, _ := os.ReadFile(f.f.Name()); !bytes.Equal(file, data) {
		t.Fatal("the host file changed")
	}
}

func TestHostMapForkAndForcedWrite(t *testing.T) {
	m, _ := newHostMapMM(t)
	f, data := newHostFile(t)
	addr := mapText(t, m, f, 4)
	fault(t, m, addr, SEGV_MAPERR)
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	defer c.DecUsers()
	// The child's stub maps the text when it is created.
	if _, err := c.AddressSpace(); err != nil {
		t.Fatal(err)
	}
	cas := c.fakeAS()
	for i := 0; i < 4; i++ {
		wantView(t, cas, addr+uintptr(i)*pageSize, data, 1+i, true)
	}
	// A debugger's write into the parent's text (FOLL_FORCE) copies the
	// page: the stub must stop showing the file there.
	if _, err := m.ForceCopyOut(addr+2*pageSize+8, []byte("BREAK")); err != nil {
		t.Fatal(err)
	}
	as := m.fakeAS()
	if _, _, ok := as.view(t, addr+2*pageSize); ok {
		t.Fatal("the stub still shows the file under a forced write")
	}
	fault(t, m, addr+2*pageSize, SEGV_MAPERR)
	got, sp, _ := as.view(t, addr+2*pageSize)
	if sp.hostFD >= 0 || string(got[8:13]) != "BREAK" || sp.prot&unix.PROT_WRITE != 0 {
		t.Fatalf("after the forced write: %q host fd %d prot %#x", got[8:13], sp.hostFD, sp.prot)
	}
	wantView(t, as, addr+pageSize, data, 2, true)
	// The child still reads the file, and a protection change in the
	// parent never maps the host file over the written page again.
	wantView(t, cas, addr+2*pageSize, data, 3, true)
	if err := m.MProtect(addr, 4*pageSize, unix.PROT_READ, MProtectOpts{}); err != nil {
		t.Fatal(err)
	}
	fault(t, m, addr+2*pageSize, SEGV_MAPERR)
	if got, _, _ := as.view(t, addr+2*pageSize); string(got[8:13]) != "BREAK" {
		t.Fatalf("after mprotect: %q", got[8:13])
	}
	// MADV_DONTNEED gives the file back.
	if err := m.MAdviseDontNeed(addr+2*pageSize, pageSize); err != nil {
		t.Fatal(err)
	}
	fault(t, m, addr+2*pageSize, SEGV_MAPERR)
	wantView(t, as, addr+2*pageSize, data, 3, false)
}

func TestHostMapMUnmapAndMRemap(t *testing.T) {
	m, _ := newHostMapMM(t)
	f, data := newHostFile(t)
	addr := mapText(t, m, f, 4)
	as := m.fakeAS()
	fault(t, m, addr, SEGV_MAPERR)
	if err := m.MUnmap(addr+pageSize, pageSize); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := as.view(t, addr+pageSize); ok {
		t.Fatal("an unmapped page is still in the stub")
	}
	if res, _ := m.HandleFault(addr+pageSize, SEGV_MAPERR); res != FaultSIGSEGV {
		t.Fatal("a fault in the hole was handled")
	}
	wantView(t, as, addr, data, 1, true)
	wantView(t, as, addr+2*pageSize, data, 3, true)

	// Move the last two pages elsewhere: the old range leaves the stub,
	// the new one maps the right part of the file at its first fault.
	n, err := m.MRemap(addr+2*pageSize, 2*pageSize, 3*pageSize, MRemapOpts{MayMove: true, Fixed: true, NewAddr: addr + 16*pageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []uintptr{addr + 2*pageSize, addr + 3*pageSize, n} {
		if _, _, ok := as.view(t, a); ok {
			t.Fatalf("%#x mapped in the stub after mremap", a)
		}
	}
	fault(t, m, n+pageSize, SEGV_MAPERR)
	wantView(t, as, n, data, 3, true)
	wantView(t, as, n+pageSize, data, 4, true)
	wantView(t, as, addr, data, 1, true)
	// A MAP_FIXED mapping over host-mapped text replaces it in the stub.
	if _, err := m.MMap(MMapOpts{Addr: n, Length: pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true, Fixed: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := as.view(t, n); ok {
		t.Fatal("the replaced page still shows the file")
	}
	wantView(t, as, n+pageSize, data, 4, true)
}

func TestPrivateFileDataCopiedAround(t *testing.T) {
	m, _ := newHostMapMM(t)
	f, data := newHostFile(t)
	// Six pages within one cowAround window.
	addr, err := m.MMap(MMapOpts{Addr: 0x10000000, Fixed: true, Length: 6 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true, File: f})
	if err != nil {
		t.Fatal(err)
	}
	as := m.fakeAS()
	fault(t, m, addr+pageSize, SEGV_MAPERR)
	// One fault maps every page writable, as private copies.
	for i := 0; i < 6; i++ {
		a := addr + uintptr(i)*pageSize
		wantView(t, as, a, data, i, false)
		if sp := as.pages[a]; sp.prot&unix.PROT_WRITE == 0 || m.mf.RefCount(sp.off) != 1 {
			t.Fatalf("page %d: prot %#x, %d references", i, sp.prot, m.mf.RefCount(sp.off))
		}
	}
	if as.fileMaps != 1 {
		t.Fatalf("%d stub mappings, want 1", as.fileMaps)
	}
	// A second mapping of the file still reads the file (the cache was
	// not written).
	b, _ := m.MMap(MMapOpts{Length: 6 * pageSize, Prot: unix.PROT_READ, Private: true, File: f})
	m.CopyOut(addr, []byte("dirty"))
	got := make([]byte, 5)
	if _, err := m.CopyIn(b, got); err != nil || string(got) != "aaaaa" {
		t.Fatalf("the other mapping reads %q (%v)", got, err)
	}
	m.DecUsers()
	if u := m.mf.Used(); u != m.mf.CachedBytes() {
		t.Fatalf("%d bytes used, %d cached: leaked pages", u, m.mf.CachedBytes())
	}
}

func TestStubFilledOnCreate(t *testing.T) {
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePlatform{mf: mf}
	f, data := newHostFile(t)
	// What exec leaves before the first switch: text, and a stack with
	// argv written to it.
	m := New(p, mf)
	text := mapText(t, m, f, 2)
	stack, _ := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true})
	if _, err := m.CopyOut(stack+3*pageSize, []byte("argv")); err != nil {
		t.Fatal(err)
	}
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	defer c.DecUsers()
	for _, tc := range []struct {
		name      string
		m         *MemoryManager
		wantStack bool
	}{
		{"exec", m, true},
		{"fork", c, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.m.AddressSpace(); err != nil {
				t.Fatal(err)
			}
			as := tc.m.fakeAS()
			wantView(t, as, text+pageSize, data, 2, true)
			got, sp, ok := as.view(t, stack+3*pageSize)
			if ok != tc.wantStack {
				t.Fatalf("stack page mapped %v, want %v", ok, tc.wantStack)
			}
			// (Shared with the fork's copy, it is mapped read-only.)
			if ok && (string(got[:4]) != "argv" || sp.prot != unix.PROT_READ) {
				t.Fatalf("stack page %q prot %#x", got[:4], sp.prot)
			}
		})
	}
}

func TestMProtectRemapsWithoutFaults(t *testing.T) {
	m, _ := newHostMapMM(t)
	as := m.fakeAS()
	addr, _ := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true})
	m.CopyOut(addr, []byte("relro"))
	for _, tc := range []struct {
		name string
		prot int
		// want is the stub's protection after it, -1 for unmapped.
		want int
	}{
		{"read only stays mapped", unix.PROT_READ, unix.PROT_READ},
		{"writable again faults in", unix.PROT_READ | unix.PROT_WRITE, -1},
		{"none unmaps", unix.PROT_NONE, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Map the pages first (as a fault would).
			m.MProtect(addr, 4*pageSize, unix.PROT_READ|unix.PROT_WRITE, MProtectOpts{})
			for i := uintptr(0); i < 4; i++ {
				if _, ok := as.pages[addr+i*pageSize]; !ok {
					fault(t, m, addr+i*pageSize, SEGV_MAPERR)
				}
			}
			if err := m.MProtect(addr, 2*pageSize, tc.prot, MProtectOpts{}); err != nil {
				t.Fatal(err)
			}
			for i := uintptr(0); i < 2; i++ {
				sp, ok := as.pages[addr+i*pageSize]
				if tc.want < 0 && ok || tc.want >= 0 && (!ok || sp.prot != tc.want) {
					t.Fatalf("page %d: %+v mapped %v, want prot %d", i, sp, ok, tc.want)
				}
			}
			// The pages past the change keep their mapping.
			if sp := as.pages[addr+2*pageSize]; sp.prot != unix.PROT_READ|unix.PROT_WRITE {
				t.Fatalf("page past the change: %+v", sp)
			}
		})
	}
	b := make([]byte, 5)
	m.MProtect(addr, 4*pageSize, unix.PROT_READ, MProtectOpts{})
	if _, err := m.CopyIn(addr, b); err != nil || string(b) != "relro" {
		t.Fatalf("contents %q %v", b, err)
	}
	fault(t, m, addr, SEGV_MAPERR)
	if got, _, ok := as.view(t, addr); !ok || string(got[:5]) != "relro" {
		t.Fatalf("stub shows %q (mapped %v)", got[:5], ok)
	}
}

func TestPrivateFileDataWriteCopiesAround(t *testing.T) {
	m, _ := newHostMapMM(t)
	f, data := newHostFileN(t, 3*cowAround/pageSize)
	addr, err := m.MMap(MMapOpts{Addr: 0x10000000, Fixed: true, Length: 3 * cowAround, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true, File: f})
	if err != nil {
		t.Fatal(err)
	}
	as := m.fakeAS()
	// A read fault copies its window; so does one in the next window,
	// whose pages the first fault populated from the cache.
	for _, a := range []uintptr{addr, addr + cowAround + pageSize} {
		fault(t, m, a, SEGV_MAPERR)
		if sp := as.pages[a]; sp.prot&unix.PROT_WRITE == 0 || m.mf.RefCount(sp.off) != 1 {
			t.Fatalf("page %#x after a read fault: %+v, %d references", a, sp, m.mf.RefCount(sp.off))
		}
	}
	// After a fork the parent's pages are shared and read-only; its next
	// write copies the whole window and maps it writable at once.
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	defer c.DecUsers()
	if sp := as.pages[addr+cowAround+pageSize]; sp.prot&unix.PROT_WRITE != 0 {
		t.Fatalf("a page shared with the fork's copy mapped writable: %+v", sp)
	}
	maps := as.fileMaps
	fault(t, m, addr+cowAround+pageSize, SEGV_ACCERR)
	if as.fileMaps != maps+1 {
		t.Fatalf("%d stub mappings for one write fault", as.fileMaps-maps)
	}
	for a := addr + cowAround; a < addr+2*cowAround; a += pageSize {
		wantView(t, as, a, data, int((a-addr)/pageSize), false)
		if sp := as.pages[a]; sp.prot&unix.PROT_WRITE == 0 || m.mf.RefCount(sp.off) != 1 {
			t.Fatalf("page %#x: prot %#x, %d references", a, sp.prot, m.mf.RefCount(sp.off))
		}
	}
	// The fork's copy keeps its own pages.
	if _, err := m.CopyOut(addr+cowAround+pageSize, []byte("parent")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 6)
	c.CopyIn(addr+cowAround+pageSize, got)
	if string(got) == "parent" {
		t.Fatal("the fork's copy sees the parent's write")
	}
	if file, _ := os.ReadFile(f.f.Name()); !bytes.Equal(file, data) {
		t.Fatal("the host file changed")
	}
}
