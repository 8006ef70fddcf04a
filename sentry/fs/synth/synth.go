// Package synth is a kit for synthetic file systems built by the Sentry
// (/dev, /proc, /sys): directories of static or generated entries, files
// whose contents are generated when opened, symlinks with generated
// targets, magic links and device nodes with their own file kind.
//
// Nodes are built once and are safe for concurrent use. Locks: Dir.mu
// guards a static directory's entries and is never held while calling
// into another node.
package synth

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// FS is the FilesystemImpl of a synthetic file system.
type FS struct {
	// Magic is the f_type statfs reports (PROC_SUPER_MAGIC...).
	Magic int64
}

// StatFS implements fs.FilesystemImpl.
func (f *FS) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: f.Magic, Bsize: 4096, Frsize: 4096, NameLen: fs.NameMax}, nil
}

// NewFilesystem returns a file system of type typ with statfs magic and
// root directory root.
func NewFilesystem(typ string, magic int64, root fs.Node, readOnly bool) *fs.Filesystem {
	return fs.NewFilesystem(typ, &FS{Magic: magic}, root, readOnly)
}

// Attr holds the attributes every synthetic node has. The zero value is
// owned by root; the inode number and times are assigned on first use.
// An Attr may be copied before first use.
type Attr struct {
	Mode uint32 // permission bits; the type is set by the node kind
	UID  auth.KUID
	GID  auth.KGID

	ino  uint64 // atomic; 0 until assigned
	time unix.Timespec
}

var attrMu sync.Mutex

func (a *Attr) init() {
	if atomic.LoadUint64(&a.ino) != 0 {
		return
	}
	attrMu.Lock()
	if a.ino == 0 {
		a.time = unix.NsecToTimespec(time.Now().UnixNano())
		atomic.StoreUint64(&a.ino, fs.NewIno())
	}
	attrMu.Unlock()
}

// stat returns the attributes with type typ.
func (a *Attr) stat(typ uint32) fs.Stat {
	a.init()
	return fs.Stat{
		Mode:    typ | a.Mode&0o7777,
		Nlink:   1,
		UID:     a.UID,
		GID:     a.GID,
		Ino:     atomic.LoadUint64(&a.ino),
		Blksize: 4096,
		Atime:   a.time,
		Mtime:   a.time,
		Ctime:   a.time,
	}
}

// Ino returns the node's inode number.
func (a *Attr) Ino() uint64 {
	a.init()
	return atomic.LoadUint64(&a.ino)
}

// Dir is a directory of named nodes, added while building the tree.
type Dir struct {
	Attr
	mu      sync.RWMutex
	entries map[string]fs.Node
}

// NewDir returns a directory with permission bits mode and entries.
func NewDir(mode uint32, entries map[string]fs.Node) *Dir {
	d := &Dir{Attr: Attr{Mode: mode}, entries: make(map[string]fs.Node)}
	for k, v := range entries {
		d.entries[k] = v
	}
	return d
}

// Add adds (or replaces) the entry name.
func (d *Dir) Add(name string, n fs.Node) {
	d.mu.Lock()
	d.entries[name] = n
	d.mu.Unlock()
}

// Stat implements fs.Node.
func (d *Dir) Stat(fs.Context) (fs.Stat, error) {
	st := d.stat(unix.S_IFDIR)
	d.mu.RLock()
	st.Nlink = 2
	for _, n := range d.entries {
		if _, ok := n.(fs.DirNode); ok {
			st.Nlink++
		}
	}
	d.mu.RUnlock()
	return st, nil
}

// Lookup implements fs.DirNode.
func (d *Dir) Lookup(_ fs.Context, name string) (fs.Node, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if n, ok := d.entries[name]; ok {
		return n, nil
	}
	return nil, unix.ENOENT
}

// Readdir implements fs.DirNode.
func (d *Dir) Readdir(ctx fs.Context) ([]fs.Dirent, error) {
	d.mu.RLock()
	names := make([]string, 0, len(d.entries))
	for k := range d.entries {
		names = append(names, k)
	}
	d.mu.RUnlock()
	sort.Strings(names)
	return direntsOf(ctx, names, func(name string) (fs.Node, error) { return d.Lookup(ctx, name) })
}

