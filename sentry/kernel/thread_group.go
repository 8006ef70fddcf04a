package kernel

import (
	"sync"
	"time"

	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// ThreadGroup is a process: the tasks sharing a pid, signal handlers and
// shared pending signals, rlimits, interval timers and a place in the tree.
type ThreadGroup struct {
	k  *Kernel
	id ThreadID
	// pidns and ids are the leader's namespace and ids (pidns.go).
	pidns *PIDNamespace
	ids   []ThreadID

	// Guarded by k.mu.
	leader   *Task
	tasks    map[*Task]struct{}
	parent   *ThreadGroup
	children map[*ThreadGroup]struct{}
	pg       *ProcessGroup

	// parentThread (guarded by k.mu) is the thread of parent this process
	// is a child of (the one that forked it, until that thread exits),
	// whose exit sends PR_SET_PDEATHSIG; nil stands for parent's leader.
	parentThread *Task

	// exitSignal is sent to the parent when the group exits.
	exitSignal Signal
	pending    pendingSignals
	// groupExiting is set by exit_group or a fatal signal.
	groupExiting    bool
	groupExitStatus WaitStatus
	// exited: every task has exited; zombie until reaped.
	exited bool
	reaped bool
	status WaitStatus
	// Job control: stopped after a group stop completed; stopReported
	// and continueReported for wait(WUNTRACED/WCONTINUED).
	groupStopPending bool
	groupStopSignal  Signal
	stopCount        int
	contCh           chan struct{}
	stopped          bool
	stopReported     bool
	continued        bool
	// childSubreaper is PR_SET_CHILD_SUBREAPER.
	childSubreaper bool
	// execedSinceFork: the process called execve (setpgid by its parent
	// then fails with EACCES).
	execedSinceFork bool
	// execing is the task in execve killing its siblings.
	execing *Task

	// childEvents is notified when a child changes state (for wait).
	childEvents waiter.Queue
	// signalEvents is notified when a signal becomes pending for the
	// group or one of its threads (signalfd readiness; signal_send.go).
	signalEvents waiter.Queue
	// pidfdEvents is notified when a task of the group exits (pidfd.go).
	// Fixed at creation; clone with CLONE_PIDFD brings the one its pidfd
	// already holds.
	pidfdEvents *waiter.Queue
	// pidfdMade is set, under k.mu, once a pidfd refers to the group or
	// one of its threads: only then does reaping notify pidfdEvents.
	pidfdMade bool
	// tty is the controlling terminal, guarded by k.mu (tty.go).
	tty *devpts.Terminal

	limits *Limits
	// procAttrs are dumpable and THP-disable (task_sched.go).
	procAttrs procAttrs

	// Accumulated times of exited threads and reaped children.
	timesMu                  sync.Mutex
	exitedUtime, exitedStime time.Duration
	childUtime, childStime   time.Duration
	// maxRSS is the largest resident size of the address spaces the
	// group left (exec, exit); childMaxRSS the largest of its reaped
	// descendants'. Bytes.
	maxRSS, childMaxRSS uint64
	// exitedRusage and childRusage are the counters of exited tasks and
	// of reaped children (rusage.go).
	exitedRusage, childRusage Rusage

	timers *groupTimers
}

// ID returns the thread group id (the pid) in the root PID namespace.
func (tg *ThreadGroup) ID() ThreadID { return tg.id }

// Leader returns the thread group leader.
func (tg *ThreadGroup) Leader() *Task {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	return tg.leader
}

// Tasks returns the group's live tasks.
func (tg *ThreadGroup) Tasks() []*Task {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	out := make([]*Task, 0, len(tg.tasks))
	for t := range tg.tasks {
		out = append(out, t)
	}
	return out
}

// Limits returns the group's resource limits.
func (tg *ThreadGroup) Limits() *Limits { return tg.limits }

// ProcessGroupID returns the group's process group id in the root PID
// namespace (syscalls use PIDNamespace.ProcessGroupIDOf).
func (tg *ThreadGroup) ProcessGroupID() ThreadID {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	if tg.pg == nil {
		return 0
	}
	return tg.pg.id
}

// SessionID returns the group's session id in the root PID namespace.
func (tg *ThreadGroup) SessionID() ThreadID {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	if tg.pg == nil {
		return 0
	}
	return tg.pg.session.id
}

// ParentID returns the parent's pid in the root PID namespace, 0 for
// init.
func (tg *ThreadGroup) ParentID() ThreadID {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	if tg.parent == nil {
		return 0
	}
	return tg.parent.id
}

// CPUTimes returns the user and system time of the live and exited threads.
func (tg *ThreadGroup) CPUTimes() (utime, stime time.Duration) {
	for _, t := range tg.Tasks() {
		utime += t.Utime()
		stime += t.Stime()
	}
	tg.timesMu.Lock()
	utime += tg.exitedUtime
	stime += tg.exitedStime
	tg.timesMu.Unlock()
	return
}

// noteMaxRSS records the peak resident size of an address space the group
// is leaving.
func (tg *ThreadGroup) noteMaxRSS(b uint64) {
	tg.timesMu.Lock()
	tg.maxRSS = max(tg.maxRSS, b)
	tg.timesMu.Unlock()
}

// MaxRSS returns the group's peak resident size in bytes (RUSAGE_SELF's
// ru_maxrss), its current address space included.
func (tg *ThreadGroup) MaxRSS() uint64 {
	var cur uint64
	for _, t := range tg.Tasks() {
		if m := t.MemoryManager(); m != nil {
			cur = max(cur, m.MaxResidentSize())
		}
	}
	tg.timesMu.Lock()
	defer tg.timesMu.Unlock()
	return max(cur, tg.maxRSS)
}

// ChildMaxRSS returns the largest peak resident size of the reaped
// descendants, in bytes (RUSAGE_CHILDREN's ru_maxrss).
func (tg *ThreadGroup) ChildMaxRSS() uint64 {
	tg.timesMu.Lock()
	defer tg.timesMu.Unlock()
	return tg.childMaxRSS
}

// ChildCPUTimes returns the times of reaped children.
func (tg *ThreadGroup) ChildCPUTimes() (utime, stime time.Duration) {
	tg.timesMu.Lock()
	defer tg.timesMu.Unlock()
	return tg.childUtime, tg.childStime
}

// ProcessGroup is a process group.
type ProcessGroup struct {
	id ThreadID
	// pidns and ids are those of the process that made the group.
	pidns   *PIDNamespace
	ids     []ThreadID
	session *Session
	members map[*ThreadGroup]struct{}
}

// ID returns the process group id.
func (pg *ProcessGroup) ID() ThreadID { return pg.id }

// Session is a session.
type Session struct {
	id ThreadID
	// pidns and ids are those of the process that made the session.
	pidns  *PIDNamespace
	ids    []ThreadID
	leader *ThreadGroup
	groups map[*ProcessGroup]struct{}
	// foreground is the terminal's foreground process group.
	foreground *ProcessGroup
}

// joinProcessGroupLocked moves tg into pg. Preconditions: k.mu is held.
func (k *Kernel) joinProcessGroupLocked(tg *ThreadGroup, pg *ProcessGroup) {
	if tg.pg == pg {
		// Already a member (setpgid to the current group): leaving first
		// would drop a group of one from the table.
		return
	}
	if old := tg.pg; old != nil {
		delete(old.members, tg)
		if len(old.members) == 0 {
			k.dropProcessGroupLocked(old)
		}
	}
	tg.pg = pg
	pg.members[tg] = struct{}{}
}

func (k *Kernel) dropProcessGroupLocked(pg *ProcessGroup) {
	k.unmapProcessGroupLocked(pg)
	s := pg.session
	delete(s.groups, pg)
	if s.foreground == pg {
		s.foreground = nil
	}
	if len(s.groups) == 0 {
		k.unmapSessionLocked(s)
	}
}

// newSessionLocked makes tg the leader of a new session and process group.
func (k *Kernel) newSessionLocked(tg *ThreadGroup) {
	s := &Session{id: tg.id, pidns: tg.pidns, ids: tg.ids, leader: tg, groups: make(map[*ProcessGroup]struct{})}
	pg := &ProcessGroup{id: tg.id, pidns: tg.pidns, ids: tg.ids, session: s, members: make(map[*ThreadGroup]struct{})}
	s.groups[pg] = struct{}{}
	k.mapSessionLocked(s)
	k.mapProcessGroupLocked(pg)
	k.joinProcessGroupLocked(tg, pg)
}

// SetSID implements setsid(2).
func (tg *ThreadGroup) SetSID() (ThreadID, error) {
	k := tg.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.processGroups[tg.id] != nil {
		return 0, errEPERM
	}
	k.newSessionLocked(tg)
	tg.tty = nil // a new session starts without a controlling terminal
	return tg.pidns.idOfTGLocked(tg), nil
}

// SetPGID implements setpgid(2) for target (a child or tg itself), pgid
// being an id of tg's PID namespace.
func (tg *ThreadGroup) SetPGID(target *ThreadGroup, pgid ThreadID) error {
	k := tg.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if target != tg {
		if target.parent != tg {
			return errESRCH
		}
		if target.pg.session != tg.pg.session {
			return errEPERM
		}
		if target.execedSinceFork {
			return errEACCES
		}
	}
	if target.pg.session.leader == target {
		return errEPERM
	}
	ns := tg.pidns
	targetID := ns.idOfTGLocked(target)
	if pgid == 0 {
		pgid = targetID
	}
	if pg := ns.pgs[pgid]; pg != nil {
		if pg.session != target.pg.session {
			return errEPERM
		}
		k.joinProcessGroupLocked(target, pg)
		return nil
	}
	if pgid != targetID {
		return errEPERM
	}
	pg := &ProcessGroup{id: target.id, pidns: target.pidns, ids: target.ids, session: target.pg.session, members: make(map[*ThreadGroup]struct{})}
	target.pg.session.groups[pg] = struct{}{}
	k.mapProcessGroupLocked(pg)
	k.joinProcessGroupLocked(target, pg)
	return nil
}

// ForegroundProcessGroup returns the foreground group id of tg's session.
func (tg *ThreadGroup) ForegroundProcessGroup() ThreadID {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	if tg.pg == nil || tg.pg.session.foreground == nil {
		if tg.pg != nil {
			return tg.pidns.idOfSessionLocked(tg.pg.session)
		}
		return 0
	}
	return tg.pidns.idOfPGLocked(tg.pg.session.foreground)
}

// SetForegroundProcessGroup sets the foreground group of tg's session.
func (tg *ThreadGroup) SetForegroundProcessGroup(pgid ThreadID) error {
	k := tg.k
	k.mu.Lock()
	defer k.mu.Unlock()
	pg := tg.pidns.pgs[pgid]
	if pg == nil {
		return errESRCH
	}
	if pg.session != tg.pg.session {
		return errEPERM
	}
	pg.session.foreground = pg
	return nil
}

// SetChildSubreaper sets PR_SET_CHILD_SUBREAPER.
func (tg *ThreadGroup) SetChildSubreaper(v bool) {
	tg.k.mu.Lock()
	tg.childSubreaper = v
	tg.k.mu.Unlock()
}

// ChildSubreaper returns PR_GET_CHILD_SUBREAPER.
func (tg *ThreadGroup) ChildSubreaper() bool {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	return tg.childSubreaper
}
