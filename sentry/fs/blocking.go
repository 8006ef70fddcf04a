package fs

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// waitFor registers on w for mask and returns the channel and the undo.
func waitFor(w waiter.Waitable, mask waiter.EventMask) (<-chan struct{}, func()) {
	e, ch := waiter.NewChannelEntry(mask)
	w.EventRegister(e)
	return ch, func() { w.EventUnregister(e) }
}

// ReadBlocking reads from fd at its offset, waiting for data if the file
// is blocking. An interrupted wait returns syserror.ErrInterrupted.
func ReadBlocking(ctx Context, fd *FileDescription, dst []byte) (int, error) {
	return readBlocking(ctx, fd, dst, time.Time{}, false)
}

// ReadBlockingDeadline is ReadBlocking that gives up with EAGAIN at
// deadline (SO_RCVTIMEO).
func ReadBlockingDeadline(ctx Context, fd *FileDescription, dst []byte, deadline time.Time) (int, error) {
	return readBlocking(ctx, fd, dst, deadline, true)
}

func readBlocking(ctx Context, fd *FileDescription, dst []byte, deadline time.Time, hasDeadline bool) (int, error) {
	n, err := fd.Read(ctx, dst)
	if err != syserror.ErrWouldBlock || fd.NonBlocking() {
		return n, err
	}
	ch, undo := waitFor(fd, waiter.EventIn|waiter.EventRdHUp)
	defer undo()
	for {
		n, err = fd.Read(ctx, dst)
		if err != syserror.ErrWouldBlock {
			return n, err
		}
		if err := ctx.BlockOn(ch, deadline, hasDeadline); err != nil {
			if err == unix.ETIMEDOUT {
				return 0, syserror.ErrWouldBlock
			}
			return 0, err
		}
	}
}

// WriteBlocking writes all of src to fd, waiting for room if the file is
// blocking. A wait cut short after some bytes were written returns that
// count; before any, syserror.ErrInterrupted.
func WriteBlocking(ctx Context, fd *FileDescription, src []byte) (int, error) {
	total := 0
	var undo func()
	var ch <-chan struct{}
	defer func() {
		if undo != nil {
			undo()
		}
	}()
	for {
		n, err := fd.Write(ctx, src[total:])
		total += n
		if err == nil && total == len(src) {
			return total, nil
		}
		if err != nil && err != syserror.ErrWouldBlock {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if fd.NonBlocking() {
			if total > 0 {
				return total, nil
			}
			return 0, syserror.ErrWouldBlock
		}
		if err == nil {
			// A partial write without EAGAIN: try again at once.
			continue
		}
		if undo == nil {
			ch, undo = waitFor(fd, waiter.EventOut)
			continue // re-check now that we are registered
		}
		if err := ctx.BlockOn(ch, time.Time{}, false); err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
	}
}

// PollItem is one file of a poll(2) or select(2) call.
type PollItem struct {
	// File is nil for a descriptor that is not open (POLLNVAL).
	File *FileDescription
	// Events is the events asked for; EventErr and EventHUp are always
	// reported.
	Events waiter.EventMask
	// Revents is set by Poll.
	Revents waiter.EventMask
}

// Poll sets each item's Revents and returns how many have some, waiting
// until one does, the deadline passes (then 0), or the task is
// interrupted (syserror.ErrInterrupted). A deadline in the past polls
// once without waiting.
func Poll(ctx Context, items []PollItem, deadline time.Time, hasDeadline bool) (int, error) {
	check := func() int {
		n := 0
		for i := range items {
			it := &items[i]
			if it.File == nil {
				it.Revents = waiter.EventNVal
			} else {
				it.Revents = it.File.Readiness(it.Events | waiter.EventErr | waiter.EventHUp)
			}
			if it.Revents != 0 {
				n++
			}
		}
		return n
	}
	if n := check(); n > 0 || (hasDeadline && !time.Now().Before(deadline)) {
		return n, nil
	}
	ch := make(chan struct{}, 1)
	notify := func(*waiter.Entry, waiter.EventMask) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	entries := make([]waiter.Entry, len(items))
	for i := range items {
		if items[i].File == nil {
			continue
		}
		entries[i] = waiter.Entry{Mask: items[i].Events | waiter.EventErr | waiter.EventHUp, Callback: notify}
		items[i].File.EventRegister(&entries[i])
	}
	defer func() {
		for i := range items {
			if items[i].File != nil {
				items[i].File.EventUnregister(&entries[i])
			}
		}
	}()
	for {
		if n := check(); n > 0 {
			return n, nil
		}
		if err := ctx.BlockOn(ch, deadline, hasDeadline); err != nil {
			if err == unix.ETIMEDOUT {
				return check(), nil
			}
			return 0, err
		}
	}
}
