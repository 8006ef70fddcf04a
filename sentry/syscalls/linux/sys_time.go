package linux

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// cpuClock reads a CPU-time clock: the calling process or thread's, or
// another's through the clock_getcpuclockid encoding.
func cpuClock(t *kernel.Task, id int32) (int64, error) {
	c, err := t.LookupCPUClock(id, false)
	if err != nil {
		return 0, err
	}
	return int64(c.Now()), nil
}

func clockNow(t *kernel.Task, id int32) (int64, error) {
	switch id {
	case unix.CLOCK_PROCESS_CPUTIME_ID, unix.CLOCK_THREAD_CPUTIME_ID:
		return cpuClock(t, id)
	}
	if id < 0 {
		return cpuClock(t, id)
	}
	ns, err := t.Kernel().Clock.Now(id)
	if err != nil {
		return 0, unix.EINVAL
	}
	return ns, nil
}

// ClockGettime implements clock_gettime(2).
func ClockGettime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	ns, err := clockNow(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	return 0, copyOutTimespec(t, a[1].Pointer(), timespecFromNanos(ns))
}

// ClockGetres implements clock_getres(2).
func ClockGetres(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id := a[0].Int()
	var res int64 = 1
	if _, err := clockNow(t, id); err != nil {
		return 0, err
	}
	if id >= 0 && id != unix.CLOCK_PROCESS_CPUTIME_ID && id != unix.CLOCK_THREAD_CPUTIME_ID {
		r, err := t.Kernel().Clock.Resolution(id)
		if err != nil {
			return 0, unix.EINVAL
		}
		res = r
	}
	if a[1].Pointer() == 0 {
		return 0, nil
	}
	return 0, copyOutTimespec(t, a[1].Pointer(), timespecFromNanos(res))
}

// ClockSettime implements clock_settime(2): the sandbox cannot set clocks.
// Only CLOCK_REALTIME and the CPU clocks have a setter (the rest are
// EINVAL); a valid time then fails for want of CAP_SYS_TIME, and CPU
// clocks can never be set, as on Linux.
func ClockSettime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id := a[0].Int()
	cpu := id < 0 || id == unix.CLOCK_PROCESS_CPUTIME_ID || id == unix.CLOCK_THREAD_CPUTIME_ID
	if !cpu && id != unix.CLOCK_REALTIME {
		return 0, unix.EINVAL
	}
	ts, err := copyInTimespec(t, a[1].Pointer())
	if err != nil {
		return 0, err
	}
	if cpu {
		if _, err := cpuClock(t, id); err != nil {
			return 0, err
		}
		return 0, unix.EPERM
	}
	if !ts.valid() {
		return 0, unix.EINVAL
	}
	return 0, unix.EPERM
}

