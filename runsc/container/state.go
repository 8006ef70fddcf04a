package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/atomicfile"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Status is an OCI container state.
type Status string

// The OCI states.
const (
	Creating Status = "creating"
	Created  Status = "created"
	Running  Status = "running"
	Stopped  Status = "stopped"
	// Paused is runc's extra state: every process frozen (pause).
	Paused Status = "paused"
)

// Files of a container's state directory (besides the sandbox's own,
// sandbox.ControlSocket and sandbox.ExitFile).
const (
	stateFile = "state.json"
	lockFile  = "lock"
)

// record is what state.json holds.
type record struct {
	ID          string            `json:"id"`
	Status      Status            `json:"status"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Created     time.Time         `json:"created"`
	Owner       string            `json:"owner"`
	// Creator is the runsc create that is making the container (while
	// Status is creating).
	Creator hostProcess `json:"creator"`
	Sandbox hostProcess `json:"sandbox"`
	Gofer   hostProcess `json:"gofer"`
	// Hooks are the spec's, run by start and delete too.
	Hooks *specs.Hooks `json:"hooks,omitempty"`
	// Cgroup is the container's cgroup on the host, if it has one.
	Cgroup *cgroup `json:"cgroup,omitempty"`
	// OOMScoreAdj is the spec's process.oomScoreAdj, which processes
	// exec starts get too, as runc gives them the container's.
	OOMScoreAdj *int `json:"oomScoreAdj,omitempty"`
}

// Container is one container's state, read from its state directory.
// Methods that change it take the directory's lock themselves.
type Container struct {
	// Log receives warnings, such as a failed poststart or poststop
	// hook; nil means slog.Default().
	Log *slog.Logger
	// RestoreTerminal, set by a Create with Foreground that gave the
	// caller's terminal to the container, gives it back to the caller's
	// process group; call it once the container has exited.
	RestoreTerminal func()

	root string
	dir  string
	rec  record
}

func (c *Container) log() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// ID returns the container's id.
func (c *Container) ID() string { return c.rec.ID }

// Bundle returns the container's bundle directory.
func (c *Container) Bundle() string { return c.rec.Bundle }

// Pid is the host pid of the container's sandbox, 0 once stopped.
func (c *Container) Pid() int {
	if c.rec.Status == Stopped {
		return 0
	}
	return c.rec.Sandbox.Pid
}

// Status is the state the container was in when last read (Load, List or
// an operation refresh it).
func (c *Container) Status() Status { return c.rec.Status }

// Created is when the container was created.
func (c *Container) Created() time.Time { return c.rec.Created }

// Owner is the user that created the container.
func (c *Container) Owner() string { return c.rec.Owner }

// Dir is the container's state directory.
func (c *Container) Dir() string { return c.dir }

// State is the container's OCI state, with runc's extra fields.
type State struct {
	specs.State
	Rootfs  string    `json:"rootfs"`
	Created time.Time `json:"created"`
	Owner   string    `json:"owner"`
}

// State returns the OCI state as `runsc state` prints it.
func (c *Container) State() State {
	return State{
		State: specs.State{
			Version:     specs.Version,
			ID:          c.rec.ID,
			Status:      specs.ContainerState(c.rec.Status),
			Pid:         c.Pid(),
			Bundle:      c.rec.Bundle,
			Annotations: c.rec.Annotations,
		},
		Rootfs:  c.rec.Rootfs,
		Created: c.rec.Created,
		Owner:   c.rec.Owner,
	}
}

// errNotExist is the error for an id with no state directory; it wraps
// os.ErrNotExist.
func errNotExist(id string) error {
	return fmt.Errorf("container %q does not exist: %w", id, os.ErrNotExist)
}

// lock is a held flock on a state directory's lock file.
type lock struct{ f *os.File }

// lockDir takes the exclusive lock of dir, waiting for it. The directory
// may have been removed by a delete meanwhile: lockDir then fails with
// os.ErrNotExist.
func lockDir(dir string) (*lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	// A delete that held the lock before us removed the directory.
	if _, err := os.Stat(filepath.Join(dir, lockFile)); err != nil {
		f.Close()
		return nil, os.ErrNotExist
	}
	return &lock{f: f}, nil
}

// lockFree reports whether nobody holds dir's lock (a create in progress
// holds it).
func lockFree(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}

func (l *lock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // closing drops the flock
		l.f = nil
	}
}

// readRecord reads dir's state.json.
func readRecord(dir string) (record, error) {
	var r record
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return r, nil
}

// save writes state.json atomically. Preconditions: the lock is held.
func (c *Container) save() error {
	b, err := json.MarshalIndent(&c.rec, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(c.dir, stateFile), b, 0o600)
}

// exitStatus reads the status the sandbox wrote in the exit file; false
// if it wrote none.
func (c *Container) exitStatus() (int, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, sandbox.ExitFile))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false
	}
	return n, true
}

// refresh derives the current state from the stored one and the
// processes: a created or running container whose sandbox is gone, or
// has written init's exit status, is stopped; a creating one whose runsc
// create is gone is stopped too.
func (c *Container) refresh() {
	switch c.rec.Status {
	case Creating:
		if !c.rec.Creator.alive() {
			c.rec.Status = Stopped
		}
	case Created, Running, Paused:
		if _, ok := c.exitStatus(); ok || !c.rec.Sandbox.alive() {
			c.rec.Status = Stopped
		}
	}
}
