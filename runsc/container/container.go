// Package container is runsc's container lifecycle on the host: the OCI
// states (creating, created, running, stopped) and their transitions,
// kept in one state directory per container under the state root
// (--root), <root>/<id>/:
//
//	lock          flock'd by every call that reads-then-changes the state
//	state.json    the container's record (status, bundle, processes)
//	control.sock  the sandbox's control socket (runsc/sandbox)
//	exit          init's exit status, written by the sandbox
//
// Create validates the bundle, makes the directory (its creation is what
// refuses a duplicate id), starts the gofer and sandbox (runsc/sandbox)
// and records them; Start, Kill, Wait and Processes are control calls to
// the sandbox; Delete kills what is left and removes the directory. The
// state a caller sees is derived from the record and the processes (see
// refresh): a sandbox that has died, even by kill -9, makes the container
// stopped. The package knows nothing about flags: runsc/cmd and tests
// call it.
//
// Locks: one per state directory, an exclusive flock on its lock file,
// taken by Create (from the directory's creation to the end), Start,
// Kill and Delete, which re-read the record once they hold it. Load and
// List take no lock: state.json is replaced atomically. Wait does not
// hold the lock while it waits.
package container

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/moat-sandbox/moat/internal/atomicfile"
	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	"github.com/moat-sandbox/moat/runsc/specutils"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// callTimeout bounds control calls that answer at once.
const callTimeout = 10 * time.Second

// CreateArgs describe a container to create.
type CreateArgs struct {
	// Config is runsc's global configuration; RootDir is the state root.
	Config *config.Config
	ID     string
	// Bundle is the bundle directory (holding config.json).
	Bundle string
	// PidFile, when set, receives the sandbox's pid.
	PidFile string
	// Stdin, Stdout and Stderr become the container's stdio; nil means
	// the caller's own.
	Stdin, Stdout, Stderr *os.File
	// ConsoleSocket is the unix socket a container whose process asks
	// for a terminal sends its terminal's master to (runc's
	// --console-socket); the terminal is then its stdio.
	ConsoleSocket string
	// Foreground says the caller stays and its stdio may serve as the
	// container's terminal (runsc run without --detach): a process asking
	// for a terminal then gets the caller's, made the sandbox's
	// foreground job when it is the caller's controlling terminal.
	Foreground bool
	// Exe is the runsc binary; empty means /proc/self/exe.
	Exe string
	// Log receives notes about the spec and debug messages.
	Log *slog.Logger
}

