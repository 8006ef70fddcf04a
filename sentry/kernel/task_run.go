package kernel

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Start runs the task's goroutine.
func (t *Task) Start() {
	if t.k.freezer.frozen.Load() {
		t.pendingWork.Store(true) // born in a paused kernel (freeze.go)
	}
	go t.run()
}

// run is the task's goroutine: it alternates between application code and
// the Sentry's handling of what stopped it.
func (t *Task) run() {
	defer t.pctx.Release()
	defer t.releaseFaultReplay()
	for {
		if t.pendingWork.Load() {
			t.pendingWork.Store(false)
			t.waitWhileFrozen()
			if !t.handleSignals() {
				return
			}
		}
		mm := t.MemoryManager()
		as, err := mm.AddressSpace()
		if err != nil {
			t.k.Log.Info("creating an address space failed", "tid", t.tid, "err", err)
			t.killGroup(SIGKILL)
			continue
		}
		if t.fpInit || t.fpCopy != nil {
			t.applyFPState(as)
		}
		start := time.Now()
		t.runningSince.Store(start.UnixNano())
		res, info, err := t.pctx.Switch(as, &t.regs)
		now := time.Now()
		t.cpuSeq.Add(1)
		t.utime.Add(int64(now.Sub(start)))
		t.runningSince.Store(0)
		t.cpuSeq.Add(1)
		if err != nil {
			if errors.Is(err, platform.ErrContextDead) {
				t.k.Log.Info("application thread died on the host", "tid", t.tid, "err", err)
			} else {
				t.k.Log.Info("platform switch failed", "tid", t.tid, "err", err)
			}
			t.killGroup(SIGKILL)
			continue
		}
		switch res {
		case platform.SwitchSyscall:
			t.lastFault = 0
			t.waited = 0
			if !t.doSyscall() {
				return
			}
			t.accountSystem(now)
		case platform.SwitchFault:
			t.waited = 0
			t.handleFault(mm, info)
			t.accountSystem(now)
		case platform.SwitchInterrupted:
			// Pending work, if any, is handled at the top.
		}
	}
}

// applyFPState resets or copies the FP state before the first switch after
// exec or clone.
func (t *Task) applyFPState(as platform.AddressSpace) {
	if t.fpCopy != nil {
		if err := t.pctx.SetFPState(as, t.fpCopy); err != nil {
			t.k.Log.Debug("copying FP state failed", "tid", t.tid, "err", err)
		}
		t.fpCopy = nil
		t.fpInit = false
		return
	}
	t.fpInit = false
	cur, err := t.pctx.FPState(as)
	if err != nil {
		return
	}
	// A clean state: x87 control word 0x37f, MXCSR 0x1f80, no components
	// in use (XSTATE_BV 0), everything else zero.
	clean := make([]byte, len(cur))
	clean[0], clean[1] = 0x7f, 0x03
	clean[24], clean[25] = 0x80, 0x1f
	copy(clean[28:32], cur[28:32])     // MXCSR_MASK, the CPU's own
	copy(clean[464:512], cur[464:512]) // the kernel's software-reserved bytes
	if len(clean) >= 520 {
		// XSTATE_BV: x87 and SSE in their init state.
		clean[512] = 0
	}
	t.pctx.SetFPState(as, clean)
}

