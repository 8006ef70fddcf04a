package kernel

// Application seccomp (seccomp(2), PR_SET_SECCOMP).
//
// A task's seccomp state is an immutable seccompState behind an atomic
// pointer (Task.seccomp): nil while seccomp is off, so a task without
// filters pays one nil check per syscall. A filter chain is a list linked
// from the newest filter to the oldest; tasks share chains, a child gets
// its parent's pointer at clone and exec keeps it. Installing a filter
// makes a new head whose prev is the old chain, so a chain never changes
// once visible. Changes happen under k.mu (which also serializes them with
// clone and with TSYNC from another thread); the syscall path only loads
// the pointer.

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/bpf"
)

// Seccomp modes, as PR_GET_SECCOMP and /proc/[pid]/status report them.
const (
	SeccompModeDisabled = 0
	SeccompModeStrict   = 1
	SeccompModeFilter   = 2
)

// Filter flags of seccomp(SECCOMP_SET_MODE_FILTER) that Moat implements.
const (
	SeccompFlagTSync      = unix.SECCOMP_FILTER_FLAG_TSYNC
	SeccompFlagLog        = unix.SECCOMP_FILTER_FLAG_LOG
	SeccompFlagSpecAllow  = unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW
	SeccompFlagTSyncESRCH = unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
)

// seccompMaxPathInsns is MAX_INSNS_PER_PATH: the limit on the instructions
// of a task's filters, each counted with a penalty of 4.
const seccompMaxPathInsns = 1 << 15

// SYS_SECCOMP, the si_code of a SIGSYS raised by SECCOMP_RET_TRAP.
const sysSeccomp = 1

// maxErrno is MAX_ERRNO: larger SECCOMP_RET_ERRNO data is capped to it.
const maxErrno = 4095

// seccompFilter is one installed filter and the chain below it.
type seccompFilter struct {
	prog bpf.Program
	// log is SECCOMP_FILTER_FLAG_LOG: actions other than allow are logged.
	log  bool
	prev *seccompFilter
	// count is the number of filters in the chain ending here, and insns
	// their instructions with the per-filter penalty.
	count int
	insns int
}

// seccompState is a task's seccomp mode and filters. Immutable.
type seccompState struct {
	mode   int
	filter *seccompFilter
}

var seccompStrict = &seccompState{mode: SeccompModeStrict}

// SeccompMode returns PR_GET_SECCOMP's value.
func (t *Task) SeccompMode() int {
	if s := t.seccomp.Load(); s != nil {
		return s.mode
	}
	return SeccompModeDisabled
}

// SeccompFilterCount returns the number of filters the task runs.
func (t *Task) SeccompFilterCount() int {
	if s := t.seccomp.Load(); s != nil && s.filter != nil {
		return s.filter.count
	}
	return 0
}

// SetSeccompStrict puts the calling task (only it, not its threads) in
// strict mode: from now on any syscall other than read, write, exit and
// rt_sigreturn kills it. EINVAL if it already runs filters.
func (t *Task) SetSeccompStrict() error {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	if m := t.SeccompMode(); m != SeccompModeDisabled && m != SeccompModeStrict {
		return unix.EINVAL
	}
	t.seccomp.Store(seccompStrict)
	return nil
}

// AttachSeccompFilter adds p to the task's filters, with flags a subset of
// the SeccompFlag values (the caller has checked them, and the
// no_new_privs or CAP_SYS_ADMIN requirement). With SeccompFlagTSync every
// other thread of the group gets the same filters (and no_new_privs, if
// the caller has it); if one cannot, because it runs filters that are not
// an ancestor of the caller's or is in strict mode, nothing changes and
// its id is returned (or ESRCH with SeccompFlagTSyncESRCH).
// Errors: EINVAL in strict mode, ENOMEM past the instruction limit.
func (t *Task) AttachSeccompFilter(p bpf.Program, flags uint32) (ThreadID, error) {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	cur := t.seccomp.Load()
	var prev *seccompFilter
	if cur != nil {
		if cur.mode != SeccompModeFilter {
			return 0, unix.EINVAL
		}
		prev = cur.filter
	}
	insns := p.Len()
	count := 1
	if prev != nil {
		insns += prev.insns + 4
		count += prev.count
	}
	if insns > seccompMaxPathInsns {
		return 0, unix.ENOMEM
	}
	if flags&SeccompFlagTSync != 0 {
		for o := range t.tg.tasks {
			if o == t || o.exitState != taskRunning {
				continue
			}
			os := o.seccomp.Load()
			if os == nil || (os.mode == SeccompModeFilter && os.filter.isAncestorOf(prev)) {
				continue
			}
			if flags&SeccompFlagTSyncESRCH != 0 {
				return 0, unix.ESRCH
			}
			return o.tid, nil
		}
	}
	ns := &seccompState{mode: SeccompModeFilter, filter: &seccompFilter{
		prog:  p,
		log:   flags&SeccompFlagLog != 0,
		prev:  prev,
		count: count,
		insns: insns,
	}}
	t.seccomp.Store(ns)
	if flags&SeccompFlagTSync != 0 {
		nnp := t.NoNewPrivs()
		for o := range t.tg.tasks {
			if o == t || o.exitState != taskRunning {
				continue
			}
			o.seccomp.Store(ns)
			if nnp {
				o.SetNoNewPrivs()
			}
		}
	}
	return 0, nil
}

