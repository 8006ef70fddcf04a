// Package auth holds the credentials of a task: user and group ids,
// supplementary groups, capability sets and user namespace, the user
// namespaces themselves (their id maps) and the checks built on them.
//
// Credentials are immutable once published: a task that changes its ids
// makes a modified copy and installs it, so readers never lock. A user
// namespace's maps are written once and read without a lock; its mutex
// (userns.go) only serialises the writes.
package auth

// KUID and KGID are user and group ids as the sandbox's initial user
// namespace sees them: global ids, translated for tasks in other user
// namespaces at the syscall boundary (userns.go).
type (
	KUID uint32
	KGID uint32
)

// NoID is the id that means "no change" in setresuid and friends, and the
// overflow id.
const NoID = ^uint32(0)

// CapSet is a set of capabilities, one bit per CAP_* number.
type CapSet uint64

// Has reports whether c contains capability cp.
func (c CapSet) Has(cp uint) bool { return c&(1<<cp) != 0 }

// AllCaps is every capability Linux defines up to CAP_CHECKPOINT_RESTORE (40).
const AllCaps CapSet = (1 << 41) - 1

// Credentials are one task's ids and capabilities.
type Credentials struct {
	RealUID, EffectiveUID, SavedUID, FilesystemUID KUID
	RealGID, EffectiveGID, SavedGID, FilesystemGID KGID
	// ExtraGIDs are the supplementary groups.
	ExtraGIDs []KGID

	PermittedCaps, InheritableCaps, EffectiveCaps, BoundingCaps, AmbientCaps CapSet

	// KeepCaps is PR_SET_KEEPCAPS.
	KeepCaps bool

	// UserNamespace is the user namespace the credentials belong to,
	// where their capabilities apply; nil is the initial one.
	UserNamespace *UserNamespace
}

// NewRootCredentials returns the credentials of a root task with every
// capability.
func NewRootCredentials() *Credentials {
	return &Credentials{
		PermittedCaps: AllCaps,
		EffectiveCaps: AllCaps,
		BoundingCaps:  AllCaps,
	}
}

// Fork returns a copy of c that the caller may modify.
func (c *Credentials) Fork() *Credentials {
	n := *c
	n.ExtraGIDs = append([]KGID(nil), c.ExtraGIDs...)
	return &n
}

// InGroup reports whether the filesystem gid or a supplementary group is g.
func (c *Credentials) InGroup(g KGID) bool {
	if c.FilesystemGID == g {
		return true
	}
	for _, x := range c.ExtraGIDs {
		if x == g {
			return true
		}
	}
	return false
}

// HasCapability reports whether c has capability cp over what the
// sandbox's initial user namespace owns (Linux's capable()): for a task
// in that namespace, whether cp is in the effective set.
func (c *Credentials) HasCapability(cp uint) bool { return c.HasCapabilityIn(cp, nil) }
