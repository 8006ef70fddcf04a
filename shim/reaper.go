package shim

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"

	"golang.org/x/sys/unix"
)

// Reaper reaps every child of the shim. The shim is a child subreaper, so
// the sandbox and gofer processes that `runsc create` leaves behind, and
// the processes `runsc exec --detach` leaves, become its children when
// runsc exits; their exit statuses are how the shim learns that a
// container's init or an exec'd process ended.
//
// Commands the shim runs itself (runsc create, start, ...) are started
// through Start, which hands their status to the caller instead of to the
// exit handler. Start and the reaping loop take the same lock, so a
// command cannot be reaped before it is registered.
type Reaper struct {
	// mu guards waiters and serialises Start with reaping.
	mu      sync.Mutex
	waiters map[int]chan unix.WaitStatus

	// onExit is called, without mu held, for each reaped process that was
	// not started through Start.
	onExit func(pid int, status unix.WaitStatus)
}

// NewReaper makes the calling process a child subreaper and starts
// reaping its children on SIGCHLD. onExit gets the exits of processes not
// started through Start.
func NewReaper(onExit func(pid int, status unix.WaitStatus)) (*Reaper, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
	}
	r := &Reaper{waiters: map[int]chan unix.WaitStatus{}, onExit: onExit}
	ch := make(chan os.Signal, 64)
	signal.Notify(ch, unix.SIGCHLD)
	go func() {
		for range ch {
			r.reap()
		}
	}()
	// Children that exited before Notify took effect.
	r.reap()
	return r, nil
}

type exitRecord struct {
	pid    int
	status unix.WaitStatus
}

// reap collects every exited child.
func (r *Reaper) reap() {
	var unclaimed []exitRecord
	r.mu.Lock()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			break
		}
		if ch, ok := r.waiters[pid]; ok {
			delete(r.waiters, pid)
			ch <- ws
			continue
		}
		unclaimed = append(unclaimed, exitRecord{pid, ws})
	}
	r.mu.Unlock()
	for _, e := range unclaimed {
		if r.onExit != nil {
			r.onExit(e.pid, e.status)
		}
	}
}

// Start starts cmd and returns a channel that receives its wait status.
// The caller must not call cmd.Wait: the status comes from the channel.
// cmd's Stdout and Stderr, if set, should be *os.File so that no copying
// goroutine needs cmd.Wait.
func (r *Reaper) Start(cmd *exec.Cmd) (<-chan unix.WaitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ch := make(chan unix.WaitStatus, 1)
	r.waiters[cmd.Process.Pid] = ch
	return ch, nil
}

// exitCode is the status a shell would report for ws: the exit code, or
// 128 plus the signal that killed the process.
func exitCode(ws unix.WaitStatus) uint32 {
	if ws.Signaled() {
		return 128 + uint32(ws.Signal())
	}
	return uint32(ws.ExitStatus())
}
