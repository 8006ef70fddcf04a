// Package gofer is the container's root file system as the gofer serves
// it: nodes are gofer handles, directories list through Getdents, symlinks
// read through Readlink, and regular files are read and written with
// pread and pwrite on the host descriptor the gofer donates (one per node,
// shared by its opens).
//
// The file system is read-only (New) or writable (NewWritable, over a
// gofer serving read-write). Changes go to the gofer one request each
// (change.go): creates, links, removals, renames, attributes, xattrs;
// data goes straight to the donated descriptor, which a writable file
// system asks for read-write once a file is opened for writing.
//
// Caches: attributes, listings and link targets. Nothing changes a
// read-only tree. On a writable one, every change made through this file
// system drops the listing of the directories it touches and marks the
// attributes of the nodes it touches stale, to be fetched again at the
// next Stat; link targets never change (a new link is a new node).
// Changes made on the host behind the sandbox's back are not noticed,
// except on a bind mount's file system (NewMount), which host processes
// share: it fetches attributes at every Stat and listings at every
// Readdir, and checks a cached name with the gofer at every lookup
// (Revalidate).
// A FIFO opens as a Sentry named pipe of its node (pipe.Named, as on
// tmpfs), never the host's: sandboxed programs meet each other there, not
// host processes.
// Device nodes and sockets show in stat but cannot be opened (the Sentry
// serves its own /dev).
//
// Kept descriptors: a node keeps its donated descriptor while files are
// open on it, and after, up to maxIdleFDs for the whole file system, for
// the next open. A read-only descriptor that must make way for a
// read-write one is retired and closed once no file uses it. A node that
// has become garbage (a removed file's, say) gives back its handle and
// kept descriptor (nodeRes).
//
// Locks: node.mu guards a node's caches and its host descriptors; it is
// held across the gofer call that fills them, and never while another
// node's is.
package gofer

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// FSType is the type /proc/mounts shows.
const FSType = "9p"

type filesystem struct {
	client   *proto.Client
	root     proto.Handle
	writable bool
	// shared says the host changes the tree too (a bind mount, which
	// host processes use as well): attributes are fetched again at every
	// Stat and listings at every Readdir, instead of being cached.
	shared bool
	// idleFDs counts donated fds kept open by files nobody has open, so a
	// program that opens and closes one file again and again asks the
	// gofer once (at most maxIdleFDs are kept).
	idleFDs atomic.Int32
}

// maxIdleFDs bounds the donated fds kept for files that are not open.
const maxIdleFDs = 256

// New attaches to the gofer behind client and returns its tree as a
// read-only file system.
func New(client *proto.Client) (*fs.Filesystem, error) {
	return newFS(client, false)
}

// NewWritable attaches to the gofer behind client, which must serve
// read-write, and returns its tree as a writable file system: changes
// reach the host directory.
func NewWritable(client *proto.Client) (*fs.Filesystem, error) {
	return newFS(client, true)
}

// NewMount attaches to the gofer's attach point mount (a bind mount's
// source: see proto.Client.AttachMount), read-only or writable (the gofer
// must then serve it read-write). Its root may be a directory or, for a
// file bind mount, any other file.
func NewMount(client *proto.Client, mount uint32, writable bool) (*fs.Filesystem, error) {
	h, attr, err := client.AttachMount(mount)
	if err != nil {
		return nil, fmt.Errorf("gofer attach %d: %w", mount, err)
	}
	f := newFSAt(client, h, attr, writable)
	f.Impl().(*filesystem).shared = true
	return f, nil
}

func newFS(client *proto.Client, writable bool) (*fs.Filesystem, error) {
	h, attr, err := client.Attach()
	if err != nil {
		return nil, fmt.Errorf("gofer attach: %w", err)
	}
	if attr.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("gofer attach: root is not a directory (mode %#o)", attr.Mode)
	}
	return newFSAt(client, h, attr, writable), nil
}

func newFSAt(client *proto.Client, h proto.Handle, attr proto.Attr, writable bool) *fs.Filesystem {
	gfs := &filesystem{client: client, root: h, writable: writable}
	return fs.NewFilesystem(FSType, gfs, gfs.newNode(h, attr), !writable)
}

