package shim

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	tasktypes "github.com/containerd/containerd/api/types/task"
)

// process is a container's init or one of its exec'd processes, as the
// shim tracks it. Its host pid is the sandbox process for init (which
// exits with init's status) and the process `runsc exec --detach` left
// for an exec.
type process struct {
	c    *container
	id   string // the exec id; "" for init
	spec StdioSpec
	io   *processIO

	// processFile is an exec's process JSON in the bundle.
	processFile string

	// startMu is held while the process starts and until its start event
	// is published, and by the exit handler before it publishes the exit,
	// so that the exit event always follows the start event.
	startMu sync.Mutex

	// mu guards the fields below.
	mu         sync.Mutex
	pid        int
	status     tasktypes.Status
	started    bool
	exitStatus uint32
	exitedAt   time.Time
	exited     chan struct{} // closed on exit
}

func newProcess(c *container, id string, spec StdioSpec) *process {
	return &process{c: c, id: id, spec: spec, status: tasktypes.Status_CREATED, exited: make(chan struct{})}
}

// taskID is the id containerd's events name the process by.
func (p *process) taskID() string {
	if p.id == "" {
		return p.c.id
	}
	return p.id
}

// Pid returns the process's host pid (0 before it has one).
func (p *process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// Status returns the process's status.
func (p *process) Status() tasktypes.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// setExited records the exit; it reports false if the process had
// already exited.
func (p *process) setExited(status uint32, at time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status == tasktypes.Status_STOPPED {
		return false
	}
	p.status = tasktypes.Status_STOPPED
	p.exitStatus = status
	p.exitedAt = at
	close(p.exited)
	return true
}

// exitInfo returns the exit status and time (zero before the exit).
func (p *process) exitInfo() (uint32, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitStatus, p.exitedAt
}

// readPidFile reads a pid file runsc wrote.
func readPidFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}
