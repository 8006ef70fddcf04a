package auth

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// This file holds user namespaces (user_namespaces(7)): a tree of id
// mappings, each namespace owned by the euid and egid of its creator in
// its parent. Ids inside the Sentry (KUID, KGID) are global, the ids of
// the sandbox's initial namespace; a namespace's uid_map and gid_map
// translate between the ids its processes name and those global ids.
// Syscalls translate at the boundary: ids read out of the kernel go
// through MapFromKUID (or UIDOf, which gives the overflow id when there
// is no mapping), ids passed in go through MapToKUID.
//
// The nil *UserNamespace is the sandbox's initial namespace: every id
// maps to itself (but (uid_t)-1), it has no parent and level 0. Its
// maps cannot be written.

// OverflowID is the id shown for a global id that has no mapping in the
// reader's namespace (/proc/sys/kernel/overflowuid and overflowgid).
const OverflowID = 65534

// MaxUserNSLevel is how deeply user namespaces nest (Linux's 32).
const MaxUserNSLevel = 32

// MaxIDMapLines is the most lines a uid_map or gid_map holds
// (UID_GID_MAP_MAX_EXTENTS).
const MaxIDMapLines = 340

// InitialUserNSInode is the nsfs inode of the initial user namespace
// (PROC_USER_INIT_INO).
const InitialUserNSInode = 0xeffffffd

// IDMapEntry is one line of a uid_map or gid_map: Count ids from First in
// the namespace are the global ids from Lower on.
type IDMapEntry struct {
	First, Lower, Count uint32
}

// idMap is a written map, sorted by First.
type idMap []IDMapEntry

// UserNamespace is one user namespace.
type UserNamespace struct {
	parent *UserNamespace
	level  int
	// owner and group are the creator's euid and egid.
	owner KUID
	group KGID
	inode uint64
	// parentCouldSetFCap records whether the creator had CAP_SETFCAP
	// in its effective set: mapping the parent's root needs it.
	parentCouldSetFCap bool

	// uidMap and gidMap are nil until written; once set they never
	// change, so readers load them without the lock.
	uidMap, gidMap atomic.Pointer[idMap]

	// mu serialises the writes of uidMap, gidMap and setgroupsDenied
	// (Linux's userns_state_mutex).
	mu              sync.Mutex
	setgroupsDenied atomic.Bool
}

// NewUserNamespace returns a namespace whose parent is c's and whose owner
// is c's effective user and group, with no maps yet (create_user_ns):
// ENOSPC past the nesting limit, EPERM if c's euid or egid has no
// mapping in the parent.
func NewUserNamespace(c *Credentials, inode uint64) (*UserNamespace, error) {
	parent := c.UserNamespace
	if parent.Level() >= MaxUserNSLevel {
		return nil, unix.ENOSPC
	}
	if _, ok := parent.MapFromKUID(c.EffectiveUID); !ok {
		return nil, unix.EPERM
	}
	if _, ok := parent.MapFromKGID(c.EffectiveGID); !ok {
		return nil, unix.EPERM
	}
	ns := &UserNamespace{
		parent:             parent,
		level:              parent.Level() + 1,
		owner:              c.EffectiveUID,
		group:              c.EffectiveGID,
		inode:              inode,
		parentCouldSetFCap: c.EffectiveCaps.Has(unix.CAP_SETFCAP),
	}
	// A namespace starts with its parent's setgroups setting.
	ns.setgroupsDenied.Store(parent.SetgroupsDenied())
	return ns, nil
}

// Parent returns ns's parent (nil, the initial namespace, for a
// namespace of level 1 and for the initial one).
func (ns *UserNamespace) Parent() *UserNamespace {
	if ns == nil {
		return nil
	}
	return ns.parent
}

// IsInitial reports whether ns is the sandbox's initial namespace.
func (ns *UserNamespace) IsInitial() bool { return ns == nil }

// Level returns how deep ns is: 0 for the initial namespace.
func (ns *UserNamespace) Level() int {
	if ns == nil {
		return 0
	}
	return ns.level
}

// Owner returns the global uid and gid of ns's creator.
func (ns *UserNamespace) Owner() (KUID, KGID) {
	if ns == nil {
		return 0, 0
	}
	return ns.owner, ns.group
}

// Inode returns ns's nsfs inode number.
func (ns *UserNamespace) Inode() uint64 {
	if ns == nil {
		return InitialUserNSInode
	}
	return ns.inode
}

// Contains reports whether o is ns or a namespace below it.
func (ns *UserNamespace) Contains(o *UserNamespace) bool {
	for ; o.Level() > ns.Level(); o = o.parent {
	}
	return o == ns
}

// SetgroupsDenied reports whether /proc/[pid]/setgroups reads "deny".
func (ns *UserNamespace) SetgroupsDenied() bool {
	return ns != nil && ns.setgroupsDenied.Load()
}

// MaySetgroups reports whether setgroups(2) may be used in ns (given the
// capability): its gid_map is written and setgroups is not denied.
func (ns *UserNamespace) MaySetgroups() bool {
	if ns == nil {
		return true
	}
	return ns.gidMap.Load() != nil && !ns.setgroupsDenied.Load()
}