// errno turns a client error into the errno it carries.
func errno(err error) error {
	if err == nil {
		return nil
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

// StatFS implements fs.FilesystemImpl.
func (g *filesystem) StatFS(fs.Context) (fs.StatFS, error) {
	s, err := g.client.StatFS(g.root)
	if err != nil {
		return fs.StatFS{}, errno(err)
	}
	var flags int64
	if !g.writable {
		flags = unix.ST_RDONLY
	}
	return fs.StatFS{
		Type: s.Type, Bsize: s.Bsize, Blocks: s.Blocks, Bfree: s.Bfree, Bavail: s.Bavail,
		Files: s.Files, Ffree: s.Ffree, NameLen: s.Namelen, Frsize: s.Frsize,
		Flags: flags,
	}, nil
}

// node is one gofer handle.
type node struct {
	fs *filesystem
	// h is the node's handle; it changes (under mu) only when an
	// O_TMPFILE file gets its first name.
	h proto.Handle
	// typ is the file type (S_IFMT bits), which never changes.
	typ uint32

	// attrStale says a change made through this file system has made attr
	// out of date; idsStale that the owner may have changed too, which
	// only the gofer can tell (see refreshAttr).
	attrStale atomic.Bool
	idsStale  atomic.Bool

	mu        sync.Mutex
	attr      proto.Attr
	target    string
	hasTarget bool
	dirents   []fs.Dirent
	listed    bool
	hostFD    int  // -1 until a regular file is first opened (or created)
	hostRW    bool // hostFD is open read-write
	// retired are earlier host fds that files opened before the switch to
	// a read-write one still use; closed when openCount drops to 0.
	retired   []int
	openCount int
	// res mirrors the handle and host fd, for release once n is garbage.
	res *nodeRes
	// fifo is a FIFO's named pipe.
	fifo pipe.Named
	// unnamed marks an O_TMPFILE file not linked yet, whose handle
	// cannot be reopened by name.
	unnamed bool

	// cache holds the pages of MAP_SHARED mappings (mmap.go).
	cache nodeCache
}

// newNode returns the node of handle h, of the kind its mode says.
func (g *filesystem) newNode(h proto.Handle, attr proto.Attr) fs.Node {
	n := &node{fs: g, h: h, typ: attr.Mode & unix.S_IFMT, attr: attr, hostFD: -1}
	n.res = &nodeRes{fs: g, h: h, fd: -1}
	runtime.AddCleanup(n, (*nodeRes).release, n.res)
	return n.kind()
}

// nodeRes is what a node holds outside the Sentry's memory: its gofer
// handle and its kept host fd. The VFS has no hook for a node nobody uses
// any more (a removed file's, say), so these are released when the node
// itself is garbage: without that a program that creates and removes
// files would pile up handles (and O_PATH fds) in the gofer. It mirrors
// the node's fields, which node.mu guards, and must not point back at the
// node.
type nodeRes struct {
	fs *filesystem
	h  proto.Handle
	fd int // the host fd, or -1; idle whenever the node is unreachable
}

// release closes what a node that has become garbage held.
func (r *nodeRes) release() {
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fs.idleFDs.Add(-1)
	}
	// Not on the runtime's cleanup goroutine, which a slow gofer would
	// hold up for every other cleanup in the Sentry.
	go r.fs.client.Close(r.h)
}

// setHostFD records the node's host fd.
//
// Preconditions: n.mu is held.
func (n *node) setHostFD(fd int, rw bool) {
	n.hostFD, n.hostRW = fd, rw
	n.res.fd = fd
}

// kind returns n wrapped as the node kind its type calls for.
func (n *node) kind() fs.Node {
	switch n.typ {
	case unix.S_IFDIR:
		return dirNode{n}
	case unix.S_IFLNK:
		return symlinkNode{n}
	}
	return n
}

// nodeOf returns the gofer node behind an fs.Node of this package.
func nodeOf(n fs.Node) (*node, bool) {
	switch n := n.(type) {
	case *node:
		return n, true
	case dirNode:
		return n.node, true
	case symlinkNode:
		return n.node, true
	}
	return nil, false
}

// Stat implements fs.Node.
func (n *node) Stat(fs.Context) (fs.Stat, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.attrStale.Load() || n.fs.shared {
		if err := n.refreshAttr(); err != nil {
			return fs.Stat{}, err
		}
	}
	a := &n.attr
	return fs.Stat{
		Mode: a.Mode, Nlink: uint32(a.Nlink), UID: auth.KUID(a.UID), GID: auth.KGID(a.GID),
		Ino: a.Ino, Rdev: a.Rdev, Size: a.Size, Blocks: a.Blocks, Blksize: uint32(a.Blksize),
		Atime: a.Atime, Mtime: a.Mtime, Ctime: a.Ctime,
	}, nil
}

// refreshAttr fetches the attributes again: from the host fd when there
// is one (no round trip), else from the gofer. The Sentry's fstat sees
// owners through its own user namespace (unmapped ones as the overflow
// id), so the owner comes from the gofer, which sees the host's: an fstat
// keeps the cached owner, and a change that may have moved it (a failed
// setattr) makes the next refresh ask the gofer.
//
// Preconditions: n.mu is held.
func (n *node) refreshAttr() error {
	n.attrStale.Store(false)
	if n.hostFD >= 0 && !n.idsStale.Load() {
		var st unix.Stat_t
		if err := unix.Fstat(n.hostFD, &st); err == nil {
			uid, gid := n.attr.UID, n.attr.GID
			n.attr = proto.AttrFromStat(&st)
			n.attr.UID, n.attr.GID = uid, gid
			return nil
		}
	}
	n.idsStale.Store(false)
	a, err := n.fs.client.Stat(n.h)
	if err != nil {
		n.attrStale.Store(true)
		n.idsStale.Store(true)
		return errno(err)
	}
	n.attr = a
	return nil
}

// setAttr records fresh attributes from the gofer.
func (n *node) setAttr(a proto.Attr) {
	n.mu.Lock()
	n.attr = a
	n.attrStale.Store(false)
	n.mu.Unlock()
}

// Lookup implements fs.DirNode. It walks with WalkPath, which brings a
// symlink's target along, so following the link costs no round trip.
func (d dirNode) Lookup(_ fs.Context, name string) (fs.Node, error) {
	steps, err := d.fs.client.WalkPath(d.h, []string{name})
	if len(steps) == 0 {
		return nil, errno(err)
	}
	return d.fs.stepNode(&steps[0]), nil
}

// LookupPath implements fs.PathLookupDir: one gofer round trip for the
// whole run. A bind mount's file system (shared) walks only the first
// name: each cached child would be checked with the gofer again anyway.
//
// With openLast, the gofer opens a last regular file along with the walk
// (WalkPathOpen) and its node keeps the fd for the open that follows.
func (d dirNode) LookupPath(_ fs.Context, names []string, openLast bool) ([]fs.Node, error) {
	if d.fs.shared {
		if len(names) > 1 {
			openLast = false
		}
		names = names[:1]
	}
	var steps []proto.WalkStep
	fd := -1
	var err error
	if openLast {
		steps, fd, err = d.fs.client.WalkPathOpen(d.h, names)
	} else {
		steps, err = d.fs.client.WalkPath(d.h, names)
	}
	nodes := make([]fs.Node, len(steps))
	for i := range steps {
		nodes[i] = d.fs.stepNode(&steps[i])
	}
	if fd >= 0 {
		if n, ok := nodes[len(nodes)-1].(*node); ok {
			n.keepFD(fd, false)
		} else {
			unix.Close(fd)
		}
	}
	return nodes, errno(err)
}

// stepNode returns the node of a walked step, with a symlink's target
// cached when the step carries it.
func (g *filesystem) stepNode(s *proto.WalkStep) fs.Node {
	n := g.newNode(s.Node, s.Attr)
	if s.Target != "" {
		if l, ok := n.(symlinkNode); ok {
			l.target, l.hasTarget = s.Target, true
		}
	}
	return n
}

// Revalidate implements fs.RevalidatingDir. On a bind mount's file system
// (shared with the host) it asks the gofer what name is now and keeps the
// cached child only if it is the same file (a host program may have
// removed it or renamed another file over it); elsewhere nothing changes
// behind the Sentry's back.
func (d dirNode) Revalidate(_ fs.Context, name string, child fs.Node) bool {
	if !d.fs.shared {
		return true
	}
	c, ok := nodeOf(child)
	if !ok {
		return true
	}
	h, attr, err := d.fs.client.Walk(d.h, name)
	if err != nil {
		return false // the lookup that follows reports it
	}
	go d.fs.client.Close(h) // not on the lookup's path
	c.mu.Lock()
	same := attr.Ino == c.attr.Ino && attr.Dev == c.attr.Dev && attr.Mode&unix.S_IFMT == c.typ
	c.mu.Unlock()
	return same
}

// Readdir implements fs.DirNode.
func (d dirNode) Readdir(fs.Context) ([]fs.Dirent, error) {
	n := d.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.listed || n.fs.shared {
		ents, err := n.fs.client.Getdents(n.h)
		if err != nil {
			return nil, errno(err)
		}
		n.dirents = make([]fs.Dirent, len(ents))
		for i, e := range ents {
			n.dirents[i] = fs.Dirent{Name: e.Name, Ino: e.Ino, Type: e.Type}
		}
		n.listed = true
	}
	return append([]fs.Dirent(nil), n.dirents...), nil
}

// Readlink implements fs.SymlinkNode.
func (l symlinkNode) Readlink(fs.Context) (string, error) {
	n := l.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.hasTarget {
		t, err := n.fs.client.Readlink(n.h)
		if err != nil {
			return "", errno(err)
		}
		n.target, n.hasTarget = t, true
	}
	return n.target, nil
}

// Open implements fs.OpenNode. It never truncates: the VFS does that for
// O_TRUNC with SetAttr.
func (n *node) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	switch n.typ {
	case unix.S_IFDIR:
		return fs.NewDirFile(vd, flags), nil
	case unix.S_IFIFO:
		return n.fifo.Open(ctx, vd, flags)
	case unix.S_IFREG:
	default:
		return nil, unix.ENXIO
	}
	write := flags&unix.O_ACCMODE != unix.O_RDONLY
	if write && !n.fs.writable {
		return nil, unix.EROFS
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hostFD < 0 || (write && !n.hostRW) {
		fd, rw, err := n.openHost(write)
		if err != nil {
			return nil, err
		}
		if n.hostFD >= 0 {
			if n.openCount == 0 {
				n.fs.idleFDs.Add(-1)
				unix.Close(n.hostFD)
			} else {
				n.retired = append(n.retired, n.hostFD)
			}
		}
		n.setHostFD(fd, rw)
	} else if n.openCount == 0 {
		n.fs.idleFDs.Add(-1)
	}
	n.openCount++
	return fs.NewFileDescription(&regularFile{node: n, hostFD: n.hostFD, hostRW: n.hostRW}, vd, flags, fs.FDOptions{}), nil
}

// openHost asks the gofer for a host fd of n, read-write only for an open
// for writing: a read-write open is not free on the host (overlayfs copies
// the whole file up, a busy executable refuses it), so files that are
// only read never get one.
//
// Preconditions: n.mu is held.
func (n *node) openHost(write bool) (int, bool, error) {
	flags := unix.O_RDONLY
	if write {
		flags = unix.O_RDWR
	}
	fd, err := n.fs.client.Open(n.h, flags)
	if err != nil {
		return -1, false, errno(err)
	}
	return fd, write, nil
}

// keepHostFD makes fd (read-write) the host fd of a node no file has open
// yet, as an idle one (or closes it if too many are kept).
func (n *node) keepHostFD(fd int) { n.keepFD(fd, true) }

// keepFD is keepHostFD for an fd opened read-write (rw) or read-only.
func (n *node) keepFD(fd int, rw bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hostFD >= 0 {
		unix.Close(fd)
		return
	}
	if n.fs.idleFDs.Add(1) > maxIdleFDs {
		n.fs.idleFDs.Add(-1)
		unix.Close(fd)
		return
	}
	n.setHostFD(fd, rw)
}

func (n *node) release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.openCount--
	if n.openCount > 0 {
		return
	}
	for _, fd := range n.retired {
		unix.Close(fd)
	}
	n.retired = nil
	if n.hostFD >= 0 {
		if n.fs.idleFDs.Add(1) <= maxIdleFDs {
			// Keep it for the next open.
			return
		}
		n.fs.idleFDs.Add(-1)
		unix.Close(n.hostFD)
		n.setHostFD(-1, false)
	}
}

