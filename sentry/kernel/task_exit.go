package kernel

import (
	"encoding/binary"
	"time"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// eventChildChanged is notified on a thread group's childEvents.
const eventChildChanged = waiter.EventIn

// Exit ends the calling task (exit(2)); with group, the whole thread group
// (exit_group(2)). It returns the error that ends the run loop.
func (t *Task) Exit(status WaitStatus, group bool) error {
	t.exit(status, group)
	return errTaskExited
}

// exit runs the task's exit on its own goroutine.
func (t *Task) exit(status WaitStatus, group bool) {
	k := t.k
	k.mu.Lock()
	if group {
		k.groupExitLocked(t.tg, status)
	}
	if t.exitState != taskRunning {
		k.mu.Unlock()
		return
	}
	t.exitState = taskExiting
	k.mu.Unlock()

	if t.robustList != 0 {
		k.Futexes.HandleRobustList(t.futexTarget(), t.robustList, uint32(t.Tid()))
	}
	k.Futexes.ThreadExited(uint32(t.tid))
	t.releaseChildTID()
	if t.vforkDone != nil {
		close(t.vforkDone)
		t.vforkDone = nil
	}
	if fdt := t.FDTable(); fdt != nil {
		fdt.DecRef()
	}
	t.releaseFS()
	// The last thread's exit closes the process's descriptors, and with
	// them its POSIX record locks, before the parent learns of it.
	k.mu.Lock()
	last := len(t.tg.tasks) == 1
	k.mu.Unlock()
	if last {
		fs.ReleaseOwnerPOSIXLocks(t.tg)
		t.tg.releaseSysVIPC()
	}
	t.tg.timesMu.Lock()
	t.tg.exitedUtime += t.Utime()
	t.tg.exitedStime += t.Stime()
	t.tg.exitedRusage.add(t.Rusage())
	t.tg.timesMu.Unlock()
	m := t.MemoryManager()
	t.tg.noteMaxRSS(m.MaxResidentSize())
	// The address space goes before the parent can learn of the exit
	// (exit_mm before exit_notify, as on Linux): a parent that has
	// waited sees SysV shm detached and shared memory released.
	m.DecUsers()

	k.mu.Lock()
	t.exitState = taskDead
	tg := t.tg
	delete(tg.tasks, t)
	if t != tg.leader {
		k.unmapTaskLocked(t)
	}
	if tg.groupStopPending && len(tg.tasks) > 0 && tg.stopCount == len(tg.tasks) && !tg.stopped {
		tg.stopped = true
		k.notifyParentLocked(tg, CLD_STOPPED, int32(tg.groupStopSignal))
	}
	processGone := len(tg.tasks) == 0
	if !processGone {
		k.parentThreadExitLocked(t)
	}
	if processGone {
		st := status
		if tg.groupExiting {
			st = tg.groupExitStatus
		}
		k.processExitLocked(tg, st)
	}
	k.liveTasks--
	k.taskGoneLocked(t)
	done := k.liveTasks == 0 && k.init != nil && k.init.exited
	k.mu.Unlock()
	if processGone && !last {
		// Threads that exited together each saw another still there.
		fs.ReleaseOwnerPOSIXLocks(tg)
		tg.releaseSysVIPC()
	}
	tg.notifyPIDFDs()
	if done {
		k.shutdown()
	}
}

// releaseChildTID clears and wakes the CLONE_CHILD_CLEARTID word, as
// Linux's mm_release does: only while another task shares the address
// space (the last thread of a process, or an exec with nobody else on
// the old image, leaves the word alone, even in shared memory).
func (t *Task) releaseChildTID() {
	if t.clearChildTID == 0 {
		return
	}
	addr := t.clearChildTID
	t.clearChildTID = 0
	if t.MemoryManager().Users() <= 1 {
		return
	}
	var zero [4]byte
	if _, err := t.CopyOutBytes(addr, zero[:]); err == nil {
		t.k.Futexes.Wake(t.futexTarget(), addr, false, ^uint32(0), 1)
	}
}

// processExitLocked turns tg into a zombie and tells its parent.
// Preconditions: k.mu is held.
func (k *Kernel) processExitLocked(tg *ThreadGroup, status WaitStatus) {
	tg.exited = true
	tg.status = status
	tg.timers.stopAll()
	k.sessionLeaderExitLocked(tg) // hangs up a leader's terminal (tty.go)
	nsInit := tg.isNSInitLocked() && tg.pidns != k.rootPID
	if nsInit {
		// A namespace's init takes the namespace with it: every
		// process left in it (and in namespaces nested in it) is
		// killed, and none may join.
		tg.pidns.initExited = true
		for _, o := range tg.pidns.tgs {
			if o != tg && !o.exited {
				k.groupExitLocked(o, KilledBy(SIGKILL, false))
			}
		}
	}
	// Orphans go to the nearest subreaper or init of the namespace;
	// those of a namespace whose init is gone are reaped by the kernel.
	for c := range tg.children {
		np := k.reaperFor(tg)
		c.parent = np
		c.parentThread = nil
		delete(tg.children, c)
		if np != nil {
			np.children[c] = struct{}{}
			if c.exited {
				np.childEvents.Notify(eventChildChanged)
				k.signalParentExitLocked(c)
			}
		} else if c.exited && tg != k.init {
			k.reapLocked(c)
		}
		if c.leader != nil && c.leader.pdeathSignal != 0 {
			k.sendSignalToTaskLocked(c.leader, NewSignalInfo(c.leader.pdeathSignal, SI_USER))
		}
		k.hangupOrphanedLocked(c, tg) // job control (tty.go)
	}
	k.hangupOrphanedLocked(tg, nil)
	if tg == k.init {
		// The namespace dies with its init.
		for _, o := range k.threadGroups {
			if o != tg && !o.exited {
				k.groupExitLocked(o, KilledBy(SIGKILL, false))
			}
		}
		k.exitStatus = status
		return
	}
	if nsInit && tg.pidns.live > 0 {
		// The parent hears of init's exit once the namespace is
		// empty (taskGoneLocked).
		tg.pidns.initExitPending = true
		return
	}
	k.signalParentExitLocked(tg)
}

// parentThreadExitLocked passes the children forked by t, a thread that
// exits while others of its process live on, to another thread of the
// process, sending each its PR_SET_PDEATHSIG signal: Linux's parent is the
// forking thread (prctl(2)). In a group exit nothing is done here, since
// the process's last thread hands its children on.
//
// Preconditions: k.mu is held; t is no longer in t.tg.tasks.
func (k *Kernel) parentThreadExitLocked(t *Task) {
	tg := t.tg
	if tg.groupExiting || len(tg.children) == 0 {
		return
	}
	var heir *Task
	for o := range tg.tasks {
		if o.exitState == taskRunning {
			heir = o
			break
		}
	}
	if heir == nil {
		return
	}
	for c := range tg.children {
		pt := c.parentThread
		if pt == nil {
			pt = tg.leader
		}
		if pt != t {
			continue
		}
		c.parentThread = heir
		if !c.exited && c.leader != nil && c.leader.pdeathSignal != 0 {
			k.sendSignalToTaskLocked(c.leader, NewSignalInfo(c.leader.pdeathSignal, SI_USER))
		}
	}
}

// reaperFor returns who adopts the children of tg: the nearest living
// subreaper among its ancestors of the same PID namespace, else the
// namespace's init; nil when tg is that init or the init is gone.
func (k *Kernel) reaperFor(tg *ThreadGroup) *ThreadGroup {
	ns := tg.pidns
	for p := tg.parent; p != nil && p.pidns == ns; p = p.parent {
		if p.childSubreaper && !p.exited {
			return p
		}
	}
	if ns == nil {
		ns = k.rootPID
	}
	if tg == ns.init || ns.init == nil || ns.initExited && ns != k.rootPID {
		return nil
	}
	return ns.init
}

// signalParentExitLocked sends the exit signal for tg to its parent, or
// reaps tg at once if the parent does not wait for children.
func (k *Kernel) signalParentExitLocked(tg *ThreadGroup) {
	p := tg.parent
	if p == nil {
		if !k.externalExitLocked(tg) && tg != k.init { // started from outside (external.go)
			// An orphan of a namespace whose init is gone.
			k.reapLocked(tg)
		}
		return
	}
	if tg.exitSignal != 0 && p.leader != nil {
		info := NewSignalInfo(tg.exitSignal, CLD_EXITED)
		info.SetPIDUID(int32(p.pidns.idOfTGLocked(tg)), tg.realUIDIn(p.userNamespace()))
		if tg.status.Exited() {
			info.SetStatus(int32(tg.status.ExitCode()))
		} else {
			code := int32(CLD_KILLED)
			if tg.status&0x80 != 0 {
				code = CLD_DUMPED
			}
			binary.LittleEndian.PutUint32(info.Raw[8:], uint32(code))
			info.SetStatus(int32(tg.status.Signal()))
		}
		u, s := tg.cpuTimesLocked()
		info.SetTimes(int64(u)/1e7, int64(s)/1e7)
		k.sendSignalToGroupLocked(p, tg.exitSignal, info)
	}
	// A parent ignoring SIGCHLD (or with SA_NOCLDWAIT) does not keep
	// zombies.
	if tg.exitSignal == SIGCHLD && p.leader != nil {
		a := p.leader.sigHandlers.actions[SIGCHLD]
		if a.Handler == SIG_IGN || a.Flags&SA_NOCLDWAIT != 0 {
			k.reapLocked(tg)
		}
	}
	p.childEvents.Notify(eventChildChanged)
}

// reapLocked removes a zombie. Preconditions: k.mu is held.
func (k *Kernel) reapLocked(tg *ThreadGroup) {
	if tg.reaped {
		return
	}
	tg.reaped = true
	if tg.pidfdMade {
		// Pollers of its pidfds see POLLHUP now. Notify takes the
		// queue's lock, which is held around readiness checks that take
		// k.mu: it must not run under k.mu.
		go tg.pidfdEvents.Notify(waiter.EventIn | waiter.EventRdNorm | waiter.EventHUp)
	}
	if tg.parent != nil {
		delete(tg.parent.children, tg)
		u, s := tg.cpuTimesLocked()
		cu, cs := tg.childUtime, tg.childStime
		tg.timesMu.Lock()
		ru := tg.exitedRusage
		ru.add(tg.childRusage)
		tg.timesMu.Unlock()
		tg.parent.timesMu.Lock()
		tg.parent.childRusage.add(ru)
		tg.parent.childUtime += time.Duration(u) + cu
		tg.parent.childStime += time.Duration(s) + cs
		tg.parent.childMaxRSS = max(tg.parent.childMaxRSS, tg.maxRSS, tg.childMaxRSS)
		tg.parent.timesMu.Unlock()
	}
	if tg.pg != nil {
		pg := tg.pg
		delete(pg.members, tg)
		if len(pg.members) == 0 {
			k.dropProcessGroupLocked(pg)
		}
		tg.pg = nil
	}
	k.unmapThreadGroupLocked(tg)
	if tg.leader != nil {
		k.unmapTaskLocked(tg.leader)
	}
}

// cpuTimesLocked is CPUTimes for an exited group.
func (tg *ThreadGroup) cpuTimesLocked() (u, s int64) {
	tg.timesMu.Lock()
	defer tg.timesMu.Unlock()
	return int64(tg.exitedUtime), int64(tg.exitedStime)
}

// shutdown ends the kernel once init and every task are gone.
func (k *Kernel) shutdown() {
	select {
	case <-k.exited:
	default:
		close(k.stopClock)
		close(k.exited)
	}
}
