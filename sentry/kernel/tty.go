package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// Controlling terminals and job control.
//
// As on Linux, each process (ThreadGroup.tty, guarded by Kernel.mu) has a
// controlling terminal or none; a child inherits its parent's, setsid
// drops it, and a session leader acquires one with TIOCSCTTY or by
// opening a terminal without O_NOCTTY. The terminal records the session
// it controls and its foreground process group (devpts.Terminal's
// SetControlling and SetForeground), always set here with Kernel.mu held
// (Kernel.mu comes before Terminal.mu; the terminal never calls back with
// its lock held).
//
// Task implements devpts.JobControl and dev.TTYOpener; Kernel implements
// devpts.Controller for the terminals it binds, delivering their signals
// (^C, ^Z, ^\, SIGWINCH) and hang-ups.

var (
	_ devpts.JobControl = (*Task)(nil)
	_ devpts.Controller = (*Kernel)(nil)
)

// IsControllingTTY implements devpts.JobControl.
func (t *Task) IsControllingTTY(tty *devpts.Terminal) bool {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.tg.tty == tty
}

// ControllingTTY returns the process's controlling terminal, or nil.
func (t *Task) ControllingTTY() *devpts.Terminal {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.tg.tty
}

// OpenControllingTTY implements dev.TTYOpener: /dev/tty (at vd) opens the
// controlling terminal's slave, ENXIO without one.
func (t *Task) OpenControllingTTY(vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	tty := t.ControllingTTY()
	if tty == nil {
		return nil, unix.ENXIO
	}
	return tty.OpenSlave(t, vd, flags)
}

// isSessionLeaderLocked reports whether tg leads its session.
// Preconditions: k.mu is held.
func (tg *ThreadGroup) isSessionLeaderLocked() bool {
	return tg.pg != nil && tg.pg.session.leader == tg
}

// bindTTYLocked makes tty the controlling terminal of tg's session, tg
// leading it, with tg's process group in the foreground.
// Preconditions: k.mu is held; tg leads its session.
func (k *Kernel) bindTTYLocked(tg *ThreadGroup, tty *devpts.Terminal) {
	tty.SetControlling(int32(tg.pg.session.id), int32(tg.pg.id), k)
	tg.tty = tty
}

// clearSessionTTYLocked makes every process of session s that has tty
// as its controlling terminal lose it.
// Preconditions: k.mu is held.
func (k *Kernel) clearSessionTTYLocked(s *Session, tty *devpts.Terminal) {
	for pg := range s.groups {
		for tg := range pg.members {
			if tg.tty == tty {
				tg.tty = nil
			}
		}
	}
}

// SetControllingTTY implements devpts.JobControl (TIOCSCTTY).
func (t *Task) SetControllingTTY(tty *devpts.Terminal, steal, readable bool) error {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	tg := t.tg
	if tg.isSessionLeaderLocked() && tty.Session() == int32(tg.pg.session.id) {
		return nil
	}
	if !tg.isSessionLeaderLocked() || tg.tty != nil {
		return errEPERM
	}
	admin := t.Credentials().HasCapability(unix.CAP_SYS_ADMIN)
	if sid := tty.Session(); sid != 0 {
		if !steal || !admin {
			return errEPERM
		}
		if s := k.sessions[ThreadID(sid)]; s != nil {
			k.clearSessionTTYLocked(s, tty)
		}
	}
	if !readable && !admin {
		return errEPERM
	}
	k.bindTTYLocked(tg, tty)
	return nil
}

// AcquireTTYOnOpen implements devpts.JobControl.
func (t *Task) AcquireTTYOnOpen(tty *devpts.Terminal) {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.tg.isSessionLeaderLocked() && t.tg.tty == nil && tty.Session() == 0 {
		k.bindTTYLocked(t.tg, tty)
	}
}

