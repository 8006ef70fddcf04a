package linux

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// pollDeadline turns a relative timeout into a deadline; negative means
// none.
func pollDeadline(d time.Duration) (time.Time, bool) {
	if d < 0 {
		return time.Time{}, false
	}
	return time.Now().Add(d), true
}

// remaining returns the time left before deadline, never negative.
func remaining(deadline time.Time) int64 {
	d := time.Until(deadline)
	if d < 0 {
		return 0
	}
	return int64(d)
}

// setTempSigmask installs the mask at addr (if not 0) for the duration of
// a ppoll, pselect or epoll_pwait, returning the undo to run on any
// return but an interrupted one.
func setTempSigmask(t *kernel.Task, addr uintptr, size uint64) (restore func(interrupted bool), err error) {
	if addr == 0 {
		return func(bool) {}, nil
	}
	if size != 8 {
		return nil, unix.EINVAL
	}
	m, err := copyInUint64(t, addr)
	if err != nil {
		return nil, unix.EFAULT
	}
	old := t.SignalMask()
	t.SetSignalMask(kernel.SignalSet(m))
	return func(interrupted bool) {
		if interrupted {
			// Restored once the signal's handler is set up.
			t.SetSavedSignalMask(old)
			return
		}
		t.SetSignalMask(old)
	}, nil
}

// doPoll polls the pollfd array at addr.
func doPoll(t *kernel.Task, addr uintptr, nfds uint32, deadline time.Time, hasDeadline bool) (uintptr, error) {
	if uint64(nfds) > vfsNoFile(t) {
		return 0, unix.EINVAL
	}
	raw := make([]byte, 8*int(nfds))
	if nfds > 0 {
		if _, err := t.CopyInBytes(addr, raw); err != nil {
			return 0, unix.EFAULT
		}
	}
	items := make([]fs.PollItem, 0, nfds)
	index := make([]int, nfds) // item of each pollfd, -1 for ignored ones
	defer func() {
		for _, it := range items {
			if it.File != nil {
				it.File.DecRef()
			}
		}
	}()
	for i := range index {
		fd := int32(binary.LittleEndian.Uint32(raw[8*i:]))
		if fd < 0 {
			index[i] = -1
			continue
		}
		events := waiter.EventMask(binary.LittleEndian.Uint16(raw[8*i+4:]))
		f := t.FDTable().GetFile(fd)
		if f != nil && f.IsPath() {
			// poll cannot get the file through an O_PATH descriptor
			// (fdget refuses FMODE_PATH): POLLNVAL, as for a closed
			// one. select only checks the number is open.
			f.DecRef()
			f = nil
		}
		index[i] = len(items)
		items = append(items, fs.PollItem{File: f, Events: events})
	}
	n, err := fs.Poll(t, items, deadline, hasDeadline)
	if err != nil {
		if err == syserror.ErrInterrupted {
			return 0, syserror.ERESTARTNOHAND
		}
		return 0, err
	}
	for i, j := range index {
		var rev uint16
		if j >= 0 {
			it := items[j]
			rev = uint16(it.Revents & (it.Events | waiter.EventErr | waiter.EventHUp | waiter.EventNVal))
		}
		binary.LittleEndian.PutUint16(raw[8*i+6:], rev)
	}
	if nfds > 0 {
		if _, err := t.CopyOutBytes(addr, raw); err != nil {
			return 0, unix.EFAULT
		}
	}
	return uintptr(n), nil
}

// Poll implements poll(2).
func Poll(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	timeout := a[2].Int()
	d := time.Duration(-1)
	if timeout >= 0 {
		d = time.Duration(timeout) * time.Millisecond
	}
	deadline, has := pollDeadline(d)
	return doPoll(t, a[0].Pointer(), a[1].Uint(), deadline, has)
}

// Ppoll implements ppoll(2).
func Ppoll(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tsAddr := a[2].Pointer()
	var deadline time.Time
	has := false
	if tsAddr != 0 {
		ts, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if !ts.valid() {
			return 0, unix.EINVAL
		}
		deadline, has = pollDeadline(time.Duration(ts.nanos()))
	}
	restore, err := setTempSigmask(t, a[3].Pointer(), a[4].Uint64())
	if err != nil {
		return 0, err
	}
	n, err := doPoll(t, a[0].Pointer(), a[1].Uint(), deadline, has)
	restore(err == syserror.ERESTARTNOHAND)
	if has && err != unix.EFAULT {
		copyOutTimespec(t, tsAddr, timespecFromNanos(remaining(deadline)))
	}
	return n, err
}

