package cmd

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/strace"
)

// TestSyscallTableCoversEveryNumber checks the table has an entry, with a
// support level, for every syscall number Linux assigns on amd64.
func TestSyscallTableCoversEveryNumber(t *testing.T) {
	rows := SyscallTable()
	have := map[uintptr]SyscallInfo{}
	for _, r := range rows {
		have[r.Number] = r
	}
	for n := uintptr(0); n < strace.MaxSyscall; n++ {
		name := strace.Name(n)
		if name == "" {
			continue
		}
		r, ok := have[n]
		if !ok {
			t.Errorf("syscall %d (%s) has no table entry", n, name)
			continue
		}
		switch r.Support {
		case "full", "partial":
			if r.Errno != "" {
				t.Errorf("%s is %s but has no handler", name, r.Support)
			}
		case "unimplemented":
			if r.Errno == "" {
				t.Errorf("%s is unimplemented but names no errno", name)
			}
		default:
			t.Errorf("%s: unknown support level %q", name, r.Support)
		}
	}
	for _, want := range []string{"read", "clone", "execve", "futex", "rt_sigreturn", "mmap", "clock_gettime"} {
		n, _ := strace.Number(want)
		if have[n].Support == "unimplemented" {
			t.Errorf("%s is unimplemented", want)
		}
	}
}
