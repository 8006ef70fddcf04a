package kernel

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// CPU-time clocks. A task's user time is the time it spends in application
// code (measured around Platform Switch, live while it runs); its system
// time is the time the Sentry spends serving its syscalls, less the time it
// waits in them. A thread group's clocks add up its live threads and the
// ones that exited.

// CPU clock kinds, the low two bits of a clock_getcpuclockid id.
const (
	cpuClockProf  = 0 // user + system
	cpuClockVirt  = 1 // user
	cpuClockSched = 2 // all run time: user + system here
)

// CPUClock is a thread's or a thread group's CPU-time clock.
type CPUClock struct {
	thread   *Task
	tg       *ThreadGroup
	userOnly bool
}

// LookupCPUClock decodes a CPU clock id: CLOCK_PROCESS_CPUTIME_ID,
// CLOCK_THREAD_CPUTIME_ID, or the ~pid<<3 | perthread<<2 | kind encoding
// of clock_getcpuclockid and pthread_getcpuclockid (pid 0 is the caller).
// A thread clock must name a thread of the caller's group; a process
// clock may name any thread of any process, but a timer's (forTimer) must
// name a thread group leader, as on Linux. Unknown ids are EINVAL.
func (t *Task) LookupCPUClock(id int32, forTimer bool) (CPUClock, error) {
	switch id {
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		return CPUClock{tg: t.tg}, nil
	case unix.CLOCK_THREAD_CPUTIME_ID:
		return CPUClock{thread: t}, nil
	}
	if id >= 0 || id&3 == 3 {
		return CPUClock{}, errEINVAL
	}
	pid := ThreadID(^(id >> 3))
	perThread := id&4 != 0
	c := CPUClock{userOnly: id&3 == cpuClockVirt}
	if pid == 0 {
		if perThread {
			c.thread = t
		} else {
			c.tg = t.tg
		}
		return c, nil
	}
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	ns := t.PIDNamespace()
	o := ns.tasks[pid]
	if o == nil || o.exitState != taskRunning && !perThread && o.tg.reaped {
		return CPUClock{}, errEINVAL
	}
	if perThread {
		if o.tg != t.tg || o.exitState != taskRunning {
			return CPUClock{}, errEINVAL
		}
		c.thread = o
		return c, nil
	}
	if forTimer && ns.idOfTGLocked(o.tg) != pid {
		return CPUClock{}, errEINVAL
	}
	c.tg = o.tg
	return c, nil
}

// Now reads the clock.
func (c CPUClock) Now() time.Duration {
	if c.thread != nil {
		u, s := c.thread.cpuTimes()
		if c.userOnly {
			return u
		}
		return u + s
	}
	u, s := c.tg.CPUTimes()
	if c.userOnly {
		return u
	}
	return u + s
}

// IsThread reports whether the clock is a single thread's.
func (c CPUClock) IsThread() bool { return c.thread != nil }

// cpuTimes returns t's user time, including the stint in application code
// under way, and its system time.
func (t *Task) cpuTimes() (u, s time.Duration) {
	for {
		seq := t.cpuSeq.Load()
		if seq&1 != 0 {
			// The task goroutine is between two stores.
			runtime.Gosched()
			continue
		}
		ut, since, st := t.utime.Load(), t.runningSince.Load(), t.stime.Load()
		if t.cpuSeq.Load() != seq {
			continue
		}
		if since != 0 {
			if d := time.Now().UnixNano() - since; d > 0 {
				ut += d
			}
		}
		return time.Duration(ut), time.Duration(st)
	}
}

// accountSystem adds the Sentry's time since start, less the time waited,
// to t's system time. Only the task goroutine calls it.
func (t *Task) accountSystem(start time.Time) {
	if d := time.Since(start) - t.waited; d > 0 {
		t.stime.Add(int64(d))
	}
	t.waited = 0
}

// accountWait records a wait that began at start; used as
// defer t.accountWait(time.Now()) by the task goroutine's waits.
func (t *Task) accountWait(start time.Time) {
	t.waited += time.Since(start)
}
