// Package sandbox is the host side of a sandbox: it starts the gofer
// process that serves the container's root and the sandbox process
// (`runsc boot`, the Sentry) connected to it. Do (this file) runs a
// command to its end, forwarding signals and tearing everything down
// (runsc do); Create (create.go) starts an OCI container's sandbox, which
// outlives runsc, and returns once init is loaded; Call (control.go) is
// the client of its control socket; NewConsole (console.go) makes the
// terminal of a container that asks for one. It knows nothing about
// flags; runsc/cmd and runsc/container call it. The rest of this comment
// is about Do; create.go explains Create.
//
// Both children are the runsc binary itself (/proc/self/exe by default),
// started with runsc's global flags (config.Config.ToFlags) and an
// internal subcommand:
//
//	runsc [flags] gofer --root DIR --conn-fd 3 [--bind=ro|rw[,rec]:SOURCE]...
//	runsc [flags] boot --gofer-fd 3 [--status-fd 4] [--gomaxprocs N] [--cwd DIR] [--env K=V]... [--volume DEST[:ro]]... -- CMD ARG...
//
// fd 3 of each is one end of a SOCK_SEQPACKET socket pair; fd 4 of the
// sandbox, with Options.Detach, a pipe on which it reports the status.
// The two are started at the same time, each from a thread of its own. The sandbox
// runs in new mount, PID, IPC, UTS and cgroup namespaces and, unless told
// otherwise, a new user namespace mapping the caller's uid and gid to 0
// (started with vfork by spawn.go, the child writing its own maps);
// the gofer in new mount, IPC and UTS namespaces (see goferNamespaces);
// the two share a new network namespace (children). Both die with
// SIGKILL if the thread that started them goes away.
// The sandbox's stdin, stdout and stderr are the caller's: the Sentry
// serves them to the application. Host bind mounts (Options.Mounts, a
// spec's binds for Create) are passed as the gofer's --bind attach points
// and, for Do, as the sandbox's --volume destinations (binds.go).
//
// No locks: Do runs on one goroutine, plus one forwarding signals, one
// starting and waiting for each child and one reading the sandbox's status
// report; Create on one.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/config"
	"golang.org/x/sys/unix"
)

// ExitInternal is the exit status of `runsc do` and `runsc boot` when runsc
// itself fails (as opposed to the application's own status).
const ExitInternal = 125

// DefaultPath is the application's PATH when its environment has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ForwardedSignals are the signals Do passes on to the sandbox process,
// whose Sentry delivers them to the application.
var ForwardedSignals = []os.Signal{
	unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2,
}

// sandboxNamespaces are the namespaces the sandbox process gets (plus a
// user namespace unless Options.NoUserNS). The cgroup namespace hides the
// host's cgroup paths from the Sentry's own /proc/self/cgroup. Do gives
// it, and the gofer, a network namespace they share instead of this one
// (children); Create this one, or the spec's.
const sandboxNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// goferNamespaces are the gofer's. It stays in runsc's PID namespace for
// now: gofer.Confine proves it has a mount namespace of its own by
// comparing it with its parent's (found by getppid, which is 0 across a
// PID namespace boundary) or init's (which hosts may hide), and refuses to
// run when it can compare neither. Its seccomp filter lets it signal only
// itself. TODO: add CLONE_NEWPID once Confine finds its parent another way.
const goferNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET

// Options describe one `runsc do` run.
type Options struct {
	// Config holds the global flags passed on to both children. Nil
	// means config.Default().
	Config *config.Config
	// Rootfs is the host directory that becomes the sandbox's root,
	// served read-only by the gofer. Empty means "/".
	Rootfs string
	// Cwd is the application's working directory inside the sandbox.
	// Empty lets the Sentry choose ("/").
	Cwd string
	// Env is the application's environment ("K=V"). Do adds
	// PATH=DefaultPath when it has no PATH.
	Env []string
	// Argv is the command and its arguments, passed through as given: the
	// Sentry resolves Argv[0] against the sandbox's PATH.
	Argv []string
	// Stdin, Stdout and Stderr become the application's stdio; nil means
	// the caller's own.
	Stdin, Stdout, Stderr *os.File
	// NoUserNS keeps the sandbox process in the caller's user namespace.
	NoUserNS bool
	// SelfTestOpen makes the Sentry open a host file itself once
	// confined, to prove its seccomp filter kills it (boot
	// --self-test-open). The run then ends with 128+SIGSYS.
	SelfTestOpen bool
	// ReadOnlyRoot mounts the root read-only instead of under the
	// memory-backed overlay (boot --read-only).
	ReadOnlyRoot bool
	// Mounts are host bind mounts (boot.Volume, runsc do --volume): the
	// gofer serves each source, the Sentry mounts it, in order.
	Mounts []boot.SpecMount
	// Exe is the runsc binary to start; empty means /proc/self/exe.
	Exe string
	// Log receives Do's own messages; nil means slog.Default().
	Log *slog.Logger
	// Detach makes Do return as soon as the sandbox reports the
	// application's status (boot --status-fd), which it does once the
	// application has exited and the sandbox has given back the stdio
	// descriptors' flags, before its own teardown. The sandbox and the
	// gofer are then sent SIGKILL and reaped in the background rather
	// than waited for: tearing down their address spaces and namespaces
	// takes the kernel milliseconds, which a caller that exits right
	// away (runsc do) need not wait for. Without a report (the sandbox
	// failed or was killed), Do waits as without Detach.
	Detach bool
}

