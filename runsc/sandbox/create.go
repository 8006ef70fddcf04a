package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/config"
	"golang.org/x/sys/unix"
)

// This file starts the sandbox of an OCI container (`runsc create`):
// unlike Do, it returns once the sandbox has loaded init and reported
// ready, and the gofer and sandbox live on after runsc exits (no parent
// death signal; each in a session of its own). The sandbox then waits on
// its control socket (control.go) for start.
//
//	runsc [flags] gofer --root DIR --conn-fd 3 [--bind=ro|rw[,rec]:SOURCE]...
//	runsc [flags] boot --gofer-fd 3 --spec-fd 4 --control-fd 5 --sync-fd 6 --exit-fd 7
//
// fd 4 is a pipe carrying the boot.Spec as JSON; fd 5 the listening
// control socket (bound by Create at ControlSocket in the state
// directory); fd 6 a pipe on which the sandbox writes one JSON readiness
// report (a bootReport) and closes; fd 7 the exit file (ExitFile), where
// the sandbox writes init's status when it has exited.

// Files in a container's state directory that belong to its sandbox.
const (
	// ControlSocket is the sandbox's control socket.
	ControlSocket = "control.sock"
	// ExitFile receives init's exit status ("%d\n") from the sandbox.
	ExitFile = "exit"
)

// CreateOptions describe the sandbox of one container.
type CreateOptions struct {
	// Config holds the global flags passed on to both children. Nil
	// means config.Default().
	Config *config.Config
	// StateDir is the container's state directory (it must exist): the
	// control socket and the exit file are made in it.
	StateDir string
	// Rootfs is the host directory served as the container's root.
	Rootfs string
	// Bundle is the bundle directory, against which relative bind mount
	// sources are resolved; empty refuses them.
	Bundle string
	// Spec is init's command and settings.
	Spec boot.Spec
	// Stdin, Stdout and Stderr become the container's stdio; nil means
	// the caller's own.
	Stdin, Stdout, Stderr *os.File
	// Terminal makes Stdin, which must be a terminal's replica, the
	// sandbox's controlling terminal, in a session of its own (see
	// NewConsole).
	Terminal bool
	// JobControl keeps the sandbox in the caller's session (for a caller
	// that stays, like runsc run) and, when Stdin is the caller's
	// controlling terminal, makes it the terminal's foreground job, as
	// Do does; Created.RestoreTerminal undoes that.
	JobControl bool
	// NoUserNS keeps the sandbox process in the caller's user namespace.
	NoUserNS bool
	// UIDMappings and GIDMappings, when set, are the maps of the
	// sandbox's user namespace instead of root to the caller's ids.
	UIDMappings, GIDMappings []syscall.SysProcIDMap
	// NetNSPath, when set, is a network namespace the sandbox process
	// joins instead of getting one of its own (netns.go).
	NetNSPath string
	// Exe is the runsc binary to start; empty means /proc/self/exe.
	Exe string
	// Log receives Create's own messages; nil means slog.Default().
	Log *slog.Logger
	// Started, when set, is called once both processes run, before the
	// sandbox is ready, with their pids: a caller records them so that
	// they can be killed even if it dies before Create returns.
	Started func(sandboxPid, goferPid int) error
}

// Created is a sandbox that has loaded init and waits for start.
type Created struct {
	// Pid and GoferPid are the host pids of the sandbox and the gofer.
	Pid, GoferPid int
	// Sandbox and Gofer are the processes, for a caller that stays their
	// parent (runsc run) and wants to reap them.
	Sandbox, Gofer *os.Process
	// RestoreTerminal, with JobControl, gives the caller's terminal back
	// to its process group (never nil).
	RestoreTerminal func()
}

// bootReport is what the sandbox writes on the sync pipe.
type bootReport struct {
	// Error is empty when init is loaded and the sandbox is ready.
	Error string `json:"error,omitempty"`
}

// ReportReady is the sandbox's side of the sync pipe: it writes the
// report for err (nil: ready) on fd and closes it. An error means runsc
// create is gone (the pipe has no reader): nobody will ever start or
// delete this sandbox, which should then exit.
func ReportReady(fd int, err error) error {
	var r bootReport
	if err != nil {
		r.Error = err.Error()
	}
	b, _ := json.Marshal(&r)
	f := os.NewFile(uintptr(fd), "sync")
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("reporting to runsc create: %w", err)
	}
	return nil
}

// ReadSpec is the sandbox's side of the spec pipe.
func ReadSpec(fd int) (*boot.Spec, error) {
	f := os.NewFile(uintptr(fd), "spec")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the boot spec: %w", err)
	}
	var s boot.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decoding the boot spec: %w", err)
	}
	return &s, nil
}

