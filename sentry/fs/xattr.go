package fs

import (
	"strings"

	"golang.org/x/sys/unix"
)

// Extended attributes: the VFS side of Linux's fs/xattr.c (name spaces,
// xattr_permission); values live in the node's XattrNode.

// Extended attribute limits (XATTR_NAME_MAX, XATTR_SIZE_MAX,
// XATTR_LIST_MAX).
const (
	XattrNameMax = 255
	XattrSizeMax = 65536
	XattrListMax = 65536
)

// xattrSpace returns the known name space prefix of name, or "".
func xattrSpace(name string) string {
	for _, p := range []string{"user.", "trusted.", "security.", "system."} {
		if strings.HasPrefix(name, p) {
			return p
		}
	}
	return ""
}

// xattrPermission is Linux's xattr_permission for access ats (MayRead or
// MayWrite) to name on the node of attributes st.
func xattrPermission(ctx Context, st *Stat, name string, ats int) error {
	c := ctx.Credentials()
	switch xattrSpace(name) {
	case "security.", "system.":
		return nil
	case "trusted.":
		if !c.HasCapability(unix.CAP_SYS_ADMIN) {
			if ats&MayWrite != 0 {
				return unix.EPERM
			}
			return unix.ENODATA
		}
		return nil
	case "user.":
		if !st.IsRegular() && !st.IsDir() {
			if ats&MayWrite != 0 {
				return unix.EPERM
			}
			return unix.ENODATA
		}
		if st.IsDir() && st.Mode&unix.S_ISVTX != 0 && ats&MayWrite != 0 && !ownerOrCapable(c, st) {
			return unix.EPERM
		}
	}
	return CheckPermission(c, st, ats)
}

// xattrNode returns the node at d as an XattrNode for name, or
// EOPNOTSUPP (unknown name spaces, system.* which needs ACLs, nodes
// without extended attributes).
func xattrNode(d *Dentry, name string) (XattrNode, error) {
	switch xattrSpace(name) {
	case "user.", "trusted.", "security.":
	default:
		return nil, unix.EOPNOTSUPP
	}
	n, ok := d.node.(XattrNode)
	if !ok {
		return nil, unix.EOPNOTSUPP
	}
	return n, nil
}

// GetXattr implements getxattr(2): the value of name on the node at vd.
func GetXattr(ctx Context, vd VirtualDentry, name string) ([]byte, error) {
	st, err := vd.Stat(ctx)
	if err != nil {
		return nil, err
	}
	if err := xattrPermission(ctx, &st, name, MayRead); err != nil {
		return nil, err
	}
	n, err := xattrNode(vd.Dentry, name)
	if err != nil {
		return nil, err
	}
	return n.GetXattr(ctx, name)
}

// SetXattr implements setxattr(2); flags are 0, XATTR_CREATE or
// XATTR_REPLACE.
func SetXattr(ctx Context, vd VirtualDentry, name string, value []byte, flags int) error {
	if err := writableMount(vd); err != nil {
		return err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	if err := xattrPermission(ctx, &st, name, MayWrite); err != nil {
		return err
	}
	n, err := xattrNode(vd.Dentry, name)
	if err != nil {
		return err
	}
	if err := n.SetXattr(ctx, name, value, flags); err != nil {
		return err
	}
	notifyEvent(vd.Dentry, unix.IN_ATTRIB, st.IsDir())
	return nil
}

// RemoveXattr implements removexattr(2).
func RemoveXattr(ctx Context, vd VirtualDentry, name string) error {
	if err := writableMount(vd); err != nil {
		return err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	if err := xattrPermission(ctx, &st, name, MayWrite); err != nil {
		return err
	}
	n, err := xattrNode(vd.Dentry, name)
	if err != nil {
		return err
	}
	if err := n.RemoveXattr(ctx, name); err != nil {
		return err
	}
	notifyEvent(vd.Dentry, unix.IN_ATTRIB, st.IsDir())
	return nil
}

// ListXattr implements listxattr(2): the names the caller may see
// (trusted.* only with CAP_SYS_ADMIN). Nodes without extended attributes
// have none.
func ListXattr(ctx Context, vd VirtualDentry) ([]string, error) {
	n, ok := vd.Dentry.node.(XattrNode)
	if !ok {
		return nil, nil
	}
	names, err := n.ListXattr(ctx)
	if err != nil {
		return nil, err
	}
	admin := ctx.Credentials().HasCapability(unix.CAP_SYS_ADMIN)
	out := names[:0:0]
	for _, name := range names {
		if strings.HasPrefix(name, "trusted.") && !admin {
			continue
		}
		out = append(out, name)
	}
	return out, nil
}
