package kernel

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Interval timers (setitimer) and POSIX timers (timer_create) of a thread
// group. Wall-clock timers use Go timers; CPU-time timers are checked by a
// ticker every cpuTimerTick against the group's accounted CPU time.

const cpuTimerTick = 5 * time.Millisecond

// Timer clocks.
const (
	clockReal = iota
	clockVirtual
	clockProf
)

// timer is one armed timer.
type timer struct {
	g *groupTimers
	// clock is clockReal or a CPU clock (clockVirtual, clockProf, or
	// process/thread CPU time for POSIX timers).
	clock    int
	thread   *Task         // for CLOCK_THREAD_CPUTIME_ID and SIGEV_THREAD_ID
	clockID  int32         // the POSIX clock id
	deadline time.Duration // on the timer's clock: wall since epoch or CPU time
	interval time.Duration
	wall     *time.Timer
	armed    bool

	// What firing does.
	signo   Signal
	notify  int // SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID
	target  *Task
	id      int32
	value   uint64
	posix   bool
	overrun int32
	// queued is the last signal sent, while it is still pending.
	queued      *SignalInfo
	lastOverrun int32
}

type groupTimers struct {
	tg *ThreadGroup

	mu       sync.Mutex
	itimers  [3]*timer
	posix    map[int32]*timer
	nextID   int32
	cpuTimer *time.Ticker
	stopCPU  chan struct{}
}

func newGroupTimers(tg *ThreadGroup) *groupTimers {
	return &groupTimers{tg: tg, posix: make(map[int32]*timer)}
}

// now returns the current value of the timer's clock.
func (tm *timer) now() time.Duration {
	switch tm.clock {
	case clockReal:
		return time.Duration(time.Now().UnixNano())
	case clockVirtual:
		u, _ := tm.g.tg.liveCPUTimes()
		return u
	case clockProf:
		u, s := tm.g.tg.liveCPUTimes()
		return u + s
	case clockThreadCPU:
		return tm.thread.Utime() + tm.thread.Stime() + tm.thread.runningFor()
	}
	return 0
}

const clockThreadCPU = 3

// arm sets the timer to fire at deadline on its clock.
// Preconditions: g.mu is held.
func (tm *timer) arm(deadline, interval time.Duration) {
	tm.disarm()
	if deadline == 0 {
		return
	}
	tm.deadline, tm.interval, tm.armed = deadline, interval, true
	if tm.clock == clockReal {
		d := deadline - tm.now()
		if d < 0 {
			d = 0
		}
		tm.wall = time.AfterFunc(d, tm.fireWall)
		return
	}
	tm.g.startCPUTicker()
}

// disarm stops the timer. Preconditions: g.mu is held.
func (tm *timer) disarm() {
	tm.armed = false
	if tm.wall != nil {
		tm.wall.Stop()
		tm.wall = nil
	}
}

func (tm *timer) fireWall() {
	g := tm.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if !tm.armed {
		return
	}
	tm.expire()
	if tm.armed {
		d := tm.deadline - tm.now()
		if d < 0 {
			d = 0
		}
		tm.wall = time.AfterFunc(d, tm.fireWall)
	}
}

// expire fires the timer and computes the next deadline.
// Preconditions: g.mu is held.
func (tm *timer) expire() {
	now := tm.now()
	overrun := int32(0)
	if tm.interval > 0 {
		next := tm.deadline + tm.interval
		if next <= now {
			n := (now - tm.deadline) / tm.interval
			overrun = int32(n)
			next = tm.deadline + (n+1)*tm.interval
		}
		tm.deadline = next
	} else {
		tm.armed = false
	}
	tm.send(overrun)
}