// Gettimeofday implements gettimeofday(2).
func Gettimeofday(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if tv := a[0].Pointer(); tv != 0 {
		ns, _ := t.Kernel().Clock.Now(unix.CLOCK_REALTIME)
		if err := copyOutTimeval(t, tv, timevalFromNanos(ns)); err != nil {
			return 0, err
		}
	}
	if tz := a[1].Pointer(); tz != 0 {
		var b [8]byte
		if _, err := t.CopyOutBytes(tz, b[:]); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// Settimeofday implements settimeofday(2): arguments are checked as Linux
// does (EFAULT, then EINVAL for a bad time) before EPERM, as
// the sandbox never has CAP_SYS_TIME.
func Settimeofday(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if tv := a[0].Pointer(); tv != 0 {
		var b [16]byte
		if _, err := t.CopyInBytes(tv, b[:]); err != nil {
			return 0, err
		}
		sec, usec := int64(binary.LittleEndian.Uint64(b[0:])), int64(binary.LittleEndian.Uint64(b[8:]))
		if sec < 0 || usec < 0 || usec >= 1e6 {
			return 0, unix.EINVAL
		}
	}
	if tz := a[1].Pointer(); tz != 0 {
		// The time zone's range is checked only after the privilege.
		var b [8]byte
		if _, err := t.CopyInBytes(tz, b[:]); err != nil {
			return 0, err
		}
	}
	return 0, unix.EPERM
}

// Time implements time(2).
func Time(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	ns, _ := t.Kernel().Clock.Now(unix.CLOCK_REALTIME)
	sec := ns / 1e9
	if p := a[0].Pointer(); p != 0 {
		if err := copyOutUint64(t, p, uint64(sec)); err != nil {
			return 0, err
		}
	}
	return uintptr(sec), nil
}

// Nanosleep implements nanosleep(2).
func Nanosleep(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	ts, err := copyInTimespec(t, a[0].Pointer())
	if err != nil {
		return 0, err
	}
	if !ts.valid() {
		return 0, unix.EINVAL
	}
	return sleepFor(t, time.Now().Add(time.Duration(ts.nanos())), a[1].Pointer())
}

// sleepFor sleeps until the wall-clock deadline; interrupted, it reports
// the time left and restarts through restart_syscall.
func sleepFor(t *kernel.Task, deadline time.Time, remAddr uintptr) (uintptr, error) {
	err := t.BlockOn(nil, deadline, true)
	if err == unix.ETIMEDOUT {
		return 0, nil
	}
	if err != syserror.ErrInterrupted {
		return 0, err
	}
	left := time.Until(deadline)
	if left < 0 {
		left = 0
	}
	if remAddr != 0 {
		if err := copyOutTimespec(t, remAddr, timespecFromNanos(int64(left))); err != nil {
			return 0, err
		}
	}
	t.SetRestartBlock(func(t *kernel.Task) (uintptr, error) {
		return sleepFor(t, deadline, remAddr)
	})
	return 0, syserror.ERESTART_RESTARTBLOCK
}

// ClockNanosleep implements clock_nanosleep(2).
func ClockNanosleep(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, flags, reqAddr, remAddr := a[0].Int(), a[1].Int(), a[2].Pointer(), a[3].Pointer()
	switch id {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME, unix.CLOCK_TAI,
		unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM, unix.CLOCK_PROCESS_CPUTIME_ID:
	case unix.CLOCK_THREAD_CPUTIME_ID:
		return 0, unix.EOPNOTSUPP // Linux: the clock has no nsleep
	default:
		if id >= 0 {
			return 0, unix.EINVAL
		}
		// A thread cannot sleep on its own CPU clock (pid 0 or its tid).
		if pid := ^(id >> 3); id&4 != 0 && (pid == 0 || pid == int32(t.Tid())) {
			return 0, unix.EINVAL
		}
		if _, err := cpuClock(t, id); err != nil {
			return 0, err
		}
	}
	ts, err := copyInTimespec(t, reqAddr)
	if err != nil {
		return 0, err
	}
	if !ts.valid() {
		return 0, unix.EINVAL
	}
	if id == unix.CLOCK_PROCESS_CPUTIME_ID || id < 0 {
		return cpuSleep(t, id, ts.nanos(), flags&unix.TIMER_ABSTIME != 0)
	}
	if flags&unix.TIMER_ABSTIME != 0 {
		deadline := absDeadline(t, id, ts.nanos())
		err := t.BlockOn(nil, deadline, true)
		if err == unix.ETIMEDOUT {
			return 0, nil
		}
		if err == syserror.ErrInterrupted {
			return 0, syserror.ERESTARTNOHAND
		}
		return 0, err
	}
	return sleepFor(t, time.Now().Add(time.Duration(ts.nanos())), remAddr)
}

// cpuSleep waits until a CPU clock reaches a time, polling it.
func cpuSleep(t *kernel.Task, id int32, ns int64, abs bool) (uintptr, error) {
	start, err := cpuClock(t, id)
	if err != nil {
		return 0, err
	}
	target := ns
	if !abs {
		target = start + ns
	}
	for {
		now, err := cpuClock(t, id)
		if err != nil || now >= target {
			return 0, err
		}
		if err := t.Sleep(5 * time.Millisecond); err != nil {
			return 0, syserror.ERESTARTNOHAND
		}
	}
}

// Alarm implements alarm(2).
func Alarm(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	old, err := t.ThreadGroup().SetITimer(0, kernel.ITimer{Value: time.Duration(a[0].Uint()) * time.Second})
	if err != nil {
		return 0, err
	}
	secs := (old.Value + time.Second/2) / time.Second
	if old.Value > 0 && secs == 0 {
		secs = 1
	}
	return uintptr(secs), nil
}

func copyInITimerval(t *kernel.Task, addr uintptr) (kernel.ITimer, error) {
	var b [32]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return kernel.ITimer{}, err
	}
	le := binary.LittleEndian
	iv := timeval{int64(le.Uint64(b[0:])), int64(le.Uint64(b[8:]))}
	v := timeval{int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))}
	if iv.Sec < 0 || iv.Usec < 0 || iv.Usec >= 1e6 || v.Sec < 0 || v.Usec < 0 || v.Usec >= 1e6 {
		return kernel.ITimer{}, unix.EINVAL
	}
	return kernel.ITimer{
		Interval: time.Duration(iv.Sec)*time.Second + time.Duration(iv.Usec)*time.Microsecond,
		Value:    time.Duration(v.Sec)*time.Second + time.Duration(v.Usec)*time.Microsecond,
	}, nil
}

