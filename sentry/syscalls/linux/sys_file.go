package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// vfsFile returns the file open at fd with a reference, or EBADF.
func vfsFile(t *kernel.Task, fd int32) (*fs.FileDescription, error) {
	f := t.FDTable().GetFile(fd)
	if f == nil {
		return nil, unix.EBADF
	}
	return f, nil
}

// vfsIOFile is vfsFile refusing O_PATH descriptions with EBADF, as every
// I/O syscall does.
func vfsIOFile(t *kernel.Task, fd int32) (*fs.FileDescription, error) {
	f, err := vfsFile(t, fd)
	if err != nil {
		return nil, err
	}
	if f.IsPath() {
		f.DecRef()
		return nil, unix.EBADF
	}
	return f, nil
}

// vfsNoFile returns RLIMIT_NOFILE's soft limit.
func vfsNoFile(t *kernel.Task) uint64 {
	return t.ThreadGroup().Limits().Get(unix.RLIMIT_NOFILE).Cur
}

// vfsLookup builds the resolution of path relative to dirfd.
func vfsLookup(t *kernel.Task, dirfd int32, path string, emptyPath, follow bool) (fs.Lookup, error) {
	if path == "" && !emptyPath {
		return fs.Lookup{}, unix.ENOENT
	}
	start, err := startDir(t, dirfd, path, emptyPath)
	if err != nil {
		return fs.Lookup{}, err
	}
	return fs.Lookup{
		Root:        t.FSContext().Root(),
		Start:       start,
		Path:        path,
		FollowFinal: follow,
		EmptyPath:   emptyPath,
	}, nil
}

// vfsResolve copies in the path at addr and resolves it relative to dirfd.
func vfsResolve(t *kernel.Task, dirfd int32, addr uintptr, emptyPath, follow bool) (fs.VirtualDentry, error) {
	p, err := t.CopyInPath(addr)
	if err != nil {
		return fs.VirtualDentry{}, err
	}
	l, err := vfsLookup(t, dirfd, p, emptyPath, follow)
	if err != nil {
		return fs.VirtualDentry{}, err
	}
	return fs.Resolve(t, &l)
}

// vfsLookupAt copies in the path at addr and builds its lookup.
func vfsLookupAt(t *kernel.Task, dirfd int32, addr uintptr) (fs.Lookup, error) {
	p, err := t.CopyInPath(addr)
	if err != nil {
		return fs.Lookup{}, err
	}
	return vfsLookup(t, dirfd, p, false, false)
}

// Flags open(2) knows; others are ignored by open and refused by openat2.
const (
	oTmpfileBit     = 0o20000000 // __O_TMPFILE
	validOpenFlags  = unix.O_ACCMODE | unix.O_CREAT | unix.O_EXCL | unix.O_NOCTTY | unix.O_TRUNC | unix.O_APPEND | unix.O_NONBLOCK | unix.O_DSYNC | unix.O_ASYNC | unix.O_DIRECT | fs.OLargeFile | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NOATIME | unix.O_CLOEXEC | unix.O_SYNC | unix.O_PATH | oTmpfileBit
	oPathFlags      = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	validResolveAll = unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_IN_ROOT | resolveCached
)

// openat is the common part of the open family.
func openat(t *kernel.Task, dirfd int32, pathAddr uintptr, flags uint32, mode uint32, resolve uint64) (uintptr, error) {
	p, err := t.CopyInPath(pathAddr)
	if err != nil {
		return 0, err
	}
	if flags&oTmpfileBit != 0 {
		if flags&(unix.O_TMPFILE|unix.O_CREAT) != unix.O_TMPFILE {
			return 0, unix.EINVAL
		}
	}
	if flags&(unix.O_PATH|oTmpfileBit) == 0 && flags&(unix.O_CREAT|unix.O_DIRECTORY) == unix.O_CREAT|unix.O_DIRECTORY {
		// Linux 6.4 and later: O_CREAT|O_DIRECTORY never creates.
		return 0, unix.EINVAL
	}
	l, err := vfsLookup(t, dirfd, p, false, false)
	if err != nil {
		return 0, err
	}
	if resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) != 0 && len(p) > 0 && p[0] == '/' {
		// Scoped resolutions start at dirfd even for absolute paths:
		// the path walker then refuses them (BENEATH) or resolves them
		// from dirfd as the root (IN_ROOT).
		if l.Start, err = startDir(t, dirfd, ".", false); err != nil {
			return 0, err
		}
	}
	l.Resolve = resolve
	f, err := fs.Open(t, l, fs.OpenOptions{Flags: flags, Mode: umasked(t, mode)})
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&unix.O_CLOEXEC != 0}, vfsNoFile(t))
	if err != nil {
		return 0, err
	}
	return uintptr(fd), nil
}

