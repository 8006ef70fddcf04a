package futex

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// within fails the test if f does not return in d: a lost wakeup shows as
// a hang.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v: a wakeup was lost", d)
	}
}

// sleeps counts the waits futexWait slept in.
var sleeps atomic.Int64

// futexWait blocks while the word at addr holds val, like FUTEX_WAIT
// without a timeout.
func futexWait(t *testing.T, m *Manager, w *Waiter, as *fakeAS, addr uintptr, private bool, val uint32) {
	switch err := m.WaitPrepare(w, as, addr, private, val, BitsetMatchAny); err {
	case nil:
		sleeps.Add(1)
		<-w.C
		m.WaitComplete(w)
	case unix.EAGAIN:
	default:
		t.Errorf("WaitPrepare: %v", err)
	}
}

// futexMutex is the classic three-state futex lock (0 unlocked, 1 locked,
// 2 locked with waiters), the way C libraries build mutexes.
type futexMutex struct {
	m       *Manager
	addr    uintptr
	private bool
}

func (l *futexMutex) lock(t *testing.T, as *fakeAS, w *Waiter) {
	c, _ := as.CompareAndSwapUint32(l.addr, 0, 1)
	if c == 0 {
		return
	}
	if c != 2 {
		c, _ = as.SwapUint32(l.addr, 2)
	}
	for c != 0 {
		futexWait(t, l.m, w, as, l.addr, l.private, 2)
		c, _ = as.SwapUint32(l.addr, 2)
	}
}

func (l *futexMutex) unlock(t *testing.T, as *fakeAS) {
	if old, _ := as.SwapUint32(l.addr, 0); old == 2 {
		if _, err := l.m.Wake(as, l.addr, l.private, BitsetMatchAny, 1); err != nil {
			t.Errorf("Wake: %v", err)
		}
	}
}

func TestMutexStress(t *testing.T) {
	const (
		goroutines = 16
		iterations = 2000
	)
	mem := newFakeMem(9, size)
	// Two processes sharing the lock through shared memory at different
	// addresses, and threads of each.
	procs := []*fakeAS{
		{id: 1, mem: mem, base: base, shared: true},
		{id: 2, mem: mem, base: 0x50000, shared: true},
	}
	for _, private := range []bool{true, false} {
		name := map[bool]string{true: "private", false: "shared"}[private]
		t.Run(name, func(t *testing.T) {
			m := NewManager()
			counter := 0
			within(t, 60*time.Second, func() {
				var wg sync.WaitGroup
				for g := range goroutines {
					as := procs[0]
					if !private {
						as = procs[g%2]
					}
					l := &futexMutex{m: m, addr: as.base + 0x40, private: private}
					wg.Go(func() {
						w := NewWaiter()
						for range iterations {
							l.lock(t, as, w)
							counter++ // guarded by the futex lock
							runtime.Gosched()
							l.unlock(t, as)
						}
					})
				}
				wg.Wait()
			})
			t.Logf("%d sleeps", sleeps.Swap(0))
			if counter != goroutines*iterations {
				t.Errorf("counter = %d, want %d: mutual exclusion failed", counter, goroutines*iterations)
			}
			if n := m.queued(t); n != 0 {
				t.Errorf("%d waiters left queued", n)
			}
		})
	}
}

