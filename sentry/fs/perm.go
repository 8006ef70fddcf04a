package fs

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Access kinds, as Linux's MAY_* bits.
const (
	MayExec  = 1
	MayWrite = 2
	MayRead  = 4
)

// capableWrt is Linux's capable_wrt_inode_uidgid: creds hold cp in
// their own user namespace, and that namespace maps the file's owner and
// group (for the initial namespace: cp in the effective set).
func capableWrt(creds *auth.Credentials, st *Stat, cp uint) bool {
	ns := creds.UserNamespace
	if !creds.HasCapabilityIn(cp, ns) {
		return false
	}
	_, uidOK := ns.MapFromKUID(st.UID)
	_, gidOK := ns.MapFromKGID(st.GID)
	return uidOK && gidOK
}

// CheckPermission applies the mode bits of st to creds for the access ats
// (MayRead|MayWrite|MayExec), with the capability overrides Linux's
// generic_permission applies, each held in the caller's user namespace
// over a file whose owner and group it maps (capableWrt):
// CAP_DAC_READ_SEARCH lets a task read any file and search any
// directory, CAP_DAC_OVERRIDE lets it do anything to a directory and
// read or write any other file, and execute one that has at least one
// execute bit.
func CheckPermission(creds *auth.Credentials, st *Stat, ats int) error {
	mode := st.Mode
	perm := mode
	if creds.FilesystemUID == st.UID {
		perm >>= 6
	} else if creds.InGroup(st.GID) {
		perm >>= 3
	}
	if uint32(ats)&^perm&7 == 0 {
		return nil
	}
	if st.IsDir() {
		if ats&MayWrite == 0 && capableWrt(creds, st, unix.CAP_DAC_READ_SEARCH) {
			return nil
		}
		if capableWrt(creds, st, unix.CAP_DAC_OVERRIDE) {
			return nil
		}
		return unix.EACCES
	}
	if ats == MayRead && capableWrt(creds, st, unix.CAP_DAC_READ_SEARCH) {
		return nil
	}
	if ats&MayExec == 0 || mode&0o111 != 0 {
		if capableWrt(creds, st, unix.CAP_DAC_OVERRIDE) {
			return nil
		}
	}
	return unix.EACCES
}

// AccessNode is implemented by nodes that let some callers in although
// their mode bits deny them, as Linux's ->permission methods do:
// /proc/[pid]/fd admits the process's own threads when the process is not
// dumpable and the directory belongs to root (proc_fd_permission).
type AccessNode interface {
	// GrantsAccess reports whether ctx may access the node for ats that
	// the mode bits denied.
	GrantsAccess(ctx Context, ats int) bool
}

// nodePermission is CheckPermission for the node d, with d's own grant.
func nodePermission(ctx Context, d *Dentry, st *Stat, ats int) error {
	err := CheckPermission(ctx.Credentials(), st, ats)
	if err != nil && d != nil {
		if an, ok := d.node.(AccessNode); ok && an.GrantsAccess(ctx, ats) {
			return nil
		}
	}
	return err
}

// MayAccess checks access ats to the node at vd: EROFS for writes to a
// regular file, directory or symlink on a read-only mount (checked first,
// as Linux does), then the mode bits.
func MayAccess(ctx Context, vd VirtualDentry, ats int) error {
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	return mayAccessStat(ctx, vd, &st, ats)
}

func mayAccessStat(ctx Context, vd VirtualDentry, st *Stat, ats int) error {
	if ats&MayWrite != 0 && vd.Mount.ReadOnly() {
		switch st.Type() {
		case unix.S_IFREG, unix.S_IFDIR, unix.S_IFLNK:
			return unix.EROFS
		}
	}
	return nodePermission(ctx, vd.Dentry, st, ats)
}
