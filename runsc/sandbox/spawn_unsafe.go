package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The vfork child reads what spawn built by address, long after the
// addresses were taken: each object is pinned, which also makes the
// compiler put it on the heap (a small one that does not escape would
// live on the goroutine's stack, which may move, leaving the child a
// freed address).

// cString returns a NUL-terminated copy of s, pinned by pin, and its
// address; the caller keeps the slice alive for as long as the address is
// used.
func cString(s string, pin *runtime.Pinner) ([]byte, uintptr) {
	b := append([]byte(s), 0)
	pin.Pin(&b[0])
	return b, uintptr(unsafe.Pointer(&b[0]))
}

// cStrings returns a NULL-terminated array of NUL-terminated copies of
// ss, pinned by pin, its address, and what must be kept alive for as long
// as it is used.
func cStrings(ss []string, pin *runtime.Pinner) (keep [][]byte, arr []uintptr, addr uintptr) {
	arr = make([]uintptr, 0, len(ss)+1)
	for _, s := range ss {
		b, p := cString(s, pin)
		keep = append(keep, b)
		arr = append(arr, p)
	}
	arr = append(arr, 0)
	pin.Pin(&arr[0])
	return keep, arr, uintptr(unsafe.Pointer(&arr[0]))
}

// cloneArgsSize is the size of struct clone_args that clone3 is given.
const cloneArgsSize = unsafe.Sizeof(cloneArgs{})

// sigsetAddr pins s with pin and returns its address.
func sigsetAddr(s *unix.Sigset_t, pin *runtime.Pinner) uintptr {
	pin.Pin(s)
	return uintptr(unsafe.Pointer(s))
}