func (o *Options) setDefaults() {
	if o.Config == nil {
		o.Config = config.Default()
	}
	if o.Rootfs == "" {
		o.Rootfs = "/"
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
	hasPath := false
	for _, e := range o.Env {
		if strings.HasPrefix(e, "PATH=") {
			hasPath = true
		}
	}
	if !hasPath {
		o.Env = append(o.Env[:len(o.Env):len(o.Env)], "PATH="+DefaultPath)
	}
}

// GoferArgs returns the arguments (after the binary) that start a gofer
// serving rootfs, and binds as its further attach points, on fd connFD,
// with runsc's GOMAXPROCS once confined (see goferCommand).
func GoferArgs(conf *config.Config, rootfs string, connFD int, binds []gofer.Mount) []string {
	args := conf.ToFlags()
	args = append(args, "gofer", "--gomaxprocs", strconv.Itoa(runtime.GOMAXPROCS(0)),
		"--root", rootfs, "--conn-fd", fmt.Sprint(connFD))
	for _, b := range binds {
		args = append(args, "--bind="+goferBindArg(b))
	}
	return args
}

// goferCommand returns the command that starts runsc (exe) as a gofer
// with GoferArgs: named runsc-gofer, started with one P (GOMAXPROCS=1 in
// its environment) and told runsc's own GOMAXPROCS (--gomaxprocs), which
// it takes once confined (SetProcs). With one P its start makes fewer
// threads, and its all-thread capability calls stop fewer: it competes
// less for the CPUs with the sandbox process, which starts at the same
// time (a gain within these machines' noise, under a millisecond).
func goferCommand(exe string, conf *config.Config, rootfs string, connFD int, binds []gofer.Mount) *exec.Cmd {
	cmd := exec.Command(exe, GoferArgs(conf, rootfs, connFD, binds)...)
	cmd.Args[0] = "runsc-gofer"
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	return cmd
}

// BootArgs returns the arguments (after the binary) that start a sandbox
// process whose gofer connection is fd goferFD.
func BootArgs(conf *config.Config, goferFD int, o *Options) []string {
	args := conf.ToFlags()
	args = append(args, "boot", "--gofer-fd", fmt.Sprint(goferFD))
	if o.Cwd != "" {
		args = append(args, "--cwd", o.Cwd)
	}
	for _, e := range o.Env {
		args = append(args, "--env", e)
	}
	if o.SelfTestOpen {
		args = append(args, "--self-test-open")
	}
	if o.ReadOnlyRoot {
		args = append(args, "--read-only")
	}
	for _, b := range boot.Binds(o.Mounts) {
		v := b.Destination
		if b.ReadOnly {
			v += ":ro"
		}
		args = append(args, "--volume", v)
	}
	args = append(args, "--")
	return append(args, o.Argv...)
}

// insertBefore returns args with extra inserted before the first
// occurrence of mark (at the end when there is none).
func insertBefore(args []string, mark string, extra ...string) []string {
	i := slices.Index(args, mark)
	if i < 0 {
		i = len(args)
	}
	return slices.Concat(args[:i], extra, args[i:])
}

// Test hooks: called right before each child starts; an error aborts Do
// as a failed start would.
var (
	beforeGoferStart = func() error { return nil }
	beforeBootStart  = func() error { return nil }
)

// Do runs o.Argv in a new sandbox and returns the status `runsc do` exits
// with: the application's exit status (0-255, or 128+N if a signal N
// ended it, as the sandbox process reports it), or 128+N if the sandbox
// process itself was killed by signal N. An error means the sandbox could
// not be run; every process started by then has been killed and reaped.
// Cancelling ctx kills the sandbox.
func Do(ctx context.Context, o Options) (int, error) {
	warmPidfd()
	o.setDefaults()
	ch := newChildren(o.Log)
	defer ch.release()
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return 0, errors.New("no command given")
	}
	abs, err := filepath.Abs(o.Rootfs)
	if err != nil {
		return 0, fmt.Errorf("root filesystem: %w", err)
	}
	o.Rootfs = abs
	if fi, err := os.Stat(o.Rootfs); err != nil {
		return 0, fmt.Errorf("root filesystem: %w", err)
	} else if !fi.IsDir() {
		return 0, fmt.Errorf("root filesystem %q is not a directory", o.Rootfs)
	}

	for _, m := range o.Mounts {
		if why := boot.BindSkipped(m); why != "" {
			return 0, fmt.Errorf("volume on %s: %s", m.Destination, why)
		}
	}
	binds, err := goferBinds(boot.Binds(o.Mounts), "")
	if err != nil {
		return 0, err
	}

	var undo cleanups
	defer undo.run()
	// detached is set when Do returns with the children still exiting
	// (Options.Detach): the cleanups then kill them without waiting.
	detached := false

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("creating gofer socket pair: %w", err)
	}
	sentryEnd := os.NewFile(uintptr(fds[0]), "gofer-sentry-end")
	goferEnd := os.NewFile(uintptr(fds[1]), "gofer-gofer-end")
	undo.add(func() { sentryEnd.Close() })
	undo.add(func() { goferEnd.Close() })

	// Receive the forwarded signals, from the moment signal.Notify
	// returns: it runs on a goroutine of its own while the children
	// start, since a process's first Notify starts the runtime's signal
	// loop and a thread of its own (1-2 ms measured here), and is waited
	// for before the children's signals are forwarded. A signal arriving
	// before then ends runsc as one arriving before Do would, and the
	// children with it (their parent-death signal).
	sigs := make(chan os.Signal, 16)
	notified := make(chan struct{})
	go func() {
		signal.Notify(sigs, ForwardedSignals...)
		close(notified)
	}()
	undo.add(func() {
		<-notified
		if detached {
			// signal.Stop waits for the signal loop to be idle
			// (0.3-2 ms measured); a caller that exits right away
			// need not wait for it.
			go signal.Stop(sigs)
			return
		}
		signal.Stop(sigs)
	})

	// Both children are set up before either starts; each then starts
	// on a thread of its own (children), in a network namespace they
	// share.
	gofer := goferCommand(o.Exe, o.Config, o.Rootfs, 3, binds)
	gofer.ExtraFiles = []*os.File{goferEnd}
	gofer.Stdout = o.Stderr // the gofer has nothing to say on stdout
	gofer.Stderr = o.Stderr
	// Nor anything to read: its stdin is /dev/null, as exec.Cmd would
	// give it, but a file, which spawn needs.
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	undo.add(func() { devNull.Close() })
	gofer.Stdin = devNull
	gofer.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: goferNamespaces &^ unix.CLONE_NEWNET,
		Pdeathsig:  unix.SIGKILL,
		Setpgid:    true, // terminal signals are not for it
	}

	boot := exec.Command(o.Exe, BootArgs(o.Config, 3, &o)...)
	boot.Args[0] = "runsc-sandbox"
	boot.ExtraFiles = []*os.File{sentryEnd}
	boot.Stdin, boot.Stdout, boot.Stderr = o.Stdin, o.Stdout, o.Stderr
	boot.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: sandboxNamespaces &^ unix.CLONE_NEWNET,
		Pdeathsig:  unix.SIGKILL,
	}
	if !o.NoUserNS {
		newUserNS(boot.SysProcAttr, nil, nil)
	}
	// The sandbox confines itself with one P (see SetProcs) and then
	// runs with runsc's GOMAXPROCS.
	boot.Env = append(os.Environ(), "GOMAXPROCS=1")
	boot.Args = insertBefore(boot.Args, "--", "--gomaxprocs", strconv.Itoa(runtime.GOMAXPROCS(0)))
	var statusR, statusW *os.File
	if o.Detach {
		// The sandbox reports the application's status on this pipe
		// (boot --status-fd) before it tears itself down.
		statusR, statusW, err = os.Pipe()
		if err != nil {
			return 0, fmt.Errorf("status pipe: %w", err)
		}
		undo.add(func() { statusR.Close(); statusW.Close() })
		boot.ExtraFiles = append(boot.ExtraFiles, statusW)
		boot.Args = insertBefore(boot.Args, "--", "--status-fd", "4")
	}
	if restoreTTY := setJobControl(boot.SysProcAttr, o.Stdin, o.Log); restoreTTY != nil {
		defer restoreTTY()
	}

	ch.start(boot, gofer, goferStartCaps(goferWritable(o.Config, binds), goferConfines(o.Rootfs, binds)))
	waitGoferStart := func() error {
		err := <-ch.goferStarted
		goferEnd.Close()
		if err != nil {
			return fmt.Errorf("starting gofer: %w", err)
		}
		o.Log.Debug("gofer started", "pid", gofer.Process.Pid, "root", o.Rootfs)
		undo.add(func() {
			gofer.Process.Kill()
			if !detached {
				<-ch.goferDone
			}
		})
		return nil
	}
	if err := <-ch.bootStarted; err != nil {
		waitGoferStart()
		return 0, fmt.Errorf("starting sandbox: %w", err)
	}
	o.Log.Debug("sandbox started", "pid", boot.Process.Pid, "argv", o.Argv)
	sentryEnd.Close()
	bootReaped := false
	undo.add(func() {
		if !bootReaped {
			boot.Process.Kill()
			if !detached {
				<-ch.bootDone
			}
		}
	})
	if err := waitGoferStart(); err != nil {
		return 0, err
	}
	<-notified
	var statusCh chan int
	if statusR != nil {
		statusW.Close()
		statusCh = make(chan int, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(statusR, 16))
			if st, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && st >= 0 && st <= 255 {
				statusCh <- st
			}
		}()
	}

	goferDone, bootDone := ch.goferDone, ch.bootDone
	goferExit := goferDone
	ctxDone := ctx.Done()
	var waitErr error
