package hugeheap

// madvise is madvise(2), made without the runtime's syscall bookkeeping
// (as syscall.RawSyscall) and without importing syscall, whose
// initialisation would make this package's wait for it. It returns the
// errno, or 0.
//
//go:noescape
func madvise(addr, n, advice uintptr) (errno uintptr)
