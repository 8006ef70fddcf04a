// Package gofer is the container's root file system as the gofer serves
// it: nodes are gofer handles, directories list through Getdents, symlinks
// read through Readlink, and regular files are read with pread on the
// host descriptor the gofer donates (one per node, shared by its opens).
// The file system is read-only: the gofer serves it so.
//
// Attributes, listings and link targets are cached: nothing changes a
// read-only tree. Device nodes, fifos and sockets show in stat but cannot
// be opened (the Sentry serves its own /dev).
//
// Locks: node.mu guards a node's caches and its host descriptor; it is
// held across the gofer call that fills them, and never while another
// node's is.
package gofer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// FSType is the type /proc/mounts shows.
const FSType = "9p"

type filesystem struct {
	client *proto.Client
	root   proto.Handle
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
	h, attr, err := client.Attach()
	if err != nil {
		return nil, fmt.Errorf("gofer attach: %w", err)
	}
	if attr.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("gofer attach: root is not a directory (mode %#o)", attr.Mode)
	}
	gfs := &filesystem{client: client, root: h}
	return fs.NewFilesystem(FSType, gfs, gfs.newNode(h, attr), true), nil
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
	return fs.StatFS{
		Type: s.Type, Bsize: s.Bsize, Blocks: s.Blocks, Bfree: s.Bfree, Bavail: s.Bavail,
		Files: s.Files, Ffree: s.Ffree, NameLen: s.Namelen, Frsize: s.Frsize,
		Flags: unix.ST_RDONLY,
	}, nil
}

// node is one gofer handle.
type node struct {
	fs   *filesystem
	h    proto.Handle
	attr proto.Attr

	mu        sync.Mutex
	target    string
	hasTarget bool
	dirents   []fs.Dirent
	listed    bool
	hostFD    int // -1 until a regular file is first opened
	openCount int
}

// newNode returns the node of handle h, of the kind its mode says.
func (g *filesystem) newNode(h proto.Handle, attr proto.Attr) fs.Node {
	n := &node{fs: g, h: h, attr: attr, hostFD: -1}
	switch attr.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return dirNode{n}
	case unix.S_IFLNK:
		return symlinkNode{n}
	}
	return n
}

// Stat implements fs.Node.
func (n *node) Stat(fs.Context) (fs.Stat, error) {
	a := &n.attr
	return fs.Stat{
		Mode: a.Mode, Nlink: uint32(a.Nlink), UID: auth.KUID(a.UID), GID: auth.KGID(a.GID),
		Ino: a.Ino, Rdev: a.Rdev, Size: a.Size, Blocks: a.Blocks, Blksize: uint32(a.Blksize),
		Atime: a.Atime, Mtime: a.Mtime, Ctime: a.Ctime,
	}, nil
}

// Lookup implements fs.DirNode.
func (d dirNode) Lookup(_ fs.Context, name string) (fs.Node, error) {
	h, attr, err := d.fs.client.Walk(d.h, name)
	if err != nil {
		return nil, errno(err)
	}
	return d.fs.newNode(h, attr), nil
}

// Readdir implements fs.DirNode.
func (d dirNode) Readdir(fs.Context) ([]fs.Dirent, error) {
	n := d.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.listed {
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

// Open implements fs.OpenNode.
func (n *node) Open(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	switch n.attr.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.NewDirFile(vd, flags), nil
	case unix.S_IFREG:
	default:
		return nil, unix.ENXIO
	}
	if flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_TRUNC != 0 {
		return nil, unix.EROFS
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hostFD < 0 {
		fd, err := n.fs.client.Open(n.h, unix.O_RDONLY)
		if err != nil {
			return nil, errno(err)
		}
		n.hostFD = fd
	} else if n.openCount == 0 {
		n.fs.idleFDs.Add(-1)
	}
	n.openCount++
	return fs.NewFileDescription(&regularFile{node: n, hostFD: n.hostFD}, vd, flags, fs.FDOptions{}), nil
}

func (n *node) release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.openCount--
	if n.openCount == 0 && n.hostFD >= 0 {
		if n.fs.idleFDs.Add(1) <= maxIdleFDs {
			// Keep it for the next open: the file is read-only.
			return
		}
		n.fs.idleFDs.Add(-1)
		unix.Close(n.hostFD)
		n.hostFD = -1
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

// regularFile is an open regular file.
type regularFile struct {
	fs.FileDefaults
	fs.NotPollable
	node   *node
	hostFD int
}

// HostFD implements HostFile.
func (f *regularFile) HostFD() int { return f.hostFD }

// Read implements fs.FileImpl with pread on the donated descriptor.
func (f *regularFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	total := 0
	for total < len(dst) {
		n, err := unix.Pread(f.hostFD, dst[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if n == 0 {
			break
		}
		total += n
	}
	return total, nil
}

// Write implements fs.FileImpl: the file was opened read-only.
func (f *regularFile) Write(fs.Context, *fs.FileDescription, []byte, int64) (int, error) {
	return 0, unix.EBADF
}

// Seek implements fs.FileImpl.
func (f *regularFile) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	return fs.SeekWithSize(cur, offset, whence, f.node.attr.Size)
}

// Release implements fs.FileImpl.
func (f *regularFile) Release() { f.node.release() }
