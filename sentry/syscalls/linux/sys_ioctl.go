package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Ioctl implements ioctl(2): the generic requests (FIONBIO, FIOASYNC,
// FIOCLEX, FIONCLEX, FIONREAD on regular files) here, the rest by the
// file (terminals, pipes); unknown requests are ENOTTY.
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
		f.SetStatusFlags(flags)
		return 0, nil
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
)
