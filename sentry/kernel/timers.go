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

// timer is one armed timer.
type timer struct {
	g *groupTimers
	// cpu is the timer's CPU clock; wall clocks have none (a zero
	// CPUClock) and run on the realtime clock.
	cpu      CPUClock
	clockID  int32         // the POSIX clock id
	deadline time.Duration // on the timer's clock: wall since epoch or CPU time
	interval time.Duration
	wall     *time.Timer
	armed    bool
	// seq counts armings, so a Go timer callback that lost the race
	// with a re-arming (Stop cannot recall a callback already started)
	// knows it is stale.
	seq uint64
	// fire, when set, receives the number of expirations instead of a
	// signal being sent (timerfd; see Timer).
	fire func(n uint64)

	// What firing does.
	signo  Signal
	notify int // SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID
	target *Task
	id     int32
	value  uint64
	posix  bool

	// Guarded by Kernel.mu: the signal of a POSIX timer is queued at most
	// once; expirations while it is pending count as overruns, reported in
	// si_overrun when it is dequeued. gen changes when the timer is set or
	// deleted, which makes a pending signal stale.
	overrun int64
	// queued is the last signal sent, while it may still be pending.
	queued      *SignalInfo
	lastOverrun int32
	gen         uint64
}

// maxOverrun is where overrun counts saturate (DELAYTIMER_MAX, INT_MAX).
const maxOverrun = 1<<31 - 1

type groupTimers struct {
	tg *ThreadGroup

	mu       sync.Mutex
	itimers  [3]*timer
	posix    map[int32]*timer
	nextID   int32
	cpuTimer *time.Ticker
	stopCPU  chan struct{}
	// xcpuAt is the CPU time of the next RLIMIT_CPU SIGXCPU once the
	// soft limit is reached (0: at the soft limit).
	xcpuAt time.Duration
}

func newGroupTimers(tg *ThreadGroup) *groupTimers {
	return &groupTimers{tg: tg, posix: make(map[int32]*timer)}
}

// isWall reports whether the timer runs on a wall clock.
func (tm *timer) isWall() bool { return tm.cpu.thread == nil && tm.cpu.tg == nil }

// now returns the current value of the timer's clock.
func (tm *timer) now() time.Duration {
	if tm.isWall() {
		return time.Duration(time.Now().UnixNano())
	}
	return tm.cpu.Now()
}