// Open implements open(2).
func Open(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return openat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint(), a[2].Uint(), 0)
}

// Openat implements openat(2).
func Openat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return openat(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Uint(), 0)
}

// Creat implements creat(2).
func Creat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return openat(t, unix.AT_FDCWD, a[0].Pointer(), unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, a[1].Uint(), 0)
}

// Openat2 implements openat2(2).
func Openat2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	dirfd, pathAddr, howAddr, size := a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Uint64()
	const howSize = 24
	if size < howSize {
		return 0, unix.EINVAL
	}
	if size > arch.PageSize {
		return 0, unix.E2BIG
	}
	buf := make([]byte, size)
	if _, err := t.CopyInBytes(howAddr, buf); err != nil {
		return 0, unix.EFAULT
	}
	for _, b := range buf[howSize:] {
		if b != 0 {
			return 0, unix.E2BIG
		}
	}
	flags := binary.LittleEndian.Uint64(buf[0:])
	mode := binary.LittleEndian.Uint64(buf[8:])
	resolve := binary.LittleEndian.Uint64(buf[16:])
	if flags&^uint64(validOpenFlags) != 0 || resolve&^uint64(validResolveAll) != 0 {
		return 0, unix.EINVAL
	}
	if flags&(unix.O_CREAT|oTmpfileBit) != 0 {
		if mode&^0o7777 != 0 {
			return 0, unix.EINVAL
		}
	} else if mode != 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.O_PATH != 0 && flags&^uint64(oPathFlags) != 0 {
		return 0, unix.EINVAL
	}
	if resolve&unix.RESOLVE_BENEATH != 0 && resolve&unix.RESOLVE_IN_ROOT != 0 {
		return 0, unix.EINVAL
	}
	if resolve&resolveCached != 0 && flags&(unix.O_TRUNC|unix.O_CREAT|oTmpfileBit) != 0 {
		return 0, unix.EAGAIN
	}
	return openat(t, dirfd, pathAddr, uint32(flags), uint32(mode), resolve)
}

// Close implements close(2). The process's record locks on the file go
// with any descriptor of it.
func Close(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd := a[0].Int()
	if f := t.FDTable().GetFile(fd); f != nil {
		fs.ReleasePOSIXLocks(t, f, t.ThreadGroup())
		mqFlush(t, f)
		f.DecRef()
	}
	return 0, t.FDTable().Remove(fd)
}

// CloseRange implements close_range(2). CLOSE_RANGE_UNSHARE closes in the
// shared table (the kernel does not unshare it here).
func CloseRange(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	first, last, flags := a[0].Uint(), a[1].Uint(), a[2].Uint()
	if flags&^uint32(unix.CLOSE_RANGE_CLOEXEC|unix.CLOSE_RANGE_UNSHARE) != 0 || first > last {
		return 0, unix.EINVAL
	}
	t.FDTable().RemoveRange(first, last, flags&unix.CLOSE_RANGE_CLOEXEC != 0)
	return 0, nil
}

// Dup implements dup(2).
func Dup(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{}, vfsNoFile(t))
	return uintptr(fd), err
}

// Dup2 implements dup2(2).
func Dup2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	oldfd, newfd := a[0].Int(), a[1].Int()
	if oldfd == newfd {
		f, err := vfsFile(t, oldfd)
		if err != nil {
			return 0, err
		}
		f.DecRef()
		return uintptr(newfd), nil
	}
	return dup3(t, oldfd, newfd, 0)
}

