package futex

import (
	"testing"
)

const (
	tid   = 1234
	rhead = base + 0x800 // the robust_list_head
	e1    = base + 0x100 // list entries
	e2    = base + 0x180
	e3    = base + 0x200
	roff  = 16 // futex_offset: the futex word is 16 bytes past the entry
)

// robustSetup writes a robust_list_head at rhead.
func robustSetup(t *testing.T, as *fakeAS, next uintptr, off int64, pending uintptr) {
	t.Helper()
	as.store64(t, rhead, uint64(next))
	as.store64(t, rhead+8, uint64(off))
	as.store64(t, rhead+16, uint64(pending))
}

// link makes entry's next pointer next.
func link(t *testing.T, as *fakeAS, entry, next uintptr) {
	t.Helper()
	as.store64(t, entry, uint64(next))
}

// sharedWaiters queues n shared waiters on the futex word at addr.
func sharedWaiters(t *testing.T, m *Manager, as *fakeAS, addr uintptr, n int) []*Waiter {
	t.Helper()
	var ws []*Waiter
	for range n {
		ws = append(ws, prepare(t, m, as, addr, false, as.load(t, addr), BitsetMatchAny))
	}
	return ws
}

func countWoken(m *Manager, ws []*Waiter) int {
	n := 0
	for _, w := range ws {
		if w.Woken() {
			n++
		}
		m.WaitComplete(w)
	}
	return n
}

func TestRobustListEntry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pi      bool
		word    uint32
		want    uint32
		wakeups int
	}{
		{"owned with waiters", false, tid | Waiters, Waiters | OwnerDied, 1},
		{"owned without waiters", false, tid, OwnerDied, 0},
		{"owned, owner already died", false, tid | OwnerDied | Waiters, OwnerDied | Waiters, 1},
		{"other owner", false, 99 | Waiters, 99 | Waiters, 0},
		{"unlocked", false, 0, 0, 0},
		{"unlocked with waiters bit", false, Waiters, Waiters, 0},
		{"pi owned with waiters: marked, not woken", true, tid | Waiters, Waiters | OwnerDied, 0},
		{"pi other owner", true, 5, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			ptr := uintptr(e1)
			if tc.pi {
				ptr |= 1
			}
			robustSetup(t, as, ptr, roff, 0)
			link(t, as, e1, rhead)
			as.store(t, e1+roff, tc.word)
			ws := sharedWaiters(t, m, as, e1+roff, 2)
			m.HandleRobustList(as, rhead, tid)
			if got := as.load(t, e1+roff); got != tc.want {
				t.Errorf("futex word = %#x, want %#x", got, tc.want)
			}
			if got := countWoken(m, ws); got != tc.wakeups {
				t.Errorf("woke %d waiters, want %d", got, tc.wakeups)
			}
		})
	}
}

func TestRobustListPending(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pi      bool
		onList  bool
		word    uint32
		want    uint32
		wakeups int
	}{
		// The thread died between releasing the lock and waking: wake
		// one waiter without touching the word.
		{"released", false, false, 0, 0, 1},
		{"released with waiters bit", false, false, Waiters, Waiters, 1},
		{"released, other bits", false, false, OwnerDied, OwnerDied, 1},
		{"owned", false, false, tid | Waiters, OwnerDied | Waiters, 1},
		{"owned without waiters", false, false, tid, OwnerDied, 0},
		{"other owner", false, false, 7 | Waiters, 7 | Waiters, 0},
		{"pi released: not woken", true, false, 0, 0, 0},
		{"pi owned", true, false, tid | Waiters, OwnerDied | Waiters, 0},
		// A pending entry already on the list is handled once, as the
		// pending one: if it were marked during the walk, the pending
		// pass would see owner 0 and wake a second waiter.
		{"on the list", false, true, tid | Waiters, OwnerDied | Waiters, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			ptr := uintptr(e2)
			if tc.pi {
				ptr |= 1
			}
			if tc.onList {
				robustSetup(t, as, e1, roff, ptr)
				link(t, as, e1, e2)
				link(t, as, e2, e3)
				link(t, as, e3, rhead)
			} else {
				robustSetup(t, as, rhead, roff, ptr)
			}
			as.store(t, e2+roff, tc.word)
			ws := sharedWaiters(t, m, as, e2+roff, 3)
			m.HandleRobustList(as, rhead, tid)
			if got := as.load(t, e2+roff); got != tc.want {
				t.Errorf("futex word = %#x, want %#x", got, tc.want)
			}
			if got := countWoken(m, ws); got != tc.wakeups {
				t.Errorf("woke %d waiters, want %d", got, tc.wakeups)
			}
		})
	}
}

func TestRobustListWalk(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	// A negative futex_offset, as when the list entry follows the lock.
	const off = -8
	robustSetup(t, as, e1, off, 0)
	link(t, as, e1, e2)
	link(t, as, e2, e3)
	link(t, as, e3, rhead)
	as.store(t, e1+off, tid|Waiters)
	as.store(t, e2+off, 55|Waiters)
	as.store(t, e3+off, tid)
	w1 := sharedWaiters(t, m, as, e1+off, 1)
	w2 := sharedWaiters(t, m, as, e2+off, 1)
	// A private waiter is not woken: Linux wakes robust futexes as
	// shared ones (and glibc waits on them so).
	wp := prepare(t, m, as, e1+off, true, tid|Waiters, BitsetMatchAny)
	m.HandleRobustList(as, rhead, tid)
	for _, c := range []struct {
		addr uintptr
		want uint32
	}{{e1 + off, Waiters | OwnerDied}, {e2 + off, 55 | Waiters}, {e3 + off, OwnerDied}} {
		if got := as.load(t, c.addr); got != c.want {
			t.Errorf("word at %#x = %#x, want %#x", c.addr, got, c.want)
		}
	}
	if countWoken(m, w1) != 1 || countWoken(m, w2) != 0 {
		t.Errorf("wrong waiters woken")
	}
	if wp.Woken() {
		t.Errorf("private waiter woken")
	}
	m.WaitComplete(wp)
}

