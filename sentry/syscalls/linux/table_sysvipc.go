package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

const semUndoNote = "SEM_UNDO adjustments belong to the process: its threads share them (as with CLONE_SYSVSEM), clone(CLONE_SYSVSEM) without CLONE_THREAD does not; they are applied at exit, not at unshare or setns of the IPC namespace"

// sysvIPCSyscalls are the System V semaphore (sys_sem.go) and message
// queue (sys_msg.go) entries, merged into AMD64 by init.
func sysvIPCSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_SEMGET: partial("semget", Semget,
			"a namespace holds at most 2^20 semaphores (Linux's SEMMNS is 1024000000): ENOSPC past them"),
		unix.SYS_SEMOP:      partial("semop", Semop, semUndoNote),
		unix.SYS_SEMTIMEDOP: partial("semtimedop", Semtimedop, semUndoNote),
		unix.SYS_SEMCTL: partial("semctl", Semctl,
			"limits are Linux's defaults, fixed (no kernel.sem sysctl)"),
		unix.SYS_MSGGET: full("msgget", Msgget),
		unix.SYS_MSGSND: full("msgsnd", Msgsnd),
		unix.SYS_MSGRCV: full("msgrcv", Msgrcv),
		unix.SYS_MSGCTL: partial("msgctl", Msgctl,
			"limits are Linux's defaults, fixed (no kernel.msgmax/msgmnb/msgmni sysctls)"),
	}
}

func init() { tableParts = append(tableParts, sysvIPCSyscalls) }
