package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/config"
	"golang.org/x/sys/unix"
)

// This file adds a container to a running sandbox (a pod's later
// containers join the sandbox of its first): a gofer for the new root,
// started and confined as Create starts the root container's, and the
// sandbox's addContainer control call, which carries the gofer
// connection, the new container's own control socket (bound here in its
// state directory, so that later calls reach it as any container's) and
// exit file, and its init's stdio (see runsc/boot/subcontainer.go).

// AddOptions describe a container joining a running sandbox.
type AddOptions struct {
	// Config holds the global flags passed on to the gofer. Nil means
	// config.Default().
	Config *config.Config
	// SandboxDir is the state directory of the sandbox's root container
	// (its control socket).
	SandboxDir string
	// StateDir is the new container's state directory (it must exist).
	StateDir string
	// ID is the new container's id.
	ID string
	// Rootfs is the host directory served as the new container's root.
	Rootfs string
	// Bundle resolves relative bind mount sources; empty refuses them.
	Bundle string
	// Spec is its init and mounts.
	Spec boot.Spec
	// Terminal says Stdin, Stdout and Stderr are a terminal init leads.
	Terminal bool
	// NewPIDNamespace gives the container a PID namespace of its own.
	NewPIDNamespace bool
	// Stdin, Stdout and Stderr become init's stdio; nil means the
	// caller's own.
	Stdin, Stdout, Stderr *os.File
	// Exe is the runsc binary to start; empty means /proc/self/exe.
	Exe string
	// Log receives AddContainer's own messages; nil means
	// slog.Default().
	Log *slog.Logger
	// Started, when set, is called with the gofer's pid once it runs,
	// so that a caller can record it before the sandbox is asked.
	Started func(goferPid int) error
}

// Added is a container that joined a sandbox, its init loaded.
type Added struct {
	// GoferPid is the host pid of its gofer.
	GoferPid int
	// Gofer is that process, for a caller that wants to reap it.
	Gofer *os.Process
}

// addTimeout bounds the sandbox's work on addContainer: mounting the
// root and the spec's mounts through the new gofer and loading init.
const addTimeout = 30 * time.Second

// AddContainer starts the gofer of a new container and has the sandbox
// of SandboxDir mount its root and load its init. On error every process
// started has been killed and reaped and the files made in StateDir
// removed.
func AddContainer(o AddOptions) (*Added, error) {
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

	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	listener := os.NewFile(uintptr(lfd), "control")
	defer listener.Close() // the sandbox has its own copy
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
	defer exitFile.Close()
	undo.add(func() { os.Remove(exitPath) })

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating gofer socket pair: %w", err)
	}
	sentryEnd := os.NewFile(uintptr(fds[0]), "gofer-sentry-end")
	goferEnd := os.NewFile(uintptr(fds[1]), "gofer-gofer-end")
	defer sentryEnd.Close()
	defer goferEnd.Close()

	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	gofer := goferCommand(o.Exe, o.Config, o.Rootfs, 3, binds)
	gofer.ExtraFiles = []*os.File{goferEnd}
	gofer.Stdin, gofer.Stdout, gofer.Stderr = devNull, devNull, devNull
	gofer.SysProcAttr = &syscall.SysProcAttr{Cloneflags: goferNamespaces, Setsid: true}
	if err := startLimited(gofer, goferStartCaps(goferWritable(o.Config, binds), true), o.Log); err != nil {
		return nil, fmt.Errorf("starting gofer: %w", err)
	}
	o.Log.Debug("gofer started", "pid", gofer.Process.Pid, "root", o.Rootfs, "container", o.ID)
	undo.add(func() {
		gofer.Process.Kill()
		gofer.Wait()
	})
	goferEnd.Close()
	if o.Started != nil {
		if err := o.Started(gofer.Process.Pid); err != nil {
			return nil, err
		}
	}

	req := boot.Request{Method: "addContainer", Container: &boot.ContainerSpec{
		ID:              o.ID,
		Spec:            o.Spec,
		Terminal:        o.Terminal,
		WritableRoot:    o.Config.WritableRoot(),
		NewPIDNamespace: o.NewPIDNamespace,
	}}
	pass := []int{int(sentryEnd.Fd()), lfd, int(exitFile.Fd()), int(o.Stdin.Fd()), int(o.Stdout.Fd()), int(o.Stderr.Fd())}
	if _, err := CallFDs(o.SandboxDir, req, pass, addTimeout); err != nil {
		if errors.Is(err, ErrNoSandbox) {
			return nil, errors.New("the sandbox is not running")
		}
		return nil, err
	}
	undo = nil // success: everything stays
	return &Added{GoferPid: gofer.Process.Pid, Gofer: gofer.Process}, nil
}
