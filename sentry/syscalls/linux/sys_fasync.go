package linux

import (
	"encoding/binary"
	"math"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Signal-driven I/O: the owners fcntl's F_SETOWN and F_SETOWN_EX set and
// the signals they get (Linux's fs/fcntl.c f_setown, send_sigio).

// struct f_owner_ex types, missing from x/sys/unix.
const (
	fOwnerTID  = 0
	fOwnerPID  = 1
	fOwnerPGRP = 2
)

// si_code values of SIGPOLL.
const (
	pollIn  = 1
	pollOut = 2
	pollHUp = 6
)

// fileOwner is a file's owner: a thread, a thread group or a process
// group, with the credentials of the task that set it (Linux checks them
// against the target's when sending, sigio_perm).
type fileOwner struct {
	k    *kernel.Kernel
	kind int32
	id   int32
	// ns is the PID namespace of the task that set the owner, whose ids
	// id is one of.
	ns *kernel.PIDNamespace
	// task and tg are the owner found when it was set (nil if id named
	// none of that kind), so a reused id never inherits the signals.
	task      *kernel.Task
	tg        *kernel.ThreadGroup
	uid, euid auth.KUID
}

// pidExists reports whether id is in use in ns as a thread, process group
// or session id (Linux's find_vpid).
func pidExists(ns *kernel.PIDNamespace, id int32) bool {
	if ns.TaskWithID(kernel.ThreadID(id)) != nil {
		return true
	}
	for _, tg := range ns.ThreadGroups() {
		if ns.ProcessGroupIDOf(tg) == kernel.ThreadID(id) || ns.SessionIDOf(tg) == kernel.ThreadID(id) {
			return true
		}
	}
	return false
}

// setOwner sets f's owner from F_SETOWN_EX's type and pid (pid 0 clears
// it): ESRCH if pid names nothing.
func setOwner(t *kernel.Task, f *fs.FileDescription, kind, pid int32) error {
	k := t.Kernel()
	ns := t.PIDNamespace()
	if pid == 0 {
		// No owner, but Linux keeps the type.
		f.SetOwner(&fileOwner{k: k, kind: kind, ns: ns})
		return nil
	}
	if !pidExists(ns, pid) {
		return unix.ESRCH
	}
	c := t.Credentials()
	o := &fileOwner{k: k, kind: kind, id: pid, ns: ns, uid: c.RealUID, euid: c.EffectiveUID}
	switch kind {
	case fOwnerTID:
		o.task = ns.TaskWithID(kernel.ThreadID(pid))
	case fOwnerPID:
		o.tg = ns.ThreadGroupWithID(kernel.ThreadID(pid))
	}
	f.SetOwner(o)
	return nil
}

// ownerOf returns f's owner type and id as F_GETOWN_EX reports them: the
// id is 0 once the owner is gone.
func ownerOf(f *fs.FileDescription) (kind, pid int32) {
	o, ok := f.Owner().(*fileOwner)
	if !ok {
		return fOwnerTID, 0
	}
	if len(o.targets()) == 0 {
		return o.kind, 0
	}
	return o.kind, o.id
}

// targets returns the thread groups (or the thread) the owner names now.
func (o *fileOwner) targets() []*kernel.ThreadGroup {
	switch o.kind {
	case fOwnerTID:
		if o.task != nil && o.ns.TaskWithID(kernel.ThreadID(o.id)) == o.task {
			return []*kernel.ThreadGroup{o.task.ThreadGroup()}
		}
	case fOwnerPID:
		if o.tg != nil && o.ns.ThreadGroupWithID(kernel.ThreadID(o.id)) == o.tg {
			return []*kernel.ThreadGroup{o.tg}
		}
	case fOwnerPGRP:
		var out []*kernel.ThreadGroup
		for _, tg := range o.ns.ThreadGroups() {
			if o.ns.ProcessGroupIDOf(tg) == kernel.ThreadID(o.id) {
				out = append(out, tg)
			}
		}
		return out
	}
	return nil
}

// mayReceive is Linux's sigio_perm: the owner's setter is root, or its
// real or effective uid is the target's real or saved uid.
func (o *fileOwner) mayReceive(tg *kernel.ThreadGroup) bool {
	l := tg.Leader()
	if l == nil {
		return false
	}
	c := l.Credentials()
	return o.euid == 0 || o.euid == c.SavedUID || o.euid == c.RealUID ||
		o.uid == c.SavedUID || o.uid == c.RealUID
}

// SendIO implements fs.FileOwner: a plain SIGIO (SI_KERNEL) when sig is
// 0, else sig with si_code POLL_IN/POLL_OUT/POLL_HUP, si_band and si_fd.
func (o *fileOwner) SendIO(sig int32, fdnum int32, fired waiter.EventMask) {
	code, band := int32(pollIn), uint64(waiter.EventIn|waiter.EventRdNorm)
	switch {
	case fired&waiter.EventIn != 0:
	case fired&waiter.EventOut != 0:
		code, band = pollOut, uint64(waiter.EventOut|waiter.EventWrNorm|waiter.EventWrBand)
	case fired&(waiter.EventHUp|waiter.EventErr) != 0:
		code, band = pollHUp, uint64(waiter.EventHUp|waiter.EventErr)
	}
	for _, tg := range o.targets() {
		if !o.mayReceive(tg) {
			continue
		}
		var info *kernel.SignalInfo
		if sig == 0 {
			info = kernel.NewSignalInfo(kernel.SIGIO, kernel.SI_KERNEL)
		} else {
			info = kernel.NewSignalInfo(kernel.Signal(sig), code)
			binary.LittleEndian.PutUint64(info.Raw[16:], band)
			binary.LittleEndian.PutUint32(info.Raw[24:], uint32(fdnum))
		}
		if o.kind == fOwnerTID {
			o.task.SendSignal(info)
		} else {
			tg.SendSignal(info)
		}
	}
}

// SendURG sends SIGURG (SI_KERNEL) to the owner, as Linux's send_sigurg
// when urgent data reaches a socket (AF_UNIX MSG_OOB).
func (o *fileOwner) SendURG() {
	for _, tg := range o.targets() {
		if !o.mayReceive(tg) {
			continue
		}
		info := kernel.NewSignalInfo(kernel.SIGURG, kernel.SI_KERNEL)
		if o.kind == fOwnerTID {
			o.task.SendSignal(info)
		} else {
			tg.SendSignal(info)
		}
	}
}

// fcntlOwner serves F_SETOWN, F_GETOWN, F_SETOWN_EX, F_GETOWN_EX,
// F_SETSIG and F_GETSIG.
func fcntlOwner(t *kernel.Task, f *fs.FileDescription, cmd int32, arg uintptr) (uintptr, error) {
	switch cmd {
	case unix.F_SETOWN:
		who := int32(arg)
		if who == math.MinInt32 {
			return 0, unix.EINVAL
		}
		if who < 0 {
			return 0, setOwner(t, f, fOwnerPGRP, -who)
		}
		return 0, setOwner(t, f, fOwnerPID, who)
	case unix.F_GETOWN:
		kind, pid := ownerOf(f)
		if kind == fOwnerPGRP {
			pid = -pid
		}
		return uintptr(int64(pid)), nil
	case unix.F_SETOWN_EX:
		var b [8]byte
		if _, err := t.CopyInBytes(arg, b[:]); err != nil {
			return 0, unix.EFAULT
		}
		kind := int32(binary.LittleEndian.Uint32(b[0:]))
		pid := int32(binary.LittleEndian.Uint32(b[4:]))
		if kind < fOwnerTID || kind > fOwnerPGRP {
			return 0, unix.EINVAL
		}
		return 0, setOwner(t, f, kind, pid)
	case unix.F_GETOWN_EX:
		kind, pid := ownerOf(f)
		var b [8]byte
		binary.LittleEndian.PutUint32(b[0:], uint32(kind))
		binary.LittleEndian.PutUint32(b[4:], uint32(pid))
		if _, err := t.CopyOutBytes(arg, b[:]); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil
	case unix.F_SETSIG:
		sig := int64(arg)
		if sig < 0 || sig > int64(kernel.SignalMaximum) {
			return 0, unix.EINVAL
		}
		f.SetSignal(int32(sig))
		return 0, nil
	case unix.F_GETSIG:
		return uintptr(f.Signal()), nil
	}
	return 0, unix.EINVAL
}

// sockOwnerIoctl serves FIOSETOWN and SIOCSPGRP (F_SETOWN with the int
// at arg) and FIOGETOWN and SIOCGPGRP (F_GETOWN into it) on sockets.
func sockOwnerIoctl(t *kernel.Task, f *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if cmd == ioctlFiosetown || cmd == unix.SIOCSPGRP {
		v, err := copyInUint32(t, arg)
		if err != nil {
			return 0, unix.EFAULT
		}
		return fcntlOwner(t, f, unix.F_SETOWN, uintptr(int64(int32(v))))
	}
	r, _ := fcntlOwner(t, f, unix.F_GETOWN, 0)
	return 0, copyOutUint32(t, arg, uint32(int32(r)))
}
