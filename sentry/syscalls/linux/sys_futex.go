package linux

import (
	"encoding/binary"
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
	// Linux reads and checks the timeout before anything else.
	var spec timespec
	hasTimeout := false
	if ts := a[3].Pointer(); ts != 0 && futexHasTimeout(cmd) {
		var err error
		if spec, err = copyInTimespec(t, ts); err != nil {
			return 0, err
		}
		if !spec.valid() {
			return 0, unix.EINVAL
		}
		hasTimeout = true
	}
	if op&futex.ClockRealtime != 0 && cmd != futex.CmdWaitBitset && cmd != futex.CmdWaitRequeuePI && cmd != futex.CmdLockPI2 {
		return 0, unix.ENOSYS
	}
	// deadline turns the timeout into a deadline: relative for FUTEX_WAIT,
	// absolute on clock otherwise.
	deadline := func(clock int32) time.Time {
		if cmd == futex.CmdWait {
			return time.Now().Add(time.Duration(spec.nanos()))
		}
		if op&futex.ClockRealtime != 0 {
			clock = unix.CLOCK_REALTIME
		}
		return absDeadline(t, clock, spec.nanos())
	}
	target := t.FutexTarget()
	mgr := t.Kernel().Futexes
	switch cmd {
	case futex.CmdWait, futex.CmdWaitBitset:
		bitset := uint32(futex.BitsetMatchAny)
		if cmd == futex.CmdWaitBitset {
			bitset = a[5].Uint()
		}
		var dl time.Time
		if hasTimeout {
			dl = deadline(unix.CLOCK_MONOTONIC)
		}
		return 0, futexWait(t, mgr, target, addr, private, val, bitset, dl, hasTimeout)
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
	case futex.CmdLockPI, futex.CmdLockPI2:
		// FUTEX_LOCK_PI's timeout is on CLOCK_REALTIME, FUTEX_LOCK_PI2's
		// on CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME says otherwise.
		clock := int32(unix.CLOCK_MONOTONIC)
		if cmd == futex.CmdLockPI {
			clock = unix.CLOCK_REALTIME
		}
		var dl time.Time
		if hasTimeout {
			dl = deadline(clock)
		}
		return 0, futexLockPI(t, mgr, target, addr, private, false, dl, hasTimeout)
	case futex.CmdTrylockPI:
		return 0, futexLockPI(t, mgr, target, addr, private, true, time.Time{}, false)
	case futex.CmdUnlockPI:
		return 0, mgr.UnlockPI(target, addr, private, t.FutexCaller())
	case futex.CmdWaitRequeuePI:
		var dl time.Time
		if hasTimeout {
			dl = deadline(unix.CLOCK_MONOTONIC)
		}
		return 0, futexWaitRequeuePI(t, mgr, target, addr, a[4].Pointer(), private, val, dl, hasTimeout)
	case futex.CmdCmpRequeuePI:
		n, err := mgr.CmpRequeuePI(target, addr, a[4].Pointer(), private, int(int32(val)), int(int32(a[3].Uint())), a[5].Uint(), t.FutexCaller())
		return uintptr(n), err
	default:
		return 0, unix.ENOSYS
	}
}

// futexHasTimeout reports whether futex(2)'s fourth argument is a timeout
// for cmd (rather than a count, or unused).
func futexHasTimeout(cmd int32) bool {
	switch cmd {
	case futex.CmdWait, futex.CmdWaitBitset, futex.CmdLockPI, futex.CmdLockPI2, futex.CmdWaitRequeuePI:
		return true
	}
	return false
}

// futexLockPI takes the PI futex at addr for t, waiting (until the
// deadline, if has) unless try. A signal restarts the wait (Linux's
// ERESTARTNOINTR; the deadline is absolute).
func futexLockPI(t *kernel.Task, mgr *futex.Manager, target futex.Target, addr uintptr, private, try bool, deadline time.Time, has bool) error {
	c := t.FutexCaller()
	w := futex.NewPIWaiter()
	for {
		got, err := mgr.LockPIPrepare(w, target, addr, private, c, try)
		if got || err != nil {
			return err
		}
		berr := t.BlockOn(w.C, deadline, has)
		if mgr.LockPIComplete(w) {
			return nil
		}
		switch berr {
		case nil:
			// The owner died and its lock could not be handed over:
			// look again.
		case syserror.ErrInterrupted:
			return syserror.ERESTARTNOINTR
		default:
			return berr
		}
	}
}

