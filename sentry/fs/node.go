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
// own (such as /proc): their lookups are never cached in the dentry tree,
// and a missing name is an error rather than a place to create (as
// Linux's proc lookups fail), so creating there gives ENOENT.
type UncachedDir interface {
	UncachedChildren()
}

// RevalidatingDir is implemented by directories whose children may be
// replaced behind the VFS's back (a bind mount's, which host processes
// share): a cached child is used only while Revalidate says it is still
// what name holds; otherwise it is dropped and looked up again. A child
// that is a mount point is kept as it is.
type RevalidatingDir interface {
	Revalidate(ctx Context, name string, child Node) bool
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
	// info is what mountinfo shows beyond the type (fsinfo.go).
	info atomic.Pointer[MountInfo]
	// mountCount counts its mounts in every namespace (mount.go).
	mountCount atomic.Int32

	// renameMu serializes renames, so dentries' parents change only under
	// it (a rename may read them without nameMu).
	renameMu sync.Mutex
	// nameMu guards every dentry's parent and name.
	nameMu sync.RWMutex

	// Watches of nodes (notify.go): watchCount counts them, so a file
	// system nobody watches costs one atomic load per event; watchMu
	// serializes creating the table.
	watchCount atomic.Int32
	watchMu    sync.Mutex
	watches    atomic.Pointer[watchTable]
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
// freed explicitly: they are dropped from the cache only with their parent
// or when the VFS removes their name (they are then dead).
type Dentry struct {
	fs *Filesystem
	// parent and name change only under fs.renameMu and fs.nameMu.
	parent *Dentry
	name   string
	node   Node

	// mounts counts the mounts whose mountpoint is this dentry.
	mounts atomic.Int32

	// dead is set when the name was removed (unlink, rmdir, replaced by a
	// rename): open files show " (deleted)", a dead directory takes no
	// new entries.
	dead atomic.Bool
	// noLink is set on an O_TMPFILE|O_EXCL file, which linkat may not
	// name.
	noLink atomic.Bool

	// opens counts the files the VFS opened here that are still open;
	// deletePending is an IN_DELETE_SELF waiting for them (notify.go).
	opens         atomic.Int32
	deletePending atomic.Bool

	// dirMu serializes the VFS's changes of this directory (create,
	// remove, rename) with their checks. It is held while calling into
	// the file system.
	dirMu sync.Mutex

	mu sync.Mutex
	// children caches positive lookups.
	children map[string]*Dentry
	// gen counts changes of children made by the VFS, so a lookup that
	// raced with one does not cache a stale result.
	gen uint64
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
func (d *Dentry) Name() string {
	if d.fs == nil {
		return d.name
	}
	d.fs.nameMu.RLock()
	defer d.fs.nameMu.RUnlock()
	return d.name
}

// Parent returns the parent dentry, nil for a file system's root.
func (d *Dentry) Parent() *Dentry {
	if d.fs == nil {
		return d.parent
	}
	d.fs.nameMu.RLock()
	defer d.fs.nameMu.RUnlock()
	return d.parent
}

// IsDead reports whether the dentry's name was removed.
func (d *Dentry) IsDead() bool { return d.dead.Load() }

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
	return d.lookup(ctx, name, false)
}

// lookupLocked is Lookup by a VFS change of d.
//
// Preconditions: d.dirMu is held.
func (d *Dentry) lookupLocked(ctx Context, name string) (*Dentry, error) {
	return d.lookup(ctx, name, true)
}

func (d *Dentry) lookup(ctx Context, name string, locked bool) (*Dentry, error) {
	dir, ok := d.node.(DirNode)
	if !ok {
		return nil, unix.ENOTDIR
	}
	_, uncached := d.node.(UncachedDir)
	for tries := 0; ; tries++ {
		if tries == 2 && !locked {
			// Changes keep racing with this lookup: wait them out,
			// so the result can be cached.
			d.dirMu.Lock()
			defer d.dirMu.Unlock()
			locked = true
		}
		d.mu.Lock()
		if c, ok := d.children[name]; ok {
			d.mu.Unlock()
			if rv, ok := d.node.(RevalidatingDir); ok && c.mounts.Load() == 0 && !rv.Revalidate(ctx, name, c.node) {
				d.mu.Lock()
				if d.children[name] == c {
					d.gen++
					delete(d.children, name)
				}
				d.mu.Unlock()
				continue
			}
			return c, nil
		}
		gen := d.gen
		d.mu.Unlock()
		n, err := dir.Lookup(ctx, name)
		if err != nil {
			return nil, err
		}
		child := &Dentry{fs: d.fs, parent: d, name: name, node: n}
		if uncached {
			return child, nil
		}
		d.mu.Lock()
		if d.gen != gen {
			// A change of d raced with the lookup: look again.
			d.mu.Unlock()
			continue
		}
		if c, ok := d.children[name]; ok {
			d.mu.Unlock()
			return c, nil
		}
		if d.children == nil {
			d.children = make(map[string]*Dentry)
		}
		d.children[name] = child
		d.mu.Unlock()
		return child, nil
	}
}

// cachedChild returns the cached child name, or nil.
func (d *Dentry) cachedChild(name string) *Dentry {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.children[name]
}

// addChild caches a new child of d made by the VFS and returns it.
func (d *Dentry) addChild(name string, n Node) *Dentry {
	child := &Dentry{fs: d.fs, parent: d, name: name, node: n}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if c, ok := d.children[name]; ok && c.node == n {
		return c
	}
	if d.children == nil {
		d.children = make(map[string]*Dentry)
	}
	d.children[name] = child
	return child
}

// removeChild drops name from d's cache and marks its dentry dead.
func (d *Dentry) removeChild(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if c, ok := d.children[name]; ok {
		c.dead.Store(true)
		delete(d.children, name)
	}
}

// InvalidateChild drops name from d's cache (for file systems that learn a
// child changed).
func (d *Dentry) InvalidateChild(name string) {
	d.mu.Lock()
	d.gen++
	delete(d.children, name)
	d.mu.Unlock()
}

// childGen returns the count of changes of d's children made by the VFS
// (directory files compare it to see whether their listing may be stale).
func (d *Dentry) childGen() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen
}
