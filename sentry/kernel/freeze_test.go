package kernel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/futex"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform"
)

// A platform whose "application code" only makes system calls: each
// Switch returns a syscall whose number is in the task's Orig_rax,
// unless the context was interrupted.
type fakePlatform struct{}

func (fakePlatform) NewAddressSpace() (platform.AddressSpace, error) { return fakeAS{}, nil }
func (fakePlatform) NewContext() platform.Context {
	return &fakeContext{intr: make(chan struct{}, 1)}
}
func (fakePlatform) MemoryFileFD() int { return -1 }

type fakeAS struct{}

func (fakeAS) MapFile(uintptr, uint64, uintptr, int) error { return nil }
func (fakeAS) Unmap(uintptr, uintptr) error                { return nil }
func (fakeAS) Release()                                    {}

type fakeContext struct{ intr chan struct{} }

func (c *fakeContext) Switch(_ platform.AddressSpace, _ *arch.Registers) (platform.SwitchResult, *platform.SignalInfo, error) {
	select {
	case <-c.intr:
		return platform.SwitchInterrupted, nil, nil
	case <-time.After(50 * time.Microsecond): // some application code
	}
	return platform.SwitchSyscall, nil, nil
}

func (c *fakeContext) Interrupt() {
	select {
	case c.intr <- struct{}{}:
	default:
	}
}

func (c *fakeContext) ClearInterrupt() {
	select {
	case <-c.intr:
	default:
	}
}

func (c *fakeContext) FPState(platform.AddressSpace) ([]byte, error)  { return nil, nil }
func (c *fakeContext) SetFPState(platform.AddressSpace, []byte) error { return nil }
func (c *fakeContext) Release()                                       {}

// Fake syscall numbers of the freeze tests.
const (
	sysCount = 1000 + iota // counts a call of the task
	sysBlock               // blocks until freezeEnv.release closes, then counts
)

type freezeEnv struct {
	k       *Kernel
	mf      *mm.MemoryFile
	mu      sync.Mutex
	counts  map[ThreadID]*atomic.Int64
	release chan struct{}
}

func newFreezeEnv(t *testing.T) *freezeEnv {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	k := NewTestKernel(mf)
	k.Platform = fakePlatform{}
	k.Futexes = futex.NewManager()
	k.stopClock = make(chan struct{})
	e := &freezeEnv{k: k, mf: mf, counts: make(map[ThreadID]*atomic.Int64), release: make(chan struct{})}
	k.Syscalls = &SyscallTable{Table: map[uintptr]Syscall{
		sysCount: {Name: "count", Fn: func(t *Task, _ arch.SyscallArguments) (uintptr, error) {
			e.count(t.tid).Add(1)
			return 0, nil
		}},
		sysBlock: {Name: "block", Fn: func(t *Task, _ arch.SyscallArguments) (uintptr, error) {
			if err := t.BlockOn(e.release, time.Time{}, false); err != nil {
				return 0, err
			}
			e.count(t.tid).Add(1)
			return 0, nil
		}},
	}}
	// An init that never runs, so that the tasks under test are not the
	// namespace's init.
	k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	t.Cleanup(func() {
		k.Unpause()
		for _, tg := range k.ThreadGroups() {
			tg.SendSignal(NewSignalInfo(SIGKILL, SI_USER))
		}
	})
	return e
}

func (e *freezeEnv) count(tid ThreadID) *atomic.Int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.counts[tid]
	if c == nil {
		c = new(atomic.Int64)
		e.counts[tid] = c
	}
	return c
}

