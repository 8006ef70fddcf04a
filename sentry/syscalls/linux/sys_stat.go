package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// marshalStat encodes struct stat (amd64, 144 bytes).
func marshalStat(st *fs.Stat) []byte {
	b := make([]byte, 144)
	le := binary.LittleEndian
	le.PutUint64(b[0:], st.Dev)
	le.PutUint64(b[8:], st.Ino)
	le.PutUint64(b[16:], uint64(st.Nlink))
	le.PutUint32(b[24:], st.Mode)
	le.PutUint32(b[28:], uint32(st.UID))
	le.PutUint32(b[32:], uint32(st.GID))
	le.PutUint64(b[40:], st.Rdev)
	le.PutUint64(b[48:], uint64(st.Size))
	le.PutUint64(b[56:], uint64(st.Blksize))
	le.PutUint64(b[64:], uint64(st.Blocks))
	for i, ts := range []unix.Timespec{st.Atime, st.Mtime, st.Ctime} {
		le.PutUint64(b[72+16*i:], uint64(ts.Sec))
		le.PutUint64(b[80+16*i:], uint64(ts.Nsec))
	}
	return b
}

// statxBasic is what every node here fills in.
const statxBasic = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_NLINK | unix.STATX_UID | unix.STATX_GID |
	unix.STATX_ATIME | unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_BLOCKS

// marshalStatx encodes struct statx (256 bytes).
func marshalStatx(st *fs.Stat, mntID int) []byte {
	b := make([]byte, 256)
	le := binary.LittleEndian
	mask := uint32(statxBasic | unix.STATX_MNT_ID)
	if st.HasBtime {
		mask |= unix.STATX_BTIME
	}
	le.PutUint32(b[0:], mask)
	le.PutUint32(b[4:], st.Blksize)
	le.PutUint32(b[16:], st.Nlink)
	le.PutUint32(b[20:], uint32(st.UID))
	le.PutUint32(b[24:], uint32(st.GID))
	le.PutUint16(b[28:], uint16(st.Mode))
	le.PutUint64(b[32:], st.Ino)
	le.PutUint64(b[40:], uint64(st.Size))
	le.PutUint64(b[48:], uint64(st.Blocks))
	for off, ts := range map[int]unix.Timespec{64: st.Atime, 80: st.Btime, 96: st.Ctime, 112: st.Mtime} {
		le.PutUint64(b[off:], uint64(ts.Sec))
		le.PutUint32(b[off+8:], uint32(ts.Nsec))
	}
	le.PutUint32(b[128:], unix.Major(st.Rdev))
	le.PutUint32(b[132:], unix.Minor(st.Rdev))
	le.PutUint32(b[136:], unix.Major(st.Dev))
	le.PutUint32(b[140:], unix.Minor(st.Dev))
	le.PutUint64(b[144:], uint64(mntID))
	return b
}

// statIDsForCaller rewrites st's owner as the caller's user namespace
// names it: the overflow id for one it does not map.
func statIDsForCaller(t *kernel.Task, st *fs.Stat) {
	if ns := t.UserNamespace(); !ns.IsInitial() {
		st.UID, st.GID = auth.KUID(ns.UIDOf(st.UID)), auth.KGID(ns.GIDOf(st.GID))
	}
}

func copyOutStat(t *kernel.Task, addr uintptr, vd fs.VirtualDentry) (uintptr, error) {
	st, err := vd.Stat(t)
	if err != nil {
		return 0, err
	}
	statIDsForCaller(t, &st)
	if _, err := t.CopyOutBytes(addr, marshalStat(&st)); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// Stat implements stat(2).
func Stat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	return copyOutStat(t, a[1].Pointer(), vd)
}

// Lstat implements lstat(2).
func Lstat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, false)
	if err != nil {
		return 0, err
	}
	return copyOutStat(t, a[1].Pointer(), vd)
}

// Fstat implements fstat(2).
func Fstat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return copyOutStat(t, a[1].Pointer(), f.VirtualDentry())
}

// Newfstatat implements newfstatat(2).
func Newfstatat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[3].Int()
	if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	var vd fs.VirtualDentry
	var err error
	if a[1].Pointer() == 0 && flags&unix.AT_EMPTY_PATH != 0 {
		vd, err = startDir(t, a[0].Int(), "", true)
	} else {
		vd, err = vfsResolve(t, a[0].Int(), a[1].Pointer(), flags&unix.AT_EMPTY_PATH != 0, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
	}
	if err != nil {
		return 0, err
	}
	return copyOutStat(t, a[2].Pointer(), vd)
}

