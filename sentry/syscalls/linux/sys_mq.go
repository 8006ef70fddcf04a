package linux

import (
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/mqueue"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// mqNamespaces holds the message queues of each IPC namespace. Entries
// are never removed: like the kernel's namespaces, they live as long as
// the sandbox.
var mqNamespaces sync.Map // *kernel.IPCNamespace -> *mqueue.Namespace

// MqueueNamespace returns the message queues of IPC namespace ipc, made
// at first use.
func MqueueNamespace(ipc *kernel.IPCNamespace) *mqueue.Namespace {
	if ns, ok := mqNamespaces.Load(ipc); ok {
		return ns.(*mqueue.Namespace)
	}
	ns, _ := mqNamespaces.LoadOrStore(ipc, mqueue.NewNamespace())
	return ns.(*mqueue.Namespace)
}

// RegisterMqueue makes the mqueue file system mountable in k (mount(2)
// and the spec's /dev/mqueue): a mount shows the queues of the mounting
// task's IPC namespace (the sandbox's initial one at boot).
func RegisterMqueue(k *kernel.Kernel) {
	k.RegisterFilesystem(mqueue.FSType, func(ctx fs.Context, _ string, _ bool, _ string) (*fs.Filesystem, error) {
		ipc := k.RootIPCNamespace()
		if t, ok := ctx.(*kernel.Task); ok {
			ipc = t.IPCNamespace()
		}
		return MqueueNamespace(ipc).Filesystem(), nil
	})
}

// mqFlush is what close(2) of f by t does to a message queue: t's
// process loses its notification registration.
func mqFlush(t *kernel.Task, f *fs.FileDescription) {
	mqueue.Flush(f, t.ThreadGroup())
}

// mqAttrSize is sizeof(struct mq_attr): four longs and four reserved.
const mqAttrSize = 64

func copyInMqAttr(t *kernel.Task, addr uintptr) (*mqueue.Attr, error) {
	var b [mqAttrSize]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	return &mqueue.Attr{
		Flags:   int64(le.Uint64(b[0:])),
		MaxMsg:  int64(le.Uint64(b[8:])),
		MsgSize: int64(le.Uint64(b[16:])),
		CurMsgs: int64(le.Uint64(b[24:])),
	}, nil
}

func copyOutMqAttr(t *kernel.Task, addr uintptr, a mqueue.Attr) error {
	var b [mqAttrSize]byte
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(a.Flags))
	le.PutUint64(b[8:], uint64(a.MaxMsg))
	le.PutUint64(b[16:], uint64(a.MsgSize))
	le.PutUint64(b[24:], uint64(a.CurMsgs))
	_, err := t.CopyOutBytes(addr, b[:])
	return err
}

// mqName checks a queue name as Linux does: ENOENT for an empty name
// (getname), EACCES for "." or ".." or one holding a slash (lookup_one),
// ENAMETOOLONG past NAME_MAX.
func mqName(name string) error {
	if name == "" {
		return unix.ENOENT
	}
	if name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return unix.EACCES
	}
	if len(name) > mqueue.NameMax {
		return unix.ENAMETOOLONG
	}
	return nil
}

// mqLookup is the resolution of name in t's queue namespace.
func mqLookup(t *kernel.Task, name string) *fs.Lookup {
	root := MqueueNamespace(t.IPCNamespace()).Root()
	return &fs.Lookup{Root: root, Start: root, Path: name}
}

// mqOpenFlags are the mq_open flags that reach the open file.
const mqOpenFlags = unix.O_ACCMODE | unix.O_CREAT | unix.O_EXCL | unix.O_NONBLOCK

// MqOpen implements mq_open(2).
func MqOpen(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	name, err := t.CopyInPath(a[0].Pointer())
	if err != nil {
		return 0, err
	}
	oflag, mode, attrAddr := a[1].Uint(), a[2].Uint(), a[3].Pointer()
	var attr *mqueue.Attr
	if attrAddr != 0 {
		if attr, err = copyInMqAttr(t, attrAddr); err != nil {
			return 0, err
		}
	}
	if err := mqName(name); err != nil {
		return 0, err
	}
	if oflag&unix.O_ACCMODE == unix.O_ACCMODE {
		return 0, unix.EINVAL
	}
	ctx := mqueue.WithCreateAttr(t, mqueue.CreateAttr{Attr: attr, Limit: t.ThreadGroup().Limits().Get(unix.RLIMIT_MSGQUEUE).Cur})
	f, err := fs.Open(ctx, *mqLookup(t, name), fs.OpenOptions{
		Flags: oflag & mqOpenFlags,
		Mode:  mode & 0o777 &^ t.FSContext().Umask(),
	})
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: oflag&unix.O_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// MqUnlink implements mq_unlink(2).
func MqUnlink(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	name, err := t.CopyInPath(a[0].Pointer())
	if err != nil {
		return 0, err
	}
	if err := mqName(name); err != nil {
		return 0, err
	}
	return 0, fs.Unlink(t, mqLookup(t, name))
}

// mqDeadline reads an mq_timed* timeout: EINVAL for a bad timespec.
func mqDeadline(t *kernel.Task, addr uintptr) (mqueue.Deadline, error) {
	if addr == 0 {
		return mqueue.Deadline{}, nil
	}
	ts, err := copyInTimespec(t, addr)
	if err != nil {
		return mqueue.Deadline{}, err
	}
	if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
		return mqueue.Deadline{}, unix.EINVAL
	}
	return mqueue.Deadline{At: time.Unix(ts.Sec, ts.Nsec), Set: true}, nil
}

