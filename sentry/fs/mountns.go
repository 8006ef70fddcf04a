package fs

import "github.com/moat-sandbox/moat/sentry/kernel/auth"

// Mount namespaces as objects: copying one (clone and unshare with
// CLONE_NEWNS), naming it (its nsfs inode) and releasing it when its last
// holder goes.

// Copy returns a new namespace owned by user namespace owner (nil: the
// initial) holding a copy of every mount of ns, with the same file
// systems, roots and flags, in the same places, with one reference (the
// caller's), and a function that maps a position in ns to the same
// position in the copy (positions on mounts of no namespace, or
// detached, map to themselves), for moving a task's root and working
// directory, as Linux's copy_mnt_ns. The copies of shared mounts are
// peers of the originals, the copies of slaves slaves of the same
// masters; unbindable mounts are copied and stay unbindable. For an
// owner other than ns's (a new user namespace), as Linux: the copies of
// shared mounts are their slaves instead, and every copy is locked (not
// unmounted or moved alone, its read-only, nosuid, nodev and noexec
// flags kept).
func (ns *MountNamespace) Copy(owner *auth.UserNamespace) (*MountNamespace, func(VirtualDentry) VirtualDentry) {
	treeMu.Lock()
	defer treeMu.Unlock()
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	nns := &MountNamespace{ids: ns.ids, origin: ns.origin, owner: owner, mounts: make(map[mountKey]*Mount, len(ns.mounts))}
	nns.refs.Store(1)
	lessPrivileged := owner != ns.owner
	copies := make(map[*Mount]*Mount, len(ns.all))
	nns.all = make([]*Mount, 0, len(ns.all))
	for _, m := range ns.all {
		c := &Mount{ns: nns, fs: m.fs, root: m.root, mountpoint: m.mountpoint, id: ns.ids.mountID(), fsOwner: m.fsOwner}
		flags := m.flags.Load()
		c.flags.Store(flags)
		if lessPrivileged {
			c.locked = true
			c.lockedFlags = *flags
			if m.group != nil {
				c.joinMaster(m.group)
			} else {
				c.joinMaster(m.master)
			}
		} else {
			c.copyPropagation(m)
			c.locked, c.lockedFlags = m.locked, m.lockedFlags
		}
		c.unbindable = m.unbindable
		copies[m] = c
		nns.all = append(nns.all, c)
		fsMountsAdd(m.fs, 1)
	}
	for _, m := range ns.all {
		if m.parent != nil {
			c := copies[m]
			c.parent = copies[m.parent]
			c.mountpoint.mounts.Add(1)
		}
	}
	for k, m := range ns.mounts {
		nns.mounts[mountKey{copies[k.parent], k.point}] = copies[m]
	}
	nns.root = copies[ns.root]
	translate := func(vd VirtualDentry) VirtualDentry {
		if c, ok := copies[vd.Mount]; ok {
			vd.Mount = c
		}
		return vd
	}
	return nns, translate
}

// TopRoot returns the top-most mount's root on the namespace's root,
// what a lookup of "/" from the namespace's root finds (setns moves a
// task there).
func (ns *MountNamespace) TopRoot() VirtualDentry { return followMounts(ns.Root()) }

// Owner returns the user namespace that owns ns (nil: the initial).
func (ns *MountNamespace) Owner() *auth.UserNamespace { return ns.owner }

// Origin returns the namespace ns was copied from, through any number of
// copies: itself if it is no copy (a container's own, which tells the
// container of a process that made namespaces of its own).
func (ns *MountNamespace) Origin() *MountNamespace { return ns.origin }

// Inode returns the namespace's nsfs inode number, 0 until SetInode.
func (ns *MountNamespace) Inode() uint64 { return ns.inode.Load() }

// SetInode names the namespace with ino unless it has a number already,
// and returns its number.
func (ns *MountNamespace) SetInode(ino uint64) uint64 {
	if ns.inode.CompareAndSwap(0, ino) {
		return ino
	}
	return ns.inode.Load()
}

// IncRef takes a reference.
func (ns *MountNamespace) IncRef() { ns.refs.Add(1) }

// TryIncRef takes a reference unless the namespace is released already.
func (ns *MountNamespace) TryIncRef() bool {
	for {
		r := ns.refs.Load()
		if r <= 0 {
			return false
		}
		if ns.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// DecRef drops a reference. The last one takes every mount of the
// namespace down (as a lazy unmount of its root would), takes them out
// of their peer groups, and gives IN_UNMOUNT to the watches of file
// systems left without a mount. Open files and working directories on
// them keep working.
func (ns *MountNamespace) DecRef() {
	if ns.refs.Add(-1) != 0 {
		return
	}
	treeMu.Lock()
	ns.mu.Lock()
	gone := ns.all
	for _, m := range gone {
		if m.parent != nil {
			m.mountpoint.mounts.Add(-1)
		}
	}
	ns.all = nil
	ns.mounts = make(map[mountKey]*Mount)
	ns.dead = true
	ns.mu.Unlock()
	unused := releaseMounts(gone)
	treeMu.Unlock()
	for _, f := range unused {
		f.notifyUnmount()
	}
}

// Released reports whether the namespace's last reference went.
func (ns *MountNamespace) Released() bool {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	return ns.dead
}