// Statx implements statx(2).
func Statx(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	dirfd, pathAddr, flags, mask, addr := a[0].Int(), a[1].Pointer(), a[2].Int(), a[3].Uint(), a[4].Pointer()
	if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT|unix.AT_EMPTY_PATH|atStatxSyncType) != 0 ||
		flags&atStatxSyncType == atStatxSyncType || mask&unix.STATX__RESERVED != 0 {
		return 0, unix.EINVAL
	}
	var vd fs.VirtualDentry
	var err error
	if pathAddr == 0 && flags&unix.AT_EMPTY_PATH != 0 {
		vd, err = startDir(t, dirfd, "", true)
	} else {
		vd, err = vfsResolve(t, dirfd, pathAddr, flags&unix.AT_EMPTY_PATH != 0, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
	}
	if err != nil {
		return 0, err
	}
	st, err := vd.Stat(t)
	if err != nil {
		return 0, err
	}
	mnt := 0
	if vd.Mount != nil {
		mnt = vd.Mount.ID()
	}
	statIDsForCaller(t, &st)
	if _, err := t.CopyOutBytes(addr, marshalStatx(&st, mnt)); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// marshalStatfs encodes struct statfs (amd64, 120 bytes) for the mount m.
func marshalStatfs(s *fs.StatFS, m *fs.Mount) []byte {
	flags := s.Flags
	if m != nil {
		mf := m.Flags()
		if m.ReadOnly() {
			flags |= unix.ST_RDONLY
		}
		if mf.NoSUID {
			flags |= unix.ST_NOSUID
		}
		if mf.NoDev {
			flags |= unix.ST_NODEV
		}
		if mf.NoExec {
			flags |= unix.ST_NOEXEC
		}
		// Mounts are relatime unless told otherwise (Linux's default
		// for mount(2); internal mounts of anonymous files are not).
		flags |= unix.ST_RELATIME
	}
	flags |= 0x20 // ST_VALID: f_flags is meaningful
	b := make([]byte, 120)
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(s.Type))
	le.PutUint64(b[8:], uint64(s.Bsize))
	le.PutUint64(b[16:], s.Blocks)
	le.PutUint64(b[24:], s.Bfree)
	le.PutUint64(b[32:], s.Bavail)
	le.PutUint64(b[40:], s.Files)
	le.PutUint64(b[48:], s.Ffree)
	le.PutUint64(b[64:], uint64(s.NameLen))
	frsize := s.Frsize
	if frsize == 0 {
		frsize = s.Bsize
	}
	le.PutUint64(b[72:], uint64(frsize))
	le.PutUint64(b[80:], uint64(flags))
	return b
}

func copyOutStatfs(t *kernel.Task, addr uintptr, vd fs.VirtualDentry) (uintptr, error) {
	s, err := vd.Dentry.Filesystem().Impl().StatFS(t)
	if err != nil {
		return 0, err
	}
	if _, err := t.CopyOutBytes(addr, marshalStatfs(&s, vd.Mount)); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// Statfs implements statfs(2).
func Statfs(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	return copyOutStatfs(t, a[1].Pointer(), vd)
}

// Fstatfs implements fstatfs(2).
func Fstatfs(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return copyOutStatfs(t, a[1].Pointer(), f.VirtualDentry())
}

// accessContext is the task with the credentials access(2) checks with.
type accessContext struct {
	*kernel.Task
	creds *auth.Credentials
}

// Credentials implements fs.Context.
func (c accessContext) Credentials() *auth.Credentials { return c.creds }

func faccessat(t *kernel.Task, dirfd int32, pathAddr uintptr, mode uint32, flags int32) (uintptr, error) {
	if mode&^7 != 0 {
		return 0, unix.EINVAL
	}
	if flags&^(unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	var ctx fs.Context = t
	if flags&unix.AT_EACCESS == 0 {
		c := t.Credentials().Fork()
		c.FilesystemUID, c.FilesystemGID = c.RealUID, c.RealGID
		if c.RealUID != c.UserNamespace.RootKUID() {
			c.EffectiveCaps = 0
		} else {
			c.EffectiveCaps = c.PermittedCaps
		}
		ctx = accessContext{Task: t, creds: c}
	}
	p, err := t.CopyInPath(pathAddr)
	if err != nil {
		return 0, err
	}
	l, err := vfsLookup(t, dirfd, p, flags&unix.AT_EMPTY_PATH != 0, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
	if err != nil {
		return 0, err
	}
	vd, err := fs.Resolve(ctx, &l)
	if err != nil {
		return 0, err
	}
	if mode == 0 {
		return 0, nil
	}
	ats := 0
	if mode&unix.R_OK != 0 {
		ats |= fs.MayRead
	}
	if mode&unix.W_OK != 0 {
		ats |= fs.MayWrite
	}
	if mode&unix.X_OK != 0 {
		ats |= fs.MayExec
	}
	return 0, fs.MayAccess(ctx, vd, ats)
}

// Access implements access(2).
func Access(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return faccessat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint(), 0)
}

// Faccessat implements faccessat(2) (no flags argument).
func Faccessat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return faccessat(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), 0)
}

// Faccessat2 implements faccessat2(2).
func Faccessat2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return faccessat(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Int())
}

func readlinkat(t *kernel.Task, dirfd int32, pathAddr, buf uintptr, size int32) (uintptr, error) {
	if size <= 0 {
		return 0, unix.EINVAL
	}
	vd, err := vfsResolve(t, dirfd, pathAddr, true, false)
	if err != nil {
		return 0, err
	}
	l, ok := vd.Dentry.Node().(fs.SymlinkNode)
	if !ok {
		if p, _ := t.CopyInPath(pathAddr); p == "" {
			return 0, unix.ENOENT
		}
		return 0, unix.EINVAL
	}
	target, err := l.Readlink(t)
	if err != nil {
		return 0, err
	}
	b := []byte(target)
	if len(b) > int(size) {
		b = b[:size]
	}
	if _, err := t.CopyOutBytes(buf, b); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(len(b)), nil
}

// Readlink implements readlink(2).
func Readlink(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return readlinkat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Pointer(), a[2].Int())
}

// Readlinkat implements readlinkat(2).
func Readlinkat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return readlinkat(t, a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Int())
}

// atStatxSyncType is AT_STATX_SYNC_TYPE.
const atStatxSyncType = 0x6000
