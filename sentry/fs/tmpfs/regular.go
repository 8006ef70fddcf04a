package tmpfs

import (
	"io"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// regularFile is a regular file: its data is obj.
type regularFile struct {
	inode
	obj *mm.Object

	// opens counts the open file descriptions (guarded by inode.mu);
	// released is set once the object's node reference is dropped.
	opens    int
	released bool
	// linkable is set on an O_TMPFILE file until Link names it.
	linkable bool
}

func (tfs *filesystem) newRegular(opts fs.CreateOptions) *regularFile {
	f := &regularFile{obj: mm.NewObject(tfs.mf, 0, &tfs.budget)}
	f.init(tfs, opts)
	// Files of a tmpfs may not be sealed (memfds lift this).
	f.obj.SetSeals(unix.F_SEAL_SEAL)
	return f
}

// Stat implements fs.Node.
func (f *regularFile) Stat(fs.Context) (fs.Stat, error) {
	f.mu.Lock()
	st := f.statLocked()
	f.mu.Unlock()
	st.Size = f.obj.Size()
	st.Blocks = f.obj.Allocated() / 512
	return st, nil
}

// SetAttr implements fs.SetAttrNode: a size change truncates the object
// (seals may refuse it with EPERM) before the other attributes change. A
// memfd sealed with F_SEAL_EXEC refuses changes of its execute bits.
func (f *regularFile) SetAttr(_ fs.Context, opts *fs.SetAttrOptions) error {
	if opts.Mask&fs.SetAttrMode != 0 && f.obj.Seals()&unix.F_SEAL_EXEC != 0 {
		f.mu.Lock()
		changed := (f.mode^opts.Mode)&0o111 != 0
		f.mu.Unlock()
		if changed {
			return unix.EPERM
		}
	}
	if opts.Mask&fs.SetAttrSize != 0 {
		if err := f.obj.Truncate(opts.Size); err != nil {
			return err
		}
	}
	f.mu.Lock()
	f.setAttrLocked(opts)
	f.mu.Unlock()
	return nil
}

// Open implements fs.OpenNode. The VFS truncates for O_TRUNC afterwards.
func (f *regularFile) Open(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	f.mu.Lock()
	f.opens++
	f.mu.Unlock()
	return fs.NewFileDescription(&regularFD{f: f}, vd, flags, fs.FDOptions{}), nil
}

// releaseLocked drops the object's node reference once the file is
// neither linked nor open, and reports whether it did (the caller then
// uncounts the inode).
// Preconditions: f.mu is held.
func (f *regularFile) releaseLocked() bool {
	if f.nlink == 0 && f.opens == 0 && !f.released {
		f.released = true
		f.obj.DecRef()
		return true
	}
	return false
}

// regularFD is an open regular file.
type regularFD struct {
	fs.FileDefaults
	fs.NotPollable
	f *regularFile
}

// MemoryObject implements mm.Mappable.
func (r *regularFD) MemoryObject() *mm.Object { return r.f.obj }

// DirectIO marks the file's reads and writes as splittable at any byte:
// read(2) and write(2) hand it the application's pages directly
// (sentry/syscalls/linux/sys_read_write_direct.go).
func (*regularFD) DirectIO() {}

// Read implements fs.FileImpl.Read. As with relatime, the access time is
// updated when it is not newer than the last change.
func (r *regularFD) Read(_ fs.Context, fd *fs.FileDescription, dst []byte, off int64) (int, error) {
	n, err := r.f.obj.ReadAt(dst, off)
	if err == io.EOF {
		err = nil
	}
	if fd.Flags()&unix.O_NOATIME == 0 {
		r.f.touchAtime()
	}
	return n, err
}

// touchAtime updates the access time as Linux's relatime does: when it is
// older than the last modification or change.
func (n *inode) touchAtime() {
	n.mu.Lock()
	if !tsAfter(n.atime, n.mtime) || !tsAfter(n.atime, n.ctime) {
		n.atime = fs.Now()
	}
	n.mu.Unlock()
}

func tsAfter(a, b unix.Timespec) bool {
	return a.Sec > b.Sec || a.Sec == b.Sec && a.Nsec > b.Nsec
}

// Write implements fs.FileImpl.Write. With O_APPEND the data goes to the
// end of the file as it is when the write happens (also for pwrite, as on
// Linux), so concurrent appenders never overwrite each other.
func (r *regularFD) Write(_ fs.Context, fd *fs.FileDescription, src []byte, off int64) (int, error) {
	var n int
	var err error
	if fd.Flags()&unix.O_APPEND != 0 {
		n, _, err = r.f.obj.Append(src)
	} else {
		n, err = r.f.obj.WriteAt(src, off)
	}
	if n > 0 {
		now := fs.Now()
		r.f.mu.Lock()
		r.f.mtime, r.f.ctime = now, now
		r.f.mu.Unlock()
	}
	return n, err
}

// Seek implements fs.FileImpl.Seek, with SEEK_DATA and SEEK_HOLE at page
// granularity.
func (r *regularFD) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	switch whence {
	case unix.SEEK_DATA:
		return r.f.obj.SeekData(offset)
	case unix.SEEK_HOLE:
		return r.f.obj.SeekHole(offset)
	}
	return fs.SeekWithSize(cur, offset, whence, r.f.obj.Size())
}

// Fallocate implements fs.Allocator: allocation (with or without
// FALLOC_FL_KEEP_SIZE) and FALLOC_FL_PUNCH_HOLE, as tmpfs supports.
func (r *regularFD) Fallocate(_ fs.Context, _ *fs.FileDescription, mode uint32, off, length int64) error {
	var err error
	switch mode {
	case 0:
		err = r.f.obj.Allocate(off, length, false)
	case unix.FALLOC_FL_KEEP_SIZE:
		err = r.f.obj.Allocate(off, length, true)
	case unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE:
		err = r.f.obj.PunchHole(off, length)
	default:
		return unix.EOPNOTSUPP
	}
	if err != nil {
		return err
	}
	now := fs.Now()
	r.f.mu.Lock()
	r.f.mtime, r.f.ctime = now, now
	r.f.mu.Unlock()
	return nil
}

// Release implements fs.FileImpl.Release.
func (r *regularFD) Release() {
	r.f.mu.Lock()
	r.f.opens--
	gone := r.f.releaseLocked()
	r.f.mu.Unlock()
	if gone {
		r.f.tfs.dropInode()
	}
}
