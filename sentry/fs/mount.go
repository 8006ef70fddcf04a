package fs

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// treeMu is held for every change of a mount tree or of propagation, in
// any namespace (Linux's namespace_sem): it comes before every
// MountNamespace.mu, and only a holder of it takes more than one of
// those at a time.
var treeMu sync.Mutex

// mountIDs hands out mount ids and peer group ids.
type mountIDs struct {
	lastMount atomic.Int64
	// groups are the peer group ids in use (under treeMu); a new group
	// gets the smallest free one, as Linux's.
	groups map[int]bool
}

// mountID returns a fresh mount id.
func (ids *mountIDs) mountID() int { return int(ids.lastMount.Add(1)) }

// fsMountsAdd adds n to f's count of mounts in every namespace and
// reports whether f has none left.
func fsMountsAdd(f *Filesystem, n int) bool {
	return f.mountCount.Add(int32(n)) <= 0
}

// MountFlags are per-mount flags (MS_RDONLY and friends).
type MountFlags struct {
	ReadOnly bool
	NoSUID   bool
	NoDev    bool
	NoExec   bool
}

// Mount is a Filesystem attached to the mount tree.
type Mount struct {
	ns   *MountNamespace
	fs   *Filesystem
	root *Dentry
	// parent and mountpoint change (MS_MOVE, pivot_root, propagation)
	// under treeMu and ns.mu: either is enough to read them.
	parent     *Mount  // nil for the namespace's root mount
	mountpoint *Dentry // in parent
	// flags change with remounts, read without locks.
	flags atomic.Pointer[MountFlags]
	id    int

	// Propagation (mountprop.go), guarded by treeMu: the peer group of a
	// shared mount, the group a slave receives from, MS_UNBINDABLE.
	group      *peerGroup
	master     *peerGroup
	unbindable bool

	// locked is set on the mounts of a copy made for a new user
	// namespace (Linux's MNT_LOCKED): they cannot be unmounted or moved
	// alone, nor their flags in lockedFlags cleared. Set before the
	// namespace is used; pivot_root moves locked (under treeMu and
	// ns.mu, either of which is enough to read it); lockedFlags never
	// changes.
	locked      bool
	lockedFlags MountFlags
	// fsOwner is the user namespace the file system belongs to (nil: the
	// initial; Linux's s_user_ns): its mounter's (MountNew), or, for
	// mounts made without a mounter, the owner of the mount namespace
	// it was first mounted in. A remount of the file system needs
	// CAP_SYS_ADMIN there. Set at creation.
	fsOwner *auth.UserNamespace
}

// Filesystem returns the mounted file system.
func (m *Mount) Filesystem() *Filesystem { return m.fs }

// Root returns the dentry mounted (the file system's root, or a
// subdirectory for bind mounts).
func (m *Mount) Root() *Dentry { return m.root }

// Parent returns the mount this one is mounted on and the mountpoint.
func (m *Mount) Parent() (*Mount, *Dentry) {
	m.ns.mu.RLock()
	defer m.ns.mu.RUnlock()
	return m.parent, m.mountpoint
}

// FilesystemOwner returns the user namespace whose CAP_SYS_ADMIN a
// remount of m's file system needs (nil: the initial).
func (m *Mount) FilesystemOwner() *auth.UserNamespace { return m.fsOwner }

// Flags returns the mount flags.
func (m *Mount) Flags() MountFlags { return *m.flags.Load() }

// ID returns the mount id (as /proc/self/mountinfo shows).
func (m *Mount) ID() int { return m.id }

// Namespace returns the mount's namespace.
func (m *Mount) Namespace() *MountNamespace { return m.ns }

// ReadOnly reports whether writes through this mount fail with EROFS:
// the mount or its file system is read-only. A nil mount (an anonymous
// file: memfd, pipe, socket, ...) is writable, as Linux's internal
// mounts of those files are, so /proc/self/fd/N of a memfd reopens for
// writing.
func (m *Mount) ReadOnly() bool {
	return m != nil && (m.flags.Load().ReadOnly || m.fs.readOnly)
}

// VirtualDentry is a position in the mount tree. The zero value is no
// position; anonymous files have a nil Mount.
type VirtualDentry struct {
	Mount  *Mount
	Dentry *Dentry
}