loop:
	for {
		select {
		case s := <-sigs:
			o.Log.Debug("forwarding signal", "signal", s)
			if err := boot.Process.Signal(s); err != nil && !errors.Is(err, os.ErrProcessDone) {
				o.Log.Warn("forwarding signal to the sandbox", "signal", s, "err", err)
			}
		case err := <-goferExit:
			// Keep the result for the cleanup, which waits on it.
			goferDone <- err
			goferExit = nil // stop selecting on it
			o.Log.Debug("gofer exited before the sandbox", "err", err)
		case <-ctxDone:
			o.Log.Debug("context done, killing the sandbox", "err", ctx.Err())
			boot.Process.Kill()
			ctxDone = nil
		case st := <-statusCh:
			// The application's status is known and the sandbox is
			// tearing itself down: leave that to the kernel (see
			// Options.Detach).
			detached = true
			// Their teardown (address spaces, mount namespaces and
			// their RCU grace periods) then runs as runsc exits, on
			// the same two CPUs: at the lowest priority it leaves
			// runsc's own exit the CPU. Each is its own process
			// group's leader (Setpgid), with the sandbox's stubs.
			unix.Setpriority(unix.PRIO_PGRP, boot.Process.Pid, 19)
			unix.Setpriority(unix.PRIO_PGRP, gofer.Process.Pid, 19)
			o.Log.Debug("sandbox reported the status", "status", st)
			return st, nil
		case waitErr = <-bootDone:
			bootReaped = true
			break loop
		}
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return 0, fmt.Errorf("waiting for the sandbox: %w", waitErr)
	}
	status := ExitStatus(boot.ProcessState)
	o.Log.Debug("sandbox exited", "status", status, "state", boot.ProcessState.String())
	return status, nil
}

