//go:build !amd64

package hugeheap

import "syscall"

// madvise is madvise(2); it returns the errno, or 0.
func madvise(addr, n, advice uintptr) (errno uintptr) {
	_, _, e := syscall.RawSyscall(syscall.SYS_MADVISE, addr, n, advice)
	return uintptr(e)
}
