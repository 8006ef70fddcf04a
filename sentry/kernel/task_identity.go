package kernel

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// This file holds the user and group id transitions of setuid(2),
// setreuid(2), setresuid(2), setfsuid(2), their gid twins, setgroups(2),
// capset(2) and the capability prctls, with Linux's rules (kernel/sys.c,
// security/commoncap.c): who may set what, which ids follow which, and how
// capabilities follow uid changes (capabilities(7), "Effect of user ID
// changes on capabilities").
//
// The credsSet* functions are pure: they take the old credentials and
// return new ones (or the old pointer when nothing changes), so they can
// be tested without a task. Task methods install the result with
// commitCreds, which also applies commit_creds' side effects.

// NGroupsMax is NGROUPS_MAX, the most supplementary groups a task holds.
const NGroupsMax = 65536

// capFSMask are the capabilities that follow the filesystem uid: dropped
// from the effective set when fsuid leaves 0, raised from the permitted
// set when it becomes 0 (CAP_FS_MASK).
const capFSMask = auth.CapSet(1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH |
	1<<unix.CAP_FOWNER | 1<<unix.CAP_FSETID | 1<<unix.CAP_LINUX_IMMUTABLE | 1<<unix.CAP_MKNOD |
	1<<unix.CAP_MAC_OVERRIDE)

// The id arguments of the calls below are as the caller's user namespace
// names them: kuid and kgid map them to global ids, false for an id the
// namespace does not map ((uid_t)-1 never is).
func kuid(c *auth.Credentials, id uint32) (auth.KUID, bool) { return c.UserNamespace.MapToKUID(id) }
func kgid(c *auth.Credentials, id uint32) (auth.KGID, bool) { return c.UserNamespace.MapToKGID(id) }

// emulateSetXUID adjusts n's capabilities after a change of real,
// effective or saved uid from o (cap_emulate_setxuid).
func emulateSetXUID(o, n *auth.Credentials) {
	// Root is the namespace's uid 0 (cap_emulate_setxuid's root_uid).
	root := o.UserNamespace.RootKUID()
	oldHadRoot := o.RealUID == root || o.EffectiveUID == root || o.SavedUID == root
	newHasRoot := n.RealUID == root || n.EffectiveUID == root || n.SavedUID == root
	if oldHadRoot && !newHasRoot {
		if !n.KeepCaps {
			n.PermittedCaps = 0
			n.EffectiveCaps = 0
		}
		n.AmbientCaps = 0
	}
	if o.EffectiveUID == root && n.EffectiveUID != root {
		n.EffectiveCaps = 0
	}
	if o.EffectiveUID != root && n.EffectiveUID == root {
		n.EffectiveCaps = n.PermittedCaps
	}
}

// fixSetFSUID adjusts n's effective capabilities after a change of
// filesystem uid from o.
func fixSetFSUID(o, n *auth.Credentials) {
	root := o.UserNamespace.RootKUID()
	if o.FilesystemUID == root && n.FilesystemUID != root {
		n.EffectiveCaps &^= capFSMask
	}
	if o.FilesystemUID != root && n.FilesystemUID == root {
		n.EffectiveCaps |= n.PermittedCaps & capFSMask
	}
}

// credsSetUID implements setuid(2).
func credsSetUID(o *auth.Credentials, uid uint32) (*auth.Credentials, error) {
	k, ok := kuid(o, uid)
	if !ok {
		return nil, errEINVAL
	}
	n := o.Fork()
	if o.HasOwnCapability(unix.CAP_SETUID) {
		n.RealUID, n.SavedUID = k, k
	} else if k != o.RealUID && k != o.SavedUID {
		return nil, errEPERM
	}
	n.EffectiveUID, n.FilesystemUID = k, k
	emulateSetXUID(o, n)
	return n, nil
}

