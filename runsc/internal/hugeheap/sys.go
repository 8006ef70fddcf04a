package hugeheap

// madvise is madvise(2); it returns the errno, or 0.
func madvise(addr, n, advice uintptr) (errno uintptr) {
	if r := rawSyscall(sysMadvise, addr, n, advice); int64(r) < 0 {
		return -r
	}
	return 0
}

// contains reports whether s holds sub.
func contains(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if string(s[i:i+len(sub)]) == sub {
			return true
		}
	}
	return false
}
