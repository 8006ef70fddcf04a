package tmpfs

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// direntSize is what each entry adds to a directory's st_size, as Linux's
// tmpfs counts (BOGO_DIRENT_SIZE); "." and ".." count too.
const direntSize = 20

// entry is one name in a directory.
type entry struct {
	n   node
	seq uint64 // creation order, the order Readdir lists
}

// dir is a directory. parent, entries and seq are guarded by
// filesystem.mu.
type dir struct {
	inode
	parent  *dir
	entries map[string]entry
	seq     uint64
}

func (tfs *filesystem) newDir(parent *dir, opts fs.CreateOptions) *dir {
	d := &dir{parent: parent, entries: make(map[string]entry)}
	d.init(tfs, opts)
	d.nlink = 2
	return d
}

// Stat implements fs.Node.
func (d *dir) Stat(fs.Context) (fs.Stat, error) {
	d.tfs.mu.Lock()
	n := len(d.entries)
	d.tfs.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.statLocked()
	st.Size = int64(2+n) * direntSize
	return st, nil
}

// Lookup implements fs.DirNode.
func (d *dir) Lookup(_ fs.Context, name string) (fs.Node, error) {
	d.tfs.mu.Lock()
	defer d.tfs.mu.Unlock()
	e, ok := d.entries[name]
	if !ok {
		return nil, unix.ENOENT
	}
	return e.n, nil
}

// Readdir implements fs.DirNode: entries in the order they were made.
func (d *dir) Readdir(fs.Context) ([]fs.Dirent, error) {
	type named struct {
		name string
		e    entry
	}
	d.tfs.mu.Lock()
	list := make([]named, 0, len(d.entries))
	for name, e := range d.entries {
		list = append(list, named{name, e})
	}
	d.tfs.mu.Unlock()
	slices.SortFunc(list, func(a, b named) int {
		switch {
		case a.e.seq < b.e.seq:
			return -1
		case a.e.seq > b.e.seq:
			return 1
		}
		return 0
	})
	out := make([]fs.Dirent, len(list))
	for i, l := range list {
		b := l.e.n.base()
		b.mu.Lock()
		typ := b.mode & unix.S_IFMT
		b.mu.Unlock()
		out[i] = fs.Dirent{Name: l.name, Ino: b.ino, Type: fs.DirentType(typ)}
	}
	return out, nil
}

// addLocked names n in d and stamps d's mtime and ctime.
// Preconditions: d.tfs.mu is held.
func (d *dir) addLocked(name string, n node) {
	d.seq++
	d.entries[name] = entry{n: n, seq: d.seq}
	d.touchModified()
}

// touchModified sets the directory's mtime and ctime to now.
func (d *dir) touchModified() {
	now := fs.Now()
	d.mu.Lock()
	d.mtime, d.ctime = now, now
	d.mu.Unlock()
}

// create makes a node with make under name.
func (d *dir) create(name string, make func() node) (fs.Node, error) {
	tfs := d.tfs
	tfs.mu.Lock()
	defer tfs.mu.Unlock()
	if _, ok := d.entries[name]; ok {
		return nil, unix.EEXIST
	}
	if err := tfs.takeInode(); err != nil {
		return nil, err
	}
	n := make()
	d.addLocked(name, n)
	return n, nil
}

// Mknod implements fs.MutableDir.
func (d *dir) Mknod(_ fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	switch opts.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return d.create(name, func() node { return d.tfs.newRegular(opts) })
	case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFCHR, unix.S_IFBLK:
		return d.create(name, func() node {
			s := &special{}
			s.init(d.tfs, opts)
			if t := opts.Mode & unix.S_IFMT; t != unix.S_IFCHR && t != unix.S_IFBLK {
				s.rdev = 0
			}
			return s
		})
	}
	return nil, unix.EINVAL
}

// Mkdir implements fs.MutableDir.
func (d *dir) Mkdir(_ fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	return d.create(name, func() node {
		c := d.tfs.newDir(d, opts)
		d.mu.Lock()
		d.nlink++ // the child's ".."
		d.mu.Unlock()
		return c
	})
}

// Symlink implements fs.MutableDir.
func (d *dir) Symlink(_ fs.Context, name, target string, opts fs.CreateOptions) (fs.Node, error) {
	return d.create(name, func() node {
		s := &symlink{target: target}
		s.init(d.tfs, opts)
		return s
	})
}

// Tmpfile implements fs.TmpfileDir: an unnamed regular file with nlink 0
// that Link may name once.
func (d *dir) Tmpfile(_ fs.Context, opts fs.CreateOptions) (fs.Node, error) {
	tfs := d.tfs
	tfs.mu.Lock()
	defer tfs.mu.Unlock()
	if err := tfs.takeInode(); err != nil {
		return nil, err
	}
	f := tfs.newRegular(opts)
	f.nlink = 0
	f.linkable = true
	return f, nil
}

