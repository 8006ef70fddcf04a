package futex

import (
	"golang.org/x/sys/unix"
)

// Priority-inheritance futexes (FUTEX_LOCK_PI, FUTEX_LOCK_PI2,
// FUTEX_TRYLOCK_PI, FUTEX_UNLOCK_PI).
//
// A PI futex word holds its owner's thread ID, with FUTEX_WAITERS set while
// threads wait for it in the kernel and FUTEX_OWNER_DIED set when a robust
// owner died. User space takes and releases an uncontended lock with
// compare-and-swap alone; the kernel sees the lock when it is contended.
// Here a contended lock is a piState, kept in the key's bucket: the thread
// the waiters wait behind and the waiters in arrival order. Unlocking with
// waiters hands the lock to the oldest one: its TID, with FUTEX_WAITERS,
// goes into the word before it wakes, so ownership never lapses. A thread
// that exits owning such a lock (ThreadExited) hands it over the same way,
// keeping FUTEX_OWNER_DIED, which the robust list walk may have set.
//
// The Sentry does not schedule by priority, so there is nothing to inherit:
// every waiter has the same priority, and Linux orders equal priorities
// first come, first served, as done here. FUTEX_CMP_REQUEUE_PI turns
// FUTEX_WAIT_REQUEUE_PI waiters into waiters of a piState (requeuepi.go).
//
// A lock whose owner is not a live thread fails with ESRCH, so the Manager
// keeps the set of live thread IDs (ThreadStarted, ThreadExited). Its lock,
// threadsMu, comes after bucket locks.
//
// Thread IDs come in two numberings. The Manager's (ThreadStarted,
// ThreadExited, a piState's owner) is kernel-wide; futex words hold the
// IDs of a PID namespace: the caller's (Linux's task_pid_vnr) when it
// takes a lock or hands one over, the new owner's own when it takes over
// from a dead one. A Caller carries the thread's Manager ID and its
// namespace, which translates between the two.

// Namespace translates between the thread IDs futex words hold, which are
// a PID namespace's, and the Manager's kernel-wide thread IDs. The Manager
// calls its methods with bucket locks held, so they may take only locks
// that never wait for a bucket's. A nil Namespace is the identity.
type Namespace interface {
	// ManagerID returns the Manager ID of the thread the namespace
	// numbers tid, 0 if there is none.
	ManagerID(tid uint32) uint32
	// TID returns the namespace's number for the thread whose Manager ID
	// is id, 0 if it is not visible there.
	TID(id uint32) uint32
}

// Caller is the thread a PI futex operation runs for: its Manager ID and
// the PID namespace it lives in (nil when the two numberings agree).
type Caller struct {
	ID uint32
	NS Namespace
}

// Self returns the Caller whose namespace numbers threads as the Manager
// does.
func Self(id uint32) Caller { return Caller{ID: id} }

// tid returns the caller's own ID as its namespace numbers it.
func (c Caller) tid() uint32 { return c.tidOf(c.ID) }

// tidOf returns the ID of the thread with Manager ID id as the caller's
// namespace numbers it, 0 if invisible there.
func (c Caller) tidOf(id uint32) uint32 {
	if c.NS == nil || id == 0 {
		return id
	}
	return c.NS.TID(id)
}

// lookup returns the Manager ID of the thread the caller's namespace
// numbers tid, 0 for none.
func (c Caller) lookup(tid uint32) uint32 {
	if c.NS == nil || tid == 0 {
		return tid
	}
	return c.NS.ManagerID(tid)
}

// piState is a contended PI futex.
//
// Its fields are guarded by the mu of the bucket of key.
type piState struct {
	key Key
	// owner is the thread the waiters wait behind (a Manager ID).
	owner uint32
	// waiters, oldest first.
	waiters []*PIWaiter
}

// PIWaiter is one thread's wait for a PI futex. A thread may reuse one for
// each of its waits, once LockPIComplete has returned.
type PIWaiter struct {
	// C receives a value when the waiter is handed the lock or must retry.
	C <-chan struct{}
	c chan struct{}

	// bucket is where the waiter is queued, nil when it is not; only the
	// waiting thread sets and reads it, but for FUTEX_CMP_REQUEUE_PI,
	// which sets it before the waiting thread may look (requeuepi.go).
	bucket *bucket
	// The fields below are guarded by the mu of bucket.
	state *piState
	// id is the waiting thread's Manager ID, tid its ID in its own PID
	// namespace.
	id   uint32
	tid  uint32
	t    Target
	addr uintptr
	// owned is set when the lock was handed to the waiter.
	owned bool
}

// NewPIWaiter returns a PIWaiter that is not queued.
func NewPIWaiter() *PIWaiter {
	c := make(chan struct{}, 1)
	return &PIWaiter{C: c, c: c}
}

