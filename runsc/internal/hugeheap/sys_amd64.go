package hugeheap

// System call numbers (amd64).
const (
	sysRead    = 0
	sysClose   = 3
	sysMadvise = 28
	sysOpenat  = 257
)

// rawSyscall makes system call nr, as syscall.RawSyscall does (without
// the runtime's syscall bookkeeping) but without importing syscall, whose
// initialisation this package's would have to wait for. It returns the
// kernel's raw result: a negative errno on failure.
//
//go:noescape
func rawSyscall(nr, a1, a2, a3 uintptr) (r uintptr)
