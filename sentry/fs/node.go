package fs

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Node is a file system object: what Linux calls an inode.
type Node interface {
	// Stat returns the node's attributes. Dev is filled in by the VFS.
	Stat(ctx Context) (Stat, error)
}

// DirNode is a directory.
type DirNode interface {
	Node
	// Lookup returns the child called name (never "." or ".."), or ENOENT.
	Lookup(ctx Context, name string) (Node, error)
	// Readdir lists the children, without "." and "..".
	Readdir(ctx Context) ([]Dirent, error)
}

// UncachedDir is implemented by directories whose children change on their
// own (such as /proc): their lookups are never cached in the dentry tree.
type UncachedDir interface {
	UncachedChildren()
}

// SymlinkNode is a symbolic link.
type SymlinkNode interface {
	Node
	// Readlink returns the link's target.
	Readlink(ctx Context) (string, error)
}

// MagicLinkNode is a symlink whose target is an object rather than a path
// (/proc/[pid]/fd/N, /proc/[pid]/exe, cwd, root). Path resolution follows
// it to the object.
type MagicLinkNode interface {
	SymlinkNode
	// Target returns the position the link points to, or the open file it
	// names (then the position is the file's).
	Target(ctx Context) (VirtualDentry, *FileDescription, error)
}

// OpenNode is a node that can be opened. Directories that do not
// implement it are opened as a generic directory file; other nodes that do
// not implement it fail with ENXIO.
type OpenNode interface {
	Node
	// Open returns a new file description of the node opened at vd with
	// the open(2) flags. Access checks and O_PATH are handled by the VFS.
	Open(ctx Context, vd VirtualDentry, flags uint32) (*FileDescription, error)
}

// Dirent is one directory entry.
type Dirent struct {
	Name string
	Ino  uint64
	Type uint8 // DT_*
	// NextOff is the offset of the entry after this one (d_off), set by
	// directory files.
	NextOff int64
}

// FilesystemImpl is implemented by each file system type.
type FilesystemImpl interface {
	// StatFS returns the file system's statistics.
	StatFS(ctx Context) (StatFS, error)
}

// Filesystem is one instance of a file system: a tree of dentries.
type Filesystem struct {
	typ      string
	dev      uint64
	readOnly bool
	impl     FilesystemImpl
	root     *Dentry

	// renameMu is held for writing while a rename moves dentries, and
	// for reading by those who read a dentry's parent or name.
	renameMu sync.RWMutex
}

// NewFilesystem returns a file system of type typ (as /proc/mounts names
// it) whose root is rootNode. A readOnly file system refuses every change
// with EROFS, as a superblock mounted read-only does.
func NewFilesystem(typ string, impl FilesystemImpl, rootNode Node, readOnly bool) *Filesystem {
	f := &Filesystem{typ: typ, dev: NewAnonDev(), readOnly: readOnly, impl: impl}
	f.root = &Dentry{fs: f, node: rootNode}
	return f
}

// Type returns the file system type name.
func (f *Filesystem) Type() string { return f.typ }

// Dev returns the file system's device number.
func (f *Filesystem) Dev() uint64 { return f.dev }

// ReadOnly reports whether the file system refuses changes.
func (f *Filesystem) ReadOnly() bool { return f.readOnly }

// Root returns the root dentry.
func (f *Filesystem) Root() *Dentry { return f.root }

// Impl returns the file system's implementation.
func (f *Filesystem) Impl() FilesystemImpl { return f.impl }

// Dentry names a Node in its file system's tree. Dentries are never
// freed explicitly: they are dropped from the cache only with their parent.
type Dentry struct {
	fs     *Filesystem
	parent *Dentry
	name   string
	node   Node

	// mounts counts the mounts whose mountpoint is this dentry.
	mounts atomic.Int32

	// dirMu serializes the VFS's changes of this directory (create,
	// remove, rename) with their checks. It is held while calling into
	// the file system.
	dirMu sync.Mutex

	mu sync.Mutex
	// children caches positive lookups.
	children map[string]*Dentry
}

// NewAnonDentry returns a dentry outside any tree, for files that have no
// path (pipes, eventfds, epoll instances). name is what /proc/self/fd
// shows for it, such as "pipe:[12]" or "anon_inode:[eventfd]".
func NewAnonDentry(f *Filesystem, name string, n Node) *Dentry {
	return &Dentry{fs: f, name: name, node: n}
}

// Node returns the dentry's node.
func (d *Dentry) Node() Node { return d.node }

// Name returns the dentry's name in its parent.
func (d *Dentry) Name() string { return d.name }

// Parent returns the parent dentry, nil for a file system's root.
func (d *Dentry) Parent() *Dentry { return d.parent }

// Filesystem returns the dentry's file system.
func (d *Dentry) Filesystem() *Filesystem { return d.fs }

// IsRoot reports whether d is its file system's root.
func (d *Dentry) IsRoot() bool { return d.fs.root == d }

// Stat returns the node's attributes with Dev filled in.
func (d *Dentry) Stat(ctx Context) (Stat, error) {
	st, err := d.node.Stat(ctx)
	if err != nil {
		return st, err
	}
	if d.fs != nil {
		st.Dev = d.fs.dev
	}
	return st, nil
}

// Lookup returns the child name of directory d, using the cache.
// name is a single component other than "." and "..".
func (d *Dentry) Lookup(ctx Context, name string) (*Dentry, error) {
	d.mu.Lock()
	if c, ok := d.children[name]; ok {
		d.mu.Unlock()
		return c, nil
	}
	d.mu.Unlock()
	dir, ok := d.node.(DirNode)
	if !ok {
		return nil, unix.ENOTDIR
	}
	n, err := dir.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	child := &Dentry{fs: d.fs, parent: d, name: name, node: n}
	if _, uncached := d.node.(UncachedDir); uncached {
		return child, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.children[name]; ok {
		return c, nil
	}
	if d.children == nil {
		d.children = make(map[string]*Dentry)
	}
	d.children[name] = child
	return child, nil
}

// InvalidateChild drops name from d's cache (for file systems that learn a
// child changed).
func (d *Dentry) InvalidateChild(name string) {
	d.mu.Lock()
	delete(d.children, name)
	d.mu.Unlock()
}
