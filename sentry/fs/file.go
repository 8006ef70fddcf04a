package fs

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// FileImpl is the behaviour of one kind of open file. Methods never block:
// where they would have to wait they return syserror.ErrWouldBlock and the
// caller waits for readiness (see ReadBlocking).
type FileImpl interface {
	waiter.Waitable
	// Read reads into dst from offset off (-1 for stream files).
	Read(ctx Context, fd *FileDescription, dst []byte, off int64) (int, error)
	// Write writes src at offset off (-1 for stream files).
	Write(ctx Context, fd *FileDescription, src []byte, off int64) (int, error)
	// Seek returns the offset lseek(2) sets, given the current one.
	Seek(ctx Context, fd *FileDescription, cur, offset int64, whence int) (int64, error)
	// Ioctl serves ioctl(2) requests specific to the file kind, returning
	// ENOTTY for those it does not know.
	Ioctl(ctx Context, fd *FileDescription, cmd uint32, arg uintptr) (uintptr, error)
	// Release is called when the last reference to the description goes.
	Release()
}

// FileDefaults gives the Linux answer for operations a file kind lacks.
// Embed it and override what the kind supports.
type FileDefaults struct{}

// Read implements FileImpl.Read: EINVAL, as for a file without read.
func (FileDefaults) Read(Context, *FileDescription, []byte, int64) (int, error) {
	return 0, unix.EINVAL
}

// Write implements FileImpl.Write: EINVAL, as for a file without write.
func (FileDefaults) Write(Context, *FileDescription, []byte, int64) (int, error) {
	return 0, unix.EINVAL
}

// Seek implements FileImpl.Seek: ESPIPE.
func (FileDefaults) Seek(Context, *FileDescription, int64, int64, int) (int64, error) {
	return 0, unix.ESPIPE
}

// Ioctl implements FileImpl.Ioctl: ENOTTY.
func (FileDefaults) Ioctl(Context, *FileDescription, uint32, uintptr) (uintptr, error) {
	return 0, unix.ENOTTY
}

// Release implements FileImpl.Release.
func (FileDefaults) Release() {}

// DefaultPollMask is what poll reports for files without a poll operation.
const DefaultPollMask = waiter.EventIn | waiter.EventOut | waiter.EventRdNorm | waiter.EventWrNorm

// NotPollable is embedded by files without a poll operation (regular
// files, directories): poll and select report them always ready, and
// epoll refuses them with EPERM.
type NotPollable struct{}

// Readiness implements waiter.Waitable.Readiness.
func (NotPollable) Readiness(mask waiter.EventMask) waiter.EventMask { return mask & DefaultPollMask }

// EventRegister implements waiter.Waitable.EventRegister.
func (NotPollable) EventRegister(*waiter.Entry) {}

// EventUnregister implements waiter.Waitable.EventUnregister.
func (NotPollable) EventUnregister(*waiter.Entry) {}

func (NotPollable) notPollable() {}

type notPollable interface{ notPollable() }

// PollChecker is implemented by files that know only at run time whether
// they have a poll operation (host descriptors).
type PollChecker interface {
	IsPollable() bool
}

// SeekWithSize implements lseek for a file of the given size: SEEK_SET,
// SEEK_CUR, SEEK_END, and SEEK_DATA/SEEK_HOLE treating the file as one
// data extent.
func SeekWithSize(cur, offset int64, whence int, size int64) (int64, error) {
	var n int64
	switch whence {
	case unix.SEEK_SET:
		n = offset
	case unix.SEEK_CUR:
		n = cur + offset
		if (offset > 0 && n < cur) || (offset < 0 && n > cur) {
			return 0, unix.EINVAL // past the largest offset, as Linux's vfs_setpos
		}
	case unix.SEEK_END:
		n = size + offset
		if (offset > 0 && n < size) || (offset < 0 && n > size) {
			return 0, unix.EINVAL
		}
	case unix.SEEK_DATA:
		if offset < 0 || offset >= size {
			return 0, unix.ENXIO
		}
		n = offset
	case unix.SEEK_HOLE:
		if offset < 0 || offset >= size {
			return 0, unix.ENXIO
		}
		n = size
	default:
		return 0, unix.EINVAL
	}
	if n < 0 {
		return 0, unix.EINVAL
	}
	return n, nil
}

