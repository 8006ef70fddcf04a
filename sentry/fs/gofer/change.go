package gofer

import (
	"sort"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
)

// This file implements the VFS's change interfaces (fs.MutableDir,
// fs.SetAttrNode, fs.XattrNode) with one gofer request each. The VFS has
// checked permissions and holds its locks on the directories; what is
// left here is the request and keeping the caches right: each change
// drops the listing of the directories it touches and marks stale the
// attributes of every node whose nlink, size or times it moved.

var (
	_ fs.TmpfileDir  = dirNode{}
	_ fs.MutableDir  = dirNode{}
	_ fs.SetAttrNode = (*node)(nil)
	_ fs.XattrNode   = (*node)(nil)
	_ fs.Allocator   = (*regularFile)(nil)
	_ fs.Syncer      = (*regularFile)(nil)
)

// changed drops n's listing (for a directory) and marks its attributes
// stale.
func (n *node) changed() {
	n.mu.Lock()
	n.listed = false
	n.dirents = nil
	n.mu.Unlock()
	n.attrStale.Store(true)
}

// touched marks the attributes of the nodes given (some may be nil)
// stale.
func touched(nodes ...fs.Node) {
	for _, x := range nodes {
		if n, ok := nodeOf(x); ok {
			n.attrStale.Store(true)
		}
	}
}

// Mknod implements fs.MutableDir. A regular file is created with the
// gofer's Create, whose read-write fd the node keeps for the open that
// usually follows; the socket file of a bind(2) may be a host socket
// (bindHost, socket.go).
func (d dirNode) Mknod(ctx fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	uid, gid := uint32(opts.UID), uint32(opts.GID)
	perm := opts.Mode & 07777
	switch opts.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		h, attr, fd, err := d.fs.client.Create(d.h, name, unix.O_RDWR, perm, uid, gid)
		if err != nil {
			return nil, errno(err)
		}
		d.changed()
		n := d.fs.newNode(h, attr)
		n.(*node).keepHostFD(fd)
		return n, nil
	case unix.S_IFSOCK:
		if n, handled, err := d.bindHost(ctx, name, opts); handled {
			return n, err
		}
	case unix.S_IFIFO:
	case unix.S_IFCHR, unix.S_IFBLK:
		// The Sentry serves its own devices; the host gets none.
		return nil, unix.EPERM
	default:
		return nil, unix.EINVAL
	}
	h, attr, err := d.fs.client.Mknod(d.h, name, opts.Mode&unix.S_IFMT|perm, uid, gid)
	if err != nil {
		return nil, errno(err)
	}
	d.changed()
	return d.fs.newNode(h, attr), nil
}

// Mkdir implements fs.MutableDir.
func (d dirNode) Mkdir(_ fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	h, attr, err := d.fs.client.Mkdir(d.h, name, opts.Mode&07777, uint32(opts.UID), uint32(opts.GID))
	if err != nil {
		return nil, errno(err)
	}
	d.changed()
	return d.fs.newNode(h, attr), nil
}

// Symlink implements fs.MutableDir.
func (d dirNode) Symlink(_ fs.Context, name, target string, opts fs.CreateOptions) (fs.Node, error) {
	h, attr, err := d.fs.client.Symlink(d.h, name, target, uint32(opts.UID), uint32(opts.GID))
	if err != nil {
		return nil, errno(err)
	}
	d.changed()
	n := d.fs.newNode(h, attr)
	if l, ok := n.(symlinkNode); ok {
		l.target, l.hasTarget = target, true
	}
	return n, nil
}

// Tmpfile implements fs.TmpfileDir with the gofer's O_TMPFILE, whose
// read-write fd the node keeps for the open that follows.
func (d dirNode) Tmpfile(_ fs.Context, opts fs.CreateOptions) (fs.Node, error) {
	h, attr, fd, err := d.fs.client.Tmpfile(d.h, unix.O_RDWR, opts.Mode&07777, uint32(opts.UID), uint32(opts.GID))
	if err != nil {
		return nil, errno(err)
	}
	n := d.fs.newNode(h, attr).(*node)
	n.unnamed = true
	n.keepHostFD(fd)
	return n, nil
}

// Link implements fs.MutableDir.
func (d dirNode) Link(_ fs.Context, name string, target fs.Node) error {
	t, ok := nodeOf(target)
	if !ok || t.fs != d.fs {
		return unix.EXDEV
	}
	t.mu.Lock()
	h, _, err := d.fs.client.Link(d.h, name, t.h)
	if err != nil {
		t.mu.Unlock()
		return errno(err)
	}
	old := h
	if t.unnamed {
		// An O_TMPFILE file's handle has no name to reopen it by; the
		// new one does.
		old, t.h, t.unnamed = t.h, h, false
		t.res.h = h
	}
	t.mu.Unlock()
	// The VFS names the target node itself; the other handle goes.
	d.fs.client.Close(old)
	d.changed()
	t.attrStale.Store(true)
	return nil
}