func copyOutITimerval(t *kernel.Task, addr uintptr, it kernel.ITimer) error {
	var b [32]byte
	le := binary.LittleEndian
	iv, v := timevalFromNanos(int64(it.Interval)), timevalFromNanos(int64(it.Value))
	if it.Value > 0 && v.Sec == 0 && v.Usec == 0 {
		v.Usec = 1
	}
	le.PutUint64(b[0:], uint64(iv.Sec))
	le.PutUint64(b[8:], uint64(iv.Usec))
	le.PutUint64(b[16:], uint64(v.Sec))
	le.PutUint64(b[24:], uint64(v.Usec))
	_, err := t.CopyOutBytes(addr, b[:])
	return err
}

// Setitimer implements setitimer(2).
func Setitimer(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	which := int(a[0].Int())
	var v kernel.ITimer
	if p := a[1].Pointer(); p != 0 {
		var err error
		if v, err = copyInITimerval(t, p); err != nil {
			return 0, err
		}
	}
	old, err := t.ThreadGroup().SetITimer(which, v)
	if err != nil {
		return 0, err
	}
	if p := a[2].Pointer(); p != 0 {
		return 0, copyOutITimerval(t, p, old)
	}
	return 0, nil
}

// Getitimer implements getitimer(2).
func Getitimer(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	v, err := t.ThreadGroup().GetITimer(int(a[0].Int()))
	if err != nil {
		return 0, err
	}
	return 0, copyOutITimerval(t, a[1].Pointer(), v)
}

// TimerCreate implements timer_create(2).
func TimerCreate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	clock, sevAddr, idAddr := a[0].Int(), a[1].Pointer(), a[2].Pointer()
	s := kernel.TimerSpec{ClockID: clock, Notify: 0, Signo: kernel.SIGALRM}
	if sevAddr != 0 {
		var b [64]byte
		if _, err := t.CopyInBytes(sevAddr, b[:]); err != nil {
			return 0, err
		}
		le := binary.LittleEndian
		s.Value, s.HasValue = le.Uint64(b[0:]), true
		s.Signo = kernel.Signal(int32(le.Uint32(b[8:])))
		s.Notify = int(int32(le.Uint32(b[12:])))
		if s.Notify == 4 { // SIGEV_THREAD_ID
			tid := kernel.ThreadID(int32(le.Uint32(b[16:])))
			o := t.LookupTask(tid)
			if o == nil || o.ThreadGroup() != t.ThreadGroup() {
				return 0, unix.EINVAL
			}
			s.Target = o
		}
	}
	id, err := t.CreateTimer(s)
	if err != nil {
		return 0, err
	}
	if err := copyOutUint32(t, idAddr, uint32(id)); err != nil {
		t.DeleteTimer(id)
		return 0, err
	}
	return 0, nil
}

