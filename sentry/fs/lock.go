package fs

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Advisory locks: POSIX record locks (fcntl F_SETLK, owned by a process),
// open file description locks (F_OFD_SETLK, owned by a description) and
// flock(2) locks (whole-file, owned by a description, in a namespace of
// their own). Locks belong to the inode, named by (device, inode number).
// An owner's locks of one type that touch or overlap are kept merged, as
// Linux keeps them, so F_GETLK reports the merged range. A POSIX owner
// blocked in F_SETLKW is recorded in blocked, so that a request that would
// close a cycle of owners waiting on each other fails with EDEADLK.
// locksMu is a leaf lock.

// LockEOF is the end of a lock that runs to the end of the file.
const LockEOF = ^uint64(0)

// Lock types.
const (
	ReadLock  = unix.F_RDLCK
	WriteLock = unix.F_WRLCK
	Unlock    = unix.F_UNLCK
)

// FileLock is one held lock.
type FileLock struct {
	Type       int16  // ReadLock or WriteLock
	Start, End uint64 // [Start, End), End LockEOF for "to the end"
	// PID is the holder's process for POSIX locks, -1 for description
	// locks.
	PID   int32
	owner any
}

// Owner returns who holds the lock: the owner passed when it was taken.
func (l FileLock) Owner() any { return l.owner }

type inodeKey struct{ dev, ino uint64 }

type inodeLocks struct {
	posix []FileLock // POSIX and OFD locks share one namespace
	flock []FileLock
	queue waiter.Queue
}

// blockedReq is a POSIX F_SETLKW request that is waiting.
type blockedReq struct {
	key  inodeKey
	lock FileLock
}

var (
	locksMu sync.Mutex
	locks   = map[inodeKey]*inodeLocks{}
	// blocked maps a waiting POSIX owner to its requests (one per
	// waiting thread).
	blocked = map[any][]*blockedReq{}
)

// maxDeadlockDepth bounds the walk of the waits-for chain, as Linux's
// MAX_DEADLK_ITERATIONS does.
const maxDeadlockDepth = 10

// wouldDeadlock reports whether owner waiting on a lock held by holder
// closes a cycle: holder waits (through at most maxDeadlockDepth owners)
// for a lock owner holds.
//
// Preconditions: locksMu is held.
func wouldDeadlock(owner, holder any) bool {
	for i := 0; i < maxDeadlockDepth; i++ {
		if holder == owner {
			return true
		}
		reqs := blocked[holder]
		if len(reqs) == 0 {
			return false
		}
		r := reqs[0]
		il := locks[r.key]
		if il == nil {
			return false
		}
		c := conflict(il.posix, &r.lock)
		if c == nil {
			return false
		}
		holder = c.owner
	}
	return false
}

func removeBlocked(owner any, r *blockedReq) {
	reqs := blocked[owner]
	for i, o := range reqs {
		if o == r {
			reqs = append(reqs[:i], reqs[i+1:]...)
			break
		}
	}
	if len(reqs) == 0 {
		delete(blocked, owner)
	} else {
		blocked[owner] = reqs
	}
}

func lockKeyOf(ctx Context, fd *FileDescription) (inodeKey, error) {
	st, err := fd.Stat(ctx)
	if err != nil {
		return inodeKey{}, err
	}
	return inodeKey{st.Dev, st.Ino}, nil
}

func overlaps(a, b *FileLock) bool { return a.Start < b.End && b.Start < a.End }

// conflict returns the first lock in ls that conflicts with l.
func conflict(ls []FileLock, l *FileLock) *FileLock {
	for i := range ls {
		o := &ls[i]
		if o.owner != l.owner && overlaps(o, l) && (o.Type == WriteLock || l.Type == WriteLock) {
			return o
		}
	}
	return nil
}

// apply replaces owner's locks over l's range with l (or removes them for
// Unlock), splitting the ones that stick out.
func apply(ls []FileLock, l FileLock) []FileLock {
	var out []FileLock
	for _, o := range ls {
		if o.owner != l.owner || !overlaps(&o, &l) {
			out = append(out, o)
			continue
		}
		if o.Start < l.Start {
			left := o
			left.End = l.Start
			out = append(out, left)
		}
		if o.End > l.End {
			right := o
			right.Start = l.End
			out = append(out, right)
		}
	}
	if l.Type == Unlock {
		return out
	}
	// Merge with the owner's locks of the same type that touch l (none
	// overlap it any more): at most one ends where l starts and one
	// starts where l ends.
	merged := out[:0]
	for _, o := range out {
		if o.owner == l.owner && o.Type == l.Type && (o.End == l.Start || l.End == o.Start) {
			l.Start = min(l.Start, o.Start)
			l.End = max(l.End, o.End)
			continue
		}
		merged = append(merged, o)
	}
	return append(merged, l)
}

// lockWait tries op until it succeeds, waiting for unlocks if wait. op
// runs with locksMu held; an error from it ends the wait.
func lockWait(ctx Context, key inodeKey, wait bool, op func(il *inodeLocks) (bool, error)) error {
	var ch <-chan struct{}
	var undo func()
	defer func() {
		if undo != nil {
			undo()
		}
	}()
	for {
		locksMu.Lock()
		il := locks[key]
		if il == nil {
			il = &inodeLocks{}
			locks[key] = il
		}
		ok, err := op(il)
		if len(il.posix) == 0 && len(il.flock) == 0 && il.queue.IsEmpty() {
			delete(locks, key)
		}
		locksMu.Unlock()
		if err != nil {
			return err
		}
		if ok {
			il.queue.Notify(waiter.EventIn)
			return nil
		}
		if !wait {
			return syserror.ErrWouldBlock
		}
		if undo == nil {
			e, c := waiter.NewChannelEntry(waiter.EventIn)
			il.queue.EventRegister(e)
			ch, undo = c, func() { il.queue.EventUnregister(e) }
			continue
		}
		if err := ctx.BlockOn(ch, time.Time{}, false); err != nil {
			return err
		}
	}
}

