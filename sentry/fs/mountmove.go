package fs

import (
	"golang.org/x/sys/unix"
)

// Moving mounts: mount(MS_MOVE) and pivot_root(2), with the checks of
// Linux's do_move_mount and pivot_root. The namespace's root mount
// counts as attached, as a container's root is on Linux (its parent is
// the namespace's hidden rootfs), so pivot_root works from it.

// detachLocked takes m off its mountpoint.
//
// Preconditions: ns.mu is held for writing.
func (ns *MountNamespace) detachLocked(m *Mount) {
	if m.parent == nil {
		return
	}
	key := mountKey{m.parent, m.mountpoint}
	if ns.mounts[key] == m {
		delete(ns.mounts, key)
	}
	m.mountpoint.mounts.Add(-1)
	m.parent, m.mountpoint = nil, nil
}

// attachLocked puts m on the position at, on top of any mount already
// there.
//
// Preconditions: ns.mu is held for writing; m is detached.
func (ns *MountNamespace) attachLocked(m *Mount, at VirtualDentry) {
	for {
		top, ok := ns.mounts[mountKey{at.Mount, at.Dentry}]
		if !ok {
			break
		}
		at = VirtualDentry{Mount: top, Dentry: top.root}
	}
	m.parent, m.mountpoint = at.Mount, at.Dentry
	ns.mounts[mountKey{at.Mount, at.Dentry}] = m
	at.Dentry.mounts.Add(1)
}

// reachableLocked reports whether vd is root or below it in the mount
// tree (Linux's is_path_reachable).
//
// Preconditions: ns.mu is held.
func reachableLocked(vd, root VirtualDentry) bool {
	m, d := vd.Mount, vd.Dentry
	for m != root.Mount {
		if m.parent == nil {
			return false
		}
		m, d = m.parent, m.mountpoint
	}
	return isUnder(d, root.Dentry)
}

// Move moves the mount whose root is at src, with the mounts below it,
// to the position at (mount(2)'s MS_MOVE). EINVAL if src is not a
// mount's root or differs from at in being a directory; ELOOP if at is
// inside the moved tree (always so for the namespace's root). Moved
// below a shared mount, the tree becomes shared and is copied to the
// receivers of that mount's peer group, as a new mount there would be.
func (ns *MountNamespace) Move(ctx Context, src, at VirtualDentry) error {
	srcSt, err := src.Stat(ctx)
	if err != nil {
		return err
	}
	atSt, err := at.Stat(ctx)
	if err != nil {
		return err
	}
	m, err := MountAt(src)
	if err != nil {
		return err
	}
	at = followMounts(at)
	treeMu.Lock()
	defer treeMu.Unlock()
	tree, err := ns.moveLocked(m, at, srcSt.IsDir() != atSt.IsDir())
	if err != nil {
		return err
	}
	// Parents before children: each copy goes on its parent's copies.
	for _, c := range tree {
		c.propagateMount()
	}
	return nil
}

// moveLocked is Move's change of the tree; it returns the mounts moved,
// parents before children, if they went below a shared mount (nil
// otherwise).
//
// Preconditions: treeMu is held; ns.mu is not.
func (ns *MountNamespace) moveLocked(m *Mount, at VirtualDentry, kindsDiffer bool) ([]*Mount, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if m.ns != ns || at.Mount == nil || at.Mount.ns != ns || m.locked {
		return nil, unix.EINVAL
	}
	if kindsDiffer {
		return nil, unix.EINVAL
	}
	// A mount below a shared one does not move, and a tree holding an
	// unbindable mount does not go below a shared one (do_move_mount).
	if m.parent != nil && m.parent.group != nil {
		return nil, unix.EINVAL
	}
	if at.Mount.group != nil {
		for c := range ns.subtreeLocked(m) {
			if c.unbindable {
				return nil, unix.EINVAL
			}
		}
	}
	for p := at.Mount; p != nil; p = p.parent {
		if p == m {
			return nil, unix.ELOOP
		}
	}
	if at.Dentry.IsDead() {
		return nil, unix.ENOENT
	}
	ns.detachLocked(m)
	ns.attachLocked(m, at)
	if m.parent.group == nil {
		return nil, nil
	}
	// The moved tree, parents before children.
	tree := []*Mount{m}
	for i := 0; i < len(tree); i++ {
		for _, c := range ns.all {
			if c.parent == tree[i] {
				tree = append(tree, c)
			}
		}
	}
	return tree, nil
}

// PivotRoot implements pivot_root(2) for a task whose root is root:
// the mount at newRoot becomes the namespace's root (or takes the place
// of the task's root mount, if that is not the namespace's) and the
// root mount moves to putOld. Both are directories (the caller checked,
// ENOTDIR). The caller moves the roots and working directories of the
// tasks that were at root to newRoot.
func (ns *MountNamespace) PivotRoot(root, newRoot, putOld VirtualDentry) error {
	putOld = followMounts(putOld)
	treeMu.Lock()
	defer treeMu.Unlock()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	rootMnt, newMnt, oldMnt := root.Mount, newRoot.Mount, putOld.Mount
	if rootMnt == nil || newMnt == nil || oldMnt == nil ||
		rootMnt.ns != ns || newMnt.ns != ns || oldMnt.ns != ns {
		return unix.EINVAL
	}
	// Nothing involved may propagate: put_old's mount and the parents of
	// the new and the old root are not shared.
	if oldMnt.group != nil || (newMnt.parent != nil && newMnt.parent.group != nil) ||
		(rootMnt.parent != nil && rootMnt.parent.group != nil) {
		return unix.EINVAL
	}
	if newMnt.locked {
		return unix.EINVAL
	}
	if newRoot.Dentry.IsDead() {
		return unix.ENOENT
	}
	if newMnt == rootMnt || oldMnt == rootMnt {
		return unix.EBUSY
	}
	if root.Dentry != rootMnt.root {
		return unix.EINVAL
	}
	if newRoot.Dentry != newMnt.root || newMnt.parent == nil {
		return unix.EINVAL
	}
	if !reachableLocked(putOld, newRoot) || !reachableLocked(newRoot, root) {
		return unix.EINVAL
	}
	rootParent, rootPoint := rootMnt.parent, rootMnt.mountpoint
	if rootMnt.locked {
		// The lock stays on the root: the old one can go (what
		// sandboxes in a user namespace do after pivoting).
		newMnt.locked, rootMnt.locked = true, false
	}
	ns.detachLocked(newMnt)
	ns.detachLocked(rootMnt)
	ns.attachLocked(rootMnt, putOld)
	if rootParent == nil {
		ns.root = newMnt
	} else {
		ns.attachLocked(newMnt, VirtualDentry{Mount: rootParent, Dentry: rootPoint})
	}
	return nil
}
