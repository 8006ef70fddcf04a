package mm

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mincore is the host's mincore(2) on b, a page-aligned part of the
// Sentry's own mapping, with one byte of vec per page.
func mincore(b, vec []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(vec) < (len(b)+pageSize-1)/pageSize {
		return unix.EINVAL
	}
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return errno
	}
	return nil
}
