package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// namespaceSyscalls are the entries for namespaces (sys_namespace.go).
func namespaceSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_UNSHARE: {Name: "unshare", Fn: Unshare, Support: kernel.SupportPartial,
			Note: "mount, UTS, IPC, PID and user namespaces, CLONE_FILES, CLONE_FS; network, cgroup and time namespaces unsupported (EINVAL)"},
		unix.SYS_SETNS: {Name: "setns", Fn: Setns, Support: kernel.SupportPartial,
			Note: "mount, UTS, IPC, PID and user namespace files; the sandbox's single network, cgroup and time namespaces are accepted as no-ops; pidfds unsupported (EINVAL)"},
	}
}

func init() { tableParts = append(tableParts, namespaceSyscalls) }
