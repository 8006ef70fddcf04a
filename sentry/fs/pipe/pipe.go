// Package pipe implements pipes (pipe(2), pipe2(2)) with Linux's
// semantics: a 64 KiB buffer by default (F_SETPIPE_SZ changes it), writes
// of at most PIPE_BUF bytes are atomic, reads see end of file once every
// writer is gone, writes with no reader fail with EPIPE (the syscall layer
// sends SIGPIPE), and readiness is reported to poll and epoll.
//
// Locks: Pipe.mu guards the buffer and the counts of readers and
// writers; waiters are notified after it is released.
package pipe

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Sizes, as Linux has them.
const (
	// Buf is PIPE_BUF: writes up to this size are atomic.
	Buf = 4096
	// DefaultSize is a new pipe's capacity (16 pages).
	DefaultSize = 16 * 4096
	// MaxSize is /proc/sys/fs/pipe-max-size: the largest capacity an
	// unprivileged task may set.
	MaxSize = 1 << 20
	// PipeFSMagic is statfs's f_type for pipefs.
	PipeFSMagic = 0x50495045
)

type pipeFS struct{}

func (pipeFS) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: PipeFSMagic, Bsize: 4096, Frsize: 4096, NameLen: fs.NameMax}, nil
}

var pipefs = fs.NewFilesystem("pipefs", pipeFS{}, nil, false)

// Pipe is one pipe: a buffer shared by its read and write ends. It is the
// node of the pipe's files.
type Pipe struct {
	ino   uint64
	uid   auth.KUID
	gid   auth.KGID
	ctime unix.Timespec

	queue waiter.Queue

	mu       sync.Mutex
	buf      []byte
	head     int   // buf[head:] is unread
	segs     []seg // the unread bytes in order: runs of stream data and packets
	capacity int
	readers  int
	writers  int
	// wOpens counts write-end opens ever (Linux's w_counter): a reader
	// reports POLLHUP only once a writer it has not seen came and went.
	wOpens uint64
}

// New returns a pipe owned by the credentials of ctx, with no ends open.
func New(ctx fs.Context) *Pipe {
	c := ctx.Credentials()
	return &Pipe{
		ino:      fs.NewIno(),
		uid:      c.EffectiveUID,
		gid:      c.EffectiveGID,
		ctime:    unix.NsecToTimespec(time.Now().UnixNano()),
		capacity: DefaultSize,
	}
}

// NewPair returns the read and write ends of a new pipe (pipe2). flags may
// hold O_NONBLOCK and O_DIRECT, which go to both ends.
func NewPair(ctx fs.Context, flags uint32) (r, w *fs.FileDescription) {
	p := New(ctx)
	vd := fs.VirtualDentry{Dentry: fs.NewAnonDentry(pipefs, fmt.Sprintf("pipe:[%d]", p.ino), p)}
	flags &= unix.O_NONBLOCK | unix.O_DIRECT
	return p.open(vd, unix.O_RDONLY|flags), p.open(vd, unix.O_WRONLY|flags)
}

// Stat implements fs.Node.
func (p *Pipe) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{
		Mode: unix.S_IFIFO | 0o600, Nlink: 1, UID: p.uid, GID: p.gid, Ino: p.ino,
		Blksize: 4096, Atime: p.ctime, Mtime: p.ctime, Ctime: p.ctime,
	}, nil
}

// Open implements fs.OpenNode: opening /proc/self/fd/N of a pipe opens
// a new end of the same pipe.
func (p *Pipe) Open(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	return p.open(vd, flags), nil
}

func (p *Pipe) open(vd fs.VirtualDentry, flags uint32) *fs.FileDescription {
	f := &file{pipe: p}
	switch flags & unix.O_ACCMODE {
	case unix.O_RDONLY:
		f.reader = true
	case unix.O_WRONLY:
		f.writer = true
	default:
		f.reader, f.writer = true, true
	}
	p.mu.Lock()
	if f.reader {
		p.readers++
	}
	if f.writer {
		p.writers++
		p.wOpens++
	}
	p.mu.Unlock()
	p.queue.Notify(waiter.EventIn | waiter.EventOut)
	return fs.NewFileDescription(f, vd, flags, fs.FDOptions{Stream: true})
}

