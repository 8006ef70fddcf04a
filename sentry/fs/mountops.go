package fs

import (
	"golang.org/x/sys/unix"
)

// The mount-tree changes mount(2) and umount2(2) make: stacking a new
// file system was MountNamespace.Mount; here are recursive bind mounts,
// remounts and unmounts. Propagation is in mountprop.go.

// SetFlags replaces m's per-mount flags (a remount).
func (m *Mount) SetFlags(flags MountFlags) {
	m.flags.Store(&flags)
}

// Remount replaces m's per-mount flags as mount(MS_REMOUNT) does: EPERM
// if that would clear a flag locked when m was copied into a new user
// namespace.
func (m *Mount) Remount(flags MountFlags) error {
	l := m.lockedFlags
	if (l.ReadOnly && !flags.ReadOnly) || (l.NoSUID && !flags.NoSUID) ||
		(l.NoDev && !flags.NoDev) || (l.NoExec && !flags.NoExec) {
		return unix.EPERM
	}
	m.SetFlags(flags)
	return nil
}

// isUnder reports whether d is root or below it in their file system's
// tree.
func isUnder(d, root *Dentry) bool {
	f := d.fs
	f.nameMu.RLock()
	defer f.nameMu.RUnlock()
	for ; d != nil; d = d.parent {
		if d == root {
			return true
		}
	}
	return false
}

// BindMountRec bind-mounts src at at and, with rec (MS_REC), every mount
// below src too, at the matching places of the new tree. The copies join
// the peer groups and masters of what they copy; an unbindable src is
// EINVAL, and with rec unbindable mounts below src are left out.
func (ns *MountNamespace) BindMountRec(ctx Context, at, src VirtualDentry, flags MountFlags, rec bool) (*Mount, error) {
	if at.Mount == nil || at.Mount.ns != ns || src.Mount == nil {
		return nil, unix.EINVAL
	}
	if err := checkMountpoint(ctx, at, src.Dentry); err != nil {
		return nil, err
	}
	treeMu.Lock()
	defer treeMu.Unlock()
	if src.Mount.unbindable {
		return nil, unix.EINVAL
	}
	all := ns.Mounts()
	if !rec {
		// A bind of src alone must not uncover what a locked mount
		// below it hides (Linux's has_locked_children: EINVAL).
		for _, c := range all {
			if parent, point := c.Parent(); parent == src.Mount && c.locked && isUnder(point, src.Dentry) {
				return nil, unix.EINVAL
			}
		}
	}
	top, err := ns.mountLocked(at, src.Dentry.fs, src.Dentry, flags, src.Mount, newMountAttrs{})
	if err != nil || !rec {
		return top, err
	}
	// Copy the mounts below src, parents before children (mount order,
	// which moves may have broken: repeat until no copy is added),
	// mapping each source mount to its copy.
	copies := map[*Mount]*Mount{src.Mount: top}
	for added := true; added; {
		added = false
		for _, c := range all {
			if copies[c] != nil || c.unbindable {
				continue
			}
			parent, point := c.Parent()
			parentCopy, ok := copies[parent]
			if !ok || (parent == src.Mount && !isUnder(point, src.Dentry)) {
				continue
			}
			cc, err := ns.mountLocked(VirtualDentry{Mount: parentCopy, Dentry: point}, c.fs, c.root, c.Flags(), c, newMountAttrs{})
			if err != nil {
				return top, err
			}
			// Below the top, a copy of a locked mount is locked (the top
			// itself is not: Linux's __do_loopback clears MNT_LOCKED).
			ns.mu.Lock()
			cc.locked = c.locked
			ns.mu.Unlock()
			copies[c] = cc
			added = true
		}
	}
	return top, nil
}

// MountAt returns the mount whose root is at vd (the top-most one there,
// as Linux's LOOKUP_MOUNTPOINT finds it: after pivot_root(".", "."),
// "." names the old root stacked on the working directory), or EINVAL
// if vd is not a mount's root, as umount2, remounts and moves need.
func MountAt(vd VirtualDentry) (*Mount, error) {
	vd = followMounts(vd)
	if vd.Mount == nil || vd.Dentry != vd.Mount.root {
		return nil, unix.EINVAL
	}
	return vd.Mount, nil
}

// subtreeLocked returns m and every mount below it.
//
// Preconditions: ns.mu is held.
func (ns *MountNamespace) subtreeLocked(m *Mount) map[*Mount]bool {
	in := map[*Mount]bool{m: true}
	for added := true; added; {
		added = false
		for _, c := range ns.all {
			if !in[c] && c.parent != nil && in[c.parent] {
				in[c] = true
				added = true
			}
		}
	}
	return in
}

// Umount detaches m. Mounts on top of it or below it make it busy
// (EBUSY) unless detach (MNT_DETACH), which takes them away too. The
// namespace's root mount cannot go (EINVAL). Open files and working
// directories under m keep working: they hold their positions, as after
// a lazy unmount on Linux. An unmount below a shared mount propagates
// (mountprop.go). Watches on the nodes of a file system left with no
// mount in any namespace get IN_UNMOUNT (then IN_IGNORED), as Linux
// gives them when the superblock goes (there, after the last open file
// closes).
func (ns *MountNamespace) Umount(m *Mount, detach bool) error {
	treeMu.Lock()
	ns.mu.Lock()
	parent, point := m.parent, m.mountpoint
	gone, err := ns.umountLocked(m, detach)
	ns.mu.Unlock()
	var unused []*Filesystem
	if err == nil {
		unused = releaseMounts(gone)
		if parent != nil {
			unused = append(unused, m.propagateUmount(parent, point, detach)...)
		}
	}
	treeMu.Unlock()
	for _, f := range unused {
		f.notifyUnmount()
	}
	return err
}

// umountLocked is Umount's change of the tree; it returns the mounts
// removed.
//
// Preconditions: ns.mu is held for writing.
func (ns *MountNamespace) umountLocked(m *Mount, detach bool) ([]*Mount, error) {
	if m.ns != ns || m.locked {
		return nil, unix.EINVAL
	}
	if m == ns.root {
		return nil, unix.EBUSY
	}
	var gone []*Mount
	doomed := ns.subtreeLocked(m)
	if len(doomed) > 1 && !detach {
		return nil, unix.EBUSY
	}
	kept := ns.all[:0]
	for _, c := range ns.all {
		if doomed[c] {
			gone = append(gone, c)
			continue
		}
		kept = append(kept, c)
	}
	for i := len(kept); i < len(ns.all); i++ {
		ns.all[i] = nil
	}
	ns.all = kept
	for _, c := range gone {
		key := mountKey{c.parent, c.mountpoint}
		if ns.mounts[key] == c {
			delete(ns.mounts, key)
		}
		c.mountpoint.mounts.Add(-1)
	}
	return gone, nil
}
