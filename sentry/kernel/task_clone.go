package kernel

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// CloneOptions are the arguments of clone and clone3.
type CloneOptions struct {
	Flags      uint64
	ExitSignal Signal
	Stack      uintptr
	ParentTID  uintptr
	ChildTID   uintptr
	TLS        uintptr
	// PIDFD is where CLONE_PIDFD's descriptor number goes (an int).
	PIDFD uintptr
}

// cloneDetached is CLONE_DETACHED, which CLONE_PIDFD refuses.
const cloneDetached = 0x00400000

// Clone creates a task, as clone(2) does, and returns its id.
func (t *Task) Clone(o CloneOptions) (ThreadID, error) {
	f := o.Flags
	if f&unix.CLONE_THREAD != 0 && f&unix.CLONE_SIGHAND == 0 {
		return 0, errEINVAL
	}
	if f&unix.CLONE_SIGHAND != 0 && f&unix.CLONE_VM == 0 {
		return 0, errEINVAL
	}
	if f&unix.CLONE_FS != 0 && f&unix.CLONE_NEWNS != 0 {
		return 0, errEINVAL
	}
	if f&unix.CLONE_PARENT != 0 && t.isNSInit() {
		// A namespace's init may not make siblings.
		return 0, errEINVAL
	}
	if f&unix.CLONE_THREAD != 0 && (f&unix.CLONE_NEWPID != 0 || t.PIDNamespaceForChildren() != t.pidns) {
		// Threads share their process's namespace.
		return 0, errEINVAL
	}
	if f&unix.CLONE_PIDFD != 0 && f&cloneDetached != 0 {
		return 0, errEINVAL
	}
	childCreds, nsErr := t.cloneNamespaceCheck(f)
	if nsErr != nil {
		return 0, nsErr
	}
	// CLONE_PIDFD: the descriptor exists (and its number is written)
	// before the child; every failure below closes it again.
	var pidfd *PIDFD
	pidfdNum := int32(-1)
	if f&unix.CLONE_PIDFD != 0 {
		var err error
		if pidfd, pidfdNum, err = t.clonePIDFD(o.PIDFD, f&unix.CLONE_THREAD != 0); err != nil {
			return 0, err
		}
	}
	dropPIDFD := func() {
		if pidfdNum >= 0 {
			t.FDTable().Remove(pidfdNum)
		}
	}
	if f&unix.CLONE_THREAD != 0 && o.ExitSignal != 0 {
		// Linux ignores the exit signal of threads.
		o.ExitSignal = 0
	}

	// Address space.
	m := t.MemoryManager()
	if f&unix.CLONE_VM != 0 {
		m.IncUsers()
	} else {
		var err error
		if m, err = m.Fork(); err != nil {
			dropPIDFD()
			return 0, unix.ENOMEM
		}
		membarrierForked(t.MemoryManager(), m)
	}
	fdt := t.FDTable()
	if f&unix.CLONE_FILES != 0 {
		fdt.IncRef()
	} else {
		fdt = fdt.Fork()
		if pidfdNum >= 0 {
			// Linux installs the pidfd after copying the table.
			fdt.Remove(pidfdNum)
		}
	}
	fsc := t.FSContext()
	if f&unix.CLONE_FS == 0 {
		fsc = fsc.Fork()
	}

	// The FP state of the child starts as the parent's.
	var fp []byte
	if as, err := t.MemoryManager().AddressSpace(); err == nil {
		fp, _ = t.pctx.FPState(as)
	}

	k := t.k
	k.mu.Lock()
	if t.tg.groupExiting || t.tg.execing != nil {
		k.mu.Unlock()
		m.DecUsers()
		fdt.DecRef()
		dropPIDFD()
		return 0, syserror.ERESTARTNOINTR
	}
	if k.overNProcLocked(t) {
		k.mu.Unlock()
		m.DecUsers()
		fdt.DecRef()
		dropPIDFD()
		return 0, errEAGAIN
	}
	ns := t.pidns
	if f&unix.CLONE_THREAD == 0 {
		ns = t.childPIDNSLocked()
	}
	var err error
	if f&unix.CLONE_NEWPID != 0 {
		if ns != t.pidns {
			// unshare(CLONE_NEWPID) came first (copy_pid_ns).
			err = errEINVAL
		} else {
			ns, err = ns.newChildOwnedLocked(childCreds.UserNamespace)
		}
	}
	var ids []ThreadID
	if err == nil {
		ids, err = k.allocIDsLocked(ns)
		if err == errNoPIDs {
			err = errEAGAIN
		}
	}
	if err != nil {
		k.mu.Unlock()
		m.DecUsers()
		fdt.DecRef()
		dropPIDFD()
		return 0, err
	}
	id := ids[0]
	nt := &Task{
		k:            k,
		tid:          id,
		ids:          ids,
		pidns:        ns,
		pctx:         k.Platform.NewContext(),
		interruptCh:  make(chan struct{}, 1),
		sigMask:      t.sigMask,
		startTime:    time.Now(),
		fpCopy:       fp,
		pdeathSignal: 0,
	}
	nt.noNewPrivs.Store(t.NoNewPrivs())
	nt.seccomp.Store(t.seccomp.Load())
	nt.mm.Store(m)
	nt.fdTable.Store(fdt)
	nt.fsCtx.Store(fsc)
	nt.creds.Store(childCreds)
	nt.inheritAttrs(t)
	nt.inheritNamespaces(t, f)
	nt.inheritMountNamespace(t, fsc, f)
	name := t.Name()
	nt.name.Store(&name)
	if exe := t.exePath.Load(); exe != nil {
		nt.exePath.Store(exe)
	}
	if f&unix.CLONE_SIGHAND != 0 {
		nt.sigHandlers = t.sigHandlers
	} else {
		nt.sigHandlers = t.sigHandlers.copy()
	}
	if f&unix.CLONE_VM == 0 || f&unix.CLONE_VFORK != 0 {
		nt.altStack = t.altStack
	} else {
		nt.altStack = SignalStack{Flags: SS_DISABLE}
	}
	nt.regs = t.regs
	nt.regs.Rax = 0
	if o.Stack != 0 {
		nt.regs.Rsp = uint64(o.Stack)
	}
	if f&unix.CLONE_SETTLS != 0 {
		nt.regs.Fs_base = uint64(o.TLS)
	}
	if f&unix.CLONE_CHILD_CLEARTID != 0 {
		nt.clearChildTID = o.ChildTID
	}
	if f&unix.CLONE_VFORK != 0 {
		nt.vforkDone = make(chan struct{})
	}

	if f&unix.CLONE_THREAD != 0 {
		nt.tg = t.tg
	} else {
		parent, parentThread := t.tg, t
		if f&unix.CLONE_PARENT != 0 && t.tg.parent != nil {
			parent, parentThread = t.tg.parent, t.tg.parentThread
		}
		tg := k.newThreadGroupLocked(id, nt, parent, t.tg.limits.Copy())
		if pidfd != nil {
			tg.pidfdEvents = pidfd.q
		}
		tg.parentThread = parentThread
		tg.exitSignal = o.ExitSignal
		tg.procAttrs.inherit(&t.tg.procAttrs)
		tg.tty = t.tg.tty
		k.joinProcessGroupLocked(tg, t.tg.pg)
		if ids[ns.level] == 1 {
			ns.init = tg
		}
	}
	nt.tg.tasks[nt] = struct{}{}
	if pidfd != nil {
		pidfd.setTargetLocked(nt)
	}
	k.mapTaskLocked(nt)
	k.liveTasks++
	k.taskStartedLocked(nt)
	k.mu.Unlock()
	k.Futexes.ThreadStarted(uint32(id))

	// Thread ids are written before the child runs: the parent's view
	// of the id for the parent, the child's own for the child.
	vid := ids[t.pidns.level]
	var idb [4]byte
	binary.LittleEndian.PutUint32(idb[:], uint32(vid))
	if f&unix.CLONE_PARENT_SETTID != 0 {
		t.CopyOutBytes(o.ParentTID, idb[:])
	}
	if f&unix.CLONE_CHILD_SETTID != 0 {
		binary.LittleEndian.PutUint32(idb[:], uint32(ids[ns.level]))
		m.CopyOut(o.ChildTID, idb[:])
	}
	if f&unix.CLONE_THREAD == 0 {
		// An inherited finite RLIMIT_CPU needs the new group's ticker.
		nt.tg.CPULimitChanged()
	}
	// The child clears its vforkDone once it has closed it, so the parent
	// waits on its own copy: reading the field after the child ran would
	// race, and a nil channel never becomes ready.
	vforkDone := nt.vforkDone
	nt.Start()

	if vforkDone != nil {
		// The parent sleeps until the child execs or exits; only a kill
		// cuts that short. Other signals wait (pendingWork stays set).
		waitStart := time.Now()
		t.setRunState(StateDiskSleep)
		for done := false; !done; {
			select {
			case <-vforkDone:
				done = true
			case <-t.interruptCh:
				k.mu.Lock()
				done = t.tg.groupExiting
				k.mu.Unlock()
			}
		}
		t.setRunState(StateRunning)
		t.accountWait(waitStart)
	}
	return vid, nil
}