// Unlink implements fs.MutableDir.
func (d dirNode) Unlink(_ fs.Context, name string, child fs.Node) error {
	if err := d.fs.client.Unlink(d.h, name, 0); err != nil {
		return errno(err)
	}
	d.changed()
	touched(child)
	return nil
}

// Rmdir implements fs.MutableDir.
func (d dirNode) Rmdir(_ fs.Context, name string, child fs.Node) error {
	if err := d.fs.client.Unlink(d.h, name, unix.AT_REMOVEDIR); err != nil {
		return errno(err)
	}
	d.changed()
	touched(child)
	return nil
}

// Rename implements fs.MutableDir. The gofer moves its handles along, so
// renamed keeps working under its new name.
func (d dirNode) Rename(_ fs.Context, oldName string, renamed fs.Node, newDir fs.MutableDir, newName string, replaced fs.Node, flags uint32) error {
	nd, ok := newDir.(dirNode)
	if !ok || nd.fs != d.fs {
		return unix.EXDEV
	}
	if err := d.fs.client.Rename(d.h, oldName, nd.h, newName, flags); err != nil {
		return errno(err)
	}
	d.changed()
	if nd.node != d.node {
		nd.changed()
	}
	touched(renamed, replaced)
	return nil
}

// setattrMask maps the VFS's mask to the protocol's (the same ATTR_*
// bits). The host stamps ctime itself on any change, so SetAttrCtime has
// no counterpart.
const setattrMask = fs.SetAttrMode | fs.SetAttrUID | fs.SetAttrGID | fs.SetAttrSize |
	fs.SetAttrAtime | fs.SetAttrMtime

// SetAttr implements fs.SetAttrNode. A size change goes to the node's
// read-write host fd when it has one (which also works once the file is
// unlinked, when the gofer can no longer reopen it); the rest goes to the
// gofer, which applies the fields in Linux's order (owner, mode, size,
// times). A failure part way leaves the earlier fields changed.
func (n *node) SetAttr(_ fs.Context, opts *fs.SetAttrOptions) error {
	mask := opts.Mask & setattrMask
	if mask&fs.SetAttrSize != 0 {
		if done, err := n.truncateHost(opts.Size); done {
			if err != nil {
				return err
			}
			mask &^= fs.SetAttrSize
		}
	}
	n.attrStale.Store(true)
	if mask == 0 {
		return nil
	}
	attr, err := n.fs.client.Setattr(proto.Tsetattr{
		Node:  n.handle(),
		Mask:  mask,
		Mode:  opts.Mode & 07777,
		UID:   uint32(opts.UID),
		GID:   uint32(opts.GID),
		Size:  opts.Size,
		Atime: opts.Atime,
		Mtime: opts.Mtime,
	})
	if err != nil {
		n.idsStale.Store(true)
		return errno(err)
	}
	n.setAttr(attr)
	if mask&fs.SetAttrSize != 0 {
		if o := n.cached(); o != nil {
			defer o.DecRef()
			return o.TruncateThrough(opts.Size, func(int64) error { return nil })
		}
	}
	return nil
}

// handle returns n's handle.
func (n *node) handle() proto.Handle {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.h
}

// truncateHost sets the size through n's read-write host fd, if it has
// one (done reports whether it did).
func (n *node) truncateHost(size int64) (done bool, err error) {
	c := &n.cache
	c.mu.Lock()
	if o := c.obj; o != nil {
		o.IncRef()
		c.mu.Unlock()
		defer o.DecRef()
		return n.truncateCached(o, size)
	}
	// Not while a cache is being made: it would read the old size.
	defer c.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hostFD < 0 || !n.hostRW {
		return false, nil
	}
	return true, unix.Ftruncate(n.hostFD, size)
}

// GetXattr implements fs.XattrNode.
func (n *node) GetXattr(_ fs.Context, name string) ([]byte, error) {
	v, err := n.fs.client.Getxattr(n.handle(), name)
	if err != nil {
		return nil, errno(err)
	}
	return []byte(v), nil
}

// SetXattr implements fs.XattrNode.
func (n *node) SetXattr(_ fs.Context, name string, value []byte, flags int) error {
	if err := n.fs.client.Setxattr(n.handle(), name, string(value), flags); err != nil {
		return errno(err)
	}
	n.attrStale.Store(true)
	return nil
}

// ListXattr implements fs.XattrNode.
func (n *node) ListXattr(fs.Context) ([]string, error) {
	names, err := n.fs.client.Listxattr(n.handle())
	if err != nil {
		return nil, errno(err)
	}
	sort.Strings(names)
	return names, nil
}

// RemoveXattr implements fs.XattrNode.
func (n *node) RemoveXattr(_ fs.Context, name string) error {
	if err := n.fs.client.Removexattr(n.handle(), name); err != nil {
		return errno(err)
	}
	n.attrStale.Store(true)
	return nil
}
