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

// TestProcessRefAndPIDTranslation checks the ids a reader gets for a
// process recorded by SysV shm (ProcessRef) and by socket credentials
// (PIDToRoot, PIDFromRoot).
func TestProcessRefAndPIDTranslation(t *testing.T) {
	e := newNSTree(t)
	initRoot := int32(e.init.ThreadID())
	for _, tc := range []struct {
		name      string
		got, want int32
	}{
		{"init's ref inside", e.init.ProcessRef().IDFor(e.kid), 1},
		{"init's ref from root", e.init.ProcessRef().IDFor(e.root), initRoot},
		{"root's ref inside", e.root.ProcessRef().IDFor(e.kid), 0},
		{"ref without a task reader", e.kid.ProcessRef().IDFor(nil), int32(e.kid.ThreadID())},
		{"inside 1 to root", e.kid.PIDToRoot(1), initRoot},
		{"inside unknown to root", e.kid.PIDToRoot(77), 0},
		{"root id read inside", e.kid.PIDFromRoot(initRoot), 1},
		{"root task read inside", e.kid.PIDFromRoot(int32(e.root.ThreadID())), 0},
		{"gone id read inside", e.kid.PIDFromRoot(999), 0},
		{"gone id read at root", e.root.PIDFromRoot(999), 999},
		{"root's own", e.kid.RootThreadGroupID(), int32(e.kid.ThreadID())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %d, want %d", tc.got, tc.want)
			}
		})
	}
}