// credsSetGID implements setgid(2).
func credsSetGID(o *auth.Credentials, gid uint32) (*auth.Credentials, error) {
	k, ok := kgid(o, gid)
	if !ok {
		return nil, errEINVAL
	}
	n := o.Fork()
	switch {
	case o.HasOwnCapability(unix.CAP_SETGID):
		n.RealGID, n.EffectiveGID, n.SavedGID, n.FilesystemGID = k, k, k, k
	case k == o.RealGID || k == o.SavedGID:
		n.EffectiveGID, n.FilesystemGID = k, k
	default:
		return nil, errEPERM
	}
	return n, nil
}

// credsSetREUID implements setreuid(2); NoID leaves an id unchanged.
func credsSetREUID(o *auth.Credentials, ruid, euid uint32) (*auth.Credentials, error) {
	r, rok := kuid(o, ruid)
	e, eok := kuid(o, euid)
	if (ruid != auth.NoID && !rok) || (euid != auth.NoID && !eok) {
		return nil, errEINVAL
	}
	capable := o.HasOwnCapability(unix.CAP_SETUID)
	n := o.Fork()
	if ruid != auth.NoID {
		if r != o.RealUID && r != o.EffectiveUID && !capable {
			return nil, errEPERM
		}
		n.RealUID = r
	}
	if euid != auth.NoID {
		if e != o.RealUID && e != o.EffectiveUID && e != o.SavedUID && !capable {
			return nil, errEPERM
		}
		n.EffectiveUID = e
	}
	// The saved id follows the effective one when the real id is set, or
	// when the effective id becomes something other than the old real id.
	if ruid != auth.NoID || (euid != auth.NoID && e != o.RealUID) {
		n.SavedUID = n.EffectiveUID
	}
	n.FilesystemUID = n.EffectiveUID
	emulateSetXUID(o, n)
	return n, nil
}

// credsSetREGID implements setregid(2).
func credsSetREGID(o *auth.Credentials, rgid, egid uint32) (*auth.Credentials, error) {
	r, rok := kgid(o, rgid)
	e, eok := kgid(o, egid)
	if (rgid != auth.NoID && !rok) || (egid != auth.NoID && !eok) {
		return nil, errEINVAL
	}
	capable := o.HasOwnCapability(unix.CAP_SETGID)
	n := o.Fork()
	if rgid != auth.NoID {
		if r != o.RealGID && r != o.EffectiveGID && !capable {
			return nil, errEPERM
		}
		n.RealGID = r
	}
	if egid != auth.NoID {
		if e != o.RealGID && e != o.EffectiveGID && e != o.SavedGID && !capable {
			return nil, errEPERM
		}
		n.EffectiveGID = e
	}
	if rgid != auth.NoID || (egid != auth.NoID && e != o.RealGID) {
		n.SavedGID = n.EffectiveGID
	}
	n.FilesystemGID = n.EffectiveGID
	return n, nil
}

// credsSetRESUID implements setresuid(2).
func credsSetRESUID(o *auth.Credentials, ruid, euid, suid uint32) (*auth.Credentials, error) {
	r, rok := kuid(o, ruid)
	e, eok := kuid(o, euid)
	s, sok := kuid(o, suid)
	if (ruid != auth.NoID && !rok) || (euid != auth.NoID && !eok) || (suid != auth.NoID && !sok) {
		return nil, errEINVAL
	}
	if (ruid == auth.NoID || r == o.RealUID) &&
		(euid == auth.NoID || (e == o.EffectiveUID && e == o.FilesystemUID)) &&
		(suid == auth.NoID || s == o.SavedUID) {
		return o, nil
	}
	isNew := func(id uint32, k auth.KUID) bool {
		return id != auth.NoID && k != o.RealUID && k != o.EffectiveUID && k != o.SavedUID
	}
	if (isNew(ruid, r) || isNew(euid, e) || isNew(suid, s)) && !o.HasOwnCapability(unix.CAP_SETUID) {
		return nil, errEPERM
	}
	n := o.Fork()
	if ruid != auth.NoID {
		n.RealUID = r
	}
	if euid != auth.NoID {
		n.EffectiveUID = e
	}
	if suid != auth.NoID {
		n.SavedUID = s
	}
	n.FilesystemUID = n.EffectiveUID
	emulateSetXUID(o, n)
	return n, nil
}

