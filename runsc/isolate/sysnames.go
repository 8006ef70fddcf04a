package isolate

//go:generate go run mksysnames.go

import "fmt"

// SyscallName returns the name of syscall nr, or "syscall_N".
func SyscallName(nr uintptr) string {
	if n, ok := syscallNames[nr]; ok {
		return n
	}
	return fmt.Sprintf("syscall_%d", nr)
}

// SyscallNumber returns the number of the syscall called name.
func SyscallNumber(name string) (uintptr, bool) {
	for nr, n := range syscallNames {
		if n == name {
			return nr, true
		}
	}
	return 0, false
}
