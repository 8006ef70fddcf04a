package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// cString returns a NUL-terminated copy of s and its address; the caller
// keeps the slice alive for as long as the address is used.
func cString(s string) ([]byte, uintptr) {
	b := append([]byte(s), 0)
	return b, uintptr(unsafe.Pointer(&b[0]))
}

// cStrings returns a NULL-terminated array of NUL-terminated copies of
// ss, its address, and what must be kept alive for as long as it is used.
func cStrings(ss []string) (keep [][]byte, arr []uintptr, addr uintptr) {
	arr = make([]uintptr, 0, len(ss)+1)
	for _, s := range ss {
		b, p := cString(s)
		keep = append(keep, b)
		arr = append(arr, p)
	}
	arr = append(arr, 0)
	return keep, arr, uintptr(unsafe.Pointer(&arr[0]))
}

// cloneArgsSize is the size of struct clone_args that clone3 is given.
const cloneArgsSize = unsafe.Sizeof(cloneArgs{})

// sigsetAddr returns the address of s.
func sigsetAddr(s *unix.Sigset_t) uintptr { return uintptr(unsafe.Pointer(s)) }
