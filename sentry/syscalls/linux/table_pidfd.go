package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// pidfdSyscalls are the entries of pidfds (sys_pidfd.go) and membarrier
// (sys_membarrier.go). Merged into AMD64 by init, as table_fdkinds.go's.
func pidfdSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_PIDFD_OPEN:        {Name: "pidfd_open", Fn: PidfdOpen, Support: kernel.SupportFull},
		unix.SYS_PIDFD_SEND_SIGNAL: {Name: "pidfd_send_signal", Fn: PidfdSendSignal, Support: kernel.SupportFull},
		unix.SYS_PIDFD_GETFD:       {Name: "pidfd_getfd", Fn: PidfdGetfd, Support: kernel.SupportFull},
		unix.SYS_MEMBARRIER: {Name: "membarrier", Fn: Membarrier, Support: kernel.SupportPartial,
			Note: "no MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (EINVAL, as Linux without rseq); barriers interrupt the threads in application code and wait until each has left it"},
	}
}

func init() { tableParts = append(tableParts, pidfdSyscalls) }
