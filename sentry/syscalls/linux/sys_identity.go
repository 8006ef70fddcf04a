package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// The ids the calls below read and take are as the caller's user
// namespace names them (the overflow id 65534 for one it does not map);
// the kernel keeps global ids (auth.KUID, auth.KGID).

// Getuid implements getuid(2).
func Getuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	c := t.Credentials()
	return uintptr(c.UserNamespace.UIDOf(c.RealUID)), nil
}

// Geteuid implements geteuid(2).
func Geteuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	c := t.Credentials()
	return uintptr(c.UserNamespace.UIDOf(c.EffectiveUID)), nil
}

// Getgid implements getgid(2).
func Getgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	c := t.Credentials()
	return uintptr(c.UserNamespace.GIDOf(c.RealGID)), nil
}

// Getegid implements getegid(2).
func Getegid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	c := t.Credentials()
	return uintptr(c.UserNamespace.GIDOf(c.EffectiveGID)), nil
}

// Setuid implements setuid(2).
func Setuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.SetUID(a[0].Uint())
}

// Setgid implements setgid(2).
func Setgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.SetGID(a[0].Uint())
}

// Setreuid implements setreuid(2).
func Setreuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.SetREUID(a[0].Uint(), a[1].Uint())
}

// Setregid implements setregid(2).
func Setregid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.SetREGID(a[0].Uint(), a[1].Uint())
}

// Setresuid implements setresuid(2).
func Setresuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.SetRESUID(a[0].Uint(), a[1].Uint(), a[2].Uint())
}

// Setresgid implements setresgid(2).
func Setresgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.SetRESGID(a[0].Uint(), a[1].Uint(), a[2].Uint())
}

// copyOutIDs writes three ids to three addresses, stopping at the first
// fault, as getresuid does.
func copyOutIDs(t *kernel.Task, addrs [3]uintptr, ids [3]uint32) error {
	for i := range addrs {
		if err := copyOutUint32(t, addrs[i], ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// Getresuid implements getresuid(2).
func Getresuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	c := t.Credentials()
	ns := c.UserNamespace
	return 0, copyOutIDs(t, [3]uintptr{a[0].Pointer(), a[1].Pointer(), a[2].Pointer()},
		[3]uint32{ns.UIDOf(c.RealUID), ns.UIDOf(c.EffectiveUID), ns.UIDOf(c.SavedUID)})
}

// Getresgid implements getresgid(2).
func Getresgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	c := t.Credentials()
	ns := c.UserNamespace
	return 0, copyOutIDs(t, [3]uintptr{a[0].Pointer(), a[1].Pointer(), a[2].Pointer()},
		[3]uint32{ns.GIDOf(c.RealGID), ns.GIDOf(c.EffectiveGID), ns.GIDOf(c.SavedGID)})
}

// Setfsuid implements setfsuid(2): it returns the previous fsuid, whether
// or not the change was allowed.
func Setfsuid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.SetFSUID(a[0].Uint())), nil
}

// Setfsgid implements setfsgid(2).
func Setfsgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.SetFSGID(a[0].Uint())), nil
}

// Getgroups implements getgroups(2).
func Getgroups(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	size, addr := a[0].Int(), a[1].Pointer()
	if size < 0 {
		return 0, unix.EINVAL
	}
	c := t.Credentials()
	groups := c.ExtraGIDs
	if size == 0 {
		return uintptr(len(groups)), nil
	}
	if int(size) < len(groups) {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4*len(groups))
	for i, g := range groups {
		binary.LittleEndian.PutUint32(b[4*i:], c.UserNamespace.GIDOf(g))
	}
	if _, err := t.CopyOutBytes(addr, b); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(len(groups)), nil
}

// Setgroups implements setgroups(2).
func Setgroups(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	size, addr := a[0].Int(), a[1].Pointer()
	if !kernel.MaySetgroups(t.Credentials()) {
		return 0, unix.EPERM
	}
	if uint32(size) > kernel.NGroupsMax {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4*int(size))
	if size > 0 {
		if _, err := t.CopyInBytes(addr, b); err != nil {
			return 0, unix.EFAULT
		}
	}
	gids := make([]uint32, size)
	for i := range gids {
		gids[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return 0, t.SetGroups(gids)
}

// Capability header versions (linux/capability.h).
const (
	capVersion1 = 0x19980330
	capVersion2 = 0x20071026
	capVersion3 = 0x20080522
)

// capDataWords reads the version in a struct __user_cap_header_struct and
// returns how many struct __user_cap_data_struct follow it. An unknown
// version gets the preferred one written back, and EINVAL.
func capDataWords(t *kernel.Task, hdr uintptr) (int, error) {
	v, err := copyInUint32(t, hdr)
	if err != nil {
		return 0, unix.EFAULT
	}
	switch v {
	case capVersion1:
		return 1, nil
	case capVersion2, capVersion3:
		return 2, nil
	}
	if err := copyOutUint32(t, hdr, capVersion3); err != nil {
		return 0, unix.EFAULT
	}
	return 0, unix.EINVAL
}

// Capget implements capget(2).
func Capget(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	hdr, data := a[0].Pointer(), a[1].Pointer()
	words, err := capDataWords(t, hdr)
	if data == 0 || err != nil {
		// Version probing: a NULL data pointer with an unknown version
		// succeeds once the preferred version is written.
		if data == 0 && err == unix.EINVAL {
			return 0, nil
		}
		return 0, err
	}
	pid, err := copyInUint32(t, hdr+4)
	if err != nil {
		return 0, unix.EFAULT
	}
	if int32(pid) < 0 {
		return 0, unix.EINVAL
	}
	target := t
	if pid != 0 && kernel.ThreadID(pid) != t.Tid() {
		if target = t.LookupTask(kernel.ThreadID(pid)); target == nil {
			return 0, unix.ESRCH
		}
	}
	c := target.Credentials()
	b := make([]byte, 12*words)
	for i := 0; i < words; i++ {
		shift := 32 * i
		binary.LittleEndian.PutUint32(b[12*i:], uint32(c.EffectiveCaps>>shift))
		binary.LittleEndian.PutUint32(b[12*i+4:], uint32(c.PermittedCaps>>shift))
		binary.LittleEndian.PutUint32(b[12*i+8:], uint32(c.InheritableCaps>>shift))
	}
	if _, err := t.CopyOutBytes(data, b); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// Capset implements capset(2): only the calling thread's sets can change.
func Capset(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	hdr, data := a[0].Pointer(), a[1].Pointer()
	words, err := capDataWords(t, hdr)
	if err != nil {
		return 0, err
	}
	pid, err := copyInUint32(t, hdr+4)
	if err != nil {
		return 0, unix.EFAULT
	}
	if pid != 0 && kernel.ThreadID(pid) != t.Tid() {
		return 0, unix.EPERM
	}
	b := make([]byte, 12*words)
	if _, err := t.CopyInBytes(data, b); err != nil {
		return 0, unix.EFAULT
	}
	var eff, perm, inh auth.CapSet
	for i := 0; i < words; i++ {
		shift := 32 * i
		eff |= auth.CapSet(binary.LittleEndian.Uint32(b[12*i:])) << shift
		perm |= auth.CapSet(binary.LittleEndian.Uint32(b[12*i+4:])) << shift
		inh |= auth.CapSet(binary.LittleEndian.Uint32(b[12*i+8:])) << shift
	}
	return 0, t.SetCapabilities(eff, perm, inh)
}
