package kernel

import "testing"

// TestFutexCallerNamespace checks the translation the futex manager uses
// for PI futex words: a task of a nested namespace names threads by that
// namespace's ids; the root namespace's tasks by root ids.
func TestFutexCallerNamespace(t *testing.T) {
	e := newNSTree(t)
	c := e.kid.FutexCaller()
	if c.ID != uint32(e.kid.ThreadID()) {
		t.Errorf("caller ID = %d, want the root id %d", c.ID, e.kid.ThreadID())
	}
	if c.NS == nil {
		t.Fatal("a nested task's caller has no namespace")
	}
	for _, tc := range []struct {
		name      string
		got, want uint32
	}{
		{"kid's own tid", c.NS.TID(c.ID), 2},
		{"init's tid", c.NS.TID(uint32(e.init.ThreadID())), 1},
		{"root task invisible", c.NS.TID(uint32(e.root.ThreadID())), 0},
		{"tid 1 is init", c.NS.ManagerID(1), uint32(e.init.ThreadID())},
		{"tid 2 is the kid", c.NS.ManagerID(2), uint32(e.kid.ThreadID())},
		{"no tid 3", c.NS.ManagerID(3), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %d, want %d", tc.got, tc.want)
			}
		})
	}
	if rc := e.root.FutexCaller(); rc.NS != nil || rc.ID != uint32(e.root.ThreadID()) {
		t.Errorf("root caller = %+v, want its root id and no namespace", rc)
	}
}
