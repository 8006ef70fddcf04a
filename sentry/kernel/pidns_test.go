package kernel

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/futex"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// nsTree is a root task, a nested namespace's init (a child of root) and
// that init's child.
type nsTree struct {
	k               *Kernel
	root, init, kid *Task
	inner           *PIDNamespace
}

func newNSTree(t *testing.T) *nsTree {
	t.Helper()
	k, mf := newNSTestKernel(t)
	newTask := func(parent *Task) *Task {
		return k.NewTestTask(parent, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	}
	root := newTask(nil)
	if err := root.Unshare(0x20000000); err != nil { // CLONE_NEWPID
		t.Fatalf("Unshare(CLONE_NEWPID): %v", err)
	}
	inner := root.PIDNamespaceForChildren()
	init := newTask(root)
	kid := newTask(init)
	return &nsTree{k: k, root: root, init: init, kid: kid, inner: inner}
}

func TestPIDNamespaceIDs(t *testing.T) {
	e := newNSTree(t)
	rootNS := e.k.RootPIDNamespace()
	if e.inner == rootNS || e.inner.Parent() != rootNS || e.inner.Level() != 1 {
		t.Fatalf("inner namespace %+v", e.inner)
	}
	if e.inner.Inode() == rootNS.Inode() {
		t.Error("inner and root namespaces share an inode number")
	}
	for _, tc := range []struct {
		name string
		got  ThreadID
		want ThreadID
	}{
		{"root's pid", e.root.Pid(), 1},
		{"init's pid inside", e.init.Pid(), 1},
		{"init's ppid inside", e.init.Ppid(), 0},
		{"kid's pid inside", e.kid.Pid(), 2},
		{"kid's tid inside", e.kid.Tid(), 2},
		{"kid's ppid inside", e.kid.Ppid(), 1},
		{"init seen from root", rootNS.IDOfThreadGroup(e.init.ThreadGroup()), e.init.ThreadID()},
		{"root seen from inside", e.inner.IDOfThreadGroup(e.root.ThreadGroup()), 0},
		{"init's ppid from root", rootNS.ParentIDOf(e.init.ThreadGroup()), e.root.ThreadID()},
		{"kid's group inside", e.inner.ProcessGroupIDOf(e.kid.ThreadGroup()), 0},
		{"kid's group from root", rootNS.ProcessGroupIDOf(e.kid.ThreadGroup()), e.root.ThreadID()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %d, want %d", tc.got, tc.want)
			}
		})
	}
	if got := e.kid.LookupTask(1); got != e.init {
		t.Errorf("inside, 1 is %v, want the namespace's init", got)
	}
	if got := e.init.LookupThreadGroup(e.root.ThreadID()); got != nil && got == e.root.ThreadGroup() {
		t.Error("the root process is visible inside")
	}
	if got := e.root.LookupTask(e.kid.ThreadID()); got != e.kid {
		t.Errorf("root lookup of the kid's root id: %v", got)
	}
	if ids := rootNS.NSIDs(e.kid); len(ids) != 2 || ids[0] != e.kid.ThreadID() || ids[1] != 2 {
		t.Errorf("NSIDs from root %v", ids)
	}
	if ids := e.inner.NSIDs(e.root); ids != nil {
		t.Errorf("NSIDs of an invisible task %v", ids)
	}
}

func TestPIDNamespaceSetsidAndKill(t *testing.T) {
	e := newNSTree(t)
	sid, err := e.init.ThreadGroup().SetSID()
	if err != nil || sid != 1 {
		t.Fatalf("SetSID inside = %d, %v; want 1", sid, err)
	}
	if got := e.inner.SessionIDOf(e.init.ThreadGroup()); got != 1 {
		t.Errorf("session inside %d", got)
	}
	// Inside, only ids 1 and 2 exist: the kid's root id (3) names
	// nothing there.
	if id := e.kid.ThreadID(); id != 3 {
		t.Fatalf("kid's root id %d, want 3", id)
	}
	if err := e.kid.Kill(3, 0); err != errESRCH {
		t.Errorf("kill(3, 0) inside: %v, want ESRCH", err)
	}
	if err := e.kid.Kill(1, 0); err != nil {
		t.Errorf("kill(1, 0) inside: %v", err)
	}
	if !e.init.isNSInit() || e.kid.isNSInit() {
		t.Error("isNSInit wrong")
	}
}

func TestPIDNamespaceDepthLimit(t *testing.T) {
	k, _ := newNSTestKernel(t)
	k.mu.Lock()
	defer k.mu.Unlock()
	ns := k.rootPID
	for i := 1; i <= maxPIDNSLevel; i++ {
		var err error
		if ns, err = ns.newChildLocked(); err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
	}
	if _, err := ns.newChildLocked(); err == nil {
		t.Error("level 33 allowed")
	}
}

// TestPIDNamespaceInitWaitsForNamespace checks that an exited init is not
// waitable while a process of its namespace is still exiting: whoever
// reaps init must find the namespace empty (Linux's zap_pid_ns_processes).
func TestPIDNamespaceInitWaitsForNamespace(t *testing.T) {
	e := newNSTree(t)
	e.k.mu.Lock()
	e.k.taskStartedLocked(e.init)
	e.k.taskStartedLocked(e.kid)
	e.k.liveTasks += 2
	e.k.mu.Unlock()
	e.k.Futexes = futex.NewManager()
	e.init.pctx = fakePlatform{}.NewContext()
	e.kid.pctx = fakePlatform{}.NewContext()
	o := WaitOptions{Exited: true}

	e.init.exit(ExitedWith(7), true)
	if ready, any := e.root.peekWaitable(o); ready || !any {
		t.Fatalf("after init's exit, with its child alive: ready %v any %v; want a child, not ready", ready, any)
	}
	if !e.kid.ThreadGroup().groupExiting {
		t.Error("init's exit did not kill the rest of its namespace")
	}
	e.kid.exit(KilledBy(SIGKILL, false), true)
	if ready, _ := e.root.peekWaitable(o); !ready {
		t.Fatal("init not waitable once its namespace is empty")
	}
}
