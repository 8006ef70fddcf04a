package futex

import "golang.org/x/sys/unix"

// PI condition variables (FUTEX_WAIT_REQUEUE_PI, FUTEX_CMP_REQUEUE_PI).
//
// A FUTEX_WAIT_REQUEUE_PI waiter waits on a plain futex (the condition
// variable), naming the PI futex (the mutex) it expects to be moved to. It
// is an ordinary Waiter with requeuePI set, and a PIWaiter on standby
// sharing its channel. FUTEX_CMP_REQUEUE_PI, with both buckets locked,
// first tries to take the PI futex for the oldest waiter (the word gets
// its TID): that waiter is woken owning the lock. The others (up to the
// requeue count) leave the plain queue and join the PI futex's piState as
// its PIWaiters, so that FUTEX_UNLOCK_PI (or their owner's death) hands
// them the lock in turn. The waiting thread learns which happened from
// WaitRequeuePIComplete: Waiter.bucket is cleared last, with an atomic
// store, by whoever moves the waiter on.

// RequeuePIWaiter is one thread's FUTEX_WAIT_REQUEUE_PI.
type RequeuePIWaiter struct {
	// C receives a value when the waiter is handed the PI futex (or must
	// retry taking it).
	C <-chan struct{}
	c chan struct{}
	w *Waiter
	// pw is the waiter's place in the PI futex's queue once requeued.
	pw *PIWaiter

	// The fields below are set before the waiter is queued and only read
	// afterwards.
	key2  Key
	addr2 uintptr
	// id is the waiting thread's Manager ID, tid its ID in its own PID
	// namespace.
	id  uint32
	tid uint32
	t   Target

	// locked is set, before the wake that dequeues w, when the requeue
	// took the PI futex for the waiter.
	locked bool
}

// NewRequeuePIWaiter returns a RequeuePIWaiter that is not queued.
func NewRequeuePIWaiter() *RequeuePIWaiter {
	c := make(chan struct{}, 1)
	return &RequeuePIWaiter{
		C:  c,
		c:  c,
		w:  NewWaiterSignalling(c),
		pw: &PIWaiter{C: c, c: c},
	}
}

// WaitRequeuePIPrepare starts FUTEX_WAIT_REQUEUE_PI for the thread c: it
// queues rw on the futex at addr if the word there holds val, to be moved
// to the PI futex at addr2 by FUTEX_CMP_REQUEUE_PI. Errors: EINVAL if the
// two are the same futex or an address is misaligned, EAGAIN if the word
// is not val, the Target's error (EFAULT). If it returns nil the caller
// waits on rw.C and calls WaitRequeuePIComplete.
func (m *Manager) WaitRequeuePIPrepare(rw *RequeuePIWaiter, t Target, addr, addr2 uintptr, private bool, val uint32, c Caller) error {
	if addr == addr2 {
		return unix.EINVAL
	}
	k2, err := key(t, addr2, private)
	if err != nil {
		return err
	}
	k1, err := key(t, addr, private)
	if err != nil {
		return err
	}
	// Distinct addresses may still be one shared futex.
	if k1 == k2 {
		return unix.EINVAL
	}
	select {
	case <-rw.c:
	default:
	}
	rw.key2, rw.addr2, rw.id, rw.tid, rw.t, rw.locked = k2, addr2, c.ID, c.tid(), t, false
	rw.w.requeuePI = rw
	return m.WaitPrepare(rw.w, t, addr, private, val, BitsetMatchAny)
}

// RequeuePIResult is where a FUTEX_WAIT_REQUEUE_PI wait ended.
type RequeuePIResult int

// Where a FUTEX_WAIT_REQUEUE_PI wait ended.
const (
	// RequeuePINotRequeued: still on the plain futex when it ended (a
	// timeout, a signal); it has been dequeued.
	RequeuePINotRequeued RequeuePIResult = iota
	// RequeuePILocked: the waiter owns the PI futex.
	RequeuePILocked
	// RequeuePIRequeued: moved to the PI futex but not handed it (a
	// timeout, a signal, or an owner death that must be retried); it has
	// been dequeued from there too.
	RequeuePIRequeued
)

// WaitRequeuePIComplete ends a wait WaitRequeuePIPrepare started and says
// where it ended.
func (m *Manager) WaitRequeuePIComplete(rw *RequeuePIWaiter) RequeuePIResult {
	for {
		b := rw.w.bucket.Load()
		if b == nil {
			break
		}
		b.mu.Lock()
		if rw.w.bucket.Load() == b {
			b.unlink(rw.w)
			rw.w.bucket.Store(nil)
			b.mu.Unlock()
			rw.w.requeuePI = nil
			return RequeuePINotRequeued
		}
		b.mu.Unlock()
	}
	rw.w.requeuePI = nil
	// The store that cleared the bucket came after locked and pw were
	// set.
	if rw.locked {
		return RequeuePILocked
	}
	if m.LockPIComplete(rw.pw) {
		return RequeuePILocked
	}
	return RequeuePIRequeued
}

