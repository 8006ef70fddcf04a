package linux

import (
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/bpf"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// seccompKnownFlags are the SECCOMP_SET_MODE_FILTER flags Linux knows.
const seccompKnownFlags = unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_LOG |
	unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW | unix.SECCOMP_FILTER_FLAG_NEW_LISTENER |
	unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV

// Sizes SECCOMP_GET_NOTIF_SIZES reports: struct seccomp_notif,
// seccomp_notif_resp and seccomp_data.
const (
	seccompNotifSize     = 80
	seccompNotifRespSize = 24
)

// sockFprogSize is sizeof(struct sock_fprog): a u16 length, padding, and
// a pointer.
const sockFprogSize = 16

var seccompListenerLogged sync.Once

// Seccomp implements seccomp(2).
func Seccomp(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return doSeccomp(t, a[0].Uint(), a[1].Uint(), a[2].Pointer())
}

// doSeccomp is seccomp(2), also reached through PR_SET_SECCOMP.
func doSeccomp(t *kernel.Task, op, flags uint32, uargs uintptr) (uintptr, error) {
	switch op {
	case unix.SECCOMP_SET_MODE_STRICT:
		if flags != 0 || uargs != 0 {
			return 0, unix.EINVAL
		}
		return 0, t.SetSeccompStrict()
	case unix.SECCOMP_SET_MODE_FILTER:
		return seccompSetFilter(t, flags, uargs)
	case unix.SECCOMP_GET_ACTION_AVAIL:
		if flags != 0 {
			return 0, unix.EINVAL
		}
		action, err := copyInUint32(t, uargs)
		if err != nil {
			return 0, unix.EFAULT
		}
		switch action {
		case unix.SECCOMP_RET_KILL_PROCESS, unix.SECCOMP_RET_KILL_THREAD, unix.SECCOMP_RET_TRAP,
			unix.SECCOMP_RET_ERRNO, unix.SECCOMP_RET_TRACE, unix.SECCOMP_RET_LOG, unix.SECCOMP_RET_ALLOW:
			return 0, nil
		}
		// SECCOMP_RET_USER_NOTIF too: without listeners (see below) a
		// filter could only ever get ENOSYS from it.
		return 0, unix.EOPNOTSUPP
	case unix.SECCOMP_GET_NOTIF_SIZES:
		if flags != 0 {
			return 0, unix.EINVAL
		}
		var b [6]byte
		binary.LittleEndian.PutUint16(b[0:], seccompNotifSize)
		binary.LittleEndian.PutUint16(b[2:], seccompNotifRespSize)
		binary.LittleEndian.PutUint16(b[4:], bpf.DataSize)
		if _, err := t.CopyOutBytes(uargs, b[:]); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil
	}
	return 0, unix.EINVAL
}

// seccompSetFilter is SECCOMP_SET_MODE_FILTER, checking in Linux's order:
// flags, the sock_fprog, its length, the privilege, the program.
func seccompSetFilter(t *kernel.Task, flags uint32, uargs uintptr) (uintptr, error) {
	if flags&^seccompKnownFlags != 0 {
		return 0, unix.EINVAL
	}
	const tsyncListener = unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	if flags&tsyncListener == tsyncListener && flags&unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH == 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0 && flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
		return 0, unix.EINVAL
	}
	var fprog [sockFprogSize]byte
	if _, err := t.CopyInBytes(uargs, fprog[:]); err != nil {
		return 0, unix.EFAULT
	}
	n := int(binary.LittleEndian.Uint16(fprog[0:]))
	addr := uintptr(binary.LittleEndian.Uint64(fprog[8:]))
	if n == 0 || n > bpf.MaxInstructions {
		return 0, unix.EINVAL
	}
	// Without no_new_privs, CAP_SYS_ADMIN in the caller's user namespace.
	if !t.NoNewPrivs() && !t.Credentials().HasOwnCapability(unix.CAP_SYS_ADMIN) {
		return 0, unix.EACCES
	}
	raw := make([]byte, n*bpf.InstructionSize)
	if _, err := t.CopyInBytes(addr, raw); err != nil {
		return 0, unix.EFAULT
	}
	insns, err := bpf.Decode(raw)
	if err != nil {
		return 0, unix.EINVAL
	}
	prog, err := bpf.Compile(insns)
	if err != nil {
		t.Log().Debug("seccomp: filter refused", "tid", t.ThreadID(), "err", err)
		return 0, unix.EINVAL
	}
	if flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER != 0 {
		// User notification needs a listener file and a supervisor;
		// Moat answers as a kernel without it did.
		seccompListenerLogged.Do(func() {
			t.Log().Info("seccomp: SECCOMP_FILTER_FLAG_NEW_LISTENER (user notification) is not supported", "tid", t.ThreadID())
		})
		return 0, unix.EINVAL
	}
	tid, err := t.AttachSeccompFilter(prog, flags&(kernel.SeccompFlagTSync|kernel.SeccompFlagLog|kernel.SeccompFlagSpecAllow|kernel.SeccompFlagTSyncESRCH))
	if err != nil {
		return 0, err
	}
	return uintptr(tid), nil
}
