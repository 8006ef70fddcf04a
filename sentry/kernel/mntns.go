package kernel

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Mount namespaces. Each task holds a reference on its mount namespace
// (Linux keeps it in the nsproxy); the mount-family syscalls act on the
// caller's. clone(CLONE_NEWNS) and unshare(CLONE_NEWNS) give the task a
// copy of the caller's tree (fs.MountNamespace.Copy) with its root and
// working directory moved onto the copy; setns(2) on a /proc/[pid]/ns/mnt
// file joins one, moving root and working directory to its root. A task
// gives its reference back when it exits; a namespace goes (its mounts
// taken down) when no task and no nsfs file holds it.

// mountNSRef is the task's mount namespace (nil: the kernel's, for tasks
// made before namespaces were per task and in tests).
type mountNSRef struct {
	mntns atomic.Pointer[fs.MountNamespace]
	// mntnsGone is set once the task gave its reference back as it
	// exited: it has no mount namespace from then on, and
	// /proc/[pid]/ns/mnt is ENOENT (MountNamespace's fallback to the
	// kernel's must not name another container's namespace).
	mntnsGone atomic.Bool
}

// MountNamespace returns t's mount namespace.
func (t *Task) MountNamespace() *fs.MountNamespace {
	if ns := t.mntns.Load(); ns != nil {
		return ns
	}
	return t.k.MountNS
}

// mountNSInode returns ns's nsfs inode number, naming it on first use.
func (k *Kernel) mountNSInode(ns *fs.MountNamespace) uint64 {
	if ino := ns.Inode(); ino != 0 {
		return ino
	}
	if ns == k.MountNS {
		return ns.SetInode(initMntInode)
	}
	return ns.SetInode(k.allocNSInode())
}

// setInitialMountNamespace gives t, a process made from outside the
// sandbox, the namespace of its root (a sub-container's own, or the
// kernel's).
func (t *Task) setInitialMountNamespace(root fs.VirtualDentry) {
	ns := t.k.MountNS
	if root.Mount != nil {
		ns = root.Mount.Namespace()
	}
	if ns != nil {
		ns.IncRef()
		t.mntns.Store(ns)
	}
}

// inheritMountNamespace gives nt, made by t's clone with flags, its share
// of fsc (t's with CLONE_FS, else a fork) and t's mount namespace or,
// with CLONE_NEWNS, a copy of it, moving nt's root and working directory
// (in fsc, nt's own then) onto the copy. Clone calls it once nothing can
// fail any more.
func (nt *Task) inheritMountNamespace(t *Task, fsc *fs.FSContext, flags uint64) {
	if flags&unix.CLONE_FS != 0 {
		fsc.Share()
	}
	ns := t.MountNamespace()
	if ns == nil {
		return
	}
	if flags&unix.CLONE_NEWNS == 0 {
		ns.IncRef()
		nt.mntns.Store(ns)
		return
	}
	nns, translate := ns.Copy(nt.UserNamespace())
	root, cwd := fsc.RootAndCwd()
	fsc.SetRoot(translate(root))
	fsc.SetCwd(translate(cwd))
	nt.mntns.Store(nns)
}

// unshareMountNamespace gives t a copy of its mount namespace, owned by
// user namespace owner (t's, or the one unshare makes with it), with its
// root and working directory moved onto the copy (unshare(CLONE_NEWNS),
// which unshares the fs context too: the caller made t's its own).
func (t *Task) unshareMountNamespace(owner *auth.UserNamespace) {
	ns := t.MountNamespace()
	if ns == nil {
		return
	}
	nns, translate := ns.Copy(owner)
	fsc := t.FSContext()
	root, cwd := fsc.RootAndCwd()
	fsc.SetRoot(translate(root))
	fsc.SetCwd(translate(cwd))
	if old := t.mntns.Swap(nns); old != nil {
		old.DecRef()
	}
}

// joinMountNamespace implements setns(2) with a mount namespace file, as
// Linux's mntns_install: EINVAL while the fs context is shared with
// another task, EPERM without CAP_SYS_ADMIN over the namespace and
// CAP_SYS_ADMIN and CAP_SYS_CHROOT in one's own user namespace; root and
// working directory move to the namespace's root (the top mount there).
func (t *Task) joinMountNamespace(ns any) error {
	mns, ok := ns.(*fs.MountNamespace)
	if !ok || mns == nil {
		return errEINVAL
	}
	fsc := t.FSContext()
	if fsc.Shared() {
		return errEINVAL
	}
	c := t.Credentials()
	if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, mns.Owner()) || !c.HasOwnCapability(unix.CAP_SYS_CHROOT) ||
		!c.HasOwnCapability(unix.CAP_SYS_ADMIN) {
		return errEPERM
	}
	if !mns.TryIncRef() {
		return errEINVAL
	}
	root := mns.TopRoot()
	fsc.SetRoot(root)
	fsc.SetCwd(root)
	if old := t.mntns.Swap(mns); old != nil {
		old.DecRef()
	}
	return nil
}

// mountNamespaceForProc is /proc/[pid]/ns/mnt's namespace: its inode and
// object (false when the kernel has none, in tests; inode 0, which reads
// ENOENT, once the task has exited, as Linux).
func (t *Task) mountNamespaceForProc() (uint64, any, bool) {
	if t.mntnsGone.Load() {
		return 0, nil, true
	}
	ns := t.MountNamespace()
	if ns == nil {
		return 0, nil, false
	}
	return t.k.mountNSInode(ns), ns, true
}

// CanMount reports whether t may change mount trees of its mount
// namespace: CAP_SYS_ADMIN over the user namespace that owns it.
func (t *Task) CanMount() bool {
	ns := t.MountNamespace()
	if ns == nil {
		return t.Credentials().HasCapability(unix.CAP_SYS_ADMIN)
	}
	return t.Credentials().HasCapabilityIn(unix.CAP_SYS_ADMIN, ns.Owner())
}

// releaseFS drops t's share of its fs context and its mount namespace
// reference, as it exits.
func (t *Task) releaseFS() {
	if fsc := t.FSContext(); fsc != nil {
		fsc.Release()
	}
	t.mntnsGone.Store(true)
	if ns := t.mntns.Swap(nil); ns != nil {
		ns.DecRef()
	}
}