// Dup3 implements dup3(2).
func Dup3(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	oldfd, newfd, flags := a[0].Int(), a[1].Int(), a[2].Uint()
	if flags&^unix.O_CLOEXEC != 0 || oldfd == newfd {
		return 0, unix.EINVAL
	}
	return dup3(t, oldfd, newfd, flags)
}

func dup3(t *kernel.Task, oldfd, newfd int32, flags uint32) (uintptr, error) {
	f, err := vfsFile(t, oldfd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if err := t.FDTable().NewFDAt(newfd, f, fs.FDFlags{CloseOnExec: flags&unix.O_CLOEXEC != 0}, vfsNoFile(t)); err != nil {
		return 0, err
	}
	return uintptr(newfd), nil
}

// Fcntl implements fcntl(2): descriptor flags, status flags (O_ASYNC
// turns signal-driven I/O on), dup, pipe sizes, record locks, seals,
// owners and signals of signal-driven I/O (sys_fasync.go). Leases and
// F_NOTIFY are not implemented.
func Fcntl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, cmd, arg := a[0].Int(), a[1].Int(), a[2]
	f, fl, ok := t.FDTable().Get(fd)
	if !ok {
		return 0, unix.EBADF
	}
	defer f.DecRef()
	switch cmd {
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		min := arg.Int()
		limit := vfsNoFile(t)
		if min < 0 || uint64(min) >= limit {
			return 0, unix.EINVAL
		}
		nfd, err := t.FDTable().NewFD(min, f, fs.FDFlags{CloseOnExec: cmd == unix.F_DUPFD_CLOEXEC}, limit)
		return uintptr(nfd), err
	case unix.F_GETFD:
		if fl.CloseOnExec {
			return unix.FD_CLOEXEC, nil
		}
		return 0, nil
	case unix.F_SETFD:
		return 0, t.FDTable().SetFlags(fd, fs.FDFlags{CloseOnExec: arg.Int()&unix.FD_CLOEXEC != 0})
	case unix.F_GETFL:
		return uintptr(f.Flags()), nil
	}
	if f.IsPath() {
		return 0, unix.EBADF
	}
	switch cmd {
	case unix.F_SETFL:
		nf := arg.Uint()
		if nf&unix.O_NOATIME != 0 && f.Flags()&unix.O_NOATIME == 0 {
			st, err := f.Stat(t)
			if err != nil {
				return 0, err
			}
			c := t.Credentials()
			if c.FilesystemUID != st.UID && !c.HasCapability(unix.CAP_FOWNER) {
				return 0, unix.EPERM
			}
		}
		// O_ASYNC stays off for file kinds without signal-driven I/O,
		// as Linux sets it only through their ->fasync.
		if !f.SupportsAsync() {
			nf &^= unix.O_ASYNC
		} else if (nf^f.Flags())&unix.O_ASYNC != 0 {
			f.SetAsync(nf&unix.O_ASYNC != 0, fd)
		}
		f.SetStatusFlags(nf)
		return 0, nil
	case unix.F_SETOWN, unix.F_GETOWN, unix.F_SETOWN_EX, unix.F_GETOWN_EX, unix.F_SETSIG, unix.F_GETSIG:
		return fcntlOwner(t, f, cmd, arg.Pointer())
	case unix.F_GETPIPE_SZ:
		s, ok := f.Impl().(pipe.Sizer)
		if !ok {
			return 0, unix.EBADF
		}
		return uintptr(s.PipeSize()), nil
	case unix.F_SETPIPE_SZ:
		s, ok := f.Impl().(pipe.Sizer)
		if !ok {
			return 0, unix.EBADF
		}
		n, err := s.SetPipeSize(t, int64(arg.Uint()))
		return uintptr(n), err
	case unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
		return fcntlLock(t, f, cmd, arg.Pointer())
	case unix.F_ADD_SEALS, unix.F_GET_SEALS:
		// Seals of memfds and tmpfs files (sys_memfd.go).
		return fcntlSeals(f, cmd, int(arg.Int()))
	}
	t.Log().Info("fcntl: command not implemented", "cmd", cmd)
	return 0, unix.EINVAL
}

// flockSize is sizeof(struct flock) on amd64.
const flockSize = 32

