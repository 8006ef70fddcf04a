package fs

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Attribute changes: chmod, chown, utimes, truncate, fallocate and
// fsync, with Linux's checks (setattr_prepare, chown_ok, chgrp_ok,
// vfs_utimes, vfs_truncate, vfs_fallocate).

// setAttrNode returns vd's node as a SetAttrNode, or EPERM.
func setAttrNode(d *Dentry) (SetAttrNode, error) {
	n, ok := d.node.(SetAttrNode)
	if !ok {
		return nil, unix.EPERM
	}
	return n, nil
}

// applySetAttr stamps ctime and hands opts to the node. Nodes that keep
// no attributes (synthetic files: /dev/null, /proc) accept a change of
// times only, as Linux's in-memory inodes of those file systems do, and
// refuse the rest with EPERM.
func applySetAttr(ctx Context, d *Dentry, opts *SetAttrOptions) error {
	n, err := setAttrNode(d)
	if err != nil {
		if opts.Mask&^(SetAttrAtime|SetAttrMtime|SetAttrCtime) == 0 {
			return nil
		}
		return err
	}
	now := Now()
	opts.Mask |= SetAttrCtime
	opts.Ctime = now
	if opts.Mask&SetAttrSize != 0 {
		opts.Mask |= SetAttrMtime
		opts.Mtime = now
	}
	if err := n.SetAttr(ctx, opts); err != nil {
		return err
	}
	if watched(d) {
		notifyDentry(ctx, d, attrEvents(opts.Mask))
	}
	return nil
}

// writableMount gives EROFS for positions on read-only mounts.
// Anonymous files (no mount) are writable.
func writableMount(vd VirtualDentry) error {
	if vd.Mount != nil && vd.Mount.ReadOnly() {
		return unix.EROFS
	}
	return nil
}

