package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/eventfd"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

func eventfd2(t *kernel.Task, initval uint32, flags uint32) (uintptr, error) {
	f, err := eventfd.New(uint64(initval), flags)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&unix.EFD_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// Eventfd implements eventfd(2).
func Eventfd(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return eventfd2(t, a[0].Uint(), 0)
}

// Eventfd2 implements eventfd2(2).
func Eventfd2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return eventfd2(t, a[0].Uint(), a[1].Uint())
}
