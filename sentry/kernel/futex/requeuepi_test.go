package futex

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// rqReceived reports whether a wake is pending on rw, taking it.
func rqReceived(rw *RequeuePIWaiter) bool {
	select {
	case <-rw.C:
		return true
	default:
		return false
	}
}

func TestRequeuePIArgumentErrors(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for _, tc := range []struct {
		name        string
		addr, addr2 uintptr
		nwake, nreq int
		val         uint32
		want        error
	}{
		{"same futex", fa, fa, 1, 1, 0, unix.EINVAL},
		{"nwake 0", fa, fb, 0, 1, 0, unix.EINVAL},
		{"nwake 2", fa, fb, 2, 1, 0, unix.EINVAL},
		{"negative nreq", fa, fb, 1, -1, 0, unix.EINVAL},
		{"misaligned", fa, fb + 2, 1, 1, 0, unix.EINVAL},
		{"value changed", fa, fb, 1, 1, 7, unix.EAGAIN},
		{"no waiters", fa, fb, 1, 1, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := m.CmpRequeuePI(as, tc.addr, tc.addr2, true, tc.nwake, tc.nreq, tc.val, Self(1))
			if !errors.Is(err, tc.want) || n != 0 {
				t.Fatalf("CmpRequeuePI = %d, %v; want 0, %v", n, err, tc.want)
			}
		})
	}
	rw := NewRequeuePIWaiter()
	if err := m.WaitRequeuePIPrepare(rw, as, fa, fa, true, 0, Self(10)); err != unix.EINVAL {
		t.Errorf("WAIT_REQUEUE_PI on one futex: %v, want EINVAL", err)
	}
	if err := m.WaitRequeuePIPrepare(rw, as, fa, fb, true, 1, Self(10)); err != unix.EAGAIN {
		t.Errorf("WAIT_REQUEUE_PI on a changed word: %v, want EAGAIN", err)
	}
}

func TestRequeuePIFlow(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for _, tid := range []uint32{10, 11, 12, 20} {
		m.ThreadStarted(tid)
	}
	// Three waiters on the condition variable fa, for the mutex fb.
	var ws []*RequeuePIWaiter
	for _, tid := range []uint32{10, 11, 12} {
		rw := NewRequeuePIWaiter()
		if err := m.WaitRequeuePIPrepare(rw, as, fa, fb, true, 0, Self(tid)); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, rw)
	}
	// Plain operations refuse them.
	if _, err := m.Wake(as, fa, true, BitsetMatchAny, 1); err != unix.EINVAL {
		t.Errorf("FUTEX_WAKE: %v, want EINVAL", err)
	}
	if _, err := m.Requeue(as, fa, base+0x300, true, 0, 1); err != unix.EINVAL {
		t.Errorf("FUTEX_REQUEUE: %v, want EINVAL", err)
	}
	// A requeue to another mutex than they expect is refused.
	if _, err := m.CmpRequeuePI(as, fa, base+0x300, true, 1, 1, 0, Self(1)); err != unix.EINVAL {
		t.Errorf("CMP_REQUEUE_PI to another futex: %v, want EINVAL", err)
	}
	// The mutex is free: the oldest takes it at once, one more queues
	// behind it.
	n, err := m.CmpRequeuePI(as, fa, fb, true, 1, 1, 0, Self(1))
	if n != 2 || err != nil {
		t.Fatalf("CmpRequeuePI = %d, %v; want 2, nil", n, err)
	}
	if v := as.load(t, fb); v != 10|Waiters {
		t.Fatalf("mutex word = %#x, want 10|Waiters", v)
	}
	if !rqReceived(ws[0]) || m.WaitRequeuePIComplete(ws[0]) != RequeuePILocked {
		t.Fatal("10 was not woken owning the mutex")
	}
	if rqReceived(ws[1]) || rqReceived(ws[2]) {
		t.Fatal("a requeued waiter was woken")
	}
	// The mutex is held: the last one is requeued too (nreq+1 may go).
	if n, err := m.CmpRequeuePI(as, fa, fb, true, 1, 0, 0, Self(1)); n != 1 || err != nil {
		t.Fatalf("second CmpRequeuePI = %d, %v; want 1, nil", n, err)
	}
	// Unlocks hand the mutex down in order.
	if err := m.UnlockPI(as, fb, true, Self(10)); err != nil {
		t.Fatal(err)
	}
	if !rqReceived(ws[1]) || m.WaitRequeuePIComplete(ws[1]) != RequeuePILocked {
		t.Fatal("11 was not handed the mutex")
	}
	if v := as.load(t, fb); v != 11|Waiters {
		t.Fatalf("mutex word = %#x, want 11|Waiters", v)
	}
	// 12 times out while requeued: it leaves the mutex's queue.
	if got := m.WaitRequeuePIComplete(ws[2]); got != RequeuePIRequeued {
		t.Fatalf("timed out requeued waiter: %v, want RequeuePIRequeued", got)
	}
	if err := m.UnlockPI(as, fb, true, Self(11)); err != nil {
		t.Fatal(err)
	}
	if v := as.load(t, fb); v != 0 {
		t.Errorf("mutex word after the last unlock = %#x, want 0", v)
	}
	n = len(m.piOwned)
	for i := range m.buckets {
		n += len(m.buckets[i].pi)
	}
	if n != 0 {
		t.Errorf("%d PI states left behind", n)
	}
}

