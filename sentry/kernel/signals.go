package kernel

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// SignalHandlers are the actions of the 64 signals, shared by the tasks
// created with CLONE_SIGHAND. Guarded by Kernel.mu.
type SignalHandlers struct {
	actions [SignalMaximum + 1]SigAction
}

// copy returns an unshared copy (fork without CLONE_SIGHAND).
func (h *SignalHandlers) copy() *SignalHandlers {
	n := *h
	return &n
}

// resetForExec sets handled signals back to SIG_DFL, as execve does.
func (h *SignalHandlers) resetForExec() *SignalHandlers {
	n := &SignalHandlers{}
	for i, a := range h.actions {
		if a.Handler == SIG_IGN {
			n.actions[i] = SigAction{Handler: SIG_IGN}
		}
	}
	return n
}

// SignalStack is a stack_t.
type SignalStack struct {
	Sp    uint64
	Flags int32
	Size  uint64
}

// sigaltstack flags.
const (
	SS_ONSTACK    = 1
	SS_DISABLE    = 2
	SS_AUTODISARM = -1 << 31
)

// onStack reports whether sp is within the stack.
func (s *SignalStack) onStack(sp uint64) bool {
	return s.Flags&SS_DISABLE == 0 && s.Size != 0 && sp > s.Sp && sp-s.Sp <= s.Size
}

// pendingSignals is a set of pending signals with their siginfos.
type pendingSignals struct {
	set    SignalSet
	queues [SignalMaximum + 1][]*SignalInfo
	count  int
}

// enqueue adds info. A standard signal already pending is not queued
// twice. It reports whether the signal was added.
func (p *pendingSignals) enqueue(info *SignalInfo) bool {
	s := info.Signo()
	if !s.IsRealtime() && p.set&SignalSetOf(s) != 0 {
		return false
	}
	p.queues[s] = append(p.queues[s], info)
	p.set |= SignalSetOf(s)
	p.count++
	return true
}

// dequeue removes and returns the lowest-numbered pending signal not in
// mask, synchronous fault signals first, or nil. A POSIX timer's signal
// gets its overrun count now, or is dropped if the timer was reset or
// deleted since it was queued, as on Linux.
// Preconditions: Kernel.mu is held.
func (p *pendingSignals) dequeue(mask SignalSet) *SignalInfo {
	for {
		avail := p.set &^ mask
		if avail == 0 {
			return nil
		}
		const sync = SignalSet(1<<(SIGSEGV-1) | 1<<(SIGBUS-1) | 1<<(SIGILL-1) | 1<<(SIGTRAP-1) | 1<<(SIGFPE-1) | 1<<(SIGSYS-1))
		pick := avail
		if avail&sync != 0 {
			pick = avail & sync
		}
		var s Signal
		for s = 1; s <= SignalMaximum; s++ {
			if pick&SignalSetOf(s) != 0 {
				break
			}
		}
		info := p.take(s)
		if info == nil || info.timer == nil || info.timer.dequeuedLocked(info) {
			return info
		}
	}
}

// remove drops info from the queue if it is pending.
func (p *pendingSignals) remove(info *SignalInfo) bool {
	s := info.Signo()
	if !s.IsValid() {
		return false
	}
	q := p.queues[s]
	for i, o := range q {
		if o != info {
			continue
		}
		copy(q[i:], q[i+1:])
		q[len(q)-1] = nil
		p.queues[s] = q[:len(q)-1]
		if len(p.queues[s]) == 0 {
			p.queues[s] = nil
			p.set &^= SignalSetOf(s)
		}
		p.count--
		return true
	}
	return false
}

// take removes one instance of s.
func (p *pendingSignals) take(s Signal) *SignalInfo {
	q := p.queues[s]
	if len(q) == 0 {
		return nil
	}
	info := q[0]
	q[0] = nil
	p.queues[s] = q[1:]
	if len(p.queues[s]) == 0 {
		p.queues[s] = nil
		p.set &^= SignalSetOf(s)
	}
	p.count--
	return info
}

// discard drops every pending instance of the signals in set.
func (p *pendingSignals) discard(set SignalSet) {
	for s := Signal(1); s <= SignalMaximum; s++ {
		if set&SignalSetOf(s) != 0 && p.queues[s] != nil {
			p.count -= len(p.queues[s])
			p.queues[s] = nil
		}
	}
	p.set &^= set
}

