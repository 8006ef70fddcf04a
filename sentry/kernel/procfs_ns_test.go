package kernel

import (
	"testing"
)

// TestProcNamespaceShown checks which PID namespace a /proc numbers
// processes in for each reader: the mounter's (ForMounter), or without
// one the reader's container's, never a namespace nested inside it.
func TestProcNamespaceShown(t *testing.T) {
	e := newNSTree(t)
	rootNS := e.k.RootPIDNamespace()
	// A sub-container's namespace, made by the runtime.
	e.k.mu.Lock()
	ctr, err := rootNS.newChildLocked()
	e.k.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	ctr.container = true
	e.k.mu.Lock()
	nested, err := ctr.newChildLocked()
	e.k.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	withNS := func(ns *PIDNamespace) *Task { return &Task{k: e.k, pidns: ns} }

	boot := ProcKernel{K: e.k}
	cases := []struct {
		name   string
		p      ProcKernel
		reader *Task
		want   *PIDNamespace
	}{
		{"boot proc, root reader", boot, e.root, rootNS},
		{"boot proc, nested init", boot, e.init, rootNS},
		{"boot proc, nested kid", boot, e.kid, rootNS},
		{"boot proc, no task", boot, nil, rootNS},
		{"boot proc, sub-container", boot, withNS(ctr), ctr},
		{"boot proc, nested in sub-container", boot, withNS(nested), ctr},
		{"mounted by nested init, read by root", boot.ForMounter(e.init), e.root, e.inner},
		{"mounted by nested kid, read by kid", boot.ForMounter(e.kid), e.kid, e.inner},
		{"mounted by root, read by kid", boot.ForMounter(e.root), e.kid, rootNS},
		{"mounted by runtime, read by kid", boot.ForMounter(Background()), e.kid, rootNS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got *PIDNamespace
			if c.reader == nil {
				got = c.p.nsFor(Background())
			} else {
				got = c.p.nsFor(c.reader)
			}
			if got != c.want {
				t.Errorf("namespace at level %d, want level %d (or another of that level)", got.level, c.want.level)
			}
		})
	}
	// /proc/self of the nested kid in the boot /proc is its root id.
	if tgid, _, ok := boot.SelfIDs(e.kid); !ok || tgid != int32(e.kid.ThreadID()) {
		t.Errorf("boot /proc self of the nested kid = %d, %v; want %d", tgid, ok, e.kid.ThreadID())
	}
	// In a /proc the nested init mounted, it is 2; the root task has none.
	inner := boot.ForMounter(e.init)
	if tgid, _, ok := inner.SelfIDs(e.kid); !ok || tgid != 2 {
		t.Errorf("inner /proc self of the kid = %d, %v; want 2", tgid, ok)
	}
	if _, _, ok := inner.SelfIDs(e.root); ok {
		t.Error("the root task has a /proc/self in the nested namespace's /proc")
	}
	if pids := inner.PIDs(e.root); len(pids) != 2 || pids[0] != 1 || pids[1] != 2 {
		t.Errorf("inner /proc lists %v, want [1 2]", pids)
	}
}