func copyInITimerspec(t *kernel.Task, addr uintptr) (interval, value timespec, err error) {
	if interval, err = copyInTimespec(t, addr); err != nil {
		return
	}
	value, err = copyInTimespec(t, addr+16)
	return
}

func copyOutITimerspec(t *kernel.Task, addr uintptr, it kernel.ITimer) error {
	if err := copyOutTimespec(t, addr, timespecFromNanos(int64(it.Interval))); err != nil {
		return err
	}
	return copyOutTimespec(t, addr+16, timespecFromNanos(int64(it.Value)))
}

// TimerSettime implements timer_settime(2).
func TimerSettime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, flags, newAddr, oldAddr := a[0].Int(), a[1].Int(), a[2].Pointer(), a[3].Pointer()
	if newAddr == 0 {
		return 0, unix.EINVAL // Linux checks for NULL before copying
	}
	iv, v, err := copyInITimerspec(t, newAddr)
	if err != nil {
		return 0, err
	}
	if !iv.valid() || !v.valid() {
		return 0, unix.EINVAL
	}
	abs := flags&unix.TIMER_ABSTIME != 0
	now := func(clock int32) time.Duration {
		ns, _ := clockNow(t, clock)
		return time.Duration(ns)
	}
	old, err := t.SetTimer(id, time.Duration(v.nanos()), time.Duration(iv.nanos()), abs, now)
	if err != nil {
		return 0, err
	}
	if oldAddr != 0 {
		return 0, copyOutITimerspec(t, oldAddr, old)
	}
	return 0, nil
}

// TimerGettime implements timer_gettime(2).
func TimerGettime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	v, err := t.GetTimer(a[0].Int())
	if err != nil {
		return 0, err
	}
	return 0, copyOutITimerspec(t, a[1].Pointer(), v)
}

// TimerGetoverrun implements timer_getoverrun(2).
func TimerGetoverrun(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	n, err := t.TimerOverrun(a[0].Int())
	return uintptr(n), err
}

// TimerDelete implements timer_delete(2).
func TimerDelete(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.DeleteTimer(a[0].Int())
}

// ticks converts a duration to clock ticks (USER_HZ 100).
func ticks(d time.Duration) uint64 { return uint64(d / (10 * time.Millisecond)) }

// Times implements times(2).
func Times(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if p := a[0].Pointer(); p != 0 {
		u, s := t.ThreadGroup().CPUTimes()
		cu, cs := t.ThreadGroup().ChildCPUTimes()
		var b [32]byte
		le := binary.LittleEndian
		le.PutUint64(b[0:], ticks(u))
		le.PutUint64(b[8:], ticks(s))
		le.PutUint64(b[16:], ticks(cu))
		le.PutUint64(b[24:], ticks(cs))
		if _, err := t.CopyOutBytes(p, b[:]); err != nil {
			return 0, err
		}
	}
	ns, _ := t.Kernel().Clock.Now(unix.CLOCK_BOOTTIME)
	return uintptr(ticks(time.Duration(ns))), nil
}

// Getrusage implements getrusage(2).
func Getrusage(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	var u, s time.Duration
	var rss uint64
	var ru kernel.Rusage
	switch a[0].Int() {
	case unix.RUSAGE_SELF:
		u, s = t.ThreadGroup().CPUTimes()
		rss = t.ThreadGroup().MaxRSS()
		ru = t.ThreadGroup().Rusage()
	case unix.RUSAGE_CHILDREN:
		u, s = t.ThreadGroup().ChildCPUTimes()
		rss = t.ThreadGroup().ChildMaxRSS()
		ru = t.ThreadGroup().ChildRusage()
	case unix.RUSAGE_THREAD:
		u, s = t.Utime(), t.Stime()
		rss = t.ThreadGroup().MaxRSS()
		ru = t.Rusage()
	default:
		return 0, unix.EINVAL
	}
	return 0, copyOutRusage(t, a[1].Pointer(), u, s, rss, ru)
}

