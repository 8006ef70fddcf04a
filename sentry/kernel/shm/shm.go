// Package shm implements System V shared memory segments (shmget, shmat,
// shmdt, shmctl) for one IPC namespace. A segment's memory is an mm.Object:
// shmat maps it shared, and the segment counts as attached while any vma
// maps it (after fork too; a vma split by mprotect counts twice, as
// Linux's shm_nattch does). IPC_RMID hides the key and destroys the
// segment when the last mapping goes.
//
// Locks: Registry.mu guards the segments and their attributes. It is taken
// after an address space's lock (the detach hook runs under it) and
// before mm.Object's; it is never held while calling into an address
// space.
package shm

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// Limits, as Linux's defaults.
const (
	SHMMIN = 1
	SHMMAX = math.MaxUint64 - 1<<24
	SHMALL = math.MaxUint64 - 1<<24
	SHMMNI = 4096
	SHMLBA = 4096
	// seqMultiplier spreads the ids of reused slots (IPCMNI).
	seqMultiplier = 32768
)

// Mode bits Linux keeps in shm_perm.mode beside the permissions.
const (
	ModeDest   = 0o1000 // SHM_DEST: removed, destroyed on last detach
	ModeLocked = 0o2000 // SHM_LOCKED
)

// PID is a process a segment records (its creator, shm_cpid, and the last
// to attach or detach it, shm_lpid) as the kernel hands it over. A process
// has an id in each PID namespace it is visible in and keeps them once it
// has gone (Linux keeps its struct pid), so each reader gets its own
// namespace's id.
type PID interface {
	// IDFor returns the process's id in the PID namespace of reader (the
	// task asking), 0 if it is not visible there.
	IDFor(reader any) int32
}

// NumericPID is a PID that reads the same in every namespace.
type NumericPID int32

// IDFor implements PID.
func (p NumericPID) IDFor(any) int32 { return int32(p) }

// pidFor returns p's id for reader, 0 for none.
func pidFor(p PID, reader any) int32 {
	if p == nil {
		return 0
	}
	return p.IDFor(reader)
}

// Segment is one shared memory segment.
type Segment struct {
	ID   int32
	Key  int32
	Size uint64
	obj  *mm.Object

	// Guarded by Registry.mu.
	UID, CUID           auth.KUID
	GID, CGID           auth.KGID
	Mode                uint32
	Atime, Dtime, Ctime int64
	CPID, LPID          PID
	removed             bool
}

// Object returns the segment's memory.
func (s *Segment) Object() *mm.Object { return s.obj }

// Name is what /proc/[pid]/maps shows for the segment's mappings.
func (s *Segment) Name() string { return fmt.Sprintf("/SYSV%08x (deleted)", uint32(s.Key)) }

// Registry holds the segments of an IPC namespace.
type Registry struct {
	mf *mm.MemoryFile

	mu    sync.Mutex
	byID  map[int32]*Segment
	byKey map[int32]*Segment
	// slots[i] is the segment in slot i (nil when free); seq[i] counts
	// the segments slot i has held.
	slots []*Segment
	seq   []int32
	pages uint64
}

// NewRegistry returns an empty registry whose segments live in mf.
func NewRegistry(mf *mm.MemoryFile) *Registry {
	return &Registry{mf: mf, byID: make(map[int32]*Segment), byKey: make(map[int32]*Segment)}
}

var registries sync.Map // *mm.MemoryFile -> *Registry

// For returns the registry of the sandbox whose memory file is mf (the
// sandbox has one IPC namespace).
func For(mf *mm.MemoryFile) *Registry {
	if r, ok := registries.Load(mf); ok {
		return r.(*Registry)
	}
	r, _ := registries.LoadOrStore(mf, NewRegistry(mf))
	return r.(*Registry)
}

func now() int64 { return time.Now().Unix() }

// Access kinds for permission checks.
const (
	MayRead  = 4
	MayWrite = 2
)

