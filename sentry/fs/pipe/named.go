package pipe

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// Named is a named pipe (a FIFO node of a file system) with fifo(7)'s open
// rules: a read-only open waits for a writer and a write-only open for a
// reader (unless O_NONBLOCK: then a reader goes ahead and a writer fails
// with ENXIO); a read-write open never waits, and a signal interrupts a
// wait (ERESTARTSYS). The pipe's buffer lives while some end is open. File
// systems keep one Named per FIFO node and call Open from their node's
// Open; the zero value is ready to use.
type Named struct {
	mu sync.Mutex
	// p is the pipe of the ends open now, nil when none is.
	p *Pipe
	// readers and writers count open ends; rOpens and wOpens count
	// opens ever, so a waiter sees a partner that came and went.
	readers, writers int
	rOpens, wOpens   uint64
	// changed is closed (and replaced) whenever an end opens.
	changed chan struct{}
}

// Open opens an end of the named pipe, whose node is at vd, with the
// open(2) flags.
func (f *Named) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	acc := flags & unix.O_ACCMODE
	nonblock := flags&unix.O_NONBLOCK != 0
	f.mu.Lock()
	if acc == unix.O_WRONLY && nonblock && f.readers == 0 {
		f.mu.Unlock()
		return nil, unix.ENXIO
	}
	if f.p == nil {
		f.p = New(ctx)
	}
	fd, err := f.p.Open(ctx, vd, flags)
	if err != nil {
		f.mu.Unlock()
		return nil, err
	}
	reader, writer := acc != unix.O_WRONLY, acc != unix.O_RDONLY
	if acc == unix.O_RDONLY && nonblock && f.writers == 0 {
		f.p.awaitWriter(fd)
	}
	if reader {
		f.readers++
		f.rOpens++
	}
	if writer {
		f.writers++
		f.wOpens++
	}
	if f.changed != nil {
		close(f.changed)
	}
	f.changed = make(chan struct{})
	fd.AddReleaseHook(f, func() {
		f.mu.Lock()
		if reader {
			f.readers--
		}
		if writer {
			f.writers--
		}
		if f.readers == 0 && f.writers == 0 {
			// The buffer goes with the last end, as on Linux.
			f.p = nil
		}
		f.mu.Unlock()
	})
	// Wait for a partner.
	var wait func() bool
	switch {
	case acc == unix.O_RDONLY && !nonblock && f.writers == 0:
		since := f.wOpens
		wait = func() bool { return f.wOpens == since }
	case acc == unix.O_WRONLY && f.readers == 0:
		since := f.rOpens
		wait = func() bool { return f.rOpens == since }
	}
	for wait != nil && wait() {
		ch := f.changed
		f.mu.Unlock()
		if err := ctx.BlockOn(ch, time.Time{}, false); err != nil {
			fd.DecRef()
			if err == syserror.ErrInterrupted {
				return nil, syserror.ERESTARTSYS
			}
			return nil, err
		}
		f.mu.Lock()
	}
	f.mu.Unlock()
	return fd, nil
}
