package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// pidfdOf returns the pidfd open at fd: EBADF when fd is not open or not
// a pidfd, as Linux's pidfd_get_pid. The caller drops the reference.
func pidfdOf(t *kernel.Task, fd int32) (*fs.FileDescription, *kernel.PIDFD, error) {
	f := t.FDTable().GetFile(fd)
	if f == nil {
		return nil, nil, unix.EBADF
	}
	p := kernel.PIDFDOf(f)
	if p == nil {
		f.DecRef()
		return nil, nil, unix.EBADF
	}
	return f, p, nil
}

// waitPIDFD resolves waitid's P_PIDFD id: the process to wait for, and
// whether the pidfd is PIDFD_NONBLOCK.
func waitPIDFD(t *kernel.Task, id int32) (*kernel.ThreadGroup, bool, error) {
	if id < 0 {
		return nil, false, unix.EINVAL
	}
	f, p, err := pidfdOf(t, id)
	if err != nil {
		return nil, false, err
	}
	defer f.DecRef()
	tg := p.ThreadGroup()
	if tg == nil || !p.RefersToProcess() {
		// Only a process can be waited for, not one of its threads.
		return nil, false, unix.ECHILD
	}
	return tg, f.Flags()&unix.O_NONBLOCK != 0, nil
}

// PidfdOpen implements pidfd_open(2).
func PidfdOpen(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := t.OpenPIDFD(a[0].Int(), a[1].Uint())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: true}, vfsNoFile(t))
	return uintptr(fd), err
}

// PidfdSendSignal implements pidfd_send_signal(2).
func PidfdSendSignal(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pidfd, sig, infoAddr, flags := a[0].Int(), kernel.Signal(a[1].Int()), a[2].Pointer(), a[3].Uint()
	if flags&^uint32(kernel.PIDFD_SIGNAL_THREAD|kernel.PIDFD_SIGNAL_THREAD_GROUP|kernel.PIDFD_SIGNAL_PROCESS_GROUP) != 0 ||
		flags&(flags-1) != 0 {
		return 0, unix.EINVAL
	}
	f, p, err := pidfdOf(t, pidfd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	var info *kernel.SignalInfo
	if infoAddr != 0 {
		if info, err = copyInSiginfo(t, infoAddr); err != nil {
			return 0, err
		}
	}
	return 0, t.PIDFDSendSignal(p, sig, info, flags)
}

// PidfdGetfd implements pidfd_getfd(2).
func PidfdGetfd(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pidfd, targetfd, flags := a[0].Int(), a[1].Int(), a[2].Uint()
	if flags != 0 {
		return 0, unix.EINVAL
	}
	f, p, err := pidfdOf(t, pidfd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	got, err := t.PIDFDGetFD(p, targetfd)
	if err != nil {
		return 0, err
	}
	defer got.DecRef()
	fd, err := t.FDTable().NewFD(0, got, fs.FDFlags{CloseOnExec: true}, vfsNoFile(t))
	return uintptr(fd), err
}
