package kernel

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// mayKillLocked is Linux's check_kill_permission for ids.
func mayKill(sender *Task, target *ThreadGroup, s Signal) bool {
	sc := sender.Credentials()
	l := target.leader
	if l == nil {
		return sc.HasCapability(unix.CAP_KILL)
	}
	tc := l.Credentials()
	// CAP_KILL counts in the target's user namespace.
	if sc.HasCapabilityIn(unix.CAP_KILL, tc.UserNamespace) {
		return true
	}
	if sc.EffectiveUID == tc.RealUID || sc.EffectiveUID == tc.SavedUID ||
		sc.RealUID == tc.RealUID || sc.RealUID == tc.SavedUID {
		return true
	}
	// SIGCONT within a session.
	return s == SIGCONT && sender.tg.pg != nil && target.pg != nil && sender.tg.pg.session == target.pg.session
}

// userInfo returns the siginfo of a signal sent by kill(2) to target: the
// sender's pid as target's namespace sees it (0 from an ancestor
// namespace) and its real uid as target's user namespace sees it.
// Preconditions: k.mu is held.
func userInfo(sender *Task, target *ThreadGroup, s Signal, code int32) *SignalInfo {
	info := NewSignalInfo(s, code)
	info.SetPIDUID(int32(target.pidns.idOfTGLocked(sender.tg)), target.userNamespace().UIDOf(sender.Credentials().RealUID))
	return info
}

// Kill implements kill(2)'s pid selection for signal s (0 checks only).
func (t *Task) Kill(pid int32, s Signal) error {
	if s != 0 && !s.IsValid() {
		return errEINVAL
	}
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	k.signalSender = t
	defer func() { k.signalSender = nil }()
	ns := t.pidns
	send := func(tg *ThreadGroup) error {
		if !mayKill(t, tg, s) {
			return errEPERM
		}
		if s == 0 || tg.exited {
			return nil
		}
		return k.sendSignalToGroupLocked(tg, s, userInfo(t, tg, s, SI_USER))
	}
	switch {
	case pid > 0:
		tg := ns.tgs[ThreadID(pid)]
		if tg == nil || tg.reaped {
			return errESRCH
		}
		return send(tg)
	case pid == -1:
		// Every process of the caller's namespace but its init and the
		// caller, zombies included. As Linux's kill_something_info, a
		// process out of reach (EPERM) is no failure: with at least one
		// tried, the result is the last other error, or success.
		count := 0
		var ret error
		for id, tg := range ns.tgs {
			if id == 1 || tg == t.tg || tg.reaped {
				continue
			}
			count++
			if err := send(tg); err != errEPERM {
				ret = err
			}
		}
		if count == 0 {
			return errESRCH
		}
		return ret
	default:
		pgid := ThreadID(-pid)
		if pid == 0 {
			pgid = ns.idOfPGLocked(t.tg.pg)
		}
		pg := ns.pgs[pgid]
		if pg == nil {
			return errESRCH
		}
		var lastErr error = errESRCH
		for tg := range pg.members {
			if tg.exited {
				continue
			}
			if err := send(tg); err == nil {
				lastErr = nil
			} else if lastErr == errESRCH {
				lastErr = err
			}
		}
		return lastErr
	}
}

// KillProcessGroup sends s to every process in pgid (for the terminal).
func (k *Kernel) KillProcessGroup(pgid ThreadID, s Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	pg := k.processGroups[pgid]
	if pg == nil {
		return errESRCH
	}
	for tg := range pg.members {
		k.sendSignalToGroupLocked(tg, s, NewSignalInfo(s, SI_KERNEL))
	}
	return nil
}

// Tgkill implements tgkill(2) (tgid 0 for tkill: any thread group) with
// info, or a SI_TKILL siginfo when info is nil.
func (t *Task) Tgkill(tgid, tid int32, s Signal, info *SignalInfo) error {
	if s != 0 && !s.IsValid() || tid <= 0 || tgid < 0 {
		return errEINVAL
	}
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	// k.tasks holds every task not yet released: as on Linux, a thread
	// that is exiting and an unreaped zombie leader are still found (a
	// signal to them is dropped by sendSignalToTaskLocked).
	k.signalSender = t
	defer func() { k.signalSender = nil }()
	ns := t.pidns
	target := ns.tasks[ThreadID(tid)]
	if target == nil || (tgid > 0 && ns.idOfTGLocked(target.tg) != ThreadID(tgid)) {
		return errESRCH
	}
	if !mayKill(t, target.tg, s) {
		return errEPERM
	}
	if s == 0 {
		return nil
	}
	if info == nil {
		info = userInfo(t, target.tg, s, SI_TKILL)
	}
	return k.sendSignalToTaskLocked(target, info)
}

