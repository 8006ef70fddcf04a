package kernel

import (
	"fmt"
	"path"
	"time"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace"
)

// InitOptions describe the sandbox's first process.
type InitOptions struct {
	// Path is resolved from Cwd within the root.
	Path       string
	Argv, Envv []string
	Root, Cwd  fs.VirtualDentry
	Umask      uint32
	FDTable    *fs.FDTable
	Creds      *auth.Credentials
	Limits     *Limits
}

// CreateInit loads the first process, PID 1, without running it. Start
// runs it.
func (k *Kernel) CreateInit(o InitOptions) (*Task, error) {
	if o.Creds == nil {
		o.Creds = auth.NewRootCredentials()
	}
	if o.Limits == nil {
		o.Limits = DefaultLimits()
	}
	t := &Task{
		k:           k,
		pctx:        k.Platform.NewContext(),
		interruptCh: make(chan struct{}, 1),
		sigHandlers: &SignalHandlers{},
		altStack:    SignalStack{Flags: SS_DISABLE},
		startTime:   time.Now(),
		fpInit:      true,
	}
	t.creds.Store(o.Creds)
	t.fdTable.Store(o.FDTable)
	t.fsCtx.Store(fs.NewFSContext(o.Root, o.Cwd, o.Umask))

	k.mu.Lock()
	id, err := k.allocID()
	if err != nil {
		k.mu.Unlock()
		return nil, err
	}
	t.tid = id
	tg := k.newThreadGroupLocked(id, t, nil, o.Limits)
	tg.tasks[t] = struct{}{}
	k.newSessionLocked(tg)
	k.tasks[id] = t
	k.init = tg
	k.liveTasks++
	k.mu.Unlock()
	k.Futexes.ThreadStarted(uint32(id))

	vd, err := fs.Resolve(t, &fs.Lookup{Root: o.Root, Start: o.Cwd, Path: o.Path, FollowFinal: true})
	if err != nil {
		return nil, fmt.Errorf("resolving %q: %w", o.Path, err)
	}
	f, err := openExec(t, vd)
	if err != nil {
		return nil, fmt.Errorf("opening %q: %w", o.Path, err)
	}
	nm, res, exe, err := k.loadImage(t, f, o.Path, o.Argv, o.Envv)
	if err != nil {
		return nil, fmt.Errorf("loading %q: %w", o.Path, err)
	}
	t.mm.Store(nm)
	t.regs = ptrace.InitialRegisters()
	t.regs.Rip = uint64(res.Entry)
	t.regs.Rsp = uint64(res.Stack)
	t.SetName(path.Base(o.Path))
	t.exePath.Store(&exe)
	return t, nil
}