// arm sets the timer to fire at deadline on its clock.
// Preconditions: g.mu is held.
func (tm *timer) arm(deadline, interval time.Duration) {
	tm.disarm()
	if deadline == 0 {
		return
	}
	tm.deadline, tm.interval, tm.armed = deadline, interval, true
	if tm.isWall() {
		tm.startWall()
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

// startWall starts the Go timer for the deadline. Preconditions: g.mu is
// held.
func (tm *timer) startWall() {
	d := tm.deadline - tm.now()
	if d < 0 {
		d = 0
	}
	tm.seq++
	seq := tm.seq
	tm.wall = time.AfterFunc(d, func() { tm.fireWall(seq) })
}

func (tm *timer) fireWall(seq uint64) {
	g := tm.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if !tm.armed || seq != tm.seq {
		return
	}
	tm.expire()
	if tm.armed {
		tm.startWall()
	}
}

// expire fires the timer and computes the next deadline.
// Preconditions: g.mu is held.
func (tm *timer) expire() {
	now := tm.now()
	var missed int64 // expirations passed beyond the first
	if tm.interval > 0 {
		next := tm.deadline + tm.interval
		if next <= now {
			n := (now - tm.deadline) / tm.interval
			missed = int64(n)
			next = tm.deadline + (n+1)*tm.interval
		}
		tm.deadline = next
	} else {
		tm.armed = false
	}
	if tm.fire != nil {
		tm.fire(1 + uint64(missed))
		return
	}
	tm.send(int32(min(missed, maxOverrun)))
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
		tm.overrun += 1 + int64(overrun)
		return
	}
	var info *SignalInfo
	if tm.posix {
		tm.overrun = int64(overrun)
		info = NewSignalInfo(tm.signo, SI_TIMER)
		info.SetTimer(tm.id, 0, tm.value)
		info.timer, info.timerGen = tm, tm.gen
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

// dequeuedLocked is called when info, queued by tm, is dequeued: it fills
// in si_overrun and reports true, or reports false if the signal is stale
// (the timer was set again or deleted since) and must be dropped.
// Preconditions: Kernel.mu is held.
func (tm *timer) dequeuedLocked(info *SignalInfo) bool {
	if tm.queued == info {
		tm.queued = nil
	}
	if info.timerGen != tm.gen {
		return false
	}
	n := tm.overrun
	if n > maxOverrun {
		n = maxOverrun
	}
	tm.overrun = 0
	tm.lastOverrun = int32(n)
	info.SetTimer(tm.id, tm.lastOverrun, tm.value)
	return true
}

// invalidateLocked makes tm's pending signal stale and resets its overrun
// accounting (timer_settime); with remove (timer_delete) the pending signal
// is taken off its queue. Preconditions: Kernel.mu is held.
func (tm *timer) invalidateLocked(remove bool) {
	tm.gen++
	tm.overrun = 0
	tm.lastOverrun = 0
	if tm.queued == nil {
		return
	}
	if remove {
		if tm.target == nil || !tm.target.pending.remove(tm.queued) {
			tm.g.tg.pending.remove(tm.queued)
		}
	}
	tm.queued = nil
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
		if tm == nil || !tm.armed || tm.isWall() {
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
	any = g.checkCPULimitLocked() || any
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
		tm = &timer{g: g, signo: SIGALRM, notify: sigevSignal}
		switch which {
		case 1: // ITIMER_VIRTUAL
			tm.cpu, tm.signo = CPUClock{tg: tg, userOnly: true}, SIGVTALRM
		case 2: // ITIMER_PROF
			tm.cpu, tm.signo = CPUClock{tg: tg}, SIGPROF
		}
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
	var cpu CPUClock
	switch s.ClockID {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME, unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM, unix.CLOCK_TAI:
	default:
		// CPU clocks: glibc passes its own process and thread clocks
		// in the clock_getcpuclockid encoding.
		c, err := t.LookupCPUClock(s.ClockID, true)
		if err != nil {
			return 0, err
		}
		cpu = c
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
	g.posix[id] = &timer{g: g, cpu: cpu, clockID: s.ClockID, signo: s.Signo, notify: s.Notify, target: s.Target, id: id, value: s.Value, posix: true}
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
	t.k.mu.Lock()
	tm.invalidateLocked(false)
	t.k.mu.Unlock()
	if value == 0 {
		tm.disarm()
		return old, nil
	}
	now := tm.now()
	if abs {
		// A wall timer's deadline is kept on the realtime clock.
		if tm.isWall() {
			value -= clockNow(tm.clockID)
		} else {
			value -= now
		}
		if value <= 0 {
			value = 0
		}
	}
	tm.arm(now+value, interval)
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
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
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
	t.k.mu.Lock()
	tm.invalidateLocked(true)
	t.k.mu.Unlock()
	delete(g.posix, id)
	return nil
}

// ticksOf converts a duration to clock ticks (USER_HZ 100).
func ticksOf(d time.Duration) int64 { return int64(d / (10 * time.Millisecond)) }

// CPULimitChanged makes the group's CPU ticker enforce a new RLIMIT_CPU.
func (tg *ThreadGroup) CPULimitChanged() {
	g := tg.timers
	g.mu.Lock()
	defer g.mu.Unlock()
	g.xcpuAt = 0
	if l := tg.limits.Get(unix.RLIMIT_CPU); l.Cur != RLimInfinity || l.Max != RLimInfinity {
		g.startCPUTicker()
	}
}

// checkCPULimitLocked enforces RLIMIT_CPU as Linux does: SIGXCPU when the
// group's CPU time reaches the soft limit and every second after, SIGKILL
// at the hard limit. It reports whether the limit still needs polling.
// Preconditions: g.mu is held.
func (g *groupTimers) checkCPULimitLocked() bool {
	l := g.tg.limits.Get(unix.RLIMIT_CPU)
	if l.Cur == RLimInfinity && l.Max == RLimInfinity {
		return false
	}
	secs := func(v uint64) time.Duration {
		if v >= uint64(1<<63-1)/uint64(time.Second) {
			return 1<<63 - 1
		}
		return time.Duration(v) * time.Second
	}
	used := CPUClock{tg: g.tg}.Now()
	k := g.tg.k
	switch {
	case l.Max != RLimInfinity && used >= secs(l.Max):
		k.mu.Lock()
		k.sendSignalToGroupLocked(g.tg, SIGKILL, NewSignalInfo(SIGKILL, SI_KERNEL))
		k.mu.Unlock()
		return false
	case l.Cur != RLimInfinity && used >= secs(l.Cur) && used >= g.xcpuAt:
		k.mu.Lock()
		k.sendSignalToGroupLocked(g.tg, SIGXCPU, NewSignalInfo(SIGXCPU, SI_KERNEL))
		k.mu.Unlock()
		g.xcpuAt = (used/time.Second + 1) * time.Second
	}
	return true
}