// Ok reports whether vd names a position.
func (vd VirtualDentry) Ok() bool { return vd.Dentry != nil }

// Stat returns the attributes of vd's node.
func (vd VirtualDentry) Stat(ctx Context) (Stat, error) { return vd.Dentry.Stat(ctx) }

type mountKey struct {
	parent *Mount
	point  *Dentry
}

// MountNamespace is a mount tree. Tasks hold it (Linux's nsproxy), as do
// the nsfs files naming it; when the last reference goes (DecRef) its
// mounts are taken down (mountns.go).
type MountNamespace struct {
	// ids numbers mounts and peer groups, shared by the namespaces
	// copied from one another.
	ids *mountIDs
	// origin is the namespace this one was copied from, through any
	// number of copies (itself if made by NewMountNamespace).
	origin *MountNamespace
	// owner is the user namespace that owns it (nil: the initial).
	owner *auth.UserNamespace
	// refs counts the holders; inode is the nsfs inode number (0 until
	// the kernel names it).
	refs  atomic.Int64
	inode atomic.Uint64

	mu     sync.RWMutex
	root   *Mount
	mounts map[mountKey]*Mount // top-most mount on each mountpoint
	all    []*Mount            // in mount order
	// dead is set once the namespace is released: it has no mounts.
	dead bool
}

// NewMountNamespace returns a namespace whose root mount is f, with one
// reference, its creator's.
func NewMountNamespace(f *Filesystem, flags MountFlags) *MountNamespace {
	return newMountNamespace(&mountIDs{}, f, f.root, flags)
}

// NewSiblingNamespace returns a new namespace whose root mount is f,
// numbering its mounts and peer groups with ns's counters (as Linux's ids
// are unique across namespaces): a sub-container's.
func (ns *MountNamespace) NewSiblingNamespace(f *Filesystem, flags MountFlags) *MountNamespace {
	return newMountNamespace(ns.ids, f, f.root, flags)
}

func newMountNamespace(ids *mountIDs, f *Filesystem, root *Dentry, flags MountFlags) *MountNamespace {
	ns := &MountNamespace{ids: ids, mounts: make(map[mountKey]*Mount)}
	ns.origin = ns
	ns.refs.Store(1)
	ns.root = &Mount{ns: ns, fs: f, root: root, id: ids.mountID()}
	ns.root.flags.Store(&flags)
	ns.all = append(ns.all, ns.root)
	fsMountsAdd(f, 1)
	return ns
}

// Root returns the root of the namespace.
func (ns *MountNamespace) Root() VirtualDentry {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	return VirtualDentry{Mount: ns.root, Dentry: ns.root.root}
}

// Mount attaches f's root at the position at, which must be a directory.
// A mount on a position that already has one stacks on top of it.
func (ns *MountNamespace) Mount(ctx Context, at VirtualDentry, f *Filesystem, flags MountFlags) (*Mount, error) {
	return ns.mountInstance(ctx, at, f, flags, func() (newMountAttrs, error) {
		return newMountAttrs{fsOwner: ns.owner}, nil
	})
}

// mountInstance is Mount and MountNew: attrs, called with treeMu held,
// gives the new mount's attributes or refuses it.
func (ns *MountNamespace) mountInstance(ctx Context, at VirtualDentry, f *Filesystem, flags MountFlags, attrs func() (newMountAttrs, error)) (*Mount, error) {
	if at.Mount == nil || at.Mount.ns != ns {
		return nil, unix.EINVAL
	}
	if err := checkMountpoint(ctx, at, f.root); err != nil {
		return nil, err
	}
	treeMu.Lock()
	defer treeMu.Unlock()
	a, err := attrs()
	if err != nil {
		return nil, err
	}
	return ns.mountLocked(at, f, f.root, flags, nil, a)
}

// BindMount attaches the subtree at src at the position at.
func (ns *MountNamespace) BindMount(ctx Context, at, src VirtualDentry, flags MountFlags) (*Mount, error) {
	return ns.BindMountRec(ctx, at, src, flags, false)
}

