package linux

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/futex"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// Futex implements futex(2).
func Futex(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, op, val := a[0].Pointer(), a[1].Int(), a[2].Uint()
	private := op&futex.PrivateFlag != 0
	cmd := op & futex.CmdMask
	target := t.FutexTarget()
	mgr := t.Kernel().Futexes
	switch cmd {
	case futex.CmdWait, futex.CmdWaitBitset:
		bitset := uint32(futex.BitsetMatchAny)
		abs := false
		if cmd == futex.CmdWaitBitset {
			bitset = a[5].Uint()
			abs = true
		} else if op&futex.ClockRealtime != 0 {
			return 0, unix.ENOSYS
		}
		var deadline time.Time
		has := false
		if ts := a[3].Pointer(); ts != 0 {
			spec, err := copyInTimespec(t, ts)
			if err != nil {
				return 0, err
			}
			if !spec.valid() {
				return 0, unix.EINVAL
			}
			has = true
			if abs {
				clock := int32(unix.CLOCK_MONOTONIC)
				if op&futex.ClockRealtime != 0 {
					clock = unix.CLOCK_REALTIME
				}
				deadline = absDeadline(t, clock, spec.nanos())
			} else {
				deadline = time.Now().Add(time.Duration(spec.nanos()))
			}
		}
		return 0, futexWait(t, mgr, target, addr, private, val, bitset, deadline, has)
	case futex.CmdWake, futex.CmdWakeBitset:
		bitset := uint32(futex.BitsetMatchAny)
		if cmd == futex.CmdWakeBitset {
			bitset = a[5].Uint()
		}
		n, err := mgr.Wake(target, addr, private, bitset, int(int32(val)))
		return uintptr(n), err
	case futex.CmdRequeue:
		n, err := mgr.Requeue(target, addr, a[4].Pointer(), private, int(int32(val)), int(int32(a[3].Uint())))
		return uintptr(n), err
	case futex.CmdCmpRequeue:
		n, err := mgr.CmpRequeue(target, addr, a[4].Pointer(), private, int(int32(val)), int(int32(a[3].Uint())), a[5].Uint())
		return uintptr(n), err
	case futex.CmdWakeOp:
		n, err := mgr.WakeOp(target, addr, a[4].Pointer(), private, int(int32(val)), int(int32(a[3].Uint())), a[5].Uint())
		return uintptr(n), err
	case futex.CmdLockPI, futex.CmdUnlockPI, futex.CmdTrylockPI, futex.CmdWaitRequeuePI, futex.CmdCmpRequeuePI, futex.CmdLockPI2:
		t.Log().Info("futex: priority-inheritance operations are not supported", "op", cmd)
		return 0, unix.ENOSYS
	default:
		return 0, unix.ENOSYS
	}
}

func futexWait(t *kernel.Task, mgr *futex.Manager, target futex.Target, addr uintptr, private bool, val, bitset uint32, deadline time.Time, has bool) error {
	w := futex.NewWaiter()
	if err := mgr.WaitPrepare(w, target, addr, private, val, bitset); err != nil {
		return err
	}
	err := t.BlockOn(w.C, deadline, has)
	mgr.WaitComplete(w)
	switch {
	case err == nil || w.Woken():
		return nil
	case err == unix.ETIMEDOUT:
		return unix.ETIMEDOUT
	case err == syserror.ErrInterrupted:
		if !has {
			return syserror.ERESTARTSYS
		}
		// A timed wait is not restarted with the same relative timeout.
		return unix.EINTR
	}
	return err
}

// absDeadline converts an absolute time on clock to a wall-clock deadline.
func absDeadline(t *kernel.Task, clock int32, ns int64) time.Time {
	now, err := t.Kernel().Clock.Now(clock)
	if err != nil {
		now = time.Now().UnixNano()
	}
	return time.Now().Add(time.Duration(ns - now))
}