func TestRequeuePIHeldMutexAndTimeout(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for _, tid := range []uint32{10, 20} {
		m.ThreadStarted(tid)
	}
	rw := NewRequeuePIWaiter()
	if err := m.WaitRequeuePIPrepare(rw, as, fa, fb, true, 0, Self(10)); err != nil {
		t.Fatal(err)
	}
	// Owned by a dead thread: ESRCH, nothing moves.
	as.store(t, fb, 4242)
	if _, err := m.CmpRequeuePI(as, fa, fb, true, 1, 1, 0, Self(1)); err != unix.ESRCH {
		t.Fatalf("dead owner: %v, want ESRCH", err)
	}
	// The waiter owns the mutex already: EDEADLK.
	as.store(t, fb, 10)
	if _, err := m.CmpRequeuePI(as, fa, fb, true, 1, 1, 0, Self(1)); err != unix.EDEADLK {
		t.Fatalf("waiter owns the mutex: %v, want EDEADLK", err)
	}
	// Held by 20: the waiter is requeued behind it, not woken.
	as.store(t, fb, 20)
	if n, err := m.CmpRequeuePI(as, fa, fb, true, 1, 0, 0, Self(1)); n != 1 || err != nil {
		t.Fatalf("CmpRequeuePI = %d, %v; want 1, nil", n, err)
	}
	if rqReceived(rw) {
		t.Fatal("requeued waiter woken")
	}
	if v := as.load(t, fb); v != 20|Waiters {
		t.Fatalf("mutex word = %#x, want 20|Waiters", v)
	}
	// 20 dies: 10 inherits the mutex.
	m.ThreadExited(20)
	if !rqReceived(rw) || m.WaitRequeuePIComplete(rw) != RequeuePILocked {
		t.Fatal("10 did not inherit the mutex of a dead owner")
	}
	// A waiter that times out before any requeue leaves the queue.
	rw2 := NewRequeuePIWaiter()
	if err := m.WaitRequeuePIPrepare(rw2, as, fa, fb, true, 0, Self(20)); err != nil {
		t.Fatal(err)
	}
	if got := m.WaitRequeuePIComplete(rw2); got != RequeuePINotRequeued {
		t.Fatalf("early timeout: %v, want RequeuePINotRequeued", got)
	}
	if n, err := m.CmpRequeuePI(as, fa, fb, true, 1, 1, 0, Self(1)); n != 0 || err != nil {
		t.Fatalf("CmpRequeuePI after the waiter left = %d, %v; want 0, nil", n, err)
	}
}

// TestRequeuePIOwnerCompletesAtOnce has the waiter that the requeue makes
// the mutex's owner finish its wait while the requeue still moves the
// others: the requeue must not read that waiter's state after waking it
// (it did, and a Sentry crashed on the nil it found; -race sees the old
// read even when the timing is kind).
func TestRequeuePIOwnerCompletesAtOnce(t *testing.T) {
	for i := 0; i < 50; i++ {
		m := NewManager()
		as := newFakeAS(1, base, size)
		for _, tid := range []uint32{10, 11, 12} {
			m.ThreadStarted(tid)
		}
		var ws []*RequeuePIWaiter
		for _, tid := range []uint32{10, 11, 12} {
			rw := NewRequeuePIWaiter()
			if err := m.WaitRequeuePIPrepare(rw, as, fa, fb, true, 0, Self(tid)); err != nil {
				t.Fatal(err)
			}
			ws = append(ws, rw)
		}
		res := make(chan RequeuePIResult, 1)
		go func() {
			<-ws[0].C
			res <- m.WaitRequeuePIComplete(ws[0])
		}()
		n, err := m.CmpRequeuePI(as, fa, fb, true, 1, 2, 0, Self(1))
		if n != 3 || err != nil {
			t.Fatalf("CmpRequeuePI = %d, %v; want 3, nil", n, err)
		}
		if r := <-res; r != RequeuePILocked {
			t.Fatalf("the oldest waiter's wait ended %v, want RequeuePILocked", r)
		}
	}
}