// fcntlLock serves the record-lock commands of fcntl.
func fcntlLock(t *kernel.Task, f *fs.FileDescription, cmd int32, addr uintptr) (uintptr, error) {
	b := make([]byte, flockSize)
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return 0, unix.EFAULT
	}
	le := binary.LittleEndian
	typ, whence := int16(le.Uint16(b[0:])), int16(le.Uint16(b[2:]))
	lstart, llen, lpid := int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), int32(le.Uint32(b[24:]))
	ofd := cmd == unix.F_OFD_GETLK || cmd == unix.F_OFD_SETLK || cmd == unix.F_OFD_SETLKW
	if ofd && lpid != 0 {
		return 0, unix.EINVAL
	}
	if typ != fs.ReadLock && typ != fs.WriteLock && typ != fs.Unlock {
		return 0, unix.EINVAL
	}
	var base int64
	switch whence {
	case unix.SEEK_SET:
	case unix.SEEK_CUR:
		base = f.Offset()
	case unix.SEEK_END:
		st, err := f.Stat(t)
		if err != nil {
			return 0, err
		}
		base = st.Size
	default:
		return 0, unix.EINVAL
	}
	start := base + lstart
	if start < 0 {
		return 0, unix.EINVAL
	}
	end := fs.LockEOF
	switch {
	case llen > 0:
		if start+llen < start {
			return 0, unix.EOVERFLOW
		}
		end = uint64(start + llen)
	case llen < 0:
		end = uint64(start)
		start += llen
		if start < 0 {
			return 0, unix.EINVAL
		}
	}
	var owner any = t.ThreadGroup()
	pid := t.ThreadGroupID()
	if ofd {
		owner, pid = f, -1
	}
	if cmd == unix.F_GETLK || cmd == unix.F_OFD_GETLK {
		if typ == fs.Unlock {
			return 0, unix.EINVAL
		}
		l, found, err := fs.TestPOSIXLock(t, f, owner, typ, uint64(start), end)
		if err != nil {
			return 0, err
		}
		out := make([]byte, flockSize)
		le.PutUint16(out[0:], uint16(int16(fs.Unlock)))
		if found {
			le.PutUint16(out[0:], uint16(l.Type))
			le.PutUint64(out[8:], l.Start)
			if l.End != fs.LockEOF {
				le.PutUint64(out[16:], l.End-l.Start)
			}
			pid := l.PID
			if tg, ok := l.Owner().(*kernel.ThreadGroup); ok {
				// The holder's pid as the caller's namespace sees it.
				pid = int32(t.PIDNamespace().IDOfThreadGroup(tg))
			}
			le.PutUint32(out[24:], uint32(pid))
		} else {
			copy(out[2:], b[2:])
		}
		if _, err := t.CopyOutBytes(addr, out); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil
	}
	if (typ == fs.ReadLock && !f.Readable()) || (typ == fs.WriteLock && !f.Writable()) {
		return 0, unix.EBADF
	}
	wait := cmd == unix.F_SETLKW || cmd == unix.F_OFD_SETLKW
	if err := fs.SetPOSIXLock(t, f, owner, pid, typ, uint64(start), end, wait); err != nil {
		return 0, vfsIOErr(err)
	}
	return 0, nil
}

// Flock implements flock(2).
func Flock(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	op := a[1].Int()
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	var typ int16
	switch op &^ unix.LOCK_NB {
	case unix.LOCK_SH:
		typ = fs.ReadLock
	case unix.LOCK_EX:
		typ = fs.WriteLock
	case unix.LOCK_UN:
		typ = fs.Unlock
	default:
		return 0, unix.EINVAL
	}
	if err := fs.Flock(t, f, typ, op&unix.LOCK_NB == 0); err != nil {
		return 0, vfsIOErr(err)
	}
	return 0, nil
}

// Getcwd implements getcwd(2).
func Getcwd(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, size := a[0].Pointer(), a[1].Uint64()
	root, cwd := t.FSContext().RootAndCwd()
	if cwd.Dentry.IsDead() {
		return 0, unix.ENOENT
	}
	p, reachable := fs.PathOf(root, cwd)
	if !reachable {
		p = "(unreachable)" + p
	}
	b := append([]byte(p), 0)
	if uint64(len(b)) > size {
		return 0, unix.ERANGE
	}
	if _, err := t.CopyOutBytes(addr, b); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(len(b)), nil
}

