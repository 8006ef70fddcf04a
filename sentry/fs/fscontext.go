package fs

import (
	"sync"
	"sync/atomic"
)

// FSContext is a task's root, working directory and umask. Tasks created
// with CLONE_FS share one (Share); others get a Fork. users counts the
// tasks sharing it (setns of a mount namespace needs it unshared).
type FSContext struct {
	users atomic.Int32

	mu    sync.Mutex
	root  VirtualDentry
	cwd   VirtualDentry
	umask uint32
}

// NewFSContext returns a context with the given root, cwd and umask.
func NewFSContext(root, cwd VirtualDentry, umask uint32) *FSContext {
	c := &FSContext{root: root, cwd: cwd, umask: umask & 0o777}
	c.users.Store(1)
	return c
}

// Share counts one more task using c (clone with CLONE_FS) and returns c.
func (c *FSContext) Share() *FSContext {
	c.users.Add(1)
	return c
}

// Release counts one task fewer using c (its exit, or its unsharing c).
func (c *FSContext) Release() { c.users.Add(-1) }

// Shared reports whether more than one task uses c.
func (c *FSContext) Shared() bool { return c.users.Load() > 1 }

// Root returns the root directory.
func (c *FSContext) Root() VirtualDentry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.root
}

// Cwd returns the working directory.
func (c *FSContext) Cwd() VirtualDentry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cwd
}

// RootAndCwd returns both, read together.
func (c *FSContext) RootAndCwd() (root, cwd VirtualDentry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.root, c.cwd
}

// SetRoot changes the root (chroot).
func (c *FSContext) SetRoot(vd VirtualDentry) {
	c.mu.Lock()
	c.root = vd
	c.mu.Unlock()
}

// SetCwd changes the working directory (chdir).
func (c *FSContext) SetCwd(vd VirtualDentry) {
	c.mu.Lock()
	c.cwd = vd
	c.mu.Unlock()
}

// Umask returns the umask.
func (c *FSContext) Umask() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.umask
}

// SwapUmask sets the umask to mask & 0777 and returns the old one.
func (c *FSContext) SwapUmask(mask uint32) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.umask
	c.umask = mask & 0o777
	return old
}

// Fork returns an unshared copy.
func (c *FSContext) Fork() *FSContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := &FSContext{root: c.root, cwd: c.cwd, umask: c.umask}
	n.users.Store(1)
	return n
}