// handleFault turns a host fault into a page population or a signal.
func (t *Task) handleFault(m *mm.MemoryManager, info *platform.SignalInfo) {
	switch info.Signo {
	case int32(SIGSEGV), int32(SIGBUS):
		// Page faults (SEGV_MAPERR, SEGV_ACCERR) may be the Sentry's lazy
		// mappings; general protection faults (SI_KERNEL) pass through.
		if info.Signo == int32(SIGSEGV) && (info.Code == mm.SEGV_MAPERR || info.Code == mm.SEGV_ACCERR) {
			addr := uintptr(info.Addr)
			res, code := m.HandleFault(addr, info.Code)
			t.k.Log.Debug("fault", "tid", t.tid, "addr", addr, "rip", t.regs.Rip, "hostcode", info.Code, "result", res, "code", code)
			if res == mm.FaultHandled {
				t.counters.minFlt.Add(1)
				// A read fault then a copy-on-write fault at one address
				// is progress; the same fault again and again is not.
				if t.lastFault == addr {
					t.faultRepeats++
				} else {
					t.lastFault, t.faultRepeats = addr, 0
				}
				if t.faultRepeats < 4 {
					return
				}
				res, code = mm.FaultSIGSEGV, mm.SEGV_ACCERR
			}
			// The page was just mapped for this access: it was not
			// present when the instruction started.
			fresh := t.lastFault == addr
			t.lastFault, t.faultRepeats = 0, 0
			sig := Signal(SIGSEGV)
			if res == mm.FaultSIGBUS {
				sig = SIGBUS
			}
			si := NewSignalInfo(sig, code)
			si.SetAddr(info.Addr)
			if t.handlesSignalWithContext(sig) {
				// Only a handler given the ucontext sees the
				// error code.
				si.faultErr = t.pageFaultErrorCode(m, addr, sig, fresh)
			}
			t.ForceSignal(si)
			return
		}
	}
	// Other synchronous faults pass their host siginfo through.
	si := &SignalInfo{Raw: info.Raw}
	if info.Signo == int32(SIGSEGV) && info.Code == SI_KERNEL {
		si.faultErr = t.gpErrorCode()
	}
	t.ForceSignal(si)
}

// killGroup ends t's thread group with a fatal signal.
func (t *Task) killGroup(s Signal) {
	t.k.mu.Lock()
	t.k.groupExitLocked(t.tg, KilledBy(s, false))
	t.k.mu.Unlock()
}

// BlockOn implements fs.Context.BlockOn.
func (t *Task) BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error {
	var timeout <-chan time.Time
	if hasDeadline {
		d := time.Until(deadline)
		if d <= 0 {
			select {
			case <-ch:
				return nil
			default:
				return unix.ETIMEDOUT
			}
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		timeout = tm.C
	}
	t.setRunState(StateSleeping)
	defer t.setRunState(StateRunning)
	defer t.accountWait(time.Now())
	// Poll briefly before parking: waking a goroutine locked to its OS
	// thread costs a scheduler handoff between threads, which dwarfs a
	// short spin when the event is already on its way (pipe and futex
	// ping-pong between tasks).
	if ch != nil {
		spinUntil := time.Now().Add(blockSpin)
		for time.Now().Before(spinUntil) {
			select {
			case <-ch:
				return nil
			default:
			}
			if t.pendingWork.Load() {
				break
			}
		}
	}
	// Parking is a voluntary context switch.
	t.counters.nvcsw.Add(1)
	for {
		if t.interrupted() {
			return syserror.ErrInterrupted
		}
		select {
		case <-ch:
			return nil
		case <-timeout:
			return unix.ETIMEDOUT
		case <-t.interruptCh:
		}
	}
}

// blockSpin is how long BlockOn polls before it parks the goroutine.
const blockSpin = 30 * time.Microsecond

// Sleep blocks for d or until interrupted.
func (t *Task) Sleep(d time.Duration) error {
	err := t.BlockOn(nil, time.Now().Add(d), true)
	if err == unix.ETIMEDOUT {
		return nil
	}
	return err
}

// interrupted reports whether a blocking call must return to let the task
// handle a signal, stop or exit.
func (t *Task) interrupted() bool {
	if !t.pendingWork.Load() {
		return false
	}
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.hasDeliverableLocked()
}

// Interrupted is interrupted for syscall handlers that poll.
func (t *Task) Interrupted() bool { return t.interrupted() }

// WaitOn blocks until w reports an event in mask, the deadline passes or
// the task is interrupted. ready is checked after registering to close the
// race with a concurrent notification.
func (t *Task) WaitOn(w interface {
	EventRegister(*waiter.Entry)
	EventUnregister(*waiter.Entry)
}, mask waiter.EventMask, ready func() bool, deadline time.Time, hasDeadline bool) error {
	e, ch := waiter.NewChannelEntry(mask)
	w.EventRegister(e)
	defer w.EventUnregister(e)
	for {
		if ready() {
			return nil
		}
		if err := t.BlockOn(ch, deadline, hasDeadline); err != nil {
			return err
		}
	}
}
