package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/shm"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// System V shared memory flags and shmctl commands beyond
// golang.org/x/sys/unix.
const (
	shmRemap   = 0o40000
	shmExec    = 0o100000
	ipcInfo    = 3
	shmLock    = 11
	shmUnlock  = 12
	shmStat    = 13
	shmInfo    = 14
	shmStatAny = 15
	ipc64      = 0x100
	// shmidDSSize is sizeof(struct shmid_ds) on amd64.
	shmidDSSize = 112
)

func shmRegistry(t *kernel.Task) *shm.Registry {
	return t.IPCNamespace().SHM()
}

// Shmget implements shmget(2).
func Shmget(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	key, size, flags := a[0].Int(), a[1].Uint64(), a[2].Int()
	id, err := shmRegistry(t).Get(t.Credentials(), t.ProcessRef(), key, size, flags)
	return uintptr(id), err
}

// Shmat implements shmat(2).
func Shmat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, addr, flags := a[0].Int(), a[1].Pointer(), a[2].Int()
	if addr%shm.SHMLBA != 0 {
		if flags&unix.SHM_RND == 0 {
			return 0, unix.EINVAL
		}
		addr &^= shm.SHMLBA - 1
		if addr == 0 && flags&shmRemap != 0 {
			return 0, unix.EINVAL
		}
	} else if addr == 0 && flags&shmRemap != 0 {
		// SHM_REMAP needs an address to remap.
		return 0, unix.EINVAL
	}
	readOnly, exec := flags&unix.SHM_RDONLY != 0, flags&shmExec != 0
	s, err := shmRegistry(t).Attach(t.Credentials(), t.ProcessRef(), id, readOnly, exec)
	if err != nil {
		return 0, err
	}
	defer s.Object().DecRef()
	o := mm.MMapOpts{
		Addr:    addr,
		Length:  uintptr(s.Size),
		Prot:    unix.PROT_READ,
		MaxProt: unix.PROT_READ | unix.PROT_EXEC,
		Object:  s.Object(),
		Name:    s.Name(),
	}
	if !readOnly {
		o.Prot |= unix.PROT_WRITE
		o.MaxProt |= unix.PROT_WRITE
	}
	// The personality's READ_IMPLIES_EXEC applies, as shmat is do_mmap.
	if exec || t.ReadImpliesExec() {
		o.Prot |= unix.PROT_EXEC
	}
	if addr != 0 {
		o.Fixed = flags&shmRemap != 0
		o.NoReplace = !o.Fixed
	}
	r, err := t.MemoryManager().MMap(o)
	if err == unix.EEXIST {
		// A range in use without SHM_REMAP.
		err = unix.EINVAL
	}
	return r, err
}

// Shmdt implements shmdt(2).
func Shmdt(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	reg := shmRegistry(t)
	o, err := t.MemoryManager().DetachObject(a[0].Pointer(), reg.Owns)
	if err != nil {
		return 0, err
	}
	reg.Detached(o, t.ProcessRef())
	return 0, nil
}

// Shmctl implements shmctl(2).
func Shmctl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	id, cmd, buf := a[0].Int(), a[1].Int()&^ipc64, a[2].Pointer()
	reg := shmRegistry(t)
	c := t.Credentials()
	le := binary.LittleEndian
	switch cmd {
	case unix.IPC_STAT, shmStat, shmStatAny:
		d, sid, err := reg.Stat(c, id, cmd != unix.IPC_STAT, cmd == shmStatAny, t)
		if err != nil {
			return 0, err
		}
		b := make([]byte, shmidDSSize)
		le.PutUint32(b[0:], uint32(d.Perm.Key))
		ns := c.UserNamespace
		le.PutUint32(b[4:], ns.UIDOf(auth.KUID(d.Perm.Uid)))
		le.PutUint32(b[8:], ns.GIDOf(auth.KGID(d.Perm.Gid)))
		le.PutUint32(b[12:], ns.UIDOf(auth.KUID(d.Perm.Cuid)))
		le.PutUint32(b[16:], ns.GIDOf(auth.KGID(d.Perm.Cgid)))
		le.PutUint32(b[20:], d.Perm.Mode)
		le.PutUint16(b[24:], d.Perm.Seq)
		le.PutUint64(b[48:], d.Segsz)
		le.PutUint64(b[56:], uint64(d.Atime))
		le.PutUint64(b[64:], uint64(d.Dtime))
		le.PutUint64(b[72:], uint64(d.Ctime))
		le.PutUint32(b[80:], uint32(d.Cpid))
		le.PutUint32(b[84:], uint32(d.Lpid))
		le.PutUint64(b[88:], d.Nattch)
		if _, err := t.CopyOutBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		if cmd == unix.IPC_STAT {
			return 0, nil
		}
		return uintptr(sid), nil
	case unix.IPC_SET:
		b := make([]byte, shmidDSSize)
		if _, err := t.CopyInBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		uid, gid, err := ipcSetOwner(c, b)
		if err != nil {
			return 0, err
		}
		return 0, reg.Set(c, id, uid, gid, le.Uint32(b[20:]))
	case unix.IPC_RMID:
		return 0, reg.Remove(c, id)
	case shmLock, shmUnlock:
		return 0, reg.Lock(c, id, cmd == shmLock)
	case ipcInfo:
		// struct shminfo64: shmmax, shmmin, shmmni, shmseg, shmall and
		// four unused words.
		b := make([]byte, 9*8)
		le.PutUint64(b[0:], shm.SHMMAX)
		le.PutUint64(b[8:], shm.SHMMIN)
		le.PutUint64(b[16:], shm.SHMMNI)
		le.PutUint64(b[24:], shm.SHMMNI) // SHMSEG
		le.PutUint64(b[32:], shm.SHMALL)
		if _, err := t.CopyOutBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		_, highest, _ := reg.Info()
		return uintptr(max(highest, 0)), nil
	case shmInfo:
		// struct shm_info: used_ids, then shm_tot, shm_rss, shm_swp and
		// two swap counters.
		used, highest, pages := reg.Info()
		b := make([]byte, 48)
		le.PutUint32(b[0:], uint32(used))
		le.PutUint64(b[8:], pages)
		le.PutUint64(b[16:], pages)
		if _, err := t.CopyOutBytes(buf, b); err != nil {
			return 0, unix.EFAULT
		}
		return uintptr(max(highest, 0)), nil
	}
	return 0, unix.EINVAL
}