// SetPOSIXLock sets, changes or removes (typ Unlock) a record lock over
// [start, end) for owner (a process, with pid; or fd itself for OFD
// locks, pid -1). A conflict gives ErrWouldBlock unless wait.
func SetPOSIXLock(ctx Context, fd *FileDescription, owner any, pid int32, typ int16, start, end uint64, wait bool) error {
	key, err := lockKeyOf(ctx, fd)
	if err != nil {
		return err
	}
	l := FileLock{Type: typ, Start: start, End: end, PID: pid, owner: owner}
	if owner == any(fd) {
		fd.AddReleaseHook(lockHookKey{}, func() { releaseAll(key, fd) })
	}
	wait = wait && typ != Unlock
	// OFD locks are not checked for deadlocks, as on Linux.
	var req *blockedReq
	if wait && owner != any(fd) {
		req = &blockedReq{key: key, lock: l}
		defer func() {
			locksMu.Lock()
			removeBlocked(owner, req)
			locksMu.Unlock()
		}()
	}
	registered := false
	return lockWait(ctx, key, wait, func(il *inodeLocks) (bool, error) {
		if typ != Unlock {
			if c := conflict(il.posix, &l); c != nil {
				if req != nil {
					if wouldDeadlock(owner, c.owner) {
						return false, unix.EDEADLK
					}
					if !registered {
						blocked[owner] = append(blocked[owner], req)
						registered = true
					}
				}
				return false, nil
			}
		}
		il.posix = apply(il.posix, l)
		return true, nil
	})
}

// TestPOSIXLock returns the lock that would stop owner from taking typ
// over [start, end), or false.
func TestPOSIXLock(ctx Context, fd *FileDescription, owner any, typ int16, start, end uint64) (FileLock, bool, error) {
	key, err := lockKeyOf(ctx, fd)
	if err != nil {
		return FileLock{}, false, err
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	il := locks[key]
	if il == nil {
		return FileLock{}, false, nil
	}
	l := FileLock{Type: typ, Start: start, End: end, owner: owner}
	if c := conflict(il.posix, &l); c != nil {
		return *c, true, nil
	}
	return FileLock{}, false, nil
}

// ReleasePOSIXLocks drops owner's record locks on fd's inode (close(2)
// by a process drops all its locks on the file).
func ReleasePOSIXLocks(ctx Context, fd *FileDescription, owner any) {
	locksMu.Lock()
	none := len(locks) == 0
	locksMu.Unlock()
	if none {
		return
	}
	key, err := lockKeyOf(ctx, fd)
	if err != nil {
		return
	}
	releaseAll(key, owner)
}

// ReleaseOwnerPOSIXLocks drops every POSIX record lock owner holds, on
// every file: what closing all of a process's descriptors does when it
// exits.
func ReleaseOwnerPOSIXLocks(owner any) {
	locksMu.Lock()
	var changed []*inodeLocks
	for key, il := range locks {
		out := il.posix[:0]
		for _, l := range il.posix {
			if l.owner != owner {
				out = append(out, l)
			}
		}
		if len(out) != len(il.posix) {
			changed = append(changed, il)
		}
		il.posix = out
		if len(il.posix) == 0 && len(il.flock) == 0 && il.queue.IsEmpty() {
			delete(locks, key)
		}
	}
	locksMu.Unlock()
	for _, il := range changed {
		il.queue.Notify(waiter.EventIn)
	}
}

type lockHookKey struct{}

func releaseAll(key inodeKey, owner any) {
	locksMu.Lock()
	il := locks[key]
	if il == nil {
		locksMu.Unlock()
		return
	}
	changed := false
	keep := func(ls []FileLock) []FileLock {
		out := ls[:0]
		for _, l := range ls {
			if l.owner != owner {
				out = append(out, l)
			} else {
				changed = true
			}
		}
		return out
	}
	il.posix = keep(il.posix)
	il.flock = keep(il.flock)
	if len(il.posix) == 0 && len(il.flock) == 0 && il.queue.IsEmpty() {
		delete(locks, key)
	}
	locksMu.Unlock()
	if changed {
		il.queue.Notify(waiter.EventIn)
	}
}

// Flock implements flock(2) on fd: typ ReadLock (LOCK_SH), WriteLock
// (LOCK_EX) or Unlock. A conflict gives ErrWouldBlock unless wait.
func Flock(ctx Context, fd *FileDescription, typ int16, wait bool) error {
	key, err := lockKeyOf(ctx, fd)
	if err != nil {
		return err
	}
	fd.AddReleaseHook(lockHookKey{}, func() { releaseAll(key, fd) })
	l := FileLock{Type: typ, Start: 0, End: LockEOF, PID: -1, owner: fd}
	if typ != Unlock {
		// Converting a lock first drops the old one, as Linux does.
		lockWait(ctx, key, false, func(il *inodeLocks) (bool, error) {
			il.flock = apply(il.flock, FileLock{Type: Unlock, Start: 0, End: LockEOF, owner: fd})
			return true, nil
		})
	}
	return lockWait(ctx, key, wait && typ != Unlock, func(il *inodeLocks) (bool, error) {
		if typ != Unlock && conflict(il.flock, &l) != nil {
			return false, nil
		}
		il.flock = apply(il.flock, l)
		return true, nil
	})
}