// vfsCheckDir checks that vd is a directory the task may search (chdir,
// fchdir, chroot).
func vfsCheckDir(t *kernel.Task, vd fs.VirtualDentry) error {
	st, err := vd.Stat(t)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return unix.ENOTDIR
	}
	return fs.CheckPermission(t.Credentials(), &st, fs.MayExec)
}

// Chdir implements chdir(2).
func Chdir(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	if err := vfsCheckDir(t, vd); err != nil {
		return 0, err
	}
	t.FSContext().SetCwd(vd)
	return 0, nil
}

// Fchdir implements fchdir(2).
func Fchdir(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	vd := f.VirtualDentry()
	if vd.Mount == nil {
		return 0, unix.ENOTDIR
	}
	if err := vfsCheckDir(t, vd); err != nil {
		return 0, err
	}
	t.FSContext().SetCwd(vd)
	return 0, nil
}

// Chroot implements chroot(2).
func Chroot(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	if err := vfsCheckDir(t, vd); err != nil {
		return 0, err
	}
	// CAP_SYS_CHROOT in the caller's own user namespace, as Linux.
	if !t.Credentials().HasOwnCapability(unix.CAP_SYS_CHROOT) {
		return 0, unix.EPERM
	}
	t.FSContext().SetRoot(vd)
	return 0, nil
}

// Umask implements umask(2).
func Umask(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.FSContext().SwapUmask(a[0].Uint())), nil
}

// umasked applies the task's umask to a creation mode.
func umasked(t *kernel.Task, mode uint32) uint32 {
	return mode &^ t.FSContext().Umask()
}

// mkdirat is mkdir and mkdirat.
func mkdirat(t *kernel.Task, dirfd int32, addr uintptr, mode uint32) (uintptr, error) {
	l, err := vfsLookupAt(t, dirfd, addr)
	if err != nil {
		return 0, err
	}
	return 0, fs.Mkdir(t, &l, umasked(t, mode))
}

// Mkdir implements mkdir(2).
func Mkdir(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return mkdirat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint())
}

// Mkdirat implements mkdirat(2).
func Mkdirat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return mkdirat(t, a[0].Int(), a[1].Pointer(), a[2].Uint())
}

func mknodat(t *kernel.Task, dirfd int32, addr uintptr, mode uint32, dev uint32) (uintptr, error) {
	switch mode & unix.S_IFMT {
	case 0, unix.S_IFREG, unix.S_IFCHR, unix.S_IFBLK, unix.S_IFIFO, unix.S_IFSOCK:
	case unix.S_IFDIR:
		return 0, unix.EPERM
	default:
		return 0, unix.EINVAL
	}
	l, err := vfsLookupAt(t, dirfd, addr)
	if err != nil {
		return 0, err
	}
	// dev is the kernel's old encoding: new_decode_dev.
	major := (dev & 0xfff00) >> 8
	minor := (dev & 0xff) | ((dev >> 12) & 0xfff00)
	return 0, fs.Mknod(t, &l, mode&unix.S_IFMT|umasked(t, mode&0o7777), unix.Mkdev(major, minor))
}

// Mknod implements mknod(2).
func Mknod(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return mknodat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Uint(), a[2].Uint())
}

// Mknodat implements mknodat(2).
func Mknodat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return mknodat(t, a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Uint())
}

func symlinkat(t *kernel.Task, targetAddr uintptr, dirfd int32, addr uintptr) (uintptr, error) {
	target, err := t.CopyInPath(targetAddr)
	if err != nil {
		return 0, err
	}
	if target == "" {
		return 0, unix.ENOENT
	}
	l, err := vfsLookupAt(t, dirfd, addr)
	if err != nil {
		return 0, err
	}
	return 0, fs.Symlink(t, &l, target)
}

// Symlink implements symlink(2).
func Symlink(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return symlinkat(t, a[0].Pointer(), unix.AT_FDCWD, a[1].Pointer())
}

// Symlinkat implements symlinkat(2).
func Symlinkat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return symlinkat(t, a[0].Pointer(), a[1].Int(), a[2].Pointer())
}

