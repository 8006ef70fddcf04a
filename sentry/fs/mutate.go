package fs

import "golang.org/x/sys/unix"

// The checks below give the errors Linux gives for each change, in
// Linux's order. They are being turned into the operations themselves
// (see change.go for the file system side).

// changeRefused is the error for a change the checks allowed: EROFS on a
// read-only mount, else EPERM (no file system here can make it).
func changeRefused(vd VirtualDentry) error {
	if vd.Mount.ReadOnly() {
		return unix.EROFS
	}
	return unix.EPERM
}

// CheckCreate gives the result of creating the last component of l.Path
// (mkdir, mknod, symlink, link's new name): EEXIST if it exists, ENOENT
// for a missing name with a trailing slash unless isDir, then EROFS.
func CheckCreate(ctx Context, l *Lookup, isDir bool) error {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return err
	}
	if !p.IsNormal() {
		return unix.EEXIST
	}
	if _, err := p.Dir.Dentry.Lookup(ctx, p.Name); err == nil {
		return unix.EEXIST
	} else if err != unix.ENOENT {
		return err
	}
	if p.TrailingSlash && !isDir {
		return unix.ENOENT
	}
	if p.Dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	if err := MayAccess(ctx, p.Dir, MayWrite|MayExec); err != nil {
		return err
	}
	return unix.EPERM
}

// CheckRemove gives the result of unlink (rmdir false) or rmdir (true) of
// l.Path.
func CheckRemove(ctx Context, l *Lookup, rmdir bool) error {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return err
	}
	switch {
	case !rmdir && !p.IsNormal():
		return unix.EISDIR
	case rmdir && p.Name == ".":
		return unix.EINVAL
	case rmdir && p.Name == "..":
		return unix.ENOTEMPTY
	case rmdir && p.Name == "":
		return unix.EBUSY
	}
	if p.Dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	child, err := p.Dir.Dentry.Lookup(ctx, p.Name)
	if err != nil {
		return err
	}
	cvd := followMounts(VirtualDentry{Mount: p.Dir.Mount, Dentry: child})
	st, err := cvd.Stat(ctx)
	if err != nil {
		return err
	}
	if rmdir && !st.IsDir() {
		return unix.ENOTDIR
	}
	if !rmdir && p.TrailingSlash {
		if st.IsDir() {
			return unix.EISDIR
		}
		return unix.ENOTDIR
	}
	if err := MayAccess(ctx, p.Dir, MayWrite|MayExec); err != nil {
		return err
	}
	if cvd.Mount != p.Dir.Mount {
		return unix.EBUSY
	}
	if !rmdir && st.IsDir() {
		return unix.EISDIR
	}
	return unix.EPERM
}

// CheckRename gives the result of renameat2 from oldl to newl;
// noReplace is RENAME_NOREPLACE.
func CheckRename(ctx Context, oldl, newl *Lookup, noReplace bool) error {
	op, err := ResolveParent(ctx, oldl)
	if err != nil {
		return err
	}
	np, err := ResolveParent(ctx, newl)
	if err != nil {
		return err
	}
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
	if _, err := op.Dir.Dentry.Lookup(ctx, op.Name); err != nil {
		return err
	}
	if noReplace {
		if _, err := np.Dir.Dentry.Lookup(ctx, np.Name); err == nil {
			return unix.EEXIST
		}
	}
	if err := MayAccess(ctx, op.Dir, MayWrite|MayExec); err != nil {
		return err
	}
	if err := MayAccess(ctx, np.Dir, MayWrite|MayExec); err != nil {
		return err
	}
	return unix.EPERM
}

// CheckSetAttr gives the result of changing the attributes (chmod, chown,
// utimes, setxattr) of the node at vd, already resolved.
func CheckSetAttr(ctx Context, vd VirtualDentry) error {
	if vd.Mount == nil {
		// Anonymous files (pipes...) live on internal mounts.
		return unix.EPERM
	}
	return changeRefused(vd)
}

// CheckTruncate gives the result of truncate(2) of the node at vd.
func CheckTruncate(ctx Context, vd VirtualDentry) error {
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return unix.EISDIR
	}
	if !st.IsRegular() {
		return unix.EINVAL
	}
	if vd.Mount.ReadOnly() {
		return unix.EROFS
	}
	if err := CheckPermission(ctx.Credentials(), &st, MayWrite); err != nil {
		return err
	}
	return unix.EPERM
}
