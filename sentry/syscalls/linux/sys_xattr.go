package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// copyInXattrName reads an attribute name: ERANGE if empty or too long,
// EOPNOTSUPP outside the namespaces Linux knows.
func copyInXattrName(t *kernel.Task, addr uintptr) (string, error) {
	name, err := t.CopyInString(addr, fs.XattrNameMax+1)
	if err == unix.ENAMETOOLONG {
		return "", unix.ERANGE
	}
	if err != nil {
		return "", err
	}
	if name == "" || len(name) > fs.XattrNameMax {
		return "", unix.ERANGE
	}
	for _, ns := range []string{"user.", "trusted.", "security.", "system."} {
		if len(name) > len(ns) && name[:len(ns)] == ns {
			return name, nil
		}
	}
	return "", unix.EOPNOTSUPP
}

// xattrTarget resolves the file of an xattr syscall: a path (followed or
// not) or a descriptor.
func xattrTarget(t *kernel.Task, pathAddr uintptr, fd int32, byFD, follow bool) (fs.VirtualDentry, error) {
	if byFD {
		f, err := vfsIOFile(t, fd)
		if err != nil {
			return fs.VirtualDentry{}, err
		}
		defer f.DecRef()
		return f.VirtualDentry(), nil
	}
	return vfsResolve(t, unix.AT_FDCWD, pathAddr, false, follow)
}

// copyOutSized is the tail of getxattr and listxattr: the length when
// size is 0, ERANGE (E2BIG past the largest buffer) when b does not fit.
func copyOutSized(t *kernel.Task, addr uintptr, size uint64, b []byte, limit int) (uintptr, error) {
	if size == 0 {
		return uintptr(len(b)), nil
	}
	if size > uint64(limit) {
		size = uint64(limit)
	}
	if uint64(len(b)) > size {
		if size >= uint64(limit) {
			return 0, unix.E2BIG
		}
		return 0, unix.ERANGE
	}
	if _, err := t.CopyOutBytes(addr, b); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(len(b)), nil
}

func getxattr(t *kernel.Task, a arch.SyscallArguments, byFD, follow bool) (uintptr, error) {
	vd, err := xattrTarget(t, a[0].Pointer(), a[0].Int(), byFD, follow)
	if err != nil {
		return 0, err
	}
	name, err := copyInXattrName(t, a[1].Pointer())
	if err != nil {
		return 0, err
	}
	v, err := fs.GetXattr(t, vd, name)
	if err != nil {
		return 0, err
	}
	return copyOutSized(t, a[2].Pointer(), a[3].Uint64(), v, fs.XattrSizeMax)
}

// Getxattr implements getxattr(2).
func Getxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return getxattr(t, a, false, true)
}

// Lgetxattr implements lgetxattr(2).
func Lgetxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return getxattr(t, a, false, false)
}

// Fgetxattr implements fgetxattr(2).
func Fgetxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return getxattr(t, a, true, false)
}

func listxattr(t *kernel.Task, a arch.SyscallArguments, byFD, follow bool) (uintptr, error) {
	vd, err := xattrTarget(t, a[0].Pointer(), a[0].Int(), byFD, follow)
	if err != nil {
		return 0, err
	}
	names, err := fs.ListXattr(t, vd)
	if err != nil {
		return 0, err
	}
	var b []byte
	for _, n := range names {
		b = append(b, n...)
		b = append(b, 0)
	}
	return copyOutSized(t, a[1].Pointer(), a[2].Uint64(), b, fs.XattrListMax)
}

// Listxattr implements listxattr(2).
func Listxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return listxattr(t, a, false, true)
}

// Llistxattr implements llistxattr(2).
func Llistxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return listxattr(t, a, false, false)
}

// Flistxattr implements flistxattr(2).
func Flistxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return listxattr(t, a, true, false)
}

func setxattr(t *kernel.Task, a arch.SyscallArguments, byFD, follow bool) (uintptr, error) {
	size, flags := a[3].Uint64(), a[4].Int()
	if flags&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
		return 0, unix.EINVAL
	}
	name, err := copyInXattrName(t, a[1].Pointer())
	if err != nil {
		return 0, err
	}
	if size > fs.XattrSizeMax {
		return 0, unix.E2BIG
	}
	value := make([]byte, size)
	if size > 0 {
		if _, err := t.CopyInBytes(a[2].Pointer(), value); err != nil {
			return 0, unix.EFAULT
		}
	}
	vd, err := xattrTarget(t, a[0].Pointer(), a[0].Int(), byFD, follow)
	if err != nil {
		return 0, err
	}
	return 0, fs.SetXattr(t, vd, name, value, int(flags))
}

// Setxattr implements setxattr(2).
func Setxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return setxattr(t, a, false, true)
}

// Lsetxattr implements lsetxattr(2).
func Lsetxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return setxattr(t, a, false, false)
}

// Fsetxattr implements fsetxattr(2).
func Fsetxattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return setxattr(t, a, true, false)
}

func removexattr(t *kernel.Task, a arch.SyscallArguments, byFD, follow bool) (uintptr, error) {
	vd, err := xattrTarget(t, a[0].Pointer(), a[0].Int(), byFD, follow)
	if err != nil {
		return 0, err
	}
	name, err := copyInXattrName(t, a[1].Pointer())
	if err != nil {
		return 0, err
	}
	return 0, fs.RemoveXattr(t, vd, name)
}

// Removexattr implements removexattr(2).
func Removexattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return removexattr(t, a, false, true)
}

// Lremovexattr implements lremovexattr(2).
func Lremovexattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return removexattr(t, a, false, false)
}

// Fremovexattr implements fremovexattr(2).
func Fremovexattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return removexattr(t, a, true, false)
}