// UIDMap returns ns's uid map, nil if it is not written yet; the
// initial namespace has none.
func (ns *UserNamespace) UIDMap() []IDMapEntry {
	if ns == nil {
		return nil
	}
	if m := ns.uidMap.Load(); m != nil {
		return *m
	}
	return nil
}

// GIDMap returns ns's gid map, as UIDMap.
func (ns *UserNamespace) GIDMap() []IDMapEntry {
	if ns == nil {
		return nil
	}
	if m := ns.gidMap.Load(); m != nil {
		return *m
	}
	return nil
}

// up maps id in the global space to the namespace's id.
func (m *idMap) up(id uint32) (uint32, bool) {
	if m == nil {
		return 0, false
	}
	for _, e := range *m {
		if id >= e.Lower && id-e.Lower < e.Count {
			return e.First + (id - e.Lower), true
		}
	}
	return 0, false
}

// down maps the count ids from id in the namespace to global ids: all of
// them must fall in one line (map_id_range_down).
func (m *idMap) down(id, count uint32) (uint32, bool) {
	if m == nil {
		return 0, false
	}
	last := id + count - 1
	for _, e := range *m {
		if id >= e.First && id-e.First < e.Count && last >= e.First && last-e.First < e.Count {
			return e.Lower + (id - e.First), true
		}
	}
	return 0, false
}

// MapFromKUID returns the uid that k is in ns, false if it has none.
func (ns *UserNamespace) MapFromKUID(k KUID) (uint32, bool) {
	if ns == nil {
		return uint32(k), uint32(k) != NoID
	}
	return ns.uidMap.Load().up(uint32(k))
}

// MapFromKGID returns the gid that k is in ns, false if it has none.
func (ns *UserNamespace) MapFromKGID(k KGID) (uint32, bool) {
	if ns == nil {
		return uint32(k), uint32(k) != NoID
	}
	return ns.gidMap.Load().up(uint32(k))
}

// UIDOf returns the uid k is in ns, the overflow id if it has none
// (from_kuid_munged).
func (ns *UserNamespace) UIDOf(k KUID) uint32 {
	if id, ok := ns.MapFromKUID(k); ok {
		return id
	}
	return OverflowID
}

// GIDOf returns the gid k is in ns, the overflow id if it has none.
func (ns *UserNamespace) GIDOf(k KGID) uint32 {
	if id, ok := ns.MapFromKGID(k); ok {
		return id
	}
	return OverflowID
}

// MapToKUID returns the global uid of ns's uid id, false if it has none
// (make_kuid and uid_valid).
func (ns *UserNamespace) MapToKUID(id uint32) (KUID, bool) {
	if ns == nil {
		return KUID(id), id != NoID
	}
	k, ok := ns.uidMap.Load().down(id, 1)
	return KUID(k), ok
}

// MapToKGID returns the global gid of ns's gid id, false if it has none.
func (ns *UserNamespace) MapToKGID(id uint32) (KGID, bool) {
	if ns == nil {
		return KGID(id), id != NoID
	}
	k, ok := ns.gidMap.Load().down(id, 1)
	return KGID(k), ok
}

// RootKUID returns the global uid of ns's uid 0, NoID when it has none
// (no task has that id, so comparisons with it fail).
func (ns *UserNamespace) RootKUID() KUID {
	if k, ok := ns.MapToKUID(0); ok {
		return k
	}
	return KUID(NoID)
}

// HasCapabilityIn reports whether c has capability cp over objects owned
// by ns (Linux's ns_capable): in its own namespace its effective set
// decides; in a namespace below its own, it has every capability if it
// owns that namespace or one of its ancestors below its own; elsewhere
// none.
func (c *Credentials) HasCapabilityIn(cp uint, ns *UserNamespace) bool {
	own := c.UserNamespace
	for {
		if ns == own {
			return c.EffectiveCaps.Has(cp)
		}
		if ns.Level() <= own.Level() {
			return false
		}
		if ns.parent == own && ns.owner == c.EffectiveUID {
			return true
		}
		ns = ns.parent
	}
}

// HasOwnCapability reports whether c has capability cp in its own user
// namespace: the check of the calls that act on the caller itself
// (setuid(2), capset(2)) and on objects its namespace owns.
func (c *Credentials) HasOwnCapability(cp uint) bool { return c.EffectiveCaps.Has(cp) }

// InUserNamespace returns a copy of c entered into ns as its creator or
// a joiner gets it (set_cred_user_ns): every capability in ns, nothing
// inheritable or ambient, the ids unchanged.
func (c *Credentials) InUserNamespace(ns *UserNamespace) *Credentials {
	n := c.Fork()
	n.UserNamespace = ns
	n.PermittedCaps, n.EffectiveCaps, n.BoundingCaps = AllCaps, AllCaps, AllCaps
	n.InheritableCaps, n.AmbientCaps = 0, 0
	n.KeepCaps = false
	return n
}
