package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// processByPID returns the process of the task with id pid (any thread's
// id names its process, as find_task_by_vpid), or the caller's for 0.
func processByPID(t *kernel.Task, pid int32) (*kernel.ThreadGroup, error) {
	if pid == 0 {
		return t.ThreadGroup(), nil
	}
	if pid < 0 {
		return nil, unix.ESRCH
	}
	o := t.LookupTask(kernel.ThreadID(pid))
	if o == nil {
		return nil, unix.ESRCH
	}
	return o.ThreadGroup(), nil
}

// Getpgid implements getpgid(2).
func Getpgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tg, err := processByPID(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	return uintptr(t.PIDNamespace().ProcessGroupIDOf(tg)), nil
}

// Getpgrp implements getpgrp(2).
func Getpgrp(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.PIDNamespace().ProcessGroupIDOf(t.ThreadGroup())), nil
}

// Getsid implements getsid(2).
func Getsid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tg, err := processByPID(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	return uintptr(t.PIDNamespace().SessionIDOf(tg)), nil
}

// Setsid implements setsid(2).
func Setsid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	sid, err := t.ThreadGroup().SetSID()
	return uintptr(sid), err
}

// Setpgid implements setpgid(2): pid 0 is the caller, pgid 0 the target's
// own id. The target must be a process (not a non-leader thread), the
// caller or one of its children in the same session that has not
// called execve, and not a session leader.
func Setpgid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, pgid := a[0].Int(), a[1].Int()
	if pgid == 0 {
		pgid = pid // Linux substitutes first: setpgid(-1, 0) is EINVAL.
	}
	if pgid < 0 {
		return 0, unix.EINVAL
	}
	tg := t.ThreadGroup()
	target := tg
	if pid != 0 {
		if pid < 0 {
			return 0, unix.ESRCH
		}
		o := t.LookupTask(kernel.ThreadID(pid))
		if o == nil {
			return 0, unix.ESRCH
		}
		target = o.ThreadGroup()
		if t.PIDNamespace().IDOfThreadGroup(target) != kernel.ThreadID(pid) {
			return 0, unix.EINVAL
		}
	}
	return 0, tg.SetPGID(target, kernel.ThreadID(pgid))
}