func linkat(t *kernel.Task, olddirfd int32, oldAddr uintptr, newdirfd int32, newAddr uintptr, flags int32) (uintptr, error) {
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.AT_EMPTY_PATH != 0 && !t.Credentials().HasCapability(unix.CAP_DAC_READ_SEARCH) {
		// Linux 6.10 and later: without the capability, only a file
		// the caller opened with its current credentials.
		if p, err := t.CopyInPath(oldAddr); err == nil && p == "" && olddirfd != unix.AT_FDCWD {
			f, err := vfsFile(t, olddirfd)
			if err != nil {
				return 0, err
			}
			same := f.Opener() == t.Credentials()
			f.DecRef()
			if !same {
				return 0, unix.ENOENT
			}
		}
	}
	old, err := vfsResolve(t, olddirfd, oldAddr, flags&unix.AT_EMPTY_PATH != 0, flags&unix.AT_SYMLINK_FOLLOW != 0)
	if err != nil {
		return 0, err
	}
	l, err := vfsLookupAt(t, newdirfd, newAddr)
	if err != nil {
		return 0, err
	}
	return 0, fs.Link(t, old, &l)
}

// Link implements link(2).
func Link(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return linkat(t, unix.AT_FDCWD, a[0].Pointer(), unix.AT_FDCWD, a[1].Pointer(), 0)
}

// Linkat implements linkat(2).
func Linkat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return linkat(t, a[0].Int(), a[1].Pointer(), a[2].Int(), a[3].Pointer(), a[4].Int())
}

func unlinkat(t *kernel.Task, dirfd int32, addr uintptr, rmdir bool) (uintptr, error) {
	l, err := vfsLookupAt(t, dirfd, addr)
	if err != nil {
		return 0, err
	}
	if rmdir {
		return 0, fs.Rmdir(t, &l)
	}
	return 0, fs.Unlink(t, &l)
}

// Unlink implements unlink(2).
func Unlink(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return unlinkat(t, unix.AT_FDCWD, a[0].Pointer(), false)
}

// Rmdir implements rmdir(2).
func Rmdir(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return unlinkat(t, unix.AT_FDCWD, a[0].Pointer(), true)
}

// Unlinkat implements unlinkat(2).
func Unlinkat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[2].Int()
	if flags&^unix.AT_REMOVEDIR != 0 {
		return 0, unix.EINVAL
	}
	return unlinkat(t, a[0].Int(), a[1].Pointer(), flags&unix.AT_REMOVEDIR != 0)
}

func renameat2(t *kernel.Task, olddirfd int32, oldAddr uintptr, newdirfd int32, newAddr uintptr, flags uint32) (uintptr, error) {
	if flags&^uint32(unix.RENAME_NOREPLACE|unix.RENAME_EXCHANGE|unix.RENAME_WHITEOUT) != 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.RENAME_EXCHANGE != 0 && flags&(unix.RENAME_NOREPLACE|unix.RENAME_WHITEOUT) != 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.RENAME_WHITEOUT != 0 && !t.Credentials().HasCapability(unix.CAP_MKNOD) {
		return 0, unix.EPERM
	}
	ol, err := vfsLookupAt(t, olddirfd, oldAddr)
	if err != nil {
		return 0, err
	}
	nl, err := vfsLookupAt(t, newdirfd, newAddr)
	if err != nil {
		return 0, err
	}
	return 0, fs.Rename(t, &ol, &nl, flags)
}

// Rename implements rename(2).
func Rename(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return renameat2(t, unix.AT_FDCWD, a[0].Pointer(), unix.AT_FDCWD, a[1].Pointer(), 0)
}

// Renameat implements renameat(2).
func Renameat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return renameat2(t, a[0].Int(), a[1].Pointer(), a[2].Int(), a[3].Pointer(), 0)
}

// Renameat2 implements renameat2(2).
func Renameat2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return renameat2(t, a[0].Int(), a[1].Pointer(), a[2].Int(), a[3].Pointer(), a[4].Uint())
}

// resolveCached is RESOLVE_CACHED (missing from x/sys/unix).
const resolveCached = 0x20
