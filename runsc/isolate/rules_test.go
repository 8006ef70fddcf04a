package isolate

import (
	"testing"

	"github.com/moat-sandbox/moat/gofer"
)

// TestGoferRulesCoverGoferSyscalls keeps the gofer's allowlist in step with
// what package gofer says it uses.
func TestGoferRulesCoverGoferSyscalls(t *testing.T) {
	checkCovers(t, GoferRules(), gofer.Syscalls)
	checkCovers(t, GoferWriteRules(), append(append([]string(nil), gofer.Syscalls...), gofer.WriteSyscalls...))
	// The read-only gofer changes nothing.
	ro := GoferRules()
	for _, name := range gofer.WriteSyscalls {
		nr, _ := SyscallNumber(name)
		if r, ok := ro[nr]; ok && r.Action == ActionAllow && name != "fstat" {
			t.Errorf("read-only GoferRules allows %s", name)
		}
	}
}

func checkCovers(t *testing.T, rules Rules, names []string) {
	t.Helper()
	for _, name := range names {
		nr, ok := SyscallNumber(name)
		if !ok {
			t.Errorf("gofer.Syscalls names %q, which is no amd64 syscall", name)
			continue
		}
		r, ok := rules[nr]
		if !ok {
			t.Errorf("gofer uses %s, missing from GoferRules", name)
			continue
		}
		if r.Action != ActionAllow {
			t.Errorf("gofer uses %s, which GoferRules does not allow (%v)", name, r.Action)
		}
	}
}