// FDOptions are properties of a file description fixed at creation.
type FDOptions struct {
	// Stream files have no offset: pread, pwrite and lseek fail with
	// ESPIPE, and reads and writes pass offset -1 (pipes, sockets,
	// character devices that say so).
	Stream bool
	// ImplOffset files keep their offset themselves (host files share
	// theirs with the host's open file description): reads and writes
	// pass offset -1, and Seek gets cur -1 and returns the new offset.
	// pread and pwrite still work.
	ImplOffset bool
	// KeepExcl keeps O_EXCL among the flags F_GETFL shows: a pidfd
	// carries PIDFD_THREAD in that bit.
	KeepExcl bool
	// NoPwrite files fail pwrite with ESPIPE, as Linux's seq_file ones
	// do (seq_open clears FMODE_PWRITE); write, pread and lseek work.
	NoPwrite bool
}

// OffsetReporter is implemented by ImplOffset files to report their
// offset.
type OffsetReporter interface {
	CurrentOffset() int64
}

// StatusFlags are the file status flags that fcntl(F_SETFL) may change.
const StatusFlags = unix.O_APPEND | unix.O_ASYNC | unix.O_DIRECT | unix.O_NOATIME | unix.O_NONBLOCK

// FileDescription is an open file description: what open(2) creates and
// dup(2) shares.
type FileDescription struct {
	refs  atomic.Int64
	vd    VirtualDentry
	impl  FileImpl
	flags atomic.Uint32 // open flags: access mode and status flags
	opts  FDOptions

	offMu sync.Mutex
	off   int64

	hooksMu sync.Mutex
	hooks   map[any]func()

	// opener are the credentials of the open(2) that made the
	// description (nil for other files); set once by Open.
	opener *auth.Credentials

	// isDir is set by the VFS's open of a directory, for the IN_ISDIR
	// of its events (notify.go); counted says the open counts in the
	// dentry's opens.
	isDir   bool
	counted bool

	// async holds the owner, signal and O_ASYNC registration (async.go),
	// nil until first used.
	async atomic.Pointer[asyncState]
}

// Opener returns the credentials of the open(2) call that created the
// description, nil if no open(2) did (pipes, sockets...). linkat's
// AT_EMPTY_PATH compares them with the caller's.
func (fd *FileDescription) Opener() *auth.Credentials { return fd.opener }

// NewFileDescription returns a file description with one reference.
// flags are the open(2) flags kept (access mode, status flags, O_PATH,
// O_LARGEFILE, O_DIRECTORY...); O_CREAT, O_EXCL (unless opts.KeepExcl),
// O_NOCTTY, O_TRUNC and O_CLOEXEC are dropped as Linux does.
func NewFileDescription(impl FileImpl, vd VirtualDentry, flags uint32, opts FDOptions) *FileDescription {
	fd := &FileDescription{vd: vd, impl: impl, opts: opts}
	fd.refs.Store(1)
	drop := uint32(unix.O_CREAT | unix.O_EXCL | unix.O_NOCTTY | unix.O_TRUNC | unix.O_CLOEXEC)
	if opts.KeepExcl {
		drop &^= unix.O_EXCL
	}
	fd.flags.Store(flags &^ drop)
	return fd
}

// IncRef takes a reference.
func (fd *FileDescription) IncRef() { fd.refs.Add(1) }

