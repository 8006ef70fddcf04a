package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Attribute and data-integrity syscalls: chmod, chown and utimes
// families, truncate, fallocate, the sync family.

// attrTarget resolves the target of a chmod/chown/utimes family call: a
// path relative to dirfd, or dirfd itself with AT_EMPTY_PATH.
func attrTarget(t *kernel.Task, dirfd int32, addr uintptr, flags int32, allowed int32) (fs.VirtualDentry, error) {
	if flags&^allowed != 0 {
		return fs.VirtualDentry{}, unix.EINVAL
	}
	return vfsResolve(t, dirfd, addr, flags&unix.AT_EMPTY_PATH != 0, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
}

// attrFD returns the position of an open file for fchmod, fchown and
// futimens (O_PATH descriptions are EBADF).
func attrFD(t *kernel.Task, fd int32) (fs.VirtualDentry, error) {
	f, err := vfsIOFile(t, fd)
	if err != nil {
		return fs.VirtualDentry{}, err
	}
	defer f.DecRef()
	return f.VirtualDentry(), nil
}

func chmodAt(t *kernel.Task, dirfd int32, addr uintptr, mode uint32, flags, allowed int32) (uintptr, error) {
	vd, err := attrTarget(t, dirfd, addr, flags, allowed)
	if err != nil {
		return 0, err
	}
	return 0, fs.Chmod(t, vd, mode)
}

// Chmod implements chmod(2).
func Chmod(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return chmodAt(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint(), 0, 0)
}

// Fchmod implements fchmod(2).
func Fchmod(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := attrFD(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	return 0, fs.Chmod(t, vd, a[1].Uint())
}

// Fchmodat implements fchmodat(2) (no flags argument).
func Fchmodat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return chmodAt(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), 0, 0)
}

// Fchmodat2 implements fchmodat2(2).
func Fchmodat2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return chmodAt(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Int(), unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH)
}

// chown maps chown's ids from the caller's user namespace to global ones
// (EINVAL for one it does not map; -1 stays "unchanged") and changes vd's
// owner.
func chown(t *kernel.Task, vd fs.VirtualDentry, uid, gid uint32) error {
	ns := t.UserNamespace()
	if uid != fs.NoID {
		k, ok := ns.MapToKUID(uid)
		if !ok {
			return unix.EINVAL
		}
		uid = uint32(k)
	}
	if gid != fs.NoID {
		k, ok := ns.MapToKGID(gid)
		if !ok {
			return unix.EINVAL
		}
		gid = uint32(k)
	}
	return fs.Chown(t, vd, uid, gid)
}

func chownAt(t *kernel.Task, dirfd int32, addr uintptr, uid, gid uint32, flags, allowed int32) (uintptr, error) {
	vd, err := attrTarget(t, dirfd, addr, flags, allowed)
	if err != nil {
		return 0, err
	}
	return 0, chown(t, vd, uid, gid)
}

// Chown implements chown(2).
func Chown(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return chownAt(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint(), a[2].Uint(), 0, 0)
}

// Lchown implements lchown(2).
func Lchown(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return chownAt(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint(), a[2].Uint(), unix.AT_SYMLINK_NOFOLLOW, unix.AT_SYMLINK_NOFOLLOW)
}

// Fchown implements fchown(2).
func Fchown(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := attrFD(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	return 0, chown(t, vd, a[1].Uint(), a[2].Uint())
}

// Fchownat implements fchownat(2).
func Fchownat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return chownAt(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Uint(), a[4].Int(), unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH)
}

// utimesAt sets the times of the file named by dirfd and path (or dirfd
// itself when pathAddr is 0); times nil means now.
func utimesAt(t *kernel.Task, dirfd int32, pathAddr uintptr, times *[2]unix.Timespec, flags int32) (uintptr, error) {
	var vd fs.VirtualDentry
	var err error
	// Linux's do_utimes: a NULL path names dirfd's own file, but with
	// AT_FDCWD it is read as a path (EFAULT).
	if pathAddr == 0 && dirfd != unix.AT_FDCWD {
		vd, err = attrFD(t, dirfd)
	} else {
		vd, err = attrTarget(t, dirfd, pathAddr, flags, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH)
	}
	if err != nil {
		return 0, err
	}
	return 0, fs.Utimes(t, vd, times)
}

// Utimensat implements utimensat(2).
func Utimensat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	dirfd, pathAddr, timesAddr, flags := a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Int()
	var times *[2]unix.Timespec
	if timesAddr != 0 {
		times = new([2]unix.Timespec)
		for i := range times {
			ts, err := copyInTimespec(t, timesAddr+uintptr(16*i))
			if err != nil {
				return 0, unix.EFAULT
			}
			if ts.Nsec != unix.UTIME_NOW && ts.Nsec != unix.UTIME_OMIT && (ts.Nsec < 0 || ts.Nsec >= 1e9) {
				return 0, unix.EINVAL
			}
			times[i] = unix.Timespec{Sec: ts.Sec, Nsec: ts.Nsec}
		}
		if times[0].Nsec == unix.UTIME_OMIT && times[1].Nsec == unix.UTIME_OMIT {
			if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
				return 0, unix.EINVAL
			}
			return 0, nil
		}
	}
	if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	if pathAddr == 0 {
		if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
			return 0, unix.EINVAL
		}
		if dirfd == unix.AT_FDCWD {
			return 0, unix.EFAULT
		}
	}
	return utimesAt(t, dirfd, pathAddr, times, flags)
}

