// Package fstest holds helpers for testing file systems: a fake task
// Context with its own memory and an interruptible BlockOn.
package fstest

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// MemBase is the address of the fake task's memory.
const MemBase = 0x10000

// Context is a fake task: credentials, a flat memory at MemBase, and a
// BlockOn that Interrupt cuts short.
type Context struct {
	Creds *auth.Credentials
	TGID  int32

	mu  sync.Mutex
	Mem []byte

	interrupt chan struct{}
}

// NewContext returns a root task with 1 MiB of memory.
func NewContext() *Context {
	return &Context{Creds: auth.NewRootCredentials(), Mem: make([]byte, 1<<20), interrupt: make(chan struct{}, 1), TGID: 1}
}

// NewUserContext returns a task of uid and gid without capabilities.
func NewUserContext(uid auth.KUID, gid auth.KGID) *Context {
	c := NewContext()
	c.Creds = &auth.Credentials{
		RealUID: uid, EffectiveUID: uid, SavedUID: uid, FilesystemUID: uid,
		RealGID: gid, EffectiveGID: gid, SavedGID: gid, FilesystemGID: gid,
	}
	return c
}

// Credentials implements fs.Context.
func (c *Context) Credentials() *auth.Credentials { return c.Creds }

// ThreadGroupID implements proc.ProcContext.
func (c *Context) ThreadGroupID() int32 { return c.TGID }

func (c *Context) span(addr uintptr, n int) (int, int, error) {
	if addr < MemBase {
		return 0, 0, unix.EFAULT
	}
	off := int(addr - MemBase)
	if off > len(c.Mem) {
		return 0, 0, unix.EFAULT
	}
	end := off + n
	if end > len(c.Mem) || end < off {
		return off, len(c.Mem), unix.EFAULT
	}
	return off, end, nil
}

// CopyInBytes implements fs.Context.
func (c *Context) CopyInBytes(addr uintptr, dst []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	off, end, err := c.span(addr, len(dst))
	n := copy(dst, c.Mem[off:end])
	return n, err
}

// CopyOutBytes implements fs.Context.
func (c *Context) CopyOutBytes(addr uintptr, src []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	off, end, err := c.span(addr, len(src))
	n := copy(c.Mem[off:end], src)
	return n, err
}

// Interrupt makes the current or next BlockOn return ErrInterrupted.
func (c *Context) Interrupt() {
	select {
	case c.interrupt <- struct{}{}:
	default:
	}
}

// BlockOn implements fs.Context.
func (c *Context) BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error {
	var timeout <-chan time.Time
	if hasDeadline {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ch:
		return nil
	case <-timeout:
		return unix.ETIMEDOUT
	case <-c.interrupt:
		return syserror.ErrInterrupted
	}
}
