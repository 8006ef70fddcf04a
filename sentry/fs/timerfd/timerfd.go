// Package timerfd implements timerfd_create(2) files: a timer whose
// expirations are counted and read as an 8-byte number instead of being
// signalled. The timer itself is the kernel's (kernel.Timer), reached
// through the Timer interface.
//
// Locks: File.mu guards the expiration count; the timer's own lock is
// taken before it when the timer fires (Timer.fire runs under it), so
// File.mu is never held while calling the Timer. Waiters are notified
// after File.mu is released.
package timerfd

import (
	"encoding/binary"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Flags of timerfd_create and timerfd_settime (linux/timerfd.h).
const (
	TFD_CLOEXEC             = unix.TFD_CLOEXEC
	TFD_NONBLOCK            = unix.TFD_NONBLOCK
	TFD_TIMER_ABSTIME       = unix.TFD_TIMER_ABSTIME
	TFD_TIMER_CANCEL_ON_SET = 2
	// TFD_IOC_SET_TICKS is _IOW('T', 0, __u64).
	TFD_IOC_SET_TICKS = 0x40085400
)

// Timer is the clock machinery behind a timerfd (*kernel.Timer).
type Timer interface {
	// Set arms the timer (value 0 disarms it) and returns the old
	// setting. It calls reset, if not nil, under the lock the timer
	// fires under, before arming, so the caller can drop what the old
	// setting counted without racing its last expirations.
	Set(value, interval time.Duration, abs bool, reset func()) (oldValue, oldInterval time.Duration)
	// Get returns the time left and the interval.
	Get() (value, interval time.Duration)
	// Stop disarms the timer for good.
	Stop()
}

// File is a timerfd.
type File struct {
	fs.FileDefaults
	queue   waiter.Queue
	clockID int32
	timer   Timer

	mu sync.Mutex
	// ticks counts the expirations not yet read.
	ticks uint64
}

// ValidClock reports whether timerfd_create accepts clockID, and whether
// it is an alarm clock (which needs CAP_WAKE_ALARM).
func ValidClock(clockID int32) (ok, alarm bool) {
	switch clockID {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME:
		return true, false
	case unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM:
		return true, true
	}
	return false, false
}

// New returns a timerfd on clockID; newTimer builds its timer given the
// function to call with each batch of expirations. flags may hold
// TFD_NONBLOCK and TFD_CLOEXEC (the caller applies the last); others are
// EINVAL, as are clocks ValidClock refuses.
func New(clockID int32, flags uint32, newTimer func(fire func(n uint64)) Timer) (*fs.FileDescription, error) {
	if flags&^uint32(TFD_CLOEXEC|TFD_NONBLOCK) != 0 {
		return nil, unix.EINVAL
	}
	if ok, _ := ValidClock(clockID); !ok {
		return nil, unix.EINVAL
	}
	f := &File{clockID: clockID}
	f.timer = newTimer(f.expired)
	return fs.NewAnonFile("timerfd", f, unix.O_RDWR|flags&unix.O_NONBLOCK, fs.FDOptions{ImplOffset: true}), nil
}

// FromFile returns the timerfd of fd, or nil if fd is not one.
func FromFile(fd *fs.FileDescription) *File {
	f, _ := fd.Impl().(*File)
	return f
}

// ClockID returns the clock the timer runs on.
func (f *File) ClockID() int32 { return f.clockID }

// expired counts n expirations (called by the timer).
func (f *File) expired(n uint64) {
	f.mu.Lock()
	if f.ticks+n < f.ticks {
		f.ticks = ^uint64(0)
	} else {
		f.ticks += n
	}
	f.mu.Unlock()
	f.queue.Notify(waiter.EventIn)
}

// SetTime implements timerfd_settime: flags may hold TFD_TIMER_ABSTIME
// and TFD_TIMER_CANCEL_ON_SET (accepted; the sandbox's realtime clock is
// never set, so the timer is never cancelled). Unread expirations are
// dropped. It returns the old setting.
func (f *File) SetTime(value, interval time.Duration, flags uint32) (oldValue, oldInterval time.Duration, err error) {
	if flags&^uint32(TFD_TIMER_ABSTIME|TFD_TIMER_CANCEL_ON_SET) != 0 {
		return 0, 0, unix.EINVAL
	}
	oldValue, oldInterval = f.timer.Set(value, interval, flags&TFD_TIMER_ABSTIME != 0, func() {
		f.mu.Lock()
		f.ticks = 0
		f.mu.Unlock()
	})
	return oldValue, oldInterval, nil
}

// GetTime implements timerfd_gettime.
func (f *File) GetTime() (value, interval time.Duration) { return f.timer.Get() }

// Ticks returns the expirations not yet read (for tests and fdinfo).
func (f *File) Ticks() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ticks
}

// Read implements fs.FileImpl: the 8-byte count of expirations since the
// last read, which it resets. EINVAL for a buffer under 8 bytes.
func (f *File) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	if off >= 0 {
		return 0, unix.ESPIPE
	}
	if len(dst) < 8 {
		return 0, unix.EINVAL
	}
	f.mu.Lock()
	n := f.ticks
	f.ticks = 0
	f.mu.Unlock()
	if n == 0 {
		return 0, syserror.ErrWouldBlock
	}
	binary.NativeEndian.PutUint64(dst, n)
	return 8, nil
}

// Ioctl implements fs.FileImpl: TFD_IOC_SET_TICKS sets the count of
// unread expirations (not zero).
func (f *File) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if cmd != TFD_IOC_SET_TICKS {
		return 0, unix.ENOTTY
	}
	var b [8]byte
	if _, err := ctx.CopyInBytes(arg, b[:]); err != nil {
		return 0, unix.EFAULT
	}
	n := binary.LittleEndian.Uint64(b[:])
	if n == 0 {
		return 0, unix.EINVAL
	}
	f.mu.Lock()
	f.ticks = n
	f.mu.Unlock()
	f.queue.Notify(waiter.EventIn)
	return 0, nil
}

// Readiness implements waiter.Waitable: readable while expirations are
// unread.
func (f *File) Readiness(mask waiter.EventMask) waiter.EventMask {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticks > 0 {
		return mask & waiter.EventIn // POLLIN alone, as timerfd_poll
	}
	return 0
}

// EventRegister implements waiter.Waitable.
func (f *File) EventRegister(e *waiter.Entry) { f.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (f *File) EventUnregister(e *waiter.Entry) { f.queue.EventUnregister(e) }

// Release implements fs.FileImpl: the timer stops.
func (f *File) Release() { f.timer.Stop() }

// The file has no offset, but as on Linux (noop_llseek) lseek succeeds
// and reports 0, while pread and pwrite fail with ESPIPE: the description
// keeps the offset itself (ImplOffset), so plain reads and writes come
// with offset -1 and positioned ones with their offset.

// Seek implements fs.FileImpl: always 0.
func (f *File) Seek(fs.Context, *fs.FileDescription, int64, int64, int) (int64, error) {
	return 0, nil
}

// Write implements fs.FileImpl: EINVAL (ESPIPE for pwrite).
func (f *File) Write(_ fs.Context, _ *fs.FileDescription, _ []byte, off int64) (int, error) {
	if off >= 0 {
		return 0, unix.ESPIPE
	}
	return 0, unix.EINVAL
}
