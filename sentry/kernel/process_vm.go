package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// MemoryForAccess returns the address space of thread tid (in t's PID
// namespace) for process_vm_readv and process_vm_writev, with a
// reference the caller drops with DecUsers: ESRCH when there is no such
// thread or it has no address space any more (it is exiting or a
// zombie), EPERM when t may not reach its memory (ptraceMayAttach).
func (t *Task) MemoryForAccess(tid int32) (*mm.MemoryManager, error) {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	// tid is as the caller's PID namespace sees it.
	target := t.pidns.tasks[ThreadID(tid)]
	if tid <= 0 || target == nil || target.exitState != taskRunning {
		return nil, errESRCH
	}
	if !ptraceMayAttach(t, target) {
		return nil, errEPERM
	}
	m := target.MemoryManager()
	if m == nil || !m.TryIncUsers() {
		return nil, errESRCH
	}
	return m, nil
}

// ptraceMayAttach is ptraceMayAccess with t's real ids
// (PTRACE_MODE_ATTACH_REALCREDS), as process_vm_readv/writev and
// pidfd_getfd check.
func ptraceMayAttach(t, target *Task) bool {
	return ptraceMayAccess(t, t.Credentials(), target, false)
}

// ptraceMayAccess is Linux's ptrace access check (__ptrace_may_access)
// for task t acting with credentials c (its own, or access(2)'s), which
// guards process_vm_readv/writev (with c's real ids) and the /proc files
// that show a process's memory (with its filesystem ids, fsCreds:
// PTRACE_MODE_FSCREDS): a thread of the same process always may;
// otherwise c's uid and gid must equal each of target's real,
// effective and saved ids, or c must hold CAP_SYS_PTRACE, and a
// non-dumpable target needs CAP_SYS_PTRACE as well, over the user
// namespace its address space was made in (at its execve: Linux's
// mm->user_ns), not the one it is in now, so that unsharing a user
// namespace does not open a non-dumpable process to the new namespace's
// owner. There is no Yama policy in the sandbox.
func ptraceMayAccess(t *Task, c *auth.Credentials, target *Task, fsCreds bool) bool {
	if t.tg == target.tg {
		return true
	}
	tc := target.Credentials()
	// CAP_SYS_PTRACE over the target's user namespace.
	capable := c.HasCapabilityIn(unix.CAP_SYS_PTRACE, tc.UserNamespace)
	uid, gid := c.RealUID, c.RealGID
	if fsCreds {
		uid, gid = c.FilesystemUID, c.FilesystemGID
	}
	sameIDs := uid == tc.RealUID && uid == tc.EffectiveUID && uid == tc.SavedUID &&
		gid == tc.RealGID && gid == tc.EffectiveGID && gid == tc.SavedGID
	if !sameIDs && !capable {
		return false
	}
	return target.Dumpable() || c.HasCapabilityIn(unix.CAP_SYS_PTRACE, target.tg.procAttrs.userNS.Load())
}
