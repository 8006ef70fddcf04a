package timerfd

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func newTimerfd(t *testing.T, clock int32, flags uint32) (*fs.FileDescription, *File) {
	t.Helper()
	k := kernel.NewTestKernel(nil)
	fd, err := New(clock, flags, func(fire func(uint64)) Timer { return k.NewTimer(clock, fire) })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(fd.DecRef)
	return fd, FromFile(fd)
}

func TestNewErrors(t *testing.T) {
	k := kernel.NewTestKernel(nil)
	for _, tc := range []struct {
		name  string
		clock int32
		flags uint32
		want  error
	}{
		{"cpu clock", unix.CLOCK_PROCESS_CPUTIME_ID, 0, unix.EINVAL},
		{"raw clock", unix.CLOCK_MONOTONIC_RAW, 0, unix.EINVAL},
		{"bad flags", unix.CLOCK_MONOTONIC, unix.O_RDWR, unix.EINVAL},
		{"monotonic", unix.CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC, nil},
		{"alarm (the capability is the caller's check)", unix.CLOCK_BOOTTIME_ALARM, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := New(tc.clock, tc.flags, func(fire func(uint64)) Timer { return k.NewTimer(tc.clock, fire) })
			if err != tc.want {
				t.Fatalf("New = %v, want %v", err, tc.want)
			}
			if fd != nil {
				if tc.flags&TFD_NONBLOCK != 0 && !fd.NonBlocking() {
					t.Errorf("TFD_NONBLOCK not applied")
				}
				fd.DecRef()
			}
		})
	}
}

func readTicks(t *testing.T, fd *fs.FileDescription) (uint64, error) {
	t.Helper()
	var b [16]byte
	n, err := fd.Read(fstest.NewContext(), b[:])
	if err != nil {
		return 0, err
	}
	if n != 8 {
		t.Fatalf("read %d bytes, want 8", n)
	}
	return binary.NativeEndian.Uint64(b[:]), nil
}

func TestExpirations(t *testing.T) {
	fd, f := newTimerfd(t, unix.CLOCK_MONOTONIC, TFD_NONBLOCK)
	if _, err := readTicks(t, fd); err != syserror.ErrWouldBlock {
		t.Fatalf("read of a disarmed timer = %v, want would block", err)
	}
	if _, err := fd.Read(fstest.NewContext(), make([]byte, 7)); err != unix.EINVAL {
		t.Fatalf("short read = %v, want EINVAL", err)
	}
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	fd.EventRegister(e)
	defer fd.EventUnregister(e)
	if _, _, err := f.SetTime(time.Millisecond, time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no readiness event")
	}
	time.Sleep(20 * time.Millisecond)
	// Linux's timerfd_poll reports POLLIN alone, without POLLRDNORM.
	all := waiter.EventIn | waiter.EventOut | waiter.EventRdNorm | waiter.EventWrNorm
	if fd.Readiness(all) != waiter.EventIn {
		t.Fatalf("readiness = %v, want EventIn", fd.Readiness(all))
	}
	n, err := readTicks(t, fd)
	if err != nil || n < 5 {
		t.Fatalf("read = %d, %v; want at least 5 expirations", n, err)
	}
	v, i := f.GetTime()
	if i != time.Millisecond || v <= 0 || v > time.Millisecond {
		t.Fatalf("GetTime = %v, %v", v, i)
	}
	// Disarm: the unread count goes too.
	if _, oi, _ := f.SetTime(0, 0, 0); oi != time.Millisecond {
		t.Fatalf("old interval %v", oi)
	}
	if f.Ticks() != 0 {
		t.Fatalf("ticks %d after SetTime", f.Ticks())
	}
	time.Sleep(5 * time.Millisecond)
	if f.Ticks() != 0 {
		t.Fatalf("disarmed timer fired: %d", f.Ticks())
	}
}

func TestAbsolute(t *testing.T) {
	fd, f := newTimerfd(t, unix.CLOCK_REALTIME, TFD_NONBLOCK)
	past := time.Duration(time.Now().Add(-time.Hour).UnixNano())
	if _, _, err := f.SetTime(past, 0, TFD_TIMER_ABSTIME); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.Ticks() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n, err := readTicks(t, fd); n != 1 || err != nil {
		t.Fatalf("read = %d, %v; want one expiration", n, err)
	}
	future := time.Duration(time.Now().Add(time.Hour).UnixNano())
	f.SetTime(future, 0, TFD_TIMER_ABSTIME|TFD_TIMER_CANCEL_ON_SET)
	if v, _ := f.GetTime(); v < 59*time.Minute || v > time.Hour {
		t.Fatalf("left %v, want about an hour", v)
	}
	if _, _, err := f.SetTime(time.Second, 0, 4); err != unix.EINVAL {
		t.Fatalf("bad flags = %v", err)
	}
}

func TestSetTicksIoctl(t *testing.T) {
	fd, _ := newTimerfd(t, unix.CLOCK_MONOTONIC, TFD_NONBLOCK)
	ctx := fstest.NewContext()
	binary.LittleEndian.PutUint64(ctx.Mem, 3)
	if _, err := fd.Ioctl(ctx, TFD_IOC_SET_TICKS, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	if n, err := readTicks(t, fd); n != 3 || err != nil {
		t.Fatalf("read = %d, %v; want 3", n, err)
	}
	binary.LittleEndian.PutUint64(ctx.Mem, 0)
	if _, err := fd.Ioctl(ctx, TFD_IOC_SET_TICKS, fstest.MemBase); err != unix.EINVAL {
		t.Fatalf("zero ticks = %v, want EINVAL", err)
	}
	if _, err := fd.Ioctl(ctx, TFD_IOC_SET_TICKS, 8); err != unix.EFAULT {
		t.Fatalf("bad address = %v, want EFAULT", err)
	}
	if _, err := fd.Ioctl(ctx, unix.TCGETS, fstest.MemBase); err != unix.ENOTTY {
		t.Fatalf("TCGETS = %v, want ENOTTY", err)
	}
}

func TestReleaseStopsTimer(t *testing.T) {
	k := kernel.NewTestKernel(nil)
	fired := make(chan uint64, 100)
	fd, err := New(unix.CLOCK_MONOTONIC, 0, func(fire func(uint64)) Timer {
		return k.NewTimer(unix.CLOCK_MONOTONIC, func(n uint64) { fire(n); fired <- n })
	})
	if err != nil {
		t.Fatal(err)
	}
	FromFile(fd).SetTime(time.Millisecond, time.Millisecond, 0)
	<-fired
	fd.DecRef()
	time.Sleep(5 * time.Millisecond)
	for len(fired) > 0 {
		<-fired
	}
	time.Sleep(10 * time.Millisecond)
	if len(fired) != 0 {
		t.Fatalf("timer fired %d times after release", len(fired))
	}
}
