package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/internal/startpages"
	"github.com/moat-sandbox/moat/runsc/isolate"
	"golang.org/x/sys/unix"
)

// This file holds what the two child processes do to themselves before
// they serve: the bodies of `runsc gofer` and of the first half of
// `runsc boot`. Both run in the namespaces Do gave them.

// goferCaps are the capabilities the gofer keeps: reading any file of the
// container's root whatever its mode, as the Sentry checks permissions
// itself.
var goferCaps = []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH}

// goferWriteCaps are the further capabilities of a gofer serving the root
// read-write (--overlay=none): giving new files the sandbox's owners
// (CHOWN) and changing the mode, times and owner of files the gofer does
// not own, keeping set-id bits (FOWNER, FSETID).
var goferWriteCaps = []uintptr{unix.CAP_CHOWN, unix.CAP_FOWNER, unix.CAP_FSETID}

// goferStartCaps are the capabilities a gofer may start with (see
// startLimited): what it keeps, goferWriteCaps when it changes files
// (writable says so), and, when it confines itself into its root (confines:
// gofer.Confine or ConfineMounts, see RunGofer), what it needs until it
// drops the rest: CAP_SYS_ADMIN for the mounts and pivot_root,
// CAP_SYS_PTRACE to read its parent's mount namespace link there (its
// parent has more capabilities than it) and CAP_SETPCAP to drop them. A
// gofer that starts with only what it keeps, from a runsc with nothing
// inheritable, has nothing to drop (DropCapabilities then stops no
// world).
func goferStartCaps(writable, confines bool) []uintptr {
	var caps []uintptr
	if confines {
		caps = append(caps, unix.CAP_SYS_ADMIN, unix.CAP_SYS_PTRACE, unix.CAP_SETPCAP)
	}
	caps = append(caps, goferCaps...)
	if writable {
		caps = append(caps, goferWriteCaps...)
	}
	return caps
}

// goferConfines reports whether RunGofer serving root with binds confines
// itself into root: it does unless root resolves to "/" and there are no
// binds.
func goferConfines(root string, binds []gofer.Mount) bool {
	if len(binds) > 0 {
		return true
	}
	resolved, err := filepath.EvalSymlinks(root)
	return err != nil || resolved != "/"
}

// goferWritable reports whether a gofer of conf serving binds changes
// files: the root with --overlay=none, or a read-write bind.
func goferWritable(conf *config.Config, binds []gofer.Mount) bool {
	changes := conf.WritableRoot()
	for _, b := range binds {
		changes = changes || !b.ReadOnly
	}
	return changes
}

// limitThread limits the calling thread's bounding set to keep before it
// starts a child process (isolate.LimitBoundingSet: the thread must be
// locked and never unlocked). The child, started as root in runsc's user
// namespace, then holds no more than keep after its execve, and its own
// isolate.DropCapabilities stops its world a few times instead of once for
// each of the forty-odd capabilities. Failing (runsc without CAP_SETPCAP)
// costs only that time: the child still drops everything itself.
func limitThread(keep []uintptr, log *slog.Logger) {
	if err := isolate.LimitBoundingSet(keep...); err != nil {
		log.Debug("child keeps this thread's bounding set", "err", err)
	}
}

// startLimited starts cmd from a thread of its own whose bounding set is
// limited to keep (limitThread). The thread ends once cmd has started, so
// cmd must not ask for a parent-death signal, which would follow it.
func startLimited(cmd *exec.Cmd, keep []uintptr, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see limitThread
		limitThread(keep, log)
		errc <- cmd.Start()
	}()
	return <-errc
}

