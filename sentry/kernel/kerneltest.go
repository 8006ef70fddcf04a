package kernel

import (
	"io"
	"log/slog"
	"time"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// NewTestKernel returns a kernel without a platform, clock or vDSO, for
// tests of system call handlers that never run application code. Its
// tasks come from NewTestTask.
func NewTestKernel(mf *mm.MemoryFile) *Kernel {
	k := &Kernel{
		MemFile:       mf,
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		rootUTS:       &UTSNamespace{inode: initUTSInode, hostname: "moat", domainname: "(none)"},
		tasks:         make(map[ThreadID]*Task),
		threadGroups:  make(map[ThreadID]*ThreadGroup),
		processGroups: make(map[ThreadID]*ProcessGroup),
		sessions:      make(map[ThreadID]*Session),
		exited:        make(chan struct{}),
		startTime:     time.Now(),
	}
	k.rootPID = k.newRootPIDNamespace()
	return k
}

// NewTestTask adds to k a process of one task that is never started: a
// child of parent (nil for a new session leader, like init), with address
// space m and credentials c. Handlers may be called on it directly.
func (k *Kernel) NewTestTask(parent *Task, m *mm.MemoryManager, c *auth.Credentials) *Task {
	t := &Task{
		k:           k,
		interruptCh: make(chan struct{}, 1),
		sigHandlers: &SignalHandlers{},
		altStack:    SignalStack{Flags: SS_DISABLE},
		startTime:   time.Now(),
	}
	t.creds.Store(c)
	t.mm.Store(m)
	k.mu.Lock()
	defer k.mu.Unlock()
	ns := k.rootPID
	if parent != nil {
		ns = parent.childPIDNSLocked()
	}
	ids, err := k.allocIDsLocked(ns)
	if err != nil {
		panic(err)
	}
	id := ids[0]
	t.tid, t.ids, t.pidns = id, ids, ns
	if parent == nil {
		tg := k.newThreadGroupLocked(id, t, nil, DefaultLimits())
		k.newSessionLocked(tg)
		if k.init == nil {
			k.init = tg
			k.rootPID.init = tg
		}
	} else {
		t.inheritAttrs(parent)
		tg := k.newThreadGroupLocked(id, t, parent.tg, parent.tg.limits.Copy())
		tg.tty = parent.tg.tty
		k.joinProcessGroupLocked(tg, parent.tg.pg)
	}
	if parent != nil && ids[ns.level] == 1 {
		ns.init = t.tg
	}
	t.tg.tasks[t] = struct{}{}
	k.mapTaskLocked(t)
	return t
}