// Create makes a container: validates the bundle, refuses a duplicate id,
// starts its sandbox with init loaded but not running, and records it as
// created. On error nothing is left: no processes, no state directory.
func Create(a CreateArgs) (c *Container, err error) {
	if a.Config == nil {
		a.Config = config.Default()
	}
	if a.Log == nil {
		a.Log = slog.Default()
	}
	if err := specutils.ValidateID(a.ID); err != nil {
		return nil, err
	}
	spec, bundle, err := specutils.ReadBundle(a.Bundle)
	if err != nil {
		return nil, err
	}
	notes, err := specutils.Check(spec)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		a.Log.Warn("spec: " + n)
	}
	rootfs, err := specutils.RootPath(spec, bundle)
	if err != nil {
		return nil, err
	}
	bs, err := BootSpec(spec)
	if err != nil {
		return nil, err
	}
	term := spec.Process.Terminal
	switch {
	case term && a.ConsoleSocket == "" && !a.Foreground:
		return nil, errors.New("process.terminal is set but no --console-socket was given to send the terminal to")
	case !term && a.ConsoleSocket != "":
		return nil, errors.New("--console-socket was given but process.terminal is not set")
	}
	if sid, ok := SandboxIDOf(a.ID, spec.Annotations); ok {
		return createSub(a, spec, bundle, rootfs, bs, sid) // subcontainer.go
	}

	root, err := filepath.Abs(a.Config.RootDir)
	if err != nil {
		return nil, fmt.Errorf("state root: %w", err)
	}
	if err := os.MkdirAll(root, 0o711); err != nil {
		return nil, fmt.Errorf("state root: %w", err)
	}
	c, l, err := newState(a, root, bundle, rootfs, spec, hostProcess{})
	if err != nil {
		return nil, err
	}
	dir := c.dir
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	defer l.unlock()

	cgPath, err := cgroupPath(spec, a.ID, a.Config.SystemdCgroup)
	if err != nil {
		return nil, err
	}
	if cgPath != "" {
		cg, cgErr := newCgroup(cgPath)
		if cgErr != nil {
			if spec.Linux.Resources != nil {
				return nil, cgErr
			}
			// Only a path was asked for, as callers always pass one:
			// carry on without, as runc does when it cannot.
			a.Log.Warn("no cgroup for the container", "path", cgPath, "err", cgErr)
		} else {
			c.rec.Cgroup = cg
			defer func() {
				if err != nil { // Create's own result
					cg.remove() // the processes are gone by now
				}
			}()
			notes, applyErr := cg.apply(spec.Linux.Resources)
			if applyErr != nil {
				return nil, applyErr
			}
			for _, n := range notes {
				a.Log.Warn("spec: " + n)
			}
			if err := c.save(); err != nil {
				return nil, fmt.Errorf("writing the state: %w", err)
			}
		}
	}

	conf := a.Config
	if spec.Root.Readonly && conf.WritableRoot() {
		// root.readonly wins over --overlay=none: the gofer serves the
		// root read-only too.
		cp := *conf
		cp.Overlay = config.OverlayMemory
		conf = &cp
	}
	opts := sandbox.CreateOptions{
		Config:   conf,
		StateDir: dir,
		Rootfs:   rootfs,
		Bundle:   bundle,
		Spec:     *bs,
		Stdin:    a.Stdin,
		Stdout:   a.Stdout,
		Stderr:   a.Stderr,
		Exe:      a.Exe,
		Log:      a.Log,
		// Recorded at once, so that a delete finds them should this
		// create die before it is done.
		Started: func(sandboxPid, goferPid int) error {
			var err error
			if c.rec.Sandbox, err = newHostProcess(sandboxPid); err != nil {
				return fmt.Errorf("the sandbox: %w", err)
			}
			if c.rec.Gofer, err = newHostProcess(goferPid); err != nil {
				return fmt.Errorf("the gofer: %w", err)
			}
			if cg := c.rec.Cgroup; cg != nil {
				// The sandbox waits for its spec, so it has no stub
				// processes yet: they will be born in the cgroup.
				if err := cg.add(sandboxPid); err != nil {
					return err
				}
				if err := cg.add(goferPid); err != nil {
					return err
				}
			}
			if err := setOOMScoreAdj(spec, sandboxPid, goferPid); err != nil {
				return err
			}
			return c.save()
		},
	}
	hostNamespaceOptions(spec, &opts)
	if term && a.ConsoleSocket != "" {
		var rows, cols uint16
		if sz := spec.Process.ConsoleSize; sz != nil {
			rows, cols = uint16(sz.Height), uint16(sz.Width)
		}
		replica, err := sandbox.NewConsole(a.ConsoleSocket, rows, cols)
		if err != nil {
			return nil, err
		}
		defer replica.Close()
		opts.Stdin, opts.Stdout, opts.Stderr = replica, replica, replica
		opts.Terminal = true
	} else if term {
		opts.JobControl = true
	}
	created, err := sandbox.Create(opts)
	if err != nil {
		return nil, err
	}
	c.RestoreTerminal = created.RestoreTerminal
	killAll := func() {
		created.Sandbox.Kill()
		created.Gofer.Kill()
		created.Sandbox.Wait()
		created.Gofer.Wait()
	}
	if err := c.finishCreate(a, spec, created.Pid); err != nil {
		killAll()
		return nil, err
	}
	return c, nil
}

// finishCreate ends a creation whose processes run: it runs the spec's
// prestart, createRuntime and createContainer hooks, records the
// container as created, and writes pid to a.PidFile if one is asked for.
// On error the caller undoes what it started.
func (c *Container) finishCreate(a CreateArgs, spec *specs.Spec, pid int) error {
	if h := spec.Hooks; h != nil {
		st := c.State()
		for _, k := range []struct {
			name  string
			hooks []specs.Hook
		}{{"prestart", h.Prestart}, {"createRuntime", h.CreateRuntime}, {"createContainer", h.CreateContainer}} {
			if err := runHooks(k.name, k.hooks, st); err != nil {
				return err
			}
		}
	}
	c.rec.Status = Created
	c.rec.Creator = hostProcess{}
	if err := c.save(); err != nil {
		return fmt.Errorf("writing the state: %w", err)
	}
	if a.PidFile != "" {
		return WritePidFile(a.PidFile, pid)
	}
	return nil
}

