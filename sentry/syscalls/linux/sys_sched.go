package linux

import (
	"encoding/binary"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// SchedYield implements sched_yield(2).
func SchedYield(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	runtime.Gosched()
	return 0, nil
}

// taskByPID returns the task a scheduling syscall names: 0 is the caller,
// any other id a thread (not only a process leader), as find_process_by_pid.
func taskByPID(t *kernel.Task, pid int32) (*kernel.Task, error) {
	if pid == 0 {
		return t, nil
	}
	o := t.LookupTask(kernel.ThreadID(pid))
	if o == nil {
		return nil, unix.ESRCH
	}
	return o, nil
}

// sameOwner is check_same_owner: the caller's effective uid is the
// target's real or effective uid.
func sameOwner(c, target *auth.Credentials) bool {
	return c.EffectiveUID == target.EffectiveUID || c.EffectiveUID == target.RealUID
}

// canNice is can_nice: target may get nice value nice without privilege
// if its RLIMIT_NICE allows, or the caller has CAP_SYS_NICE.
func canNice(t, target *kernel.Task, nice int32) bool {
	return uint64(20-nice) <= target.ThreadGroup().Limits().Get(unix.RLIMIT_NICE).Cur ||
		t.Credentials().HasCapability(unix.CAP_SYS_NICE)
}

// cpuMaskBytes is the size of a CPU mask the kernel copies out: whole
// longs covering every CPU (cpumask_size with CONFIG_CPUMASK_OFFSTACK).
func cpuMaskBytes() int { return 8 * ((kernel.NumCPUs() + 63) / 64) }

// SchedGetaffinity implements sched_getaffinity(2). It returns the number
// of bytes written.
func SchedGetaffinity(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, size, addr := a[0].Int(), a[1].Uint(), a[2].Pointer()
	if uint64(size)*8 < uint64(kernel.NumCPUs()) || size%8 != 0 {
		return 0, unix.EINVAL
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	n := min(int(size), cpuMaskBytes())
	b := make([]byte, n)
	for i, w := range target.Affinity() {
		if 8*i+8 <= n {
			binary.LittleEndian.PutUint64(b[8*i:], w)
		}
	}
	if _, err := t.CopyOutBytes(addr, b); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(n), nil
}

// SchedSetaffinity implements sched_setaffinity(2). A short mask is
// extended with zeros, a long one truncated.
func SchedSetaffinity(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, size, addr := a[0].Int(), a[1].Uint(), a[2].Pointer()
	b := make([]byte, cpuMaskBytes())
	if n := min(int(size), len(b)); n > 0 {
		if _, err := t.CopyInBytes(addr, b[:n]); err != nil {
			return 0, unix.EFAULT
		}
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	c, tc := t.Credentials(), target.Credentials()
	// CAP_SYS_NICE over the target's user namespace.
	if !sameOwner(c, tc) && !c.HasCapabilityIn(unix.CAP_SYS_NICE, tc.UserNamespace) {
		return 0, unix.EPERM
	}
	mask := make(kernel.CPUSet, len(b)/8)
	for i := range mask {
		mask[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return 0, target.SetAffinity(mask)
}

// Getcpu implements getcpu(2): the lowest CPU the caller may run on (CPU 0
// unless its affinity excludes it, agreeing with the vDSO), node 0.
func Getcpu(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	cpuAddr, nodeAddr := a[0].Pointer(), a[1].Pointer()
	if cpuAddr != 0 {
		if err := copyOutUint32(t, cpuAddr, uint32(t.Affinity().First())); err != nil {
			return 0, unix.EFAULT
		}
	}
	if nodeAddr != 0 {
		if err := copyOutUint32(t, nodeAddr, 0); err != nil {
			return 0, unix.EFAULT
		}
	}
	return 0, nil
}

// validPolicy reports whether p is a policy Linux accepts.
func validPolicy(p int32) bool {
	switch p {
	case unix.SCHED_NORMAL, unix.SCHED_FIFO, unix.SCHED_RR, unix.SCHED_BATCH, unix.SCHED_IDLE, unix.SCHED_DEADLINE:
		return true
	}
	return false
}

func rtPolicy(p int32) bool   { return p == unix.SCHED_FIFO || p == unix.SCHED_RR }
func fairPolicy(p int32) bool { return p == unix.SCHED_NORMAL || p == unix.SCHED_BATCH }

// setParamPolicy is SETPARAM_POLICY: keep the current policy.
const setParamPolicy = -1

// schedAttr is struct sched_attr.
type schedAttr struct {
	Size     uint32
	Policy   uint32
	Flags    uint64
	Nice     int32
	Priority uint32
	Runtime  uint64
	Deadline uint64
	Period   uint64
	UtilMin  uint32
	UtilMax  uint32
}

// sched_attr sizes.
const (
	schedAttrSizeVer0 = 48
	schedAttrSizeVer1 = 56
	schedAttrSize     = schedAttrSizeVer1
)

func (s *schedAttr) marshal() []byte {
	b := make([]byte, schedAttrSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], s.Size)
	le.PutUint32(b[4:], s.Policy)
	le.PutUint64(b[8:], s.Flags)
	le.PutUint32(b[16:], uint32(s.Nice))
	le.PutUint32(b[20:], s.Priority)
	le.PutUint64(b[24:], s.Runtime)
	le.PutUint64(b[32:], s.Deadline)
	le.PutUint64(b[40:], s.Period)
	le.PutUint32(b[48:], s.UtilMin)
	le.PutUint32(b[52:], s.UtilMax)
	return b
}

func unmarshalSchedAttr(b []byte) schedAttr {
	le := binary.LittleEndian
	return schedAttr{
		Size: le.Uint32(b[0:]), Policy: le.Uint32(b[4:]), Flags: le.Uint64(b[8:]),
		Nice: int32(le.Uint32(b[16:])), Priority: le.Uint32(b[20:]),
		Runtime: le.Uint64(b[24:]), Deadline: le.Uint64(b[32:]), Period: le.Uint64(b[40:]),
		UtilMin: le.Uint32(b[48:]), UtilMax: le.Uint32(b[52:]),
	}
}

// deadlineParamsValid is __checkparam_dl with the default
// sched_deadline_period_{min,max}_us (100 us, 4194304 us).
func deadlineParamsValid(s *schedAttr) bool {
	if s.Deadline == 0 || s.Runtime < 1<<10 || s.Deadline&(1<<63) != 0 || s.Period&(1<<63) != 0 {
		return false
	}
	period := s.Period
	if period == 0 {
		period = s.Deadline
	}
	if period < s.Deadline || s.Deadline < s.Runtime {
		return false
	}
	return period >= 100_000 && period <= 4194304_000
}

// setScheduler is __sched_setscheduler for a caller in user space: it
// validates s (policy setParamPolicy keeps target's), checks permission
// and installs the result. Nice is applied only for fair policies.
func setScheduler(t, target *kernel.Task, s *schedAttr) error {
	cur := target.SchedParams()
	policy := int32(s.Policy)
	resetOnFork := s.Flags&unix.SCHED_FLAG_RESET_ON_FORK != 0
	if s.Flags&^unix.SCHED_FLAG_ALL != 0 {
		return unix.EINVAL
	}
	if policy == setParamPolicy {
		policy = cur.Policy
		resetOnFork = cur.ResetOnFork
	} else if !validPolicy(policy) {
		return unix.EINVAL
	}
	if s.Priority > kernel.MaxRTPriority {
		return unix.EINVAL
	}
	if (policy == unix.SCHED_DEADLINE && !deadlineParamsValid(s)) || rtPolicy(policy) != (s.Priority != 0) {
		return unix.EINVAL
	}
	prio := int32(s.Priority)
	c := t.Credentials()
	if !c.HasCapability(unix.CAP_SYS_NICE) {
		if fairPolicy(policy) && s.Nice < cur.Nice && !canNice(t, target, s.Nice) {
			return unix.EPERM
		}
		if rtPolicy(policy) {
			rlim := target.ThreadGroup().Limits().Get(unix.RLIMIT_RTPRIO).Cur
			if policy != cur.Policy && rlim == 0 {
				return unix.EPERM
			}
			if prio > cur.Priority && uint64(prio) > rlim {
				return unix.EPERM
			}
		}
		if policy == unix.SCHED_DEADLINE {
			return unix.EPERM
		}
		if cur.Policy == unix.SCHED_IDLE && policy != unix.SCHED_IDLE && !canNice(t, target, cur.Nice) {
			return unix.EPERM
		}
		if !sameOwner(c, target.Credentials()) {
			return unix.EPERM
		}
		if cur.ResetOnFork && !resetOnFork {
			return unix.EPERM
		}
	}
	if policy == unix.SCHED_DEADLINE {
		// Deadline scheduling cannot be honoured on Go's scheduler.
		t.Log().Info("sched_setattr: SCHED_DEADLINE is not supported")
		return unix.EPERM
	}
	if s.Flags&unix.SCHED_FLAG_UTIL_CLAMP != 0 {
		// As a kernel without CONFIG_UCLAMP_TASK.
		return unix.EOPNOTSUPP
	}
	if s.Flags&unix.SCHED_FLAG_KEEP_PARAMS != 0 {
		// The policy is set with the parameters, so it stays too
		// (Linux's __sched_setscheduler skips __setscheduler_params);
		// only the reset-on-fork flag changes.
		n := cur
		n.ResetOnFork = resetOnFork
		target.SetSchedParams(n)
		return nil
	}
	n := kernel.SchedParams{Policy: policy, Priority: prio, Nice: cur.Nice, ResetOnFork: resetOnFork}
	if fairPolicy(policy) {
		n.Nice = max(kernel.MinNice, min(kernel.MaxNice, s.Nice))
	}
	target.SetSchedParams(n)
	return nil
}

// schedSetscheduler is do_sched_setscheduler.
func schedSetscheduler(t *kernel.Task, pid, policy int32, paramAddr uintptr) error {
	if paramAddr == 0 || pid < 0 {
		return unix.EINVAL
	}
	prio, err := copyInUint32(t, paramAddr)
	if err != nil {
		return unix.EFAULT
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return err
	}
	s := &schedAttr{Policy: uint32(policy), Priority: prio, Nice: target.Nice()}
	if policy != setParamPolicy && policy&unix.SCHED_RESET_ON_FORK != 0 {
		s.Flags |= unix.SCHED_FLAG_RESET_ON_FORK
		s.Policy = uint32(policy &^ unix.SCHED_RESET_ON_FORK)
	}
	return setScheduler(t, target, s)
}

// SchedSetscheduler implements sched_setscheduler(2).
func SchedSetscheduler(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	policy := a[1].Int()
	if policy < 0 {
		return 0, unix.EINVAL
	}
	return 0, schedSetscheduler(t, a[0].Int(), policy, a[2].Pointer())
}

// SchedSetparam implements sched_setparam(2).
func SchedSetparam(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, schedSetscheduler(t, a[0].Int(), setParamPolicy, a[1].Pointer())
}

// SchedGetscheduler implements sched_getscheduler(2).
func SchedGetscheduler(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid := a[0].Int()
	if pid < 0 {
		return 0, unix.EINVAL
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	p := target.SchedParams()
	r := uintptr(p.Policy)
	if p.ResetOnFork {
		r |= unix.SCHED_RESET_ON_FORK
	}
	return r, nil
}

// SchedGetparam implements sched_getparam(2).
func SchedGetparam(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, addr := a[0].Int(), a[1].Pointer()
	if addr == 0 || pid < 0 {
		return 0, unix.EINVAL
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	var prio uint32
	if p := target.SchedParams(); p.IsRealtime() {
		prio = uint32(p.Priority)
	}
	if err := copyOutUint32(t, addr, prio); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// SchedGetPriorityMax implements sched_get_priority_max(2).
func SchedGetPriorityMax(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	switch p := a[0].Int(); {
	case rtPolicy(p):
		return kernel.MaxRTPriority, nil
	case validPolicy(p):
		return 0, nil
	}
	return 0, unix.EINVAL
}

// SchedGetPriorityMin implements sched_get_priority_min(2).
func SchedGetPriorityMin(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	switch p := a[0].Int(); {
	case rtPolicy(p):
		return 1, nil
	case validPolicy(p):
		return 0, nil
	}
	return 0, unix.EINVAL
}

// SchedRrGetInterval implements sched_rr_get_interval(2): SCHED_RR's
// 100 ms quantum, 0 for every other policy.
func SchedRrGetInterval(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, addr := a[0].Int(), a[1].Pointer()
	if pid < 0 {
		return 0, unix.EINVAL
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	var ns int64
	if target.SchedParams().Policy == unix.SCHED_RR {
		ns = kernel.RRTimeslice
	}
	if err := copyOutTimespec(t, addr, timespecFromNanos(ns)); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// SchedGetattr implements sched_getattr(2).
func SchedGetattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, addr, size, flags := a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Uint()
	if addr == 0 || pid < 0 || size > 4096 || size < schedAttrSizeVer0 || flags != 0 {
		return 0, unix.EINVAL
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	p := target.SchedParams()
	s := schedAttr{Size: min(size, schedAttrSize), Policy: uint32(p.Policy)}
	if p.ResetOnFork {
		s.Flags |= unix.SCHED_FLAG_RESET_ON_FORK
	}
	if p.IsRealtime() {
		s.Priority = uint32(p.Priority)
	} else {
		s.Nice = p.Nice
	}
	// copy_struct_to_user: the kernel's struct, then zeros up to the
	// caller's size.
	b := make([]byte, size)
	copy(b, s.marshal()[:s.Size])
	if _, err := t.CopyOutBytes(addr, b); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// copyInSchedAttr is sched_copy_attr: the size field says how much the
// caller passed; a bad size is answered with E2BIG and the kernel's size
// written back.
func copyInSchedAttr(t *kernel.Task, addr uintptr) (schedAttr, error) {
	size, err := copyInUint32(t, addr)
	if err != nil {
		return schedAttr{}, unix.EFAULT
	}
	if size == 0 {
		size = schedAttrSizeVer0
	}
	tooBig := func() (schedAttr, error) {
		if err := copyOutUint32(t, addr, schedAttrSize); err != nil {
			return schedAttr{}, unix.EFAULT
		}
		return schedAttr{}, unix.E2BIG
	}
	if size < schedAttrSizeVer0 || size > 4096 {
		return tooBig()
	}
	b := make([]byte, size)
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return schedAttr{}, unix.EFAULT
	}
	for _, c := range b[min(int(size), schedAttrSize):] {
		if c != 0 {
			return tooBig()
		}
	}
	full := make([]byte, schedAttrSize)
	copy(full, b)
	s := unmarshalSchedAttr(full)
	if s.Flags&unix.SCHED_FLAG_UTIL_CLAMP != 0 && size < schedAttrSizeVer1 {
		return schedAttr{}, unix.EINVAL
	}
	s.Nice = max(kernel.MinNice, min(kernel.MaxNice, s.Nice))
	return s, nil
}

// SchedSetattr implements sched_setattr(2).
func SchedSetattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, addr, flags := a[0].Int(), a[1].Pointer(), a[2].Uint()
	if addr == 0 || pid < 0 || flags != 0 {
		return 0, unix.EINVAL
	}
	s, err := copyInSchedAttr(t, addr)
	if err != nil {
		return 0, err
	}
	if int32(s.Policy) < 0 {
		return 0, unix.EINVAL
	}
	if s.Flags&unix.SCHED_FLAG_KEEP_POLICY != 0 {
		s.Policy = uint32(setParamPolicy & 0xffffffff)
	}
	target, err := taskByPID(t, pid)
	if err != nil {
		return 0, err
	}
	if s.Flags&unix.SCHED_FLAG_KEEP_PARAMS != 0 {
		p := target.SchedParams()
		s.Priority = uint32(p.Priority)
		s.Nice = p.Nice
	}
	return 0, setScheduler(t, target, &s)
}

// Priority targets.
const (
	byTask = iota
	byGroup
	byUser
)

// prioTargets lists the tasks a getpriority/setpriority/ioprio call
// names: one thread, every thread of a process group, or every thread of
// a user's (by real uid).
func prioTargets(t *kernel.Task, kind int, who int32, uid uint32) []*kernel.Task {
	switch kind {
	case byTask:
		target, err := taskByPID(t, who)
		if err != nil {
			return nil
		}
		return []*kernel.Task{target}
	case byGroup:
		pgid := kernel.ThreadID(who)
		if who == 0 {
			pgid = t.PIDNamespace().ProcessGroupIDOf(t.ThreadGroup())
		}
		ns := t.PIDNamespace()
		var out []*kernel.Task
		for _, tg := range ns.ThreadGroups() {
			if ns.ProcessGroupIDOf(tg) == pgid {
				out = append(out, tg.Tasks()...)
			}
		}
		return out
	default:
		var out []*kernel.Task
		for _, tg := range t.Kernel().ThreadGroups() {
			for _, o := range tg.Tasks() {
				if uint32(o.Credentials().RealUID) == uid {
					out = append(out, o)
				}
			}
		}
		return out
	}
}

// prioKind maps getpriority's which, or EINVAL.
func prioKind(t *kernel.Task, which, who int32) (int, uint32, error) {
	switch which {
	case unix.PRIO_PROCESS:
		return byTask, 0, nil
	case unix.PRIO_PGRP:
		return byGroup, 0, nil
	case unix.PRIO_USER:
		// who is a uid of the caller's user namespace; one it does not
		// map names nobody (ESRCH).
		c := t.Credentials()
		k, ok := c.UserNamespace.MapToKUID(uint32(who))
		if who == 0 {
			k, ok = c.RealUID, true
		}
		if !ok {
			return byUser, auth.NoID, nil
		}
		return byUser, uint32(k), nil
	}
	return 0, 0, unix.EINVAL
}

// Getpriority implements getpriority(2). Like Linux it returns 20 - nice
// (1..40); the C library turns that back into a nice value.
func Getpriority(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	which, who := a[0].Int(), a[1].Int()
	kind, uid, err := prioKind(t, which, who)
	if err != nil {
		return 0, err
	}
	best := int32(-1)
	for _, o := range prioTargets(t, kind, who, uid) {
		best = max(best, 20-o.Nice())
	}
	if best < 0 {
		return 0, unix.ESRCH
	}
	return uintptr(best), nil
}

// Setpriority implements setpriority(2).
func Setpriority(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	which, who, nice := a[0].Int(), a[1].Int(), a[2].Int()
	kind, uid, err := prioKind(t, which, who)
	if err != nil {
		return 0, err
	}
	nice = max(kernel.MinNice, min(kernel.MaxNice, nice))
	c := t.Credentials()
	// As set_one_prio: the last failure wins, success clears only ESRCH.
	err = unix.ESRCH
	for _, o := range prioTargets(t, kind, who, uid) {
		oc := o.Credentials()
		switch {
		case oc.RealUID != c.EffectiveUID && oc.EffectiveUID != c.EffectiveUID && !c.HasCapabilityIn(unix.CAP_SYS_NICE, oc.UserNamespace):
			err = unix.EPERM
		case nice < o.Nice() && !canNice(t, o, nice):
			err = unix.EACCES
		default:
			if err == unix.ESRCH {
				err = nil
			}
			o.SetNice(nice)
		}
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}

// I/O priority classes and targets (linux/ioprio.h).
const (
	ioprioClassShift = 13
	ioprioClassNone  = 0
	ioprioClassRT    = 1
	ioprioClassBE    = 2
	ioprioClassIdle  = 3
	ioprioNrLevels   = 8
	ioprioLevelMask  = 7

	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
	ioprioWhoUser    = 3
)

// ioprioCheck is ioprio_check_cap. The low 3 bits are the level within
// the class; bits 3..12 are hints (Linux 6.5+), not checked.
func ioprioCheck(t *kernel.Task, prio int32) error {
	class := (prio >> ioprioClassShift) & 7
	level := prio & ioprioLevelMask
	switch class {
	case ioprioClassRT:
		c := t.Credentials()
		if !c.HasCapability(unix.CAP_SYS_NICE) && !c.HasCapability(unix.CAP_SYS_ADMIN) {
			return unix.EPERM
		}
		fallthrough
	case ioprioClassBE:
		if level >= ioprioNrLevels {
			return unix.EINVAL
		}
	case ioprioClassIdle:
	case ioprioClassNone:
		if level != 0 {
			return unix.EINVAL
		}
	default:
		return unix.EINVAL
	}
	return nil
}

// ioprioKind maps ioprio's which, or EINVAL. Linux takes who as the uid
// even when it is 0.
func ioprioKind(which, who int32) (int, uint32, error) {
	switch which {
	case ioprioWhoProcess:
		return byTask, 0, nil
	case ioprioWhoPgrp:
		return byGroup, 0, nil
	case ioprioWhoUser:
		return byUser, uint32(who), nil
	}
	return 0, 0, unix.EINVAL
}

// IoprioSet implements ioprio_set(2). The priority is stored and reported;
// the Sentry's I/O is not scheduled by it.
func IoprioSet(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	which, who, prio := a[0].Int(), a[1].Int(), a[2].Int()
	if err := ioprioCheck(t, prio); err != nil {
		return 0, err
	}
	kind, uid, err := ioprioKind(which, who)
	if err != nil {
		return 0, err
	}
	if kind == byUser && uid == auth.NoID {
		return 0, unix.ESRCH
	}
	c := t.Credentials()
	targets := prioTargets(t, kind, who, uid)
	if len(targets) == 0 {
		return 0, unix.ESRCH
	}
	for _, o := range targets {
		oc := o.Credentials()
		if oc.RealUID != c.EffectiveUID && oc.RealUID != c.RealUID && !c.HasCapability(unix.CAP_SYS_NICE) {
			return 0, unix.EPERM
		}
		o.SetIOPriority(prio)
	}
	return 0, nil
}

// IoprioGet implements ioprio_get(2): the best (lowest) priority of the
// named tasks.
func IoprioGet(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	which, who := a[0].Int(), a[1].Int()
	kind, uid, err := ioprioKind(which, who)
	if err != nil {
		return 0, err
	}
	best := int32(-1)
	for _, o := range prioTargets(t, kind, who, uid) {
		if p := o.IOPriority(); best < 0 || p < best {
			best = p
		}
	}
	if best < 0 {
		return 0, unix.ESRCH
	}
	return uintptr(best), nil
}