// The kinds of node: the VFS tells directories and symlinks apart by the
// interfaces they implement, so each kind has only its own methods.
type (
	dirNode     struct{ *node }
	symlinkNode struct{ *node }
)

// HostFile is implemented by files backed by a host descriptor that the
// memory manager may map.
type HostFile interface {
	HostFD() int
}

// regularFile is an open regular file. hostFD stays open as long as the
// file is (the node retires, never closes, an fd a file uses).
type regularFile struct {
	fs.FileDefaults
	fs.NotPollable
	node   *node
	hostFD int
	hostRW bool
}

// HostFD implements HostFile.
func (f *regularFile) HostFD() int { return f.hostFD }

// Read implements fs.FileImpl with pread on the donated descriptor, or
// from the node's cache while MAP_SHARED mappings have one (mmap.go).
func (f *regularFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	c := &f.node.cache
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.obj != nil {
		n, err := c.obj.ReadAt(dst, off)
		if err == io.EOF {
			err = nil
		}
		return n, err
	}
	return preadFull(f.hostFD, dst, off)
}

// Write implements fs.FileImpl with pwrite on the donated descriptor,
// which a file opened for writing always holds read-write (and to the
// node's cache too while it has one).
func (f *regularFile) Write(_ fs.Context, _ *fs.FileDescription, src []byte, off int64) (int, error) {
	if !f.hostRW {
		return 0, unix.EBADF
	}
	c := &f.node.cache
	c.mu.Lock()
	var total int
	var err error
	if c.obj != nil {
		total, err = c.obj.WriteThrough(src, off, func(p []byte, off int64) (int, error) {
			return pwriteFull(f.hostFD, p, off)
		})
	} else {
		total, err = pwriteFull(f.hostFD, src, off)
	}
	c.mu.Unlock()
	if total > 0 {
		f.node.attrStale.Store(true)
	}
	return total, err
}

