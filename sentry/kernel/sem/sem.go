// Package sem implements System V semaphore sets (semget, semop,
// semtimedop, semctl) for one IPC namespace, with SEM_UNDO adjustments
// that a process's exit applies.
//
// A task blocked in semop waits on its set's change channel, which every
// change to the set's values (and its removal) closes and replaces; the
// woken task retries its whole array of operations, so each array is
// applied atomically or not at all.
//
// Locks: Registry.mu, which guards the sets, their values and the
// adjustments, then undoMu (the package's map of processes with
// adjustments). Neither is held while a task blocks.
package sem

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/ipc"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// Limits, as Linux's defaults (include/uapi/linux/sem.h).
const (
	SEMMNI = 32000
	SEMMSL = 32000
	SEMMNS = SEMMNI * SEMMSL
	SEMOPM = 500
	SEMVMX = 32767
	SEMAEM = SEMVMX
	SEMUME = SEMOPM
	SEMMNU = SEMMNS
	SEMMAP = SEMMNS
	SEMUSZ = 20
)

// MaxSems bounds the semaphores of a namespace below SEMMNS (which
// semctl(IPC_INFO) still reports): the Sentry holds them in its own
// memory, which an application must not exhaust. semget past it fails
// with ENOSPC, as past SEMMNS.
const MaxSems = 1 << 20

// semUndo is the SEM_UNDO flag of a sembuf.
const semUndo = 0x1000

// Op is one struct sembuf.
type Op struct {
	Num   uint16
	Op    int16
	Flags int16
}

type semaphore struct {
	val int32
	pid ipc.PID
}

// waiting is a task blocked on a set: on semaphore num, for it to reach
// zero (semzcnt) or to grow (semncnt).
type waiting struct {
	num  uint16
	zero bool
}

// Set is one semaphore set.
type Set struct {
	perm ipc.Perm

	// Guarded by Registry.mu.
	sems         []semaphore
	otime, ctime int64
	removed      bool
	changed      chan struct{}
	waiters      map[*waiting]struct{}
}

// IPCPerm implements ipc.Object.
func (s *Set) IPCPerm() *ipc.Perm { return &s.perm }

// notifyLocked wakes the tasks waiting on s. Preconditions: Registry.mu
// is held.
func (s *Set) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Registry holds the semaphore sets of an IPC namespace.
type Registry struct {
	mu    sync.Mutex
	table ipc.Table[*Set]
	sems  int
	// undo holds each process's SEM_UNDO adjustments, by set.
	undo map[any]map[*Set][]int32
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{undo: make(map[any]map[*Set][]int32)}
}

func now() int64 { return time.Now().Unix() }