// WritePidFile writes pid to path atomically and without a newline, as
// runc writes its pid files.
func WritePidFile(path string, pid int) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	if err := atomicfile.WriteFile(abs, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	return nil
}

// owner names the calling user as runc's state does: the user name from
// /etc/passwd, else "#uid". (Not os/user: it links cgo, and runsc must
// stay a pure-Go binary for its all-threads security calls.)
func owner() string {
	uid := os.Getuid()
	if data, err := os.ReadFile("/etc/passwd"); err == nil {
		if name, _, ok := boot.PasswdUser(data, uint32(uid)); ok && name != "" {
			return name
		}
	}
	return "#" + strconv.Itoa(uid)
}

// specMounts returns the spec's mounts the sandbox applies itself (the
// types the Sentry can make; host bind mounts are not served yet).
func specMounts(spec *specs.Spec) []boot.SpecMount {
	var out []boot.SpecMount
	for _, m := range spec.Mounts {
		out = append(out, boot.SpecMount{Destination: m.Destination, Type: m.Type, Source: m.Source, Options: m.Options})
	}
	return out
}

// BootSpec turns a validated spec's process section into what the
// sandbox needs to start init.
func BootSpec(spec *specs.Spec) (*boot.Spec, error) {
	p := spec.Process
	bs := &boot.Spec{
		Argv:         p.Args,
		Env:          p.Env,
		Cwd:          p.Cwd,
		Hostname:     spec.Hostname,
		Domainname:   spec.Domainname,
		ReadOnlyRoot: spec.Root != nil && spec.Root.Readonly,
		Mounts:       specMounts(spec),
	}
	bp, err := bootProcess(p)
	if err != nil {
		return nil, err
	}
	bs.Process = bp
	if bs.Process.Settings, err = kernelSettings(spec); err != nil {
		return nil, err
	}
	bs.Process.Terminal = p.Terminal
	if l := spec.Linux; l != nil {
		bs.MaskedPaths = l.MaskedPaths
		bs.ReadonlyPaths = l.ReadonlyPaths
		bs.Devices = specDevices(l.Devices)
		if l.Seccomp != nil {
			// Refuse a profile the sandbox could not install now,
			// not at boot.
			if _, err := boot.CompileSeccomp(l.Seccomp); err != nil {
				return nil, fmt.Errorf("linux.seccomp: %w", err)
			}
			bs.Process.Seccomp = l.Seccomp
		}
	}
	return bs, nil
}

// bootProcess turns a spec's process settings into the sandbox's.
func bootProcess(p *specs.Process) (boot.Process, error) {
	bp := boot.Process{
		UID:             p.User.UID,
		GID:             p.User.GID,
		AdditionalGIDs:  p.User.AdditionalGids,
		Umask:           p.User.Umask,
		NoNewPrivileges: p.NoNewPrivileges,
	}
	if c := p.Capabilities; c != nil {
		var caps boot.Capabilities
		for _, s := range []struct {
			dst *[]uint
			src []string
		}{
			{&caps.Bounding, c.Bounding}, {&caps.Effective, c.Effective},
			{&caps.Inheritable, c.Inheritable}, {&caps.Permitted, c.Permitted},
			{&caps.Ambient, c.Ambient},
		} {
			for _, name := range s.src {
				n, err := specutils.CapabilityNumber(name)
				if err != nil {
					return bp, err
				}
				*s.dst = append(*s.dst, n)
			}
		}
		bp.Capabilities = &caps
	}
	for _, r := range p.Rlimits {
		n, err := specutils.RlimitNumber(r.Type)
		if err != nil {
			return bp, err
		}
		bp.Rlimits = append(bp.Rlimits, boot.Rlimit{Resource: n, Soft: r.Soft, Hard: r.Hard})
	}
	return bp, nil
}

// Load reads container id's state under root and brings its status up
// to date.
func Load(root, id string) (*Container, error) {
	if err := specutils.ValidateID(id); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	return load(root, id, false)
}