// Seek implements fs.FileImpl. On a writable file system the size is the
// host file's now (O_APPEND writes seek to it).
func (f *regularFile) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	if !f.node.fs.writable && !f.node.fs.shared {
		return fs.SeekWithSize(cur, offset, whence, f.node.attr.Size) // never changes
	}
	var st unix.Stat_t
	if err := unix.Fstat(f.hostFD, &st); err != nil {
		return 0, err
	}
	return fs.SeekWithSize(cur, offset, whence, st.Size)
}

// Fallocate implements fs.Allocator on the donated descriptor.
func (f *regularFile) Fallocate(_ fs.Context, _ *fs.FileDescription, mode uint32, off, length int64) error {
	if !f.hostRW {
		return unix.EBADF
	}
	if o := f.node.cached(); o != nil {
		defer o.DecRef()
		return f.fallocateCached(o, mode, off, length)
	}
	if err := unix.Fallocate(f.hostFD, mode, off, length); err != nil {
		return err
	}
	f.node.attrStale.Store(true)
	return nil
}

// Sync implements fs.Syncer on the donated descriptor.
func (f *regularFile) Sync(_ fs.Context, _ *fs.FileDescription, dataOnly bool) error {
	if err := f.node.writeback(); err != nil {
		return unix.EIO
	}
	if dataOnly {
		return unix.Fdatasync(f.hostFD)
	}
	return unix.Fsync(f.hostFD)
}

// Release implements fs.FileImpl.
func (f *regularFile) Release() {
	f.node.writeback()
	f.node.release()
}