// QueueSignal implements rt_sigqueueinfo(2): info from the application,
// to a thread group.
func (t *Task) QueueSignal(pid int32, s Signal, info *SignalInfo) error {
	// Signal 0 only checks that the target exists and may be signalled.
	if s != 0 && !s.IsValid() {
		return errEINVAL
	}
	info.SetSigno(s)
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	// Applications may not forge kernel codes for other processes.
	if info.Code() >= 0 || info.Code() == SI_TKILL {
		if ThreadID(pid) != t.pidns.idOfTGLocked(t.tg) {
			return errEPERM
		}
	}
	k.signalSender = t
	defer func() { k.signalSender = nil }()
	tg := t.pidns.tgs[ThreadID(pid)]
	if tg == nil || tg.exited {
		return errESRCH
	}
	if !mayKill(t, tg, s) {
		return errEPERM
	}
	if s == 0 {
		return nil
	}
	return k.sendSignalToGroupLocked(tg, s, info)
}

// WaitForSignal implements rt_sigtimedwait(2): it dequeues a pending signal
// in set, waiting until one arrives, the timeout passes (EAGAIN) or another
// signal interrupts (EINTR).
func (t *Task) WaitForSignal(set SignalSet, timeout time.Duration, hasTimeout bool) (*SignalInfo, error) {
	set &^= UnblockableSignals
	k := t.k
	deadline := time.Now().Add(timeout)
	for {
		k.mu.Lock()
		info := t.pending.dequeue(^set)
		if info == nil {
			info = t.tg.pending.dequeue(^set)
		}
		if info == nil {
			// Unblock the waited-for signals while sleeping, as Linux
			// does, so they wake us.
			deliverable := (t.pending.set|t.tg.pending.set)&^t.sigMask != 0 || t.tg.groupExiting || t.tg.groupStopPending
			k.mu.Unlock()
			if deliverable {
				return nil, errEINTR
			}
		} else {
			k.mu.Unlock()
			return info, nil
		}
		if hasTimeout && timeout == 0 {
			return nil, errEAGAIN
		}
		err := t.blockForSignal(deadline, hasTimeout)
		if err == unix.ETIMEDOUT {
			return nil, errEAGAIN
		}
	}
}

// blockForSignal sleeps until any signal is queued for t (blocked or not),
// or the deadline.
func (t *Task) blockForSignal(deadline time.Time, hasDeadline bool) error {
	defer t.accountWait(time.Now())
	var timeout <-chan time.Time
	if hasDeadline {
		tm := time.NewTimer(time.Until(deadline))
		defer tm.Stop()
		timeout = tm.C
	}
	t.setRunState(StateSleeping)
	defer t.setRunState(StateRunning)
	select {
	case <-t.interruptCh:
		return nil
	case <-timeout:
		return unix.ETIMEDOUT
	}
}

// SignalSuspend implements rt_sigsuspend(2): it waits with mask until a
// signal is delivered.
func (t *Task) SignalSuspend(mask SignalSet) error {
	k := t.k
	k.mu.Lock()
	t.savedMask = t.sigMask
	t.haveSavedMask = true
	t.setSignalMaskLocked(mask)
	k.mu.Unlock()
	for {
		if err := t.BlockOn(nil, time.Time{}, false); err == syserror.ErrInterrupted {
			return syserror.ERESTARTNOHAND
		}
	}
}

// Signalfd support. A signalfd is readable while a signal of its mask is
// pending for the thread that reads it. The hook: whenever a signal is
// queued on a thread group or one of its threads (sendSignalToTaskLocked,
// sendSignalToGroupLocked), notifySignalPendingLocked wakes the group's
// signalEvents queue, on which signalfds register (Task.SignalEvents).

// notifySignalPendingLocked tells the group's signalfd waiters that a
// signal became pending. Callbacks run with k.mu held: waiter callbacks
// never take Kernel.mu (they signal channels or mark epoll items ready).
// Preconditions: k.mu is held.
func (tg *ThreadGroup) notifySignalPendingLocked() {
	tg.signalEvents.Notify(waiter.EventIn | waiter.EventRdNorm)
}

// SignalEvents returns the queue notified when a signal becomes pending
// for t's thread group or any of its threads.
func (t *Task) SignalEvents() *waiter.Queue { return &t.tg.signalEvents }

// PendingIn reports whether a signal of set is pending for t or its
// thread group, blocked or not (signalfd's poll).
func (t *Task) PendingIn(set SignalSet) bool {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return (t.pending.set|t.tg.pending.set)&set != 0
}

// DequeueSignalIn removes and returns a signal of set pending for t (its
// own first, then its group's), or nil: what a signalfd read takes.
func (t *Task) DequeueSignalIn(set SignalSet) *SignalInfo {
	set &^= UnblockableSignals
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	if info := t.pending.dequeue(^set); info != nil {
		return info
	}
	return t.tg.pending.dequeue(^set)
}
