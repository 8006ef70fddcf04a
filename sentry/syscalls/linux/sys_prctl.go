package linux

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// secbitKeepCaps is SECBIT_KEEP_CAPS, the only securebit Moat models.
const secbitKeepCaps = 1 << 4

// taskCommLen is TASK_COMM_LEN.
const taskCommLen = 16

// prctlLogged remembers which unsupported prctl options were logged.
var prctlLogged sync.Map

// prctlUnsupported logs an unsupported option once and returns EINVAL.
func prctlUnsupported(t *kernel.Task, option int32, why string) (uintptr, error) {
	if _, dup := prctlLogged.LoadOrStore(option, true); !dup {
		t.Log().Info("prctl: unsupported option", "option", option, "why", why)
	}
	return 0, unix.EINVAL
}

// copyInComm reads the name PR_SET_NAME names: at most 15 bytes, up to a
// NUL. Bytes past the NUL are not touched, as strncpy_from_user.
func copyInComm(t *kernel.Task, addr uintptr) (string, error) {
	var b [taskCommLen - 1]byte
	n, err := t.CopyInBytes(addr, b[:])
	for i := 0; i < n; i++ {
		if b[i] == 0 {
			return string(b[:i]), nil
		}
	}
	if err != nil {
		return "", unix.EFAULT
	}
	return string(b[:]), nil
}

// boolRet returns 1 for true and 0 for false.
func boolRet(v bool) uintptr {
	if v {
		return 1
	}
	return 0
}

