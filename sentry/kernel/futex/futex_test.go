package futex

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const (
	base = 0x10000
	size = 0x1000
	fa   = base + 0x100 // a futex word
	fb   = base + 0x200 // another
)

// prepare queues a new waiter on addr, which must hold val.
func prepare(t *testing.T, m *Manager, as *fakeAS, addr uintptr, private bool, val, bitset uint32) *Waiter {
	t.Helper()
	w := NewWaiter()
	if err := m.WaitPrepare(w, as, addr, private, val, bitset); err != nil {
		t.Fatalf("WaitPrepare(%#x, private=%v, val=%d, bitset=%#x): %v", addr, private, val, bitset, err)
	}
	return w
}

// signalled reports whether w's channel holds a wake, without taking it.
func signalled(w *Waiter) bool {
	return len(w.c) == 1
}

func TestBucketIsACacheLine(t *testing.T) {
	if got := reflect.TypeOf(bucket{}).Size(); got != 64 {
		t.Errorf("bucket is %d bytes, want 64", got)
	}
}

func TestWaitPrepareErrors(t *testing.T) {
	as := newFakeAS(1, base, size)
	as.store(t, fa, 5)
	for _, tc := range []struct {
		name    string
		addr    uintptr
		private bool
		val     uint32
		bitset  uint32
		want    error
	}{
		{"misaligned", fa + 2, true, 5, BitsetMatchAny, unix.EINVAL},
		{"misaligned shared", fa + 1, false, 5, BitsetMatchAny, unix.EINVAL},
		{"bitset 0", fa, true, 5, 0, unix.EINVAL},
		{"bitset 0 and mismatch", fa, true, 6, 0, unix.EINVAL},
		{"mismatch", fa, true, 6, BitsetMatchAny, unix.EAGAIN},
		{"mismatch shared", fa, false, 4, 1, unix.EAGAIN},
		{"unmapped private", base + size, true, 0, BitsetMatchAny, unix.EFAULT},
		{"unmapped shared", 0x4, false, 0, BitsetMatchAny, unix.EFAULT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			w := NewWaiter()
			err := m.WaitPrepare(w, as, tc.addr, tc.private, tc.val, tc.bitset)
			if !errors.Is(err, tc.want) {
				t.Fatalf("WaitPrepare = %v, want %v", err, tc.want)
			}
			if n := m.queued(t); n != 0 {
				t.Errorf("%d waiters queued after a failed WaitPrepare", n)
			}
			m.WaitComplete(w) // harmless on an unqueued waiter
			if w.Woken() {
				t.Errorf("Woken after a failed WaitPrepare")
			}
		})
	}
}

func TestWakeOrderAndCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want int
	}{
		// Linux wakes one waiter for n <= 0 (checked on Linux 6.18).
		{"n=-1", -1, 1},
		{"n=0", 0, 1},
		{"n=1", 1, 1},
		{"n=2", 2, 2},
		{"n=3", 3, 3},
		{"n=INT_MAX", 1<<31 - 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			ws := []*Waiter{
				prepare(t, m, as, fa, true, 0, BitsetMatchAny),
				prepare(t, m, as, fa, true, 0, BitsetMatchAny),
				prepare(t, m, as, fa, true, 0, BitsetMatchAny),
			}
			other := prepare(t, m, as, fb, true, 0, BitsetMatchAny)
			n, err := m.Wake(as, fa, true, BitsetMatchAny, tc.n)
			if err != nil || n != tc.want {
				t.Fatalf("Wake = %d, %v; want %d", n, err, tc.want)
			}
			// The oldest waiters are woken first.
			for i, w := range ws {
				want := i < tc.want
				if w.Woken() != want || signalled(w) != want {
					t.Errorf("waiter %d: Woken %v, signalled %v; want %v", i, w.Woken(), signalled(w), want)
				}
			}
			if other.Woken() || signalled(other) {
				t.Errorf("waiter on another futex woken")
			}
			if got, want := m.queued(t), 4-tc.want; got != want {
				t.Errorf("%d waiters queued, want %d", got, want)
			}
			for _, w := range append(ws, other) {
				m.WaitComplete(w)
			}
			if got := m.queued(t); got != 0 {
				t.Errorf("%d waiters queued after WaitComplete", got)
			}
		})
	}
}

func TestWakeNoWaitersAndErrors(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for _, tc := range []struct {
		name    string
		addr    uintptr
		private bool
		bitset  uint32
		want    int
		err     error
	}{
		{"no waiters", fa, true, BitsetMatchAny, 0, nil},
		{"misaligned", fa + 3, true, BitsetMatchAny, 0, unix.EINVAL},
		{"bitset 0", fa, true, 0, 0, unix.EINVAL},
		// Linux does not touch memory for a private wake.
		{"unmapped private", 0x4, true, BitsetMatchAny, 0, nil},
		{"unmapped shared", 0x4, false, BitsetMatchAny, 0, unix.EFAULT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := m.Wake(as, tc.addr, tc.private, tc.bitset, 1)
			if n != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("Wake = %d, %v; want %d, %v", n, err, tc.want, tc.err)
			}
		})
	}
}

