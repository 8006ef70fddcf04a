// Package futex implements the Sentry's futexes: the wait queues behind
// futex(2) (FUTEX_WAIT, FUTEX_WAKE, their _BITSET forms, FUTEX_REQUEUE,
// FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP), priority-inheritance locks
// (FUTEX_LOCK_PI, FUTEX_TRYLOCK_PI, FUTEX_UNLOCK_PI; see pi.go) and the
// robust futex lists that a thread leaves behind when it exits or execs
// (set_robust_list(2)).
//
// A Manager, one per kernel, owns every futex wait queue. The futex word
// itself lives in application memory, reached through a Target (the calling
// task's address space), and a waiter is filed under a Key naming that word:
// (address space, address) for a private futex or for a shared futex on
// memory private to one address space, or (memory object, offset) for a
// shared futex on shared memory, so that processes mapping the same page at
// different addresses meet on the same queue. Private and shared keys never
// compare equal, as on Linux, where FUTEX_WAKE_PRIVATE does not wake a
// FUTEX_WAIT.
//
// Waiters hang on a fixed table of buckets, chosen by a hash of the key; a
// bucket holds the waiters of every key that hashes to it, in arrival order.
// A wait is two calls around the caller's blocking: WaitPrepare checks the
// futex word and queues the waiter with the bucket locked across both, so a
// wake that follows a change of the word cannot slip in between and be lost;
// the caller then blocks on Waiter.C (and on its timer and signals) and
// calls WaitComplete, which dequeues the waiter if nothing woke it.
//
// Lock order: bucket.mu, then Manager.threadsMu. A Manager method holds at
// most two bucket locks at once, taken in increasing bucket index. With bucket locks held
// it calls the Target's LoadUint32, CompareAndSwapUint32 and SwapUint32 (and
// nothing else), so those must not call back into the Manager, and whatever
// locks they take come after bucket locks: callers must not hold such locks
// (for instance the address space's) when calling into the Manager. They
// should be quick: a fault that waits for I/O holds up every futex of the
// bucket. SharedKey, PrivateKey and CopyInBytes are called with no bucket
// lock held.
//
// Where futex(2) is vague, this package does what Linux does (checked on
// Linux 6.18): FUTEX_WAKE and FUTEX_WAKE_OP wake one waiter when asked for
// zero or fewer; FUTEX_REQUEUE returns woken plus requeued waiters and
// rejects negative counts with EINVAL; FUTEX_WAKE_OP sign-extends its 12-bit
// arguments, compares as signed, and fails an unknown comparison with ENOSYS
// only after applying the operation; FUTEX_WAKE of a futex with PI waiters
// is EINVAL, and so are FUTEX_WAKE, FUTEX_WAKE_OP and FUTEX_REQUEUE of a
// futex with FUTEX_WAIT_REQUEUE_PI waiters (requeuepi.go). Decoding
// futex_op, timeouts and clocks are the syscall handler's job.
package futex

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// KeyKind says which kind of object a Key names.
type KeyKind uint8

// Key kinds.
const (
	// KindPrivate is the key of a private futex (FUTEX_PRIVATE_FLAG): A
	// identifies the address space, B is the address of the futex word.
	KindPrivate KeyKind = iota + 1
	// KindSharedPrivateMapping is the key of a shared futex on memory only
	// one address space maps (a MAP_PRIVATE or anonymous private mapping):
	// A identifies the address space, B is the address. It differs from
	// KindPrivate so that a private and a shared operation on the same word
	// do not meet, as on Linux.
	KindSharedPrivateMapping
	// KindShared is the key of a shared futex on shared memory (a
	// MAP_SHARED mapping, SysV shared memory): A identifies the memory
	// object (for memory-file pages, the memory file), B is the offset of
	// the futex word in it.
	KindShared
)

// Key identifies a futex word. Keys are comparable; two operations act on
// the same futex exactly when their keys are equal.
type Key struct {
	Kind KeyKind
	A, B uint64
}

// String describes k for logs and test failures.
func (k Key) String() string {
	return fmt.Sprintf("futex.Key{%d, %#x, %#x}", k.Kind, k.A, k.B)
}

