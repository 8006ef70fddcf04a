package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	"github.com/moat-sandbox/moat/runsc/specutils"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// This file is the host side of a sandbox holding several containers, as
// containerd's CRI makes them for a Kubernetes pod: the pod's first
// container (the pause container, annotated
// io.kubernetes.cri.container-type=sandbox) gets a sandbox of its own as
// any container does and is its root container; a later one annotated
// io.kubernetes.cri.container-type=container and
// io.kubernetes.cri.sandbox-id=<root container id> joins that running
// sandbox (sandbox.AddContainer) with a gofer of its own for its root.
//
// Such a sub-container has a state directory like any container, with
// its own control socket and exit file (the sandbox answers on them for
// it alone), so start, kill, wait, ps, exec and events reach it as
// they reach any container. Its record names the sandbox process as its
// sandbox (its pid is the sandbox's, as gVisor reports it) and its own
// gofer; the annotations say which sandbox it is in. Delete asks the
// sandbox to destroy it (its processes die, its mounts go), then kills
// its gofer: the sandbox and its other containers stay. Deleting the
// root container stops the sandbox, and with it every container in it;
// theirs then show as stopped until they are deleted.
//
// Not done for sub-containers: cgroups (the sandbox process is in the
// root container's; a sub-container's linux.resources are not applied),
// pause and resume (the sandbox refuses them: they would freeze the
// whole pod), and a PID namespace of their own (see runsc/boot).

// The annotations containerd's CRI plugin puts on a pod's containers.
const (
	annotationContainerType = "io.kubernetes.cri.container-type"
	annotationSandboxID     = "io.kubernetes.cri.sandbox-id"
	containerTypeContainer  = "container"
)

// SandboxIDOf returns the id of the sandbox a spec's annotations ask the
// container to join, if any: a container of type "container" with a
// sandbox id that is not its own.
func SandboxIDOf(id string, annotations map[string]string) (string, bool) {
	if annotations[annotationContainerType] != containerTypeContainer {
		return "", false
	}
	sid := annotations[annotationSandboxID]
	if sid == "" || sid == id {
		return "", false
	}
	return sid, true
}

// isSub reports whether the container joined another's sandbox.
func (c *Container) isSub() bool {
	_, ok := SandboxIDOf(c.rec.ID, c.rec.Annotations)
	return ok
}

// SandboxID is the id of the root container of the container's sandbox:
// its own for a root container.
func (c *Container) SandboxID() string {
	if sid, ok := SandboxIDOf(c.rec.ID, c.rec.Annotations); ok {
		return sid
	}
	return c.rec.ID
}

// createSub is Create for a container joining the sandbox of root
// container sid. Preconditions: a is validated and spec checked; bs is
// its boot spec.
func createSub(a CreateArgs, spec *specs.Spec, bundle, rootfs string, bs *boot.Spec, sid string) (c *Container, err error) {
	if err := specutils.ValidateID(sid); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", annotationSandboxID, err)
	}
	root, err := filepath.Abs(a.Config.RootDir)
	if err != nil {
		return nil, fmt.Errorf("state root: %w", err)
	}
	sb, err := load(root, sid, false)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("sandbox %s of container %s does not exist", sid, a.ID)
		}
		return nil, err
	}
	if sb.isSub() {
		return nil, fmt.Errorf("container %s is not a sandbox's root container: it is in sandbox %s", sid, sb.SandboxID())
	}
	// The root container's lock keeps it from being deleted while this
	// one joins it.
	rl, err := lockDir(sb.dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s of container %s does not exist", sid, a.ID)
	}
	defer rl.unlock()
	if sb, err = load(root, sid, true); err != nil {
		return nil, err
	}
	switch sb.rec.Status {
	case Created, Running, Paused:
	default:
		return nil, fmt.Errorf("sandbox %s of container %s is %s", sid, a.ID, sb.rec.Status)
	}

	c, l, err := newState(a, root, bundle, rootfs, spec, sb.rec.Sandbox)
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
	if r := spec.Linux; r != nil && r.Resources != nil {
		a.Log.Warn("spec: linux.resources of a container joining a sandbox are not applied", "sandbox", sid)
	}

	conf := a.Config
	if spec.Root.Readonly && conf.WritableRoot() {
		cp := *conf
		cp.Overlay = config.OverlayMemory
		conf = &cp
	}
	opts := sandbox.AddOptions{
		Config:     conf,
		SandboxDir: sb.dir,
		StateDir:   dir,
		ID:         a.ID,
		Rootfs:     rootfs,
		Bundle:     bundle,
		Spec:       *bs,
		Stdin:      a.Stdin,
		Stdout:     a.Stdout,
		Stderr:     a.Stderr,
		Exe:        a.Exe,
		Log:        a.Log,
		// A pid namespace without a path is a new one; one with a path
		// (CRI's pod mode names the sandbox container's) or none at all
		// is the sandbox's.
		NewPIDNamespace: newPIDNamespace(spec),
		Started: func(goferPid int) error {
			var err error
			if c.rec.Gofer, err = newHostProcess(goferPid); err != nil {
				return fmt.Errorf("the gofer: %w", err)
			}
			return c.save()
		},
	}
	if spec.Process.Terminal {
		opts.Terminal = true
		if a.ConsoleSocket != "" {
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
		}
	}
	added, err := sandbox.AddContainer(opts)
	if err != nil {
		return nil, err
	}
	undoAdd := func() {
		c.destroySandboxSide()
		added.Gofer.Kill()
		added.Gofer.Wait()
	}
	if err := c.finishCreate(a, spec, c.rec.Sandbox.Pid); err != nil {
		undoAdd()
		return nil, err
	}
	return c, nil
}

// newPIDNamespace reports whether spec asks for a PID namespace of its
// own.
func newPIDNamespace(spec *specs.Spec) bool {
	if spec.Linux == nil {
		return false
	}
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == specs.PIDNamespace {
			return ns.Path == ""
		}
	}
	return false
}

// destroySandboxSide asks the sandbox to kill the container's processes
// and drop its mounts and control socket. A sandbox that is gone has
// done so already.
func (c *Container) destroySandboxSide() error {
	_, err := sandbox.Call(c.dir, boot.Request{Method: "destroy"}, 30*time.Second)
	if err != nil && !errors.Is(err, sandbox.ErrNoSandbox) {
		return fmt.Errorf("destroying container %s in its sandbox: %w", c.rec.ID, err)
	}
	return nil
}

// destroySub is destroy for a container that joined another's sandbox:
// the sandbox drops it, its gofer is killed, its state directory goes.
// Preconditions: the lock is held.
func (c *Container) destroySub() error {
	// A create that died first, so that it adds nothing any more.
	if c.rec.Status == Creating {
		if err := c.rec.Creator.kill(unix.SIGKILL); err != nil {
			return fmt.Errorf("killing pid %d: %w", c.rec.Creator.Pid, err)
		}
		if !c.rec.Creator.waitGone(10 * time.Second) {
			return fmt.Errorf("pid %d did not die", c.rec.Creator.Pid)
		}
	}
	if c.rec.Sandbox.alive() {
		if err := c.destroySandboxSide(); err != nil {
			return err
		}
	}
	if err := c.rec.Gofer.kill(unix.SIGKILL); err != nil {
		return fmt.Errorf("killing pid %d: %w", c.rec.Gofer.Pid, err)
	}
	if !c.rec.Gofer.waitGone(10 * time.Second) {
		return fmt.Errorf("pid %d did not die", c.rec.Gofer.Pid)
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