func TestBitset(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wait   []uint32 // bitsets of the waiters, oldest first
		wake   uint32
		n      int
		woken  []bool
		nwoken int
	}{
		{"match any wakes all", []uint32{1, 2, 4}, BitsetMatchAny, 10, []bool{true, true, true}, 3},
		{"one bit", []uint32{1, 2, 4}, 2, 10, []bool{false, true, false}, 1},
		{"intersection", []uint32{3, 6, 8}, 2, 10, []bool{true, true, false}, 2},
		{"none match", []uint32{1, 2}, 4, 10, []bool{false, false}, 0},
		{"n limits matches only", []uint32{1, 2, 2, 2}, 2, 2, []bool{false, true, true, false}, 2},
		{"n=0 wakes first match", []uint32{1, 2, 2}, 2, 0, []bool{false, true, false}, 1},
		{"waiter any, waker one bit", []uint32{BitsetMatchAny}, 0x80000000, 1, []bool{true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			var ws []*Waiter
			for _, b := range tc.wait {
				ws = append(ws, prepare(t, m, as, fa, true, 0, b))
			}
			n, err := m.Wake(as, fa, true, tc.wake, tc.n)
			if err != nil || n != tc.nwoken {
				t.Fatalf("Wake = %d, %v; want %d", n, err, tc.nwoken)
			}
			for i, w := range ws {
				if w.Woken() != tc.woken[i] {
					t.Errorf("waiter %d (bitset %#x): Woken %v, want %v", i, tc.wait[i], w.Woken(), tc.woken[i])
				}
				m.WaitComplete(w)
			}
		})
	}
}

func TestKeysPrivateShared(t *testing.T) {
	mem := newFakeMem(77, size)
	// Two processes mapping the same shared memory at different addresses.
	p1 := &fakeAS{id: 1, mem: mem, base: base, shared: true}
	p2 := &fakeAS{id: 2, mem: mem, base: 0x70000, shared: true}
	// Two processes with private memory at the same address.
	q1 := newFakeAS(3, base, size)
	q2 := newFakeAS(4, base, size)
	for _, tc := range []struct {
		name        string
		waitAS      *fakeAS
		waitAddr    uintptr
		waitPrivate bool
		wakeAS      *fakeAS
		wakeAddr    uintptr
		wakePrivate bool
		want        int
	}{
		{"shared across processes", p1, base + 8, false, p2, 0x70000 + 8, false, 1},
		{"shared, other offset", p1, base + 8, false, p2, 0x70000 + 12, false, 0},
		{"shared wait, private wake", p1, base + 8, false, p1, base + 8, true, 0},
		{"private wait, shared wake", p1, base + 8, true, p1, base + 8, false, 0},
		{"private across processes", p1, base + 8, true, p2, 0x70000 + 8, true, 0},
		{"private same process", q1, fa, true, q1, fa, true, 1},
		{"private, same address, other process", q1, fa, true, q2, fa, true, 0},
		{"shared on private memory, same process", q1, fa, false, q1, fa, false, 1},
		{"shared on private memory, other process", q1, fa, false, q2, fa, false, 0},
		{"shared on private memory, private wake", q1, fa, false, q1, fa, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			w := prepare(t, m, tc.waitAS, tc.waitAddr, tc.waitPrivate, 0, BitsetMatchAny)
			defer m.WaitComplete(w)
			n, err := m.Wake(tc.wakeAS, tc.wakeAddr, tc.wakePrivate, BitsetMatchAny, 1)
			if err != nil || n != tc.want {
				t.Errorf("Wake = %d, %v; want %d", n, err, tc.want)
			}
		})
	}
}

