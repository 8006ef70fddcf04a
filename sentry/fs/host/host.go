// Package host implements files backed by host descriptors the Sentry
// owns: the application's stdio as runsc passes it in. Reads and writes
// go to the host descriptor, which is set non-blocking; readiness comes
// from one notifier goroutine waiting on a Sentry-side epoll. Terminal
// ioctls are forwarded to the host tty, except the foreground process
// group, which is the sandbox's own and lives in TTY.
//
// Host syscalls made here, all on descriptors the Sentry owns: read,
// write, pread64, pwrite64, lseek, fstat, fcntl, ioctl (TCGETS, TCSETS*,
// TIOCGWINSZ, TIOCSWINSZ, FIONREAD), poll, epoll_create1, epoll_ctl,
// epoll_pwait, close.
//
// Locks: TTY.mu guards the foreground process group. The notifier's mu
// guards its descriptor table and is not held while waking queues.
package host

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

type hostFS struct{}

func (hostFS) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: 0x01021994, Bsize: 4096, Frsize: 4096, NameLen: fs.NameMax}, nil
}

var hostFilesystem = fs.NewFilesystem("host", hostFS{}, nil, false)

// TTY is the sandbox's view of a terminal: its foreground process group.
// Several descriptors of one terminal (stdin, stdout, stderr) share one.
type TTY struct {
	mu     sync.Mutex
	fgPgrp int32
}

// ForegroundPgrp returns the foreground process group (0 if none set).
func (t *TTY) ForegroundPgrp() int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fgPgrp
}

// SetForegroundPgrp sets the foreground process group.
func (t *TTY) SetForegroundPgrp(pgid int32) {
	t.mu.Lock()
	t.fgPgrp = pgid
	t.mu.Unlock()
}

// Options configure NewFile.
type Options struct {
	// TTY is shared by the descriptors of one terminal; if nil and the
	// descriptor is a terminal, a new one is made.
	TTY *TTY
	// Name is what /proc/self/fd shows (default "host:[N]").
	Name string
	// OpenFlags, if HasOpenFlags, replace the flags read from the host
	// descriptor (access mode and status flags of a reopen).
	OpenFlags    uint32
	HasOpenFlags bool
	// UID and GID own the file as the sandbox sees it (the container's
	// user, so it may reopen its stdio through /dev/stdout).
	UID auth.KUID
	GID auth.KGID
}

// node is the inode of a host file.
type node struct {
	hostFD  int
	ino     uint64
	created unix.Timespec
	tty     *TTY
	name    string
	hostAcc uint32 // access mode of the host descriptor
	uid     auth.KUID
	gid     auth.KGID
}

// Open implements fs.OpenNode: opening /proc/self/fd/N (or /dev/stdout)
// of a host file duplicates the host descriptor into a new file
// description with the access mode asked for, which the host descriptor
// must allow.
func (n *node) Open(_ fs.Context, _ fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	want := flags & unix.O_ACCMODE
	if (want == unix.O_RDWR && n.hostAcc != unix.O_RDWR) ||
		(want == unix.O_WRONLY && n.hostAcc == unix.O_RDONLY) ||
		(want == unix.O_RDONLY && n.hostAcc == unix.O_WRONLY) {
		return nil, unix.EACCES
	}
	nfd, err := unix.Dup(n.hostFD)
	if err != nil {
		return nil, err
	}
	f, err := newFile(nfd, Options{TTY: n.tty, Name: n.name, OpenFlags: flags, HasOpenFlags: true, UID: n.uid, GID: n.gid}, n.ino)
	if err != nil {
		unix.Close(nfd)
		return nil, err
	}
	return f, nil
}

// Stat implements fs.Node: the host descriptor's type, permission bits
// and device number, with the Sentry's own inode number and ownership.
func (n *node) Stat(fs.Context) (fs.Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(n.hostFD, &st); err != nil {
		return fs.Stat{}, err
	}
	s := fs.Stat{
		Mode: st.Mode, Nlink: 1, UID: n.uid, GID: n.gid, Ino: n.ino, Rdev: st.Rdev, Blksize: uint32(st.Blksize),
		Atime: n.created, Mtime: n.created, Ctime: n.created,
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		s.Size, s.Blocks = st.Size, st.Blocks
		s.Atime, s.Mtime, s.Ctime = st.Atim, st.Mtim, st.Ctim
	}
	return s, nil
}

// File is an open host descriptor.
type File struct {
	fs.FileDefaults
	hostFD   int
	tty      *TTY
	regular  bool
	pollable bool
	queue    waiter.Queue
}

