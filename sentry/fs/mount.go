package fs

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

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
	// parent and mountpoint change (MS_MOVE, pivot_root) under ns.mu.
	parent     *Mount  // nil for the namespace's root mount
	mountpoint *Dentry // in parent
	// flags change with remounts, read without locks.
	flags atomic.Pointer[MountFlags]
	id    int
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

// MountNamespace is a mount tree.
type MountNamespace struct {
	mu     sync.RWMutex
	root   *Mount
	mounts map[mountKey]*Mount // top-most mount on each mountpoint
	all    []*Mount            // in mount order
	nextID int
}

// NewMountNamespace returns a namespace whose root mount is f.
func NewMountNamespace(f *Filesystem, flags MountFlags) *MountNamespace {
	ns := &MountNamespace{mounts: make(map[mountKey]*Mount), nextID: 1}
	ns.root = &Mount{ns: ns, fs: f, root: f.root, id: ns.nextID}
	ns.root.flags.Store(&flags)
	ns.nextID++
	ns.all = append(ns.all, ns.root)
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
	return ns.mountDentry(ctx, at, f, f.root, flags)
}

// BindMount attaches the subtree at src at the position at.
func (ns *MountNamespace) BindMount(ctx Context, at, src VirtualDentry, flags MountFlags) (*Mount, error) {
	return ns.mountDentry(ctx, at, src.Dentry.fs, src.Dentry, flags)
}

func (ns *MountNamespace) mountDentry(ctx Context, at VirtualDentry, f *Filesystem, root *Dentry, flags MountFlags) (*Mount, error) {
	if at.Mount == nil || at.Mount.ns != ns {
		return nil, unix.EINVAL
	}
	st, err := at.Dentry.Stat(ctx)
	if err != nil {
		return nil, err
	}
	rst, err := root.Stat(ctx)
	if err != nil {
		return nil, err
	}
	if st.IsDir() != rst.IsDir() {
		return nil, unix.ENOTDIR
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	// Stack on the top-most mount at this position.
	for {
		top, ok := ns.mounts[mountKey{at.Mount, at.Dentry}]
		if !ok {
			break
		}
		at = VirtualDentry{Mount: top, Dentry: top.root}
	}
	m := &Mount{ns: ns, fs: f, root: root, parent: at.Mount, mountpoint: at.Dentry, id: ns.nextID}
	m.flags.Store(&flags)
	ns.nextID++
	ns.mounts[mountKey{at.Mount, at.Dentry}] = m
	at.Dentry.mounts.Add(1)
	ns.all = append(ns.all, m)
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
