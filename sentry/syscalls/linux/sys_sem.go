package linux

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/ipc"
	"github.com/moat-sandbox/moat/sentry/kernel/sem"
)

// semctl commands beyond golang.org/x/sys/unix.
const (
	semGetPID  = 11
	semGetVal  = 12
	semGetAll  = 13
	semGetNcnt = 14
	semGetZcnt = 15
	semSetVal  = 16
	semSetAll  = 17
	semStat    = 18
	semInfo    = 19
	semStatAny = 20
	// sembufSize is sizeof(struct sembuf); semidDSSize sizeof(struct
	// semid64_ds) on amd64.
	sembufSize  = 6
	semidDSSize = 104
)

// Semget implements semget(2).
func Semget(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	key, nsems, flags := a[0].Int(), a[1].Int(), a[2].Int()
	id, err := t.IPCNamespace().Sem().Get(t.Credentials(), key, nsems, flags)
	return uintptr(id), err
}

// Semop implements semop(2).
func Semop(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, semop(t, a[0].Int(), a[1].Pointer(), a[2].Uint64(), 0)
}

// Semtimedop implements semtimedop(2).
func Semtimedop(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, semop(t, a[0].Int(), a[1].Pointer(), a[2].Uint64(), a[3].Pointer())
}

// semop is semtimedop with a relative timeout at tsAddr (0 for none).
func semop(t *kernel.Task, id int32, addr uintptr, nsops uint64, tsAddr uintptr) error {
	if nsops < 1 || id < 0 {
		return unix.EINVAL
	}
	if nsops > sem.SEMOPM {
		return unix.E2BIG
	}
	b := make([]byte, nsops*sembufSize)
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return unix.EFAULT
	}
	var deadline time.Time
	hasDeadline := false
	if tsAddr != 0 {
		ts, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return unix.EFAULT
		}
		if !ts.valid() {
			return unix.EINVAL
		}
		deadline, hasDeadline = time.Now().Add(time.Duration(ts.nanos())), true
	}
	ops := make([]sem.Op, nsops)
	le := binary.LittleEndian
	for i := range ops {
		o := b[i*sembufSize:]
		ops[i] = sem.Op{Num: le.Uint16(o), Op: int16(le.Uint16(o[2:])), Flags: int16(le.Uint16(o[4:]))}
	}
	return t.IPCNamespace().Sem().Do(t, t.Credentials(), t.ThreadGroup(), t.ProcessRef(), id, ops, deadline, hasDeadline)
}

// Semctl implements semctl(2).
func Semctl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, num, cmd, arg := a[0].Int(), a[1].Int(), a[2].Int()&^ipc64, a[3].Pointer()
	if id < 0 {
		return 0, unix.EINVAL
	}
	reg := t.IPCNamespace().Sem()
	c := t.Credentials()
	le := binary.LittleEndian
	switch cmd {
	case ipcInfo, semInfo:
		sets, highest, sems := reg.Info()
		// struct seminfo: ten ints.
		vals := []int32{sem.SEMMAP, sem.SEMMNI, sem.SEMMNS, sem.SEMMNU, sem.SEMMSL, sem.SEMOPM, sem.SEMUME, sem.SEMUSZ, sem.SEMVMX, sem.SEMAEM}
		if cmd == semInfo {
			vals[7], vals[9] = int32(sets), int32(sems)
		}
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			le.PutUint32(b[4*i:], uint32(v))
		}
		if _, err := t.CopyOutBytes(arg, b); err != nil {
			return 0, unix.EFAULT
		}
		return uintptr(max(highest, 0)), nil
	case unix.IPC_STAT, semStat, semStatAny:
		d, err := reg.Stat(c, id, cmd != unix.IPC_STAT, cmd == semStatAny)
		if err != nil {
			return 0, err
		}
		b := make([]byte, semidDSSize)
		putIPCPerm(b, &d.Perm, d.Perm.Mode, c.UserNamespace)
		le.PutUint64(b[48:], uint64(d.Otime))
		le.PutUint64(b[64:], uint64(d.Ctime))
		le.PutUint64(b[80:], uint64(d.NSems))
		if _, err := t.CopyOutBytes(arg, b); err != nil {
			return 0, unix.EFAULT
		}
		if cmd == unix.IPC_STAT {
			return 0, nil
		}
		return uintptr(d.Perm.ID), nil
	case unix.IPC_SET:
		b := make([]byte, semidDSSize)
		if _, err := t.CopyInBytes(arg, b); err != nil {
			return 0, unix.EFAULT
		}
		uid, gid, err := ipcSetOwner(c, b)
		if err != nil {
			return 0, err
		}
		return 0, reg.Set(c, id, uid, gid, le.Uint32(b[20:]))
	case unix.IPC_RMID:
		return 0, reg.Remove(c, id)
	case semGetVal, semGetPID, semGetNcnt, semGetZcnt:
		what := map[int32]sem.Value{semGetVal: sem.Val, semGetPID: sem.PID, semGetNcnt: sem.NCnt, semGetZcnt: sem.ZCnt}[cmd]
		v, err := reg.GetOne(c, id, num, what, t)
		return uintptr(v), err
	case semSetVal:
		return 0, reg.SetVal(c, t.ProcessRef(), id, num, int32(a[3].Uint64()))
	case semGetAll:
		vals, err := reg.GetAll(c, id)
		if err != nil {
			return 0, err
		}
		b := make([]byte, 2*len(vals))
		for i, v := range vals {
			le.PutUint16(b[2*i:], v)
		}
		if _, err := t.CopyOutBytes(arg, b); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil
	case semSetAll:
		n, err := reg.NSems(c, id, ipc.MayWrite)
		if err != nil {
			return 0, err
		}
		b := make([]byte, 2*n)
		if _, err := t.CopyInBytes(arg, b); err != nil {
			return 0, unix.EFAULT
		}
		vals := make([]uint16, n)
		for i := range vals {
			vals[i] = le.Uint16(b[2*i:])
		}
		return 0, reg.SetAll(c, t.ProcessRef(), id, vals)
	}
	return 0, unix.EINVAL
}

// ipcSetOwner maps the owner IPC_SET gives in struct ipc64_perm b from
// c's user namespace to global ids: EINVAL for one it does not map (Linux
// checks the caller's right to change the object first).
func ipcSetOwner(c *auth.Credentials, b []byte) (uint32, uint32, error) {
	le := binary.LittleEndian
	u, uok := c.UserNamespace.MapToKUID(le.Uint32(b[4:]))
	g, gok := c.UserNamespace.MapToKGID(le.Uint32(b[8:]))
	if !uok || !gok {
		return 0, 0, unix.EINVAL
	}
	return uint32(u), uint32(g), nil
}

// putIPCPerm writes struct ipc64_perm (48 bytes) with mode to b, the ids
// as user namespace ns sees them.
func putIPCPerm(b []byte, p *ipc.Perm, mode uint32, ns *auth.UserNamespace) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(p.Key))
	le.PutUint32(b[4:], ns.UIDOf(p.UID))
	le.PutUint32(b[8:], ns.GIDOf(p.GID))
	le.PutUint32(b[12:], ns.UIDOf(p.CUID))
	le.PutUint32(b[16:], ns.GIDOf(p.CGID))
	le.PutUint32(b[20:], mode)
	le.PutUint16(b[24:], p.Seq())
}
