package kernel

import (
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace"
)

// Processes started from outside the sandbox (runsc exec).
//
// As a process that setns(2) into a PID namespace, such a process has no
// parent inside the namespace: its parent pid is 0, no one there gets
// SIGCHLD for it or can wait for it, and it leads a session of its own.
// Its children are reparented to init when it exits, as anyone's. The
// kernel reaps it itself when it exits and keeps its status in its
// ExternalProcess, for the caller outside to read. Like every process, it
// dies with init.
//
// Kernel.external maps the live ones to their ExternalProcess, guarded
// by Kernel.mu.

// ErrInitExited is CreateProcess's error once init has exited: the PID
// namespace is gone.
var ErrInitExited = errors.New("the sandbox's init has exited")

// ExternalProcess is a process CreateProcess made.
type ExternalProcess struct {
	tg     *ThreadGroup
	leader *Task
	// done is closed when the process has exited; status is then its
	// wait status.
	done   chan struct{}
	status WaitStatus
}

// PID returns the process's pid.
func (p *ExternalProcess) PID() ThreadID { return p.tg.id }

// ThreadGroup returns the process.
func (p *ExternalProcess) ThreadGroup() *ThreadGroup { return p.tg }

// Leader returns the process's first task, for settings that must be
// made before Start (no_new_privs).
func (p *ExternalProcess) Leader() *Task { return p.leader }

// PIDNamespace returns the PID namespace the process lives in (a new one
// with InitOptions.NewPIDNamespace, where the process is pid 1).
func (p *ExternalProcess) PIDNamespace() *PIDNamespace { return p.leader.pidns }

// Start runs the process.
func (p *ExternalProcess) Start() { p.leader.Start() }

// Done is closed when the process has exited.
func (p *ExternalProcess) Done() <-chan struct{} { return p.done }

// Status returns the process's wait status once Done is closed.
func (p *ExternalProcess) Status() WaitStatus {
	<-p.done
	return p.status
}

// Signal sends sig to the process from outside the sandbox.
func (p *ExternalProcess) Signal(sig Signal) error {
	return p.tg.SendSignal(NewSignalInfo(sig, SI_USER))
}

// CreateProcess loads a new process into the running sandbox, without
// running it (Start does): a session leader with no parent, in the PID
// namespace of init (or the one o names), init having to be alive. With
// o.NewPIDNamespace it is the init of a new PID namespace, child of the
// root one: its orphans go to it, and its exit kills the rest of the
// namespace; Done is closed once the namespace is empty.
func (k *Kernel) CreateProcess(o InitOptions) (*ExternalProcess, error) {
	t, err := k.newProcess(o, false)
	if err != nil {
		return nil, err
	}
	return k.registerExternal(t)
}

func (k *Kernel) registerExternal(t *Task) (*ExternalProcess, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := &ExternalProcess{tg: t.tg, leader: t, done: make(chan struct{})}
	if k.external == nil {
		k.external = make(map[*ThreadGroup]*ExternalProcess)
	}
	k.external[t.tg] = p
	return p, nil
}

// externalExitLocked reaps tg, which has exited with no parent, and tells
// its ExternalProcess, if it has one (reporting whether it had).
// Preconditions: k.mu is held.
func (k *Kernel) externalExitLocked(tg *ThreadGroup) bool {
	p := k.external[tg]
	if p == nil {
		return false
	}
	delete(k.external, tg)
	p.status = tg.status
	k.reapLocked(tg)
	close(p.done)
	return true
}

