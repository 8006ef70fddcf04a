package linux

import (
	"bytes"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// What uname(2) reports besides the UTS names. The release is a Linux
// version whose system call interface Moat follows; the version string
// says the kernel is Moat's.
const (
	UnameSysname = "Linux"
	UnameRelease = "6.1.0"
	UnameVersion = "#1 SMP Moat"
	UnameMachine = "x86_64"
)

// utsFieldLen is __NEW_UTS_LEN + 1; utsNameLen is __NEW_UTS_LEN.
const (
	utsFieldLen = 65
	utsNameLen  = utsFieldLen - 1
)

// Uname implements uname(2).
func Uname(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	k := t.Kernel()
	fields := []string{UnameSysname, k.Hostname(), UnameRelease, UnameVersion, UnameMachine, k.Domainname()}
	b := make([]byte, utsFieldLen*len(fields))
	for i, f := range fields {
		copy(b[i*utsFieldLen:i*utsFieldLen+utsNameLen], f)
	}
	if _, err := t.CopyOutBytes(a[0].Pointer(), b); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// copyInUTSName checks and reads sethostname's and setdomainname's
// arguments: CAP_SYS_ADMIN first, then the length (at most 64 bytes).
func copyInUTSName(t *kernel.Task, addr uintptr, length int32) (string, error) {
	if !t.Credentials().HasCapability(unix.CAP_SYS_ADMIN) {
		return "", unix.EPERM
	}
	if length < 0 || length > utsNameLen {
		return "", unix.EINVAL
	}
	b := make([]byte, length)
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return "", unix.EFAULT
	}
	// Names are C strings: what follows a NUL is never seen.
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b), nil
}

// Sethostname implements sethostname(2).
func Sethostname(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	name, err := copyInUTSName(t, a[0].Pointer(), a[1].Int())
	if err != nil {
		return 0, err
	}
	t.Kernel().SetHostname(name)
	return 0, nil
}

// Setdomainname implements setdomainname(2).
func Setdomainname(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	name, err := copyInUTSName(t, a[0].Pointer(), a[1].Int())
	if err != nil {
		return 0, err
	}
	t.Kernel().SetDomainname(name)
	return 0, nil
}

// personalityQuery is the personality(2) argument that only reads.
const personalityQuery = 0xffffffff

// Personality implements personality(2): it returns the old personality
// and, unless asked only to query, stores the new one. Like Linux it
// accepts any value; Moat runs every program as PER_LINUX, so flags such
// as ADDR_NO_RANDOMIZE are remembered (and inherited) but change nothing.
func Personality(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	p := a[0].Uint()
	if p == personalityQuery {
		return uintptr(t.Personality()), nil
	}
	return uintptr(t.SetPersonality(p)), nil
}