// RunGofer is `runsc gofer`: it pivots into root (in its private mount
// namespace), drops its capabilities but goferCaps, installs the gofer's
// seccomp filter and serves root on connFD until the Sentry hangs up:
// read-only, or read-write with --overlay=none (conf.WritableRoot), when
// it also keeps goferWriteCaps, allows the calls that change files and
// clears its umask (new files get exactly the mode the Sentry asks for).
//
// binds are further attach points, the sources of the container's bind
// mounts (see binds.go): with any, the gofer confines itself with
// gofer.ConfineMounts to the root and the sources, and a read-write bind
// makes it a read-write gofer as above (the root itself stays as
// conf says).
//
// Serving "/" needs no pivot (there is nothing outside it to hide), and
// gofer.Confine cannot pivot into the current root, so a root that
// resolves to "/" is served as it is when there are no binds.
func RunGofer(conf *config.Config, root string, connFD int, binds []gofer.Mount, procs int, log *slog.Logger) error {
	// The filter is compiled while the gofer confines itself.
	changes := goferWritable(conf, binds)
	caps, filter := goferCaps, isolate.GoferFilter(conf.SeccompMode(), os.Getpid())
	if changes {
		caps = append(append([]uintptr(nil), goferCaps...), goferWriteCaps...)
		filter = isolate.GoferWriteFilter(conf.SeccompMode(), os.Getpid())
	}
	install := isolate.Prebuild(filter)
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("gofer: root: %w", err)
	}
	writable := conf.WritableRoot()
	servedRoot := "/"
	var served []gofer.Mount
	if len(binds) > 0 {
		binds = append([]gofer.Mount(nil), binds...)
		for i := range binds {
			// The host's symlinks, resolved on the host side as runc does.
			if binds[i].Path, err = filepath.EvalSymlinks(binds[i].Path); err != nil {
				return fmt.Errorf("gofer: bind mount %d: %w", i+1, err)
			}
		}
		if servedRoot, served, err = gofer.ConfineMounts(resolved, binds); err != nil {
			return err
		}
	} else if resolved != "/" {
		if err := gofer.Confine(resolved); err != nil {
			return err
		}
	}
	if changes {
		unix.Umask(0)
	}
	if err := isolate.DropCapabilities(caps...); err != nil {
		return fmt.Errorf("gofer: %w", err)
	}
	if err := install(); err != nil {
		return fmt.Errorf("gofer: %w", err)
	}
	SetProcs(procs)
	log.Debug("gofer confined, serving", "root", root, "fd", connFD, "seccomp", conf.SeccompMode(), "writable", writable, "binds", len(binds))
	// Flags, confinement and the filter's compilation do not run again:
	// once the sandbox is past its start, their pages need not stay
	// mapped.
	startpages.ReleaseAfter(startpages.StartTime)
	return gofer.Serve(gofer.Config{Root: servedRoot, ConnFD: connFD, ReadOnly: !writable, Mounts: served,
		HostUDSConnect: conf.HostUDS.AllowOpen(), HostUDSBind: conf.HostUDS.AllowCreate()})
}

// ConfineSandbox is the first step of `runsc boot`, before the kernel is
// built: it pivots into an empty read-only root, so that no host path can
// be named, sets no_new_privs and clears every capability (the Sentry
// traces and signals only its own children, which needs none). The
// seccomp filter comes later, from SentryConfine, once the kernel has
// made its memory file and platform stubs.
//
// The capabilities are cleared with isolate.ClearCapabilities, which
// leaves the bounding set alone: under no_new_privs an execve can grant
// nothing (and the Sentry's filter kills execve), so dropping the forty-odd
// capabilities of a new user namespace's bounding set one all-threads call
// at a time bought nothing for the 3 to 5 ms it took at every start.
//
// The old root is detached by a child process while the process goes on
// (isolate.StartPivotToEmptyRoot: the detachment waits 1 to 8 ms for an
// RCU grace period): the returned Confinement's Wait, which SentryConfine
// calls before the seccomp filter goes in and so before any application
// code runs, waits for it.
func ConfineSandbox() (*Confinement, error) {
	p, err := isolate.StartPivotToEmptyRoot()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := isolate.SetNoNewPrivs(); err != nil {
		p.Wait()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := isolate.ClearCapabilities(); err != nil {
		p.Wait()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return &Confinement{pivot: p}, nil
}

// Confinement is a sandbox process's confinement under way
// (ConfineSandbox).
type Confinement struct {
	pivot *isolate.Pivot
	err   error
	done  bool
}

// Wait waits until the old root is detached and reports how that went;
// later calls report the same.
func (c *Confinement) Wait() error {
	if !c.done {
		c.done = true
		if err := c.pivot.Wait(); err != nil {
			c.err = fmt.Errorf("sandbox: %w", err)
		}
	}
	return c.err
}

// SetProcs sets GOMAXPROCS to procs if it is positive. runsc do starts
// the sandbox process with GOMAXPROCS=1 in its environment and the value
// it is to run with as boot --gomaxprocs, which it sets once
// ConfineSandbox has returned (the gofer likewise, goferCommand, once
// its filter is in): with one P the Go runtime starts fewer
// threads before main, and each of ConfineSandbox's all-thread calls
// signals every thread and waits for it (measured at real-time priority
// on a loaded 2-CPU machine, when it made forty-odd of them: 2.9 ms with
// the 3 threads of GOMAXPROCS=1 against 4.6 ms with the 4 or 5 of the
// default).
func SetProcs(procs int) {
	if procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
}

// SentryConfine returns the function the kernel calls to install the
// Sentry's seccomp filter (boot.Config.Confine), in conf's mode, once c
// (ConfineSandbox's; nil if there is none to wait for) is complete. The
// filter is compiled at once on a goroutine of its own (a millisecond,
// cold), while the kernel is built.
func SentryConfine(conf *config.Config, c *Confinement) func() error {
	install := isolate.Prebuild(isolate.SentryFilter(conf.SeccompMode()))
	return func() error {
		if c != nil {
			if err := c.Wait(); err != nil {
				return err
			}
		}
		if err := install(); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		return nil
	}
}

// ReportStatus is the sandbox's side of Options.Detach's status pipe: it
// writes status and closes fd. Errors are ignored: runsc do then learns
// the status from the sandbox process's exit, as without the pipe.
func ReportStatus(fd, status int) {
	unix.Write(fd, []byte(strconv.Itoa(status)+"\n"))
	unix.Close(fd)
}
