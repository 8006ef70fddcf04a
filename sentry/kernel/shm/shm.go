// Package shm implements System V shared memory segments (shmget, shmat,
// shmdt, shmctl) for one IPC namespace. A segment's memory is an mm.Object:
// shmat maps it shared, and the segment counts as attached while any vma
// maps it (after fork too; a vma split by mprotect counts twice, as
// Linux's shm_nattch does). IPC_RMID hides the key and destroys the
// segment when the last mapping goes.
//
// Ids, keys and permissions are the common System V IPC ones
// (sentry/kernel/ipc).
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
	"github.com/moat-sandbox/moat/sentry/kernel/ipc"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// Limits, as Linux's defaults.
const (
	SHMMIN = 1
	SHMMAX = math.MaxUint64 - 1<<24
	SHMALL = math.MaxUint64 - 1<<24
	SHMMNI = 4096
	SHMLBA = 4096
)

// Mode bits Linux keeps in shm_perm.mode beside the permissions.
const (
	ModeDest   = 0o1000 // SHM_DEST: removed, destroyed on last detach
	ModeLocked = 0o2000 // SHM_LOCKED
)

// PID is a process a segment records (its creator, shm_cpid, and the last
// to attach or detach it, shm_lpid).
type PID = ipc.PID

// NumericPID is a PID that reads the same in every namespace.
type NumericPID = ipc.NumericPID

// Segment is one shared memory segment.
type Segment struct {
	// Perm is guarded by Registry.mu.
	ipc.Perm
	Size uint64
	obj  *mm.Object

	// Guarded by Registry.mu.
	Atime, Dtime, Ctime int64
	CPID, LPID          PID
	removed             bool
}

// IPCPerm implements ipc.Object.
func (s *Segment) IPCPerm() *ipc.Perm { return &s.Perm }

// Object returns the segment's memory.
func (s *Segment) Object() *mm.Object { return s.obj }

// Name is what /proc/[pid]/maps shows for the segment's mappings.
func (s *Segment) Name() string { return fmt.Sprintf("/SYSV%08x (deleted)", uint32(s.Key)) }

// Registry holds the segments of an IPC namespace.
type Registry struct {
	mf *mm.MemoryFile

	mu    sync.Mutex
	table ipc.Table[*Segment]
	pages uint64
}

// NewRegistry returns an empty registry whose segments live in mf.
func NewRegistry(mf *mm.MemoryFile) *Registry {
	return &Registry{mf: mf}
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
	MayRead  = ipc.MayRead
	MayWrite = ipc.MayWrite
)

// Get implements shmget(2).
func (r *Registry) Get(c *auth.Credentials, pid PID, key int32, size uint64, flags int32) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != unix.IPC_PRIVATE {
		if s, ok := r.table.ByKey(key); ok {
			if flags&unix.IPC_CREAT != 0 && flags&unix.IPC_EXCL != 0 {
				return 0, unix.EEXIST
			}
			if size > s.Size {
				return 0, unix.EINVAL
			}
			if err := s.CheckGet(c, flags); err != nil {
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
	if r.table.Count() >= SHMMNI {
		return 0, unix.ENOSPC
	}
	if size > uint64(r.mf.Capacity()) {
		return 0, unix.ENOMEM
	}
	s := &Segment{
		Perm: ipc.NewPerm(c, key, flags), Size: size,
		obj:   mm.NewObject(r.mf, int64(size), nil),
		Ctime: now(), CPID: pid,
	}
	if err := r.table.Add(s, SHMMNI); err != nil {
		s.obj.DecRef()
		return 0, err
	}
	s.obj.SetDetachHook(func(vmas int) { r.detached(s, vmas) })
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
	if cur, err := r.table.ByID(s.ID); err != nil || cur != s {
		return
	}
	r.table.Remove(s)
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
	s, err := r.table.ByID(id)
	if err != nil {
		return nil, err
	}
	want := uint32(MayRead)
	if !readOnly {
		want |= MayWrite
	}
	if exec {
		want |= 1
	}
	if err := s.Check(c, want); err != nil {
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
	for _, s := range r.table.All() {
		if s.obj == o {
			s.LPID = pid
		}
	}
}

// Owns reports whether o is a segment of r (shmdt detaches only those).
func (r *Registry) Owns(o *mm.Object) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.table.All() {
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
			Mode: mode, Seq: s.Seq(),
		},
		Segsz: s.Size, Atime: s.Atime, Dtime: s.Dtime, Ctime: s.Ctime,
		Cpid: ipc.PIDFor(s.CPID, reader), Lpid: ipc.PIDFor(s.LPID, reader), Nattch: uint64(s.obj.Attachments()),
	}
}

// Stat implements shmctl(IPC_STAT) (any false) and SHM_STAT/SHM_STAT_ANY
// (byIndex true: id is a slot index, and the segment's id is returned),
// for the task reader, whose PID namespace numbers the pids.
func (r *Registry) Stat(c *auth.Credentials, id int32, byIndex, anyPerm bool, reader any) (unix.SysvShmDesc, int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ForStat(id, byIndex)
	if err != nil {
		return unix.SysvShmDesc{}, 0, err
	}
	if !anyPerm {
		if err := s.Check(c, MayRead); err != nil {
			return unix.SysvShmDesc{}, 0, err
		}
	}
	return r.desc(s, reader), s.ID, nil
}

// Set implements shmctl(IPC_SET): owner and the permission bits.
func (r *Registry) Set(c *auth.Credentials, id int32, uid, gid uint32, mode uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ForChange(c, id)
	if err != nil {
		return err
	}
	s.Perm.Set(uid, gid, mode)
	s.Ctime = now()
	return nil
}

// Remove implements shmctl(IPC_RMID): the key is freed at once, the
// memory when the last mapping goes.
func (r *Registry) Remove(c *auth.Credentials, id int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.table.ForChange(c, id)
	if err != nil {
		return err
	}
	s.removed = true
	s.Ctime = now()
	r.table.HideKey(s)
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
	s, err := r.table.ByID(id)
	if err != nil {
		return err
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
	return r.table.Count(), r.table.Highest(), r.pages
}

// Listing is a segment as /proc/sysvipc/shm shows it.
type Listing struct {
	unix.SysvShmDesc
	ID int32
	// RSS is the memory the segment holds, in bytes.
	RSS int64
}

// All lists the segments in slot order for reader, whose PID namespace
// numbers the pids.
func (r *Registry) All(reader any) []Listing {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Listing
	for _, s := range r.table.All() {
		out = append(out, Listing{SysvShmDesc: r.desc(s, reader), ID: s.ID, RSS: s.obj.Allocated()})
	}
	return out
}