// Get implements semget(2).
func (r *Registry) Get(c *auth.Credentials, key int32, nsems int32, flags int32) (int32, error) {
	if nsems < 0 || nsems > SEMMSL {
		return 0, unix.EINVAL
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != unix.IPC_PRIVATE {
		if s, ok := r.table.ByKey(key); ok {
			if flags&unix.IPC_CREAT != 0 && flags&unix.IPC_EXCL != 0 {
				return 0, unix.EEXIST
			}
			if err := s.perm.CheckGet(c, flags); err != nil {
				return 0, err
			}
			if int(nsems) > len(s.sems) {
				return 0, unix.EINVAL
			}
			return s.perm.ID, nil
		}
		if flags&unix.IPC_CREAT == 0 {
			return 0, unix.ENOENT
		}
	}
	if nsems == 0 {
		return 0, unix.EINVAL
	}
	if r.sems+int(nsems) > min(SEMMNS, MaxSems) {
		return 0, unix.ENOSPC
	}
	s := &Set{
		perm: ipc.NewPerm(c, key, flags), sems: make([]semaphore, nsems),
		ctime: now(), changed: make(chan struct{}), waiters: make(map[*waiting]struct{}),
	}
	if err := r.table.Add(s, SEMMNI); err != nil {
		return 0, err
	}
	r.sems += int(nsems)
	return s.perm.ID, nil
}

// Blocker is the task a semop blocks: kernel.Task's BlockOn, which
// returns unix.ETIMEDOUT at the deadline and syserror.ErrInterrupted
// for a signal.
type Blocker interface {
	BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error
}

// Do implements semop(2) and semtimedop(2) for the process owner (its
// SEM_UNDO adjustments are owner's), recorded as pid. ops is non-empty
// and at most SEMOPM long (the caller checks, as the errnos come before
// the set's lookup). A signal ends the wait with EINTR (never
// restarted), the deadline with EAGAIN, the set's removal with EIDRM.
func (r *Registry) Do(b Blocker, c *auth.Credentials, owner any, pid ipc.PID, id int32, ops []Op, deadline time.Time, hasDeadline bool) error {
	var maxNum uint16
	alter, undo := false, false
	for _, op := range ops {
		maxNum = max(maxNum, op.Num)
		if op.Op != 0 {
			alter = true
		}
		if op.Flags&semUndo != 0 {
			undo = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ByID(id)
	if err != nil {
		return err
	}
	if int(maxNum) >= len(s.sems) {
		return unix.EFBIG
	}
	want := uint32(ipc.MayRead)
	if alter {
		want = ipc.MayWrite
	}
	if err := s.perm.Check(c, want); err != nil {
		return err
	}
	if undo {
		undoMu.Lock()
		if undoOwners[owner] == nil {
			undoOwners[owner] = make(map[*Registry]struct{})
		}
		undoOwners[owner][r] = struct{}{}
		undoMu.Unlock()
	}
	for {
		if s.removed {
			return unix.EIDRM
		}
		blocking, err := r.tryLocked(s, owner, pid, ops)
		if err != nil {
			return err
		}
		if blocking < 0 {
			return nil
		}
		op := ops[blocking]
		if op.Flags&unix.IPC_NOWAIT != 0 {
			return unix.EAGAIN
		}
		w := &waiting{num: op.Num, zero: op.Op == 0}
		s.waiters[w] = struct{}{}
		ch := s.changed
		r.mu.Unlock()
		err = b.BlockOn(ch, deadline, hasDeadline)
		r.mu.Lock()
		delete(s.waiters, w)
		if s.removed {
			return unix.EIDRM
		}
		switch err {
		case nil:
		case unix.ETIMEDOUT:
			return unix.EAGAIN
		case syserror.ErrInterrupted:
			return unix.EINTR
		default:
			return err
		}
	}
}

// tryLocked applies ops to s if all of them can go now, as Linux's
// perform_atomic_semop: it returns -1 once applied, or the index of the
// first operation that must wait; ERANGE when a value or an adjustment
// would leave its range. Preconditions: r.mu is held.
func (r *Registry) tryLocked(s *Set, owner any, pid ipc.PID, ops []Op) (int, error) {
	vals := make(map[uint16]int32, len(ops))
	adjs := make(map[uint16]int32)
	cur := r.undo[owner][s]
	for i, op := range ops {
		v, ok := vals[op.Num]
		if !ok {
			v = s.sems[op.Num].val
		}
		if op.Op == 0 && v != 0 {
			return i, nil
		}
		v += int32(op.Op)
		if v < 0 {
			return i, nil
		}
		if v > SEMVMX {
			return 0, unix.ERANGE
		}
		vals[op.Num] = v
		if op.Flags&semUndo != 0 {
			a, ok := adjs[op.Num]
			if !ok && cur != nil {
				a = cur[op.Num]
			}
			a -= int32(op.Op)
			if a < -SEMAEM-1 || a > SEMAEM {
				return 0, unix.ERANGE
			}
			adjs[op.Num] = a
		}
	}
	for num, v := range vals {
		s.sems[num].val = v
	}
	for _, op := range ops {
		s.sems[op.Num].pid = pid
	}
	if len(adjs) > 0 {
		if r.undo[owner] == nil {
			r.undo[owner] = make(map[*Set][]int32)
		}
		if cur == nil {
			cur = make([]int32, len(s.sems))
			r.undo[owner][s] = cur
		}
		for num, a := range adjs {
			cur[num] = a
		}
	}
	s.otime = now()
	s.notifyLocked()
	return -1, nil
}

// lookupLocked returns the set id after checking c's access want.
// Preconditions: r.mu is held.
func (r *Registry) lookupLocked(c *auth.Credentials, id int32, want uint32) (*Set, error) {
	s, err := r.table.ByID(id)
	if err != nil {
		return nil, err
	}
	if err := s.perm.Check(c, want); err != nil {
		return nil, err
	}
	return s, nil
}

// Value is semctl's GETVAL, GETPID, GETNCNT or GETZCNT.
type Value int

// Values semctl reads from one semaphore.
const (
	Val Value = iota
	PID
	NCnt
	ZCnt
)

// GetOne implements semctl's GETVAL, GETPID, GETNCNT and GETZCNT; GETPID's
// pid is numbered in reader's PID namespace.
func (r *Registry) GetOne(c *auth.Credentials, id, num int32, what Value, reader any) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.lookupLocked(c, id, ipc.MayRead)
	if err != nil {
		return 0, err
	}
	if num < 0 || int(num) >= len(s.sems) {
		return 0, unix.EINVAL
	}
	switch what {
	case Val:
		return s.sems[num].val, nil
	case PID:
		return ipc.PIDFor(s.sems[num].pid, reader), nil
	}
	var n int32
	for w := range s.waiters {
		if int32(w.num) == num && w.zero == (what == ZCnt) {
			n++
		}
	}
	return n, nil
}

// SetVal implements semctl(SETVAL): the semaphore's adjustments in every
// process are cleared.
func (r *Registry) SetVal(c *auth.Credentials, pid ipc.PID, id, num, val int32) error {
	if val < 0 || val > SEMVMX {
		return unix.ERANGE
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.lookupLocked(c, id, ipc.MayWrite)
	if err != nil {
		return err
	}
	if num < 0 || int(num) >= len(s.sems) {
		return unix.EINVAL
	}
	for _, sets := range r.undo {
		if adj := sets[s]; adj != nil {
			adj[num] = 0
		}
	}
	s.sems[num] = semaphore{val: val, pid: pid}
	s.ctime = now()
	s.notifyLocked()
	return nil
}

// NSems returns the number of semaphores in set id after checking c's
// access want (GETALL and SETALL size their buffers with it).
func (r *Registry) NSems(c *auth.Credentials, id int32, want uint32) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.lookupLocked(c, id, want)
	if err != nil {
		return 0, err
	}
	return len(s.sems), nil
}

// GetAll implements semctl(GETALL).
func (r *Registry) GetAll(c *auth.Credentials, id int32) ([]uint16, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.lookupLocked(c, id, ipc.MayRead)
	if err != nil {
		return nil, err
	}
	out := make([]uint16, len(s.sems))
	for i, sm := range s.sems {
		out[i] = uint16(sm.val)
	}
	return out, nil
}

// SetAll implements semctl(SETALL): vals has one value per semaphore (the
// caller read it after NSems; a set that changed size in between, being
// a new set, gives EIDRM or EINVAL from the lookup).
func (r *Registry) SetAll(c *auth.Credentials, pid ipc.PID, id int32, vals []uint16) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.lookupLocked(c, id, ipc.MayWrite)
	if err != nil {
		return err
	}
	if len(vals) != len(s.sems) {
		return unix.EIDRM
	}
	for _, v := range vals {
		if v > SEMVMX {
			return unix.ERANGE
		}
	}
	for _, sets := range r.undo {
		delete(sets, s)
	}
	for i, v := range vals {
		s.sems[i] = semaphore{val: int32(v), pid: pid}
	}
	s.ctime = now()
	s.notifyLocked()
	return nil
}

// Desc is IPC_STAT's view of a set.
type Desc struct {
	Perm         ipc.Perm
	Otime, Ctime int64
	NSems        int
}

// Stat implements semctl(IPC_STAT) (byIndex false) and SEM_STAT /
// SEM_STAT_ANY (byIndex true: id is a slot index, EINVAL when empty).
func (r *Registry) Stat(c *auth.Credentials, id int32, byIndex, anyPerm bool) (Desc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ForStat(id, byIndex)
	if err != nil {
		return Desc{}, err
	}
	if !anyPerm {
		if err := s.perm.Check(c, ipc.MayRead); err != nil {
			return Desc{}, err
		}
	}
	return Desc{Perm: s.perm, Otime: s.otime, Ctime: s.ctime, NSems: len(s.sems)}, nil
}

// Set implements semctl(IPC_SET).
func (r *Registry) Set(c *auth.Credentials, id int32, uid, gid, mode uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ForChange(c, id)
	if err != nil {
		return err
	}
	s.perm.Set(uid, gid, mode)
	s.ctime = now()
	return nil
}

// Remove implements semctl(IPC_RMID): waiters fail with EIDRM.
func (r *Registry) Remove(c *auth.Credentials, id int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ForChange(c, id)
	if err != nil {
		return err
	}
	r.table.Remove(s)
	r.sems -= len(s.sems)
	for _, sets := range r.undo {
		delete(sets, s)
	}
	s.removed = true
	s.notifyLocked()
	return nil
}

// Info returns the number of sets, the highest slot in use (-1 when
// none) and the number of semaphores in all sets (SEM_INFO).
func (r *Registry) Info() (sets, highest, sems int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.table.Count(), r.table.Highest(), r.sems
}

// All returns every set's description in slot order (/proc/sysvipc/sem).
func (r *Registry) All() []Desc {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Desc
	for _, s := range r.table.All() {
		out = append(out, Desc{Perm: s.perm, Otime: s.otime, Ctime: s.ctime, NSems: len(s.sems)})
	}
	return out
}

var (
	undoMu sync.Mutex
	// undoOwners holds, for each process that has used SEM_UNDO, the
	// registries that may hold its adjustments.
	undoOwners = make(map[any]map[*Registry]struct{})
)

// ProcessExited applies and drops the SEM_UNDO adjustments of owner, a
// process whose last thread is exiting (Linux's exit_sem), recording
// pid on the semaphores it changes; values are clamped to 0..SEMVMX.
func ProcessExited(owner any, pid ipc.PID) {
	undoMu.Lock()
	regs := undoOwners[owner]
	delete(undoOwners, owner)
	undoMu.Unlock()
	for r := range regs {
		r.exited(owner, pid)
	}
}

func (r *Registry) exited(owner any, pid ipc.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s, adj := range r.undo[owner] {
		if s.removed {
			continue
		}
		changed := false
		for i, a := range adj {
			if a == 0 {
				continue
			}
			v := min(max(s.sems[i].val+a, 0), SEMVMX)
			s.sems[i] = semaphore{val: v, pid: pid}
			changed = true
		}
		if changed {
			s.notifyLocked()
		}
	}
	delete(r.undo, owner)
}
