package kernel

// pidfds (pidfd_open(2), clone's CLONE_PIDFD): a file that refers to one
// process (or, with PIDFD_THREAD, one thread) for as long as it is open,
// whatever ids the process table reuses meanwhile. It polls readable once
// the process has exited (a zombie: every thread gone) and adds POLLHUP
// once it is reaped; waitid(P_PIDFD), pidfd_send_signal and pidfd_getfd
// take it in place of an id.
//
// The thread group's pidfdEvents queue is notified, outside Kernel.mu,
// whenever one of its tasks exits (task_exit.go), and once more when the
// process is reaped, for the pollers waiting for POLLHUP alone.

import (
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// PIDFD flags of pidfd_open: PIDFD_NONBLOCK is O_NONBLOCK and PIDFD_THREAD
// is O_EXCL (include/uapi/linux/pidfd.h).
const (
	PIDFD_NONBLOCK = unix.O_NONBLOCK
	PIDFD_THREAD   = unix.O_EXCL
)

// pidfd_send_signal flags (Linux 6.9): the scope of the signal.
const (
	PIDFD_SIGNAL_THREAD        = 1
	PIDFD_SIGNAL_THREAD_GROUP  = 2
	PIDFD_SIGNAL_PROCESS_GROUP = 4
)

// PIDFD is the file implementation of a pidfd.
type PIDFD struct {
	fs.FileDefaults
	k *Kernel
	// q is the process's pidfdEvents queue.
	q *waiter.Queue
	// task is the thread (thread pidfd) or the process's leader at the
	// time the pidfd was made; tg its process. Set once, under Kernel.mu,
	// before the pidfd's number reaches the application (clone sets them
	// after installing the descriptor: nil until then).
	task   *Task
	tg     *ThreadGroup
	thread bool
	// ns is the PID namespace of the task that made the pidfd, in which
	// fdinfo numbers the target.
	ns *PIDNamespace
}

// newPIDFDFile returns the file description of a pidfd whose process's
// queue is q (its target set by the caller); flags may hold
// PIDFD_NONBLOCK and PIDFD_THREAD.
func newPIDFDFile(maker *Task, q *waiter.Queue, flags uint32) (*fs.FileDescription, *PIDFD) {
	p := &PIDFD{k: maker.k, q: q, thread: flags&PIDFD_THREAD != 0, ns: maker.PIDNamespace()}
	return fs.NewAnonFile("pidfd", p, unix.O_RDWR|flags&(PIDFD_NONBLOCK|PIDFD_THREAD), fs.FDOptions{Stream: true, KeepExcl: true}), p
}

// targetLocked is the task behind the pidfd: for a process pidfd, its
// current leader (a thread that execs becomes the leader, with its ids).
// Preconditions: Kernel.mu is held; p.tg is set.
func (p *PIDFD) targetLocked() *Task {
	if !p.thread && p.tg.leader != nil {
		return p.tg.leader
	}
	return p.task
}

// ThreadGroup returns the process the pidfd refers to (nil while clone
// makes it).
func (p *PIDFD) ThreadGroup() *ThreadGroup {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.tg
}

// PIDFDOf returns the pidfd behind a file description, or nil if it is
// not one.
func PIDFDOf(f *fs.FileDescription) *PIDFD {
	p, _ := f.Impl().(*PIDFD)
	return p
}

// Thread reports whether the pidfd refers to a thread (PIDFD_THREAD).
func (p *PIDFD) Thread() bool { return p.thread }

// OpenPIDFD implements pidfd_open(2): a new pidfd for the process (or the
// thread, with PIDFD_THREAD) whose id in t's namespace is pid. The caller
// installs it (always close-on-exec).
func (t *Task) OpenPIDFD(pid int32, flags uint32) (*fs.FileDescription, error) {
	if flags&^uint32(PIDFD_NONBLOCK|PIDFD_THREAD) != 0 || pid <= 0 {
		return nil, errEINVAL
	}
	k := t.k
	k.mu.Lock()
	target := t.PIDNamespace().tasks[ThreadID(pid)]
	if target == nil || target.tg.reaped {
		k.mu.Unlock()
		return nil, errESRCH
	}
	if flags&PIDFD_THREAD == 0 && target.tg.leader != target {
		// Linux's pidfd_prepare: the id must be a process's (ENOENT
		// since 6.9 or so; EINVAL before).
		k.mu.Unlock()
		return nil, unix.ENOENT
	}
	f, p := newPIDFDFile(t, target.tg.pidfdEvents, flags)
	p.setTargetLocked(target)
	k.mu.Unlock()
	return f, nil
}

// Readiness implements waiter.Waitable: POLLIN once the process (for a
// thread pidfd, the thread) has exited, with POLLHUP once it is reaped.
func (p *PIDFD) Readiness(mask waiter.EventMask) waiter.EventMask {
	k := p.k
	k.mu.Lock()
	defer k.mu.Unlock()
	var r waiter.EventMask
	switch {
	case p.tg == nil:
	case p.tg.reaped || (p.thread && p.task.exitState == taskDead && p.task != p.tg.leader):
		// Linux: no task left behind the pid.
		r = waiter.EventIn | waiter.EventRdNorm | waiter.EventHUp
	case p.thread && p.task.exitState == taskDead, !p.thread && p.tg.waitableZombieLocked():
		r = waiter.EventIn | waiter.EventRdNorm
	}
	return r & (mask | waiter.EventHUp)
}

// EventRegister implements waiter.Waitable.
func (p *PIDFD) EventRegister(e *waiter.Entry) { p.q.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (p *PIDFD) EventUnregister(e *waiter.Entry) { p.q.EventUnregister(e) }

// FDInfo adds Linux's "Pid:" and "NSpid:" lines to /proc/[pid]/fdinfo/N:
// the target's id in the namespace of the pidfd's maker and in each
// namespace below it down to the target's; -1 once the target is gone, 0
// when it is not visible there. (Linux numbers it in the namespace of the
// reading /proc; Moat uses the maker's, the same in all but rare cases.)
func (p *PIDFD) FDInfo() string {
	k := p.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if p.tg == nil {
		return ""
	}
	tk := p.targetLocked()
	gone := p.tg.reaped
	if p.thread && tk != p.tg.leader && tk.exitState == taskDead {
		gone = true
	}
	if gone {
		return "Pid:\t-1\nNSpid:\t-1\n"
	}
	id := p.ns.IDOfTaskLocked(tk)
	if id == 0 {
		return "Pid:\t0\nNSpid:\t0\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Pid:\t%d\nNSpid:", id)
	for l := p.ns.level; l < len(tk.ids); l++ {
		fmt.Fprintf(&b, "\t%d", tk.ids[l])
	}
	b.WriteString("\n")
	return b.String()
}

// setTargetLocked makes t the pidfd's target. Preconditions: Kernel.mu is
// held.
func (p *PIDFD) setTargetLocked(t *Task) {
	p.task, p.tg = t, t.tg
	t.tg.pidfdMade = true
}

// notifyPIDFDs wakes the pollers of tg's pidfds.
func (tg *ThreadGroup) notifyPIDFDs() {
	tg.pidfdEvents.Notify(waiter.EventIn | waiter.EventRdNorm)
}

// PIDFDSendSignal implements pidfd_send_signal(2): signal s to p's thread,
// process or process group (flags choose; 0 takes the pidfd's kind), with
// info from the application (nil: a kill(2)-like siginfo).
func (t *Task) PIDFDSendSignal(p *PIDFD, s Signal, info *SignalInfo, flags uint32) error {
	if flags&^uint32(PIDFD_SIGNAL_THREAD|PIDFD_SIGNAL_THREAD_GROUP|PIDFD_SIGNAL_PROCESS_GROUP) != 0 {
		return errEINVAL
	}
	scope := flags
	if scope&(scope-1) != 0 {
		return errEINVAL
	}
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if p.tg == nil {
		return errESRCH
	}
	ns := t.PIDNamespace()
	tk := p.targetLocked()
	// The target must be visible in the caller's namespace
	// (access_pidfd_pidns).
	if ns.idIn(tk.pidns, tk.ids) == 0 {
		return errEINVAL
	}
	if scope == 0 {
		scope = PIDFD_SIGNAL_THREAD_GROUP
		if p.thread {
			scope = PIDFD_SIGNAL_THREAD
		}
	}
	if info != nil {
		if info.Signo() != s {
			return errEINVAL
		}
		// Only the calling thread may be sent forged codes.
		if (tk != t || scope == PIDFD_SIGNAL_PROCESS_GROUP) && (info.Code() >= 0 || info.Code() == SI_TKILL) {
			return errEPERM
		}
	}
	// As Linux's kill_pid_info_type: a missing target (ESRCH) comes
	// before a bad signal (EINVAL), which comes before permission (EPERM).
	valid := s == 0 || s.IsValid()
	k.signalSender = t
	defer func() { k.signalSender = nil }()
	switch scope {
	case PIDFD_SIGNAL_THREAD:
		// pid_task(PIDTYPE_PID): the thread while it is not released.
		if tk.exitState == taskDead && (tk != p.tg.leader || p.tg.reaped) {
			return errESRCH
		}
		if !valid {
			return errEINVAL
		}
		if !mayKill(t, p.tg, s) {
			return errEPERM
		}
		if s == 0 {
			return nil
		}
		if info == nil {
			info = userInfo(t, p.tg, s, SI_TKILL)
		}
		return k.sendSignalToTaskLocked(tk, info)
	case PIDFD_SIGNAL_THREAD_GROUP:
		// pid_task(PIDTYPE_TGID): the process while it has a task behind
		// the pid (a zombie counts, a thread pidfd's exited thread not).
		if p.tg.reaped || (tk != p.tg.leader && tk.exitState == taskDead) {
			return errESRCH
		}
		if !valid {
			return errEINVAL
		}
		if !mayKill(t, p.tg, s) {
			return errEPERM
		}
		if s == 0 || p.tg.exited {
			return nil
		}
		if info == nil {
			info = userInfo(t, p.tg, s, SI_USER)
		}
		return k.sendSignalToGroupLocked(p.tg, s, info)
	default:
		// The process group whose id is the target's pid.
		if p.tg.reaped {
			return errESRCH
		}
		pg := ns.pgs[ns.idIn(tk.pidns, tk.ids)]
		if pg == nil || len(pg.members) == 0 {
			return errESRCH
		}
		if !valid {
			return errEINVAL
		}
		ret := errESRCH
		for tg := range pg.members {
			if !mayKill(t, tg, s) {
				if ret == errESRCH {
					ret = errEPERM
				}
				continue
			}
			ret = nil
			if s == 0 || tg.exited {
				continue
			}
			i := info
			if i == nil {
				i = userInfo(t, tg, s, SI_USER)
			}
			k.sendSignalToGroupLocked(tg, s, i)
		}
		return ret
	}
}

// PIDFDGetFD implements pidfd_getfd(2)'s lookup: a new reference to the
// file description fd of p's process, if t may ptrace-attach to it.
func (t *Task) PIDFDGetFD(p *PIDFD, fd int32) (*fs.FileDescription, error) {
	k := t.k
	k.mu.Lock()
	if p.tg == nil {
		k.mu.Unlock()
		return nil, errESRCH
	}
	target := p.tg.leader
	if p.thread {
		target = p.task
	}
	if p.tg.reaped || target == nil || (p.thread && target.exitState == taskDead) {
		k.mu.Unlock()
		return nil, errESRCH
	}
	defer k.mu.Unlock()
	if !ptraceMayAttach(t, target) {
		return nil, errEPERM
	}
	// An exiting task's table is being (or has been) released: its
	// descriptors are gone (fget_task on a task without files).
	// Lock order: Kernel.mu, then the table's.
	fdt := target.FDTable()
	if fdt == nil || target.exitState != taskRunning {
		return nil, unix.EBADF
	}
	f := fdt.GetFile(fd)
	if f == nil {
		return nil, unix.EBADF
	}
	return f, nil
}

// clonePIDFD makes and installs in t's table the pidfd clone(CLONE_PIDFD)
// returns, before the child exists (so that EMFILE fails the clone), and
// writes its number at addr. The child's thread group gets the returned
// queue (a new one, or t's own for CLONE_THREAD); the caller sets the
// pidfd's target under Kernel.mu before the child runs.
func (t *Task) clonePIDFD(addr uintptr, thread bool) (*PIDFD, int32, error) {
	q, flags := new(waiter.Queue), uint32(0)
	if thread {
		q, flags = t.tg.pidfdEvents, PIDFD_THREAD
	}
	f, p := newPIDFDFile(t, q, flags)
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: true}, t.tg.limits.Get(unix.RLIMIT_NOFILE).Cur)
	if err != nil {
		return nil, -1, err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(fd))
	if _, err := t.CopyOutBytes(addr, b[:]); err != nil {
		t.FDTable().Remove(fd)
		return nil, -1, err
	}
	return p, fd, nil
}

// RefersToProcess reports whether waitid(P_PIDFD) may wait for the pidfd's
// target: a process pidfd, or a thread pidfd of a process's leader.
func (p *PIDFD) RefersToProcess() bool {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.tg != nil && (!p.thread || p.task == p.tg.leader)
}
