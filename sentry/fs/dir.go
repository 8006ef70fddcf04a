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
// and "..". The listing is read when the offset is 0 and kept until the
// directory is rewound, so entries do not move under a reader.
type DirFile struct {
	FileDefaults
	NotPollable

	mu      sync.Mutex
	entries []Dirent // nil until read
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
	if f.entries == nil || fd.off == 0 {
		ents, err := listDir(ctx, fd.vd)
		if err != nil {
			return err
		}
		f.entries = ents
	}
	for fd.off < int64(len(f.entries)) {
		if !emit(f.entries[fd.off]) {
			return nil
		}
		fd.off++
	}
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