// isTTY reports whether fd is a terminal.
func isTTY(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// NewFile takes ownership of hostFD and returns a file description of it
// with the access mode the host descriptor has.
func NewFile(hostFD int, opts Options) (*fs.FileDescription, error) {
	return newFile(hostFD, opts, fs.NewIno())
}

// newFile is NewFile with the inode number (a reopen keeps its file's).
func newFile(hostFD int, opts Options, ino uint64) (*fs.FileDescription, error) {
	var st unix.Stat_t
	if err := unix.Fstat(hostFD, &st); err != nil {
		return nil, fmt.Errorf("host: fstat fd %d: %w", hostFD, err)
	}
	fl, err := unix.FcntlInt(uintptr(hostFD), unix.F_GETFL, 0)
	if err != nil {
		return nil, fmt.Errorf("host: F_GETFL fd %d: %w", hostFD, err)
	}
	f := &File{hostFD: hostFD, regular: st.Mode&unix.S_IFMT == unix.S_IFREG}
	if isTTY(hostFD) {
		f.tty = opts.TTY
		if f.tty == nil {
			f.tty = &TTY{}
		}
	}
	if !f.regular {
		if _, err := unix.FcntlInt(uintptr(hostFD), unix.F_SETFL, fl|unix.O_NONBLOCK); err != nil {
			return nil, fmt.Errorf("host: set O_NONBLOCK on fd %d: %w", hostFD, err)
		}
		switch err := theNotifier.add(hostFD, &f.queue); err {
		case nil:
			f.pollable = true
		case unix.EPERM:
		default:
			return nil, fmt.Errorf("host: watch fd %d: %w", hostFD, err)
		}
	}
	n := &node{hostFD: hostFD, ino: ino, created: unix.NsecToTimespec(time.Now().UnixNano()), tty: f.tty, hostAcc: uint32(fl) & unix.O_ACCMODE, uid: opts.UID, gid: opts.GID}
	n.name = opts.Name
	if n.name == "" {
		n.name = fmt.Sprintf("host:[%d]", n.ino)
	}
	vd := fs.VirtualDentry{Dentry: fs.NewAnonDentry(hostFilesystem, n.name, n)}
	flags := uint32(fl) & (unix.O_ACCMODE | unix.O_APPEND)
	if opts.HasOpenFlags {
		flags = opts.OpenFlags & (unix.O_ACCMODE | unix.O_APPEND | unix.O_NONBLOCK)
	}
	// Regular files keep the host's offset, which the host descriptor
	// shares with its duplicates (stdout and stderr of "cmd >f 2>&1").
	return fs.NewFileDescription(f, vd, flags|fs.OLargeFile, fs.FDOptions{Stream: !f.regular, ImplOffset: f.regular}), nil
}

// IsPollable implements fs.PollChecker: regular files are not.
func (f *File) IsPollable() bool { return f.pollable }

// TTY returns the terminal state of f, nil if f is not a terminal.
func (f *File) TTY() *TTY { return f.tty }

func hostErr(err error) error {
	if err == unix.EAGAIN {
		return syserror.ErrWouldBlock
	}
	return err
}

// Read implements fs.FileImpl.
func (f *File) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	for {
		var n int
		var err error
		if off >= 0 {
			n, err = unix.Pread(f.hostFD, dst, off)
		} else {
			n, err = unix.Read(f.hostFD, dst)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, hostErr(err)
		}
		return n, nil
	}
}

// Write implements fs.FileImpl.
func (f *File) Write(_ fs.Context, _ *fs.FileDescription, src []byte, off int64) (int, error) {
	for {
		var n int
		var err error
		if off >= 0 {
			n, err = unix.Pwrite(f.hostFD, src, off)
		} else {
			n, err = unix.Write(f.hostFD, src)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, hostErr(err)
		}
		return n, nil
	}
}

// Seek implements fs.FileImpl for regular host files: the host's offset
// moves.
func (f *File) Seek(_ fs.Context, _ *fs.FileDescription, _, offset int64, whence int) (int64, error) {
	if !f.regular {
		return 0, unix.ESPIPE
	}
	return unix.Seek(f.hostFD, offset, whence)
}

// CurrentOffset implements fs.OffsetReporter.
func (f *File) CurrentOffset() int64 {
	off, err := unix.Seek(f.hostFD, 0, unix.SEEK_CUR)
	if err != nil {
		return 0
	}
	return off
}

// termiosSize is the size of the kernel's struct termios.
const termiosSize = 36

func encodeTermios(t *unix.Termios) []byte {
	b := make([]byte, 0, termiosSize)
	b = binary.LittleEndian.AppendUint32(b, t.Iflag)
	b = binary.LittleEndian.AppendUint32(b, t.Oflag)
	b = binary.LittleEndian.AppendUint32(b, t.Cflag)
	b = binary.LittleEndian.AppendUint32(b, t.Lflag)
	b = append(b, t.Line)
	return append(b, t.Cc[:]...)
}

