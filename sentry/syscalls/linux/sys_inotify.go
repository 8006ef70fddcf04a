package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/inotify"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// inotifySyscalls are the inotify entries, merged into AMD64 by init as
// fdKindSyscalls are.
func inotifySyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_INOTIFY_INIT:  {Name: "inotify_init", Fn: InotifyInit, Support: kernel.SupportFull},
		unix.SYS_INOTIFY_INIT1: {Name: "inotify_init1", Fn: InotifyInit1, Support: kernel.SupportFull},
		unix.SYS_INOTIFY_ADD_WATCH: {Name: "inotify_add_watch", Fn: InotifyAddWatch, Support: kernel.SupportPartial,
			Note: "IN_DELETE_SELF waits for files opened through the removed name only (not other names, working directories or mappings); IN_UNMOUNT comes when the last mount goes, even while files are open; mmap writes make no events"},
		unix.SYS_INOTIFY_RM_WATCH: {Name: "inotify_rm_watch", Fn: InotifyRmWatch, Support: kernel.SupportFull},
	}
}

func init() { tableParts = append(tableParts, inotifySyscalls) }

func inotifyInit(t *kernel.Task, flags uint32) (uintptr, error) {
	f, err := inotify.New(t, flags)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&unix.IN_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// InotifyInit implements inotify_init(2).
func InotifyInit(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return inotifyInit(t, 0)
}

// InotifyInit1 implements inotify_init1(2).
func InotifyInit1(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return inotifyInit(t, a[0].Uint())
}

// inotifyFile returns the instance of the inotify descriptor fd: EBADF
// if fd is not open, EINVAL if it is not an inotify file.
func inotifyFile(t *kernel.Task, fd int32) (*fs.FileDescription, *inotify.Instance, error) {
	f, err := vfsFile(t, fd)
	if err != nil {
		return nil, nil, err
	}
	in := inotify.FromFile(f)
	if in == nil {
		f.DecRef()
		return nil, nil, unix.EINVAL
	}
	return f, in, nil
}

// InotifyAddWatch implements inotify_add_watch(2).
func InotifyAddWatch(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, pathAddr, mask := a[0].Int(), a[1].Pointer(), a[2].Uint()
	if mask&unix.IN_MASK_ADD != 0 && mask&unix.IN_MASK_CREATE != 0 {
		return 0, unix.EINVAL
	}
	// No known bit, or an unknown one: EINVAL.
	if mask&inotify.AllBits == 0 || mask&^inotify.AllBits != 0 {
		return 0, unix.EINVAL
	}
	f, in, err := inotifyFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	vd, err := vfsResolve(t, unix.AT_FDCWD, pathAddr, false, mask&unix.IN_DONT_FOLLOW == 0)
	if err != nil {
		return 0, err
	}
	st, err := vd.Stat(t)
	if err != nil {
		return 0, err
	}
	if mask&unix.IN_ONLYDIR != 0 && !st.IsDir() {
		return 0, unix.ENOTDIR
	}
	if err := fs.CheckPermission(t.Credentials(), &st, fs.MayRead); err != nil {
		return 0, err
	}
	wd, err := in.Watch(vd, mask)
	return uintptr(wd), err
}

// InotifyRmWatch implements inotify_rm_watch(2).
func InotifyRmWatch(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, in, err := inotifyFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return 0, in.RemoveWatch(a[1].Int())
}