// signal wakes w's thread.
func (w *PIWaiter) signal() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// ThreadStarted records that the thread tid exists: PI futexes may name it
// as their owner.
func (m *Manager) ThreadStarted(tid uint32) {
	m.threadsMu.Lock()
	m.threads[tid] = struct{}{}
	m.threadsMu.Unlock()
}

// threadAlive reports whether tid is a live thread.
func (m *Manager) threadAlive(tid uint32) bool {
	m.threadsMu.Lock()
	defer m.threadsMu.Unlock()
	_, ok := m.threads[tid]
	return ok
}

// setOwner files ps under owner for ThreadExited.
//
// Preconditions: the bucket of ps.key is locked.
func (m *Manager) setOwner(ps *piState, owner uint32) {
	m.threadsMu.Lock()
	defer m.threadsMu.Unlock()
	if old := m.piOwned[ps.owner]; old != nil {
		delete(old, ps)
		if len(old) == 0 {
			delete(m.piOwned, ps.owner)
		}
	}
	ps.owner = owner
	if owner == 0 {
		return
	}
	set := m.piOwned[owner]
	if set == nil {
		set = make(map[*piState]struct{})
		m.piOwned[owner] = set
	}
	set[ps] = struct{}{}
}

// dropState forgets ps once it has no waiters.
//
// Preconditions: b is the bucket of ps.key and is locked.
func (m *Manager) dropState(b *bucket, ps *piState) {
	if b.pi[ps.key] == ps {
		delete(b.pi, ps.key)
	}
	m.setOwner(ps, 0)
}

// LockPIPrepare starts FUTEX_LOCK_PI, FUTEX_LOCK_PI2 or (with try)
// FUTEX_TRYLOCK_PI for the thread c on the futex at addr. It returns true
// if c took the lock at once (the word held no owner; FUTEX_OWNER_DIED is
// kept). Otherwise, if err is nil, w is queued: the caller waits on w.C
// (and its timeout and signals) and calls LockPIComplete. Errors are as on
// Linux: EINVAL for a misaligned address or a word whose owner does not
// match the waiters', EDEADLK if c owns the lock, ESRCH if the owner is
// not a live thread of c's namespace, EAGAIN (EWOULDBLOCK) for a trylock of a held lock, the
// Target's error (EFAULT) if the word cannot be read and written. A held
// lock gets FUTEX_WAITERS set even when the call fails, as on Linux.
//
// Preconditions: w is not queued.
func (m *Manager) LockPIPrepare(w *PIWaiter, t Target, addr uintptr, private bool, c Caller, try bool) (bool, error) {
	tid := c.tid()
	if tid == 0 {
		return false, unix.ESRCH
	}
	k, err := key(t, addr, private)
	if err != nil {
		return false, err
	}
	select {
	case <-w.c:
	default:
	}
	b := m.bucketFor(k)
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		uval, err := t.LoadUint32(addr)
		if err != nil {
			return false, err
		}
		owner := uval & TIDMask
		if owner == tid {
			return false, unix.EDEADLK
		}
		ps := b.pi[k]
		if ps == nil && owner == 0 {
			newval := uval&OwnerDied | tid
			prev, err := t.CompareAndSwapUint32(addr, uval, newval)
			if err != nil {
				return false, err
			}
			if prev != uval {
				continue
			}
			return true, nil
		}
		if ps != nil && owner != c.tidOf(ps.owner) {
			// The word does not name the thread the waiters wait
			// behind: user space broke the protocol.
			return false, unix.EINVAL
		}
		if uval&Waiters == 0 {
			prev, err := t.CompareAndSwapUint32(addr, uval, uval|Waiters)
			if err != nil {
				return false, err
			}
			if prev != uval {
				continue
			}
		}
		var ownerID uint32
		if ps == nil {
			ownerID = c.lookup(owner)
			if ownerID == 0 || !m.threadAlive(ownerID) {
				return false, unix.ESRCH
			}
		}
		if try {
			return false, unix.EAGAIN
		}
		if ps == nil {
			ps = &piState{key: k}
			if b.pi == nil {
				b.pi = make(map[Key]*piState)
			}
			b.pi[k] = ps
			m.setOwner(ps, ownerID)
		}
		w.bucket, w.state, w.id, w.tid, w.t, w.addr, w.owned = b, ps, c.ID, tid, t, addr, false
		ps.waiters = append(ps.waiters, w)
		return false, nil
	}
}

