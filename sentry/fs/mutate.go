package fs

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// The namespace changes: mkdir, mknod, symlink, link, unlink, rmdir and
// rename, with Linux's checks in Linux's order (fs/namei.c's
// filename_create, may_create, may_delete, do_renameat2), then the file
// system's MutableDir method and the dentry cache update.

// missing is the error for a name that lookup did not find in d, about to
// be created: ENOENT in uncached (proc-like) directories, whose lookups
// fail outright, else nil.
func missing(d *Dentry) error {
	if _, ok := d.node.(UncachedDir); ok {
		return unix.ENOENT
	}
	return nil
}

// mutableDir returns the node of d as a MutableDir, or EPERM.
func mutableDir(d *Dentry) (MutableDir, error) {
	md, ok := d.node.(MutableDir)
	if !ok {
		return nil, unix.EPERM
	}
	return md, nil
}

// ownerOrCapable is Linux's inode_owner_or_capable.
func ownerOrCapable(c *auth.Credentials, st *Stat) bool {
	return c.FilesystemUID == st.UID || c.HasCapability(unix.CAP_FOWNER)
}

// newOwner gives the owner and mode of a node created in the directory
// of attributes dir: the caller's fsuid, and its fsgid unless the
// directory is setgid (then the directory's group, which new directories
// inherit with the setgid bit, and the setgid bit of a group-executable
// file is dropped for creators outside that group).
func newOwner(c *auth.Credentials, dir *Stat, mode uint32) CreateOptions {
	o := CreateOptions{Mode: mode, UID: c.FilesystemUID, GID: c.FilesystemGID}
	if dir.Mode&unix.S_ISGID == 0 {
		return o
	}
	o.GID = dir.GID
	if mode&unix.S_IFMT == unix.S_IFDIR {
		o.Mode |= unix.S_ISGID
	} else if mode&(unix.S_ISGID|unix.S_IXGRP) == unix.S_ISGID|unix.S_IXGRP &&
		!c.InGroup(dir.GID) && !c.HasCapability(unix.CAP_FSETID) {
		o.Mode &^= unix.S_ISGID
	}
	return o
}

// mayCreate is Linux's may_create for a missing name in dir: ENOENT in a
// removed directory, then write and search permission.
func mayCreate(ctx Context, dir *Dentry) (Stat, error) {
	st, err := dir.Stat(ctx)
	if err != nil {
		return st, err
	}
	if dir.IsDead() {
		return st, unix.ENOENT
	}
	return st, CheckPermission(ctx.Credentials(), &st, MayWrite|MayExec)
}

// mayDelete is Linux's may_delete of child from dir: permission on dir,
// the sticky bit, the types, and ENOENT in a removed directory.
func mayDelete(ctx Context, dir, child *Dentry, childSt *Stat, isDir bool) error {
	dirSt, err := dir.Stat(ctx)
	if err != nil {
		return err
	}
	c := ctx.Credentials()
	if err := CheckPermission(c, &dirSt, MayWrite|MayExec); err != nil {
		return err
	}
	if dirSt.Mode&unix.S_ISVTX != 0 && c.FilesystemUID != childSt.UID && c.FilesystemUID != dirSt.UID &&
		!c.HasCapability(unix.CAP_FOWNER) {
		return unix.EPERM
	}
	if isDir {
		if !childSt.IsDir() {
			return unix.ENOTDIR
		}
		if child.IsRoot() {
			return unix.EBUSY
		}
	} else if childSt.IsDir() {
		return unix.EISDIR
	}
	if dir.IsDead() {
		return unix.ENOENT
	}
	return nil
}

// createFunc makes the new node in md once the checks passed.
type createFunc func(md MutableDir, name string, opts CreateOptions) (Node, error)

// create is the common part of mkdir, mknod and symlink: the last
// component of l.Path must not exist; mode is the new node's type and
// permission bits (umask applied).
func create(ctx Context, l *Lookup, mode uint32, fn createFunc) error {
	_, err := createAt(ctx, l, mode, fn)
	return err
}

