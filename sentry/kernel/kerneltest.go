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
	return &Kernel{
		MemFile:       mf,
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		rootUTS:       &UTSNamespace{inode: initUTSInode, hostname: "moat", domainname: "(none)"},
		tasks:         make(map[ThreadID]*Task),
		threadGroups:  make(map[ThreadID]*ThreadGroup),
		processGroups: make(map[ThreadID]*ProcessGroup),
		sessions:      make(map[ThreadID]*Session),
		nextID:        1,
		exited:        make(chan struct{}),
		startTime:     time.Now(),
	}
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
	id, err := k.allocID()
	if err != nil {
		panic(err)
	}
	t.tid = id
	if parent == nil {
		tg := k.newThreadGroupLocked(id, t, nil, DefaultLimits())
		k.newSessionLocked(tg)
		if k.init == nil {
			k.init = tg
		}
	} else {
		t.inheritAttrs(parent)
		tg := k.newThreadGroupLocked(id, t, parent.tg, parent.tg.limits.Copy())
		tg.tty = parent.tg.tty
		k.joinProcessGroupLocked(tg, parent.tg.pg)
	}
	t.tg.tasks[t] = struct{}{}
	k.tasks[id] = t
	return t
}
