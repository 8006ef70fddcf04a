package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// mountFlagsIgnored are mount(2) flags accepted without effect: access-time
// and sync policies, and MS_SILENT.
const mountFlagsIgnored = unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME | unix.MS_STRICTATIME |
	unix.MS_LAZYTIME | unix.MS_SYNCHRONOUS | unix.MS_DIRSYNC | unix.MS_MANDLOCK | unix.MS_SILENT | unix.MS_I_VERSION

// mountPropagation are the propagation types of mount(2).
const mountPropagation = unix.MS_SHARED | unix.MS_PRIVATE | unix.MS_SLAVE | unix.MS_UNBINDABLE

// mountFlagsOf returns the per-mount flags that flags ask for.
func mountFlagsOf(flags uint64) fs.MountFlags {
	return fs.MountFlags{
		ReadOnly: flags&unix.MS_RDONLY != 0,
		NoSUID:   flags&unix.MS_NOSUID != 0,
		NoDev:    flags&unix.MS_NODEV != 0,
		NoExec:   flags&unix.MS_NOEXEC != 0,
	}
}

// userNSMountable are the file system types a mount namespace owned by a
// user namespace other than the initial one may get new instances of
// (Linux's FS_USERNS_MOUNT); proc also needs CAP_SYS_ADMIN over the
// owner of the caller's PID namespace, mqueue over its IPC namespace's.
var userNSMountable = map[string]bool{"tmpfs": true, "proc": true, "devpts": true, "mqueue": true}

// userNSMountAllowed is EPERM for a new instance of fstype that a user
// namespace's mount namespace may not have.
func userNSMountAllowed(t *kernel.Task, ns *fs.MountNamespace, fstype string) error {
	if ns == nil || ns.Owner() == nil {
		return nil
	}
	if !userNSMountable[fstype] {
		return unix.EPERM
	}
	if fstype == "proc" && !t.Credentials().HasCapabilityIn(unix.CAP_SYS_ADMIN, t.PIDNamespace().Owner()) {
		return unix.EPERM
	}
	// An mqueue instance shows the caller's IPC namespace's queues
	// (Linux's mqueue_get_tree: CAP_SYS_ADMIN over its owner).
	if fstype == "mqueue" && !t.Credentials().HasCapabilityIn(unix.CAP_SYS_ADMIN, t.IPCNamespace().Owner()) {
		return unix.EPERM
	}
	return nil
}

// copyInOptionalString copies in the string at addr, "" for NULL.
func copyInOptionalString(t *kernel.Task, addr uintptr, max int) (string, error) {
	if addr == 0 {
		return "", nil
	}
	return t.CopyInString(addr, max)
}

// Mount implements mount(2) in the caller's mount namespace: new tmpfs,
// proc, sysfs and other registered file systems, bind mounts (MS_REC
// too), remounts of the per-mount flags, moves (MS_MOVE) and propagation
// changes (MS_SHARED, MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE, with MS_REC).
func Mount(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	sourceAddr, targetAddr, typeAddr := a[0].Pointer(), a[1].Pointer(), a[2].Pointer()
	flags, dataAddr := a[3].Uint64(), a[4].Pointer()
	if flags&0xffff0000 == 0xc0ed0000 { // MS_MGC_VAL, ignored as Linux does
		flags &= 0xffff
	}
	source, err := copyInOptionalString(t, sourceAddr, fs.PathMax)
	if err != nil {
		return 0, err
	}
	fstype, err := copyInOptionalString(t, typeAddr, fs.PathMax)
	if err != nil {
		return 0, err
	}
	data, err := copyInOptionalString(t, dataAddr, arch.PageSize)
	if err != nil {
		return 0, err
	}
	target, err := vfsResolve(t, unix.AT_FDCWD, targetAddr, false, true)
	if err != nil {
		return 0, err
	}
	if !t.CanMount() {
		return 0, unix.EPERM
	}
	ns := t.MountNamespace()
	switch {
	case flags&unix.MS_REMOUNT != 0:
		m, err := fs.MountAt(target)
		if err != nil {
			return 0, err
		}
		if m.Namespace() != ns {
			return 0, unix.EINVAL
		}
		if flags&unix.MS_BIND == 0 && !t.Credentials().HasCapabilityIn(unix.CAP_SYS_ADMIN, m.FilesystemOwner()) {
			// The file system's own options: its owner's to change.
			return 0, unix.EPERM
		}
		nf := mountFlagsOf(flags)
		if flags&unix.MS_BIND == 0 && !nf.ReadOnly && m.Filesystem().ReadOnly() {
			// A file system made read-only cannot become writable.
			return 0, unix.EACCES
		}
		return 0, m.Remount(nf)
	case flags&unix.MS_BIND != 0:
		src, err := vfsResolve(t, unix.AT_FDCWD, sourceAddr, false, true)
		if err != nil {
			return 0, err
		}
		if src.Mount == nil || src.Mount.Namespace() != ns {
			return 0, unix.EINVAL
		}
		// A bind mount keeps the source mount's flags unless remounted.
		_, err = ns.BindMountRec(t, target, src, src.Mount.Flags(), flags&unix.MS_REC != 0)
		return 0, err
	case flags&mountPropagation != 0:
		m, err := fs.MountAt(target)
		if err != nil {
			return 0, err
		}
		types := flags & mountPropagation
		if types&(types-1) != 0 || flags&^(mountPropagation|unix.MS_REC|unix.MS_SILENT) != 0 {
			return 0, unix.EINVAL
		}
		return 0, ns.SetPropagation(m, types, flags&unix.MS_REC != 0)
	case flags&unix.MS_MOVE != 0:
		if source == "" {
			return 0, unix.EINVAL
		}
		src, err := vfsResolve(t, unix.AT_FDCWD, sourceAddr, false, true)
		if err != nil {
			return 0, err
		}
		return 0, ns.Move(t, src, target)
	}
	if fstype == "" {
		return 0, unix.EINVAL
	}
	newFS, ok := t.Kernel().Filesystem(fstype)
	if !ok {
		return 0, unix.ENODEV
	}
	if err := userNSMountAllowed(t, ns, fstype); err != nil {
		return 0, err
	}
	f, err := newFS(t, source, flags&unix.MS_RDONLY != 0, data)
	if err != nil {
		return 0, err
	}
	// A new proc in a user namespace's mount namespace must not show
	// what a mask hides (MountNew: Linux's mount_too_revealing).
	_, err = ns.MountNew(t, target, f, mountFlagsOf(flags), fsOwnerFor(t, fstype))
	return 0, err
}