// send delivers the timer's signal. Preconditions: g.mu is held.
func (tm *timer) send(overrun int32) {
	if tm.notify == sigevNone {
		return
	}
	k := tm.g.tg.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if tm.queued != nil && tm.stillQueuedLocked() {
		// The previous expiration is still pending: count an overrun.
		tm.overrun += 1 + overrun
		return
	}
	tm.lastOverrun = tm.overrun + overrun
	tm.overrun = 0
	var info *SignalInfo
	if tm.posix {
		info = NewSignalInfo(tm.signo, SI_TIMER)
		info.SetTimer(tm.id, tm.lastOverrun, tm.value)
	} else {
		info = NewSignalInfo(tm.signo, SI_KERNEL)
	}
	tm.queued = info
	if tm.notify == sigevThreadID && tm.target != nil {
		k.sendSignalToTaskLocked(tm.target, info)
	} else {
		k.sendSignalToGroupLocked(tm.g.tg, tm.signo, info)
	}
}

// stillQueuedLocked reports whether tm's last signal is still pending.
func (tm *timer) stillQueuedLocked() bool {
	s := tm.queued.Signo()
	check := func(p *pendingSignals) bool {
		for _, i := range p.queues[s] {
			if i == tm.queued {
				return true
			}
		}
		return false
	}
	if tm.target != nil && check(&tm.target.pending) {
		return true
	}
	return check(&tm.g.tg.pending)
}

// startCPUTicker polls CPU-time timers. Preconditions: g.mu is held.
func (g *groupTimers) startCPUTicker() {
	if g.cpuTimer != nil {
		return
	}
	g.cpuTimer = time.NewTicker(cpuTimerTick)
	g.stopCPU = make(chan struct{})
	tick, stop := g.cpuTimer, g.stopCPU
	go func() {
		for {
			select {
			case <-tick.C:
				g.checkCPUTimers()
			case <-stop:
				return
			}
		}
	}()
}

func (g *groupTimers) checkCPUTimers() {
	g.mu.Lock()
	defer g.mu.Unlock()
	check := func(tm *timer) bool {
		if tm == nil || !tm.armed || tm.clock == clockReal {
			return false
		}
		if tm.now() >= tm.deadline {
			tm.expire()
		}
		return tm.armed
	}
	any := false
	for _, tm := range g.itimers {
		any = check(tm) || any
	}
	for _, tm := range g.posix {
		any = check(tm) || any
	}
	if !any && g.cpuTimer != nil {
		g.cpuTimer.Stop()
		close(g.stopCPU)
		g.cpuTimer = nil
	}
}

// stopAll disarms every timer (process exit).
func (g *groupTimers) stopAll() {
	go func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, tm := range g.itimers {
			if tm != nil {
				tm.disarm()
			}
		}
		for _, tm := range g.posix {
			tm.disarm()
		}
		if g.cpuTimer != nil {
			g.cpuTimer.Stop()
			close(g.stopCPU)
			g.cpuTimer = nil
		}
	}()
}

// liveCPUTimes includes the running time of threads in application code.
func (tg *ThreadGroup) liveCPUTimes() (u, s time.Duration) {
	u, s = tg.CPUTimes()
	for _, t := range tg.Tasks() {
		u += t.runningFor()
	}
	return u, s
}

// ITimer is an itimerval.
type ITimer struct {
	Value, Interval time.Duration
}

// SetITimer implements setitimer(2) for which (ITIMER_REAL, _VIRTUAL,
// _PROF) and returns the old value.
func (tg *ThreadGroup) SetITimer(which int, v ITimer) (ITimer, error) {
	if which < 0 || which > 2 {
		return ITimer{}, errEINVAL
	}
	g := tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.getLocked(which)
	tm := g.itimers[which]
	if tm == nil {
		sig := []Signal{SIGALRM, SIGVTALRM, SIGPROF}[which]
		tm = &timer{g: g, clock: []int{clockReal, clockVirtual, clockProf}[which], signo: sig, notify: sigevSignal}
		g.itimers[which] = tm
	}
	if v.Value == 0 {
		tm.disarm()
		return old, nil
	}
	tm.arm(tm.now()+v.Value, v.Interval)
	return old, nil
}

// GetITimer implements getitimer(2).
func (tg *ThreadGroup) GetITimer(which int) (ITimer, error) {
	if which < 0 || which > 2 {
		return ITimer{}, errEINVAL
	}
	g := tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.getLocked(which), nil
}