// mqErr maps a wait's outcome to the syscall's errno: a signal restarts
// (the timeout is absolute).
func mqErr(err error) error {
	if err == syserror.ErrInterrupted {
		return syserror.ERESTARTSYS
	}
	return err
}

// MqTimedsend implements mq_timedsend(2).
func MqTimedsend(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, addr, n, prio := a[0].Int(), a[1].Pointer(), a[2].Uint64(), a[3].Uint64()
	d, err := mqDeadline(t, a[4].Pointer())
	if err != nil {
		return 0, err
	}
	if prio >= mqueue.PrioMax {
		return 0, unix.EINVAL
	}
	f, err := vfsFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	attr, err := mqueue.GetSetAttr(f, nil)
	if err != nil {
		return 0, err
	}
	if !f.Writable() {
		return 0, unix.EBADF
	}
	if n > uint64(attr.MsgSize) {
		return 0, unix.EMSGSIZE
	}
	buf := make([]byte, n)
	if _, err := t.CopyInBytes(addr, buf); err != nil {
		return 0, err
	}
	from := mqueue.Sender{PID: int32(t.ThreadGroup().ID()), UID: uint32(t.Credentials().RealUID)}
	return 0, mqErr(mqueue.Send(t, f, buf, uint32(prio), d, from))
}

// MqTimedreceive implements mq_timedreceive(2).
func MqTimedreceive(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, addr, n, prioAddr := a[0].Int(), a[1].Pointer(), a[2].Uint64(), a[3].Pointer()
	d, err := mqDeadline(t, a[4].Pointer())
	if err != nil {
		return 0, err
	}
	f, err := vfsFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	attr, err := mqueue.GetSetAttr(f, nil)
	if err != nil {
		return 0, err
	}
	if !f.Readable() {
		return 0, unix.EBADF
	}
	if n < uint64(attr.MsgSize) {
		return 0, unix.EMSGSIZE
	}
	buf := make([]byte, attr.MsgSize)
	got, prio, err := mqueue.Receive(t, f, buf, d)
	if err != nil {
		return 0, mqErr(err)
	}
	// Linux copies the priority first; a fault loses the message.
	if prioAddr != 0 {
		if err := copyOutUint32(t, prioAddr, prio); err != nil {
			return 0, err
		}
	}
	if _, err := t.CopyOutBytes(addr, buf[:got]); err != nil {
		return 0, err
	}
	return uintptr(got), nil
}

// siMesgq is SI_MESGQ, the si_code of a queue's notification.
const siMesgq = -3

// MqNotify implements mq_notify(2).
func MqNotify(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, sevAddr := a[0].Int(), a[1].Pointer()
	var n *mqueue.Notification
	if sevAddr != 0 {
		var b [64]byte
		if _, err := t.CopyInBytes(sevAddr, b[:]); err != nil {
			return 0, err
		}
		le := binary.LittleEndian
		value := le.Uint64(b[0:])
		signo := int(int32(le.Uint32(b[8:])))
		notify := int(int32(le.Uint32(b[12:])))
		switch notify {
		case mqueue.SigevNone:
		case mqueue.SigevSignal:
			if signo < 0 || signo > kernel.SignalMaximum {
				return 0, unix.EINVAL
			}
		case mqueue.SigevThread:
			// Linux's SIGEV_THREAD names a netlink socket in
			// sigev_signo; the Sentry has no netlink sockets.
			f, err := vfsFile(t, int32(signo))
			if err != nil {
				return 0, err
			}
			st, err := f.Stat(t)
			f.DecRef()
			if err == nil && st.Type() != unix.S_IFSOCK {
				return 0, unix.ENOTSOCK
			}
			return 0, unix.ECONNREFUSED
		default:
			return 0, unix.EINVAL
		}
		tg := t.ThreadGroup()
		n = &mqueue.Notification{Notify: notify, Signo: signo, Owner: tg, PID: int32(tg.ID())}
		if notify == mqueue.SigevSignal && signo != 0 {
			// The registrant's user namespace, as Linux's notify_user_ns.
			uns := t.UserNamespace()
			n.Deliver = func(pid int32, uid uint32) {
				info := kernel.NewSignalInfo(kernel.Signal(signo), siMesgq)
				// The sender as the owner's PID and user namespaces
				// number it.
				info.SetPIDUID(tg.PIDFromRoot(pid), uns.UIDOf(auth.KUID(uid)))
				info.SetValue(value)
				tg.SendSignal(info)
			}
		}
	}
	f, err := vfsFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return 0, mqueue.SetNotify(f, n, t.ThreadGroup())
}

// MqGetsetattr implements mq_getsetattr(2).
func MqGetsetattr(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, newAddr, oldAddr := a[0].Int(), a[1].Pointer(), a[2].Pointer()
	var set *mqueue.Attr
	if newAddr != 0 {
		var err error
		if set, err = copyInMqAttr(t, newAddr); err != nil {
			return 0, err
		}
		if set.Flags&^unix.O_NONBLOCK != 0 {
			return 0, unix.EINVAL
		}
	}
	f, err := vfsFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	old, err := mqueue.GetSetAttr(f, set)
	if err != nil {
		return 0, err
	}
	if oldAddr != 0 {
		return 0, copyOutMqAttr(t, oldAddr, old)
	}
	return 0, nil
}