// Target is the address space a futex operation acts on. Its memory accesses
// are atomic as seen by application threads (the Sentry maps the same
// memory; sync/atomic on that mapping). Addresses passed in are 4-byte
// aligned. Errors are unix.Errno values (EFAULT when addr is not mapped
// with the needed access) and reach the application unchanged.
type Target interface {
	// LoadUint32 atomically loads the word at addr.
	LoadUint32(addr uintptr) (uint32, error)
	// CompareAndSwapUint32 atomically replaces the word at addr with new if
	// it is old, and returns the value it found.
	CompareAndSwapUint32(addr uintptr, old, new uint32) (prev uint32, err error)
	// SwapUint32 atomically replaces the word at addr with new and returns
	// the value it held.
	SwapUint32(addr uintptr, new uint32) (uint32, error)
	// SharedKey returns the key of a shared (non-private) futex at addr:
	// KindShared naming the memory object and offset when addr is in a
	// shared mapping, KindSharedPrivateMapping with the address space and
	// addr otherwise. EFAULT if addr is not mapped.
	SharedKey(addr uintptr) (Key, error)
	// PrivateKey returns Key{KindPrivate, address space identity, addr}.
	// It does not touch memory: Linux does not fault on the address of a
	// private FUTEX_WAKE.
	PrivateKey(addr uintptr) Key
	// CopyInBytes copies len(dst) bytes from addr, returning how many it
	// copied; an error if fewer.
	CopyInBytes(addr uintptr, dst []byte) (int, error)
}

// Waiter is one task's wait on a futex. A task may keep one Waiter and reuse
// it for each wait, once the previous wait's WaitComplete has returned.
type Waiter struct {
	// C receives a value when the waiter is woken. It is buffered: the
	// waker never blocks, and a wake the caller does not receive (because
	// it timed out first) is discarded by the next WaitPrepare.
	C <-chan struct{}
	c chan struct{}

	// bucket is the bucket whose queue holds the waiter, or nil when the
	// waiter is not queued. It is stored with that bucket's mu held (with
	// both buckets' locks held when a requeue moves the waiter) and loaded
	// without a lock to find which lock to take.
	bucket atomic.Pointer[bucket]

	// woken is set when a wake dequeues the waiter.
	woken atomic.Bool
	// sharedC: c is shared with other waiters (NewWaiterSignalling), so
	// WaitPrepare must not drain it.
	sharedC bool

	// The fields below are guarded by the mu of the bucket holding the
	// waiter.

	// key is the futex the waiter waits on; a requeue changes it.
	key Key
	// bitset is the FUTEX_WAIT_BITSET mask.
	bitset uint32
	// requeuePI is set for a FUTEX_WAIT_REQUEUE_PI wait: the PI futex
	// FUTEX_CMP_REQUEUE_PI may move it to (requeuepi.go).
	requeuePI *RequeuePIWaiter
	// prev and next link the bucket's queue.
	prev, next *Waiter
}

// NewWaiter returns a Waiter that is not queued.
func NewWaiter() *Waiter {
	c := make(chan struct{}, 1)
	return &Waiter{C: c, c: c}
}

// NewWaiterSignalling returns a Waiter that signals c (buffered, capacity
// at least 1) when woken, for a wait on several futexes at once
// (futex_waitv): the caller drains c before queueing its waiters, waits on
// c, and looks at each waiter's Woken after WaitComplete.
func NewWaiterSignalling(c chan struct{}) *Waiter {
	return &Waiter{C: c, c: c, sharedC: true}
}

// Woken reports whether a wake (FUTEX_WAKE, a requeue's wake, FUTEX_WAKE_OP
// or a robust list's death notice) dequeued the waiter during its last
// wait. Call it after WaitComplete: if it is true, the wait succeeded even
// if a timeout or signal arrived too, as on Linux.
func (w *Waiter) Woken() bool {
	return w.woken.Load()
}

// bucketBits sets the number of buckets, 1<<bucketBits.
const bucketBits = 10

// bucket is a queue of waiters whose keys hash alike.
type bucket struct {
	// mu guards the queue and the key, bitset and links of the waiters in
	// it.
	mu         sync.Mutex
	head, tail *Waiter
	// index is the bucket's position in Manager.buckets, fixing lock
	// order.
	index int
	// pi holds the contended PI futexes of keys that hash here (pi.go).
	pi map[Key]*piState
	// Pad to a cache line (64 bytes), so that contended buckets do not
	// share one.
	_ [24]byte
}

// pushBack appends w to b's queue and points w at b.
//
// Preconditions: b.mu is held; w is in no queue.
func (b *bucket) pushBack(w *Waiter) {
	w.prev = b.tail
	w.next = nil
	if b.tail == nil {
		b.head = w
	} else {
		b.tail.next = w
	}
	b.tail = w
	w.bucket.Store(b)
}