func (g *groupTimers) getLocked(which int) ITimer {
	tm := g.itimers[which]
	if tm == nil || !tm.armed {
		return ITimer{}
	}
	left := tm.deadline - tm.now()
	if left <= 0 {
		left = time.Microsecond
	}
	return ITimer{Value: left, Interval: tm.interval}
}

// sigevent notify kinds.
const (
	sigevSignal   = 0
	sigevNone     = 1
	sigevThread   = 2
	sigevThreadID = 4
)

// TimerSpec describes timer_create's arguments after decoding.
type TimerSpec struct {
	ClockID int32
	Notify  int
	Signo   Signal
	Value   uint64
	// Target is the thread for SIGEV_THREAD_ID.
	Target   *Task
	HasValue bool
}

// CreateTimer implements timer_create(2) and returns the timer id.
func (t *Task) CreateTimer(s TimerSpec) (int32, error) {
	clock := clockReal
	var thread *Task
	switch s.ClockID {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME, unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM, unix.CLOCK_TAI:
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		clock = clockProf
	case unix.CLOCK_THREAD_CPUTIME_ID:
		clock, thread = clockThreadCPU, t
	default:
		return 0, errEINVAL
	}
	switch s.Notify {
	case sigevNone:
	case sigevSignal, sigevThreadID:
		if !s.Signo.IsValid() {
			return 0, errEINVAL
		}
	default:
		return 0, errEINVAL
	}
	g := t.tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.posix) >= 1<<16 {
		return 0, errEAGAIN
	}
	id := g.nextID
	for g.posix[id] != nil {
		id++
	}
	g.nextID = id + 1
	if !s.HasValue {
		s.Value = uint64(id)
	}
	g.posix[id] = &timer{g: g, clock: clock, clockID: s.ClockID, thread: thread, signo: s.Signo, notify: s.Notify, target: s.Target, id: id, value: s.Value, posix: true}
	return id, nil
}

// timerClockNow is the POSIX timer's clock reading, for absolute times on
// CLOCK_MONOTONIC: wall timers are kept on the realtime clock, so an
// absolute monotonic deadline is converted.
func (t *Task) timerLookup(id int32) (*timer, error) {
	tm := t.tg.timers.posix[id]
	if tm == nil {
		return nil, errEINVAL
	}
	return tm, nil
}

// SetTimer implements timer_settime(2). With abs (TIMER_ABSTIME) value is a
// time on the timer's clock, which clockNow reads.
func (t *Task) SetTimer(id int32, value, interval time.Duration, abs bool, clockNow func(clockID int32) time.Duration) (ITimer, error) {
	g := t.tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	tm, err := t.timerLookup(id)
	if err != nil {
		return ITimer{}, err
	}
	old := timerGet(tm)
	if value == 0 {
		tm.disarm()
		return old, nil
	}
	if abs {
		value -= clockNow(tm.clockID)
		if value <= 0 {
			value = 0
		}
	}
	tm.overrun = 0
	tm.arm(tm.now()+value, interval)
	return old, nil
}

func timerGet(tm *timer) ITimer {
	if !tm.armed {
		return ITimer{}
	}
	left := tm.deadline - tm.now()
	if left <= 0 {
		left = 1
	}
	return ITimer{Value: left, Interval: tm.interval}
}

// GetTimer implements timer_gettime(2).
func (t *Task) GetTimer(id int32) (ITimer, error) {
	g := t.tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	tm, err := t.timerLookup(id)
	if err != nil {
		return ITimer{}, err
	}
	return timerGet(tm), nil
}

// TimerOverrun implements timer_getoverrun(2).
func (t *Task) TimerOverrun(id int32) (int32, error) {
	g := t.tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	tm, err := t.timerLookup(id)
	if err != nil {
		return 0, err
	}
	return tm.lastOverrun, nil
}

// DeleteTimer implements timer_delete(2).
func (t *Task) DeleteTimer(id int32) error {
	g := t.tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	tm, err := t.timerLookup(id)
	if err != nil {
		return err
	}
	tm.disarm()
	delete(g.posix, id)
	return nil
}

// ticksOf converts a duration to clock ticks (USER_HZ 100).
func ticksOf(d time.Duration) int64 { return int64(d / (10 * time.Millisecond)) }
