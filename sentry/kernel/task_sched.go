package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// This file holds the scheduling attributes Linux keeps per thread (nice,
// policy and real-time priority, CPU affinity, I/O priority, timer slack,
// personality, machine-check policy) and the few attributes it keeps per
// address space, which Moat keeps per process (dumpable, the user
// namespace the address space belongs to, THP disable).
// The Sentry runs tasks on Go's scheduler: these values are stored and
// reported, and checked as Linux checks them, but do not change how tasks
// are scheduled.

// Scheduling policies and limits.
const (
	// MinNice and MaxNice bound nice values.
	MinNice = -20
	MaxNice = 19
	// MaxRTPriority is the highest SCHED_FIFO/SCHED_RR priority.
	MaxRTPriority = 99
	// DefaultTimerSlack is the timer slack of init, in nanoseconds.
	DefaultTimerSlack = 50000
	// RRTimeslice is SCHED_RR's quantum, in nanoseconds (RR_TIMESLICE).
	RRTimeslice = 100_000_000
)

// NumCPUs is how many CPUs the sandbox shows.
func NumCPUs() int { return runtime.NumCPU() }

// CPUSet is a CPU affinity mask, one bit per CPU, 64 CPUs a word.
type CPUSet []uint64

// AllCPUs returns the set of every CPU the sandbox shows.
func AllCPUs() CPUSet {
	n := NumCPUs()
	s := make(CPUSet, (n+63)/64)
	for i := 0; i < n; i++ {
		s[i/64] |= 1 << (i % 64)
	}
	return s
}

// Intersect returns s & o.
func (s CPUSet) Intersect(o CPUSet) CPUSet {
	out := make(CPUSet, min(len(s), len(o)))
	for i := range out {
		out[i] = s[i] & o[i]
	}
	return out
}

// Empty reports whether s has no CPU.
func (s CPUSet) Empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// First returns the lowest CPU in s, or 0 when s is empty.
func (s CPUSet) First() int {
	for i, w := range s {
		for b := 0; b < 64; b++ {
			if w&(1<<b) != 0 {
				return i*64 + b
			}
		}
	}
	return 0
}

// SchedParams are a task's scheduling policy and parameters.
type SchedParams struct {
	// Policy is SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH or
	// SCHED_IDLE.
	Policy int32
	// Priority is the real-time priority (1..99 for FIFO and RR, else 0).
	Priority int32
	// Nice is the nice value, -20..19.
	Nice int32
	// ResetOnFork is SCHED_RESET_ON_FORK.
	ResetOnFork bool
}

// IsRealtime reports whether p's policy is SCHED_FIFO or SCHED_RR.
func (p SchedParams) IsRealtime() bool {
	return p.Policy == unix.SCHED_FIFO || p.Policy == unix.SCHED_RR
}

// taskAttrs are per-thread attributes other tasks may read or set (by
// tid), so they have their own lock.
type taskAttrs struct {
	mu    sync.Mutex
	sched SchedParams
	// affinity is nil for "every CPU".
	affinity CPUSet
	ioprio   int32
	// timerSlack and defaultTimerSlack are in nanoseconds; 0 means
	// DefaultTimerSlack.
	timerSlack, defaultTimerSlack uint64
	personality                   uint32
	// mceKill is PR_MCE_KILL's policy plus one (PR_MCE_KILL_EARLY or
	// PR_MCE_KILL_LATE), or 0 for the system default.
	mceKill int32
}

// inheritAttrs gives a new task the attributes of its creator, as fork
// does: everything is inherited, except that SCHED_RESET_ON_FORK sends the
// child back to SCHED_OTHER with a nice of at least 0, and the child's
// default timer slack is the parent's current slack.
func (nt *Task) inheritAttrs(parent *Task) {
	p := &parent.attrs
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &nt.attrs
	c.sched = p.sched
	if c.sched.ResetOnFork {
		if c.sched.IsRealtime() {
			c.sched.Policy = unix.SCHED_NORMAL
			c.sched.Priority = 0
		}
		if c.sched.Nice < 0 {
			c.sched.Nice = 0
		}
		c.sched.ResetOnFork = false
	}
	c.affinity = p.affinity
	c.ioprio = p.ioprio
	slack := p.timerSlack
	if slack == 0 {
		slack = p.defaultTimerSlack
	}
	c.timerSlack = slack
	c.defaultTimerSlack = slack
	c.personality = p.personality
	c.mceKill = p.mceKill
}

// SchedParams returns t's scheduling policy and parameters.
func (t *Task) SchedParams() SchedParams {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	return t.attrs.sched
}

// SetSchedParams replaces t's scheduling policy and parameters. The
// caller has checked them (the syscall layer knows the permission rules).
// As on Linux 6.7 and later, a real-time task has no timer slack, and
// leaving real-time scheduling restores the default slack.
func (t *Task) SetSchedParams(p SchedParams) {
	t.attrs.mu.Lock()
	if p.IsRealtime() != t.attrs.sched.IsRealtime() {
		t.attrs.timerSlack = 0
	}
	t.attrs.sched = p
	t.attrs.mu.Unlock()
}

// Nice returns t's nice value.
func (t *Task) Nice() int32 { return t.SchedParams().Nice }

// SetNice sets t's nice value, clamped to -20..19.
func (t *Task) SetNice(n int32) {
	n = max(MinNice, min(MaxNice, n))
	t.attrs.mu.Lock()
	t.attrs.sched.Nice = n
	t.attrs.mu.Unlock()
}

