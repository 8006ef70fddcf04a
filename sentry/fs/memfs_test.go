package fs_test

import (
	"sort"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// memfs is a small writable file system for the VFS's tests: one lock
// for everything, files held in byte slices.
type memfs struct {
	mu      sync.Mutex
	nextIno uint64
}

func (m *memfs) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: 0x01021994, Bsize: 4096, Frsize: 4096, NameLen: fs.NameMax}, nil
}

// newMemFS returns a writable memfs whose root is a 0777 directory owned
// by root.
func newMemFS() *fs.Filesystem {
	m := &memfs{}
	root := m.newDir(fs.CreateOptions{Mode: unix.S_IFDIR | 0o777}, nil)
	return fs.NewFilesystem("memfs", m, root, false)
}

// inode holds what every memfs node has.
type inode struct {
	m      *memfs
	ino    uint64
	mode   uint32
	uid    auth.KUID
	gid    auth.KGID
	nlink  uint32
	rdev   uint64
	size   int64
	atime  unix.Timespec
	mtime  unix.Timespec
	ctime  unix.Timespec
	xattrs map[string][]byte
	// linkable marks an O_TMPFILE file, which may get a name once.
	linkable bool
}

func (m *memfs) newInode(opts fs.CreateOptions) inode {
	m.nextIno++
	now := fs.Now()
	return inode{m: m, ino: m.nextIno, mode: opts.Mode, uid: opts.UID, gid: opts.GID, nlink: 1, rdev: opts.Rdev, atime: now, mtime: now, ctime: now}
}

func (i *inode) in() *inode { return i }

type hasInode interface{ in() *inode }

func (i *inode) Stat(fs.Context) (fs.Stat, error) {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	return fs.Stat{Mode: i.mode, Nlink: i.nlink, UID: i.uid, GID: i.gid, Ino: i.ino, Rdev: i.rdev, Size: i.size,
		Blksize: 4096, Atime: i.atime, Mtime: i.mtime, Ctime: i.ctime}, nil
}

func (i *inode) SetAttr(_ fs.Context, o *fs.SetAttrOptions) error {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	if o.Mask&fs.SetAttrMode != 0 {
		i.mode = i.mode&unix.S_IFMT | o.Mode
	}
	if o.Mask&fs.SetAttrUID != 0 {
		i.uid = o.UID
	}
	if o.Mask&fs.SetAttrGID != 0 {
		i.gid = o.GID
	}
	if o.Mask&fs.SetAttrAtime != 0 {
		i.atime = o.Atime
	}
	if o.Mask&fs.SetAttrMtime != 0 {
		i.mtime = o.Mtime
	}
	if o.Mask&fs.SetAttrCtime != 0 {
		i.ctime = o.Ctime
	}
	return nil
}

func (i *inode) GetXattr(_ fs.Context, name string) ([]byte, error) {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	v, ok := i.xattrs[name]
	if !ok {
		return nil, unix.ENODATA
	}
	return append([]byte(nil), v...), nil
}

func (i *inode) SetXattr(_ fs.Context, name string, value []byte, flags int) error {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	_, ok := i.xattrs[name]
	if ok && flags&unix.XATTR_CREATE != 0 {
		return unix.EEXIST
	}
	if !ok && flags&unix.XATTR_REPLACE != 0 {
		return unix.ENODATA
	}
	if i.xattrs == nil {
		i.xattrs = map[string][]byte{}
	}
	i.xattrs[name] = append([]byte(nil), value...)
	i.ctime = fs.Now()
	return nil
}

func (i *inode) ListXattr(fs.Context) ([]string, error) {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	var names []string
	for n := range i.xattrs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (i *inode) RemoveXattr(_ fs.Context, name string) error {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	if _, ok := i.xattrs[name]; !ok {
		return unix.ENODATA
	}
	delete(i.xattrs, name)
	return nil
}

// memFile is a regular file (or a fifo, socket or device: data unused).
type memFile struct {
	inode
	data []byte
}

func (f *memFile) SetAttr(ctx fs.Context, o *fs.SetAttrOptions) error {
	if o.Mask&fs.SetAttrSize != 0 {
		f.m.mu.Lock()
		if o.Size <= int64(len(f.data)) {
			f.data = f.data[:o.Size]
		} else {
			f.data = append(f.data, make([]byte, o.Size-int64(len(f.data)))...)
		}
		f.size = o.Size
		f.m.mu.Unlock()
		o2 := *o
		o2.Mask &^= fs.SetAttrSize
		return f.inode.SetAttr(ctx, &o2)
	}
	return f.inode.SetAttr(ctx, o)
}

func (f *memFile) Open(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	return fs.NewFileDescription(&memFD{f: f}, vd, flags, fs.FDOptions{}), nil
}

type memFD struct {
	fs.FileDefaults
	fs.NotPollable
	f *memFile
}

func (d *memFD) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	d.f.m.mu.Lock()
	defer d.f.m.mu.Unlock()
	if off >= int64(len(d.f.data)) {
		return 0, nil
	}
	return copy(dst, d.f.data[off:]), nil
}

func (d *memFD) Write(_ fs.Context, _ *fs.FileDescription, src []byte, off int64) (int, error) {
	d.f.m.mu.Lock()
	defer d.f.m.mu.Unlock()
	if end := off + int64(len(src)); end > int64(len(d.f.data)) {
		d.f.data = append(d.f.data, make([]byte, end-int64(len(d.f.data)))...)
	}
	copy(d.f.data[off:], src)
	d.f.size = int64(len(d.f.data))
	d.f.mtime = fs.Now()
	d.f.ctime = d.f.mtime
	return len(src), nil
}