// TestSemaphoreStress runs producers and consumers over a futex counter:
// consumers sleep while it is zero, producers increment it and wake one.
func TestSemaphoreStress(t *testing.T) {
	const (
		producers = 4
		consumers = 8
		items     = 4000
	)
	m := NewManager()
	as := newFakeAS(1, base, size)
	var consumed atomic.Int64
	within(t, 60*time.Second, func() {
		var wg sync.WaitGroup
		for range consumers {
			wg.Go(func() {
				w := NewWaiter()
				for consumed.Load() < items {
					v := as.load(t, fa)
					if v == 0 {
						// Time out now and then, as a waiter might,
						// to exercise WaitComplete racing with wakes.
						if err := m.WaitPrepare(w, as, fa, true, 0, BitsetMatchAny); err == nil {
							sleeps.Add(1)
							select {
							case <-w.C:
							case <-time.After(time.Millisecond):
							}
							m.WaitComplete(w)
						}
						continue
					}
					if prev, _ := as.CompareAndSwapUint32(fa, v, v-1); prev == v {
						consumed.Add(1)
					}
				}
				// Let the others see the end.
				m.Wake(as, fa, true, BitsetMatchAny, consumers)
			})
		}
		for range producers {
			wg.Go(func() {
				for range items / producers {
					for {
						v := as.load(t, fa)
						if prev, _ := as.CompareAndSwapUint32(fa, v, v+1); prev == v {
							break
						}
					}
					m.Wake(as, fa, true, BitsetMatchAny, 1)
					runtime.Gosched()
				}
			})
		}
		wg.Wait()
	})
	t.Logf("%d sleeps", sleeps.Swap(0))
	if got := consumed.Load(); got != items {
		t.Errorf("consumed %d items, want %d", got, items)
	}
}

// TestWaitCompleteRaces has waiters time out while wakers wake, requeue
// back and forth and wake_op, and checks that every wake is accounted for
// exactly once: the count the wakers report equals the waits that ended
// Woken, and a waiter is signalled on C exactly when it is Woken.
func TestWaitCompleteRaces(t *testing.T) {
	const (
		waiters = 8
		rounds  = 2000
		wakers  = 3
	)
	m := NewManager()
	as := newFakeAS(1, base, size)
	var reported, observed atomic.Int64
	stop := make(chan struct{})
	within(t, 60*time.Second, func() {
		var ww sync.WaitGroup
		for i := range waiters {
			ww.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), 1))
				w := NewWaiter()
				for range rounds {
					addr := uintptr(fa)
					if r.IntN(2) == 0 {
						addr = fb
					}
					bitset := uint32(BitsetMatchAny)
					if r.IntN(4) == 0 {
						bitset = 1
					}
					if err := m.WaitPrepare(w, as, addr, true, 0, bitset); err != nil {
						t.Errorf("WaitPrepare: %v", err)
						return
					}
					got := false
					select {
					case <-w.C:
						got = true
					case <-time.After(time.Duration(r.IntN(50)) * time.Microsecond):
					}
					m.WaitComplete(w)
					if !got && len(w.C) == 1 {
						<-w.C
						got = true
					}
					if got != w.Woken() {
						t.Errorf("signalled %v but Woken %v", got, w.Woken())
					}
					if w.Woken() {
						observed.Add(1)
					}
				}
			})
		}
		var wk sync.WaitGroup
		for i := range wakers {
			wk.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), 2))
				for {
					select {
					case <-stop:
						return
					default:
					}
					a, b := uintptr(fa), uintptr(fb)
					if r.IntN(2) == 0 {
						a, b = b, a
					}
					var n int
					var err error
					switch r.IntN(4) {
					case 0:
						n, err = m.Wake(as, a, true, 2, r.IntN(3))
					case 1:
						nwake := r.IntN(2)
						n, err = m.Requeue(as, a, b, true, nwake, r.IntN(3))
						n = min(n, nwake)
					case 2:
						nwake := r.IntN(2)
						n, err = m.CmpRequeue(as, a, b, true, nwake, 2, 0)
						n = min(n, nwake)
					case 3:
						n, err = m.WakeOp(as, a, b, true, 1, 1, EncodeOp(OpOr, 0, CmpEq, 0))
					}
					if err != nil {
						t.Errorf("waker: %v", err)
						return
					}
					reported.Add(int64(n))
					runtime.Gosched()
				}
			})
		}
		ww.Wait()
		close(stop)
		wk.Wait()
	})
	if reported.Load() != observed.Load() {
		t.Errorf("wakers reported %d wakes, waiters saw %d", reported.Load(), observed.Load())
	}
	if n := m.queued(t); n != 0 {
		t.Errorf("%d waiters left queued", n)
	}
	t.Logf("%d wakes", observed.Load())
}