// timexSize is sizeof(struct timex) on amd64.
const timexSize = 208

// adjtimexMode bits (linux/timex.h).
const (
	adjOffset         = 0x0001
	adjOffsetReadOnly = 0x2000
	adjAdjtime        = 0x8000
)

// adjtimex answers struct timex at addr for the clock the Sentry keeps
// (the host's, which it may not change): read-only queries get the
// clock's state, an unsynchronised clock as Linux reports one that no NTP
// daemon steers (TIME_ERROR); changes are EPERM, since the sandbox never
// holds CAP_SYS_TIME over the host clock.
func adjtimex(t *kernel.Task, addr uintptr) (uintptr, error) {
	var b [timexSize]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return 0, unix.EFAULT
	}
	le := binary.LittleEndian
	modes := le.Uint32(b[0:])
	if modes&adjAdjtime != 0 {
		// adjtime(3)'s single-shot offset, which needs ADJ_OFFSET
		// with it; only reading it is free.
		if modes&adjOffset == 0 {
			return 0, unix.EINVAL
		}
		if modes&adjOffsetReadOnly == 0 {
			return 0, unix.EPERM
		}
	} else if modes != 0 {
		return 0, unix.EPERM
	}
	const (
		staUnsync     = 0x0040
		timeError     = 5
		ntpPhaseLimit = 16000000      // maxerror, esterror (us)
		maxFreqScaled = 500 << 16     // tolerance: 500 ppm
		tickUsec      = 1000000 / 100 // USER_HZ
		shiftPLL      = 2             // time constant
		precisionUsec = 1
	)
	ns, _ := t.Kernel().Clock.Now(unix.CLOCK_REALTIME)
	le.PutUint64(b[8:], 0)                   // offset
	le.PutUint64(b[16:], 0)                  // freq
	le.PutUint64(b[24:], ntpPhaseLimit)      // maxerror
	le.PutUint64(b[32:], ntpPhaseLimit)      // esterror
	le.PutUint32(b[40:], staUnsync)          // status
	le.PutUint64(b[48:], shiftPLL)           // constant
	le.PutUint64(b[56:], precisionUsec)      // precision
	le.PutUint64(b[64:], maxFreqScaled)      // tolerance
	le.PutUint64(b[72:], uint64(ns/1e9))     // time.tv_sec
	le.PutUint64(b[80:], uint64(ns%1e9/1e3)) // time.tv_usec
	le.PutUint64(b[88:], tickUsec)           // tick
	clear(b[96:160])                         // PPS fields: no PPS signal
	le.PutUint32(b[160:], 0)                 // tai
	if _, err := t.CopyOutBytes(addr, b[:]); err != nil {
		return 0, unix.EFAULT
	}
	return timeError, nil
}

// Adjtimex implements adjtimex(2).
func Adjtimex(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return adjtimex(t, a[0].Pointer())
}

// ClockAdjtime implements clock_adjtime(2): CLOCK_REALTIME as adjtimex,
// the other clocks cannot be adjusted (EOPNOTSUPP).
func ClockAdjtime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id := a[0].Int()
	var b [timexSize]byte
	if _, err := t.CopyInBytes(a[1].Pointer(), b[:]); err != nil {
		return 0, unix.EFAULT
	}
	switch {
	case id == unix.CLOCK_REALTIME:
		return adjtimex(t, a[1].Pointer())
	case id < 0 || (id <= unix.CLOCK_TAI && id != 10): // 10: no such clock
		return 0, unix.EOPNOTSUPP
	default:
		return 0, unix.EINVAL
	}
}
