package futex

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeNS numbers some Manager IDs as a nested PID namespace does.
type fakeNS map[uint32]uint32 // Manager ID -> namespace TID

func (n fakeNS) ManagerID(tid uint32) uint32 {
	for id, v := range n {
		if v == tid {
			return id
		}
	}
	return 0
}

func (n fakeNS) TID(id uint32) uint32 { return n[id] }

// TestPINamespaceIDs checks that PI futex words hold the ids of the
// caller's PID namespace: a lock, the owner lookup, an unlock's hand-over
// and a dead owner's hand-over.
func TestPINamespaceIDs(t *testing.T) {
	ns := fakeNS{100: 1, 101: 2, 102: 3}
	in := func(id uint32) Caller { return Caller{ID: id, NS: ns} }
	for _, tc := range []struct {
		name  string
		word  uint32
		c     Caller
		try   bool
		want  error
		got   bool
		after uint32
	}{
		{"free takes the namespace tid", 0, in(100), false, nil, true, 1},
		{"own namespace tid is EDEADLK", 1, in(100), false, unix.EDEADLK, false, 1},
		{"root tid of the caller is not its own", 100, in(100), true, unix.ESRCH, false, 100 | Waiters},
		{"owner looked up in the namespace", 2, in(100), true, unix.EAGAIN, false, 2 | Waiters},
		{"tid unknown in the namespace", 7, in(100), true, unix.ESRCH, false, 7 | Waiters},
		{"root caller sees root tids", 101, Self(100), true, unix.EAGAIN, false, 101 | Waiters},
		{"invisible caller", 0, in(555), false, unix.ESRCH, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			for id := range ns {
				m.ThreadStarted(id)
			}
			m.ThreadStarted(7) // alive, but only as a root id
			as.store(t, fa, tc.word)
			got, err := m.LockPIPrepare(NewPIWaiter(), as, fa, true, tc.c, tc.try)
			if !errors.Is(err, tc.want) || got != tc.got {
				t.Fatalf("LockPIPrepare = %v, %v; want %v, %v", got, err, tc.got, tc.want)
			}
			if v := as.load(t, fa); v != tc.after {
				t.Errorf("word = %#x, want %#x", v, tc.after)
			}
		})
	}

	t.Run("hand-overs", func(t *testing.T) {
		m := NewManager()
		as := newFakeAS(1, base, size)
		for id := range ns {
			m.ThreadStarted(id)
		}
		as.store(t, fa, 1) // 100 owns it
		w2, w3 := NewPIWaiter(), NewPIWaiter()
		for _, c := range []struct {
			w  *PIWaiter
			id uint32
		}{{w2, 101}, {w3, 102}} {
			if got, err := m.LockPIPrepare(c.w, as, fa, true, in(c.id), false); got || err != nil {
				t.Fatalf("LockPIPrepare(%d) = %v, %v; want queued", c.id, got, err)
			}
		}
		if err := m.UnlockPI(as, fa, true, Self(100)); err != unix.EPERM {
			t.Errorf("unlock with the root tid: %v, want EPERM", err)
		}
		if err := m.UnlockPI(as, fa, true, in(100)); err != nil {
			t.Fatal(err)
		}
		if v := as.load(t, fa); v != 2|Waiters {
			t.Fatalf("word = %#x, want 2|Waiters", v)
		}
		if !received(w2) || !m.LockPIComplete(w2) {
			t.Fatal("101 was not handed the lock")
		}
		// 101 dies holding it: 102 writes its own namespace tid.
		as.store(t, fa, 2|Waiters|OwnerDied)
		m.ThreadExited(101)
		if !received(w3) || !m.LockPIComplete(w3) {
			t.Fatal("102 was not handed the dead owner's lock")
		}
		if v := as.load(t, fa); v != 3|Waiters|OwnerDied {
			t.Errorf("word = %#x, want 3|Waiters|OwnerDied", v)
		}
	})

	t.Run("requeue", func(t *testing.T) {
		m := NewManager()
		as := newFakeAS(1, base, size)
		for id := range ns {
			m.ThreadStarted(id)
		}
		as.store(t, fa, 0)
		as.store(t, fb, 0)
		rw := NewRequeuePIWaiter()
		if err := m.WaitRequeuePIPrepare(rw, as, fa, fb, true, 0, in(101)); err != nil {
			t.Fatal(err)
		}
		if n, err := m.CmpRequeuePI(as, fa, fb, true, 1, 0, 0, in(100)); n != 1 || err != nil {
			t.Fatalf("CmpRequeuePI = %d, %v; want 1", n, err)
		}
		if m.WaitRequeuePIComplete(rw) != RequeuePILocked {
			t.Fatal("the waiter does not own the PI futex")
		}
		if v := as.load(t, fb); v != 2 {
			t.Errorf("PI word = %#x, want 2 (101 in the namespace)", v)
		}
	})
}