// credsSetRESGID implements setresgid(2).
func credsSetRESGID(o *auth.Credentials, rgid, egid, sgid uint32) (*auth.Credentials, error) {
	r, rok := kgid(o, rgid)
	e, eok := kgid(o, egid)
	s, sok := kgid(o, sgid)
	if (rgid != auth.NoID && !rok) || (egid != auth.NoID && !eok) || (sgid != auth.NoID && !sok) {
		return nil, errEINVAL
	}
	if (rgid == auth.NoID || r == o.RealGID) &&
		(egid == auth.NoID || (e == o.EffectiveGID && e == o.FilesystemGID)) &&
		(sgid == auth.NoID || s == o.SavedGID) {
		return o, nil
	}
	isNew := func(id uint32, k auth.KGID) bool {
		return id != auth.NoID && k != o.RealGID && k != o.EffectiveGID && k != o.SavedGID
	}
	if (isNew(rgid, r) || isNew(egid, e) || isNew(sgid, s)) && !o.HasOwnCapability(unix.CAP_SETGID) {
		return nil, errEPERM
	}
	n := o.Fork()
	if rgid != auth.NoID {
		n.RealGID = r
	}
	if egid != auth.NoID {
		n.EffectiveGID = e
	}
	if sgid != auth.NoID {
		n.SavedGID = s
	}
	n.FilesystemGID = n.EffectiveGID
	return n, nil
}

// credsSetFSUID implements setfsuid(2): it returns the new credentials
// (o when nothing changes, including when the change is refused) and the
// old filesystem uid as the caller's namespace names it, which is the
// syscall's result either way.
func credsSetFSUID(o *auth.Credentials, uid uint32) (*auth.Credentials, uint32) {
	old := o.UserNamespace.UIDOf(o.FilesystemUID)
	k, ok := kuid(o, uid)
	if !ok {
		return o, old
	}
	if k != o.RealUID && k != o.EffectiveUID && k != o.SavedUID && k != o.FilesystemUID &&
		!o.HasOwnCapability(unix.CAP_SETUID) {
		return o, old
	}
	if k == o.FilesystemUID {
		return o, old
	}
	n := o.Fork()
	n.FilesystemUID = k
	fixSetFSUID(o, n)
	return n, old
}

// credsSetFSGID implements setfsgid(2), as credsSetFSUID.
func credsSetFSGID(o *auth.Credentials, gid uint32) (*auth.Credentials, uint32) {
	old := o.UserNamespace.GIDOf(o.FilesystemGID)
	k, ok := kgid(o, gid)
	if !ok {
		return o, old
	}
	if k != o.RealGID && k != o.EffectiveGID && k != o.SavedGID && k != o.FilesystemGID &&
		!o.HasOwnCapability(unix.CAP_SETGID) {
		return o, old
	}
	if k == o.FilesystemGID {
		return o, old
	}
	n := o.Fork()
	n.FilesystemGID = k
	return n, old
}

// credsSetGroups implements setgroups(2)'s checks. The list is kept sorted,
// as Linux keeps it (getgroups returns it in that order).
func credsSetGroups(o *auth.Credentials, gids []uint32) (*auth.Credentials, error) {
	if !MaySetgroups(o) {
		return nil, errEPERM
	}
	if len(gids) > NGroupsMax {
		return nil, errEINVAL
	}
	groups := make([]auth.KGID, len(gids))
	for i, g := range gids {
		k, ok := kgid(o, g)
		if !ok {
			return nil, errEINVAL
		}
		groups[i] = k
	}
	slices.Sort(groups)
	n := o.Fork()
	n.ExtraGIDs = groups
	return n, nil
}