// ReleaseControllingTTY implements devpts.JobControl (TIOCNOTTY).
func (t *Task) ReleaseControllingTTY(tty *devpts.Terminal) error {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	tg := t.tg
	if tg.tty != tty {
		return unix.ENOTTY
	}
	if tg.isSessionLeaderLocked() {
		k.disassociateTTYLocked(tg, false)
	}
	tg.tty = nil
	return nil
}

// disassociateTTYLocked is the session leader tg giving up its controlling
// terminal (Linux's disassociate_ctty): the foreground process group gets
// SIGHUP, and SIGCONT unless tg is exiting; the whole session loses the
// terminal, which then controls no session.
// Preconditions: k.mu is held; tg leads its session.
func (k *Kernel) disassociateTTYLocked(tg *ThreadGroup, exiting bool) {
	tty := tg.tty
	if tty == nil {
		return
	}
	if pg := k.processGroups[ThreadID(tty.ForegroundPgrp())]; pg != nil {
		k.signalProcessGroupLocked(pg, SIGHUP)
		if !exiting {
			k.signalProcessGroupLocked(pg, SIGCONT)
		}
	}
	k.clearSessionTTYLocked(tg.pg.session, tty)
	tty.SetControlling(0, 0, nil)
}

// sessionLeaderExitLocked hangs up the controlling terminal of a session
// leader whose process died. Called from processExitLocked.
// Preconditions: k.mu is held.
func (k *Kernel) sessionLeaderExitLocked(tg *ThreadGroup) {
	if tg.isSessionLeaderLocked() {
		k.disassociateTTYLocked(tg, true)
	}
	tg.tty = nil
}

// signalProcessGroupLocked sends s, as the kernel, to every process of pg.
// Preconditions: k.mu is held.
func (k *Kernel) signalProcessGroupLocked(pg *ProcessGroup, s Signal) {
	for tg := range pg.members {
		k.sendSignalToGroupLocked(tg, s, NewSignalInfo(s, SI_KERNEL))
	}
}

// SetForegroundProcessGroup implements devpts.JobControl (TIOCSPGRP).
func (t *Task) SetForegroundProcessGroup(tty *devpts.Terminal, pgid int32) error {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	tg := t.tg
	if tg.tty != tty || tg.pg == nil || tty.Session() != int32(tg.pg.session.id) {
		return unix.ENOTTY
	}
	// The id is the caller's namespace's; the terminal keeps root ids.
	ns := t.PIDNamespace()
	var s *Session
	var root ThreadID
	if pg := ns.pgs[ThreadID(pgid)]; pg != nil {
		s, root = pg.session, pg.id
	} else if o := ns.tgs[ThreadID(pgid)]; o != nil && o.pg != nil {
		// Linux looks the id up as any pid: a process's session counts.
		s, root = o.pg.session, o.id
	} else {
		return errESRCH
	}
	if s != tg.pg.session {
		return errEPERM
	}
	tty.SetForeground(int32(root))
	return nil
}

var _ devpts.JobIDs = (*Task)(nil)

// TTYID implements devpts.JobIDs: the id, in t's PID namespace, of the
// process group (or else session, or process) with root id id; 0 when it
// is not visible there, or has gone and t is not in the root namespace.
func (t *Task) TTYID(id int32) int32 {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	ns := t.PIDNamespace()
	root := ThreadID(id)
	switch {
	case k.processGroups[root] != nil:
		return int32(ns.idOfPGLocked(k.processGroups[root]))
	case k.sessions[root] != nil:
		return int32(ns.idOfSessionLocked(k.sessions[root]))
	case k.threadGroups[root] != nil:
		return int32(ns.idOfTGLocked(k.threadGroups[root]))
	case ns.parent == nil:
		return id
	}
	return 0
}

// CheckTTYAccess implements devpts.JobControl: Linux's tty_check_change.
func (t *Task) CheckTTYAccess(tty *devpts.Terminal, sig unix.Signal) error {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	tg := t.tg
	if tg.tty != tty || tg.pg == nil {
		return nil
	}
	fg := tty.ForegroundPgrp()
	if fg == 0 || fg == int32(tg.pg.id) {
		return nil
	}
	s := Signal(sig)
	if t.sigMask&SignalSetOf(s) != 0 || t.sigHandlers.actions[s].Handler == SIG_IGN {
		if s == SIGTTIN {
			return unix.EIO
		}
		return nil
	}
	if k.orphanedLocked(tg.pg) {
		return unix.EIO
	}
	k.signalProcessGroupLocked(tg.pg, s)
	return syserror.ERESTARTSYS
}