var stopSignals = SignalSetOf(SIGSTOP) | SignalSetOf(SIGTSTP) | SignalSetOf(SIGTTIN) | SignalSetOf(SIGTTOU)

// isIgnoredLocked reports whether s would be ignored by tg's handlers now.
func isIgnored(h *SignalHandlers, s Signal) bool {
	a := h.actions[s]
	if a.Handler == SIG_IGN {
		return true
	}
	return a.Handler == SIG_DFL && defaultActionOf(s) == actIgnore
}

// SendSignal sends info to task t (tkill, tgkill, faults, timers with
// SIGEV_THREAD_ID).
func (t *Task) SendSignal(info *SignalInfo) error {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.k.sendSignalToTaskLocked(t, info)
}

// SendGroupSignal sends info to t's thread group.
func (t *Task) SendGroupSignal(info *SignalInfo) error {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.k.sendSignalToGroupLocked(t.tg, info.Signo(), info)
}

// SendSignal sends info to the thread group.
func (tg *ThreadGroup) SendSignal(info *SignalInfo) error {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	return tg.k.sendSignalToGroupLocked(tg, info.Signo(), info)
}

// preSendLocked does what sending s does regardless of delivery (SIGCONT
// resumes, stop signals cancel SIGCONT, SIGKILL kills), and reports whether
// the signal must still be queued. Preconditions: k.mu is held.
func (k *Kernel) preSendLocked(tg *ThreadGroup, s Signal) bool {
	if tg.exited || tg.groupExiting {
		return false
	}
	switch {
	case s == SIGKILL:
		k.groupExitLocked(tg, KilledBy(SIGKILL, false))
		return false
	case s == SIGCONT:
		tg.pending.discard(stopSignals)
		for t := range tg.tasks {
			t.pending.discard(stopSignals)
		}
		k.continueGroupLocked(tg)
	case stopSignals&SignalSetOf(s) != 0:
		tg.pending.discard(SignalSetOf(SIGCONT))
		for t := range tg.tasks {
			t.pending.discard(SignalSetOf(SIGCONT))
		}
	}
	return true
}

// initIgnoresLocked reports whether s, sent to t's thread group, is dropped
// because that is the PID namespace's init, which gets only the signals it
// handles or blocks when they come from inside the namespace, SIGKILL and
// SIGSTOP included (Linux's SIGNAL_UNKILLABLE). Faults are forced and do
// not come this way; SignalInit (from the host) is not stopped, and
// SignalInitFromAncestor lets SIGKILL and SIGSTOP through.
// Preconditions: k.mu is held.
//
// The init of a nested namespace is protected the same way: a signal
// from a task of an ancestor namespace (one the init's namespace does
// not see) is treated as SignalInitFromAncestor's.
func (k *Kernel) initIgnoresLocked(t *Task, s Signal) bool {
	if !t.tg.isNSInitLocked() || t.sigMask&SignalSetOf(s) != 0 ||
		t.sigHandlers.actions[s].Handler != SIG_DFL {
		return false
	}
	if t.tg != k.init {
		if snd := k.signalSender; snd != nil && t.tg.pidns.idOfTGLocked(snd.tg) == 0 {
			return s != SIGKILL && s != SIGSTOP
		}
		return true
	}
	switch k.initSignalFrom {
	case fromHostForced:
		return false
	case fromAncestor:
		return s != SIGKILL && s != SIGSTOP
	default:
		return true
	}
}

// sigQueueFullLocked reports whether a real-time signal queued with info
// for tg must fail with EAGAIN under RLIMIT_SIGPENDING: Linux counts the
// signals queued for each user (the target's real UID), standard ones
// included, against the target's limit, and refuses only real-time
// signals not sent by kill(2) (those are queued anyway) nor by POSIX
// timers (whose entries are allocated with the timer).
//
// Preconditions: k.mu is held.
func (k *Kernel) sigQueueFullLocked(tg *ThreadGroup, uid auth.KUID, info *SignalInfo) bool {
	if !info.Signo().IsRealtime() || info.Code() == SI_USER || info.Code() == SI_TIMER {
		return false
	}
	lim := tg.limits.Get(unix.RLIMIT_SIGPENDING).Cur
	if lim == RLimInfinity {
		return false
	}
	var n uint64
	for _, o := range k.threadGroups {
		if o.exited {
			continue
		}
		counted := false
		for t := range o.tasks {
			if t.Credentials().RealUID != uid {
				continue
			}
			n += uint64(t.pending.count)
			if !counted {
				n += uint64(o.pending.count)
				counted = true
			}
		}
	}
	return n+1 > lim
}