// newProcess makes a process of one task from o, loaded but not started:
// the PID namespace's init when init is set, else a parentless process
// of the namespace (CreateProcess). Either leads a new session. On error
// nothing of it is left.
func (k *Kernel) newProcess(o InitOptions, init bool) (*Task, error) {
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
	t.utsns.Store(o.UTSNamespace)
	t.ipcns.Store(o.IPCNamespace)
	t.fdTable.Store(o.FDTable)
	t.fsCtx.Store(fs.NewFSContext(o.Root, o.Cwd, o.Umask))
	t.setInitialMountNamespace(o.Root)

	k.mu.Lock()
	if init && k.init != nil {
		k.mu.Unlock()
		t.pctx.Release()
		return nil, errors.New("init exists already")
	}
	if !init && (k.init == nil || k.init.exited) {
		k.mu.Unlock()
		t.pctx.Release()
		return nil, ErrInitExited
	}
	ns := k.rootPID
	var err error
	if !init {
		switch {
		case o.NewPIDNamespace:
			if ns, err = k.rootPID.newChildLocked(); err == nil {
				ns.container = true
			}
		case o.PIDNamespace != nil:
			ns = o.PIDNamespace
			if ns.initExited || ns.init == nil && ns != k.rootPID {
				err = ErrInitExited
			}
		}
		if err != nil {
			k.mu.Unlock()
			t.pctx.Release()
			return nil, err
		}
	}
	ids, err := k.allocIDsLocked(ns)
	if err != nil {
		k.mu.Unlock()
		t.pctx.Release()
		return nil, err
	}
	id := ids[0]
	t.tid, t.ids, t.pidns = id, ids, ns
	tg := k.newThreadGroupLocked(id, t, nil, o.Limits)
	tg.tasks[t] = struct{}{}
	k.newSessionLocked(tg)
	k.mapTaskLocked(t)
	if init {
		k.init = tg
		k.rootPID.init = tg
	} else if ids[ns.level] == 1 {
		ns.init = tg
	}
	k.liveTasks++
	k.taskStartedLocked(t)
	k.mu.Unlock()
	k.Futexes.ThreadStarted(uint32(id))

	ok := false
	defer func() {
		if !ok {
			k.abandonProcess(t, init)
		}
	}()
	vd, err := fs.Resolve(t, &fs.Lookup{Root: o.Root, Start: o.Cwd, Path: o.Path, FollowFinal: true})
	if err != nil {
		return nil, fmt.Errorf("resolving %q: %w", o.Path, err)
	}
	f, err := openExec(t, vd)
	if err != nil {
		return nil, fmt.Errorf("opening %q: %w", o.Path, err)
	}
	nm, res, exe, dump, err := k.loadImage(t, f, o.Path, o.Argv, o.Envv)
	if err != nil {
		return nil, fmt.Errorf("loading %q: %w", o.Path, err)
	}
	t.tg.procAttrs.resetForExec(dump.nonDumpable, dump.userNS)
	t.mm.Store(nm)
	t.regs = ptrace.InitialRegisters()
	t.regs.Rip = uint64(res.Entry)
	t.regs.Rsp = uint64(res.Stack)
	t.SetName(path.Base(o.Path))
	t.exePath.Store(&exe)
	ok = true
	return t, nil
}

// abandonProcess undoes newProcess's registration of t, which never ran,
// and drops the descriptor table it was given.
func (k *Kernel) abandonProcess(t *Task, init bool) {
	k.mu.Lock()
	tg := t.tg
	k.unmapTaskLocked(t)
	k.unmapThreadGroupLocked(tg)
	if pg := tg.pg; pg != nil {
		delete(pg.members, tg)
		if len(pg.members) == 0 {
			k.dropProcessGroupLocked(pg)
		}
		tg.pg = nil
	}
	tg.timers.stopAll()
	if init && k.init == tg {
		k.init = nil
		k.rootPID.init = nil
	}
	if ns := t.pidns; ns != nil && ns != k.rootPID && ns.init == tg {
		// A namespace made for the process dies with it.
		ns.init = nil
		ns.initExited = true
	}
	k.liveTasks--
	for n := t.pidns; n != nil; n = n.parent {
		n.live--
	}
	k.mu.Unlock()
	k.Futexes.ThreadExited(uint32(t.tid))
	t.pctx.Release()
	// The descriptor table was handed over: its host descriptors (a
	// caller's stdio) must not stay open.
	if fdt := t.FDTable(); fdt != nil {
		fdt.DecRef()
	}
}

// SignalFromAncestor sends sig to the process as Linux sends a signal
// from an ancestor PID namespace to that namespace's init, which is what
// the process stands for when it is a container's init (runsc kill of a
// container that joined a sandbox): SIGKILL and SIGSTOP always act; any
// other signal is dropped if the process has the default action for it
// and does not block it (SIGTERM to a plain sleep does nothing). For the
// init of a PID namespace of its own (InitOptions.NewPIDNamespace) the
// signal comes as from the root namespace, so SIGKILL and SIGSTOP get
// past its protection.
func (p *ExternalProcess) SignalFromAncestor(sig Signal) error {
	k := p.tg.k
	k.mu.Lock()
	defer k.mu.Unlock()
	l := p.tg.leader
	if l == nil {
		return nil
	}
	if sig != SIGKILL && sig != SIGSTOP && l.sigMask&SignalSetOf(sig) == 0 && l.sigHandlers.actions[sig].Handler == SIG_DFL {
		return nil
	}
	if k.init != nil && k.init.leader != nil && k.init != p.tg {
		k.signalSender = k.init.leader
		defer func() { k.signalSender = nil }()
	}
	return k.sendSignalToGroupLocked(p.tg, sig, NewSignalInfo(sig, SI_USER))
}
