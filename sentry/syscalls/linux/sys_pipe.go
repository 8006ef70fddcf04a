package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

func pipe2(t *kernel.Task, addr uintptr, flags uint32) (uintptr, error) {
	if flags&^uint32(unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_DIRECT|oNotificationPipe) != 0 {
		return 0, unix.EINVAL
	}
	if flags&oNotificationPipe != 0 {
		return 0, unix.ENOPKG
	}
	r, w := pipe.NewPair(t, flags)
	defer r.DecRef()
	defer w.DecRef()
	fds, err := t.FDTable().NewFDs(0, []*fs.FileDescription{r, w}, fs.FDFlags{CloseOnExec: flags&unix.O_CLOEXEC != 0}, vfsNoFile(t))
	if err != nil {
		return 0, err
	}
	var b [8]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(fds[0]))
	binary.LittleEndian.PutUint32(b[4:], uint32(fds[1]))
	if _, err := t.CopyOutBytes(addr, b[:]); err != nil {
		t.FDTable().Remove(fds[0])
		t.FDTable().Remove(fds[1])
		return 0, unix.EFAULT
	}
	return 0, nil
}

// Pipe implements pipe(2).
func Pipe(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return pipe2(t, a[0].Pointer(), 0)
}

// Pipe2 implements pipe2(2).
func Pipe2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return pipe2(t, a[0].Pointer(), a[1].Uint())
}

// oNotificationPipe is O_NOTIFICATION_PIPE (O_EXCL), for watch queues.
const oNotificationPipe = unix.O_EXCL