// createAt is create returning the new node's position.
func createAt(ctx Context, l *Lookup, mode uint32, fn createFunc) (VirtualDentry, error) {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return VirtualDentry{}, err
	}
	if !p.IsNormal() {
		return VirtualDentry{}, unix.EEXIST
	}
	d := p.Dir.Dentry
	d.dirMu.Lock()
	defer d.dirMu.Unlock()
	if _, err := d.lookupLocked(ctx, p.Name); err == nil {
		return VirtualDentry{}, unix.EEXIST
	} else if err != unix.ENOENT {
		return VirtualDentry{}, err
	}
	if err := missing(d); err != nil {
		return VirtualDentry{}, err
	}
	if p.TrailingSlash && mode&unix.S_IFMT != unix.S_IFDIR {
		return VirtualDentry{}, unix.ENOENT
	}
	if p.Dir.Mount.ReadOnly() {
		return VirtualDentry{}, unix.EROFS
	}
	dirSt, err := mayCreate(ctx, d)
	if err != nil {
		return VirtualDentry{}, err
	}
	md, err := mutableDir(d)
	if err != nil {
		return VirtualDentry{}, err
	}
	n, err := fn(md, p.Name, newOwner(ctx.Credentials(), &dirSt, mode))
	if err != nil {
		return VirtualDentry{}, err
	}
	child := d.addChild(p.Name, n)
	notifyChild(d, unix.IN_CREATE|dirBit(mode&unix.S_IFMT == unix.S_IFDIR), p.Name, 0)
	return VirtualDentry{Mount: p.Dir.Mount, Dentry: child}, nil
}

// Mkdir implements mkdir(2) of l.Path. mode has the umask applied; only
// its permission and sticky bits count.
func Mkdir(ctx Context, l *Lookup, mode uint32) error {
	return create(ctx, l, unix.S_IFDIR|mode&(0o777|unix.S_ISVTX), func(md MutableDir, name string, opts CreateOptions) (Node, error) {
		return md.Mkdir(ctx, name, opts)
	})
}

// Mknod implements mknod(2) of l.Path: mode is the type (0 for a regular
// file; not a directory, which the caller refuses) and the permission
// bits with the umask applied; rdev the device of S_IFCHR and S_IFBLK.
func Mknod(ctx Context, l *Lookup, mode uint32, rdev uint64) error {
	typ := mode & unix.S_IFMT
	if typ == 0 {
		typ = unix.S_IFREG
	}
	return create(ctx, l, typ|mode&0o7777, func(md MutableDir, name string, opts CreateOptions) (Node, error) {
		if (typ == unix.S_IFCHR || typ == unix.S_IFBLK) && !ctx.Credentials().HasCapability(unix.CAP_MKNOD) {
			return nil, unix.EPERM
		}
		if typ == unix.S_IFCHR || typ == unix.S_IFBLK {
			opts.Rdev = rdev
		}
		return md.Mknod(ctx, name, opts)
	})
}

// MknodSocket creates the socket node bind(2) of a Unix-domain socket
// makes at l.Path (mode has the umask applied) and returns its position.
// An existing name gives EADDRINUSE, as Linux's unix_bind does.
func MknodSocket(ctx Context, l *Lookup, mode uint32) (VirtualDentry, error) {
	vd, err := createAt(ctx, l, unix.S_IFSOCK|mode&0o7777, func(md MutableDir, name string, opts CreateOptions) (Node, error) {
		return md.Mknod(ctx, name, opts)
	})
	if err == unix.EEXIST {
		return VirtualDentry{}, unix.EADDRINUSE
	}
	return vd, err
}

// Symlink implements symlink(2): a link at l.Path to target (not empty).
func Symlink(ctx Context, l *Lookup, target string) error {
	return create(ctx, l, unix.S_IFLNK|0o777, func(md MutableDir, name string, opts CreateOptions) (Node, error) {
		return md.Symlink(ctx, name, target, opts)
	})
}

// safeHardlinkSource is Linux's protected_hardlinks rule (on in the
// distributions we mimic): without ownership or CAP_FOWNER, only a
// regular file that is not setuid, not setgid-executable, and that the
// caller may read and write can be linked.
func safeHardlinkSource(c *auth.Credentials, st *Stat) bool {
	if ownerOrCapable(c, st) {
		return true
	}
	if !st.IsRegular() || st.Mode&unix.S_ISUID != 0 ||
		st.Mode&(unix.S_ISGID|unix.S_IXGRP) == unix.S_ISGID|unix.S_IXGRP {
		return false
	}
	return CheckPermission(c, st, MayRead|MayWrite) == nil
}

