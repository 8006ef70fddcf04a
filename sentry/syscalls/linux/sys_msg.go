package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/msg"
)

// msgctl commands beyond golang.org/x/sys/unix.
const (
	msgStat    = 11
	msgInfo    = 12
	msgStatAny = 13
	// msqidDSSize is sizeof(struct msqid64_ds) on amd64; msgInfoSize
	// sizeof(struct msginfo).
	msqidDSSize = 120
	msgInfoSize = 32
)

// Msgget implements msgget(2).
func Msgget(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, err := t.IPCNamespace().Msg().Get(t.Credentials(), a[0].Int(), a[1].Int())
	return uintptr(id), err
}

// Msgsnd implements msgsnd(2).
func Msgsnd(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, addr, size, flags := a[0].Int(), a[1].Pointer(), a[2].Uint64(), a[3].Int()
	typ, err := copyInUint64(t, addr)
	if err != nil {
		return 0, unix.EFAULT
	}
	if size > msg.MSGMAX || id < 0 {
		return 0, unix.EINVAL
	}
	if int64(typ) < 1 {
		return 0, unix.EINVAL
	}
	text := make([]byte, size)
	if _, err := t.CopyInBytes(addr+8, text); err != nil {
		return 0, unix.EFAULT
	}
	m := msg.Message{Type: int64(typ), Text: text}
	return 0, t.IPCNamespace().Msg().Send(t, t.Credentials(), t.ProcessRef(), id, m, flags)
}

// Msgrcv implements msgrcv(2).
func Msgrcv(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, addr, size, typ, flags := a[0].Int(), a[1].Pointer(), a[2].Uint64(), int64(a[3].Uint64()), a[4].Int()
	if id < 0 || int64(size) < 0 {
		return 0, unix.EINVAL
	}
	if flags&msg.FlagCopy != 0 && (flags&msg.FlagExcept != 0 || flags&unix.IPC_NOWAIT == 0) {
		return 0, unix.EINVAL
	}
	m, err := t.IPCNamespace().Msg().Receive(t, t.Credentials(), t.ProcessRef(), id, size, typ, flags)
	if err != nil {
		return 0, err
	}
	// A fault here loses the message, as on Linux.
	if err := copyOutUint64(t, addr, uint64(m.Type)); err != nil {
		return 0, unix.EFAULT
	}
	if _, err := t.CopyOutBytes(addr+8, m.Text); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(len(m.Text)), nil
}

// Msgctl implements msgctl(2).
func Msgctl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, cmd, buf := a[0].Int(), a[1].Int(), a[2].Pointer()
	if id < 0 || cmd < 0 {
		return 0, unix.EINVAL
	}
	cmd &^= ipc64
	reg := t.IPCNamespace().Msg()
	c := t.Credentials()
	le := binary.LittleEndian
	switch cmd {
	case ipcInfo, msgInfo:
		queues, highest, msgs, bytes := reg.Info()
		// struct msginfo: msgpool, msgmap, msgmax, msgmnb, msgmni, msgssz,
		// msgtql (ints), msgseg (unsigned short).
		vals := []uint32{msg.MSGPOOL, msg.MSGMAP, msg.MSGMAX, msg.MSGMNB, msg.MSGMNI, msg.MSGSSZ, msg.MSGTQL}
		if cmd == msgInfo {
			vals[0], vals[1], vals[6] = uint32(queues), uint32(msgs), uint32(bytes)
		}
		b := make([]byte, msgInfoSize)
		for i, v := range vals {
			le.PutUint32(b[4*i:], v)
		}
		le.PutUint16(b[28:], msg.MSGSEG)
		if _, err := t.CopyOutBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		return uintptr(max(highest, 0)), nil
	case unix.IPC_STAT, msgStat, msgStatAny:
		d, err := reg.Stat(c, id, cmd != unix.IPC_STAT, cmd == msgStatAny, t)
		if err != nil {
			return 0, err
		}
		b := make([]byte, msqidDSSize)
		putIPCPerm(b, &d.Perm, d.Perm.Mode, c.UserNamespace)
		le.PutUint64(b[48:], uint64(d.Stime))
		le.PutUint64(b[56:], uint64(d.Rtime))
		le.PutUint64(b[64:], uint64(d.Ctime))
		le.PutUint64(b[72:], d.CBytes)
		le.PutUint64(b[80:], d.QNum)
		le.PutUint64(b[88:], d.QBytes)
		le.PutUint32(b[96:], uint32(d.LSPID))
		le.PutUint32(b[100:], uint32(d.LRPID))
		if _, err := t.CopyOutBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		if cmd == unix.IPC_STAT {
			return 0, nil
		}
		return uintptr(d.Perm.ID), nil
	case unix.IPC_SET:
		b := make([]byte, msqidDSSize)
		if _, err := t.CopyInBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		uid, gid, err := ipcSetOwner(c, b)
		if err != nil {
			return 0, err
		}
		return 0, reg.Set(c, id, uid, gid, le.Uint32(b[20:]), le.Uint64(b[88:]))
	case unix.IPC_RMID:
		return 0, reg.Remove(c, id)
	}
	return 0, unix.EINVAL
}