func TestRobustListBad(t *testing.T) {
	const unmapped = 0x8
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, as *fakeAS)
		tid   uint32
		head  uintptr
		// words at e1+roff, e2+roff, e3+roff after, starting from tid each.
		want [3]uint32
	}{
		{"head unmapped", func(t *testing.T, as *fakeAS) {}, tid, unmapped, [3]uint32{tid, tid, tid}},
		{"head null", func(t *testing.T, as *fakeAS) {}, tid, 0, [3]uint32{tid, tid, tid}},
		{"tid 0", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, 0)
			link(t, as, e1, rhead)
			as.store(t, e1+roff, 0)
		}, 0, rhead, [3]uint32{0, tid, tid}},
		{"next unmapped: entry handled, pending not", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, e3)
			link(t, as, e1, unmapped)
		}, tid, rhead, [3]uint32{OwnerDied, tid, tid}},
		{"first entry unmapped", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, unmapped, roff, e3)
		}, tid, rhead, [3]uint32{tid, tid, tid}},
		{"null entry", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, e3)
			link(t, as, e1, 0)
		}, tid, rhead, [3]uint32{OwnerDied, tid, tid}},
		{"futex word unmapped ends the walk", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, -0x10000, e3)
			link(t, as, e1, e2)
			link(t, as, e2, rhead)
		}, tid, rhead, [3]uint32{tid, tid, tid}},
		{"misaligned futex word ends the walk", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, e3)
			link(t, as, e1, e2+2)
			link(t, as, e2+2, e2)
			link(t, as, e2, rhead)
		}, tid, rhead, [3]uint32{OwnerDied, tid, tid}},
		{"cycle not through head", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, e3)
			link(t, as, e1, e2)
			link(t, as, e2, e1)
		}, tid, rhead, [3]uint32{OwnerDied, OwnerDied, OwnerDied}},
		{"self loop", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, e3)
			link(t, as, e1, e1)
		}, tid, rhead, [3]uint32{OwnerDied, tid, OwnerDied}},
		{"pending unmapped", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, e1, roff, unmapped)
			link(t, as, e1, rhead)
		}, tid, rhead, [3]uint32{OwnerDied, tid, tid}},
		{"pi bit on the head's next", func(t *testing.T, as *fakeAS) {
			robustSetup(t, as, rhead|1, roff, e2)
		}, tid, rhead, [3]uint32{tid, OwnerDied, tid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			for _, e := range []uintptr{e1, e2, e3} {
				as.store(t, e+roff, tid)
			}
			tc.setup(t, as)
			m.HandleRobustList(as, tc.head, tc.tid)
			for i, e := range []uintptr{e1, e2, e3} {
				if got := as.load(t, e+roff); got != tc.want[i] {
					t.Errorf("word %d = %#x, want %#x", i+1, got, tc.want[i])
				}
			}
			if n := as.copies.Load(); n > RobustListLimit+3 {
				t.Errorf("%d reads of the list, more than the limit allows", n)
			}
		})
	}
}

func TestRobustListReadOnlyWord(t *testing.T) {
	m := NewManager()
	rw := newFakeAS(1, base, size)
	ro := &fakeAS{id: 1, mem: rw.mem, base: base, readOnly: true}
	robustSetup(t, rw, e1, roff, e3)
	link(t, rw, e1, e2)
	link(t, rw, e2, rhead)
	for _, e := range []uintptr{e1, e2, e3} {
		rw.store(t, e+roff, tid)
	}
	m.HandleRobustList(ro, rhead, tid)
	for _, e := range []uintptr{e1, e2, e3} {
		if got := rw.load(t, e+roff); got != tid {
			t.Errorf("read-only word changed to %#x", got)
		}
	}
}

func TestRobustListLimit(t *testing.T) {
	const (
		big    = 0x20000
		first  = base + 0x1000
		n      = RobustListLimit + 1
		stride = 32
	)
	m := NewManager()
	as := newFakeAS(1, base, big)
	pending := uintptr(base + 0x40)
	robustSetup(t, as, first, 8, pending)
	as.store(t, pending+8, tid)
	for i := range n {
		e := uintptr(first + i*stride)
		next := e + stride
		if i == n-1 {
			next = rhead
		}
		link(t, as, e, next)
		as.store(t, e+8, tid)
	}
	m.HandleRobustList(as, rhead, tid)
	for i := range n {
		e := uintptr(first + i*stride)
		want := uint32(OwnerDied)
		if i >= RobustListLimit {
			want = tid
		}
		if got := as.load(t, e+8); got != want {
			t.Fatalf("entry %d: word %#x, want %#x", i, got, want)
		}
	}
	// The pending entry is still handled after the limit.
	if got := as.load(t, pending+8); got != OwnerDied {
		t.Errorf("pending word %#x, want OwnerDied", got)
	}
}
