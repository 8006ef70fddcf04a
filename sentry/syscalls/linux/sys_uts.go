package linux

import (
	"bytes"
	"strconv"
	"strings"

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
	ns := t.UTSNamespace()
	fields := []string{UnameSysname, ns.Hostname(), unameRelease(t), UnameVersion, UnameMachine, ns.Domainname()}
	b := make([]byte, utsFieldLen*len(fields))
	for i, f := range fields {
		copy(b[i*utsFieldLen:i*utsFieldLen+utsNameLen], f)
	}
	if _, err := t.CopyOutBytes(a[0].Pointer(), b); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// unameRelease is the release uname(2) reports to t: under the UNAME26
// personality a 2.6 one, as Linux's override_release makes it.
func unameRelease(t *kernel.Task) string {
	if t.Personality()&kernel.PersonalityUname26 != 0 {
		return uname26Release(UnameRelease)
	}
	return UnameRelease
}

// uname26Release turns release into "2.6.N" followed by what comes after
// its first three numbers, N being its minor version plus 60 (Linux
// 6.1.0-rc1 is 2.6.61-rc1), as Linux's override_release does.
func uname26Release(release string) string {
	i, dots := 0, 0
	for ; i < len(release); i++ {
		c := release[i]
		if c == '.' {
			if dots++; dots >= 3 {
				break
			}
		}
		if c != '.' && (c < '0' || c > '9') {
			break
		}
	}
	minor := 0
	if _, after, ok := strings.Cut(release, "."); ok {
		for _, c := range after {
			if c < '0' || c > '9' {
				break
			}
			minor = minor*10 + int(c-'0')
		}
	}
	return "2.6." + strconv.Itoa(minor+60) + release[i:]
}

// copyInUTSName checks and reads sethostname's and setdomainname's
// arguments: CAP_SYS_ADMIN over the UTS namespace (in the user namespace
// that owns it) first, then the length (at most 64 bytes).
func copyInUTSName(t *kernel.Task, addr uintptr, length int32) (string, error) {
	if !t.Credentials().HasCapabilityIn(unix.CAP_SYS_ADMIN, t.UTSNamespace().Owner()) {
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
	t.UTSNamespace().SetHostname(name)
	return 0, nil
}

// Setdomainname implements setdomainname(2).
func Setdomainname(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	name, err := copyInUTSName(t, a[0].Pointer(), a[1].Int())
	if err != nil {
		return 0, err
	}
	t.UTSNamespace().SetDomainname(name)
	return 0, nil
}

// personalityQuery is the personality(2) argument that only reads.
const personalityQuery = 0xffffffff

// Personality implements personality(2): it returns the old personality
// and, unless asked only to query, stores the new one. Like Linux it
// accepts any value; Moat runs every program as PER_LINUX. UNAME26
// (uname) and READ_IMPLIES_EXEC (mmap, mprotect) act; other flags such as
// ADDR_NO_RANDOMIZE are remembered (and inherited) but change nothing.
func Personality(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	p := a[0].Uint()
	if p == personalityQuery {
		return uintptr(t.Personality()), nil
	}
	return uintptr(t.SetPersonality(p)), nil
}
