package tmpfs

import (
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// inode holds what every tmpfs node has.
type inode struct {
	tfs *filesystem
	ino uint64

	mu                         sync.Mutex
	mode                       uint32 // type and permission bits
	uid                        auth.KUID
	gid                        auth.KGID
	rdev                       uint64
	nlink                      uint32
	atime, mtime, ctime, btime unix.Timespec
	xattrs                     map[string][]byte
}

func (n *inode) init(tfs *filesystem, opts fs.CreateOptions) {
	now := fs.Now()
	n.tfs = tfs
	n.ino = fs.NewIno()
	n.mode = opts.Mode
	n.uid, n.gid = opts.UID, opts.GID
	n.rdev = opts.Rdev
	n.nlink = 1
	n.atime, n.mtime, n.ctime, n.btime = now, now, now, now
}

// base returns the inode itself (every node embeds one).
func (n *inode) base() *inode { return n }

// node is what every tmpfs node implements.
type node interface {
	fs.Node
	base() *inode
}

// statLocked fills the attributes common to every node.
// Preconditions: n.mu is held.
func (n *inode) statLocked() fs.Stat {
	return fs.Stat{
		Mode: n.mode, Nlink: n.nlink, UID: n.uid, GID: n.gid, Ino: n.ino, Rdev: n.rdev,
		Blksize: pageSize, Atime: n.atime, Mtime: n.mtime, Ctime: n.ctime, Btime: n.btime, HasBtime: true,
	}
}

// Stat implements fs.Node for nodes without contents of their own.
func (n *inode) Stat(fs.Context) (fs.Stat, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.statLocked(), nil
}

// setAttrLocked applies the attribute changes other than the size.
// Preconditions: n.mu is held.
func (n *inode) setAttrLocked(opts *fs.SetAttrOptions) {
	if opts.Mask&fs.SetAttrMode != 0 {
		n.mode = n.mode&unix.S_IFMT | opts.Mode&0o7777
	}
	if opts.Mask&fs.SetAttrUID != 0 {
		n.uid = opts.UID
	}
	if opts.Mask&fs.SetAttrGID != 0 {
		n.gid = opts.GID
	}
	if opts.Mask&fs.SetAttrAtime != 0 {
		n.atime = opts.Atime
	}
	if opts.Mask&fs.SetAttrMtime != 0 {
		n.mtime = opts.Mtime
	}
	if opts.Mask&fs.SetAttrCtime != 0 {
		n.ctime = opts.Ctime
	}
}

// SetAttr implements fs.SetAttrNode for nodes without a size: a size
// change is refused as the VFS would not ask one of them.
func (n *inode) SetAttr(_ fs.Context, opts *fs.SetAttrOptions) error {
	if opts.Mask&fs.SetAttrSize != 0 {
		return unix.EINVAL
	}
	n.mu.Lock()
	n.setAttrLocked(opts)
	n.mu.Unlock()
	return nil
}

// touchCtime sets the ctime to now.
func (n *inode) touchCtime() {
	now := fs.Now()
	n.mu.Lock()
	n.ctime = now
	n.mu.Unlock()
}

// maxXattrBytes bounds the total size of one node's extended attributes
// (names and values), so a program cannot grow the Sentry without limit
// outside the size= budget.
const maxXattrBytes = 1 << 20

// GetXattr implements fs.XattrNode.
func (n *inode) GetXattr(_ fs.Context, name string) ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, ok := n.xattrs[name]
	if !ok {
		return nil, unix.ENODATA
	}
	return slices.Clone(v), nil
}

// SetXattr implements fs.XattrNode.
func (n *inode) SetXattr(_ fs.Context, name string, value []byte, flags int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	old, exists := n.xattrs[name]
	switch {
	case flags&unix.XATTR_CREATE != 0 && exists:
		return unix.EEXIST
	case flags&unix.XATTR_REPLACE != 0 && !exists:
		return unix.ENODATA
	}
	total := 0
	for k, v := range n.xattrs {
		total += len(k) + len(v)
	}
	if exists {
		total -= len(name) + len(old)
	}
	if total+len(name)+len(value) > maxXattrBytes {
		return unix.ENOSPC
	}
	if n.xattrs == nil {
		n.xattrs = make(map[string][]byte)
	}
	n.xattrs[name] = slices.Clone(value)
	n.ctime = fs.Now()
	return nil
}

// ListXattr implements fs.XattrNode.
func (n *inode) ListXattr(fs.Context) ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := make([]string, 0, len(n.xattrs))
	for k := range n.xattrs {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, nil
}

// RemoveXattr implements fs.XattrNode.
func (n *inode) RemoveXattr(_ fs.Context, name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.xattrs[name]; !ok {
		return unix.ENODATA
	}
	delete(n.xattrs, name)
	n.ctime = fs.Now()
	return nil
}

// shortSymlinkLen is the shortest target Linux's tmpfs stores in a page
// rather than in the inode (SHORT_SYMLINK_LEN).
const shortSymlinkLen = 128

// symlink is a symbolic link.
type symlink struct {
	inode
	target string
}

// Stat implements fs.Node: a symlink's size is its target's length.
func (s *symlink) Stat(fs.Context) (fs.Stat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statLocked()
	st.Size = int64(len(s.target))
	if len(s.target) >= shortSymlinkLen {
		// Linux keeps long targets in a page of their own.
		st.Blocks = pageSize / 512
	}
	return st, nil
}

// Readlink implements fs.SymlinkNode.
func (s *symlink) Readlink(fs.Context) (string, error) { return s.target, nil }

// special is a fifo, socket or device node.
type special struct {
	inode
	fifo pipe.Named
}

// Open implements fs.OpenNode.
func (s *special) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	s.mu.Lock()
	typ, rdev := s.mode&unix.S_IFMT, s.rdev
	s.mu.Unlock()
	switch typ {
	case unix.S_IFIFO:
		return s.fifo.Open(ctx, vd, flags)
	case unix.S_IFCHR, unix.S_IFBLK:
		if s.tfs.openDevice != nil {
			return s.tfs.openDevice(ctx, vd, rdev, flags)
		}
	}
	return nil, unix.ENXIO
}