// load reads the record. state.json is replaced atomically, so no lock
// is needed to read a consistent one (and a container being created can
// be seen as creating).
//
// A directory without a readable record is a create that died before
// writing one (or a damaged record): it is shown as stopped, with no
// processes, so that delete removes it; while a create holds its lock it
// is shown as creating. locked says the caller holds the lock.
func load(root, id string, locked bool) (*Container, error) {
	dir := filepath.Join(root, id)
	rec, err := readRecord(dir)
	if err != nil {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, errNotExist(id)
		}
		rec = record{ID: id, Status: Stopped}
		if !locked && !lockFree(dir) {
			rec.Status = Creating
		}
		return &Container{root: root, dir: dir, rec: rec}, nil
	}
	c := &Container{root: root, dir: dir, rec: rec}
	c.refresh()
	return c, nil
}

// List returns the containers under root, sorted by id.
func List(root string) ([]*Container, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Container
	for _, e := range ents {
		if !e.IsDir() || specutils.ValidateID(e.Name()) != nil {
			continue
		}
		c, err := Load(root, e.Name())
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rec.ID < out[j].rec.ID })
	return out, nil
}

// withLock runs f with the container's lock held and its record freshly
// read into c.
func (c *Container) withLock(f func() error) error {
	l, err := lockDir(c.dir)
	if err != nil {
		return errNotExist(c.rec.ID)
	}
	defer l.unlock()
	fresh, err := load(c.root, c.rec.ID, true)
	if err != nil {
		return err
	}
	c.rec = fresh.rec
	return f()
}

// Start runs init of a created container.
func (c *Container) Start() error {
	return c.withLock(func() error {
		switch c.rec.Status {
		case Created:
		case Stopped:
			return errors.New("cannot start a container that has stopped")
		case Running:
			return errors.New("cannot start an already running container")
		default:
			return fmt.Errorf("cannot start a container in the %s state", c.rec.Status)
		}
		if h := c.rec.Hooks; h != nil {
			if err := runHooks("startContainer", h.StartContainer, c.State()); err != nil {
				if c.isSub() {
					c.destroySandboxSide()
				} else {
					c.rec.Sandbox.kill(unix.SIGKILL)
				}
				return err
			}
		}
		if _, err := sandbox.Call(c.dir, boot.Request{Method: "start"}, callTimeout); err != nil {
			if errors.Is(err, sandbox.ErrNoSandbox) {
				c.rec.Status = Stopped
				return errors.New("cannot start a container that has stopped")
			}
			return fmt.Errorf("starting container %s: %w", c.rec.ID, err)
		}
		c.rec.Status = Running
		if err := c.save(); err != nil {
			return err
		}
		if h := c.rec.Hooks; h != nil {
			if err := runHooks("poststart", h.Poststart, c.State()); err != nil {
				c.log().Warn(err.Error())
			}
		}
		return nil
	})
}

// Kill sends sig to init, or with all to every process of the container.
func (c *Container) Kill(sig unix.Signal, all bool) error {
	return c.withLock(func() error {
		if c.rec.Status != Created && c.rec.Status != Running && c.rec.Status != Paused {
			return errors.New("container not running")
		}
		_, err := sandbox.Call(c.dir, boot.Request{Method: "kill", Signal: int(sig), All: all}, callTimeout)
		if errors.Is(err, sandbox.ErrNoSandbox) {
			return errors.New("container not running")
		}
		if err != nil && sig == unix.SIGKILL && !c.isSub() {
			// The sandbox does not answer: SIGKILL must work anyway.
			return c.rec.Sandbox.kill(unix.SIGKILL)
		}
		return err
	})
}

// Wait waits for init to exit and returns its status (128+N for signal
// N).
func (c *Container) Wait() (int, error) {
	if c.rec.Status == Creating {
		return 0, fmt.Errorf("container %s is being created", c.rec.ID)
	}
	if c.rec.Status != Stopped {
		resp, err := sandbox.Call(c.dir, boot.Request{Method: "wait"}, 0)
		if err == nil {
			return resp.Status, nil
		}
		if !errors.Is(err, sandbox.ErrNoSandbox) {
			return 0, err
		}
		c.rec.Sandbox.waitGone(5 * time.Second)
	}
	if st, ok := c.exitStatus(); ok {
		return st, nil
	}
	if c.isSub() {
		// Its sandbox was killed (its root container deleted): so was
		// every process in it.
		return 128 + int(unix.SIGKILL), nil
	}
	return 0, fmt.Errorf("container %s: the sandbox died without reporting init's exit status", c.rec.ID)
}