// checkMountpoint checks that root may be mounted at at: a position in
// a mount tree (EINVAL), both directories or both not (ENOTDIR).
func checkMountpoint(ctx Context, at VirtualDentry, root *Dentry) error {
	if at.Mount == nil {
		return unix.EINVAL
	}
	st, err := at.Dentry.Stat(ctx)
	if err != nil {
		return err
	}
	rst, err := root.Stat(ctx)
	if err != nil {
		return err
	}
	if st.IsDir() != rst.IsDir() {
		return unix.ENOTDIR
	}
	return nil
}

// newMountAttrs are what a mount of a new file system instance starts
// with: the flags locked on it and the user namespace the file system
// belongs to (Mount.fsOwner).
type newMountAttrs struct {
	locked  MountFlags
	fsOwner *auth.UserNamespace
}

// mountLocked makes a mount of root (in f) with flags on top of the
// mounts at the position at and propagates it to the receivers of its
// parent (mountprop.go). src, if not nil, is the mount a bind copies:
// the new mount joins its peer group and master and keeps its locked
// flags and file system owner; otherwise it starts with attrs.
//
// Preconditions: treeMu is held; ns.mu is not.
func (ns *MountNamespace) mountLocked(at VirtualDentry, f *Filesystem, root *Dentry, flags MountFlags, src *Mount, attrs newMountAttrs) (*Mount, error) {
	ns.mu.Lock()
	if ns.dead {
		ns.mu.Unlock()
		return nil, unix.EINVAL
	}
	m := &Mount{ns: ns, fs: f, root: root, id: ns.ids.mountID(), fsOwner: attrs.fsOwner, lockedFlags: attrs.locked}
	if src != nil {
		// A bind copy keeps the flags its source has locked (Linux's
		// clone_mnt copies MNT_LOCK_*); BindMountRec locks the copies
		// below the top as their sources are.
		m.fsOwner = src.fsOwner
		m.lockedFlags = src.lockedFlags
	}
	m.flags.Store(&flags)
	ns.attachLocked(m, at)
	ns.all = append(ns.all, m)
	ns.mu.Unlock()
	fsMountsAdd(f, 1)
	if src != nil {
		m.copyPropagation(src)
	}
	m.propagateMount()
	return m, nil
}

// Mounts returns every mount in mount order.
func (ns *MountNamespace) Mounts() []*Mount {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	return append([]*Mount(nil), ns.all...)
}

// followMounts returns the top-most mount root at vd, or vd itself.
func followMounts(vd VirtualDentry) VirtualDentry {
	for vd.Mount != nil && vd.Dentry.mounts.Load() > 0 {
		ns := vd.Mount.ns
		ns.mu.RLock()
		m, ok := ns.mounts[mountKey{vd.Mount, vd.Dentry}]
		ns.mu.RUnlock()
		if !ok {
			break
		}
		vd = VirtualDentry{Mount: m, Dentry: m.root}
	}
	return vd
}

// PathOf returns the absolute path of vd as seen from root, as getcwd and
// /proc/self/fd show it. The second result is false if vd is not below
// root; the path is then the one from the namespace's root. Anonymous
// files return their name.
func PathOf(root, vd VirtualDentry) (string, bool) {
	if vd.Mount == nil {
		return vd.Dentry.name, true
	}
	deleted := vd.Dentry.IsDead()
	var parts []string
	reachable := false
	for {
		if vd == root {
			reachable = true
			break
		}
		if vd.Dentry == vd.Mount.root {
			parent, point := vd.Mount.Parent()
			if parent == nil {
				break
			}
			vd = VirtualDentry{Mount: parent, Dentry: point}
			continue
		}
		f := vd.Dentry.fs
		f.nameMu.RLock()
		parent, name := vd.Dentry.parent, vd.Dentry.name
		f.nameMu.RUnlock()
		if parent == nil {
			break
		}
		parts = append(parts, name)
		vd = VirtualDentry{Mount: vd.Mount, Dentry: parent}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	}
	if deleted {
		b.WriteString(" (deleted)")
	}
	return b.String(), reachable
}

// MountPath returns where m is mounted, seen from root.
func MountPath(root VirtualDentry, m *Mount) string {
	p, _ := PathOf(root, VirtualDentry{Mount: m, Dentry: m.root})
	return p
}

func (m *Mount) String() string {
	return fmt.Sprintf("mount %d (%s)", m.id, m.fs.typ)
}
