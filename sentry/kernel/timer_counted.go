package kernel

import (
	"time"

	"golang.org/x/sys/unix"
)

// Timer is a timer whose expirations are counted by a callback instead of
// signalled: the clock behind a timerfd. It runs on the same wall-clock
// machinery as interval and POSIX timers (timers.go); its deadline is
// kept on the realtime clock, and absolute times on other clocks are
// converted when the timer is set.
type Timer struct {
	k  *Kernel
	g  groupTimers // only mu is used: the timer belongs to no process
	tm timer
}

// NewTimer returns a disarmed timer on clock clockID (CLOCK_REALTIME,
// CLOCK_MONOTONIC, CLOCK_BOOTTIME or their alarm variants) that calls fire
// with the number of expirations each time it fires. fire runs with the
// timer's lock held: it must not call the Timer's methods.
func (k *Kernel) NewTimer(clockID int32, fire func(n uint64)) *Timer {
	x := &Timer{k: k}
	x.tm = timer{g: &x.g, clockID: clockID, fire: fire}
	return x
}

// clockNow reads the timer's clock, for absolute times. The alarm clocks
// read as their base clocks.
func (x *Timer) clockNow() time.Duration {
	id := x.tm.clockID
	switch id {
	case unix.CLOCK_REALTIME_ALARM:
		id = unix.CLOCK_REALTIME
	case unix.CLOCK_BOOTTIME_ALARM:
		id = unix.CLOCK_BOOTTIME
	}
	if x.k != nil && x.k.Clock != nil {
		if ns, err := x.k.Clock.Now(id); err == nil {
			return time.Duration(ns)
		}
	}
	if id == unix.CLOCK_REALTIME {
		return time.Duration(time.Now().UnixNano())
	}
	var ts unix.Timespec
	unix.ClockGettime(id, &ts)
	return time.Duration(ts.Nano())
}

// Set arms the timer to expire after value (at value on its clock with
// abs), then every interval if that is not zero; a zero value disarms
// it. It returns the time that was left and the interval before. reset,
// if not nil, runs first under the lock fire is called with, so nothing
// the old setting fires can slip in after it.
func (x *Timer) Set(value, interval time.Duration, abs bool, reset func()) (oldValue, oldInterval time.Duration) {
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	old := timerGet(&x.tm)
	if reset != nil {
		reset()
	}
	if value == 0 {
		x.tm.disarm()
		return old.Value, old.Interval
	}
	if abs {
		value -= x.clockNow()
		if value < 0 {
			value = 0
		}
	}
	x.tm.arm(x.tm.now()+value, interval)
	return old.Value, old.Interval
}

// Get returns the time left until the next expiration (0 if disarmed)
// and the interval.
func (x *Timer) Get() (value, interval time.Duration) {
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	it := timerGet(&x.tm)
	return it.Value, it.Interval
}

// Stop disarms the timer for good (the timerfd is closed).
func (x *Timer) Stop() {
	x.g.mu.Lock()
	x.tm.disarm()
	x.g.mu.Unlock()
}
