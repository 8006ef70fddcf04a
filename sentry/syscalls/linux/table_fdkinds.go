package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// fdKindSyscalls are the entries of the anonymous file kinds timerfd
// (sys_timerfd.go) and signalfd (sys_signalfd.go). Merged into AMD64 by
// init: either order with linux64.go's init gives the same table, since
// that one only fills numbers left empty.
func fdKindSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_TIMERFD_CREATE: {Name: "timerfd_create", Fn: TimerfdCreate, Support: kernel.SupportPartial,
			Note: "TFD_TIMER_CANCEL_ON_SET is accepted but never cancels: the sandbox's realtime clock cannot be set"},
		unix.SYS_TIMERFD_SETTIME: {Name: "timerfd_settime", Fn: TimerfdSettime, Support: kernel.SupportFull},
		unix.SYS_TIMERFD_GETTIME: {Name: "timerfd_gettime", Fn: TimerfdGettime, Support: kernel.SupportFull},
		unix.SYS_SIGNALFD: {Name: "signalfd", Fn: Signalfd, Support: kernel.SupportPartial,
			Note: "poll and epoll report the pending signals of the thread that last created, updated or read the descriptor"},
		unix.SYS_SIGNALFD4: {Name: "signalfd4", Fn: Signalfd4, Support: kernel.SupportPartial,
			Note: "poll and epoll report the pending signals of the thread that last created, updated or read the descriptor"},
	}
}

func init() { tableParts = append(tableParts, fdKindSyscalls) }
