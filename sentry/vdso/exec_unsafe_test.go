package vdso

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/vdso/internal/ccall"
)

// mappedVDSO is the vDSO mapped in the test process the way the Sentry
// maps it in an application: the vvar page, then Image (read+execute),
// plus a scratch page the vDSO writes its results into (memory Go never
// moves).
type mappedVDSO struct {
	mem     []byte
	vvar    []byte
	base    uintptr // address of the image
	scratch []byte
	scrAddr uintptr
}

func mapVDSO(t testing.TB) *mappedVDSO {
	t.Helper()
	size := VVarSize + len(Image) + 4096
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	copy(mem[VVarSize:], Image)
	if err := unix.Mprotect(mem[VVarSize:VVarSize+len(Image)], unix.PROT_READ|unix.PROT_EXEC); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	return &mappedVDSO{
		mem:     mem,
		vvar:    mem[:VVarSize],
		base:    addr + VVarSize,
		scratch: mem[VVarSize+len(Image):],
		scrAddr: addr + VVarSize + uintptr(len(Image)),
	}
}

// call calls the image's function name with a0..a2.
func (m *mappedVDSO) call(t *testing.T, name string, a0, a1, a2 uintptr) uintptr {
	t.Helper()
	off, ok := SymbolOffset(name)
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	return ccall.Call(m.base+off, a0, a1, a2)
}

// scr returns the address of scratch byte off.
func (m *mappedVDSO) scr(off int) uintptr { return m.scrAddr + uintptr(off) }

func (m *mappedVDSO) u64(off int) uint64 { return binary.LittleEndian.Uint64(m.scratch[off:]) }
func (m *mappedVDSO) u32(off int) uint32 { return binary.LittleEndian.Uint32(m.scratch[off:]) }

// fill sets the scratch page to a pattern, to see what the vDSO writes.
func (m *mappedVDSO) fill(b byte) {
	for i := range m.scratch {
		m.scratch[i] = b
	}
}

// clockGettime calls __vdso_clock_gettime(id, scratch) and returns its
// result and the time it stored, in ns.
func (m *mappedVDSO) clockGettime(t *testing.T, id int32) (int32, int64) {
	t.Helper()
	ret := int32(uint32(m.call(t, "__vdso_clock_gettime", uintptr(id), m.scr(0), 0)))
	return ret, int64(m.u64(0))*1e9 + int64(m.u64(8))
}

func ccallMonotonic(fn, ts uintptr) uintptr {
	return ccall.Call(fn, unix.CLOCK_MONOTONIC, ts, 0)
}
