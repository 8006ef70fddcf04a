package kernel

// RunState is a task's scheduling state as /proc/[pid]/stat shows it.
type RunState uint32

// Run states. The zero value is running: a task is runnable whenever it is
// in application code or serving a syscall without blocking.
const (
	// StateRunning ('R'): in application code or in the Sentry.
	StateRunning RunState = iota
	// StateSleeping ('S'): blocked in an interruptible wait.
	StateSleeping
	// StateDiskSleep ('D'): blocked in a wait only a fatal signal ends
	// (a vfork parent waiting for its child).
	StateDiskSleep
	// StateStopped ('T'): stopped by job control.
	StateStopped
	// StateZombie ('Z'): exited, not yet reaped.
	StateZombie
)

// Letter is the one-letter code of /proc/[pid]/stat.
func (s RunState) Letter() byte { return "RSDTZ"[s] }

// Name is the description /proc/[pid]/status shows after the letter.
func (s RunState) Name() string {
	return [...]string{"running", "sleeping", "disk sleep", "stopped", "zombie"}[s]
}

// setRunState records that the task is entering or leaving a wait.
func (t *Task) setRunState(s RunState) { t.runState.Store(uint32(s)) }

// RunState returns the task's current state.
func (t *Task) RunState() RunState {
	t.k.mu.Lock()
	dead := t.exitState != taskRunning
	t.k.mu.Unlock()
	if dead {
		return StateZombie
	}
	return RunState(t.runState.Load())
}