// TryIncRef takes a reference unless the description is already released.
func (fd *FileDescription) TryIncRef() bool {
	for {
		r := fd.refs.Load()
		if r <= 0 {
			return false
		}
		if fd.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// DecRef drops a reference; the last one runs the release hooks and the
// implementation's Release.
func (fd *FileDescription) DecRef() {
	switch r := fd.refs.Add(-1); {
	case r > 0:
		return
	case r < 0:
		panic("fs: FileDescription.DecRef of a released file")
	}
	if fd.vd.Mount != nil && watched(fd.vd.Dentry) && !fd.IsPath() {
		ev := uint32(unix.IN_CLOSE_NOWRITE)
		if fd.Writable() {
			ev = unix.IN_CLOSE_WRITE
		}
		notifyEvent(fd.vd.Dentry, ev, fd.isDir)
	}
	fd.hooksMu.Lock()
	hooks := fd.hooks
	fd.hooks = nil
	fd.hooksMu.Unlock()
	for _, h := range hooks {
		h()
	}
	fd.impl.Release()
	if fd.counted {
		closed(fd.vd.Dentry)
	}
}

// AddReleaseHook arranges for f to run when the last reference goes
// (epoll uses it to drop the file from its interest lists). key identifies
// the hook for RemoveReleaseHook.
func (fd *FileDescription) AddReleaseHook(key any, f func()) {
	fd.hooksMu.Lock()
	if fd.hooks == nil {
		fd.hooks = make(map[any]func())
	}
	fd.hooks[key] = f
	fd.hooksMu.Unlock()
}

// RemoveReleaseHook removes the hook added with key.
func (fd *FileDescription) RemoveReleaseHook(key any) {
	fd.hooksMu.Lock()
	delete(fd.hooks, key)
	fd.hooksMu.Unlock()
}

// Impl returns the file's implementation.
func (fd *FileDescription) Impl() FileImpl { return fd.impl }

// VirtualDentry returns the position the file was opened at.
func (fd *FileDescription) VirtualDentry() VirtualDentry { return fd.vd }

// Dentry returns the dentry the file was opened at.
func (fd *FileDescription) Dentry() *Dentry { return fd.vd.Dentry }

// Mount returns the mount the file was opened through (nil for anonymous
// files).
func (fd *FileDescription) Mount() *Mount { return fd.vd.Mount }

// Flags returns the open flags: access mode, status flags and O_PATH,
// O_LARGEFILE, O_DIRECTORY as given.
func (fd *FileDescription) Flags() uint32 { return fd.flags.Load() }

// SetStatusFlags replaces the status flags (F_SETFL), keeping the others.
func (fd *FileDescription) SetStatusFlags(flags uint32) {
	for {
		old := fd.flags.Load()
		n := old&^StatusFlags | flags&StatusFlags
		if fd.flags.CompareAndSwap(old, n) {
			return
		}
	}
}

// Options returns the options the file was created with.
func (fd *FileDescription) Options() FDOptions { return fd.opts }

// IsPath reports whether the file was opened with O_PATH.
func (fd *FileDescription) IsPath() bool { return fd.Flags()&unix.O_PATH != 0 }

// Readable reports whether the file was opened for reading.
func (fd *FileDescription) Readable() bool {
	f := fd.Flags()
	return f&unix.O_PATH == 0 && f&unix.O_ACCMODE != unix.O_WRONLY
}

// Writable reports whether the file was opened for writing.
func (fd *FileDescription) Writable() bool {
	f := fd.Flags()
	a := f & unix.O_ACCMODE
	return f&unix.O_PATH == 0 && (a == unix.O_WRONLY || a == unix.O_RDWR)
}

// NonBlocking reports whether O_NONBLOCK is set.
func (fd *FileDescription) NonBlocking() bool { return fd.Flags()&unix.O_NONBLOCK != 0 }

// Pollable reports whether the file has a poll operation (epoll accepts
// it).
func (fd *FileDescription) Pollable() bool {
	if pc, ok := fd.impl.(PollChecker); ok {
		return pc.IsPollable()
	}
	_, np := fd.impl.(notPollable)
	return !np
}

// Stat returns the attributes of the file's node.
func (fd *FileDescription) Stat(ctx Context) (Stat, error) { return fd.vd.Dentry.Stat(ctx) }

// Readiness implements waiter.Waitable.
func (fd *FileDescription) Readiness(mask waiter.EventMask) waiter.EventMask {
	return fd.impl.Readiness(mask)
}

// EventRegister implements waiter.Waitable.
func (fd *FileDescription) EventRegister(e *waiter.Entry) { fd.impl.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (fd *FileDescription) EventUnregister(e *waiter.Entry) { fd.impl.EventUnregister(e) }

// Read reads at the file's offset and advances it (read(2)); it never
// blocks. The caller has checked Readable.
func (fd *FileDescription) Read(ctx Context, dst []byte) (int, error) {
	if fd.opts.Stream || fd.opts.ImplOffset {
		return fd.accessed(fd.impl.Read(ctx, fd, dst, -1))
	}
	fd.offMu.Lock()
	n, err := fd.impl.Read(ctx, fd, dst, fd.off)
	fd.off += int64(n)
	fd.offMu.Unlock()
	return fd.accessed(n, err)
}

// accessed reports IN_ACCESS for a read that returned data.
func (fd *FileDescription) accessed(n int, err error) (int, error) {
	if n > 0 && watched(fd.vd.Dentry) {
		notifyEvent(fd.vd.Dentry, unix.IN_ACCESS, fd.isDir)
	}
	return n, err
}

// modified reports IN_MODIFY for a write that wrote something.
func (fd *FileDescription) modified(n int, err error) (int, error) {
	if n > 0 && watched(fd.vd.Dentry) {
		notifyEvent(fd.vd.Dentry, unix.IN_MODIFY, fd.isDir)
	}
	return n, err
}

// PRead reads at offset off without moving the file's offset (pread(2)).
func (fd *FileDescription) PRead(ctx Context, dst []byte, off int64) (int, error) {
	if fd.opts.Stream {
		return 0, unix.ESPIPE
	}
	if off < 0 {
		return 0, unix.EINVAL
	}
	return fd.accessed(fd.impl.Read(ctx, fd, dst, off))
}

// Write writes at the file's offset (at the end with O_APPEND) and
// advances it (write(2)); it never blocks.
func (fd *FileDescription) Write(ctx Context, src []byte) (int, error) {
	if fd.opts.Stream || fd.opts.ImplOffset {
		return fd.modified(fd.impl.Write(ctx, fd, src, -1))
	}
	fd.offMu.Lock()
	if fd.Flags()&unix.O_APPEND != 0 {
		end, err := fd.impl.Seek(ctx, fd, fd.off, 0, unix.SEEK_END)
		if err != nil {
			fd.offMu.Unlock()
			return 0, err
		}
		fd.off = end
	}
	n, err := fd.impl.Write(ctx, fd, src, fd.off)
	fd.off += int64(n)
	fd.offMu.Unlock()
	return fd.modified(n, err)
}

// PWrite writes at offset off without moving the file's offset
// (pwrite(2)); on an O_APPEND description it appends instead, as Linux
// does.
func (fd *FileDescription) PWrite(ctx Context, src []byte, off int64) (int, error) {
	if fd.opts.Stream || fd.opts.NoPwrite {
		return 0, unix.ESPIPE
	}
	if off < 0 {
		return 0, unix.EINVAL
	}
	if fd.Flags()&unix.O_APPEND != 0 && !fd.opts.ImplOffset {
		return fd.WriteAppend(ctx, src, false)
	}
	return fd.modified(fd.impl.Write(ctx, fd, src, off))
}

// WriteAppend writes src at the end of the file (O_APPEND semantics for
// one call: pwritev2's RWF_APPEND); moveOffset says whether the file's
// offset then follows the data, as it does for a write at the current
// offset.
func (fd *FileDescription) WriteAppend(ctx Context, src []byte, moveOffset bool) (int, error) {
	if fd.opts.Stream {
		return fd.modified(fd.impl.Write(ctx, fd, src, -1))
	}
	fd.offMu.Lock()
	end, err := fd.impl.Seek(ctx, fd, fd.off, 0, unix.SEEK_END)
	if err != nil {
		fd.offMu.Unlock()
		return 0, err
	}
	n, err := fd.impl.Write(ctx, fd, src, end)
	if moveOffset && !fd.opts.ImplOffset {
		fd.off = end + int64(n)
	}
	fd.offMu.Unlock()
	return fd.modified(n, err)
}

// Seek implements lseek(2).
func (fd *FileDescription) Seek(ctx Context, offset int64, whence int) (int64, error) {
	if fd.opts.Stream {
		return 0, unix.ESPIPE
	}
	if fd.opts.ImplOffset {
		return fd.impl.Seek(ctx, fd, -1, offset, whence)
	}
	fd.offMu.Lock()
	defer fd.offMu.Unlock()
	n, err := fd.impl.Seek(ctx, fd, fd.off, offset, whence)
	if err != nil {
		return 0, err
	}
	fd.off = n
	return n, nil
}

// Offset returns the current file offset.
func (fd *FileDescription) Offset() int64 {
	if r, ok := fd.impl.(OffsetReporter); ok && fd.opts.ImplOffset {
		return r.CurrentOffset()
	}
	fd.offMu.Lock()
	defer fd.offMu.Unlock()
	return fd.off
}

// SetOffset sets the offset (for directory files resetting their listing).
//
// Preconditions: the caller is not inside a Read, Write or Seek of fd.
func (fd *FileDescription) SetOffset(off int64) {
	fd.offMu.Lock()
	fd.off = off
	fd.offMu.Unlock()
}

// Ioctl forwards ioctl(2) to the implementation.
func (fd *FileDescription) Ioctl(ctx Context, cmd uint32, arg uintptr) (uintptr, error) {
	return fd.impl.Ioctl(ctx, fd, cmd, arg)
}

// pathFile is the implementation of O_PATH descriptions: the handlers
// refuse every I/O operation on them with EBADF before reaching it.
type pathFile struct {
	FileDefaults
	NotPollable
}

// OLargeFile is the kernel's O_LARGEFILE (x/sys/unix has glibc's 0 on
// amd64). open(2) sets it on 64-bit, and F_GETFL shows it.
const OLargeFile = 0o100000