// children starts Do's two children, each from a thread of its own, and
// waits for each on that thread: a child's parent-death signal follows the
// thread that started it, which therefore stays locked until the child has
// been reaped. The gofer's thread is never unlocked (limitThread), and so
// ends with its goroutine; the sandbox's returns to runsc's network
// namespace then.
//
// The two share one new network namespace, which newChildren makes and
// both threads join, instead of each getting one of its own: making one
// costs the kernel 0.2 to 1 ms, and tearing it down more, and neither
// child uses its namespace (no network but the Sentry's own). If none can
// be made, each child gets one of its own. newChildren has it made on a
// goroutine of its own while Do builds the commands, and start begins
// both threads at once, the sandbox's as the goroutine Do's thread runs
// next (Do then waits for it). Threads begun earlier, waiting to be handed
// their command and the namespace, took 1 to 3 ms to wake on a loaded
// 2-CPU machine, the gofer's behind the sandbox's.
type children struct {
	// made is closed once netns is set.
	made chan struct{}
	// netns is the shared namespace's descriptor, or -1.
	netns int
	// joined is done once both threads are past their use of netns.
	joined sync.WaitGroup
	// How each start went (nil or an error, once), then the child's
	// exec.Cmd.Wait result (once, and only if it started).
	bootStarted, goferStarted chan error
	bootDone, goferDone       chan error
	log                       *slog.Logger
}

