package futex

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// received reports whether a wake is pending on w, taking it.
func received(w *PIWaiter) bool {
	select {
	case <-w.C:
		return true
	default:
		return false
	}
}

func TestLockPIUncontended(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	m.ThreadStarted(10)
	for _, tc := range []struct {
		name    string
		word    uint32
		try     bool
		want    error
		acquire bool
		after   uint32
	}{
		{"free", 0, false, nil, true, 10},
		{"free trylock", 0, true, nil, true, 10},
		{"owner died kept", OwnerDied, false, nil, true, OwnerDied | 10},
		{"own lock", 10, false, unix.EDEADLK, false, 10},
		{"own lock trylock", 10 | Waiters, true, unix.EDEADLK, false, 10 | Waiters},
		{"dead owner", 4242, true, unix.ESRCH, false, 4242 | Waiters},
		{"dead owner lock", 4242, false, unix.ESRCH, false, 4242 | Waiters},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as.store(t, fa, tc.word)
			w := NewPIWaiter()
			got, err := m.LockPIPrepare(w, as, fa, true, Self(10), tc.try)
			if !errors.Is(err, tc.want) || got != tc.acquire {
				t.Fatalf("LockPIPrepare = %v, %v; want %v, %v", got, err, tc.acquire, tc.want)
			}
			if v := as.load(t, fa); v != tc.after {
				t.Errorf("word = %#x, want %#x", v, tc.after)
			}
		})
	}
	if _, err := m.LockPIPrepare(NewPIWaiter(), as, fa+1, true, Self(10), false); err != unix.EINVAL {
		t.Errorf("misaligned: %v, want EINVAL", err)
	}
}

func TestUnlockPI(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for _, tc := range []struct {
		name  string
		word  uint32
		want  error
		after uint32
	}{
		{"owned", 10, nil, 0},
		{"owned with stale waiters bit", 10 | Waiters | OwnerDied, nil, 0},
		{"not owner", 11, unix.EPERM, 11},
		{"free", 0, unix.EPERM, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as.store(t, fa, tc.word)
			if err := m.UnlockPI(as, fa, true, Self(10)); !errors.Is(err, tc.want) {
				t.Fatalf("UnlockPI = %v, want %v", err, tc.want)
			}
			if v := as.load(t, fa); v != tc.after {
				t.Errorf("word = %#x, want %#x", v, tc.after)
			}
		})
	}
}

func TestLockPIHandOver(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for _, tid := range []uint32{10, 11, 12} {
		m.ThreadStarted(tid)
	}
	as.store(t, fa, 10)
	w11, w12 := NewPIWaiter(), NewPIWaiter()
	for _, c := range []struct {
		w   *PIWaiter
		tid uint32
	}{{w11, 11}, {w12, 12}} {
		if got, err := m.LockPIPrepare(c.w, as, fa, true, Self(c.tid), false); got || err != nil {
			t.Fatalf("LockPIPrepare(%d) = %v, %v; want queued", c.tid, got, err)
		}
	}
	if v := as.load(t, fa); v != 10|Waiters {
		t.Fatalf("word = %#x, want owner 10 with waiters", v)
	}
	// A plain wake must not steal PI waiters.
	if _, err := m.Wake(as, fa, true, BitsetMatchAny, 1); err != unix.EINVAL {
		t.Errorf("FUTEX_WAKE of a PI futex with waiters: %v, want EINVAL", err)
	}
	// Unlock hands over to the oldest waiter.
	if err := m.UnlockPI(as, fa, true, Self(10)); err != nil {
		t.Fatal(err)
	}
	if v := as.load(t, fa); v != 11|Waiters {
		t.Errorf("word = %#x, want 11|Waiters", v)
	}
	if !received(w11) || received(w12) {
		t.Fatal("the oldest waiter was not the one woken")
	}
	if !m.LockPIComplete(w11) {
		t.Fatal("LockPIComplete: 11 does not own the lock")
	}
	// 11 dies owning it: 12 takes over, and sees the death.
	as.store(t, fa, 11|Waiters|OwnerDied)
	m.ThreadExited(11)
	if !received(w12) || !m.LockPIComplete(w12) {
		t.Fatal("12 was not handed the lock of a dead owner")
	}
	if v := as.load(t, fa); v != 12|Waiters|OwnerDied {
		t.Errorf("word = %#x, want 12|Waiters|OwnerDied", v)
	}
	if err := m.UnlockPI(as, fa, true, Self(12)); err != nil {
		t.Fatal(err)
	}
	if v := as.load(t, fa); v != 0 {
		t.Errorf("word after the last unlock = %#x, want 0", v)
	}
	n := len(m.piOwned)
	for i := range m.buckets {
		n += len(m.buckets[i].pi)
	}
	if n != 0 {
		t.Errorf("%d PI states left behind", n)
	}
}

func TestLockPITimeoutDequeues(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	m.ThreadStarted(10)
	as.store(t, fa, 10)
	w := NewPIWaiter()
	if got, err := m.LockPIPrepare(w, as, fa, true, Self(11), false); got || err != nil {
		t.Fatalf("LockPIPrepare = %v, %v", got, err)
	}
	// The wait ends (a timeout) without a hand-over.
	if m.LockPIComplete(w) {
		t.Fatal("owned without a hand-over")
	}
	if err := m.UnlockPI(as, fa, true, Self(10)); err != nil {
		t.Fatal(err)
	}
	if v := as.load(t, fa); v != 0 || received(w) {
		t.Errorf("word = %#x after unlock, woken %v; want 0 and no wake", v, received(w))
	}
	// The owner died: a new lock attempt fails.
	as.store(t, fa, 10)
	m.ThreadExited(10)
	if _, err := m.LockPIPrepare(NewPIWaiter(), as, fa, true, Self(11), false); err != unix.ESRCH {
		t.Errorf("lock of a dead owner's futex: %v, want ESRCH", err)
	}
}