// checkPerm applies ipcperms: owner, group or other bits of mode, or
// CAP_IPC_OWNER. Preconditions: r.mu is held.
func checkPerm(c *auth.Credentials, s *Segment, want uint32) error {
	if want == 0 {
		return nil
	}
	var granted uint32
	switch {
	case c.EffectiveUID == s.UID || c.EffectiveUID == s.CUID:
		granted = s.Mode >> 6
	case c.InGroup(s.GID) || c.InGroup(s.CGID):
		granted = s.Mode >> 3
	default:
		granted = s.Mode
	}
	if granted&want == want || c.HasCapability(unix.CAP_IPC_OWNER) {
		return nil
	}
	return unix.EACCES
}

// Get implements shmget(2).
func (r *Registry) Get(c *auth.Credentials, pid PID, key int32, size uint64, flags int32) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != unix.IPC_PRIVATE {
		if s, ok := r.byKey[key]; ok {
			if flags&unix.IPC_CREAT != 0 && flags&unix.IPC_EXCL != 0 {
				return 0, unix.EEXIST
			}
			if size > s.Size {
				return 0, unix.EINVAL
			}
			// As ipcperms: any of the three triplets asks for access.
			if err := checkPerm(c, s, uint32(flags>>6|flags>>3|flags)&7); err != nil {
				return 0, err
			}
			return s.ID, nil
		}
		if flags&unix.IPC_CREAT == 0 {
			return 0, unix.ENOENT
		}
	}
	if size < SHMMIN || size > SHMMAX {
		return 0, unix.EINVAL
	}
	pages := (size + SHMLBA - 1) / SHMLBA
	if pages < size/SHMLBA || r.pages+pages > SHMALL/SHMLBA {
		return 0, unix.ENOSPC
	}
	slot := -1
	for i, s := range r.slots {
		if s == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		if len(r.slots) >= SHMMNI {
			return 0, unix.ENOSPC
		}
		slot = len(r.slots)
		r.slots = append(r.slots, nil)
		r.seq = append(r.seq, 0)
	}
	if size > uint64(r.mf.Capacity()) {
		return 0, unix.ENOMEM
	}
	s := &Segment{
		ID: r.seq[slot]*seqMultiplier + int32(slot), Key: key, Size: size,
		obj: mm.NewObject(r.mf, int64(size), nil),
		UID: c.EffectiveUID, CUID: c.EffectiveUID,
		GID: c.EffectiveGID, CGID: c.EffectiveGID,
		Mode: uint32(flags) & 0o777, Ctime: now(), CPID: pid,
	}
	r.seq[slot] = (r.seq[slot] + 1) % (math.MaxInt32 / seqMultiplier)
	s.obj.SetDetachHook(func(vmas int) { r.detached(s, vmas) })
	r.slots[slot] = s
	r.byID[s.ID] = s
	if key != unix.IPC_PRIVATE {
		r.byKey[key] = s
	}
	r.pages += pages
	return s.ID, nil
}

// detached runs when a mapping of s goes: the last one of a removed
// segment destroys it.
func (r *Registry) detached(s *Segment, vmas int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Dtime = now()
	if vmas == 0 && s.removed {
		r.destroyLocked(s)
	}
}

// destroyLocked frees s. Preconditions: r.mu is held.
func (r *Registry) destroyLocked(s *Segment) {
	if r.byID[s.ID] != s {
		return
	}
	delete(r.byID, s.ID)
	if r.byKey[s.Key] == s {
		delete(r.byKey, s.Key)
	}
	r.slots[s.ID%seqMultiplier] = nil
	r.pages -= (s.Size + SHMLBA - 1) / SHMLBA
	s.obj.DecRef()
}

// Attach looks up id for shmat(2): it checks access (read, and write
// unless readOnly; exec too with exec) and returns the segment with a
// reference on its object that the caller drops after mapping it. It
// records the attaching process.
func (r *Registry) Attach(c *auth.Credentials, pid PID, id int32, readOnly, exec bool) (*Segment, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byID[id]
	if !ok {
		return nil, unix.EINVAL
	}
	want := uint32(MayRead)
	if !readOnly {
		want |= MayWrite
	}
	if exec {
		want |= 1
	}
	if err := checkPerm(c, s, want); err != nil {
		return nil, err
	}
	s.obj.IncRef()
	s.Atime = now()
	s.LPID = pid
	return s, nil
}

// Detached records shmdt(2) of a mapping of o by pid.
func (r *Registry) Detached(o *mm.Object, pid PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.byID {
		if s.obj == o {
			s.LPID = pid
		}
	}
}