// newThreadGroupLocked makes a thread group led by leader.
// Preconditions: k.mu is held.
func (k *Kernel) newThreadGroupLocked(id ThreadID, leader *Task, parent *ThreadGroup, limits *Limits) *ThreadGroup {
	tg := &ThreadGroup{
		k:           k,
		id:          id,
		pidns:       leader.pidns,
		ids:         leader.ids,
		leader:      leader,
		tasks:       make(map[*Task]struct{}),
		parent:      parent,
		children:    make(map[*ThreadGroup]struct{}),
		exitSignal:  SIGCHLD,
		limits:      limits,
		pidfdEvents: new(waiter.Queue),
	}
	tg.timers = newGroupTimers(tg)
	leader.tg = tg
	k.mapThreadGroupLocked(tg)
	if parent != nil {
		parent.children[tg] = struct{}{}
	}
	return tg
}

// isNSInit reports whether t's process is the init of its PID namespace.
func (t *Task) isNSInit() bool {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.tg.isNSInitLocked()
}

// overNProcLocked reports whether t may not create another task because
// its real user already has RLIMIT_NPROC tasks (threads included), as
// Linux's copy_process: root and holders of CAP_SYS_RESOURCE or
// CAP_SYS_ADMIN are exempt. Preconditions: k.mu is held.
func (k *Kernel) overNProcLocked(t *Task) bool {
	c := t.Credentials()
	if c.RealUID == 0 || c.HasCapability(unix.CAP_SYS_RESOURCE) || c.HasCapability(unix.CAP_SYS_ADMIN) {
		return false
	}
	limit := t.tg.limits.Get(unix.RLIMIT_NPROC).Cur
	if limit == RLimInfinity {
		return false
	}
	var n uint64
	for _, o := range k.tasks {
		if o.Credentials().RealUID == c.RealUID {
			n++
		}
	}
	return n >= limit
}