// SignalProcessGroup implements devpts.Signaller: a terminal's signals
// (^C, ^Z, ^\, SIGWINCH) to its foreground process group.
func (k *Kernel) SignalProcessGroup(pgid int32, sig unix.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if pg := k.processGroups[ThreadID(pgid)]; pg != nil {
		k.signalProcessGroupLocked(pg, Signal(sig))
	}
}

// Hangup implements devpts.Controller: the master of tty closed. Every
// process of the session it controls loses it, the session leader gets
// SIGHUP and SIGCONT, and the terminal controls no session any more.
func (k *Kernel) Hangup(tty *devpts.Terminal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.sessions[ThreadID(tty.Session())]
	if s != nil {
		k.clearSessionTTYLocked(s, tty)
		if l := s.leader; l != nil && !l.exited {
			k.sendSignalToGroupLocked(l, SIGHUP, NewSignalInfo(SIGHUP, SI_KERNEL))
			k.sendSignalToGroupLocked(l, SIGCONT, NewSignalInfo(SIGCONT, SI_KERNEL))
		}
	}
	tty.SetControlling(0, 0, nil)
}

// hangupOrphanedLocked sends SIGHUP and SIGCONT to the process group of
// tg if a process exit just orphaned it while it has stopped members, so
// they do not stay stopped with nobody left to continue them (POSIX; Linux's
// kill_orphaned_pgrp). With oldParent nil, tg itself is exiting and its
// group loses tg's link to its parent; otherwise tg is a child that
// oldParent's exit gave a new parent.
// Preconditions: k.mu is held.
func (k *Kernel) hangupOrphanedLocked(tg, oldParent *ThreadGroup) {
	pg := tg.pg
	if pg == nil {
		return
	}
	ignored := tg
	parent := oldParent
	if parent == nil {
		parent = tg.parent
	} else {
		ignored = nil
	}
	if parent == nil || parent.pg == nil || parent.pg == pg || parent.pg.session != pg.session {
		return
	}
	stopped := false
	for m := range pg.members {
		if m == ignored || m.exited {
			continue
		}
		if p := m.parent; p != nil && p.pg != nil && p.pg != pg && p.pg.session == pg.session {
			return // still linked to its session outside the group
		}
		stopped = stopped || m.stopped
	}
	if stopped {
		k.signalProcessGroupLocked(pg, SIGHUP)
		k.signalProcessGroupLocked(pg, SIGCONT)
	}
}

// ptsMajor is the device major of /dev/pts/N.
const ptsMajor = 136

// ttyNumbers returns /proc/[pid]/stat's tty_nr (the controlling
// terminal's device number, encoded as Linux's new_encode_dev) and tpgid
// (its foreground process group as ns numbers it, -1 without a terminal
// or one, 0 for one not visible in ns).
func (tg *ThreadGroup) ttyNumbers(ns *PIDNamespace) (nr uint32, tpgid int32) {
	tg.k.mu.Lock()
	tty := tg.tty
	tg.k.mu.Unlock()
	if tty == nil {
		return 0, -1
	}
	minor := uint32(tty.Index())
	nr = minor&0xff | ptsMajor<<8 | (minor&^0xff)<<12
	tpgid = tty.ForegroundPgrp()
	if tpgid != 0 && ns != nil && ns.parent != nil {
		tg.k.mu.Lock()
		tpgid = int32(ns.idOfPGLocked(tg.k.processGroups[ThreadID(tpgid)]))
		tg.k.mu.Unlock()
		return nr, tpgid
	}
	if tpgid == 0 {
		tpgid = -1
	}
	return nr, tpgid
}