// fsOwnerFor is the user namespace a new instance of fstype that t
// mounts belongs to (Linux's s_user_ns): a proc's is its PID
// namespace's owner, an mqueue's its IPC namespace's, any other's the
// mounter's.
func fsOwnerFor(t *kernel.Task, fstype string) *auth.UserNamespace {
	switch fstype {
	case "proc":
		return t.PIDNamespace().Owner()
	case "mqueue":
		return t.IPCNamespace().Owner()
	}
	return t.Credentials().UserNamespace
}

// Umount2 implements umount2(2). Mounts with others on or below them are
// busy without MNT_DETACH; files open below a mount do not make it busy
// (their positions stay valid), so every unmount is as lazy as
// MNT_DETACH. MNT_EXPIRE marks nothing and gives EAGAIN, as a first
// call does on Linux.
func Umount2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[1].Int()
	if flags&^(unix.MNT_FORCE|unix.MNT_DETACH|unix.MNT_EXPIRE|unix.UMOUNT_NOFOLLOW) != 0 {
		return 0, unix.EINVAL
	}
	vd, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, flags&unix.UMOUNT_NOFOLLOW == 0)
	if err != nil {
		return 0, err
	}
	if !t.CanMount() {
		return 0, unix.EPERM
	}
	m, err := fs.MountAt(vd)
	if err != nil {
		return 0, err
	}
	if flags&unix.MNT_EXPIRE != 0 {
		if flags&(unix.MNT_FORCE|unix.MNT_DETACH) != 0 {
			return 0, unix.EINVAL
		}
		return 0, unix.EAGAIN
	}
	return 0, t.MountNamespace().Umount(m, flags&unix.MNT_DETACH != 0)
}

// PivotRoot implements pivot_root(2) in the caller's mount namespace: the
// mount at new_root becomes the root, the old root moves to put_old, and
// every task whose root or working directory was the old root moves to
// the new one.
func PivotRoot(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if !t.CanMount() {
		return 0, unix.EPERM
	}
	newRoot, err := vfsResolve(t, unix.AT_FDCWD, a[0].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	if err := mustBeDir(t, newRoot); err != nil {
		return 0, err
	}
	putOld, err := vfsResolve(t, unix.AT_FDCWD, a[1].Pointer(), false, true)
	if err != nil {
		return 0, err
	}
	if err := mustBeDir(t, putOld); err != nil {
		return 0, err
	}
	root := t.FSContext().Root()
	k := t.Kernel()
	if err := t.MountNamespace().PivotRoot(root, newRoot, putOld); err != nil {
		return 0, err
	}
	// Linux's chroot_fs_refs.
	for _, tg := range k.ThreadGroups() {
		for _, task := range tg.Tasks() {
			c := task.FSContext()
			if c == nil {
				continue
			}
			r, cwd := c.RootAndCwd()
			if r == root {
				c.SetRoot(newRoot)
			}
			if cwd == root {
				c.SetCwd(newRoot)
			}
		}
	}
	return 0, nil
}

// mustBeDir is ENOTDIR unless vd is a directory (LOOKUP_DIRECTORY).
func mustBeDir(t *kernel.Task, vd fs.VirtualDentry) error {
	st, err := vd.Stat(t)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return unix.ENOTDIR
	}
	return nil
}
