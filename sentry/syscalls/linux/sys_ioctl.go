package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Ioctl implements ioctl(2): the generic requests (FIONBIO, FIOASYNC,
// FIOCLEX, FIONCLEX, FIONREAD on regular files) and TIOCGPTPEER, which
// makes a descriptor, here; the rest by the file (terminals, pipes,
// timerfds); unknown requests are ENOTTY.
func Ioctl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, cmd, arg := a[0].Int(), a[1].Uint(), a[2].Pointer()
	f, err := vfsIOFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	switch cmd {
	case ioctlFioclex, ioctlFionclex:
		return 0, t.FDTable().SetFlags(fd, fs.FDFlags{CloseOnExec: cmd == ioctlFioclex})
	case ioctlFionbio, ioctlFioasync:
		v, err := copyInUint32(t, arg)
		if err != nil {
			return 0, unix.EFAULT
		}
		bit := uint32(unix.O_NONBLOCK)
		if cmd == ioctlFioasync {
			bit = unix.O_ASYNC
		}
		flags := f.Flags() &^ bit
		if v != 0 {
			flags |= bit
		}
		if cmd == ioctlFioasync && (flags^f.Flags())&bit != 0 {
			// Only file kinds with signal-driven I/O take it.
			if !f.SupportsAsync() {
				return 0, unix.ENOTTY
			}
			f.SetAsync(v != 0, fd)
		}
		f.SetStatusFlags(flags)
		return 0, nil
	case ioctlFiosetown, unix.SIOCSPGRP, ioctlFiogetown, unix.SIOCGPGRP:
		// The owner of a socket's signal-driven I/O (sock_ioctl); other
		// files do not know these.
		if st, err := f.Stat(t); err == nil && st.Type() == unix.S_IFSOCK {
			return sockOwnerIoctl(t, f, cmd, arg)
		}
	case ioctlTiocgptpeer:
		if devpts.MasterTerminal(f) != nil {
			return tiocgptpeer(t, f, uint32(arg))
		}
	case unix.TIOCINQ: // FIONREAD
		st, err := f.Stat(t)
		if err != nil {
			return 0, err
		}
		if st.IsRegular() {
			n := st.Size - f.Offset()
			if n < 0 {
				n = 0
			}
			if n > 1<<31-1 {
				n = 1<<31 - 1
			}
			return 0, copyOutUint32(t, arg, uint32(n))
		}
	}
	return f.Ioctl(t, cmd, arg)
}

// Generic ioctl requests (asm-generic/ioctls.h), missing from x/sys/unix.
const (
	ioctlFionbio  = 0x5421
	ioctlFioasync = 0x5452
	ioctlFionclex = 0x5450
	ioctlFioclex  = 0x5451
	// ioctlFiosetown and ioctlFiogetown are FIOSETOWN and FIOGETOWN
	// (linux/sockios.h).
	ioctlFiosetown = 0x8901
	ioctlFiogetown = 0x8903
	// ioctlTiocgptpeer is TIOCGPTPEER, _IO('T', 0x41).
	ioctlTiocgptpeer = 0x5441
)

// peerOpenFlags are the open flags TIOCGPTPEER applies (its O_CLOEXEC
// goes to the descriptor).
const peerOpenFlags = unix.O_ACCMODE | unix.O_NOCTTY | unix.O_NONBLOCK | unix.O_APPEND | unix.O_ASYNC |
	unix.O_DSYNC | unix.O_SYNC | unix.O_NOATIME | fs.OLargeFile

// tiocgptpeer opens the slave of the pseudo-terminal master f with the
// open(2) flags and returns its new descriptor: the slave as found from
// the master's directory, so /proc/self/fd shows /dev/pts/N, and opened as
// any open of it is (EIO while locked; a session leader without a
// controlling terminal acquires it unless O_NOCTTY).
func tiocgptpeer(t *kernel.Task, f *fs.FileDescription, flags uint32) (uintptr, error) {
	tty := devpts.MasterTerminal(f)
	vd := f.VirtualDentry()
	dir := fs.VirtualDentry{Mount: vd.Mount, Dentry: vd.Dentry.Parent()}
	if dir.Dentry == nil {
		return 0, unix.EIO
	}
	slave, err := fs.Open(t, fs.Lookup{Root: t.FSContext().Root(), Start: dir, Path: tty.SlavePath(f)},
		fs.OpenOptions{Flags: flags & peerOpenFlags})
	if err != nil {
		return 0, err
	}
	defer slave.DecRef()
	fd, err := t.FDTable().NewFD(0, slave, fs.FDFlags{CloseOnExec: flags&unix.O_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}