// Prctl implements prctl(2).
func Prctl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	option := a[0].Int()
	arg2, arg3, arg4, arg5 := a[1].Uint64(), a[2].Uint64(), a[3].Uint64(), a[4].Uint64()
	switch option {
	case unix.PR_SET_PDEATHSIG:
		if arg2 > uint64(kernel.SignalMaximum) {
			return 0, unix.EINVAL
		}
		t.SetPDeathSignal(kernel.Signal(arg2))
		return 0, nil
	case unix.PR_GET_PDEATHSIG:
		return 0, copyOutUint32(t, a[1].Pointer(), uint32(t.PDeathSignal()))

	case unix.PR_GET_DUMPABLE:
		return boolRet(t.Dumpable()), nil
	case unix.PR_SET_DUMPABLE:
		if arg2 > 1 {
			return 0, unix.EINVAL
		}
		t.SetDumpable(arg2 == 1)
		return 0, nil

	case unix.PR_SET_NAME:
		name, err := copyInComm(t, a[1].Pointer())
		if err != nil {
			return 0, err
		}
		t.SetName(name)
		return 0, nil
	case unix.PR_GET_NAME:
		var b [taskCommLen]byte
		copy(b[:taskCommLen-1], t.Name())
		if _, err := t.CopyOutBytes(a[1].Pointer(), b[:]); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil

	case unix.PR_SET_NO_NEW_PRIVS:
		if arg2 != 1 || arg3 != 0 || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		t.SetNoNewPrivs()
		return 0, nil
	case unix.PR_GET_NO_NEW_PRIVS:
		if arg2 != 0 || arg3 != 0 || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		return boolRet(t.NoNewPrivs()), nil

	case unix.PR_SET_KEEPCAPS:
		if arg2 > 1 {
			return 0, unix.EINVAL
		}
		t.SetKeepCaps(arg2 == 1)
		return 0, nil
	case unix.PR_GET_KEEPCAPS:
		return boolRet(t.Credentials().KeepCaps), nil
	case unix.PR_GET_SECUREBITS:
		if t.Credentials().KeepCaps {
			return secbitKeepCaps, nil
		}
		return 0, nil
	case unix.PR_SET_SECUREBITS:
		// CAP_SETPCAP in the caller's own user namespace.
		if !t.Credentials().HasOwnCapability(unix.CAP_SETPCAP) {
			return 0, unix.EPERM
		}
		if arg2&^secbitKeepCaps != 0 {
			return prctlUnsupported(t, option, "only SECBIT_KEEP_CAPS is supported")
		}
		t.SetKeepCaps(arg2 != 0)
		return 0, nil

	case unix.PR_CAPBSET_READ:
		if arg2 > unix.CAP_LAST_CAP {
			return 0, unix.EINVAL
		}
		return boolRet(t.Credentials().BoundingCaps.Has(uint(arg2))), nil
	case unix.PR_CAPBSET_DROP:
		return 0, t.DropBoundingCapability(arg2)
	case unix.PR_CAP_AMBIENT:
		if arg2 == unix.PR_CAP_AMBIENT_CLEAR_ALL {
			if arg3 != 0 || arg4 != 0 || arg5 != 0 {
				return 0, unix.EINVAL
			}
			return 0, t.SetAmbientCapability(arg2, 0)
		}
		if arg3 > unix.CAP_LAST_CAP || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		if arg2 == unix.PR_CAP_AMBIENT_IS_SET {
			return boolRet(t.Credentials().AmbientCaps.Has(uint(arg3))), nil
		}
		return 0, t.SetAmbientCapability(arg2, arg3)

	case unix.PR_SET_CHILD_SUBREAPER:
		t.ThreadGroup().SetChildSubreaper(arg2 != 0)
		return 0, nil
	case unix.PR_GET_CHILD_SUBREAPER:
		return 0, copyOutUint32(t, a[1].Pointer(), uint32(boolRet(t.ThreadGroup().ChildSubreaper())))

	case unix.PR_GET_TIMERSLACK:
		return uintptr(t.TimerSlack()), nil
	case unix.PR_SET_TIMERSLACK:
		t.SetTimerSlack(arg2)
		return 0, nil

	case unix.PR_GET_SECCOMP:
		return uintptr(t.SeccompMode()), nil
	case unix.PR_SET_SECCOMP:
		switch arg2 {
		case unix.SECCOMP_MODE_STRICT:
			// The filter argument is ignored, as on Linux.
			return doSeccomp(t, unix.SECCOMP_SET_MODE_STRICT, 0, 0)
		case unix.SECCOMP_MODE_FILTER:
			return doSeccomp(t, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(arg3))
		}
		return 0, unix.EINVAL

	case unix.PR_SET_MM:
		return 0, unix.EPERM
	case unix.PR_GET_TID_ADDRESS:
		return 0, copyOutUint64(t, a[1].Pointer(), uint64(t.ClearChildTID()))
	case unix.PR_SET_VMA:
		// As a kernel without CONFIG_ANON_VMA_NAME.
		return 0, unix.EINVAL

	case unix.PR_MCE_KILL:
		if arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		switch arg2 {
		case unix.PR_MCE_KILL_CLEAR:
			if arg3 != 0 {
				return 0, unix.EINVAL
			}
			t.SetMCEKillPolicy(unix.PR_MCE_KILL_DEFAULT)
		case unix.PR_MCE_KILL_SET:
			if arg3 != unix.PR_MCE_KILL_EARLY && arg3 != unix.PR_MCE_KILL_LATE && arg3 != unix.PR_MCE_KILL_DEFAULT {
				return 0, unix.EINVAL
			}
			t.SetMCEKillPolicy(int32(arg3))
		default:
			return 0, unix.EINVAL
		}
		return 0, nil
	case unix.PR_MCE_KILL_GET:
		if arg2 != 0 || arg3 != 0 || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		return uintptr(t.MCEKillPolicy()), nil

	case unix.PR_GET_THP_DISABLE:
		if arg2 != 0 || arg3 != 0 || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		return boolRet(t.ThreadGroup().THPDisabled()), nil
	case unix.PR_SET_THP_DISABLE:
		if arg3 != 0 || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		t.ThreadGroup().SetTHPDisabled(arg2 != 0)
		return 0, nil

	case unix.PR_SET_PTRACER:
		// Nothing can ptrace inside the sandbox; accept what Yama accepts.
		if arg2 != 0 && arg2 != unix.PR_SET_PTRACER_ANY && t.LookupTask(kernel.ThreadID(int32(arg2))) == nil {
			return 0, unix.EINVAL
		}
		return 0, nil

	case unix.PR_GET_TSC:
		return 0, copyOutUint32(t, a[1].Pointer(), unix.PR_TSC_ENABLE)
	case unix.PR_SET_TSC:
		if arg2 == unix.PR_TSC_ENABLE {
			return 0, nil
		}
		return prctlUnsupported(t, option, "rdtsc cannot be made to fault")

	case unix.PR_TASK_PERF_EVENTS_DISABLE, unix.PR_TASK_PERF_EVENTS_ENABLE:
		return 0, nil
	case unix.PR_GET_TIMING:
		return unix.PR_TIMING_STATISTICAL, nil
	case unix.PR_SET_TIMING:
		if arg2 != unix.PR_TIMING_STATISTICAL {
			return 0, unix.EINVAL
		}
		return 0, nil

	case unix.PR_GET_SPECULATION_CTRL:
		if arg3 != 0 || arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		switch arg2 {
		case unix.PR_SPEC_STORE_BYPASS, unix.PR_SPEC_INDIRECT_BRANCH:
			// Speculation is on and not controllable per task.
			return unix.PR_SPEC_ENABLE, nil
		case unix.PR_SPEC_L1D_FLUSH:
			return unix.PR_SPEC_FORCE_DISABLE, nil
		}
		return 0, unix.ENODEV
	case unix.PR_SET_SPECULATION_CTRL:
		if arg4 != 0 || arg5 != 0 {
			return 0, unix.EINVAL
		}
		switch arg2 {
		case unix.PR_SPEC_STORE_BYPASS, unix.PR_SPEC_INDIRECT_BRANCH, unix.PR_SPEC_L1D_FLUSH:
			return 0, unix.ENXIO
		}
		return 0, unix.ENODEV
	}
	return prctlUnsupported(t, option, "unknown option")
}