// sendSignalToTaskLocked queues info on t. Preconditions: k.mu is held.
func (k *Kernel) sendSignalToTaskLocked(t *Task, info *SignalInfo) error {
	s := info.Signo()
	if !s.IsValid() {
		return errEINVAL
	}
	if t.exitState != taskRunning || k.initIgnoresLocked(t, s) {
		return nil
	}
	if !k.preSendLocked(t.tg, s) {
		return nil
	}
	if isIgnored(t.sigHandlers, s) && t.sigMask&SignalSetOf(s) == 0 {
		return nil
	}
	if k.sigQueueFullLocked(t.tg, t.Credentials().RealUID, info) {
		return errEAGAIN
	}
	if !t.pending.enqueue(info) {
		return nil
	}
	t.tg.notifySignalPendingLocked()
	if t.sigMask&SignalSetOf(s) == 0 || s == SIGKILL {
		t.interrupt()
	} else {
		// Blocked: still wake sigtimedwait callers.
		t.wakeBlocked()
	}
	return nil
}

// sendSignalToGroupLocked queues info on tg. Preconditions: k.mu is held.
func (k *Kernel) sendSignalToGroupLocked(tg *ThreadGroup, s Signal, info *SignalInfo) error {
	if !s.IsValid() {
		return errEINVAL
	}
	if tg.leader != nil && k.initIgnoresLocked(tg.leader, s) {
		return nil
	}
	if !k.preSendLocked(tg, s) {
		return nil
	}
	if tg.leader == nil {
		return nil
	}
	h := tg.leader.sigHandlers
	blockedByAll := true
	for t := range tg.tasks {
		if t.sigMask&SignalSetOf(s) == 0 {
			blockedByAll = false
			break
		}
	}
	if isIgnored(h, s) && !blockedByAll {
		return nil
	}
	if k.sigQueueFullLocked(tg, tg.leader.Credentials().RealUID, info) {
		return errEAGAIN
	}
	if !tg.pending.enqueue(info) {
		return nil
	}
	tg.notifySignalPendingLocked()
	// Wake a thread that can take it: the leader first, as Linux does.
	if l := tg.leader; l.exitState == taskRunning && l.sigMask&SignalSetOf(s) == 0 {
		l.interrupt()
		return nil
	}
	for t := range tg.tasks {
		if t.exitState == taskRunning && t.sigMask&SignalSetOf(s) == 0 {
			t.interrupt()
			return nil
		}
	}
	for t := range tg.tasks {
		t.wakeBlocked()
	}
	return nil
}

// interrupt makes t look at its pending work: a running task returns from
// application code, a blocked one wakes. Any goroutine may call it.
func (t *Task) interrupt() {
	t.pendingWork.Store(true)
	t.wakeBlocked()
	t.pctx.Interrupt()
}

// wakeBlocked wakes t if it sleeps in BlockOn, without interrupting
// application code.
func (t *Task) wakeBlocked() {
	select {
	case t.interruptCh <- struct{}{}:
	default:
	}
}

// hasDeliverableLocked reports whether a signal can be delivered to t now,
// or t must stop or exit. Preconditions: k.mu is held.
func (t *Task) hasDeliverableLocked() bool {
	if t.tg.groupExiting || t.exitState != taskRunning || t.tg.groupStopPending || t.tg.execing != nil && t.tg.execing != t {
		return true
	}
	return (t.pending.set|t.tg.pending.set)&^t.sigMask != 0
}

// PendingSignals returns the signals pending for t or its group (rt_sigpending).
func (t *Task) PendingSignals() SignalSet {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return (t.pending.set | t.tg.pending.set) & t.sigMask
}

// SignalMask returns t's blocked set.
func (t *Task) SignalMask() SignalSet {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.sigMask
}