func direntsOf(ctx fs.Context, names []string, lookup func(string) (fs.Node, error)) ([]fs.Dirent, error) {
	ents := make([]fs.Dirent, 0, len(names))
	for _, name := range names {
		n, err := lookup(name)
		if err != nil {
			continue // vanished meanwhile
		}
		st, err := n.Stat(ctx)
		if err != nil {
			continue
		}
		ents = append(ents, fs.Dirent{Name: name, Ino: st.Ino, Type: fs.DirentType(st.Mode)})
	}
	return ents, nil
}

// DynamicDir is a directory whose entries are computed at each lookup and
// listing (/proc, /proc/[pid]/fd). Its lookups are never cached.
type DynamicDir struct {
	Attr
	// Names lists the entries.
	Names func(ctx fs.Context) []string
	// Get returns the entry name, or ENOENT.
	Get func(ctx fs.Context, name string) (fs.Node, error)
}

// Stat implements fs.Node.
func (d *DynamicDir) Stat(fs.Context) (fs.Stat, error) {
	st := d.stat(unix.S_IFDIR)
	st.Nlink = 2
	return st, nil
}

// Lookup implements fs.DirNode.
func (d *DynamicDir) Lookup(ctx fs.Context, name string) (fs.Node, error) { return d.Get(ctx, name) }

// Readdir implements fs.DirNode.
func (d *DynamicDir) Readdir(ctx fs.Context) ([]fs.Dirent, error) {
	return direntsOf(ctx, d.Names(ctx), func(name string) (fs.Node, error) { return d.Get(ctx, name) })
}

// UncachedChildren implements fs.UncachedDir.
func (*DynamicDir) UncachedChildren() {}

// Symlink is a symbolic link whose target may be generated.
type Symlink struct {
	Attr
	// Target returns the link's target.
	Target func(ctx fs.Context) (string, error)
}

// NewSymlink returns a symlink to the fixed target.
func NewSymlink(target string) *Symlink {
	return &Symlink{Attr: Attr{Mode: 0o777}, Target: func(fs.Context) (string, error) { return target, nil }}
}

// Stat implements fs.Node.
func (s *Symlink) Stat(ctx fs.Context) (fs.Stat, error) {
	st := s.stat(unix.S_IFLNK)
	if t, err := s.Target(ctx); err == nil {
		st.Size = int64(len(t))
	}
	return st, nil
}

// Readlink implements fs.SymlinkNode.
func (s *Symlink) Readlink(ctx fs.Context) (string, error) { return s.Target(ctx) }

// MagicLink is a symlink to an object (/proc/[pid]/fd/N, exe, cwd).
type MagicLink struct {
	Attr
	// Path returns what readlink shows.
	Path func(ctx fs.Context) (string, error)
	// Resolve returns the position or open file the link names (the file
	// with a reference the VFS drops).
	Resolve func(ctx fs.Context) (fs.VirtualDentry, *fs.FileDescription, error)
	// Check, if set, comes before each readlink and each following of
	// the link, and its error is theirs (Linux's proc links take the
	// ptrace access check so).
	Check func(ctx fs.Context) error
}

// check runs m.Check, if any.
func (m *MagicLink) check(ctx fs.Context) error {
	if m.Check == nil {
		return nil
	}
	return m.Check(ctx)
}

// Stat implements fs.Node.
func (m *MagicLink) Stat(ctx fs.Context) (fs.Stat, error) {
	st := m.stat(unix.S_IFLNK)
	if t, err := m.Readlink(ctx); err == nil {
		st.Size = int64(len(t))
	}
	return st, nil
}

// Readlink implements fs.SymlinkNode.
func (m *MagicLink) Readlink(ctx fs.Context) (string, error) {
	if err := m.check(ctx); err != nil {
		return "", err
	}
	return m.Path(ctx)
}

// Target implements fs.MagicLinkNode.
func (m *MagicLink) Target(ctx fs.Context) (fs.VirtualDentry, *fs.FileDescription, error) {
	if err := m.check(ctx); err != nil {
		return fs.VirtualDentry{}, nil, err
	}
	return m.Resolve(ctx)
}