// Create starts the gofer and the sandbox of a container and waits until
// the sandbox has loaded init (or failed to). On error every process
// started has been killed and reaped and the files made in StateDir
// removed.
func Create(o CreateOptions) (*Created, error) {
	warmPidfd()
	if o.Config == nil {
		o.Config = config.Default()
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Exe == "" {
		o.Exe = "/proc/self/exe"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if len(o.Spec.Argv) == 0 {
		return nil, errors.New("no command given")
	}
	binds, err := goferBinds(boot.Binds(o.Spec.Mounts), o.Bundle)
	if err != nil {
		return nil, err
	}
	var undo cleanups
	defer undo.run()

	// The control socket, bound where runsc's later calls find it.
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	listener := os.NewFile(uintptr(lfd), "control")
	undo.add(func() { listener.Close() })
	sockPath := filepath.Join(o.StateDir, ControlSocket)
	if err := withShortPath(sockPath, func(p string) error {
		return unix.Bind(lfd, &unix.SockaddrUnix{Name: p})
	}); err != nil {
		return nil, fmt.Errorf("binding the control socket: %w", err)
	}
	undo.add(func() { os.Remove(sockPath) })
	if err := os.Chmod(sockPath, 0o600); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := unix.Listen(lfd, 64); err != nil {
		return nil, fmt.Errorf("control socket: listen: %w", err)
	}

	exitPath := filepath.Join(o.StateDir, ExitFile)
	exitFile, err := os.OpenFile(exitPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("exit file: %w", err)
	}
	undo.add(func() { exitFile.Close() })
	undo.add(func() { os.Remove(exitPath) })

	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("spec pipe: %w", err)
	}
	undo.add(func() { specR.Close(); specW.Close() })
	specJSON, err := json.Marshal(&o.Spec)
	if err != nil {
		return nil, fmt.Errorf("encoding the boot spec: %w", err)
	}
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sync pipe: %w", err)
	}
	undo.add(func() { syncR.Close(); syncW.Close() })

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating gofer socket pair: %w", err)
	}
	sentryEnd := os.NewFile(uintptr(fds[0]), "gofer-sentry-end")
	goferEnd := os.NewFile(uintptr(fds[1]), "gofer-gofer-end")
	undo.add(func() { sentryEnd.Close() })
	undo.add(func() { goferEnd.Close() })

	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()

	gofer := goferCommand(o.Exe, o.Config, o.Rootfs, 3, binds)
	gofer.ExtraFiles = []*os.File{goferEnd}
	// The gofer outlives runsc: it must not hold the caller's stdio open.
	// Its messages go to the log file when there is one.
	gofer.Stdin, gofer.Stdout, gofer.Stderr = devNull, devNull, devNull
	gofer.SysProcAttr = &syscall.SysProcAttr{Cloneflags: goferNamespaces, Setsid: true}
	if err := beforeGoferStart(); err != nil {
		return nil, fmt.Errorf("starting gofer: %w", err)
	}
	if err := startLimited(gofer, goferStartCaps(goferWritable(o.Config, binds), true), o.Log); err != nil {
		return nil, fmt.Errorf("starting gofer: %w", err)
	}
	o.Log.Debug("gofer started", "pid", gofer.Process.Pid, "root", o.Rootfs)
	undo.add(func() {
		gofer.Process.Kill()
		gofer.Wait()
	})
	goferEnd.Close()

	args := o.Config.ToFlags()
	args = append(args, "boot", "--gofer-fd=3", "--spec-fd=4", "--control-fd=5", "--sync-fd=6", "--exit-fd=7")
	boot := exec.Command(o.Exe, args...)
	boot.Args[0] = "runsc-sandbox"
	boot.ExtraFiles = []*os.File{sentryEnd, specR, listener, syncW, exitFile}
	boot.Stdin, boot.Stdout, boot.Stderr = o.Stdin, o.Stdout, o.Stderr
	boot.SysProcAttr = &syscall.SysProcAttr{Cloneflags: sandboxNamespaces, Setsid: true}
	var restoreTTY func()
	switch {
	case o.Terminal:
		boot.SysProcAttr.Setctty = true
		boot.SysProcAttr.Ctty = 0 // the child's stdin
	case o.JobControl:
		boot.SysProcAttr.Setsid = false
		restoreTTY = setJobControl(boot.SysProcAttr, o.Stdin, o.Log)
	}
	if !o.NoUserNS {
		newUserNS(boot.SysProcAttr, o.UIDMappings, o.GIDMappings)
	}
	if o.NetNSPath != "" {
		boot.SysProcAttr.Cloneflags &^= unix.CLONE_NEWNET
	}
	if err := beforeBootStart(); err != nil {
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	if err := startInNetNS(o.NetNSPath, boot.Start); err != nil {
		if restoreTTY != nil {
			restoreTTY()
		}
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	o.Log.Debug("sandbox started", "pid", boot.Process.Pid, "argv", o.Spec.Argv)
	if restoreTTY != nil {
		undo.add(restoreTTY)
	}
	undo.add(func() {
		boot.Process.Kill()
		boot.Wait()
	})
	// Only the sandbox may hold these now: EOF on the sync pipe must mean
	// it is gone.
	sentryEnd.Close()
	specR.Close()
	syncW.Close()
	listener.Close()
	exitFile.Close()

	if o.Started != nil {
		if err := o.Started(boot.Process.Pid, gofer.Process.Pid); err != nil {
			return nil, err
		}
	}
	if _, err := specW.Write(specJSON); err != nil {
		return nil, fmt.Errorf("sending the boot spec: %w", err)
	}
	specW.Close()

	b, err := io.ReadAll(io.LimitReader(syncR, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("waiting for the sandbox: %w", err)
	}
	var rep bootReport
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("the sandbox exited before it was ready (see its log, --debug-log)")
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("the sandbox's readiness report %q: %w", b, err)
	}
	if rep.Error != "" {
		return nil, errors.New(rep.Error)
	}
	undo = nil // success: everything stays
	if restoreTTY == nil {
		restoreTTY = func() {}
	}
	return &Created{Pid: boot.Process.Pid, GoferPid: gofer.Process.Pid, Sandbox: boot.Process, Gofer: gofer.Process, RestoreTerminal: restoreTTY}, nil
}

// maxSocketPath is the longest path a sockaddr_un holds, without its NUL.
const maxSocketPath = 107

// withShortPath calls f with path, or, when path is too long for a
// sockaddr_un, with an equivalent name through /proc/self/fd of its
// directory.
func withShortPath(path string, f func(string) error) error {
	if len(path) <= maxSocketPath {
		return f(path)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return f(fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
}