// Utime implements utime(2).
func Utime(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	var times *[2]unix.Timespec
	if a[1].Pointer() != 0 {
		var b [16]byte
		if _, err := t.CopyInBytes(a[1].Pointer(), b[:]); err != nil {
			return 0, unix.EFAULT
		}
		times = &[2]unix.Timespec{
			{Sec: int64(binary.LittleEndian.Uint64(b[0:]))},
			{Sec: int64(binary.LittleEndian.Uint64(b[8:]))},
		}
	}
	return utimesAt(t, unix.AT_FDCWD, a[0].Pointer(), times, 0)
}

// Utimes implements utimes(2).
func Utimes(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return futimesat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Pointer())
}

// Futimesat implements futimesat(2).
func Futimesat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return futimesat(t, a[0].Int(), a[1].Pointer(), a[2].Pointer())
}

func futimesat(t *kernel.Task, dirfd int32, pathAddr, timesAddr uintptr) (uintptr, error) {
	var times *[2]unix.Timespec
	if timesAddr != 0 {
		times = new([2]unix.Timespec)
		for i := range times {
			tv, err := copyInTimeval(t, timesAddr+uintptr(16*i))
			if err != nil {
				return 0, unix.EFAULT
			}
			if tv.Usec < 0 || tv.Usec >= 1e6 {
				return 0, unix.EINVAL
			}
			times[i] = unix.Timespec{Sec: tv.Sec, Nsec: tv.Usec * 1000}
		}
	}
	return utimesAt(t, dirfd, pathAddr, times, 0)
}

// fsizeLimit checks size against RLIMIT_FSIZE: beyond it the task gets
// SIGXFSZ and the call EFBIG.
func fsizeLimit(t *kernel.Task, size int64) error {
	lim := t.ThreadGroup().Limits().Get(unix.RLIMIT_FSIZE).Cur
	if lim != unix.RLIM_INFINITY && uint64(size) > lim {
		t.SendSignal(kernel.NewSignalInfo(kernel.SIGXFSZ, kernel.SI_USER))
		return unix.EFBIG
	}
	return nil
}

// Truncate implements truncate(2).
func Truncate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	size := a[1].Int64()
	if size < 0 {
		return 0, unix.EINVAL
	}
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	st, err := vd.Stat(t)
	if err != nil {
		return 0, err
	}
	if st.IsRegular() && !vd.Mount.ReadOnly() && size > st.Size {
		if err := fsizeLimit(t, size); err != nil {
			return 0, err
		}
	}
	return 0, fs.Truncate(t, vd, size)
}

// Ftruncate implements ftruncate(2).
func Ftruncate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	size := a[1].Int64()
	if size < 0 {
		return 0, unix.EINVAL
	}
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	st, err := f.Stat(t)
	if err != nil {
		return 0, err
	}
	if st.IsRegular() && f.Writable() && size > st.Size {
		if err := fsizeLimit(t, size); err != nil {
			return 0, err
		}
	}
	return 0, fs.Ftruncate(t, f, size)
}

// Fallocate implements fallocate(2).
func Fallocate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	mode, off, length := a[1].Uint(), a[2].Int64(), a[3].Int64()
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if off >= 0 && length > 0 && mode&unix.FALLOC_FL_KEEP_SIZE == 0 && f.Writable() {
		if st, err := f.Stat(t); err == nil && st.IsRegular() && off+length > st.Size {
			if err := fsizeLimit(t, off+length); err != nil {
				return 0, err
			}
		}
	}
	return 0, fs.Fallocate(t, f, mode, off, length)
}

// vfsFsync is fsync and fdatasync.
func vfsFsync(t *kernel.Task, fd int32, dataOnly bool) (uintptr, error) {
	f, err := vfsIOFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return 0, fs.Fsync(t, f, dataOnly)
}

// Fsync implements fsync(2).
func Fsync(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return vfsFsync(t, a[0].Int(), false)
}

// Fdatasync implements fdatasync(2).
func Fdatasync(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return vfsFsync(t, a[0].Int(), true)
}

// SyncFileRange implements sync_file_range(2): it checks its arguments
// and flushes the whole file's data.
func SyncFileRange(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	off, n, flags := a[1].Int64(), a[2].Int64(), a[3].Uint()
	const valid = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	if flags&^valid != 0 || off < 0 || n < 0 || off+n < 0 {
		return 0, unix.EINVAL
	}
	f, err := vfsFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if f.IsPath() {
		return 0, unix.EBADF
	}
	st, err := f.Stat(t)
	if err != nil {
		return 0, err
	}
	if !st.IsRegular() && !st.IsDir() && !st.IsSymlink() && st.Type() != unix.S_IFBLK {
		return 0, unix.ESPIPE
	}
	if flags&unix.SYNC_FILE_RANGE_WRITE != 0 {
		return 0, fs.Fsync(t, f, true)
	}
	return 0, nil
}

// Sync implements sync(2): every mounted file system with data to flush
// is synced; errors are not reported, as on Linux.
func Sync(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	root := t.FSContext().Root()
	if root.Mount == nil {
		return 0, nil
	}
	for _, m := range root.Mount.Namespace().Mounts() {
		if s, ok := m.Filesystem().Impl().(fs.FilesystemSyncer); ok {
			s.SyncFS(t)
		}
	}
	return 0, nil
}

// Syncfs implements syncfs(2).
func Syncfs(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return 0, fs.SyncFS(t, f)
}