// MaySetgroups reports whether c may call setgroups(2) (may_setgroups):
// CAP_SETGID in its user namespace, whose gid_map must be written and
// whose setgroups file must not say "deny".
func MaySetgroups(c *auth.Credentials) bool {
	return c.HasOwnCapability(unix.CAP_SETGID) && c.UserNamespace.MaySetgroups()
}

// credsSetCaps implements capset(2)'s rules (cap_capset).
func credsSetCaps(o *auth.Credentials, effective, permitted, inheritable auth.CapSet) (*auth.Credentials, error) {
	effective &= auth.AllCaps
	permitted &= auth.AllCaps
	inheritable &= auth.AllCaps
	// Without CAP_SETPCAP, new inheritable capabilities must come from the
	// old inheritable or permitted sets.
	if !o.HasOwnCapability(unix.CAP_SETPCAP) && inheritable&^(o.InheritableCaps|o.PermittedCaps) != 0 {
		return nil, errEPERM
	}
	// Nothing inheritable from outside the bounding set.
	if inheritable&^(o.InheritableCaps|o.BoundingCaps) != 0 {
		return nil, errEPERM
	}
	if permitted&^o.PermittedCaps != 0 {
		return nil, errEPERM
	}
	if effective&^permitted != 0 {
		return nil, errEPERM
	}
	n := o.Fork()
	n.EffectiveCaps, n.PermittedCaps, n.InheritableCaps = effective, permitted, inheritable
	// Ambient capabilities must stay permitted and inheritable.
	n.AmbientCaps &= permitted & inheritable
	return n, nil
}

// validCap reports whether cp names a capability (cap_valid).
func validCap(cp uint64) bool { return cp <= unix.CAP_LAST_CAP }

// credsDropBoundingCap implements PR_CAPBSET_DROP.
func credsDropBoundingCap(o *auth.Credentials, cp uint64) (*auth.Credentials, error) {
	if !o.HasOwnCapability(unix.CAP_SETPCAP) {
		return nil, errEPERM
	}
	if !validCap(cp) {
		return nil, errEINVAL
	}
	n := o.Fork()
	n.BoundingCaps &^= 1 << cp
	return n, nil
}

// credsAmbient implements PR_CAP_AMBIENT's RAISE, LOWER and CLEAR_ALL
// (IS_SET only reads and is answered by the caller).
func credsAmbient(o *auth.Credentials, op, cp uint64) (*auth.Credentials, error) {
	n := o.Fork()
	switch op {
	case unix.PR_CAP_AMBIENT_CLEAR_ALL:
		n.AmbientCaps = 0
	case unix.PR_CAP_AMBIENT_RAISE:
		if !validCap(cp) {
			return nil, errEINVAL
		}
		if !o.PermittedCaps.Has(uint(cp)) || !o.InheritableCaps.Has(uint(cp)) {
			return nil, errEPERM
		}
		n.AmbientCaps |= 1 << cp
	case unix.PR_CAP_AMBIENT_LOWER:
		if !validCap(cp) {
			return nil, errEINVAL
		}
		n.AmbientCaps &^= 1 << cp
	default:
		return nil, errEINVAL
	}
	return n, nil
}

// privilegeDropped reports whether going from o to n makes the task
// non-dumpable and clears its parent-death signal, as commit_creds does:
// any change of effective or filesystem ids, or new permitted
// capabilities (but not those of a new user namespace: a task that
// unshares one stays dumpable on Linux).
func privilegeDropped(o, n *auth.Credentials) bool {
	return o.EffectiveUID != n.EffectiveUID || o.EffectiveGID != n.EffectiveGID ||
		o.FilesystemUID != n.FilesystemUID || o.FilesystemGID != n.FilesystemGID ||
		(n.PermittedCaps&^o.PermittedCaps != 0 && o.UserNamespace == n.UserNamespace)
}