// awaitWriter makes the read end fd report no hangup until a writer opens
// after now: a FIFO opened for reading with O_NONBLOCK and no writer
// (fifo(7); Linux's f_version = w_counter).
func (p *Pipe) awaitWriter(fd *fs.FileDescription) {
	f, ok := fd.Impl().(*file)
	if !ok {
		return
	}
	p.mu.Lock()
	f.hupAfter = p.wOpens
	p.mu.Unlock()
}

// seg is a run of unread bytes: stream data, or one packet written in
// packet mode (O_DIRECT), which a read returns alone.
type seg struct {
	n      int
	packet bool
}

// Preconditions: p.mu is locked.
func (p *Pipe) buffered() int { return len(p.buf) - p.head }

// read copies buffered bytes into dst.
func (p *Pipe) read(dst []byte) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	p.mu.Lock()
	if p.buffered() == 0 {
		writers := p.writers
		p.mu.Unlock()
		if writers == 0 {
			return 0, nil
		}
		return 0, syserror.ErrWouldBlock
	}
	n := 0
	for n < len(dst) && len(p.segs) > 0 {
		sg := &p.segs[0]
		k := copy(dst[n:], p.buf[p.head:p.head+sg.n])
		n += k
		p.head += k
		sg.n -= k
		if sg.packet {
			// A short read discards the rest of the packet.
			p.head += sg.n
			p.segs = p.segs[1:]
			break
		}
		if sg.n == 0 {
			p.segs = p.segs[1:]
		}
	}
	if p.head == len(p.buf) {
		p.buf, p.head, p.segs = p.buf[:0], 0, p.segs[:0]
	}
	p.mu.Unlock()
	p.queue.Notify(waiter.EventOut | waiter.EventWrNorm)
	return n, nil
}

// write appends as much of src as fits, keeping writes of at most Buf
// bytes whole. In packet mode each Buf bytes written are one packet.
func (p *Pipe) write(src []byte, packet bool) (int, error) {
	if len(src) == 0 {
		// A null write succeeds, even without readers.
		return 0, nil
	}
	p.mu.Lock()
	if p.readers == 0 {
		p.mu.Unlock()
		return 0, unix.EPIPE
	}
	room := p.capacity - p.buffered()
	if room <= 0 || (len(src) <= Buf && room < len(src)) {
		p.mu.Unlock()
		return 0, syserror.ErrWouldBlock
	}
	n := min(room, len(src))
	if p.head > 0 && len(p.buf)+n > cap(p.buf) {
		// Move the unread bytes down before growing.
		m := copy(p.buf, p.buf[p.head:])
		p.buf, p.head = p.buf[:m], 0
	}
	p.buf = append(p.buf, src[:n]...)
	switch {
	case packet:
		for left := n; left > 0; left -= min(left, Buf) {
			p.segs = append(p.segs, seg{n: min(left, Buf), packet: true})
		}
	case len(p.segs) > 0 && !p.segs[len(p.segs)-1].packet:
		p.segs[len(p.segs)-1].n += n
	default:
		p.segs = append(p.segs, seg{n: n})
	}
	p.mu.Unlock()
	p.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
	return n, nil
}

// Size returns the capacity (F_GETPIPE_SZ).
func (p *Pipe) Size() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(p.capacity)
}

