package kernel

import "sync/atomic"

// Freezing (runsc pause and resume), as the cgroup freezer does on Linux.
//
// Pause marks the kernel frozen and asks every task to look at its
// pending work: a task in application code leaves it at once (the
// platform interrupts it), a task serving a syscall finishes it, and
// either then parks at the top of its run loop, before delivering any
// signal, until Unpause. A task blocked in a syscall is not woken: it
// stays blocked, and parks as soon as its wait ends. Time goes on while
// frozen (timers fire, sleeps expire), and signals sent meanwhile are
// queued and delivered after Unpause; only a group exit (SIGKILL) gets a
// frozen task moving, to exit, as the cgroup v2 freezer lets SIGKILL
// through.
//
// The state is guarded by Kernel.mu, except frozen, an atomic that Start
// reads without the lock.

// freezer is the kernel's pause state.
type freezer struct {
	// frozen is set between Pause and Unpause.
	frozen atomic.Bool
	// thaw is closed by Unpause. Guarded by Kernel.mu.
	thaw chan struct{}
}

// Pause freezes every task of the kernel. It returns at once: running
// tasks stop at their next entry into the Sentry. Pausing a paused kernel
// does nothing.
func (k *Kernel) Pause() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.freezer.frozen.Load() {
		return
	}
	k.freezer.thaw = make(chan struct{})
	k.freezer.frozen.Store(true)
	for _, t := range k.tasks {
		// Not interrupt(): blocked tasks must stay blocked.
		t.pendingWork.Store(true)
		if t.pctx != nil {
			t.pctx.Interrupt()
		}
	}
}

// Unpause lets the tasks Pause froze go on. Unpausing a kernel that is
// not paused does nothing.
func (k *Kernel) Unpause() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.freezer.frozen.Load() {
		return
	}
	k.freezer.frozen.Store(false)
	close(k.freezer.thaw)
	k.freezer.thaw = nil
}

// Paused reports whether the kernel is paused.
func (k *Kernel) Paused() bool { return k.freezer.frozen.Load() }

// waitWhileFrozen parks t while the kernel is paused, unless its thread
// group is exiting. The caller then handles t's pending work.
func (t *Task) waitWhileFrozen() {
	k := t.k
	if !k.freezer.frozen.Load() {
		return
	}
	for {
		k.mu.Lock()
		thaw := k.freezer.thaw
		exiting := t.tg.groupExiting || t.exitState != taskRunning
		k.mu.Unlock()
		if thaw == nil || exiting {
			t.setRunState(StateRunning)
			return
		}
		// As on Linux's cgroup v1 freezer, a frozen task shows as "D".
		t.setRunState(StateDiskSleep)
		select {
		case <-thaw:
		case <-t.interruptCh:
			// A signal came: queued for after the thaw, unless it
			// ends the group (checked above).
		}
	}
}