// futexWaitRequeuePI waits on the futex at addr until FUTEX_CMP_REQUEUE_PI
// gives t the PI futex at addr2, directly or after a wait for it there.
// As on Linux: a timeout is ETIMEDOUT; a signal before the requeue
// restarts the call, after it is EAGAIN (the word has changed, so a
// restart would say so anyway).
func futexWaitRequeuePI(t *kernel.Task, mgr *futex.Manager, target futex.Target, addr, addr2 uintptr, private bool, val uint32, deadline time.Time, has bool) error {
	rw := futex.NewRequeuePIWaiter()
	if err := mgr.WaitRequeuePIPrepare(rw, target, addr, addr2, private, val, t.FutexCaller()); err != nil {
		return err
	}
	berr := t.BlockOn(rw.C, deadline, has)
	switch mgr.WaitRequeuePIComplete(rw) {
	case futex.RequeuePILocked:
		return nil
	case futex.RequeuePINotRequeued:
		switch berr {
		case unix.ETIMEDOUT:
			return unix.ETIMEDOUT
		case syserror.ErrInterrupted:
			return syserror.ERESTARTNOINTR
		}
		return unix.EAGAIN
	}
	switch berr {
	case nil:
		// The owner died and the lock could not be handed over: take
		// it as FUTEX_LOCK_PI would.
		return futexLockPI(t, mgr, target, addr2, private, false, deadline, has)
	case syserror.ErrInterrupted:
		return unix.EAGAIN
	}
	return berr
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
		// A timed wait resumes through restart_syscall with its absolute
		// deadline when no handler runs (SIGSTOP/SIGCONT, an ignored
		// signal), as Linux's futex_wait_restart; a handler sees EINTR.
		t.SetRestartBlock(func(t *kernel.Task) (uintptr, error) {
			return 0, futexWait(t, mgr, target, addr, private, val, bitset, deadline, has)
		})
		return syserror.ERESTART_RESTARTBLOCK
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

// futex_waitv(2) ABI (include/uapi/linux/futex.h).
const (
	futexWaitvMax    = 128 // FUTEX_WAITV_MAX
	futexWaitvSize   = 24  // sizeof(struct futex_waitv)
	futex2SizeMask   = 3   // FUTEX2_SIZE_MASK
	futex2SizeU32    = 2   // FUTEX2_SIZE_U32
	futex2Private    = 128 // FUTEX2_PRIVATE
	futex2ValidFlags = futex2SizeMask | futex2Private
)

// FutexWaitv implements futex_waitv(2): it waits on up to 128 futexes at
// once and returns the index of one that woke it. Only 32-bit futexes
// exist (FUTEX2_SIZE_U32), as on Linux.
func FutexWaitv(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	vaddr, n, flags, tsAddr, clock := a[0].Pointer(), a[1].Uint(), a[2].Uint(), a[3].Pointer(), a[4].Int()
	if flags != 0 || n == 0 || n > futexWaitvMax || vaddr == 0 {
		return 0, unix.EINVAL
	}
	var deadline time.Time
	if tsAddr != 0 {
		if clock != unix.CLOCK_MONOTONIC && clock != unix.CLOCK_REALTIME {
			return 0, unix.EINVAL
		}
		spec, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return 0, err
		}
		if !spec.valid() {
			return 0, unix.EINVAL
		}
		deadline = absDeadline(t, clock, spec.nanos())
	}
	buf := make([]byte, int(n)*futexWaitvSize)
	if _, err := t.CopyInBytes(vaddr, buf); err != nil {
		return 0, unix.EFAULT
	}
	type entry struct {
		addr    uintptr
		val     uint32
		private bool
	}
	entries := make([]entry, n)
	le := binary.LittleEndian
	for i := range entries {
		b := buf[i*futexWaitvSize:]
		val, uaddr, fl, reserved := le.Uint64(b), le.Uint64(b[8:]), le.Uint32(b[16:]), le.Uint32(b[20:])
		if fl&^futex2ValidFlags != 0 || reserved != 0 || fl&futex2SizeMask != futex2SizeU32 || val > 0xffffffff {
			return 0, unix.EINVAL
		}
		entries[i] = entry{addr: uintptr(uaddr), val: uint32(val), private: fl&futex2Private != 0}
	}
	mgr, target := t.Kernel().Futexes, t.FutexTarget()
	c := make(chan struct{}, 1)
	ws := make([]*futex.Waiter, n)
	for i := range ws {
		ws[i] = futex.NewWaiterSignalling(c)
	}
	// woken dequeues the first k waiters and returns the index of the last
	// one a wake dequeued, or -1, as Linux does.
	woken := func(k int) int {
		idx := -1
		for i := 0; i < k; i++ {
			mgr.WaitComplete(ws[i])
			if ws[i].Woken() {
				idx = i
			}
		}
		return idx
	}
	for {
		for i, e := range entries {
			if err := mgr.WaitPrepare(ws[i], target, e.addr, e.private, e.val, futex.BitsetMatchAny); err != nil {
				if idx := woken(i); idx >= 0 {
					return uintptr(idx), nil
				}
				return 0, err
			}
		}
		err := t.BlockOn(c, deadline, tsAddr != 0)
		if idx := woken(len(ws)); idx >= 0 {
			return uintptr(idx), nil
		}
		switch err {
		case nil:
			// A wake that raced with an earlier round: go again.
		case syserror.ErrInterrupted:
			return 0, syserror.ERESTARTSYS
		default:
			return 0, err
		}
	}
}
