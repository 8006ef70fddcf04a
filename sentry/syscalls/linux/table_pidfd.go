package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// pidfdSyscalls are the entries of pidfds (sys_pidfd.go). Merged into
// AMD64 by init, as table_fdkinds.go's.
var pidfdSyscalls = map[uintptr]kernel.Syscall{
	unix.SYS_PIDFD_OPEN:        {Name: "pidfd_open", Fn: PidfdOpen, Support: kernel.SupportFull},
	unix.SYS_PIDFD_SEND_SIGNAL: {Name: "pidfd_send_signal", Fn: PidfdSendSignal, Support: kernel.SupportFull},
	unix.SYS_PIDFD_GETFD:       {Name: "pidfd_getfd", Fn: PidfdGetfd, Support: kernel.SupportFull},
}

func init() {
	for n, s := range pidfdSyscalls {
		AMD64.Table[n] = s
	}
}