func TestRequeue(t *testing.T) {
	for _, tc := range []struct {
		name        string
		nwake, nreq int
		want        int // return value: woken + requeued
		woken       int
		moved       int
	}{
		{"0 0", 0, 0, 0, 0, 0},
		{"1 0", 1, 0, 1, 1, 0},
		{"0 1", 0, 1, 1, 0, 1},
		{"1 1", 1, 1, 2, 1, 1},
		{"0 2", 0, 2, 2, 0, 2},
		{"2 10", 2, 10, 5, 2, 3},
		{"10 10", 10, 10, 5, 5, 0},
		{"0 max", 0, 1<<31 - 1, 5, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			var ws []*Waiter
			for range 5 {
				ws = append(ws, prepare(t, m, as, fa, true, 0, 1))
			}
			n, err := m.Requeue(as, fa, fb, true, tc.nwake, tc.nreq)
			if err != nil || n != tc.want {
				t.Fatalf("Requeue = %d, %v; want %d", n, err, tc.want)
			}
			// The oldest are woken, the next ones moved, the rest stay.
			for i, w := range ws {
				if want := i < tc.woken; w.Woken() != want {
					t.Errorf("waiter %d: Woken %v, want %v", i, w.Woken(), want)
				}
			}
			// Requeued waiters keep their bitset for later wakes: wake
			// them on fb with a bitset they do not match first.
			if n, _ := m.Wake(as, fb, true, 2, 100); n != 0 {
				t.Errorf("Wake(fb, bitset 2) woke %d waiters with bitset 1", n)
			}
			if n, _ := m.Wake(as, fb, true, BitsetMatchAny, 100); n != tc.moved {
				t.Errorf("Wake(fb) woke %d, want %d requeued", n, tc.moved)
			}
			if n, _ := m.Wake(as, fa, true, BitsetMatchAny, 100); n != 5-tc.woken-tc.moved {
				t.Errorf("Wake(fa) woke %d, want %d left", n, 5-tc.woken-tc.moved)
			}
			for _, w := range ws {
				if !w.Woken() {
					t.Errorf("waiter never woken")
				}
				m.WaitComplete(w)
			}
		})
	}
}

