package hugeheap

import "unsafe"

// probe keeps frontier's allocation on the heap.
var probe *[8192]byte

// frontier returns the address of a fresh page-sized heap allocation: the
// runtime takes the span for it from the lowest free pages, so it lies at
// the heap's frontier (or in a hole below it, where pages were freed).
func frontier() uintptr {
	probe = new([8192]byte)
	p := uintptr(unsafe.Pointer(probe))
	probe = nil
	return p
}

// thpEnabled is the file that says when the host makes transparent huge
// pages, NUL-terminated.
const thpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled\x00"

// thpNever reports whether the host makes no transparent huge pages
// ("[never]"); a file that cannot be read says it does.
func thpNever() bool {
	const atFDCWD, oRDONLY, oCLOEXEC = ^uintptr(99), 0, 0o2000000
	fd := rawSyscall(sysOpenat, atFDCWD, uintptr(unsafe.Pointer(unsafe.StringData(thpEnabled))), oRDONLY|oCLOEXEC)
	if int64(fd) < 0 {
		return false
	}
	var buf [128]byte
	n := rawSyscall(sysRead, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	rawSyscall(sysClose, fd, 0, 0)
	return int64(n) > 0 && contains(buf[:n], "[never]")
}
