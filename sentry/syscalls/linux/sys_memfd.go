package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// memfd_create flags (MFD_NOEXEC_SEAL and MFD_EXEC are newer than some
// releases of golang.org/x/sys/unix).
const (
	mfdNoexecSeal = 0x8
	mfdExec       = 0x10
	mfdAllFlags   = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING | unix.MFD_HUGETLB | mfdNoexecSeal | mfdExec
	// mfdHugeMask covers the MFD_HUGE_* page size bits.
	mfdHugeMask = 0x3f << 26
)

// MemfdCreate implements memfd_create(2). MFD_HUGETLB is refused with
// EINVAL: the Sentry's memory has no huge pages.
func MemfdCreate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, flags := a[0].Pointer(), a[1].Uint()
	if flags&unix.MFD_HUGETLB != 0 {
		if flags&^(mfdAllFlags|mfdHugeMask) != 0 {
			return 0, unix.EINVAL
		}
		t.Log().Info("memfd_create: MFD_HUGETLB is not supported")
		return 0, unix.EINVAL
	}
	if flags&^mfdAllFlags != 0 {
		return 0, unix.EINVAL
	}
	if flags&mfdExec != 0 && flags&mfdNoexecSeal != 0 {
		return 0, unix.EINVAL
	}
	name, err := t.CopyInString(addr, tmpfs.MemfdNameMax)
	if err == unix.ENAMETOOLONG {
		return 0, unix.EINVAL
	}
	if err != nil {
		return 0, unix.EFAULT
	}
	f := tmpfs.NewMemfd(t.MemoryManager().MemoryFile(), name, flags, t.Credentials())
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&unix.MFD_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// fcntlSeals serves fcntl's F_ADD_SEALS and F_GET_SEALS (called from
// Fcntl in sys_file.go).
func fcntlSeals(f *fs.FileDescription, cmd int32, arg int) (uintptr, error) {
	if cmd == unix.F_GET_SEALS {
		s, err := tmpfs.Seals(f)
		return uintptr(s), err
	}
	return 0, tmpfs.AddSeals(f, arg)
}