// Affinity returns t's CPU affinity mask.
func (t *Task) Affinity() CPUSet {
	t.attrs.mu.Lock()
	a := t.attrs.affinity
	t.attrs.mu.Unlock()
	if a == nil {
		return AllCPUs()
	}
	return append(CPUSet(nil), a...)
}

// SetAffinity sets t's CPU affinity to mask restricted to the CPUs the
// sandbox shows. It fails with EINVAL if none is left.
func (t *Task) SetAffinity(mask CPUSet) error {
	m := mask.Intersect(AllCPUs())
	if m.Empty() {
		return errEINVAL
	}
	t.attrs.mu.Lock()
	t.attrs.affinity = m
	t.attrs.mu.Unlock()
	return nil
}

// IOPriority returns t's I/O priority (ioprio_get's value).
func (t *Task) IOPriority() int32 {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	return t.attrs.ioprio
}

// SetIOPriority sets t's I/O priority.
func (t *Task) SetIOPriority(p int32) {
	t.attrs.mu.Lock()
	t.attrs.ioprio = p
	t.attrs.mu.Unlock()
}

// TimerSlack returns PR_GET_TIMERSLACK's value (0 for real-time tasks).
func (t *Task) TimerSlack() uint64 {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	if t.attrs.sched.IsRealtime() {
		return 0
	}
	if t.attrs.timerSlack == 0 {
		if t.attrs.defaultTimerSlack != 0 {
			return t.attrs.defaultTimerSlack
		}
		return DefaultTimerSlack
	}
	return t.attrs.timerSlack
}

// SetTimerSlack implements PR_SET_TIMERSLACK: 0 restores the default the
// task inherited. Real-time tasks ignore it, as on Linux.
func (t *Task) SetTimerSlack(ns uint64) {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	if t.attrs.sched.IsRealtime() {
		return
	}
	if ns == 0 {
		ns = t.attrs.defaultTimerSlack
	}
	t.attrs.timerSlack = ns
}

// Personality flags Moat acts on (linux/personality.h; golang.org/x/sys
// does not name them).
const (
	// PersonalityUname26 makes uname(2) report a 2.6 release.
	PersonalityUname26 = 0x0020000
	// PersonalityReadImpliesExec makes readable mappings executable
	// (mmap and mprotect). exec of a 64-bit program clears it, as
	// x86-64 Linux's set_personality_64bit does.
	PersonalityReadImpliesExec = 0x0400000
)

// ReadImpliesExec reports whether t's personality has READ_IMPLIES_EXEC.
func (t *Task) ReadImpliesExec() bool {
	return t.Personality()&PersonalityReadImpliesExec != 0
}

// Personality returns t's execution domain and flags (personality(2)).
func (t *Task) Personality() uint32 {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	return t.attrs.personality
}

// SetPersonality sets t's personality and returns the old one.
func (t *Task) SetPersonality(p uint32) uint32 {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	old := t.attrs.personality
	t.attrs.personality = p
	return old
}

// MCEKillPolicy returns PR_MCE_KILL_GET's value.
func (t *Task) MCEKillPolicy() int32 {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	if t.attrs.mceKill == 0 {
		return unix.PR_MCE_KILL_DEFAULT
	}
	return t.attrs.mceKill - 1
}

// SetMCEKillPolicy sets PR_MCE_KILL's policy (PR_MCE_KILL_DEFAULT clears it).
func (t *Task) SetMCEKillPolicy(p int32) {
	t.attrs.mu.Lock()
	defer t.attrs.mu.Unlock()
	if p == unix.PR_MCE_KILL_DEFAULT {
		t.attrs.mceKill = 0
		return
	}
	t.attrs.mceKill = p + 1
}

// procAttrs are the attributes Linux keeps in the address space and Moat
// keeps per process. The zero value is a fresh process's.
type procAttrs struct {
	// nonDumpable is !PR_GET_DUMPABLE.
	nonDumpable atomic.Bool
	// userNS is the user namespace the address space was made in, by
	// the last execve (nil: the initial one), whose CAP_SYS_PTRACE
	// reaches a non-dumpable process (Linux's mm->user_ns).
	userNS atomic.Pointer[auth.UserNamespace]
	// thpDisable is PR_SET_THP_DISABLE.
	thpDisable atomic.Bool
	// oomScoreAdj and oomScoreAdjMin are /proc/[pid]/oom_score_adj and
	// the floor an unprivileged write may lower it to (procfs.go).
	oomScoreAdj, oomScoreAdjMin atomic.Int32
}

// inherit copies a parent process's attributes into a forked child's.
func (a *procAttrs) inherit(p *procAttrs) {
	a.nonDumpable.Store(p.nonDumpable.Load())
	a.userNS.Store(p.userNS.Load())
	a.thpDisable.Store(p.thpDisable.Load())
	a.oomScoreAdj.Store(p.oomScoreAdj.Load())
	a.oomScoreAdjMin.Store(p.oomScoreAdjMin.Load())
}

// resetForExec sets the attributes execve resets: a program is dumpable
// unless its real and effective ids differ (fs.suid_dumpable is 0), and
// its address space belongs to the caller's user namespace ns.
func (a *procAttrs) resetForExec(idsDiffer bool, ns *auth.UserNamespace) {
	a.nonDumpable.Store(idsDiffer)
	a.userNS.Store(ns)
}

// THPDisabled returns PR_GET_THP_DISABLE's value.
func (tg *ThreadGroup) THPDisabled() bool { return tg.procAttrs.thpDisable.Load() }

// SetTHPDisabled implements PR_SET_THP_DISABLE.
func (tg *ThreadGroup) SetTHPDisabled(v bool) { tg.procAttrs.thpDisable.Store(v) }