// commitCreds installs n as t's credentials. Only t's own goroutine calls
// it (credentials are per thread; glibc broadcasts set*id to every thread
// itself).
func (t *Task) commitCreds(n *auth.Credentials) {
	o := t.Credentials()
	if n == o {
		return
	}
	if privilegeDropped(o, n) {
		// fs.suid_dumpable is 0.
		t.tg.procAttrs.nonDumpable.Store(true)
		t.SetPDeathSignal(0)
	}
	t.SetCredentials(n)
}

// applyCreds runs a credential transition and commits its result.
func (t *Task) applyCreds(n *auth.Credentials, err error) error {
	if err != nil {
		return err
	}
	t.commitCreds(n)
	return nil
}

// SetUID implements setuid(2).
func (t *Task) SetUID(uid uint32) error {
	return t.applyCreds(credsSetUID(t.Credentials(), uid))
}

// SetGID implements setgid(2).
func (t *Task) SetGID(gid uint32) error {
	return t.applyCreds(credsSetGID(t.Credentials(), gid))
}

// SetREUID implements setreuid(2).
func (t *Task) SetREUID(ruid, euid uint32) error {
	return t.applyCreds(credsSetREUID(t.Credentials(), ruid, euid))
}

// SetREGID implements setregid(2).
func (t *Task) SetREGID(rgid, egid uint32) error {
	return t.applyCreds(credsSetREGID(t.Credentials(), rgid, egid))
}

// SetRESUID implements setresuid(2).
func (t *Task) SetRESUID(ruid, euid, suid uint32) error {
	return t.applyCreds(credsSetRESUID(t.Credentials(), ruid, euid, suid))
}

// SetRESGID implements setresgid(2).
func (t *Task) SetRESGID(rgid, egid, sgid uint32) error {
	return t.applyCreds(credsSetRESGID(t.Credentials(), rgid, egid, sgid))
}

// SetFSUID implements setfsuid(2) and returns the previous fsuid.
func (t *Task) SetFSUID(uid uint32) uint32 {
	n, old := credsSetFSUID(t.Credentials(), uid)
	t.commitCreds(n)
	return old
}

// SetFSGID implements setfsgid(2) and returns the previous fsgid.
func (t *Task) SetFSGID(gid uint32) uint32 {
	n, old := credsSetFSGID(t.Credentials(), gid)
	t.commitCreds(n)
	return old
}

// SetGroups implements setgroups(2).
func (t *Task) SetGroups(gids []uint32) error {
	return t.applyCreds(credsSetGroups(t.Credentials(), gids))
}

// SetCapabilities implements capset(2) on the calling task.
func (t *Task) SetCapabilities(effective, permitted, inheritable auth.CapSet) error {
	return t.applyCreds(credsSetCaps(t.Credentials(), effective, permitted, inheritable))
}

// DropBoundingCapability implements PR_CAPBSET_DROP.
func (t *Task) DropBoundingCapability(cp uint64) error {
	return t.applyCreds(credsDropBoundingCap(t.Credentials(), cp))
}

// SetAmbientCapability implements PR_CAP_AMBIENT's RAISE, LOWER and
// CLEAR_ALL operations.
func (t *Task) SetAmbientCapability(op, cp uint64) error {
	return t.applyCreds(credsAmbient(t.Credentials(), op, cp))
}

// SetKeepCaps implements PR_SET_KEEPCAPS.
func (t *Task) SetKeepCaps(keep bool) {
	o := t.Credentials()
	if o.KeepCaps == keep {
		return
	}
	n := o.Fork()
	n.KeepCaps = keep
	t.commitCreds(n)
}

// Dumpable returns PR_GET_DUMPABLE's value for t's process.
func (t *Task) Dumpable() bool { return !t.tg.procAttrs.nonDumpable.Load() }

// SetDumpable implements PR_SET_DUMPABLE.
func (t *Task) SetDumpable(d bool) { t.tg.procAttrs.nonDumpable.Store(!d) }

// ClearChildTID returns the address set_tid_address or CLONE_CHILD_CLEARTID
// recorded (PR_GET_TID_ADDRESS).
func (t *Task) ClearChildTID() uintptr { return t.clearChildTID }
