package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/syserror"
)

// handleSignals runs when the task is about to return to application code
// with pendingWork set. It stops for job control, exits when the group
// exits, and delivers at most one signal to a handler per call (the frame
// then runs; the next return checks again).
// It returns false when the task has exited.
func (t *Task) handleSignals() bool {
	k := t.k
	for {
		k.mu.Lock()
		if t.tg.groupExiting || t.exitState != taskRunning || (t.tg.execing != nil && t.tg.execing != t) {
			status := t.tg.groupExitStatus
			// A sibling's execve ends this thread alone (de_thread):
			// the process goes on in the exec'ing thread.
			group := t.tg.groupExiting || t.exitState != taskRunning
			k.mu.Unlock()
			t.exit(status, group)
			return false
		}
		if t.tg.groupStopPending {
			t.participateInStopLocked()
			continue
		}
		info := t.pending.dequeue(t.sigMask)
		if info == nil {
			info = t.tg.pending.dequeue(t.sigMask)
		}
		if info == nil {
			t.restoreSavedMaskLocked()
			k.mu.Unlock()
			t.restartIfInterrupted(false, 0)
			return true
		}
		s := info.Signo()
		act := t.sigHandlers.actions[s]
		switch act.Handler {
		case SIG_IGN:
			k.mu.Unlock()
			continue
		case SIG_DFL:
			if t.tg.isNSInitLocked() && !info.reachesInit && s != SIGKILL && s != SIGSTOP {
				// Queued while blocked; init discards it now.
				k.mu.Unlock()
				continue
			}
			switch defaultActionOf(s) {
			case actIgnore, actContinue:
				k.mu.Unlock()
				continue
			case actStop:
				if t.tg.pg != nil && s != SIGSTOP && k.orphanedLocked(t.tg.pg) {
					// Stops of orphaned process groups from the
					// terminal are discarded.
					k.mu.Unlock()
					continue
				}
				t.tg.groupStopSignal = s
				k.startGroupStopLocked(t.tg)
				k.mu.Unlock()
				continue
			default:
				// No core file is written, so the status never has
				// the core-dump bit, as on Linux with RLIMIT_CORE 0.
				k.groupExitLocked(t.tg, KilledBy(s, false))
				k.mu.Unlock()
				continue
			}
		}
		// A handler: build its frame.
		mask := t.sigMask
		if t.haveSavedMask {
			mask = t.savedMask
			t.haveSavedMask = false
		}
		newMask := t.sigMask | act.Mask
		if act.Flags&SA_NODEFER == 0 {
			newMask |= SignalSetOf(s)
		}
		if act.Flags&SA_RESETHAND != 0 {
			// Only the handler goes back to SIG_DFL; flags, mask
			// and restorer read back unchanged, as on Linux.
			t.sigHandlers.actions[s].Handler = SIG_DFL
		}
		alt := t.altStack
		k.mu.Unlock()

		t.restartIfInterrupted(true, act.Flags)
		if err := t.setupSignalFrame(s, &act, info, mask, alt); err != nil {
			// The frame could not be written: SIGSEGV, as Linux forces;
			// fatal if it was SIGSEGV's own frame (a stack overflow
			// without an alternate stack), or it would loop.
			k.Log.Debug("signal frame setup failed", "tid", t.tid, "signal", int(s), "err", err)
			t.forceSignal(NewSignalInfo(SIGSEGV, SI_KERNEL), s == SIGSEGV)
			continue
		}
		k.mu.Lock()
		t.setSignalMaskLocked(newMask)
		if alt.Flags&SS_AUTODISARM != 0 {
			t.altStack = SignalStack{Flags: SS_DISABLE}
		}
		k.mu.Unlock()
		return true
	}
}

// restoreSavedMaskLocked restores the mask saved by sigsuspend and friends
// when no handler ran.
func (t *Task) restoreSavedMaskLocked() {
	if t.haveSavedMask {
		t.haveSavedMask = false
		t.setSignalMaskLocked(t.savedMask)
	}
}

