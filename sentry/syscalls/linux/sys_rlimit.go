package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// rlimNLimits is RLIM_NLIMITS.
const rlimNLimits = unix.RLIMIT_RTTIME + 1

// copyInRlimit reads a struct rlimit (two 64-bit words on amd64, the same
// layout as struct rlimit64).
func copyInRlimit(t *kernel.Task, addr uintptr) (kernel.Limit, error) {
	var b [16]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return kernel.Limit{}, unix.EFAULT
	}
	return kernel.Limit{Cur: le64(b[0:]), Max: le64(b[8:])}, nil
}

func copyOutRlimit(t *kernel.Task, addr uintptr, l kernel.Limit) error {
	var b [16]byte
	putLE64(b[0:], l.Cur)
	putLE64(b[8:], l.Max)
	if _, err := t.CopyOutBytes(addr, b[:]); err != nil {
		return unix.EFAULT
	}
	return nil
}

// prlimit is do_prlimit on tg: it returns the old limit, and sets the new
// one when set is true. Raising a hard limit needs CAP_SYS_RESOURCE;
// RLIMIT_NOFILE cannot exceed fs.nr_open (1<<20). A new RLIMIT_STACK
// applies to the next execve, which reads it.
func prlimit(t *kernel.Task, tg *kernel.ThreadGroup, resource uint32, set bool, l kernel.Limit) (kernel.Limit, error) {
	if resource >= rlimNLimits {
		return kernel.Limit{}, unix.EINVAL
	}
	limits := tg.Limits()
	if !set {
		return limits.Get(int(resource)), nil
	}
	old, err := limits.Set(int(resource), l, t.Credentials().HasCapability(unix.CAP_SYS_RESOURCE))
	if err == nil && resource == unix.RLIMIT_CPU {
		tg.CPULimitChanged()
	}
	return old, err
}

// Getrlimit implements getrlimit(2).
func Getrlimit(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	old, err := prlimit(t, t.ThreadGroup(), a[0].Uint(), false, kernel.Limit{})
	if err != nil {
		return 0, err
	}
	return 0, copyOutRlimit(t, a[1].Pointer(), old)
}

// Setrlimit implements setrlimit(2).
func Setrlimit(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	l, err := copyInRlimit(t, a[1].Pointer())
	if err != nil {
		return 0, err
	}
	_, err = prlimit(t, t.ThreadGroup(), a[0].Uint(), true, l)
	return 0, err
}

// mayPrlimit is check_prlimit_permission: the caller's real ids must
// match all of the target's, or the caller has CAP_SYS_RESOURCE over the
// target's user namespace.
func mayPrlimit(t *kernel.Task, target *kernel.Task) bool {
	if target.ThreadGroup() == t.ThreadGroup() {
		return true
	}
	c, tc := t.Credentials(), target.Credentials()
	if c.RealUID == tc.EffectiveUID && c.RealUID == tc.SavedUID && c.RealUID == tc.RealUID &&
		c.RealGID == tc.EffectiveGID && c.RealGID == tc.SavedGID && c.RealGID == tc.RealGID {
		return true
	}
	return c.HasCapabilityIn(unix.CAP_SYS_RESOURCE, tc.UserNamespace)
}

// Prlimit64 implements prlimit64(2).
func Prlimit64(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, resource, newAddr, oldAddr := a[0].Int(), a[1].Uint(), a[2].Pointer(), a[3].Pointer()
	var l kernel.Limit
	if newAddr != 0 {
		var err error
		if l, err = copyInRlimit(t, newAddr); err != nil {
			return 0, err
		}
	}
	target := t
	if pid != 0 {
		if target = t.LookupTask(kernel.ThreadID(pid)); target == nil {
			return 0, unix.ESRCH
		}
	}
	if !mayPrlimit(t, target) {
		return 0, unix.EPERM
	}
	old, err := prlimit(t, target.ThreadGroup(), resource, newAddr != 0, l)
	if err != nil {
		return 0, err
	}
	if oldAddr != 0 {
		return 0, copyOutRlimit(t, oldAddr, old)
	}
	return 0, nil
}
