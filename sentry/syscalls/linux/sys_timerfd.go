package linux

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/timerfd"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// TimerfdCreate implements timerfd_create(2). The alarm clocks need
// CAP_WAKE_ALARM of the host, which the sandbox never has (EPERM).
func TimerfdCreate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	clockID, flags := a[0].Int(), a[1].Uint()
	k := t.Kernel()
	f, err := timerfd.New(clockID, flags, func(fire func(uint64)) timerfd.Timer {
		return k.NewTimer(clockID, fire)
	})
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if _, alarm := timerfd.ValidClock(clockID); alarm {
		return 0, unix.EPERM
	}
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&timerfd.TFD_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// timerfdFile returns the timerfd open at fd: EBADF if none is open, EINVAL
// if it is not a timerfd. The caller releases the reference.
func timerfdFile(t *kernel.Task, fd int32) (*fs.FileDescription, *timerfd.File, error) {
	f, err := vfsFile(t, fd)
	if err != nil {
		return nil, nil, err
	}
	tf := timerfd.FromFile(f)
	if tf == nil {
		f.DecRef()
		return nil, nil, unix.EINVAL
	}
	return f, tf, nil
}

// TimerfdSettime implements timerfd_settime(2).
func TimerfdSettime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, flags, newAddr, oldAddr := a[0].Int(), a[1].Uint(), a[2].Pointer(), a[3].Pointer()
	iv, v, err := copyInITimerspec(t, newAddr)
	if err != nil {
		return 0, unix.EFAULT
	}
	if flags&^uint32(timerfd.TFD_TIMER_ABSTIME|timerfd.TFD_TIMER_CANCEL_ON_SET) != 0 || !iv.valid() || !v.valid() {
		return 0, unix.EINVAL
	}
	f, tf, err := timerfdFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	ov, oi, err := tf.SetTime(time.Duration(v.nanos()), time.Duration(iv.nanos()), flags)
	if err != nil {
		return 0, err
	}
	if oldAddr != 0 {
		if err := copyOutITimerspec(t, oldAddr, kernel.ITimer{Value: ov, Interval: oi}); err != nil {
			return 0, unix.EFAULT
		}
	}
	return 0, nil
}

// TimerfdGettime implements timerfd_gettime(2).
func TimerfdGettime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, tf, err := timerfdFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	v, i := tf.GetTime()
	if err := copyOutITimerspec(t, a[1].Pointer(), kernel.ITimer{Value: v, Interval: i}); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}
