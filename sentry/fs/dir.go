package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// DirIterator is implemented by directory files (getdents).
type DirIterator interface {
	// IterDirents calls emit with each entry from the file's offset on,
	// stopping when emit returns false; the offset moves past each entry
	// emit accepted.
	IterDirents(ctx Context, fd *FileDescription, emit func(Dirent) bool) error
}

// DirFile is the file of an opened directory: it lists a DirNode, with "."
// and "..". The listing is read when the offset is 0 (open, rewinddir,
// lseek to 0) and its positions stay put until then, so telldir/seekdir
// offsets keep naming the same entries. As on Linux, an entry removed
// before the read that would return it is not listed: a read checks the
// listing against the directory when the VFS changed the directory's
// children since the last check; for directories that change behind the
// VFS, also when a bind mount's directory (RevalidatingDir) shows a new
// mtime or ctime (one stat, not a whole listing, per read of a large
// directory; a host change in the clock tick of the last check shows at
// the next change or rewind), and always for UncachedDir ones (/proc). Entries made after
// the listing was read appear after the next rewind (POSIX leaves that
// open).
type DirFile struct {
	FileDefaults
	NotPollable

	mu sync.Mutex
	// entries is the listing, nil until read; a removed entry keeps its
	// position with an empty Name.
	entries []Dirent
	// gen is the directory dentry's child generation, and mtime and
	// ctime the times of a RevalidatingDir, when entries were last
	// checked.
	gen          uint64
	mtime, ctime unix.Timespec
}

// NewDirFile opens the directory at vd as a generic directory file.
func NewDirFile(vd VirtualDentry, flags uint32) *FileDescription {
	return NewFileDescription(&DirFile{}, vd, flags, FDOptions{})
}

// Read implements FileImpl.Read: EISDIR.
func (*DirFile) Read(Context, *FileDescription, []byte, int64) (int, error) {
	return 0, unix.EISDIR
}

// Write implements FileImpl.Write: EISDIR is refused at open; EBADF here.
func (*DirFile) Write(Context, *FileDescription, []byte, int64) (int, error) {
	return 0, unix.EBADF
}

// Seek implements FileImpl.Seek for SEEK_SET and SEEK_CUR.
func (f *DirFile) Seek(_ Context, _ *FileDescription, cur, offset int64, whence int) (int64, error) {
	var n int64
	switch whence {
	case unix.SEEK_SET:
		n = offset
	case unix.SEEK_CUR:
		n = cur + offset
	default:
		return 0, unix.EINVAL
	}
	if n < 0 {
		return 0, unix.EINVAL
	}
	if n == 0 {
		f.mu.Lock()
		f.entries = nil
		f.mu.Unlock()
	}
	return n, nil
}

// IterDirents implements DirIterator.
func (f *DirFile) IterDirents(ctx Context, fd *FileDescription, emit func(Dirent) bool) error {
	fd.offMu.Lock()
	defer fd.offMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if fd.vd.Dentry.IsDead() {
		// Linux lists nothing of a removed directory: ENOENT.
		return unix.ENOENT
	}
	d := fd.vd.Dentry
	if f.entries == nil || fd.off == 0 {
		gen := d.childGen()
		f.mtime, f.ctime = hostTimes(ctx, d)
		ents, err := listDir(ctx, fd.vd)
		if err != nil {
			return err
		}
		f.entries, f.gen = ents, gen
	} else if fd.off < int64(len(f.entries)) && f.stale(ctx, d) {
		if err := f.recheck(ctx, d); err != nil {
			return err
		}
	}
	for fd.off < int64(len(f.entries)) {
		if e := f.entries[fd.off]; e.Name != "" && !emit(e) {
			return nil
		}
		fd.off++
	}
	return nil
}

// stale reports whether f's listing must be checked against d.
// Preconditions: f.mu is held.
func (f *DirFile) stale(ctx Context, d *Dentry) bool {
	if _, ok := d.node.(UncachedDir); ok {
		return true
	}
	if d.childGen() != f.gen {
		return true
	}
	if _, ok := d.node.(RevalidatingDir); ok {
		st, err := d.node.Stat(ctx)
		return err != nil || st.Mtime != f.mtime || st.Ctime != f.ctime
	}
	return false
}

// hostTimes returns the mtime and ctime of d if it is a RevalidatingDir
// (whose entries host processes change, changing those), else zeros (a
// failed stat too: stale then stats again and sees an error or a change).
func hostTimes(ctx Context, d *Dentry) (mtime, ctime unix.Timespec) {
	if _, ok := d.node.(RevalidatingDir); !ok {
		return
	}
	st, err := d.node.Stat(ctx)
	if err != nil {
		return
	}
	return st.Mtime, st.Ctime
}

// recheck blanks the entries of f's listing that d no longer holds and
// refreshes the inode number and type of the others (a name removed and
// made again names the new node). "." and ".." stay.
// Preconditions: f.mu is held.
func (f *DirFile) recheck(ctx Context, d *Dentry) error {
	dir, ok := d.node.(DirNode)
	if !ok {
		return unix.ENOTDIR
	}
	gen := d.childGen()
	f.mtime, f.ctime = hostTimes(ctx, d)
	children, err := dir.Readdir(ctx)
	if err != nil {
		return err
	}
	now := make(map[string]Dirent, len(children))
	for _, c := range children {
		now[c.Name] = c
	}
	for i := 2; i < len(f.entries); i++ {
		e := &f.entries[i]
		if e.Name == "" {
			continue
		}
		c, ok := now[e.Name]
		if !ok {
			e.Name = ""
			continue
		}
		e.Ino, e.Type = c.Ino, c.Type
	}
	f.gen = gen
	return nil
}

// listDir returns the entries of the directory at vd with "." and "..",
// NextOff set to each entry's index plus one.
func listDir(ctx Context, vd VirtualDentry) ([]Dirent, error) {
	dir, ok := vd.Dentry.node.(DirNode)
	if !ok {
		return nil, unix.ENOTDIR
	}
	st, err := vd.Dentry.Stat(ctx)
	if err != nil {
		return nil, err
	}
	pino := st.Ino
	if p := vd.Dentry.Parent(); p != nil {
		if pst, err := p.Stat(ctx); err == nil {
			pino = pst.Ino
		}
	}
	children, err := dir.Readdir(ctx)
	if err != nil {
		return nil, err
	}
	ents := make([]Dirent, 0, len(children)+2)
	ents = append(ents, Dirent{Name: ".", Ino: st.Ino, Type: unix.DT_DIR})
	ents = append(ents, Dirent{Name: "..", Ino: pino, Type: unix.DT_DIR})
	ents = append(ents, children...)
	for i := range ents {
		ents[i].NextOff = int64(i + 1)
	}
	return ents, nil
}
