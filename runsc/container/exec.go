package container

import (
	"errors"
	"fmt"
	"os"

	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// This file is runsc exec's library side: a new process in a running
// container, started by a control call that carries its stdio, and the
// calls to wait for it and signal it.

// ExecArgs describe a process to start in a container.
type ExecArgs struct {
	// Process is the process to run, as a spec's process section (what
	// runc exec --process reads).
	Process *specs.Process
	// Stdin, Stdout and Stderr are its stdio; nil means the caller's own.
	// With Process.Terminal and a ConsoleSocket, they are not used.
	Stdin, Stdout, Stderr *os.File
	// ConsoleSocket, when Process.Terminal is set, receives the master
	// of a new pseudo-terminal whose replica is the process's stdio, as
	// runc sends it. Without it a terminal process gets Stdin, Stdout
	// and Stderr.
	ConsoleSocket string
	// IgnorePaused allows an exec into a paused container (the process
	// is frozen with the others until resume).
	IgnorePaused bool
}

// ExecError is Exec's error for a command that cannot be run: Status is
// what a shell would exit with (127 not found, 126 not executable).
type ExecError struct {
	Status int
	Err    error
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// Exec starts a process in the container and returns its pid in the
// container's PID namespace. The process has no parent there, leads a
// session of its own, and dies with init.
func (c *Container) Exec(a ExecArgs) (int32, error) {
	switch c.rec.Status {
	case Created, Running:
	case Paused:
		if !a.IgnorePaused {
			return 0, errors.New("cannot exec in a paused container (use --ignore-paused to override)")
		}
	case Stopped:
		return 0, errors.New("cannot exec in a stopped container")
	default:
		return 0, fmt.Errorf("cannot exec in a container in the %s state", c.rec.Status)
	}
	if a.Process == nil || len(a.Process.Args) == 0 {
		return 0, errors.New("exec: no command (process.args is empty)")
	}
	spec, err := ExecSpec(a.Process)
	if err != nil {
		return 0, err
	}
	if c.rec.OOMScoreAdj != nil {
		spec.Process.Settings = &boot.KernelSettings{OOMScoreAdj: c.rec.OOMScoreAdj}
	}
	stdio := [3]*os.File{a.Stdin, a.Stdout, a.Stderr}
	for i, std := range []*os.File{os.Stdin, os.Stdout, os.Stderr} {
		if stdio[i] == nil {
			stdio[i] = std
		}
	}
	if a.Process.Terminal && a.ConsoleSocket != "" {
		var rows, cols uint16
		if sz := a.Process.ConsoleSize; sz != nil {
			rows, cols = uint16(sz.Height), uint16(sz.Width)
		}
		replica, err := sandbox.NewConsole(a.ConsoleSocket, rows, cols)
		if err != nil {
			return 0, err
		}
		defer replica.Close() // the sandbox holds its own copies
		stdio = [3]*os.File{replica, replica, replica}
	}
	fds := []int{int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())}
	resp, err := sandbox.CallFDs(c.dir, boot.Request{Method: "exec", Exec: spec}, fds, callTimeout)
	if err != nil {
		if errors.Is(err, sandbox.ErrNoSandbox) {
			return 0, errors.New("cannot exec in a stopped container")
		}
		if resp != nil && resp.ExecStatus != 0 {
			return 0, &ExecError{Status: resp.ExecStatus, Err: fmt.Errorf("exec failed: unable to start container process: exec: %w", err)}
		}
		return 0, fmt.Errorf("exec in container %s: %w", c.rec.ID, err)
	}
	return resp.PID, nil
}

// WaitExec waits for process pid, which Exec started, to exit and returns
// its status (128+N for signal N). With killOnHangup the sandbox kills
// the process if the caller dies while waiting (its connection closes).
// A process may be waited for once.
func (c *Container) WaitExec(pid int32, killOnHangup bool) (int, error) {
	resp, err := sandbox.Call(c.dir, boot.Request{Method: "wait", PID: pid, KillOnHangup: killOnHangup}, 0)
	if errors.Is(err, sandbox.ErrNoSandbox) {
		// The sandbox is gone, and every process with it.
		return 128 + int(unix.SIGKILL), nil
	}
	if err != nil {
		return 0, err
	}
	return resp.Status, nil
}

// SignalProcess sends sig to process pid of the container.
func (c *Container) SignalProcess(pid int32, sig unix.Signal) error {
	_, err := sandbox.Call(c.dir, boot.Request{Method: "kill", PID: pid, Signal: int(sig)}, callTimeout)
	if errors.Is(err, sandbox.ErrNoSandbox) {
		return errors.New("container not running")
	}
	return err
}

// ExecSpec turns a spec's process section into what the sandbox needs
// to start it.
func ExecSpec(p *specs.Process) (*boot.ExecSpec, error) {
	bp, err := bootProcess(p)
	if err != nil {
		return nil, err
	}
	return &boot.ExecSpec{Argv: p.Args, Env: p.Env, Cwd: p.Cwd, Process: bp, Terminal: p.Terminal}, nil
}

// Pause freezes every process of a running container.
func (c *Container) Pause() error {
	return c.withLock(func() error {
		switch c.rec.Status {
		case Running:
		case Paused:
			return errors.New("container already paused")
		default:
			return errors.New("container not running")
		}
		if _, err := sandbox.Call(c.dir, boot.Request{Method: "pause"}, callTimeout); err != nil {
			if errors.Is(err, sandbox.ErrNoSandbox) {
				return errors.New("container not running")
			}
			return fmt.Errorf("pausing container %s: %w", c.rec.ID, err)
		}
		c.rec.Status = Paused
		return c.save()
	})
}

// Resume thaws a paused container.
func (c *Container) Resume() error {
	return c.withLock(func() error {
		switch c.rec.Status {
		case Paused:
		case Stopped:
			return errors.New("container not running")
		default:
			return errors.New("container not paused")
		}
		if _, err := sandbox.Call(c.dir, boot.Request{Method: "resume"}, callTimeout); err != nil {
			if errors.Is(err, sandbox.ErrNoSandbox) {
				return errors.New("container not running")
			}
			return fmt.Errorf("resuming container %s: %w", c.rec.ID, err)
		}
		c.rec.Status = Running
		return c.save()
	})
}