// Chmod implements chmod(2) of the node at vd: mode's permission bits
// (07777) replace the node's.
func Chmod(ctx Context, vd VirtualDentry, mode uint32) error {
	if err := writableMount(vd); err != nil {
		return err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	if st.IsSymlink() {
		return unix.EOPNOTSUPP
	}
	c := ctx.Credentials()
	if !ownerOrCapable(c, &st) {
		return unix.EPERM
	}
	mode &= 0o7777
	if mode&unix.S_ISGID != 0 && !c.InGroup(st.GID) && !c.HasCapability(unix.CAP_FSETID) {
		mode &^= unix.S_ISGID
	}
	return applySetAttr(ctx, vd.Dentry, &SetAttrOptions{Mask: SetAttrMode, Mode: mode})
}

// NoID is the uid or gid (-1) that chown leaves as it is.
const NoID = 0xffffffff

// Chown implements chown(2) of the node at vd; uid and gid NoID leave the
// owner or group as it is.
func Chown(ctx Context, vd VirtualDentry, uid, gid uint32) error {
	if err := writableMount(vd); err != nil {
		return err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	c := ctx.Credentials()
	opts := SetAttrOptions{}
	if uid != NoID {
		opts.Mask |= SetAttrUID
		opts.UID = auth.KUID(uid)
		if !(c.FilesystemUID == st.UID && opts.UID == st.UID) && !c.HasCapability(unix.CAP_CHOWN) {
			return unix.EPERM
		}
	}
	if gid != NoID {
		opts.Mask |= SetAttrGID
		opts.GID = auth.KGID(gid)
		ok := c.FilesystemUID == st.UID && (opts.GID == st.GID || c.InGroup(opts.GID))
		if !ok && !c.HasCapability(unix.CAP_CHOWN) {
			return unix.EPERM
		}
	}
	if !st.IsDir() {
		// Linux drops setuid always, and setgid when it means execution
		// or the caller could not set it.
		mode := st.Mode & 0o7777
		if mode&unix.S_ISUID != 0 {
			mode &^= unix.S_ISUID
		}
		if mode&unix.S_ISGID != 0 && (mode&unix.S_IXGRP != 0 ||
			(!c.InGroup(st.GID) && !c.HasCapability(unix.CAP_FSETID))) {
			mode &^= unix.S_ISGID
		}
		if mode != st.Mode&0o7777 {
			// Linux's setattr_prepare then checks the mode change as
			// a chmod.
			if !ownerOrCapable(c, &st) {
				return unix.EPERM
			}
			opts.Mask |= SetAttrMode
			opts.Mode = mode
		}
	}
	return applySetAttr(ctx, vd.Dentry, &opts)
}

// Utimes implements utimensat(2) of the node at vd: times nil sets both
// to now; otherwise each may be UTIME_NOW or UTIME_OMIT (checked valid by
// the caller).
func Utimes(ctx Context, vd VirtualDentry, times *[2]unix.Timespec) error {
	if times != nil && times[0].Nsec == unix.UTIME_NOW && times[1].Nsec == unix.UTIME_NOW {
		times = nil
	}
	if times != nil && times[0].Nsec == unix.UTIME_OMIT && times[1].Nsec == unix.UTIME_OMIT {
		return nil
	}
	if err := writableMount(vd); err != nil {
		return err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	c := ctx.Credentials()
	now := Now()
	opts := SetAttrOptions{Mask: SetAttrAtime | SetAttrMtime, Atime: now, Mtime: now}
	if times == nil {
		if !ownerOrCapable(c, &st) {
			if err := CheckPermission(c, &st, MayWrite); err != nil {
				return unix.EACCES
			}
		}
	} else {
		if !ownerOrCapable(c, &st) {
			return unix.EPERM
		}
		for i, ts := range times {
			bit, dst := uint32(SetAttrAtime), &opts.Atime
			if i == 1 {
				bit, dst = SetAttrMtime, &opts.Mtime
			}
			switch ts.Nsec {
			case unix.UTIME_OMIT:
				opts.Mask &^= bit
			case unix.UTIME_NOW:
			default:
				*dst = ts
			}
		}
	}
	return applySetAttr(ctx, vd.Dentry, &opts)
}

// killPrivs returns the setuid and setgid bits a write or truncation by
// the caller removes from a regular file of attributes st: setuid, and
// setgid when it means execution, unless the caller has CAP_FSETID.
func killPrivs(ctx Context, st *Stat) uint32 {
	if !st.IsRegular() || ctx.Credentials().HasCapability(unix.CAP_FSETID) {
		return 0
	}
	kill := st.Mode & unix.S_ISUID
	if st.Mode&(unix.S_ISGID|unix.S_IXGRP) == unix.S_ISGID|unix.S_IXGRP {
		kill |= unix.S_ISGID
	}
	return kill
}

// truncateOptions is a size change, dropping the bits killPrivs names.
func truncateOptions(ctx Context, st *Stat, size int64) *SetAttrOptions {
	opts := &SetAttrOptions{Mask: SetAttrSize, Size: size}
	if kill := killPrivs(ctx, st); kill != 0 {
		opts.Mask |= SetAttrMode
		opts.Mode = st.Mode & 0o7777 &^ kill
	}
	return opts
}

// RemovePrivs drops the setuid and setgid bits of the regular file open
// at fd before a write by a caller without CAP_FSETID, as Linux's
// file_remove_privs does.
func RemovePrivs(ctx Context, fd *FileDescription) error {
	if fd.opts.Stream || ctx.Credentials().HasCapability(unix.CAP_FSETID) {
		return nil
	}
	st, err := fd.Stat(ctx)
	if err != nil {
		return err
	}
	kill := killPrivs(ctx, &st)
	if kill == 0 {
		return nil
	}
	if _, ok := fd.Dentry().node.(SetAttrNode); !ok {
		return nil
	}
	return applySetAttr(ctx, fd.Dentry(), &SetAttrOptions{Mask: SetAttrMode, Mode: st.Mode & 0o7777 &^ kill})
}

// Truncate implements truncate(2) of the node at vd (size >= 0).
func Truncate(ctx Context, vd VirtualDentry, size int64) error {
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
	if err := writableMount(vd); err != nil {
		return err
	}
	if err := CheckPermission(ctx.Credentials(), &st, MayWrite); err != nil {
		return err
	}
	if err := checkWriteAccess(vd.Dentry, &st); err != nil {
		return err
	}
	return applySetAttr(ctx, vd.Dentry, truncateOptions(ctx, &st, size))
}

// Ftruncate implements ftruncate(2) of the open file fd (size >= 0).
func Ftruncate(ctx Context, fd *FileDescription, size int64) error {
	st, err := fd.Stat(ctx)
	if err != nil {
		return err
	}
	if !st.IsRegular() || !fd.Writable() {
		return unix.EINVAL
	}
	return applySetAttr(ctx, fd.Dentry(), truncateOptions(ctx, &st, size))
}

// truncateNode empties the regular file at d for open(O_TRUNC). Nodes
// that cannot change ignore it, as Linux's /proc files do.
func truncateNode(ctx Context, d *Dentry, size int64) error {
	if _, ok := d.node.(SetAttrNode); !ok {
		return nil
	}
	st, err := d.Stat(ctx)
	if err != nil {
		return err
	}
	return applySetAttr(ctx, d, truncateOptions(ctx, &st, size))
}

// fallocWriteZeroes is FALLOC_FL_WRITE_ZEROES (Linux 6.17).
const fallocWriteZeroes = 0x80

// fallocModeMask are the FALLOC_FL_* bits that choose the operation.
const fallocModeMask = unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_COLLAPSE_RANGE | unix.FALLOC_FL_ZERO_RANGE |
	unix.FALLOC_FL_INSERT_RANGE | unix.FALLOC_FL_UNSHARE_RANGE | fallocWriteZeroes

// Fallocate implements fallocate(2) on the open file fd, with the mode
// checks of Linux 6.17 and later: one operation, KEEP_SIZE required by
// PUNCH_HOLE and refused by COLLAPSE_RANGE, INSERT_RANGE and
// WRITE_ZEROES. File systems give EOPNOTSUPP for operations they lack.
func Fallocate(ctx Context, fd *FileDescription, mode uint32, off, length int64) error {
	if off < 0 || length <= 0 {
		return unix.EINVAL
	}
	if mode&^(fallocModeMask|unix.FALLOC_FL_KEEP_SIZE) != 0 {
		return unix.EOPNOTSUPP
	}
	switch mode & fallocModeMask {
	case 0, unix.FALLOC_FL_UNSHARE_RANGE, unix.FALLOC_FL_ZERO_RANGE:
	case unix.FALLOC_FL_PUNCH_HOLE:
		if mode&unix.FALLOC_FL_KEEP_SIZE == 0 {
			return unix.EOPNOTSUPP
		}
	case unix.FALLOC_FL_COLLAPSE_RANGE, unix.FALLOC_FL_INSERT_RANGE, fallocWriteZeroes:
		if mode&unix.FALLOC_FL_KEEP_SIZE != 0 {
			return unix.EOPNOTSUPP
		}
	default:
		return unix.EOPNOTSUPP
	}
	if !fd.Writable() {
		return unix.EBADF
	}
	st, err := fd.Stat(ctx)
	if err != nil {
		return err
	}
	switch st.Type() {
	case unix.S_IFIFO:
		return unix.ESPIPE
	case unix.S_IFDIR:
		return unix.EISDIR
	case unix.S_IFREG, unix.S_IFBLK:
	default:
		return unix.ENODEV
	}
	if off+length < 0 {
		return unix.EFBIG
	}
	a, ok := fd.impl.(Allocator)
	if !ok {
		return unix.EOPNOTSUPP
	}
	return a.Fallocate(ctx, fd, mode, off, length)
}

// Fsync implements fsync(2) (fdatasync(2) if dataOnly): regular files
// and directories flush through their Syncer if they have one; pipes,
// sockets and devices have no fsync (EINVAL).
func Fsync(ctx Context, fd *FileDescription, dataOnly bool) error {
	st, err := fd.Stat(ctx)
	if err != nil {
		return err
	}
	if !st.IsRegular() && !st.IsDir() {
		return unix.EINVAL
	}
	if s, ok := fd.impl.(Syncer); ok {
		return s.Sync(ctx, fd, dataOnly)
	}
	return nil
}

// SyncFS implements syncfs(2) for the file system fd is on.
func SyncFS(ctx Context, fd *FileDescription) error {
	d := fd.Dentry()
	if d.fs == nil {
		return nil
	}
	if s, ok := d.fs.impl.(FilesystemSyncer); ok {
		return s.SyncFS(ctx)
	}
	return nil
}
