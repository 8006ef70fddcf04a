package linux

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// minSigStackSize is MINSIGSTKSZ.
const minSigStackSize = 2048

// sigsetSize is the only sigsetsize Linux accepts on amd64.
const sigsetSize = 8

// RtSigaction implements rt_sigaction(2).
func RtSigaction(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	sig, actAddr, oldAddr, size := kernel.Signal(a[0].Int()), a[1].Pointer(), a[2].Pointer(), a[3].Uint64()
	if size != sigsetSize {
		return 0, unix.EINVAL
	}
	var act *kernel.SigAction
	if actAddr != 0 {
		b := make([]byte, 32)
		if _, err := t.CopyInBytes(actAddr, b); err != nil {
			return 0, err
		}
		a := kernel.UnmarshalSigAction(b)
		act = &a
	}
	old, err := t.SigAction(sig, act)
	if err != nil {
		return 0, err
	}
	if oldAddr != 0 {
		if _, err := t.CopyOutBytes(oldAddr, old.Marshal()); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// RtSigprocmask implements rt_sigprocmask(2).
func RtSigprocmask(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	how, setAddr, oldAddr, size := a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Uint64()
	if size != sigsetSize {
		return 0, unix.EINVAL
	}
	old := t.SignalMask()
	if setAddr != 0 {
		v, err := copyInUint64(t, setAddr)
		if err != nil {
			return 0, err
		}
		set := kernel.SignalSet(v)
		switch how {
		case unix.SIG_BLOCK:
			t.SetSignalMask(old | set)
		case unix.SIG_UNBLOCK:
			t.SetSignalMask(old &^ set)
		case unix.SIG_SETMASK:
			t.SetSignalMask(set)
		default:
			return 0, unix.EINVAL
		}
	}
	if oldAddr != 0 {
		if err := copyOutUint64(t, oldAddr, uint64(old)); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// RtSigreturn implements rt_sigreturn(2).
func RtSigreturn(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if err := t.SignalReturn(); err != nil {
		t.ForceSignal(kernel.NewSignalInfo(kernel.SIGSEGV, kernel.SI_KERNEL))
	}
	return 0, kernel.ErrNoSyscallReturn
}

// Sigaltstack implements sigaltstack(2).
func Sigaltstack(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	ssAddr, oldAddr := a[0].Pointer(), a[1].Pointer()
	old := t.SignalAltStack()
	if ssAddr != 0 {
		b := make([]byte, 24)
		if _, err := t.CopyInBytes(ssAddr, b); err != nil {
			return 0, err
		}
		st := kernel.SignalStack{
			Sp:    le64(b[0:]),
			Flags: int32(le32(b[8:])),
			Size:  le64(b[16:]),
		}
		mode := st.Flags &^ kernel.SS_AUTODISARM
		if mode != 0 && mode != kernel.SS_DISABLE && mode != kernel.SS_ONSTACK {
			return 0, unix.EINVAL
		}
		if mode == kernel.SS_DISABLE {
			st = kernel.SignalStack{Flags: kernel.SS_DISABLE}
		} else {
			if st.Size < minSigStackSize {
				return 0, unix.ENOMEM
			}
			st.Flags &= kernel.SS_AUTODISARM
		}
		if err := t.SetSignalAltStack(st); err != nil {
			return 0, err
		}
	}
	if oldAddr != 0 {
		b := make([]byte, 24)
		putLE64(b[0:], old.Sp)
		putLE32(b[8:], uint32(old.Flags))
		putLE64(b[16:], old.Size)
		if _, err := t.CopyOutBytes(oldAddr, b); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// Kill implements kill(2).
func Kill(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.Kill(a[0].Int(), kernel.Signal(a[1].Int()))
}

// Tkill implements tkill(2).
func Tkill(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.Tgkill(0, a[0].Int(), kernel.Signal(a[1].Int()), nil)
}

// Tgkill implements tgkill(2).
func Tgkill(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if a[0].Int() <= 0 {
		return 0, unix.EINVAL
	}
	return 0, t.Tgkill(a[0].Int(), a[1].Int(), kernel.Signal(a[2].Int()), nil)
}

func copyInSiginfo(t *kernel.Task, addr uintptr) (*kernel.SignalInfo, error) {
	info := &kernel.SignalInfo{}
	if _, err := t.CopyInBytes(addr, info.Raw[:]); err != nil {
		return nil, err
	}
	return info, nil
}

// RtSigqueueinfo implements rt_sigqueueinfo(2).
func RtSigqueueinfo(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	info, err := copyInSiginfo(t, a[2].Pointer())
	if err != nil {
		return 0, err
	}
	return 0, t.QueueSignal(a[0].Int(), kernel.Signal(a[1].Int()), info)
}

// RtTgsigqueueinfo implements rt_tgsigqueueinfo(2).
func RtTgsigqueueinfo(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tgid, tid, sig := a[0].Int(), a[1].Int(), kernel.Signal(a[2].Int())
	if tgid <= 0 || tid <= 0 {
		return 0, unix.EINVAL
	}
	info, err := copyInSiginfo(t, a[3].Pointer())
	if err != nil {
		return 0, err
	}
	if (info.Code() >= 0 || info.Code() == kernel.SI_TKILL) && kernel.ThreadID(tgid) != t.Pid() {
		return 0, unix.EPERM
	}
	info.SetSigno(sig)
	return 0, t.Tgkill(tgid, tid, sig, info)
}

// RtSigpending implements rt_sigpending(2).
func RtSigpending(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if a[1].Uint64() > sigsetSize {
		return 0, unix.EINVAL
	}
	return 0, copyOutUint64(t, a[0].Pointer(), uint64(t.PendingSignals()))
}

// RtSigsuspend implements rt_sigsuspend(2).
func RtSigsuspend(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if a[1].Uint64() != sigsetSize {
		return 0, unix.EINVAL
	}
	m, err := copyInUint64(t, a[0].Pointer())
	if err != nil {
		return 0, err
	}
	return 0, t.SignalSuspend(kernel.SignalSet(m))
}

// Pause implements pause(2).
func Pause(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	for {
		if err := t.BlockOn(nil, time.Time{}, false); err == syserror.ErrInterrupted {
			return 0, syserror.ERESTARTNOHAND
		}
	}
}

// RtSigtimedwait implements rt_sigtimedwait(2).
func RtSigtimedwait(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	setAddr, infoAddr, tsAddr, size := a[0].Pointer(), a[1].Pointer(), a[2].Pointer(), a[3].Uint64()
	if size != sigsetSize {
		return 0, unix.EINVAL
	}
	set, err := copyInUint64(t, setAddr)
	if err != nil {
		return 0, err
	}
	var timeout time.Duration
	has := false
	if tsAddr != 0 {
		ts, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return 0, err
		}
		if !ts.valid() {
			return 0, unix.EINVAL
		}
		timeout, has = time.Duration(ts.nanos()), true
	}
	info, err := t.WaitForSignal(kernel.SignalSet(set), timeout, has)
	if err != nil {
		return 0, err
	}
	if infoAddr != 0 {
		if _, err := t.CopyOutBytes(infoAddr, info.Raw[:]); err != nil {
			return 0, err
		}
	}
	return uintptr(info.Signo()), nil
}
