package isolate

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompSetFilter calls seccomp(SECCOMP_SET_MODE_FILTER, flags, prog). With
// SECCOMP_FILTER_FLAG_TSYNC a positive return is the id of a thread that
// could not be synchronised.
func seccompSetFilter(prog []unix.SockFilter, flags uintptr) (uintptr, unix.Errno) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(&fprog)
	runtime.KeepAlive(prog)
	return r, errno
}
