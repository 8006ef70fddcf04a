package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// sysvIPCSyscalls are the System V semaphore (sys_sem.go) and message
// queue (sys_msg.go) entries, merged into AMD64 by init.
var sysvIPCSyscalls = map[uintptr]kernel.Syscall{
	unix.SYS_SEMGET:     full("semget", Semget),
	unix.SYS_SEMOP:      full("semop", Semop),
	unix.SYS_SEMTIMEDOP: full("semtimedop", Semtimedop),
	unix.SYS_SEMCTL: partial("semctl", Semctl,
		"limits are Linux's defaults, fixed (no kernel.sem sysctl); ipc_perm ids are shown unmapped"),
}

func init() {
	for n, s := range sysvIPCSyscalls {
		AMD64.Table[n] = s
	}
}