// Owns reports whether o is a segment of r (shmdt detaches only those).
func (r *Registry) Owns(o *mm.Object) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.byID {
		if s.obj == o {
			return true
		}
	}
	return false
}

// desc is shmctl's view of a segment for the task reader.
func (r *Registry) desc(s *Segment, reader any) unix.SysvShmDesc {
	mode := s.Mode
	if s.removed {
		mode |= ModeDest
	}
	return unix.SysvShmDesc{
		Perm: unix.SysvIpcPerm{
			Key: s.Key, Uid: uint32(s.UID), Gid: uint32(s.GID), Cuid: uint32(s.CUID), Cgid: uint32(s.CGID),
			Mode: mode, Seq: uint16(s.ID / seqMultiplier),
		},
		Segsz: s.Size, Atime: s.Atime, Dtime: s.Dtime, Ctime: s.Ctime,
		Cpid: pidFor(s.CPID, reader), Lpid: pidFor(s.LPID, reader), Nattch: uint64(s.obj.Attachments()),
	}
}

// Stat implements shmctl(IPC_STAT) (any false) and SHM_STAT/SHM_STAT_ANY
// (byIndex true: id is a slot index, and the segment's id is returned),
// for the task reader, whose PID namespace numbers the pids.
func (r *Registry) Stat(c *auth.Credentials, id int32, byIndex, anyPerm bool, reader any) (unix.SysvShmDesc, int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s *Segment
	if byIndex {
		if id < 0 || int(id) >= len(r.slots) || r.slots[id] == nil {
			return unix.SysvShmDesc{}, 0, unix.EINVAL
		}
		s = r.slots[id]
	} else if s = r.byID[id]; s == nil {
		return unix.SysvShmDesc{}, 0, unix.EINVAL
	}
	if !anyPerm {
		if err := checkPerm(c, s, MayRead); err != nil {
			return unix.SysvShmDesc{}, 0, err
		}
	}
	return r.desc(s, reader), s.ID, nil
}

// mayChange reports whether c may IPC_SET or IPC_RMID s: its owner, its
// creator, or CAP_SYS_ADMIN. Preconditions: r.mu is held.
func mayChange(c *auth.Credentials, s *Segment) bool {
	return c.EffectiveUID == s.UID || c.EffectiveUID == s.CUID || c.HasCapability(unix.CAP_SYS_ADMIN)
}

// Set implements shmctl(IPC_SET): owner and the permission bits.
func (r *Registry) Set(c *auth.Credentials, id int32, uid, gid uint32, mode uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil {
		return unix.EINVAL
	}
	if !mayChange(c, s) {
		return unix.EPERM
	}
	s.UID, s.GID = auth.KUID(uid), auth.KGID(gid)
	s.Mode = s.Mode&^0o777 | mode&0o777
	s.Ctime = now()
	return nil
}

// Remove implements shmctl(IPC_RMID): the key is freed at once, the
// memory when the last mapping goes.
func (r *Registry) Remove(c *auth.Credentials, id int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil {
		return unix.EINVAL
	}
	if !mayChange(c, s) {
		return unix.EPERM
	}
	s.removed = true
	s.Ctime = now()
	if r.byKey[s.Key] == s {
		delete(r.byKey, s.Key)
	}
	s.Key = unix.IPC_PRIVATE
	if s.obj.Attachments() == 0 {
		r.destroyLocked(s)
	}
	return nil
}

// Lock implements SHM_LOCK and SHM_UNLOCK (the Sentry's memory is never
// swapped: only the mode bit changes).
func (r *Registry) Lock(c *auth.Credentials, id int32, lock bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil {
		return unix.EINVAL
	}
	if !c.HasCapability(unix.CAP_IPC_LOCK) && c.EffectiveUID != s.UID && c.EffectiveUID != s.CUID {
		return unix.EPERM
	}
	if lock {
		s.Mode |= ModeLocked
	} else {
		s.Mode &^= ModeLocked
	}
	return nil
}

// Info returns the number of segments, the highest slot in use (-1 when
// none), the pages held and the pages resident.
func (r *Registry) Info() (used int, highest int, pages uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	highest = -1
	for i, s := range r.slots {
		if s != nil {
			used++
			highest = i
		}
	}
	return used, highest, r.pages
}