// restartIfInterrupted applies the syscall restart rules to a syscall that
// returned a restart code: handler says whether a handler is about to run
// and flags are its sa_flags.
func (t *Task) restartIfInterrupted(handler bool, flags uint64) {
	if !t.inSyscall {
		return
	}
	t.inSyscall = false
	errno := unix.Errno(-int64(t.regs.Rax))
	restart := false
	switch errno {
	case syserror.ERESTARTNOINTR:
		restart = true
	case syserror.ERESTARTSYS:
		restart = !handler || flags&SA_RESTART != 0
	case syserror.ERESTARTNOHAND, syserror.ERESTART_RESTARTBLOCK:
		restart = !handler
	default:
		return
	}
	if !restart {
		t.regs.Rax = ^uint64(unix.EINTR) + 1
		return
	}
	if errno == syserror.ERESTART_RESTARTBLOCK {
		t.regs.Rax = unix.SYS_RESTART_SYSCALL
	} else {
		t.regs.Rax = t.regs.Orig_rax
	}
	t.regs.Rip -= 2
}

// startGroupStopLocked begins a job-control stop of tg.
// Preconditions: k.mu is held.
func (k *Kernel) startGroupStopLocked(tg *ThreadGroup) {
	if tg.groupStopPending || tg.stopped {
		return
	}
	tg.groupStopPending = true
	tg.stopCount = 0
	tg.contCh = make(chan struct{})
	for t := range tg.tasks {
		t.interrupt()
	}
}

// participateInStopLocked stops t until the group continues or exits. It is
// called with k.mu held and returns with it released.
func (t *Task) participateInStopLocked() {
	k := t.k
	tg := t.tg
	tg.stopCount++
	if tg.stopCount == len(tg.tasks) && !tg.stopped {
		tg.stopped = true
		tg.stopReported = false
		k.notifyParentLocked(tg, CLD_STOPPED, int32(tg.groupStopSignal))
	}
	ch := tg.contCh
	k.mu.Unlock()
	t.setRunState(StateStopped)
	<-ch
	t.setRunState(StateRunning)
	k.mu.Lock()
	k.mu.Unlock()
}

// continueGroupLocked resumes a stopped group (SIGCONT).
// Preconditions: k.mu is held.
func (k *Kernel) continueGroupLocked(tg *ThreadGroup) {
	if !tg.groupStopPending && !tg.stopped {
		return
	}
	wasStopped := tg.stopped
	tg.groupStopPending = false
	tg.stopped = false
	tg.stopCount = 0
	if tg.contCh != nil {
		close(tg.contCh)
		tg.contCh = nil
	}
	if wasStopped {
		tg.continued = true
		k.notifyParentLocked(tg, CLD_CONTINUED, int32(SIGCONT))
	}
}

// orphanedLocked reports whether pg is orphaned: no member has a parent in
// another process group of the same session.
func (k *Kernel) orphanedLocked(pg *ProcessGroup) bool {
	for tg := range pg.members {
		p := tg.parent
		if p != nil && p.pg != pg && p.pg != nil && p.pg.session == pg.session {
			return false
		}
	}
	return true
}

// notifyParentLocked sends SIGCHLD for a stop or continue of tg and wakes
// waiters. Preconditions: k.mu is held.
func (k *Kernel) notifyParentLocked(tg *ThreadGroup, code int32, status int32) {
	p := tg.parent
	if p == nil {
		return
	}
	p.childEvents.Notify(eventChildChanged)
	if p.leader == nil {
		return
	}
	if p.leader.sigHandlers.actions[SIGCHLD].Flags&SA_NOCLDSTOP != 0 {
		return
	}
	info := NewSignalInfo(SIGCHLD, code)
	info.SetPIDUID(int32(p.pidns.idOfTGLocked(tg)), tg.realUIDIn(p.userNamespace()))
	info.SetStatus(status)
	k.sendSignalToGroupLocked(p, SIGCHLD, info)
}

// groupExitLocked makes every task of tg exit with status.
// Preconditions: k.mu is held.
func (k *Kernel) groupExitLocked(tg *ThreadGroup, status WaitStatus) {
	if tg.groupExiting {
		return
	}
	tg.groupExiting = true
	tg.groupExitStatus = status
	if tg.contCh != nil {
		close(tg.contCh)
		tg.contCh = nil
	}
	tg.groupStopPending = false
	for t := range tg.tasks {
		t.interrupt()
	}
}