func decodeTermios(b []byte) *unix.Termios {
	t := &unix.Termios{
		Iflag: binary.LittleEndian.Uint32(b[0:]),
		Oflag: binary.LittleEndian.Uint32(b[4:]),
		Cflag: binary.LittleEndian.Uint32(b[8:]),
		Lflag: binary.LittleEndian.Uint32(b[12:]),
		Line:  b[16],
	}
	copy(t.Cc[:], b[17:termiosSize])
	return t
}

func copyOut(ctx fs.Context, addr uintptr, b []byte) error {
	if _, err := ctx.CopyOutBytes(addr, b); err != nil {
		return unix.EFAULT
	}
	return nil
}

func copyIn(ctx fs.Context, addr uintptr, b []byte) error {
	if _, err := ctx.CopyInBytes(addr, b); err != nil {
		return unix.EFAULT
	}
	return nil
}

// Ioctl implements fs.FileImpl: terminal ioctls for terminals, FIONREAD
// for streams.
func (f *File) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if cmd == unix.TIOCINQ && !f.regular {
		n, err := unix.IoctlGetInt(f.hostFD, unix.TIOCINQ)
		if err != nil {
			return 0, err
		}
		return 0, copyOut(ctx, arg, binary.LittleEndian.AppendUint32(nil, uint32(n)))
	}
	if f.tty == nil {
		return 0, unix.ENOTTY
	}
	switch cmd {
	case unix.TCGETS:
		t, err := unix.IoctlGetTermios(f.hostFD, unix.TCGETS)
		if err != nil {
			return 0, err
		}
		return 0, copyOut(ctx, arg, encodeTermios(t))
	case unix.TCSETS, unix.TCSETSW, unix.TCSETSF:
		b := make([]byte, termiosSize)
		if err := copyIn(ctx, arg, b); err != nil {
			return 0, err
		}
		return 0, unix.IoctlSetTermios(f.hostFD, uint(cmd), decodeTermios(b))
	case unix.TIOCGWINSZ:
		ws, err := unix.IoctlGetWinsize(f.hostFD, unix.TIOCGWINSZ)
		if err != nil {
			return 0, err
		}
		b := make([]byte, 8)
		binary.LittleEndian.PutUint16(b[0:], ws.Row)
		binary.LittleEndian.PutUint16(b[2:], ws.Col)
		binary.LittleEndian.PutUint16(b[4:], ws.Xpixel)
		binary.LittleEndian.PutUint16(b[6:], ws.Ypixel)
		return 0, copyOut(ctx, arg, b)
	case unix.TIOCSWINSZ:
		b := make([]byte, 8)
		if err := copyIn(ctx, arg, b); err != nil {
			return 0, err
		}
		ws := &unix.Winsize{
			Row: binary.LittleEndian.Uint16(b[0:]), Col: binary.LittleEndian.Uint16(b[2:]),
			Xpixel: binary.LittleEndian.Uint16(b[4:]), Ypixel: binary.LittleEndian.Uint16(b[6:]),
		}
		return 0, unix.IoctlSetWinsize(f.hostFD, unix.TIOCSWINSZ, ws)
	case unix.TIOCGPGRP:
		return 0, copyOut(ctx, arg, binary.LittleEndian.AppendUint32(nil, uint32(f.tty.ForegroundPgrp())))
	case unix.TIOCSPGRP:
		b := make([]byte, 4)
		if err := copyIn(ctx, arg, b); err != nil {
			return 0, err
		}
		pgid := int32(binary.LittleEndian.Uint32(b))
		if pgid < 0 {
			return 0, unix.EINVAL
		}
		f.tty.SetForegroundPgrp(pgid)
		return 0, nil
	}
	return 0, unix.ENOTTY
}

// Readiness implements waiter.Waitable by polling the host descriptor.
func (f *File) Readiness(mask waiter.EventMask) waiter.EventMask {
	if !f.pollable {
		return mask & fs.DefaultPollMask
	}
	pfd := []unix.PollFd{{Fd: int32(f.hostFD), Events: int16(mask & waiter.AllEvents)}}
	for {
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0
		}
		return waiter.EventMask(uint16(pfd[0].Revents)) & (mask | waiter.EventErr | waiter.EventHUp)
	}
}

// EventRegister implements waiter.Waitable.
func (f *File) EventRegister(e *waiter.Entry) { f.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (f *File) EventUnregister(e *waiter.Entry) { f.queue.EventUnregister(e) }

// Release implements fs.FileImpl: closes the host descriptor.
func (f *File) Release() {
	if f.pollable {
		theNotifier.remove(f.hostFD)
	}
	unix.Close(f.hostFD)
}