// LockPIComplete ends a wait LockPIPrepare queued: it reports whether the
// lock was handed to w; if not (a timeout, a signal, or a handover that
// failed), w is dequeued and the caller may retry from LockPIPrepare.
func (m *Manager) LockPIComplete(w *PIWaiter) bool {
	b := w.bucket
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w.bucket = nil
	if w.owned {
		w.state = nil
		return true
	}
	ps := w.state
	w.state = nil
	if ps == nil {
		return false
	}
	for i, o := range ps.waiters {
		if o == w {
			ps.waiters = append(ps.waiters[:i], ps.waiters[i+1:]...)
			break
		}
	}
	if len(ps.waiters) == 0 {
		m.dropState(b, ps)
	}
	return false
}

// UnlockPI implements FUTEX_UNLOCK_PI for the thread c: with waiters, the
// oldest is handed the lock (the word becomes its TID as c's namespace
// numbers it, with FUTEX_WAITERS); otherwise the word becomes 0. EPERM if
// c does not own the lock, EAGAIN
// if the word changed under it, EINVAL for a misaligned address, the
// Target's error (EFAULT) if the word cannot be read and written.
func (m *Manager) UnlockPI(t Target, addr uintptr, private bool, c Caller) error {
	tid := c.tid()
	k, err := key(t, addr, private)
	if err != nil {
		return err
	}
	b := m.bucketFor(k)
	b.mu.Lock()
	defer b.mu.Unlock()
	uval, err := t.LoadUint32(addr)
	if err != nil {
		return err
	}
	if tid == 0 || uval&TIDMask != tid {
		return unix.EPERM
	}
	if ps := b.pi[k]; ps != nil && len(ps.waiters) > 0 {
		w := ps.waiters[0]
		prev, err := t.CompareAndSwapUint32(addr, uval, c.tidOf(w.id)|Waiters)
		if err != nil {
			return err
		}
		if prev != uval {
			return unix.EAGAIN
		}
		m.handOver(b, ps)
		return nil
	}
	prev, err := t.CompareAndSwapUint32(addr, uval, 0)
	if err != nil {
		return err
	}
	if prev != uval {
		return unix.EAGAIN
	}
	return nil
}

// handOver gives ps's lock to its oldest waiter, whose TID the word already
// holds, and wakes it.
//
// Preconditions: b is the bucket of ps.key and is locked; ps has waiters.
func (m *Manager) handOver(b *bucket, ps *piState) {
	w := ps.waiters[0]
	ps.waiters = ps.waiters[1:]
	if len(ps.waiters) == 0 {
		m.dropState(b, ps)
	} else {
		m.setOwner(ps, w.id)
	}
	w.owned = true
	w.signal()
}

// ThreadExited forgets the thread with Manager ID tid and hands the contended PI futexes
// it still owns to their oldest waiters, keeping FUTEX_OWNER_DIED (set by
// the robust list walk, which must come first) so that a robust mutex's
// next owner learns of the death. Call it when the thread exits, after its
// robust list.
func (m *Manager) ThreadExited(tid uint32) {
	m.threadsMu.Lock()
	delete(m.threads, tid)
	owned := m.piOwned[tid]
	delete(m.piOwned, tid)
	m.threadsMu.Unlock()
	for ps := range owned {
		b := m.bucketFor(ps.key)
		b.mu.Lock()
		if b.pi[ps.key] == ps && ps.owner == tid && len(ps.waiters) > 0 {
			// The registration was dropped above.
			ps.owner = 0
			m.handOverFromDead(b, ps)
		}
		b.mu.Unlock()
	}
}

// handOverFromDead writes the oldest waiter's TID (in its own namespace,
// as Linux's fixup_pi_state_owner run by the waiter) into the word of ps,
// whose owner died, and hands it the lock. If the word cannot be written
// (its memory is gone), every waiter is woken to retry and find out.
//
// Preconditions: b is the bucket of ps.key and is locked; ps has waiters.
func (m *Manager) handOverFromDead(b *bucket, ps *piState) {
	w := ps.waiters[0]
	for range maxDeathRetries {
		uval, err := w.t.LoadUint32(w.addr)
		if err != nil {
			break
		}
		prev, err := w.t.CompareAndSwapUint32(w.addr, uval, uval&OwnerDied|w.tid|Waiters)
		if err != nil {
			break
		}
		if prev == uval {
			m.handOver(b, ps)
			return
		}
	}
	for _, o := range ps.waiters {
		o.state = nil
		o.signal()
	}
	ps.waiters = nil
	m.dropState(b, ps)
}

// hasPIWaiters reports whether threads wait on key as a PI futex (a plain
// FUTEX_WAKE of it is then EINVAL, as on Linux).
//
// Preconditions: b is key's bucket and is locked.
func (b *bucket) hasPIWaiters(key Key) bool {
	ps := b.pi[key]
	return ps != nil && len(ps.waiters) > 0
}