// task makes a process of one task that repeats syscall sysno, not yet
// started.
func (e *freezeEnv) task(sysno uint64) *Task {
	t := e.k.NewTestTask(nil, mm.New(fakePlatform{}, e.mf), auth.NewRootCredentials())
	t.pctx = e.k.Platform.NewContext()
	t.regs.Orig_rax = sysno
	e.k.mu.Lock()
	e.k.liveTasks++
	e.k.mu.Unlock()
	return t
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// still checks that c does not move for a while.
func still(t *testing.T, what string, c *atomic.Int64) {
	t.Helper()
	time.Sleep(20 * time.Millisecond) // a call under way at Pause ends
	before := c.Load()
	time.Sleep(100 * time.Millisecond)
	if after := c.Load(); after != before {
		t.Fatalf("%s: the count went from %d to %d while paused", what, before, after)
	}
}

func exited(tg *ThreadGroup) (bool, WaitStatus) {
	tg.k.mu.Lock()
	defer tg.k.mu.Unlock()
	return tg.exited, tg.status
}

func TestFreeze(t *testing.T) {
	t.Run("running tasks stop and resume", func(t *testing.T) {
		e := newFreezeEnv(t)
		a, b := e.task(sysCount), e.task(sysCount)
		a.Start()
		b.Start()
		waitFor(t, "both tasks running", func() bool { return e.count(a.tid).Load() > 5 && e.count(b.tid).Load() > 5 })
		e.k.Pause()
		if !e.k.Paused() {
			t.Fatal("Paused() is false after Pause")
		}
		e.k.Pause() // a second Pause changes nothing
		still(t, "task a", e.count(a.tid))
		still(t, "task b", e.count(b.tid))
		if s := a.RunState(); s != StateDiskSleep {
			t.Errorf("a frozen task's state is %c, want D", s.Letter())
		}
		e.k.Unpause()
		e.k.Unpause() // and so does a second Unpause
		if e.k.Paused() {
			t.Fatal("Paused() is true after Unpause")
		}
		n := e.count(a.tid).Load()
		waitFor(t, "task a running again", func() bool { return e.count(a.tid).Load() > n+5 })
	})
	t.Run("blocked task stays blocked, then parks", func(t *testing.T) {
		e := newFreezeEnv(t)
		a := e.task(sysBlock)
		a.Start()
		waitFor(t, "the task blocking", func() bool { return a.RunState() == StateSleeping })
		e.k.Pause()
		time.Sleep(20 * time.Millisecond)
		if s := a.RunState(); s != StateSleeping {
			t.Errorf("a blocked task's state is %c after Pause, want S", s.Letter())
		}
		close(e.release) // its wait ends: it finishes that call and parks
		waitFor(t, "the blocked call to end", func() bool { return e.count(a.tid).Load() == 1 })
		still(t, "task a", e.count(a.tid))
		e.k.Unpause()
		waitFor(t, "task a running again", func() bool { return e.count(a.tid).Load() > 5 })
	})
	t.Run("signals queue until resume", func(t *testing.T) {
		e := newFreezeEnv(t)
		a := e.task(sysCount)
		a.Start()
		waitFor(t, "the task running", func() bool { return e.count(a.tid).Load() > 0 })
		e.k.Pause()
		if err := a.tg.SendSignal(NewSignalInfo(SIGTERM, SI_USER)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if done, _ := exited(a.tg); done {
			t.Fatal("SIGTERM was delivered while paused")
		}
		e.k.mu.Lock()
		pending := a.tg.pending.set
		e.k.mu.Unlock()
		if pending&SignalSetOf(SIGTERM) == 0 {
			t.Error("SIGTERM is not pending while paused")
		}
		e.k.Unpause()
		waitFor(t, "the task to die of SIGTERM", func() bool { done, _ := exited(a.tg); return done })
		if _, st := exited(a.tg); !st.Signaled() || st.Signal() != SIGTERM {
			t.Errorf("status %#x, want killed by SIGTERM", uint32(st))
		}
	})
	t.Run("SIGKILL ends a paused process", func(t *testing.T) {
		e := newFreezeEnv(t)
		a, b := e.task(sysCount), e.task(sysBlock)
		a.Start()
		b.Start()
		waitFor(t, "the tasks running", func() bool { return e.count(a.tid).Load() > 0 && b.RunState() == StateSleeping })
		e.k.Pause()
		time.Sleep(20 * time.Millisecond)
		for _, x := range []*Task{a, b} {
			x.tg.SendSignal(NewSignalInfo(SIGKILL, SI_USER))
		}
		for _, x := range []*Task{a, b} {
			waitFor(t, "the task to die", func() bool { done, _ := exited(x.tg); return done })
			if _, st := exited(x.tg); st.Signal() != SIGKILL {
				t.Errorf("status %#x, want killed by SIGKILL", uint32(st))
			}
		}
	})
	t.Run("a task started while paused waits", func(t *testing.T) {
		e := newFreezeEnv(t)
		e.k.Pause()
		a := e.task(sysCount)
		a.Start()
		time.Sleep(100 * time.Millisecond)
		if n := e.count(a.tid).Load(); n != 0 {
			t.Fatalf("a task started while paused ran %d calls", n)
		}
		e.k.Unpause()
		waitFor(t, "the task running", func() bool { return e.count(a.tid).Load() > 0 })
	})
}
