package fs

import (
	"sync"
	"sync/atomic"

	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Signal-driven I/O (fcntl's F_SETOWN, F_SETSIG and O_ASYNC): a file
// description has an owner, a signal, and, while O_ASYNC is on for a
// file kind that supports it (Linux's ->fasync: pipes and FIFOs,
// inotify, terminals, sockets), an entry on the file's readiness queue
// that signals the owner when the file becomes readable or writable.

// FileOwner is the process, thread or process group that receives a
// file's SIGIO. The kernel implements it.
type FileOwner interface {
	// SendIO signals the owner: sig is the F_SETSIG signal (0 for a
	// plain SIGIO), fdnum the descriptor that turned O_ASYNC on, and
	// fired the readiness that changed.
	SendIO(sig int32, fdnum int32, fired waiter.EventMask)
}

// AsyncFile is a FileImpl that supports O_ASYNC.
type AsyncFile interface {
	// AsyncEvents returns the readiness events of fd that signal its
	// owner (EventIn for a pipe's read end, EventOut for its write end).
	AsyncEvents(fd *FileDescription) waiter.EventMask
}

// asyncState is a description's owner, signal and O_ASYNC registration.
// The callback reads owner, sig and fdnum without locks: it runs under
// the file's queue lock.
type asyncState struct {
	owner atomic.Pointer[ownerBox]
	sig   atomic.Int32
	fdnum atomic.Int32

	// mu serializes turning O_ASYNC on and off.
	mu    sync.Mutex
	entry *waiter.Entry
}

type ownerBox struct{ o FileOwner }

// asyncOf returns fd's async state, made on first use.
func (fd *FileDescription) asyncOf() *asyncState {
	if a := fd.async.Load(); a != nil {
		return a
	}
	fd.async.CompareAndSwap(nil, &asyncState{})
	return fd.async.Load()
}

// SetOwner sets the owner that receives SIGIO (nil for none).
func (fd *FileDescription) SetOwner(o FileOwner) {
	if o == nil {
		if a := fd.async.Load(); a != nil {
			a.owner.Store(nil)
		}
		return
	}
	fd.asyncOf().owner.Store(&ownerBox{o})
}

// Owner returns the owner set by SetOwner, or nil.
func (fd *FileDescription) Owner() FileOwner {
	if a := fd.async.Load(); a != nil {
		if b := a.owner.Load(); b != nil {
			return b.o
		}
	}
	return nil
}

// SetSignal sets the signal sent instead of SIGIO (F_SETSIG; 0 for
// SIGIO).
func (fd *FileDescription) SetSignal(sig int32) { fd.asyncOf().sig.Store(sig) }

// Signal returns the F_SETSIG signal.
func (fd *FileDescription) Signal() int32 {
	if a := fd.async.Load(); a != nil {
		return a.sig.Load()
	}
	return 0
}

// SupportsAsync reports whether the file kind supports O_ASYNC.
func (fd *FileDescription) SupportsAsync() bool {
	_, ok := fd.impl.(AsyncFile)
	return ok
}

// SetAsync turns signal-driven I/O on or off for a file kind that
// supports it (the caller keeps the O_ASYNC status flag); fdnum is the
// descriptor the caller named, reported as si_fd.
func (fd *FileDescription) SetAsync(on bool, fdnum int32) {
	af, ok := fd.impl.(AsyncFile)
	if !ok {
		return
	}
	a := fd.asyncOf()
	a.mu.Lock()
	defer a.mu.Unlock()
	if on {
		a.fdnum.Store(fdnum)
		if a.entry != nil {
			return
		}
		e := &waiter.Entry{Mask: af.AsyncEvents(fd), Callback: func(e *waiter.Entry, fired waiter.EventMask) {
			if b := a.owner.Load(); b != nil {
				b.o.SendIO(a.sig.Load(), a.fdnum.Load(), fired&(e.Mask|waiter.EventErr|waiter.EventHUp))
			}
		}}
		a.entry = e
		fd.impl.EventRegister(e)
		fd.AddReleaseHook(a, func() { fd.impl.EventUnregister(e) })
		return
	}
	if a.entry != nil {
		fd.impl.EventUnregister(a.entry)
		fd.RemoveReleaseHook(a)
		a.entry = nil
	}
}
