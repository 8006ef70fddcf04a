// Package eventfd implements eventfd(2) files: a 64-bit counter that
// writes add to and reads take (all of it, or one with EFD_SEMAPHORE).
//
// Locks: File.mu guards the counter; waiters are notified after it is
// released.
package eventfd

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// maxCount is the largest value the counter holds.
const maxCount = ^uint64(0) - 1

// File is an eventfd.
type File struct {
	fs.FileDefaults
	queue     waiter.Queue
	semaphore bool

	// id numbers the eventfd for fdinfo, as Linux's eventfd-id does.
	id int64

	mu    sync.Mutex
	count uint64
}

// lastID is the id the newest eventfd got.
var lastID atomic.Int64

// New returns an eventfd file with initial value initval; flags may hold
// EFD_SEMAPHORE, EFD_NONBLOCK and EFD_CLOEXEC (the caller applies the
// last). Unknown flags are EINVAL.
func New(initval uint64, flags uint32) (*fs.FileDescription, error) {
	if flags&^uint32(unix.EFD_SEMAPHORE|unix.EFD_NONBLOCK|unix.EFD_CLOEXEC) != 0 {
		return nil, unix.EINVAL
	}
	f := &File{count: initval, semaphore: flags&unix.EFD_SEMAPHORE != 0, id: lastID.Add(1) - 1}
	return fs.NewAnonFile("eventfd", f, unix.O_RDWR|flags&unix.O_NONBLOCK, fs.FDOptions{Stream: true}), nil
}

// Read implements fs.FileImpl: an 8-byte read of the counter.
func (f *File) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	if len(dst) < 8 {
		return 0, unix.EINVAL
	}
	f.mu.Lock()
	if f.count == 0 {
		f.mu.Unlock()
		return 0, syserror.ErrWouldBlock
	}
	v := f.count
	if f.semaphore {
		v = 1
	}
	f.count -= v
	f.mu.Unlock()
	binary.NativeEndian.PutUint64(dst, v)
	f.queue.Notify(waiter.EventOut)
	return 8, nil
}

// Write implements fs.FileImpl: adds an 8-byte value, blocking while the
// sum would pass the maximum.
func (f *File) Write(_ fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	if len(src) < 8 {
		return 0, unix.EINVAL
	}
	v := binary.NativeEndian.Uint64(src)
	if v == ^uint64(0) {
		return 0, unix.EINVAL
	}
	f.mu.Lock()
	if maxCount-f.count < v {
		f.mu.Unlock()
		return 0, syserror.ErrWouldBlock
	}
	f.count += v
	f.mu.Unlock()
	if v != 0 {
		f.queue.Notify(waiter.EventIn)
	}
	return 8, nil
}

// Value returns the counter (for /proc fdinfo and tests).
func (f *File) Value() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count
}

// Readiness implements waiter.Waitable.
func (f *File) Readiness(mask waiter.EventMask) waiter.EventMask {
	f.mu.Lock()
	defer f.mu.Unlock()
	var r waiter.EventMask
	// Linux's eventfd_poll: POLLIN and POLLOUT, never the *NORM bits.
	if f.count > 0 {
		r |= waiter.EventIn
	}
	if f.count < maxCount {
		r |= waiter.EventOut
	}
	return r & mask
}

// EventRegister implements waiter.Waitable.
func (f *File) EventRegister(e *waiter.Entry) { f.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (f *File) EventUnregister(e *waiter.Entry) { f.queue.EventUnregister(e) }

// FDInfo adds eventfd's lines to /proc/[pid]/fdinfo/N, as Linux prints
// them (the count in hex, right-aligned in 16 columns).
func (f *File) FDInfo() string {
	f.mu.Lock()
	count := f.count
	f.mu.Unlock()
	sem := 0
	if f.semaphore {
		sem = 1
	}
	return fmt.Sprintf("eventfd-count: %16x\neventfd-id: %d\neventfd-semaphore: %d\n", count, f.id, sem)
}