// Processes lists the container's processes.
func (c *Container) Processes() ([]boot.ProcessInfo, error) {
	if c.rec.Status != Created && c.rec.Status != Running && c.rec.Status != Paused {
		return nil, nil
	}
	resp, err := sandbox.Call(c.dir, boot.Request{Method: "ps"}, callTimeout)
	if errors.Is(err, sandbox.ErrNoSandbox) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return resp.Processes, nil
}

// Stats are a container's resource figures: the Sentry's own, and the
// host's for its cgroup when it has one.
type Stats struct {
	Sentry boot.Stats
	Cgroup *CgroupStats
}

// Stats returns the resource figures of a created or running container.
func (c *Container) Stats() (*Stats, error) {
	if c.rec.Status != Created && c.rec.Status != Running && c.rec.Status != Paused {
		return nil, errors.New("container not running")
	}
	resp, err := sandbox.Call(c.dir, boot.Request{Method: "stats"}, callTimeout)
	if errors.Is(err, sandbox.ErrNoSandbox) {
		return nil, errors.New("container not running")
	}
	if err != nil {
		return nil, err
	}
	st := &Stats{Sentry: *resp.Stats}
	if c.rec.Cgroup != nil {
		st.Cgroup = c.rec.Cgroup.stats()
	}
	return st, nil
}

// Delete removes a stopped (or created) container: its processes, if any
// are left, and its state directory. force deletes a running one too,
// killing it first.
func (c *Container) Delete(force bool) error {
	return c.withLock(func() error {
		switch c.rec.Status {
		case Stopped, Created:
		default:
			if !force {
				return fmt.Errorf("cannot delete container %s that is not stopped: %s", c.rec.ID, c.rec.Status)
			}
		}
		return c.destroy()
	})
}

// destroy kills the sandbox and gofer, waits for them to go and removes
// the state directory. Preconditions: the lock is held.
func (c *Container) destroy() error {
	if c.isSub() {
		return c.destroySub()
	}
	procs := []hostProcess{c.rec.Sandbox, c.rec.Gofer}
	if c.rec.Status == Creating {
		procs = append(procs, c.rec.Creator)
	}
	for _, p := range procs {
		if err := p.kill(unix.SIGKILL); err != nil {
			return fmt.Errorf("killing pid %d: %w", p.Pid, err)
		}
	}
	for _, p := range procs {
		if !p.waitGone(10 * time.Second) {
			return fmt.Errorf("pid %d did not die", p.Pid)
		}
	}
	if err := c.rec.Cgroup.remove(); err != nil {
		return fmt.Errorf("removing the cgroup of %s: %w", c.rec.ID, err)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("removing the state of %s: %w", c.rec.ID, err)
	}
	if h := c.rec.Hooks; h != nil && c.rec.Status != Creating {
		st := c.State()
		st.Status = specs.StateStopped
		st.Pid = 0
		if err := runHooks("poststop", h.Poststop, st); err != nil {
			c.log().Warn(err.Error())
		}
	}
	return nil
}

// newState makes, locks and writes the state directory of container
// a.ID under root: its first record says Creating, with sandbox the host
// sandbox it joins (zero for one that starts its own). The caller
// unlocks, and removes the directory if the creation fails later; on
// error nothing is left.
func newState(a CreateArgs, root, bundle, rootfs string, spec *specs.Spec, sandbox hostProcess) (c *Container, l *lock, err error) {
	dir := filepath.Join(root, a.ID)
	if err := os.Mkdir(dir, 0o711); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, nil, fmt.Errorf("container with id exists: %s", a.ID)
		}
		return nil, nil, fmt.Errorf("state directory: %w", err)
	}
	defer func() {
		if err != nil {
			if l != nil {
				l.unlock()
			}
			os.RemoveAll(dir)
		}
	}()
	if l, err = lockDir(dir); err != nil {
		return nil, nil, err
	}
	me, err := newHostProcess(os.Getpid())
	if err != nil {
		return nil, l, err
	}
	c = &Container{Log: a.Log, root: root, dir: dir, rec: record{
		ID:          a.ID,
		Status:      Creating,
		Bundle:      bundle,
		Rootfs:      rootfs,
		Annotations: spec.Annotations,
		Created:     time.Now().UTC(),
		Owner:       owner(),
		Creator:     me,
		Sandbox:     sandbox,
		Hooks:       spec.Hooks,
		OOMScoreAdj: spec.Process.OOMScoreAdj,
	}}
	if err := c.save(); err != nil {
		return nil, l, fmt.Errorf("writing the state: %w", err)
	}
	return c, l, nil
}
