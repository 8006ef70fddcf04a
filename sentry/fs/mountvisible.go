package fs

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// The check Linux's mount_too_revealing makes before a new proc or sysfs
// instance in a mount namespace owned by a user namespace other than the
// initial one: such an instance must show nothing its mounter does not
// already see, so the namespace must have one whole, unmasked instance.

// revealingTypes are the file system types a new instance of which shows
// the whole of something global (Linux's SB_I_USERNS_VISIBLE).
var revealingTypes = map[string]bool{"proc": true, "sysfs": true}

// MountNew mounts f at at as Mount does, for a new instance mount(2)
// makes, which belongs to user namespace owner (the mounter's, or for
// proc its PID namespace's owner: Linux's s_user_ns), whose
// CAP_SYS_ADMIN its remounts need. In a namespace owned by a user
// namespace other than the initial one, a new proc or sysfs instance is
// EPERM unless the namespace has a mount of the same type that is fully
// visible (see fullyVisibleLocked), and it inherits that mount's
// read-only lock.
func (ns *MountNamespace) MountNew(ctx Context, at VirtualDentry, f *Filesystem, flags MountFlags, owner *auth.UserNamespace) (*Mount, error) {
	return ns.mountInstance(ctx, at, f, flags, func() (newMountAttrs, error) {
		attrs := newMountAttrs{fsOwner: owner}
		if ns.owner != nil && revealingTypes[f.Type()] {
			visible, lockRO := ns.fullyVisibleLocked(f.Type(), flags.ReadOnly)
			if !visible {
				return attrs, unix.EPERM
			}
			attrs.locked.ReadOnly = lockRO
		}
		return attrs, nil
	})
}

// fullyVisibleLocked is Linux's mnt_already_visible: has ns a mount of
// a file system of type typ whose root is the file system's root, that
// is not locked read-only (a read-only file system counts as locked)
// unless the new mount is read-only, and on which no locked mount (one
// inherited from a more privileged namespace, such as a runtime's mask
// over /proc/kcore) covers anything? lockRO reports whether that mount
// is locked read-only. Linux lets a locked mount on a permanently empty
// directory pass; the Sentry's file systems have none.
//
// Preconditions: treeMu is held.
func (ns *MountNamespace) fullyVisibleLocked(typ string, readOnly bool) (visible, lockRO bool) {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	covered := make(map[*Mount]bool)
	for _, c := range ns.all {
		if c.locked && c.parent != nil {
			covered[c.parent] = true
		}
	}
	for _, m := range ns.all {
		if m.fs.Type() != typ || m.root != m.fs.root || covered[m] {
			continue
		}
		ro := m.lockedFlags.ReadOnly || m.fs.readOnly
		if ro && !readOnly {
			continue
		}
		return true, ro
	}
	return false, false
}