func TestRequeueErrors(t *testing.T) {
	as := newFakeAS(1, base, size)
	as.store(t, fa, 7)
	for _, tc := range []struct {
		name        string
		addr, naddr uintptr
		private     bool
		nwake, nreq int
		cmp         bool
		val         uint32
		err         error
	}{
		{"nwake negative", fa, fb, true, -1, 1, false, 0, unix.EINVAL},
		{"nreq negative", fa, fb, true, 1, -1, false, 0, unix.EINVAL},
		// The sign check comes before the comparison, as on Linux.
		{"cmp negative mismatch", fa, fb, true, -1, 1, true, 99, unix.EINVAL},
		{"cmp mismatch", fa, fb, true, 1, 1, true, 99, unix.EAGAIN},
		{"cmp match", fa, fb, true, 1, 1, true, 7, nil},
		{"misaligned addr", fa + 1, fb, true, 1, 1, false, 0, unix.EINVAL},
		{"misaligned naddr", fa, fb + 2, true, 1, 1, false, 0, unix.EINVAL},
		{"unmapped naddr private", fa, 0x4, true, 1, 1, false, 0, nil},
		{"unmapped naddr shared", fa, 0x4, false, 1, 1, false, 0, unix.EFAULT},
		{"cmp unmapped addr private", 0x4, fb, true, 1, 1, true, 0, unix.EFAULT},
		{"unmapped addr private no cmp", 0x4, fb, true, 1, 1, false, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			var err error
			if tc.cmp {
				_, err = m.CmpRequeue(as, tc.addr, tc.naddr, tc.private, tc.nwake, tc.nreq, tc.val)
			} else {
				_, err = m.Requeue(as, tc.addr, tc.naddr, tc.private, tc.nwake, tc.nreq)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestCmpRequeue(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	as.store(t, fa, 3)
	var ws []*Waiter
	for range 4 {
		ws = append(ws, prepare(t, m, as, fa, true, 3, BitsetMatchAny))
	}
	if n, err := m.CmpRequeue(as, fa, fb, true, 1, 10, 4); err != unix.EAGAIN || n != 0 {
		t.Fatalf("CmpRequeue with a stale value = %d, %v; want EAGAIN", n, err)
	}
	if got := m.queued(t); got != 4 {
		t.Fatalf("failed CmpRequeue changed the queue: %d queued", got)
	}
	n, err := m.CmpRequeue(as, fa, fb, true, 1, 2, 3)
	if err != nil || n != 3 {
		t.Fatalf("CmpRequeue = %d, %v; want 3", n, err)
	}
	if !ws[0].Woken() || ws[1].Woken() || ws[2].Woken() || ws[3].Woken() {
		t.Errorf("wrong waiters woken")
	}
	// FIFO order is kept on the new futex.
	if n, _ := m.Wake(as, fb, true, BitsetMatchAny, 1); n != 1 || !ws[1].Woken() || ws[2].Woken() {
		t.Errorf("Wake(fb, 1) = %d; want the first requeued waiter woken", n)
	}
	if n, _ := m.Wake(as, fa, true, BitsetMatchAny, 10); n != 1 || !ws[3].Woken() {
		t.Errorf("Wake(fa) = %d; want the one left", n)
	}
	for _, w := range ws {
		m.WaitComplete(w)
	}
	if got := m.queued(t); got != 0 {
		t.Errorf("%d queued after WaitComplete", got)
	}
}

// sameBucketAddrs finds two private addresses of as whose keys share a
// bucket.
func sameBucketAddrs(t *testing.T, m *Manager, as *fakeAS) (uintptr, uintptr) {
	t.Helper()
	seen := map[*bucket]uintptr{}
	for a := uintptr(base); a < base+size; a += 4 {
		b := m.bucketFor(as.PrivateKey(a))
		if prev, ok := seen[b]; ok {
			return prev, a
		}
		seen[b] = a
	}
	t.Skip("no two addresses share a bucket")
	return 0, 0
}

func TestRequeueSameBucket(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	a1, a2 := sameBucketAddrs(t, m, as)
	w1 := prepare(t, m, as, a1, true, 0, BitsetMatchAny)
	w2 := prepare(t, m, as, a2, true, 0, BitsetMatchAny)
	w3 := prepare(t, m, as, a1, true, 0, BitsetMatchAny)
	if n, err := m.Requeue(as, a1, a2, true, 0, 10); err != nil || n != 2 {
		t.Fatalf("Requeue = %d, %v; want 2", n, err)
	}
	if n, _ := m.Wake(as, a1, true, BitsetMatchAny, 10); n != 0 {
		t.Errorf("Wake(a1) = %d after requeueing all away", n)
	}
	if n, _ := m.Wake(as, a2, true, BitsetMatchAny, 10); n != 3 || !w1.Woken() || !w2.Woken() || !w3.Woken() {
		t.Errorf("Wake(a2) = %d, want 3", n)
	}
}

func TestRequeueToSelf(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	var ws []*Waiter
	for range 3 {
		ws = append(ws, prepare(t, m, as, fa, true, 0, BitsetMatchAny))
	}
	// Each waiter is counted once, as on Linux.
	if n, err := m.Requeue(as, fa, fa, true, 1, 10); err != nil || n != 3 {
		t.Fatalf("Requeue(fa, fa) = %d, %v; want 3", n, err)
	}
	if n, _ := m.Wake(as, fa, true, BitsetMatchAny, 10); n != 2 {
		t.Errorf("Wake = %d, want 2", n)
	}
}

func TestTimeoutThenWaitComplete(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	w := prepare(t, m, as, fa, true, 0, BitsetMatchAny)
	select {
	case <-w.C:
		t.Fatal("woken with no waker")
	case <-time.After(10 * time.Millisecond):
	}
	m.WaitComplete(w)
	m.WaitComplete(w) // idempotent
	if w.Woken() {
		t.Error("Woken after a timeout")
	}
	if n, _ := m.Wake(as, fa, true, BitsetMatchAny, 1); n != 0 {
		t.Errorf("Wake found %d waiters after WaitComplete", n)
	}

	// Reuse: a wake that lands while the waiter times out is not received;
	// the next wait must not see it.
	if err := m.WaitPrepare(w, as, fa, true, 0, BitsetMatchAny); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.Wake(as, fa, true, BitsetMatchAny, 1); n != 1 {
		t.Fatalf("Wake = %d, want 1", n)
	}
	m.WaitComplete(w)
	if !w.Woken() {
		t.Error("not Woken after a wake raced with the timeout")
	}
	if err := m.WaitPrepare(w, as, fa, true, 0, BitsetMatchAny); err != nil {
		t.Fatal(err)
	}
	if w.Woken() || signalled(w) {
		t.Error("the previous wait's wake leaked into the next wait")
	}
	m.WaitComplete(w)
}

func TestWaitCompleteAfterRequeue(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	w := prepare(t, m, as, fa, true, 0, BitsetMatchAny)
	if n, _ := m.Requeue(as, fa, fb, true, 0, 1); n != 1 {
		t.Fatalf("Requeue = %d, want 1", n)
	}
	m.WaitComplete(w)
	if w.Woken() {
		t.Error("requeued waiter reported Woken")
	}
	if n := m.queued(t); n != 0 {
		t.Errorf("%d waiters left queued", n)
	}
	if n, _ := m.Wake(as, fb, true, BitsetMatchAny, 1); n != 0 {
		t.Errorf("Wake(fb) found %d waiters", n)
	}
}

func TestWaitPrepareQueuedPanics(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	w := prepare(t, m, as, fa, true, 0, BitsetMatchAny)
	defer m.WaitComplete(w)
	defer func() {
		if recover() == nil {
			t.Error("WaitPrepare of a queued waiter did not panic")
		}
	}()
	m.WaitPrepare(w, as, fb, true, 0, BitsetMatchAny)
}