// isAncestorOf reports whether f is c or one of the filters below c. A nil
// f (no filters) is everyone's ancestor.
func (f *seccompFilter) isAncestorOf(c *seccompFilter) bool {
	if f == nil {
		return true
	}
	for ; c != nil; c = c.prev {
		if c == f {
			return true
		}
	}
	return false
}

// actionRank orders seccomp return values: the lowest rank wins, as
// Linux compares the actions as signed numbers (KILL_PROCESS, KILL_THREAD,
// TRAP, ERRNO, USER_NOTIF, TRACE, LOG, ALLOW).
func actionRank(ret uint32) int32 { return int32(ret & unix.SECCOMP_RET_ACTION_FULL) }

// runSeccomp runs every filter of s on the syscall and returns the winning
// return value and the filter that gave it. Among equal actions the newest
// filter's data wins.
func (t *Task) runSeccomp(s *seccompState, sysno uintptr, args *arch.SyscallArguments) (uint32, *seccompFilter) {
	d := bpf.Data{Nr: int32(sysno), Arch: unix.AUDIT_ARCH_X86_64, InstructionPointer: t.regs.Rip}
	for i, a := range args {
		d.Args[i] = uint64(a)
	}
	ret := uint32(unix.SECCOMP_RET_ALLOW)
	var match *seccompFilter
	for f := s.filter; f != nil; f = f.prev {
		if r := f.prog.Run(&d); actionRank(r) < actionRank(ret) {
			ret, match = r, f
		}
	}
	return ret, match
}

// checkSeccomp applies the task's seccomp state s to the syscall about to
// run. With run true the syscall goes ahead; otherwise rv and err are its
// result, as the dispatcher reads a handler's (errTaskExited when the
// task was killed, ErrNoSyscallReturn when the registers are already
// set).
func (t *Task) checkSeccomp(s *seccompState, sysno uintptr, args *arch.SyscallArguments) (rv uintptr, run bool, err error) {
	if s.mode == SeccompModeStrict {
		switch sysno {
		case unix.SYS_READ, unix.SYS_WRITE, unix.SYS_EXIT, unix.SYS_RT_SIGRETURN:
			return 0, true, nil
		}
		t.k.Log.Info("seccomp: strict mode killed the task", "tid", t.tid, "syscall", sysno)
		t.exit(KilledBy(SIGKILL, false), false)
		return 0, false, errTaskExited
	}
	ret, f := t.runSeccomp(s, sysno, args)
	data := ret & unix.SECCOMP_RET_DATA
	switch ret & unix.SECCOMP_RET_ACTION_FULL {
	case unix.SECCOMP_RET_ALLOW:
		return 0, true, nil
	case unix.SECCOMP_RET_LOG:
		t.k.Log.Info("seccomp: logged syscall", "tid", t.tid, "syscall", sysno)
		return 0, true, nil
	case unix.SECCOMP_RET_ERRNO:
		t.logSeccomp(f, "errno", sysno)
		if data > maxErrno {
			data = maxErrno
		}
		if data == 0 {
			return 0, false, nil
		}
		return 0, false, unix.Errno(data)
	case unix.SECCOMP_RET_TRAP:
		t.logSeccomp(f, "trap", sysno)
		// The handler sees the registers of the syscall entry.
		t.regs.Rax = t.regs.Orig_rax
		t.ForceSignal(seccompSigsys(t.regs.Rip, int32(sysno), data))
		return 0, false, ErrNoSyscallReturn
	case unix.SECCOMP_RET_TRACE, unix.SECCOMP_RET_USER_NOTIF:
		// No tracer can attach and no listener can exist: Linux
		// answers ENOSYS for both then.
		t.logSeccomp(f, "trace or user_notif", sysno)
		return 0, false, unix.ENOSYS
	case unix.SECCOMP_RET_KILL_THREAD:
		t.k.Log.Info("seccomp: filter killed the thread", "tid", t.tid, "syscall", sysno)
		t.exit(KilledBy(SIGSYS, false), false)
		return 0, false, errTaskExited
	default:
		// SECCOMP_RET_KILL_PROCESS, and any value Linux does not know.
		t.k.Log.Info("seccomp: filter killed the process", "tid", t.tid, "syscall", sysno, "ret", ret)
		t.exit(KilledBy(SIGSYS, false), true)
		return 0, false, errTaskExited
	}
}

// logSeccomp logs an action of a filter installed with
// SECCOMP_FILTER_FLAG_LOG.
func (t *Task) logSeccomp(f *seccompFilter, action string, sysno uintptr) {
	if f != nil && f.log {
		t.k.Log.Info("seccomp: filter action", "tid", t.tid, "action", action, "syscall", sysno)
	}
}

// seccompSigsys returns the siginfo of SECCOMP_RET_TRAP: SIGSYS with
// si_code SYS_SECCOMP, si_errno the filter's data, si_call_addr,
// si_syscall and si_arch.
func seccompSigsys(callAddr uint64, nr int32, data uint32) *SignalInfo {
	i := NewSignalInfo(SIGSYS, sysSeccomp)
	binary.LittleEndian.PutUint32(i.Raw[4:], data)
	binary.LittleEndian.PutUint64(i.Raw[16:], callAddr)
	binary.LittleEndian.PutUint32(i.Raw[24:], uint32(nr))
	binary.LittleEndian.PutUint32(i.Raw[28:], unix.AUDIT_ARCH_X86_64)
	return i
}