// Bits of the events select maps its sets to (POLLIN_SET and friends).
const (
	selectIn  = waiter.EventIn | waiter.EventRdNorm | waiter.EventRdBand | waiter.EventHUp | waiter.EventErr
	selectOut = waiter.EventOut | waiter.EventWrNorm | waiter.EventWrBand | waiter.EventErr
	selectEx  = waiter.EventPri
)

// doSelect runs select over the fd_sets at r, w and e.
func doSelect(t *kernel.Task, nfds int32, r, w, e uintptr, deadline time.Time, hasDeadline bool) (uintptr, error) {
	if nfds < 0 {
		return 0, unix.EINVAL
	}
	if max := int32(vfsNoFile(t)); nfds > max && max >= 0 {
		nfds = max
	}
	nbytes := (int(nfds) + 63) / 64 * 8
	sets := [3][]byte{}
	for i, addr := range []uintptr{r, w, e} {
		if addr == 0 {
			continue
		}
		sets[i] = make([]byte, nbytes)
		if _, err := t.CopyInBytes(addr, sets[i]); err != nil {
			return 0, unix.EFAULT
		}
	}
	masks := [3]waiter.EventMask{selectIn, selectOut, selectEx}
	var items []fs.PollItem
	var fds []int32
	defer func() {
		for _, it := range items {
			it.File.DecRef()
		}
	}()
	for fd := int32(0); fd < nfds; fd++ {
		var ev waiter.EventMask
		for i, s := range sets {
			if s != nil && s[fd/8]&(1<<(fd%8)) != 0 {
				ev |= masks[i]
			}
		}
		if ev == 0 {
			continue
		}
		f := t.FDTable().GetFile(fd)
		if f == nil {
			return 0, unix.EBADF
		}
		items = append(items, fs.PollItem{File: f, Events: ev})
		fds = append(fds, fd)
	}
	if _, err := fs.Poll(t, items, deadline, hasDeadline); err != nil {
		if err == syserror.ErrInterrupted {
			return 0, syserror.ERESTARTNOHAND
		}
		return 0, err
	}
	var asked [3][]byte
	for i, s := range sets {
		asked[i] = append([]byte(nil), s...)
		clear(s)
	}
	count := 0
	for k, it := range items {
		fd := fds[k]
		for i, s := range sets {
			if s != nil && asked[i][fd/8]&(1<<(fd%8)) != 0 && it.Revents&masks[i] != 0 {
				s[fd/8] |= 1 << (fd % 8)
				count++
			}
		}
	}
	for i, addr := range []uintptr{r, w, e} {
		if sets[i] != nil {
			if _, err := t.CopyOutBytes(addr, sets[i]); err != nil {
				return 0, unix.EFAULT
			}
		}
	}
	return uintptr(count), nil
}

// Select implements select(2).
func Select(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tvAddr := a[4].Pointer()
	var deadline time.Time
	has := false
	if tvAddr != 0 {
		tv, err := copyInTimeval(t, tvAddr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if tv.Sec < 0 || tv.Usec < 0 || tv.Usec >= 1e6 {
			return 0, unix.EINVAL
		}
		deadline, has = pollDeadline(time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond)
	}
	n, err := doSelect(t, a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Pointer(), deadline, has)
	if has && err != unix.EFAULT {
		copyOutTimeval(t, tvAddr, timevalFromNanos(remaining(deadline)))
	}
	return n, err
}

// Pselect6 implements pselect6(2).
func Pselect6(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tsAddr, sigAddr := a[4].Pointer(), a[5].Pointer()
	var deadline time.Time
	has := false
	if tsAddr != 0 {
		ts, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if !ts.valid() {
			return 0, unix.EINVAL
		}
		deadline, has = pollDeadline(time.Duration(ts.nanos()))
	}
	var maskAddr uintptr
	var maskSize uint64
	if sigAddr != 0 {
		var b [16]byte
		if _, err := t.CopyInBytes(sigAddr, b[:]); err != nil {
			return 0, unix.EFAULT
		}
		maskAddr = uintptr(binary.LittleEndian.Uint64(b[0:]))
		maskSize = binary.LittleEndian.Uint64(b[8:])
	}
	restore, err := setTempSigmask(t, maskAddr, maskSize)
	if err != nil {
		return 0, err
	}
	n, err := doSelect(t, a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Pointer(), deadline, has)
	restore(err == syserror.ERESTARTNOHAND)
	if has && err != unix.EFAULT {
		copyOutTimespec(t, tsAddr, timespecFromNanos(remaining(deadline)))
	}
	return n, err
}
