package pipe

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// FromFile returns the pipe of a pipe file, or nil.
func FromFile(f *fs.FileDescription) *Pipe {
	if pf, ok := f.Impl().(*file); ok {
		return pf.pipe
	}
	return nil
}

// Room returns how many bytes a write could add now.
func (p *Pipe) Room() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(0, p.capacity-p.buffered())
}

// lockPair locks two distinct pipes in a fixed order (by inode number).
func lockPair(a, b *Pipe) func() {
	if a.ino > b.ino {
		a, b = b, a
	}
	a.mu.Lock()
	b.mu.Lock()
	return func() {
		b.mu.Unlock()
		a.mu.Unlock()
	}
}

// Transfer moves (tee: copies) up to n bytes from src to dst, as
// splice(2) and tee(2) between pipes do. It returns 0 at end of file
// (src empty with no writers), EPIPE if dst has no reader, and
// ErrWouldBlock with srcBlocked saying which side must become ready.
// src and dst must differ.
func Transfer(dst, src *Pipe, n int, tee bool) (moved int, srcBlocked bool, err error) {
	if n == 0 {
		return 0, false, nil
	}
	unlock := lockPair(dst, src)
	if dst.readers == 0 {
		unlock()
		return 0, false, unix.EPIPE
	}
	if src.buffered() == 0 {
		writers := src.writers
		unlock()
		if writers == 0 {
			return 0, false, nil
		}
		return 0, true, syserror.ErrWouldBlock
	}
	room := dst.capacity - dst.buffered()
	if room <= 0 {
		unlock()
		return 0, false, syserror.ErrWouldBlock
	}
	k := min(n, room, src.buffered())
	data := src.buf[src.head : src.head+k]
	dst.buf = append(dst.buf, data...)
	if len(dst.segs) > 0 && !dst.segs[len(dst.segs)-1].packet {
		dst.segs[len(dst.segs)-1].n += k
	} else {
		dst.segs = append(dst.segs, seg{n: k})
	}
	if !tee {
		src.head += k
		for left := k; left > 0; {
			sg := &src.segs[0]
			d := min(left, sg.n)
			sg.n -= d
			left -= d
			if sg.n == 0 {
				src.segs = src.segs[1:]
			}
		}
		if src.head == len(src.buf) {
			src.buf, src.head, src.segs = src.buf[:0], 0, src.segs[:0]
		}
	}
	unlock()
	dst.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
	if !tee {
		src.queue.Notify(waiter.EventOut | waiter.EventWrNorm)
	}
	return k, false, nil
}