// newChildren has the children's network namespace made.
func newChildren(log *slog.Logger) *children {
	c := &children{
		made:        make(chan struct{}),
		netns:       -1,
		bootStarted: make(chan error, 1), goferStarted: make(chan error, 1),
		bootDone: make(chan error, 1), goferDone: make(chan error, 1),
		log: log,
	}
	go func() {
		defer close(c.made)
		fd, err := makeNetNS()
		if err != nil {
			log.Debug("the sandbox and the gofer get network namespaces of their own", "err", err)
			return
		}
		c.netns = fd
	}()
	return c
}

// enter moves the calling thread, locked, into the children's namespace,
// or has cmd make one of its own. The thread's leave returns it to its
// own namespace and reports whether it did.
func (c *children) enter(cmd *exec.Cmd) (leave func() bool, err error) {
	defer c.joined.Done()
	if c.netns < 0 {
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWNET
		return func() bool { return true }, nil
	}
	leave, err = joinNetNS(c.netns)
	if err != nil {
		return leave, fmt.Errorf("joining the children's network namespace: %w", err)
	}
	return leave, nil
}

// start starts boot and gofer, each on a thread of its own; the gofer's
// bounding set is first limited to goferKeep (limitThread). Their results
// come on bootStarted and goferStarted.
func (c *children) start(boot, gofer *exec.Cmd, goferKeep []uintptr) {
	<-c.made
	c.joined.Add(2)
	// Spawns share one hold of ForkLock, and package syscall's forks
	// another, each excluding the other: when the sandbox must be
	// started by exec.Cmd (its terminal's attributes), so is the gofer,
	// and the two starts still overlap.
	startGofer := startCmd
	if !canSpawn(boot) {
		startGofer = (*exec.Cmd).Start
	}
	go func() {
		runtime.LockOSThread() // never unlocked: see children and limitThread
		limitThread(goferKeep, c.log)
		leave, err := c.enter(gofer)
		// The thread stays locked, wherever it is, once the gofer
		// has started or failed to.
		defer leave()
		launch(gofer, startGofer, err, beforeGoferStart, c.goferStarted, c.goferDone)
	}()
	go func() {
		runtime.LockOSThread()
		leave, err := c.enter(boot)
		defer func() {
			// The sandbox is gone (or never started): the thread may
			// serve other goroutines again if it is back in runsc's
			// namespace, or else ends with this goroutine.
			if leave() {
				runtime.UnlockOSThread()
			}
		}()
		launch(boot, startCmd, err, beforeBootStart, c.bootStarted, c.bootDone)
	}()
}

// launch starts cmd with start, unless err (entering its namespace) is
// set or before fails, reports how that went on started and, if it
// started, waits for it and reports cmd.Wait's result on done.
func launch(cmd *exec.Cmd, start func(*exec.Cmd) error, err error, before func() error, started, done chan<- error) {
	if err == nil {
		err = before()
	}
	if err == nil {
		err = start(cmd)
	}
	started <- err
	if err == nil {
		done <- waitCmd(cmd)
	}
}

// release closes the namespace's descriptor once the threads that start
// may have begun are done with it.
func (c *children) release() {
	<-c.made
	c.joined.Wait()
	if c.netns >= 0 {
		unix.Close(c.netns)
		c.netns = -1
	}
}

// ExitStatus is the status a shell would report for a process that ended
// in state ps: its exit code, or 128+N if signal N killed it.
func ExitStatus(ps *os.ProcessState) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// warmPidfd has package os make, on a goroutine of its own, the check it
// makes once before it first starts a process: whether pidfds work, which
// it learns by cloning a child that exits at once and waiting for it
// (0.5 to 2.5 ms on these machines). The first exec.Cmd.Start then waits
// for a check under way, or done, rather than making it itself. Looking
// up a process, our own, is what sets it off.
func warmPidfd() {
	go func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Release()
		}
	}()
}

// newUserNS has the process started with attr made in a user namespace
// of its own whose root is the caller's uid and gid, with setgroups
// denied. uids and gids, when uids is set, are its maps instead; the
// process then runs as the namespace's root, whatever host ids that maps
// to, so exec keeps its capabilities.
func newUserNS(attr *syscall.SysProcAttr, uids, gids []syscall.SysProcIDMap) {
	attr.Cloneflags |= unix.CLONE_NEWUSER
	attr.GidMappingsEnableSetgroups = false
	if len(uids) > 0 {
		attr.UidMappings, attr.GidMappings = uids, gids
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
		return
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
}

// cleanups is an undo list: run undoes in reverse order.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}