func (d *memFD) Seek(_ fs.Context, _ *fs.FileDescription, cur, off int64, whence int) (int64, error) {
	d.f.m.mu.Lock()
	size := int64(len(d.f.data))
	d.f.m.mu.Unlock()
	return fs.SeekWithSize(cur, off, whence, size)
}

func (d *memFD) Fallocate(_ fs.Context, _ *fs.FileDescription, mode uint32, off, length int64) error {
	d.f.m.mu.Lock()
	defer d.f.m.mu.Unlock()
	if end := off + length; end > int64(len(d.f.data)) && mode&unix.FALLOC_FL_KEEP_SIZE == 0 {
		d.f.data = append(d.f.data, make([]byte, end-int64(len(d.f.data)))...)
		d.f.size = end
	}
	return nil
}

type memSymlink struct {
	inode
	target string
}

func (s *memSymlink) Readlink(fs.Context) (string, error) { return s.target, nil }

type memDir struct {
	inode
	children map[string]fs.Node
}

func (m *memfs) newDir(opts fs.CreateOptions, _ *memDir) *memDir {
	d := &memDir{inode: m.newInode(opts), children: map[string]fs.Node{}}
	d.nlink = 2
	return d
}

func (d *memDir) Lookup(_ fs.Context, name string) (fs.Node, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if d.nlink == 0 {
		return nil, unix.ENOENT
	}
	n, ok := d.children[name]
	if !ok {
		return nil, unix.ENOENT
	}
	return n, nil
}

func (d *memDir) Readdir(fs.Context) ([]fs.Dirent, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	var out []fs.Dirent
	for name, n := range d.children {
		i := n.(hasInode).in()
		out = append(out, fs.Dirent{Name: name, Ino: i.ino, Type: fs.DirentType(i.mode)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// add links n as name. Preconditions: d.m.mu held.
func (d *memDir) add(name string, n fs.Node) error {
	if _, ok := d.children[name]; ok {
		return unix.EEXIST
	}
	d.children[name] = n
	d.mtime = fs.Now()
	d.ctime = d.mtime
	return nil
}

func (d *memDir) Mknod(_ fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	f := &memFile{inode: d.m.newInode(opts)}
	return f, d.add(name, f)
}

func (d *memDir) Mkdir(_ fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	c := d.m.newDir(opts, d)
	if err := d.add(name, c); err != nil {
		return nil, err
	}
	d.nlink++
	return c, nil
}

func (d *memDir) Symlink(_ fs.Context, name, target string, opts fs.CreateOptions) (fs.Node, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	s := &memSymlink{inode: d.m.newInode(opts), target: target}
	s.size = int64(len(target))
	return s, d.add(name, s)
}

func (d *memDir) Link(_ fs.Context, name string, target fs.Node) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	i := target.(hasInode).in()
	if i.nlink == 0 {
		if !i.linkable {
			return unix.ENOENT
		}
		i.linkable = false
	}
	if err := d.add(name, target); err != nil {
		return err
	}
	i.nlink++
	i.ctime = fs.Now()
	return nil
}

// drop unlinks name. Preconditions: d.m.mu held.
func (d *memDir) drop(name string, n fs.Node) {
	delete(d.children, name)
	i := n.(hasInode).in()
	if c, ok := n.(*memDir); ok {
		c.nlink = 0
		d.nlink--
	} else {
		i.nlink--
	}
	i.ctime = fs.Now()
	d.mtime = i.ctime
	d.ctime = i.ctime
}

func (d *memDir) Unlink(_ fs.Context, name string, child fs.Node) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if d.children[name] != child {
		return unix.ENOENT
	}
	d.drop(name, child)
	return nil
}

func (d *memDir) Rmdir(_ fs.Context, name string, child fs.Node) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	c, ok := child.(*memDir)
	if !ok || d.children[name] != child {
		return unix.ENOENT
	}
	if len(c.children) > 0 {
		return unix.ENOTEMPTY
	}
	d.drop(name, child)
	return nil
}

func (d *memDir) Rename(_ fs.Context, oldName string, renamed fs.Node, newDir fs.MutableDir, newName string, replaced fs.Node, flags uint32) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	nd := newDir.(*memDir)
	if d.children[oldName] != renamed || nd.children[newName] != replaced {
		return unix.ENOENT
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		d.children[oldName], nd.children[newName] = replaced, renamed
		_, rd := renamed.(*memDir)
		_, pd := replaced.(*memDir)
		if d != nd && rd != pd {
			if rd {
				d.nlink--
				nd.nlink++
			} else {
				d.nlink++
				nd.nlink--
			}
		}
		return nil
	}
	if replaced != nil {
		if c, ok := replaced.(*memDir); ok && len(c.children) > 0 {
			return unix.ENOTEMPTY
		}
		nd.drop(newName, replaced)
	}
	delete(d.children, oldName)
	nd.children[newName] = renamed
	if _, ok := renamed.(*memDir); ok && d != nd {
		d.nlink--
		nd.nlink++
	}
	now := fs.Now()
	renamed.(hasInode).in().ctime = now
	d.mtime, d.ctime, nd.mtime, nd.ctime = now, now, now, now
	return nil
}

func (d *memDir) Tmpfile(_ fs.Context, opts fs.CreateOptions) (fs.Node, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	f := &memFile{inode: d.m.newInode(opts)}
	f.nlink = 0
	f.linkable = true
	return f, nil
}

var (
	_ fs.TmpfileDir  = (*memDir)(nil)
	_ fs.SetAttrNode = (*memFile)(nil)
	_ fs.XattrNode   = (*memFile)(nil)
	_ fs.OpenNode    = (*memFile)(nil)
	_ fs.SymlinkNode = (*memSymlink)(nil)
	_ fs.Allocator   = (*memFD)(nil)
)