// unlink removes w from b's queue, leaving w.bucket for the caller to set.
//
// Preconditions: b.mu is held; w is in b's queue.
func (b *bucket) unlink(w *Waiter) {
	if w.prev == nil {
		b.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		b.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
}

// wake dequeues w and signals it.
//
// Preconditions: b.mu is held; w is in b's queue.
func (b *bucket) wake(w *Waiter) {
	b.unlink(w)
	w.woken.Store(true)
	select {
	case w.c <- struct{}{}:
	default:
	}
	// Last, so that once WaitComplete sees nil, the signal has been sent
	// and cannot land on the waiter's next wait.
	w.bucket.Store(nil)
}

// wakeKey wakes the waiters on key whose bitset intersects bitset, oldest
// first. Like Linux it wakes at least one matching waiter even when n <= 0.
// It returns how many it woke, and EINVAL if it met a FUTEX_WAIT_REQUEUE_PI
// waiter, which only FUTEX_CMP_REQUEUE_PI may move (those woken before it
// stay woken, as on Linux).
//
// Preconditions: b.mu is held; b is key's bucket.
func (b *bucket) wakeKey(key Key, bitset uint32, n int) (int, error) {
	done := 0
	for w := b.head; w != nil; {
		next := w.next
		if w.key == key && w.requeuePI != nil {
			return done, unix.EINVAL
		}
		if w.key == key && w.bitset&bitset != 0 {
			b.wake(w)
			done++
			if done >= n {
				break
			}
		}
		w = next
	}
	return done, nil
}

// Manager holds the futex wait queues of a kernel. Private keys carry the
// address space's identity, so one Manager serves every address space.
type Manager struct {
	buckets [1 << bucketBits]bucket

	// threadsMu guards the live thread IDs and the PI futexes each owns
	// (pi.go). It comes after bucket locks.
	threadsMu sync.Mutex
	threads   map[uint32]struct{}
	piOwned   map[uint32]map[*piState]struct{}
}

// NewManager returns an empty Manager.
func NewManager() *Manager {
	m := &Manager{threads: make(map[uint32]struct{}), piOwned: make(map[uint32]map[*piState]struct{})}
	for i := range m.buckets {
		m.buckets[i].index = i
	}
	return m
}

// bucketFor returns the bucket of key.
func (m *Manager) bucketFor(key Key) *bucket {
	h := key.A ^ bits.RotateLeft64(key.B, 32) ^ uint64(key.Kind)<<56
	h *= 0x9e3779b97f4a7c15
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return &m.buckets[h>>(64-bucketBits)]
}

// lockPair locks b1 and b2 (which may be the same bucket) in lock order.
func lockPair(b1, b2 *bucket) {
	switch {
	case b1 == b2:
		b1.mu.Lock()
	case b1.index < b2.index:
		b1.mu.Lock()
		b2.mu.Lock()
	default:
		b2.mu.Lock()
		b1.mu.Lock()
	}
}

// unlockPair unlocks what lockPair(b1, b2) locked.
func unlockPair(b1, b2 *bucket) {
	b1.mu.Unlock()
	if b2 != b1 {
		b2.mu.Unlock()
	}
}

// key returns the key of the futex word at addr: EINVAL if addr is not
// 4-byte aligned, the Target's error if a shared key cannot be found.
func key(t Target, addr uintptr, private bool) (Key, error) {
	if addr%4 != 0 {
		return Key{}, unix.EINVAL
	}
	if private {
		return t.PrivateKey(addr), nil
	}
	return t.SharedKey(addr)
}

// WaitPrepare starts a FUTEX_WAIT or FUTEX_WAIT_BITSET: it queues w on the
// futex at addr if the word there holds val, with bitset as its mask
// (BitsetMatchAny for FUTEX_WAIT). The check and the queueing are atomic
// with respect to every other operation on the futex. It returns EINVAL if
// addr is misaligned or bitset is 0, EAGAIN if the word is not val, the
// Target's error (EFAULT) if the word cannot be read; w is queued only if it
// returns nil, and then the caller waits on w.C (and whatever else may end
// the wait) and must call WaitComplete.
//
// Preconditions: w is not queued (it is new, or WaitComplete returned).
func (m *Manager) WaitPrepare(w *Waiter, t Target, addr uintptr, private bool, val uint32, bitset uint32) error {
	if bitset == 0 {
		return unix.EINVAL
	}
	k, err := key(t, addr, private)
	if err != nil {
		return err
	}
	if w.bucket.Load() != nil {
		panic("futex: WaitPrepare of a queued waiter")
	}
	// Forget the last wait.
	w.woken.Store(false)
	if !w.sharedC {
		select {
		case <-w.c:
		default:
		}
	}

	b := m.bucketFor(k)
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, err := t.LoadUint32(addr)
	if err != nil {
		return err
	}
	if cur != val {
		return unix.EAGAIN
	}
	w.key = k
	w.bitset = bitset
	b.pushBack(w)
	return nil
}

// WaitComplete ends a wait that WaitPrepare started: it dequeues w if no
// wake did. It is safe against wakes and requeues running at the same time,
// and calling it again is harmless. Afterwards w.Woken says whether a wake
// ended the wait.
func (m *Manager) WaitComplete(w *Waiter) {
	for {
		b := w.bucket.Load()
		if b == nil {
			return
		}
		b.mu.Lock()
		// A requeue may have moved w to another bucket before we got the
		// lock; then try that one.
		if w.bucket.Load() == b {
			b.unlink(w)
			w.bucket.Store(nil)
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

// Wake implements FUTEX_WAKE and FUTEX_WAKE_BITSET: it wakes up to n of the
// waiters on the futex at addr whose bitset intersects bitset
// (BitsetMatchAny for FUTEX_WAKE), oldest first, and returns how many it
// woke. Like Linux, n <= 0 wakes one waiter. It returns EINVAL if addr is
// misaligned or bitset is 0, and for a shared futex the Target's error
// (EFAULT) if addr is not mapped; a private wake does not touch memory.
func (m *Manager) Wake(t Target, addr uintptr, private bool, bitset uint32, n int) (int, error) {
	if bitset == 0 {
		return 0, unix.EINVAL
	}
	k, err := key(t, addr, private)
	if err != nil {
		return 0, err
	}
	b := m.bucketFor(k)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hasPIWaiters(k) {
		return 0, unix.EINVAL
	}
	return b.wakeKey(k, bitset, n)
}

// Requeue implements FUTEX_REQUEUE: it wakes up to nwake waiters on the
// futex at addr and moves up to nreq of the rest to the futex at naddr, and
// returns the number woken plus the number moved (what Linux returns,
// although futex(2) says only the woken). Unlike Wake, nwake 0 wakes none.
// Bitsets are ignored, as on Linux. It returns EINVAL if nwake or nreq is
// negative (the syscall's val and val2 as C ints) or an address is
// misaligned, and for shared futexes the Target's error if an address is
// not mapped.
func (m *Manager) Requeue(t Target, addr, naddr uintptr, private bool, nwake, nreq int) (int, error) {
	return m.requeue(t, addr, naddr, private, nwake, nreq, false, 0)
}

// CmpRequeue implements FUTEX_CMP_REQUEUE: Requeue, done only if the word
// at addr holds val (checked atomically with the requeue); EAGAIN if not,
// the Target's error (EFAULT) if it cannot be read.
func (m *Manager) CmpRequeue(t Target, addr, naddr uintptr, private bool, nwake, nreq int, val uint32) (int, error) {
	return m.requeue(t, addr, naddr, private, nwake, nreq, true, val)
}

func (m *Manager) requeue(t Target, addr, naddr uintptr, private bool, nwake, nreq int, cmp bool, val uint32) (int, error) {
	if nwake < 0 || nreq < 0 {
		return 0, unix.EINVAL
	}
	k1, err := key(t, addr, private)
	if err != nil {
		return 0, err
	}
	k2, err := key(t, naddr, private)
	if err != nil {
		return 0, err
	}
	b1, b2 := m.bucketFor(k1), m.bucketFor(k2)
	lockPair(b1, b2)
	defer unlockPair(b1, b2)

	if cmp {
		cur, err := t.LoadUint32(addr)
		if err != nil {
			return 0, err
		}
		if cur != val {
			return 0, unix.EAGAIN
		}
	}

	done := 0
	for w := b1.head; w != nil; {
		next := w.next
		if done-nwake >= nreq {
			break
		}
		if w.key == k1 && w.requeuePI != nil {
			// FUTEX_WAIT_REQUEUE_PI pairs with FUTEX_CMP_REQUEUE_PI
			// only; what was moved before stays moved, as on Linux.
			return 0, unix.EINVAL
		}
		if w.key == k1 {
			done++
			switch {
			case done <= nwake:
				b1.wake(w)
			case b1 == b2:
				// Same queue: the waiter keeps its place.
				w.key = k2
			default:
				b1.unlink(w)
				w.key = k2
				b2.pushBack(w)
			}
		}
		w = next
	}
	return done, nil
}
