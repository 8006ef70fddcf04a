package kernel

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

func newSignalTestTask(t *testing.T) *Task {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	k := NewTestKernel(mf)
	return k.NewTestTask(nil, mm.New(nil, mf), auth.NewRootCredentials())
}

func TestPendingSignalsOrder(t *testing.T) {
	rt := Signal(SigRTMin + 2)
	tests := []struct {
		name string
		send []Signal
		mask SignalSet
		want []Signal
	}{
		{"standard signals do not queue", []Signal{SIGUSR1, SIGUSR1, SIGUSR1}, 0, []Signal{SIGUSR1}},
		{"real-time signals queue", []Signal{rt, rt, rt}, 0, []Signal{rt, rt, rt}},
		{"lowest first", []Signal{rt, SIGUSR2, SIGUSR1}, 0, []Signal{SIGUSR1, SIGUSR2, rt}},
		{"faults first", []Signal{SIGUSR1, SIGSEGV}, 0, []Signal{SIGSEGV, SIGUSR1}},
		{"masked stay", []Signal{SIGUSR1, SIGUSR2}, SignalSetOf(SIGUSR1), []Signal{SIGUSR2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p pendingSignals
			for _, s := range tc.send {
				p.enqueue(NewSignalInfo(s, SI_USER))
			}
			var got []Signal
			for info := p.dequeue(tc.mask); info != nil; info = p.dequeue(tc.mask) {
				got = append(got, info.Signo())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("dequeued %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("dequeued %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestPendingSignalsRemove(t *testing.T) {
	var p pendingSignals
	rt := Signal(SigRTMin)
	a, b := NewSignalInfo(rt, SI_QUEUE), NewSignalInfo(rt, SI_QUEUE)
	p.enqueue(a)
	p.enqueue(b)
	if !p.remove(a) || p.remove(a) {
		t.Fatal("remove: want true once")
	}
	if got := p.dequeue(0); got != b {
		t.Fatalf("dequeue after remove = %v, want the other instance", got)
	}
	if p.set != 0 || p.count != 0 {
		t.Fatalf("set %#x count %d after emptying", p.set, p.count)
	}
}

// siOverrun reads si_overrun of a timer siginfo.
func siOverrun(info *SignalInfo) int32 {
	return int32(binary.LittleEndian.Uint32(info.Raw[20:]))
}

func TestTimerSignalOverrunAndStaleness(t *testing.T) {
	const sigRT = Signal(SigRTMin + 2)
	task := newSignalTestTask(t)
	k := task.k
	task.SetSignalMask(SignalSetOf(sigRT))
	id, err := task.CreateTimer(TimerSpec{ClockID: unix.CLOCK_MONOTONIC, Notify: sigevSignal, Signo: sigRT})
	if err != nil {
		t.Fatal(err)
	}
	g := task.tg.timers
	tm := g.posix[id]
	fire := func(n int) {
		g.mu.Lock()
		for i := 0; i < n; i++ {
			tm.send(0)
		}
		g.mu.Unlock()
	}

	t.Run("overruns counted at dequeue", func(t *testing.T) {
		fire(6)
		k.mu.Lock()
		info := task.tg.pending.dequeue(0)
		k.mu.Unlock()
		if info == nil || info.Code() != SI_TIMER {
			t.Fatalf("dequeued %+v, want a SI_TIMER signal", info)
		}
		if got := siOverrun(info); got != 5 {
			t.Errorf("si_overrun = %d, want 5", got)
		}
		if n, _ := task.TimerOverrun(id); n != 5 {
			t.Errorf("timer_getoverrun = %d, want 5", n)
		}
	})
	t.Run("setting the timer makes a pending signal stale", func(t *testing.T) {
		fire(1)
		if _, err := task.SetTimer(id, 0, 0, false, nil); err != nil {
			t.Fatal(err)
		}
		if task.PendingSignals()&SignalSetOf(sigRT) == 0 {
			t.Fatal("the stale signal should still show as pending")
		}
		k.mu.Lock()
		info := task.tg.pending.dequeue(0)
		k.mu.Unlock()
		if info != nil {
			t.Fatalf("dequeued a stale timer signal: %+v", info)
		}
		if n, _ := task.TimerOverrun(id); n != 0 {
			t.Errorf("timer_getoverrun after settime = %d, want 0", n)
		}
	})
	t.Run("deleting the timer removes its pending signal", func(t *testing.T) {
		fire(1)
		if err := task.DeleteTimer(id); err != nil {
			t.Fatal(err)
		}
		if task.PendingSignals()&SignalSetOf(sigRT) != 0 {
			t.Fatal("signal of a deleted timer still pending")
		}
	})
}

func TestLookupCPUClock(t *testing.T) {
	task := newSignalTestTask(t)
	self := int32(task.tid)
	enc := func(pid int32, thread bool, kind int32) int32 {
		id := ^pid<<3 | kind
		if thread {
			id |= 4
		}
		return id
	}
	tests := []struct {
		name     string
		id       int32
		forTimer bool
		thread   bool
		userOnly bool
		err      error
	}{
		{"process", unix.CLOCK_PROCESS_CPUTIME_ID, false, false, false, nil},
		{"thread", unix.CLOCK_THREAD_CPUTIME_ID, false, true, false, nil},
		{"glibc process clock (pid 0)", enc(0, false, cpuClockSched), true, false, false, nil},
		{"glibc thread clock (tid 0)", enc(0, true, cpuClockSched), true, true, false, nil},
		{"own pid, virtual", enc(self, false, cpuClockVirt), false, false, true, nil},
		{"own tid, prof", enc(self, true, cpuClockProf), false, true, false, nil},
		{"no such process", enc(424242, false, cpuClockSched), false, false, false, errEINVAL},
		{"kind 3 is invalid", enc(0, false, 3), false, false, false, errEINVAL},
		{"realtime is not a CPU clock", unix.CLOCK_REALTIME, false, false, false, errEINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := task.LookupCPUClock(tc.id, tc.forTimer)
			if err != tc.err {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if c.IsThread() != tc.thread || c.userOnly != tc.userOnly {
				t.Errorf("clock %+v: thread %v userOnly %v, want %v %v", c, c.IsThread(), c.userOnly, tc.thread, tc.userOnly)
			}
		})
	}
}

func TestCPUTimesCountRunningStint(t *testing.T) {
	task := newSignalTestTask(t)
	task.utime.Store(int64(3 * time.Millisecond))
	task.stime.Store(int64(time.Millisecond))
	task.runningSince.Store(time.Now().Add(-20 * time.Millisecond).UnixNano())
	u, s := task.cpuTimes()
	if u < 23*time.Millisecond || s != time.Millisecond {
		t.Fatalf("cpuTimes = %v, %v; want user >= 23ms (3ms + the running 20ms), system 1ms", u, s)
	}
	task.runningSince.Store(0)
	if u, _ := task.cpuTimes(); u != 3*time.Millisecond {
		t.Fatalf("user time out of application code = %v, want 3ms", u)
	}
	// System time excludes waits.
	task.waited = 0
	start := time.Now().Add(-10 * time.Millisecond)
	task.accountWait(time.Now().Add(-8 * time.Millisecond))
	task.accountSystem(start)
	if s := task.Stime(); s < 2*time.Millisecond || s > 2*time.Millisecond+5*time.Millisecond {
		t.Fatalf("system time = %v, want about 1ms + 2ms (10ms less 8ms waited)", s)
	}
}
