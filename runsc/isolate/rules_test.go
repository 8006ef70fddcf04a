package isolate

import (
	"testing"

	"github.com/moat-sandbox/moat/gofer"
)

// TestGoferRulesCoverGoferSyscalls keeps the gofer's allowlist in step with
// what package gofer says it uses.
func TestGoferRulesCoverGoferSyscalls(t *testing.T) {
	rules := GoferRules()
	for _, name := range gofer.Syscalls {
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
