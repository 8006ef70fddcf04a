package kernel

import "testing"

// TestTTYIDNamespaces checks the ids TIOCGPGRP and TIOCGSID report: a
// group or session as the caller's PID namespace numbers it, 0 when it is
// not visible there.
func TestTTYIDNamespaces(t *testing.T) {
	e := newNSTree(t)
	rootPG := int32(e.root.ThreadID()) // root's group, which the others joined
	if _, err := e.init.ThreadGroup().SetSID(); err != nil {
		t.Fatal(err)
	}
	innerSID := int32(e.init.ThreadID()) // root ids of init's session and group
	for _, tc := range []struct {
		name string
		task *Task
		id   int32
		want int32
	}{
		{"root's group from root", e.root, rootPG, rootPG},
		{"root's group from inside", e.kid, rootPG, 0},
		{"inner session from inside", e.kid, innerSID, 1},
		{"inner session from root", e.root, innerSID, innerSID},
		{"gone id from root", e.root, 999, 999},
		{"gone id from inside", e.kid, 999, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.task.TTYID(tc.id); got != tc.want {
				t.Errorf("TTYID(%d) = %d, want %d", tc.id, got, tc.want)
			}
		})
	}
}