// CmpRequeuePI implements FUTEX_CMP_REQUEUE_PI: if the word at addr holds
// val, it takes the PI futex at addr2 for the oldest FUTEX_WAIT_REQUEUE_PI
// waiter on addr if the futex is free (waking it as its owner, its TID as
// the namespace of the caller c numbers it in the word), and moves
// up to nreq other waiters (nreq+1 when the lock was not free) to wait for
// the PI futex. It returns the number woken plus moved. Errors, as on
// Linux: EINVAL for negative counts, nwake other than 1, one futex for both,
// a waiter that is not a FUTEX_WAIT_REQUEUE_PI one or that expects another
// PI futex, a PI futex word that does not match its waiters' owner, or a
// misaligned address; EAGAIN if the word is not val; EDEADLK if the oldest
// waiter already owns the PI futex; ESRCH if the PI futex's owner is not a
// live thread of c's namespace; the Target's error (EFAULT).
func (m *Manager) CmpRequeuePI(t Target, addr, addr2 uintptr, private bool, nwake, nreq int, val uint32, c Caller) (int, error) {
	if nwake < 0 || nreq < 0 || addr == addr2 || nwake != 1 {
		return 0, unix.EINVAL
	}
	k1, err := key(t, addr, private)
	if err != nil {
		return 0, err
	}
	k2, err := key(t, addr2, private)
	if err != nil {
		return 0, err
	}
	if k1 == k2 {
		return 0, unix.EINVAL
	}
	b1, b2 := m.bucketFor(k1), m.bucketFor(k2)
	lockPair(b1, b2)
	defer unlockPair(b1, b2)
	cur, err := t.LoadUint32(addr)
	if err != nil {
		return 0, err
	}
	if cur != val {
		return 0, unix.EAGAIN
	}

	var top *Waiter
	for w := b1.head; w != nil; w = w.next {
		if w.key == k1 {
			top = w
			break
		}
	}
	if top == nil {
		return 0, nil
	}
	if top.requeuePI == nil || top.requeuePI.key2 != k2 {
		return 0, unix.EINVAL
	}
	done := 0
	// Once woken, top's thread clears top.requeuePI (without our
	// locks): read what the requeue needs of it first.
	topID := top.requeuePI.id
	ps, locked, err := m.proxyLockPI(b2, t, addr2, k2, topID, nreq > 0, c)
	if err != nil {
		return 0, err
	}
	if locked {
		top.requeuePI.locked = true
		b1.wake(top)
		done = 1
	}
	for w := b1.head; w != nil; {
		next := w.next
		if done-nwake >= nreq {
			break
		}
		if w.key != k1 {
			w = next
			continue
		}
		rw := w.requeuePI
		if rw == nil || rw.key2 != k2 {
			return 0, unix.EINVAL
		}
		if ps == nil {
			// The lock went to the oldest waiter: the others queue
			// behind it.
			ps = &piState{key: k2}
			if b2.pi == nil {
				b2.pi = make(map[Key]*piState)
			}
			b2.pi[k2] = ps
			m.setOwner(ps, topID)
		}
		pw := rw.pw
		pw.bucket, pw.state, pw.id, pw.tid, pw.t, pw.addr, pw.owned = b2, ps, rw.id, rw.tid, rw.t, rw.addr2, false
		ps.waiters = append(ps.waiters, pw)
		b1.unlink(w)
		// Last: the waiting thread reads pw once it sees nil.
		w.bucket.Store(nil)
		done++
		w = next
	}
	return done, nil
}

// proxyLockPI takes the PI futex at addr2 (key k2, bucket b2) for the
// thread with Manager ID id, which is waiting elsewhere, if it is free:
// then locked is true and the word holds its TID as the namespace of c
// (the requeuing thread) numbers it, with FUTEX_WAITERS if waiters will
// follow.
// Otherwise it returns the futex's piState, made if need be, with
// FUTEX_WAITERS set in the word, for waiters to join. The checks are
// LockPIPrepare's.
//
// Preconditions: b2 is k2's bucket and is locked.
func (m *Manager) proxyLockPI(b2 *bucket, t Target, addr2 uintptr, k2 Key, id uint32, waiters bool, c Caller) (*piState, bool, error) {
	tid := c.tidOf(id)
	for {
		uval, err := t.LoadUint32(addr2)
		if err != nil {
			return nil, false, err
		}
		owner := uval & TIDMask
		if owner == tid {
			return nil, false, unix.EDEADLK
		}
		ps := b2.pi[k2]
		if ps == nil && owner == 0 {
			newval := uval&OwnerDied | tid
			if waiters {
				newval |= Waiters
			}
			prev, err := t.CompareAndSwapUint32(addr2, uval, newval)
			if err != nil {
				return nil, false, err
			}
			if prev != uval {
				continue
			}
			return nil, true, nil
		}
		if ps != nil && owner != c.tidOf(ps.owner) {
			return nil, false, unix.EINVAL
		}
		if uval&Waiters == 0 {
			prev, err := t.CompareAndSwapUint32(addr2, uval, uval|Waiters)
			if err != nil {
				return nil, false, err
			}
			if prev != uval {
				continue
			}
		}
		if ps == nil {
			ownerID := c.lookup(owner)
			if ownerID == 0 || !m.threadAlive(ownerID) {
				return nil, false, unix.ESRCH
			}
			ps = &piState{key: k2}
			if b2.pi == nil {
				b2.pi = make(map[Key]*piState)
			}
			b2.pi[k2] = ps
			m.setOwner(ps, ownerID)
		}
		return ps, false, nil
	}
}