// SetSignalMask replaces t's blocked set (SIGKILL and SIGSTOP stay
// unblocked).
func (t *Task) SetSignalMask(m SignalSet) {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	t.setSignalMaskLocked(m)
}

func (t *Task) setSignalMaskLocked(m SignalSet) {
	m &^= UnblockableSignals
	unblocked := t.sigMask &^ m
	t.sigMask = m
	if unblocked&(t.pending.set|t.tg.pending.set) != 0 {
		t.pendingWork.Store(true)
	}
	// Signals for the group that this thread blocked and another thread
	// does not block may now go there.
	if blockedNow := m &^ unblocked; blockedNow&t.tg.pending.set != 0 {
		for o := range t.tg.tasks {
			if o != t && (t.tg.pending.set&^o.sigMask) != 0 {
				o.interrupt()
			}
		}
	}
}

// SetSavedSignalMask makes the next signal delivery (or return to user
// mode) restore old as the mask (rt_sigsuspend, ppoll, pselect).
func (t *Task) SetSavedSignalMask(old SignalSet) {
	t.k.mu.Lock()
	t.savedMask = old
	t.haveSavedMask = true
	t.k.mu.Unlock()
}

// SigAction implements rt_sigaction's exchange. Preconditions: none.
func (t *Task) SigAction(s Signal, act *SigAction) (SigAction, error) {
	if !s.IsValid() {
		return SigAction{}, errEINVAL
	}
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	old := t.sigHandlers.actions[s]
	if act != nil {
		if s == SIGKILL || s == SIGSTOP {
			return SigAction{}, errEINVAL
		}
		a := *act
		a.Mask &^= UnblockableSignals
		t.sigHandlers.actions[s] = a
		// Setting a signal to be ignored discards it where pending.
		if isIgnored(t.sigHandlers, s) {
			t.tg.pending.discard(SignalSetOf(s))
			for o := range t.tg.tasks {
				o.pending.discard(SignalSetOf(s))
			}
		}
	}
	return old, nil
}

// SignalAltStack implements sigaltstack's exchange.
func (t *Task) SignalAltStack() SignalStack {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	s := t.altStack
	if s.Flags&SS_DISABLE == 0 && s.onStack(t.regs.Rsp) {
		s.Flags |= SS_ONSTACK
	}
	if s.Size == 0 && s.Sp == 0 {
		s.Flags |= SS_DISABLE
	}
	return s
}

// SetSignalAltStack sets the alternate stack; EPERM while running on it.
func (t *Task) SetSignalAltStack(s SignalStack) error {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	if t.altStack.onStack(t.regs.Rsp) {
		return errEPERM
	}
	t.altStack = s
	return nil
}

// handlesSignalWithContext reports whether s, raised now, would run a
// handler that takes a ucontext (SA_SIGINFO): it is neither blocked nor set
// to SIG_DFL or SIG_IGN.
func (t *Task) handlesSignalWithContext(s Signal) bool {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	a := t.sigHandlers.actions[s]
	return a.Handler != SIG_DFL && a.Handler != SIG_IGN && a.Flags&SA_SIGINFO != 0 && t.sigMask&SignalSetOf(s) == 0
}

// ForceSignal delivers a synchronous signal (a fault): if it is blocked or
// ignored it is unblocked and set to SIG_DFL first, as Linux's
// force_sig_info does.
func (t *Task) ForceSignal(info *SignalInfo) {
	t.forceSignal(info, false)
}

// forceSignal is ForceSignal; with toDefault the action is reset to
// SIG_DFL even if handled, making the signal fatal (Linux's
// force_fatal_sig).
func (t *Task) forceSignal(info *SignalInfo, toDefault bool) {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	s := info.Signo()
	a := &t.sigHandlers.actions[s]
	blocked := t.sigMask&SignalSetOf(s) != 0
	if a.Handler == SIG_IGN || blocked || toDefault {
		a.Handler = SIG_DFL
		t.sigMask &^= SignalSetOf(s)
	}
	info.reachesInit = true
	t.pending.queues[s] = append([]*SignalInfo{info}, t.pending.queues[s]...)
	t.pending.set |= SignalSetOf(s)
	t.pending.count++
	t.pendingWork.Store(true)
}

// signalOnce is for process-wide one-shot logs.
var signalOnce sync.Map
