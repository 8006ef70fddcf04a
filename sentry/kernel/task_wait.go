package kernel

import (
	"time"

	"github.com/moat-sandbox/moat/sentry/syserror"
)

// WaitOptions select children for wait4 and waitid.
type WaitOptions struct {
	// PID > 0 waits for that child; PGID > 0 for children in that process
	// group; otherwise any child. Ids are of the waiter's PID namespace,
	// as is WaitResult.PID.
	PID  ThreadID
	PGID ThreadID
	// TG, when set, is the one child to wait for (waitid's P_PIDFD).
	TG *ThreadGroup
	// Which state changes to report.
	Exited, Stopped, Continued bool
	NoHang                     bool
	// NoWait leaves the child waitable (WNOWAIT).
	NoWait bool
	// Clone selection: __WCLONE and __WALL.
	CloneOnly, All bool
	// NoThread is __WNOTHREAD: only the children the calling thread
	// forked (or inherited from a thread that exited), not those of the
	// process's other threads.
	NoThread bool
}

// WaitResult describes one reported child.
type WaitResult struct {
	PID    ThreadID
	UID    uint32
	Status WaitStatus
	// Code and SigStatus are waitid's si_code and si_status.
	Code      int32
	SigStatus int32
	Utime     time.Duration
	Stime     time.Duration
	// MaxRSS is the child's peak resident size (with its reaped
	// descendants'), in bytes.
	MaxRSS uint64
	// Rusage is the child's counters, with its reaped descendants'.
	Rusage Rusage
}

// Wait waits for a child state change. It returns (nil, nil) for WNOHANG
// with nothing to report.
func (t *Task) Wait(o WaitOptions) (*WaitResult, error) {
	tg := t.tg
	for {
		r, any, err := t.waitOnce(o)
		if err != nil || r != nil {
			return r, err
		}
		if !any {
			return nil, errECHILD
		}
		if o.NoHang {
			return nil, nil
		}
		ready := func() bool {
			r2, any2 := t.peekWaitable(o)
			return r2 || !any2
		}
		if err := t.WaitOn(&tg.childEvents, eventChildChanged, ready, time.Time{}, false); err != nil {
			if err != syserror.ErrInterrupted {
				return nil, err
			}
			// Linux scans the children once more before it gives up
			// for the signal: a child to report is still reported, and
			// no child left (one auto-reaped under SA_NOCLDWAIT, whose
			// SIGCHLD interrupted the wait) is ECHILD, not EINTR.
			r, any, err := t.waitOnce(o)
			if err != nil || r != nil {
				return r, err
			}
			if !any {
				return nil, errECHILD
			}
			return nil, syserror.ERESTARTSYS
		}
	}
}

// matches reports whether child c is one o selects for t.
// Preconditions: k.mu is held.
func (t *Task) matches(c *ThreadGroup, o WaitOptions) bool {
	if o.PID > 0 && t.pidns.idOfTGLocked(c) != o.PID {
		return false
	}
	if o.TG != nil && c != o.TG {
		return false
	}
	if o.NoThread {
		pt := c.parentThread
		if pt == nil {
			pt = t.tg.leader
		}
		if pt != t {
			return false
		}
	}
	if o.PGID > 0 && (c.pg == nil || t.pidns.idOfPGLocked(c.pg) != o.PGID) {
		return false
	}
	if !o.All {
		clone := c.exitSignal != SIGCHLD
		if clone != o.CloneOnly {
			return false
		}
	}
	return true
}

// peekWaitable reports whether a matching child has something to report,
// and whether any matching child exists.
func (t *Task) peekWaitable(o WaitOptions) (ready, any bool) {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	for c := range t.tg.children {
		if !t.matches(c, o) {
			continue
		}
		any = true
		if (o.Exited && c.waitableZombieLocked()) ||
			(o.Stopped && c.stopped && !c.stopReported) ||
			(o.Continued && c.continued) {
			return true, true
		}
	}
	return false, any
}

func (t *Task) waitOnce(o WaitOptions) (*WaitResult, bool, error) {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	any := false
	for c := range t.tg.children {
		if !t.matches(c, o) {
			continue
		}
		any = true
		switch {
		case o.Exited && c.waitableZombieLocked():
			r := &WaitResult{PID: t.pidns.idOfTGLocked(c), UID: c.realUIDIn(t.UserNamespace()), Status: c.status}
			if c.status.Exited() {
				r.Code, r.SigStatus = CLD_EXITED, int32(c.status.ExitCode())
			} else {
				r.Code, r.SigStatus = CLD_KILLED, int32(c.status.Signal())
				if c.status&0x80 != 0 {
					r.Code = CLD_DUMPED
				}
			}
			u, s := c.cpuTimesLocked()
			r.Utime, r.Stime = time.Duration(u), time.Duration(s)
			c.timesMu.Lock()
			r.MaxRSS = max(c.maxRSS, c.childMaxRSS)
			r.Rusage = c.exitedRusage
			r.Rusage.add(c.childRusage)
			c.timesMu.Unlock()
			if !o.NoWait {
				k.reapLocked(c)
			}
			return r, true, nil
		case o.Stopped && c.stopped && !c.stopReported:
			if !o.NoWait {
				c.stopReported = true
			}
			sig := c.groupStopSignal
			return &WaitResult{PID: t.pidns.idOfTGLocked(c), UID: c.realUIDIn(t.UserNamespace()), Status: WaitStatus(0x7f | int(sig)<<8), Code: CLD_STOPPED, SigStatus: int32(sig)}, true, nil
		case o.Continued && c.continued:
			if !o.NoWait {
				c.continued = false
			}
			return &WaitResult{PID: t.pidns.idOfTGLocked(c), UID: c.realUIDIn(t.UserNamespace()), Status: 0xffff, Code: CLD_CONTINUED, SigStatus: int32(SIGCONT)}, true, nil
		}
	}
	return nil, any, nil
}

// waitableZombieLocked reports whether tg's exit can be reported to a
// waiter: every thread gone and, for the init of a PID namespace, every
// other process of the namespace too. Linux's exiting init waits in
// zap_pid_ns_processes before it becomes a zombie, so a parent that reaps
// it knows the namespace is empty (its descriptors closed).
// Preconditions: k.mu is held.
func (tg *ThreadGroup) waitableZombieLocked() bool {
	if !tg.exited || len(tg.tasks) != 0 {
		return false
	}
	return !(tg.pidns != nil && tg.pidns.init == tg && tg.pidns.initExitPending)
}