// Link implements link(2): a new name l.Path for the node at old.
func Link(ctx Context, old VirtualDentry, l *Lookup) error {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return err
	}
	if !p.IsNormal() {
		return unix.EEXIST
	}
	d := p.Dir.Dentry
	d.dirMu.Lock()
	defer d.dirMu.Unlock()
	if _, err := d.lookupLocked(ctx, p.Name); err == nil {
		return unix.EEXIST
	} else if err != unix.ENOENT {
		return err
	}
	if err := missing(d); err != nil {
		return err
	}
	if p.TrailingSlash {
		return unix.ENOENT
	}
	if p.Dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	if old.Mount != p.Dir.Mount {
		return unix.EXDEV
	}
	st, err := old.Stat(ctx)
	if err != nil {
		return err
	}
	if !safeHardlinkSource(ctx.Credentials(), &st) {
		return unix.EPERM
	}
	if _, err := mayCreate(ctx, d); err != nil {
		return err
	}
	if old.Dentry.fs != d.fs {
		return unix.EXDEV
	}
	if st.IsDir() {
		return unix.EPERM
	}
	md, err := mutableDir(d)
	if err != nil {
		return err
	}
	if old.Dentry.noLink.Load() {
		return unix.ENOENT
	}
	if err := md.Link(ctx, p.Name, old.Dentry.node); err != nil {
		return err
	}
	d.addChild(p.Name, old.Dentry.node)
	notifyNode(d.fs, old.Dentry.node, unix.IN_ATTRIB)
	notifyChild(d, unix.IN_CREATE, p.Name, 0)
	return nil
}

// Unlink implements unlink(2) of l.Path.
func Unlink(ctx Context, l *Lookup) error {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return err
	}
	if !p.IsNormal() {
		return unix.EISDIR
	}
	if p.Dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	d := p.Dir.Dentry
	d.dirMu.Lock()
	defer d.dirMu.Unlock()
	child, err := d.lookupLocked(ctx, p.Name)
	if err != nil {
		return err
	}
	st, err := child.Stat(ctx)
	if err != nil {
		return err
	}
	if p.TrailingSlash {
		if st.IsDir() {
			return unix.EISDIR
		}
		return unix.ENOTDIR
	}
	if err := mayDelete(ctx, d, child, &st, false); err != nil {
		return err
	}
	md, err := mutableDir(d)
	if err != nil {
		return err
	}
	if child.mounts.Load() > 0 {
		return unix.EBUSY
	}
	if err := md.Unlink(ctx, p.Name, child.node); err != nil {
		return err
	}
	d.removeChild(p.Name)
	notifyNode(d.fs, child.node, unix.IN_ATTRIB)
	notifyChild(d, unix.IN_DELETE, p.Name, 0)
	notifyGone(ctx, child)
	return nil
}

// Rmdir implements rmdir(2) of l.Path.
func Rmdir(ctx Context, l *Lookup) error {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return err
	}
	switch p.Name {
	case ".":
		return unix.EINVAL
	case "..":
		return unix.ENOTEMPTY
	case "":
		return unix.EBUSY
	}
	if p.Dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	d := p.Dir.Dentry
	d.dirMu.Lock()
	defer d.dirMu.Unlock()
	child, err := d.lookupLocked(ctx, p.Name)
	if err != nil {
		return err
	}
	st, err := child.Stat(ctx)
	if err != nil {
		return err
	}
	if err := mayDelete(ctx, d, child, &st, true); err != nil {
		return err
	}
	md, err := mutableDir(d)
	if err != nil {
		return err
	}
	child.dirMu.Lock()
	defer child.dirMu.Unlock()
	if child.mounts.Load() > 0 {
		return unix.EBUSY
	}
	if err := md.Rmdir(ctx, p.Name, child.node); err != nil {
		return err
	}
	d.removeChild(p.Name)
	notifyChild(d, unix.IN_DELETE|unix.IN_ISDIR, p.Name, 0)
	deleteSelf(child)
	return nil
}

