// Package ipc holds what System V IPC objects (shared memory segments,
// semaphore sets, message queues) share: their ipc_perm (owner, creator,
// mode, key) with Linux's permission checks, the pids they record, and the
// table that hands out ids (slot plus sequence, as Linux's IPCMNI) and
// finds objects by key or id.
//
// The package has no locks: a Table and the Perms of its objects are
// guarded by the lock of the registry that owns them.
package ipc

import (
	"math"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// SeqMultiplier spreads the ids of reused slots (Linux's IPCMNI).
const SeqMultiplier = 32768

// Access kinds for permission checks.
const (
	MayRead  = 4
	MayWrite = 2
	MayExec  = 1
)

// PID is a process an IPC object records (a creator, the last process to
// operate on it) as the kernel hands it over. A process has an id in each
// PID namespace it is visible in and keeps them once it has gone (Linux
// keeps its struct pid), so each reader gets its own namespace's id.
type PID interface {
	// IDFor returns the process's id in the PID namespace of reader (the
	// task asking), 0 if it is not visible there.
	IDFor(reader any) int32
}

// NumericPID is a PID that reads the same in every namespace.
type NumericPID int32

// IDFor implements PID.
func (p NumericPID) IDFor(any) int32 { return int32(p) }

// PIDFor returns p's id for reader, 0 for none.
func PIDFor(p PID, reader any) int32 {
	if p == nil {
		return 0
	}
	return p.IDFor(reader)
}

// Perm is an object's struct ipc_perm.
type Perm struct {
	ID        int32
	Key       int32
	UID, CUID auth.KUID
	GID, CGID auth.KGID
	// Mode holds the permission bits (and, for shm, its mode flags).
	Mode uint32
}

// NewPerm returns the ipc_perm of an object c creates with key and the
// low nine bits of flags.
func NewPerm(c *auth.Credentials, key, flags int32) Perm {
	return Perm{
		Key: key, UID: c.EffectiveUID, CUID: c.EffectiveUID,
		GID: c.EffectiveGID, CGID: c.EffectiveGID, Mode: uint32(flags) & 0o777,
	}
}

// Seq is the sequence number ipc_perm.__seq shows.
func (p *Perm) Seq() uint16 { return uint16(p.ID / SeqMultiplier) }

// Check applies Linux's ipcperms: the owner, group or other bits of the
// mode, or CAP_IPC_OWNER.
func (p *Perm) Check(c *auth.Credentials, want uint32) error {
	if want == 0 {
		return nil
	}
	var granted uint32
	switch {
	case c.EffectiveUID == p.UID || c.EffectiveUID == p.CUID:
		granted = p.Mode >> 6
	case inEGroup(c, p.GID) || inEGroup(c, p.CGID):
		granted = p.Mode >> 3
	default:
		granted = p.Mode
	}
	if granted&want == want || c.HasCapability(unix.CAP_IPC_OWNER) {
		return nil
	}
	return unix.EACCES
}

// inEGroup reports whether g is c's effective group or a supplementary
// one (Linux's in_egroup_p; the file system gid does not count).
func inEGroup(c *auth.Credentials, g auth.KGID) bool {
	if c.EffectiveGID == g {
		return true
	}
	for _, x := range c.ExtraGIDs {
		if x == g {
			return true
		}
	}
	return false
}

// CheckGet is the check of a *get(2) finding an existing object: any of
// the three permission triplets in flags asks for that access.
func (p *Perm) CheckGet(c *auth.Credentials, flags int32) error {
	return p.Check(c, uint32(flags>>6|flags>>3|flags)&7)
}

// MayChange reports whether c may IPC_SET or IPC_RMID the object: its
// owner, its creator, or CAP_SYS_ADMIN.
func (p *Perm) MayChange(c *auth.Credentials) bool {
	return c.EffectiveUID == p.UID || c.EffectiveUID == p.CUID || c.HasCapability(unix.CAP_SYS_ADMIN)
}

// Set applies IPC_SET's owner and permission bits.
func (p *Perm) Set(uid, gid, mode uint32) {
	p.UID, p.GID = auth.KUID(uid), auth.KGID(gid)
	p.Mode = p.Mode&^0o777 | mode&0o777
}

// Object is what a Table holds.
type Object interface {
	IPCPerm() *Perm
}

// Table finds a facility's objects by key, id and slot, and hands out
// ids. The zero value is an empty table.
type Table[T Object] struct {
	byKey map[int32]T
	// slots[i] is the object in slot i; used[i] whether it holds one;
	// seq[i] counts the objects slot i has held.
	slots []T
	used  []bool
	seq   []int32
	count int
}

// ByKey returns the object with key (never IPC_PRIVATE).
func (t *Table[T]) ByKey(key int32) (T, bool) {
	o, ok := t.byKey[key]
	return o, ok
}

// ByID returns the object with id: EINVAL when its slot is empty, EIDRM
// when the slot holds a later object (ipc_obtain_object_check).
func (t *Table[T]) ByID(id int32) (T, error) {
	var zero T
	if id < 0 {
		return zero, unix.EINVAL
	}
	slot := int(id % SeqMultiplier)
	if slot >= len(t.slots) || !t.used[slot] {
		return zero, unix.EINVAL
	}
	o := t.slots[slot]
	if o.IPCPerm().ID != id {
		return zero, unix.EIDRM
	}
	return o, nil
}

// BySlot returns the object in slot index (the *_STAT commands).
func (t *Table[T]) BySlot(index int32) (T, bool) {
	var zero T
	if index < 0 || int(index) >= len(t.slots) || !t.used[index] {
		return zero, false
	}
	return t.slots[index], true
}

// ForStat returns the object a *_STAT command names: with byIndex, id is a
// slot index (EINVAL when the slot is empty, as SEM_STAT, MSG_STAT and
// SHM_STAT); otherwise it is an id, as ByID.
func (t *Table[T]) ForStat(id int32, byIndex bool) (T, error) {
	if !byIndex {
		return t.ByID(id)
	}
	o, ok := t.BySlot(id)
	if !ok {
		return o, unix.EINVAL
	}
	return o, nil
}

// ForChange returns the object with id for IPC_SET or IPC_RMID by c: the
// errors of ByID, then EPERM when c may not change it (MayChange).
func (t *Table[T]) ForChange(c *auth.Credentials, id int32) (T, error) {
	o, err := t.ByID(id)
	if err != nil {
		return o, err
	}
	if !o.IPCPerm().MayChange(c) {
		var zero T
		return zero, unix.EPERM
	}
	return o, nil
}

// Add gives o an id in the lowest free slot and indexes it by its key; it
// fails with ENOSPC when limit objects exist.
func (t *Table[T]) Add(o T, limit int) error {
	slot := -1
	for i, u := range t.used {
		if !u {
			slot = i
			break
		}
	}
	if slot < 0 {
		if len(t.slots) >= limit || len(t.slots) >= SeqMultiplier {
			return unix.ENOSPC
		}
		slot = len(t.slots)
		var zero T
		t.slots = append(t.slots, zero)
		t.used = append(t.used, false)
		t.seq = append(t.seq, 0)
	}
	p := o.IPCPerm()
	p.ID = t.seq[slot]*SeqMultiplier + int32(slot)
	t.seq[slot] = (t.seq[slot] + 1) % (math.MaxInt32 / SeqMultiplier)
	t.slots[slot], t.used[slot] = o, true
	t.count++
	if p.Key != unix.IPC_PRIVATE {
		if t.byKey == nil {
			t.byKey = make(map[int32]T)
		}
		t.byKey[p.Key] = o
	}
	return nil
}

// Remove frees o's slot and key.
func (t *Table[T]) Remove(o T) {
	p := o.IPCPerm()
	slot := int(p.ID % SeqMultiplier)
	if slot >= len(t.slots) || !t.used[slot] || t.slots[slot].IPCPerm() != p {
		return
	}
	var zero T
	t.slots[slot], t.used[slot] = zero, false
	t.count--
	if cur, ok := t.byKey[p.Key]; ok && cur.IPCPerm() == p {
		delete(t.byKey, p.Key)
	}
}

// HideKey makes o unreachable by key (IPC_RMID of a segment still
// mapped) and sets its key to IPC_PRIVATE.
func (t *Table[T]) HideKey(o T) {
	p := o.IPCPerm()
	if cur, ok := t.byKey[p.Key]; ok && cur.IPCPerm() == p {
		delete(t.byKey, p.Key)
	}
	p.Key = unix.IPC_PRIVATE
}

// Count returns the number of objects.
func (t *Table[T]) Count() int { return t.count }

// Highest returns the highest slot in use, -1 when none.
func (t *Table[T]) Highest() int {
	for i := len(t.used) - 1; i >= 0; i-- {
		if t.used[i] {
			return i
		}
	}
	return -1
}

// All returns the objects in slot order.
func (t *Table[T]) All() []T {
	var out []T
	for i, u := range t.used {
		if u {
			out = append(out, t.slots[i])
		}
	}
	return out
}
