package vdso

import (
	"fmt"
	"unsafe"
)

// The Go mirror must match vdso.c's struct vvar_data; a mismatch fails to
// compile (a negative or overflowing array length).
var (
	_ [unsafe.Sizeof(vvarClock{}) - 48]byte
	_ [48 - unsafe.Sizeof(vvarClock{})]byte
	_ [unsafe.Offsetof(vvarData{}.clocks) - 64]byte
	_ [64 - unsafe.Offsetof(vvarData{}.clocks)]byte
	_ [unsafe.Offsetof(vvarData{}.tscBase) - 8]byte
	_ [unsafe.Offsetof(vvarData{}.shift) - 16]byte
	_ [16 - unsafe.Offsetof(vvarData{}.shift)]byte
	_ [unsafe.Offsetof(vvarData{}.cpu) - 24]byte
	_ [24 - unsafe.Offsetof(vvarData{}.cpu)]byte
	_ [unsafe.Offsetof(vvarData{}.tzMinutesWest) - 32]byte
	_ [32 - unsafe.Offsetof(vvarData{}.tzMinutesWest)]byte
	_ [unsafe.Offsetof(vvarData{}.coarseRes) - 40]byte
	_ [40 - unsafe.Offsetof(vvarData{}.coarseRes)]byte
	_ [unsafe.Offsetof(vvarClock{}.mode) - 40]byte
	_ [40 - unsafe.Offsetof(vvarClock{}.mode)]byte
	_ [VVarSize - unsafe.Sizeof(vvarData{})]byte
)

// pageData views the start of a vvar page as the structure the vDSO reads.
// The page must be at least VVarSize bytes and 8-byte aligned (a page from
// the memory file is page aligned); anything else is a programming error.
func pageData(vvar []byte) *vvarData {
	if len(vvar) < VVarSize {
		panic(fmt.Sprintf("vdso: vvar page is %d bytes, want %d", len(vvar), VVarSize))
	}
	p := unsafe.Pointer(unsafe.SliceData(vvar))
	if uintptr(p)%8 != 0 {
		panic(fmt.Sprintf("vdso: vvar page at %p is not 8-byte aligned", p))
	}
	return (*vvarData)(p)
}
