//go:build !amd64

package hugeheap

import "syscall"

// System call numbers.
const (
	sysRead    = syscall.SYS_READ
	sysClose   = syscall.SYS_CLOSE
	sysMadvise = syscall.SYS_MADVISE
	sysOpenat  = syscall.SYS_OPENAT
)

// rawSyscall makes system call nr and returns the kernel's raw result: a
// negative errno on failure.
func rawSyscall(nr, a1, a2, a3 uintptr) (r uintptr) {
	r, _, e := syscall.RawSyscall(nr, a1, a2, a3)
	if e != 0 {
		return -uintptr(e)
	}
	return r
}