// isAncestor reports whether a is d or one of its ancestors.
//
// Preconditions: the file system's renameMu is held.
func isAncestor(a, d *Dentry) bool {
	for ; d != nil; d = d.parent {
		if d == a {
			return true
		}
	}
	return false
}

// Rename implements renameat2(2) from oldl to newl; flags are
// RENAME_NOREPLACE, RENAME_EXCHANGE or RENAME_WHITEOUT (the caller has
// checked the combination and CAP_MKNOD).
func Rename(ctx Context, oldl, newl *Lookup, flags uint32) error {
	op, err := ResolveParent(ctx, oldl)
	if err != nil {
		return err
	}
	np, err := ResolveParent(ctx, newl)
	if err != nil {
		return err
	}
	noReplace := flags&unix.RENAME_NOREPLACE != 0
	exchange := flags&unix.RENAME_EXCHANGE != 0
	if op.Dir.Mount != np.Dir.Mount {
		return unix.EXDEV
	}
	if !op.IsNormal() {
		return unix.EBUSY
	}
	if !np.IsNormal() {
		if noReplace {
			return unix.EEXIST
		}
		return unix.EBUSY
	}
	if op.Dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	od, nd := op.Dir.Dentry, np.Dir.Dentry
	f := od.fs
	f.renameMu.Lock()
	defer f.renameMu.Unlock()
	switch {
	case od == nd:
		od.dirMu.Lock()
		defer od.dirMu.Unlock()
	case isAncestor(nd, od):
		nd.dirMu.Lock()
		defer nd.dirMu.Unlock()
		od.dirMu.Lock()
		defer od.dirMu.Unlock()
	default:
		od.dirMu.Lock()
		defer od.dirMu.Unlock()
		nd.dirMu.Lock()
		defer nd.dirMu.Unlock()
	}
	old, err := od.lookupLocked(ctx, op.Name)
	if err != nil {
		return err
	}
	oldSt, err := old.Stat(ctx)
	if err != nil {
		return err
	}
	repl, err := nd.lookupLocked(ctx, np.Name)
	if err != nil && err != unix.ENOENT {
		return err
	}
	var replSt Stat
	if repl != nil {
		if replSt, err = repl.Stat(ctx); err != nil {
			return err
		}
		if noReplace {
			return unix.EEXIST
		}
	}
	if exchange {
		if repl == nil {
			return unix.ENOENT
		}
		if !replSt.IsDir() && np.TrailingSlash {
			return unix.ENOTDIR
		}
	}
	if !oldSt.IsDir() {
		if op.TrailingSlash {
			return unix.ENOTDIR
		}
		if !exchange && np.TrailingSlash {
			return unix.ENOTDIR
		}
	}
	// Neither may be moved below itself.
	if isAncestor(old, nd) {
		return unix.EINVAL
	}
	if repl != nil && isAncestor(repl, od) {
		if exchange {
			return unix.EINVAL
		}
		return unix.ENOTEMPTY
	}
	if repl != nil && repl.node == old.node {
		// Two names of one node: nothing to do.
		return nil
	}
	if err := mayDelete(ctx, od, old, &oldSt, oldSt.IsDir()); err != nil {
		return err
	}
	switch {
	case repl == nil:
		if _, err := mayCreate(ctx, nd); err != nil {
			return err
		}
	case exchange:
		if err := mayDelete(ctx, nd, repl, &replSt, replSt.IsDir()); err != nil {
			return err
		}
	default:
		if err := mayDelete(ctx, nd, repl, &replSt, oldSt.IsDir()); err != nil {
			return err
		}
	}
	omd, err := mutableDir(od)
	if err != nil {
		return err
	}
	nmd, err := mutableDir(nd)
	if err != nil {
		return err
	}
	if od != nd {
		// A directory moving to a new parent gets a new "..".
		c := ctx.Credentials()
		if oldSt.IsDir() {
			if err := CheckPermission(c, &oldSt, MayWrite); err != nil {
				return err
			}
		}
		if exchange && replSt.IsDir() {
			if err := CheckPermission(c, &replSt, MayWrite); err != nil {
				return err
			}
		}
	}
	if old.mounts.Load() > 0 || (repl != nil && repl.mounts.Load() > 0) {
		return unix.EBUSY
	}
	var replNode Node
	if repl != nil {
		replNode = repl.node
		if replSt.IsDir() && !exchange {
			repl.dirMu.Lock()
			defer repl.dirMu.Unlock()
		}
	}
	if err := omd.Rename(ctx, op.Name, old.node, nmd, np.Name, replNode, flags&unix.RENAME_EXCHANGE); err != nil {
		return err
	}
	moveDentries(od, op.Name, old, nd, np.Name, repl, exchange)
	notifyRename(ctx, od, op.Name, old, oldSt.IsDir(), nd, np.Name, repl, replSt.IsDir(), exchange)
	if flags&unix.RENAME_WHITEOUT != 0 {
		// A whiteout (a 0/0 character device, as overlay file systems
		// read it) takes the old name. Linux makes it in the same
		// step; here a failure is reported after the move.
		dirSt, err := od.Stat(ctx)
		if err != nil {
			return err
		}
		n, err := omd.Mknod(ctx, op.Name, newOwner(ctx.Credentials(), &dirSt, unix.S_IFCHR))
		if err != nil {
			return err
		}
		od.addChild(op.Name, n)
	}
	return nil
}

