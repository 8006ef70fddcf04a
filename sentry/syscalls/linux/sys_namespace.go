package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Unshare implements unshare(2).
func Unshare(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.Unshare(a[0].Uint64())
}

// Setns implements setns(2) for namespace files (/proc/[pid]/ns/*);
// pidfds are refused with EINVAL.
func Setns(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f := t.FDTable().GetFile(a[0].Int())
	if f == nil {
		return 0, unix.EBADF
	}
	defer f.DecRef()
	typ, ns, ok := proc.NamespaceOf(f)
	if !ok {
		return 0, unix.EINVAL
	}
	return 0, t.SetNamespace(typ, ns, a[1].Uint())
}