// Link implements fs.MutableDir.
func (d *dir) Link(_ fs.Context, name string, target fs.Node) error {
	n, ok := target.(node)
	if !ok || n.base().tfs != d.tfs {
		return unix.EXDEV
	}
	if _, isDir := n.(*dir); isDir {
		return unix.EPERM
	}
	tfs := d.tfs
	tfs.mu.Lock()
	defer tfs.mu.Unlock()
	if _, ok := d.entries[name]; ok {
		return unix.EEXIST
	}
	b := n.base()
	b.mu.Lock()
	if b.nlink == 0 {
		f, ok := n.(*regularFile)
		if !ok || !f.linkable || f.released {
			b.mu.Unlock()
			return unix.ENOENT
		}
		f.linkable = false
	}
	b.nlink++
	b.ctime = fs.Now()
	b.mu.Unlock()
	d.addLocked(name, n)
	return nil
}

// dropLinkLocked lowers n's link count after one of its names went, and
// uncounts it once it no longer exists.
// Preconditions: tfs.mu is held.
func (tfs *filesystem) dropLinkLocked(n node) {
	b := n.base()
	gone := false
	b.mu.Lock()
	if _, isDir := n.(*dir); isDir {
		b.nlink = 0
		gone = true
	} else if b.nlink > 0 {
		b.nlink--
		if f, ok := n.(*regularFile); ok {
			gone = f.releaseLocked()
		} else {
			gone = b.nlink == 0
		}
	}
	b.ctime = fs.Now()
	b.mu.Unlock()
	if gone {
		tfs.inodes--
	}
}

// Unlink implements fs.MutableDir.
func (d *dir) Unlink(_ fs.Context, name string, child fs.Node) error {
	tfs := d.tfs
	tfs.mu.Lock()
	defer tfs.mu.Unlock()
	e, ok := d.entries[name]
	if !ok {
		return unix.ENOENT
	}
	if _, isDir := e.n.(*dir); isDir {
		return unix.EISDIR
	}
	delete(d.entries, name)
	d.touchModified()
	tfs.dropLinkLocked(e.n)
	return nil
}

// Rmdir implements fs.MutableDir.
func (d *dir) Rmdir(_ fs.Context, name string, child fs.Node) error {
	tfs := d.tfs
	tfs.mu.Lock()
	defer tfs.mu.Unlock()
	e, ok := d.entries[name]
	if !ok {
		return unix.ENOENT
	}
	c, isDir := e.n.(*dir)
	if !isDir {
		return unix.ENOTDIR
	}
	if len(c.entries) > 0 {
		return unix.ENOTEMPTY
	}
	delete(d.entries, name)
	d.mu.Lock()
	d.nlink--
	d.mu.Unlock()
	d.touchModified()
	tfs.dropLinkLocked(c)
	return nil
}

// Rename implements fs.MutableDir.
func (d *dir) Rename(_ fs.Context, oldName string, renamed fs.Node, newDir fs.MutableDir, newName string, replaced fs.Node, flags uint32) error {
	nd, ok := newDir.(*dir)
	if !ok || nd.tfs != d.tfs {
		return unix.EXDEV
	}
	tfs := d.tfs
	tfs.mu.Lock()
	defer tfs.mu.Unlock()
	oe, ok := d.entries[oldName]
	if !ok {
		return unix.ENOENT
	}
	ne, exists := nd.entries[newName]
	if d == nd && oldName == newName {
		return nil
	}
	rd, renamedIsDir := oe.n.(*dir)
	now := fs.Now()
	switch {
	case flags&unix.RENAME_EXCHANGE != 0:
		if !exists {
			return unix.ENOENT
		}
		xd, replacedIsDir := ne.n.(*dir)
		d.entries[oldName] = entry{n: ne.n, seq: oe.seq}
		nd.entries[newName] = entry{n: oe.n, seq: ne.seq}
		if d != nd && renamedIsDir != replacedIsDir {
			// One directory moves each way: the parents' link counts
			// follow their ".." entries.
			from, to := d, nd
			if replacedIsDir {
				from, to = nd, d
			}
			from.mu.Lock()
			from.nlink--
			from.mu.Unlock()
			to.mu.Lock()
			to.nlink++
			to.mu.Unlock()
		}
		if renamedIsDir {
			rd.parent = nd
		}
		if replacedIsDir {
			xd.parent = d
		}
		setCtime(ne.n, now)
	default:
		if exists {
			if ne.n == oe.n {
				// Two names of one file: nothing happens.
				return nil
			}
			if xd, ok := ne.n.(*dir); ok {
				if len(xd.entries) > 0 {
					return unix.ENOTEMPTY
				}
				nd.mu.Lock()
				nd.nlink--
				nd.mu.Unlock()
			}
			tfs.dropLinkLocked(ne.n)
		}
		delete(d.entries, oldName)
		nd.seq++
		nd.entries[newName] = entry{n: oe.n, seq: nd.seq}
		if renamedIsDir && d != nd {
			rd.parent = nd
			d.mu.Lock()
			d.nlink--
			d.mu.Unlock()
			nd.mu.Lock()
			nd.nlink++
			nd.mu.Unlock()
		}
	}
	setCtime(oe.n, now)
	d.touchModified()
	if nd != d {
		nd.touchModified()
	}
	return nil
}

func setCtime(n node, now unix.Timespec) {
	b := n.base()
	b.mu.Lock()
	b.ctime = now
	b.mu.Unlock()
}
