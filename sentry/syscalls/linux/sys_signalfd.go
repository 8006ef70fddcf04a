package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/signalfd"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// signalfd4 creates a signalfd (ufd -1) or changes the mask of the one at
// ufd, in Linux's order of checks.
func signalfd4(t *kernel.Task, ufd int32, maskAddr uintptr, size uint64, flags uint32) (uintptr, error) {
	if size != 8 {
		return 0, unix.EINVAL
	}
	m, err := copyInUint64(t, maskAddr)
	if err != nil {
		return 0, unix.EFAULT
	}
	if flags&^uint32(signalfd.SFD_CLOEXEC|signalfd.SFD_NONBLOCK) != 0 {
		return 0, unix.EINVAL
	}
	mask := kernel.SignalSet(m)
	if ufd == -1 {
		f, err := signalfd.New(t, mask, flags)
		if err != nil {
			return 0, err
		}
		defer f.DecRef()
		fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&signalfd.SFD_CLOEXEC != 0}, vfsNoFile(t))
		return uintptr(fd), err
	}
	f, err := vfsFile(t, ufd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	sf := signalfd.FromFile(f)
	if sf == nil {
		return 0, unix.EINVAL
	}
	sf.SetMask(t, mask)
	return uintptr(ufd), nil
}

// Signalfd implements signalfd(2).
func Signalfd(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return signalfd4(t, a[0].Int(), a[1].Pointer(), a[2].Uint64(), 0)
}

// Signalfd4 implements signalfd4(2).
func Signalfd4(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return signalfd4(t, a[0].Int(), a[1].Pointer(), a[2].Uint64(), a[3].Uint())
}