// SetSize sets the capacity (F_SETPIPE_SZ), rounded up to a power of two
// pages, and returns it: EPERM above MaxSize without CAP_SYS_RESOURCE,
// EBUSY if the pipe holds more than the new size, EINVAL if too large.
func (p *Pipe) SetSize(ctx fs.Context, size int64) (int64, error) {
	if size < 0 || size > 1<<31 {
		return 0, unix.EINVAL
	}
	n := int64(4096)
	for n < size {
		n <<= 1
	}
	if n > MaxSize && !ctx.Credentials().HasCapability(unix.CAP_SYS_RESOURCE) {
		return 0, unix.EPERM
	}
	p.mu.Lock()
	if int64(p.buffered()) > n {
		p.mu.Unlock()
		return 0, unix.EBUSY
	}
	p.capacity = int(n)
	p.mu.Unlock()
	p.queue.Notify(waiter.EventOut)
	return n, nil
}

// Buffered returns the number of unread bytes (FIONREAD).
func (p *Pipe) Buffered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buffered()
}

// Sizer is implemented by pipe files, for fcntl's F_GETPIPE_SZ and
// F_SETPIPE_SZ.
type Sizer interface {
	PipeSize() int64
	SetPipeSize(ctx fs.Context, size int64) (int64, error)
}

// file is one end of a pipe.
type file struct {
	fs.FileDefaults
	pipe           *Pipe
	reader, writer bool
	// hupAfter is the pipe's wOpens this reader has seen: without
	// writers it reports POLLHUP only when wOpens has moved on. Guarded
	// by pipe.mu.
	hupAfter uint64
}

// Read implements fs.FileImpl.
func (f *file) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	return f.pipe.read(dst)
}

// Write implements fs.FileImpl; O_DIRECT on the writer's description
// makes each write a packet.
func (f *file) Write(_ fs.Context, fd *fs.FileDescription, src []byte, _ int64) (int, error) {
	return f.pipe.write(src, fd.Flags()&unix.O_DIRECT != 0)
}

// Ioctl implements fs.FileImpl: FIONREAD.
func (f *file) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if cmd != unix.TIOCINQ {
		return 0, unix.ENOTTY
	}
	n := uint32(f.pipe.Buffered())
	b := []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
	if _, err := ctx.CopyOutBytes(arg, b); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// PipeSize implements Sizer.
func (f *file) PipeSize() int64 { return f.pipe.Size() }

// SetPipeSize implements Sizer.
func (f *file) SetPipeSize(ctx fs.Context, size int64) (int64, error) {
	return f.pipe.SetSize(ctx, size)
}

// Readiness implements waiter.Waitable.
func (f *file) Readiness(mask waiter.EventMask) waiter.EventMask {
	p := f.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	var r waiter.EventMask
	if f.reader {
		if p.buffered() > 0 {
			r |= waiter.EventIn | waiter.EventRdNorm
		}
		if p.writers == 0 && p.wOpens != f.hupAfter {
			r |= waiter.EventHUp
		}
	}
	if f.writer {
		if room := p.capacity - p.buffered(); room >= min(Buf, p.capacity) {
			r |= waiter.EventOut | waiter.EventWrNorm
		}
		if p.readers == 0 {
			r |= waiter.EventErr
		}
	}
	return r & mask
}

// EventRegister implements waiter.Waitable.
func (f *file) EventRegister(e *waiter.Entry) { f.pipe.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (f *file) EventUnregister(e *waiter.Entry) { f.pipe.queue.EventUnregister(e) }

// Release implements fs.FileImpl.
func (f *file) Release() {
	p := f.pipe
	p.mu.Lock()
	if f.reader {
		p.readers--
	}
	if f.writer {
		p.writers--
	}
	p.mu.Unlock()
	p.queue.Notify(waiter.EventIn | waiter.EventOut | waiter.EventHUp | waiter.EventErr)
}

// AsyncEvents implements fs.AsyncFile: a read end signals when data
// comes (or the last writer goes), a write end when room frees.
func (f *file) AsyncEvents(*fs.FileDescription) waiter.EventMask {
	var m waiter.EventMask
	if f.reader {
		m |= waiter.EventIn
	}
	if f.writer {
		m |= waiter.EventOut
	}
	return m
}
