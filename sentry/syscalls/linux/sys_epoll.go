package linux

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/epoll"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// epollEventSize is sizeof(struct epoll_event) on amd64 (packed).
const epollEventSize = 12

// epMaxEvents is EP_MAX_EVENTS.
const epMaxEvents = (1<<31 - 1) / epollEventSize

func epollCreate(t *kernel.Task, flags uint32) (uintptr, error) {
	f := epoll.New()
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&unix.EPOLL_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// EpollCreate implements epoll_create(2).
func EpollCreate(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if a[0].Int() <= 0 {
		return 0, unix.EINVAL
	}
	return epollCreate(t, 0)
}

// EpollCreate1 implements epoll_create1(2).
func EpollCreate1(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[0].Uint()
	if flags&^unix.EPOLL_CLOEXEC != 0 {
		return 0, unix.EINVAL
	}
	return epollCreate(t, flags)
}

// EpollCtl implements epoll_ctl(2).
func EpollCtl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	epfd, op, fd, evAddr := a[0].Int(), a[1].Int(), a[2].Int(), a[3].Pointer()
	var ev epoll.Event
	if op == unix.EPOLL_CTL_ADD || op == unix.EPOLL_CTL_MOD {
		var b [epollEventSize]byte
		if _, err := t.CopyInBytes(evAddr, b[:]); err != nil {
			return 0, unix.EFAULT
		}
		ev.Events = binary.LittleEndian.Uint32(b[0:])
		ev.Data = binary.LittleEndian.Uint64(b[4:])
	}
	epf, err := vfsFile(t, epfd)
	if err != nil {
		return 0, err
	}
	defer epf.DecRef()
	tf, err := vfsFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer tf.DecRef()
	if !tf.Pollable() || tf.IsPath() {
		return 0, unix.EPERM
	}
	ep := epoll.FromFile(epf)
	if ep == nil || epf == tf {
		return 0, unix.EINVAL
	}
	switch op {
	case unix.EPOLL_CTL_ADD:
		return 0, ep.Add(t, fd, tf, ev)
	case unix.EPOLL_CTL_MOD:
		return 0, ep.Modify(t, fd, tf, ev)
	case unix.EPOLL_CTL_DEL:
		return 0, ep.Delete(fd, tf)
	}
	return 0, unix.EINVAL
}

// epollWait is the body of the epoll_wait family.
func epollWait(t *kernel.Task, epfd int32, addr uintptr, max int32, deadline time.Time, hasDeadline bool) (uintptr, error) {
	if max <= 0 || max > epMaxEvents {
		return 0, unix.EINVAL
	}
	if addr >= arch.MaxUserAddress || uint64(addr)+uint64(max)*epollEventSize > arch.MaxUserAddress {
		return 0, unix.EFAULT
	}
	epf, err := vfsFile(t, epfd)
	if err != nil {
		return 0, err
	}
	defer epf.DecRef()
	ep := epoll.FromFile(epf)
	if ep == nil {
		return 0, unix.EINVAL
	}
	evs, err := ep.Wait(t, int(max), deadline, hasDeadline)
	if err != nil {
		if err == syserror.ErrInterrupted {
			return 0, unix.EINTR
		}
		return 0, err
	}
	b := make([]byte, epollEventSize*len(evs))
	for i, e := range evs {
		binary.LittleEndian.PutUint32(b[epollEventSize*i:], e.Events)
		binary.LittleEndian.PutUint64(b[epollEventSize*i+4:], e.Data)
	}
	if len(b) > 0 {
		if _, err := t.CopyOutBytes(addr, b); err != nil {
			return 0, unix.EFAULT
		}
	}
	return uintptr(len(evs)), nil
}

func msDeadline(ms int32) (time.Time, bool) {
	if ms < 0 {
		return time.Time{}, false
	}
	return time.Now().Add(time.Duration(ms) * time.Millisecond), true
}

// EpollWait implements epoll_wait(2).
func EpollWait(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	deadline, has := msDeadline(a[3].Int())
	return epollWait(t, a[0].Int(), a[1].Pointer(), a[2].Int(), deadline, has)
}

// EpollPwait implements epoll_pwait(2).
func EpollPwait(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	restore, err := setTempSigmask(t, a[4].Pointer(), a[5].Uint64())
	if err != nil {
		return 0, err
	}
	deadline, has := msDeadline(a[3].Int())
	n, err := epollWait(t, a[0].Int(), a[1].Pointer(), a[2].Int(), deadline, has)
	restore(err == unix.EINTR)
	return n, err
}

// EpollPwait2 implements epoll_pwait2(2).
func EpollPwait2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	var deadline time.Time
	has := false
	if tsAddr := a[3].Pointer(); tsAddr != 0 {
		ts, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if !ts.valid() {
			return 0, unix.EINVAL
		}
		deadline, has = time.Now().Add(time.Duration(ts.nanos())), true
	}
	restore, err := setTempSigmask(t, a[4].Pointer(), a[5].Uint64())
	if err != nil {
		return 0, err
	}
	n, err := epollWait(t, a[0].Int(), a[1].Pointer(), a[2].Int(), deadline, has)
	restore(err == unix.EINTR)
	return n, err
}