// moveDentries updates the cache after a rename of old (od/oldName) to
// nd/newName, where repl was (swapped with old if exchange, else dead).
//
// Preconditions: the file system's renameMu is held.
func moveDentries(od *Dentry, oldName string, old, nd *Dentry, newName string, repl *Dentry, exchange bool) {
	f := od.fs
	f.nameMu.Lock()
	defer f.nameMu.Unlock()
	od.mu.Lock()
	if od != nd {
		nd.mu.Lock()
	}
	od.gen++
	nd.gen++
	_, oldCached := od.children[oldName]
	_, replCached := nd.children[newName]
	delete(od.children, oldName)
	delete(nd.children, newName)
	if repl != nil && !exchange {
		repl.dead.Store(true)
	}
	old.parent, old.name = nd, newName
	if oldCached {
		if nd.children == nil {
			nd.children = make(map[string]*Dentry)
		}
		nd.children[newName] = old
	}
	if exchange {
		repl.parent, repl.name = od, oldName
		if replCached {
			if od.children == nil {
				od.children = make(map[string]*Dentry)
			}
			od.children[oldName] = repl
		}
	}
	if od != nd {
		nd.mu.Unlock()
	}
	od.mu.Unlock()
}

// notifyRename reports the events of a rename, as Linux's fsnotify_move:
// IN_MOVED_FROM and IN_MOVED_TO with one cookie, IN_ATTRIB on a replaced
// node and IN_MOVE_SELF on the moved one (both ways for an exchange),
// then IN_DELETE_SELF of a replaced node whose last link went.
func notifyRename(ctx Context, od *Dentry, oldName string, old *Dentry, oldIsDir bool, nd *Dentry, newName string, repl *Dentry, replIsDir, exchange bool) {
	if !watched(od) {
		return
	}
	move := func(from *Dentry, fromName string, to *Dentry, toName string, n Node, isDir bool, replaced *Dentry) {
		c := moveCookie.Add(1)
		notifyChild(from, unix.IN_MOVED_FROM|dirBit(isDir), fromName, c)
		notifyChild(to, unix.IN_MOVED_TO|dirBit(isDir), toName, c)
		if replaced != nil {
			notifyNode(od.fs, replaced.node, unix.IN_ATTRIB)
		}
		notifyNode(od.fs, n, unix.IN_MOVE_SELF)
	}
	if exchange {
		move(od, oldName, nd, newName, old.node, oldIsDir, nil)
		move(nd, newName, od, oldName, repl.node, replIsDir, nil)
		return
	}
	move(od, oldName, nd, newName, old.node, oldIsDir, repl)
	if repl != nil {
		if replIsDir {
			deleteSelf(repl)
		} else {
			notifyGone(ctx, repl)
		}
	}
}
