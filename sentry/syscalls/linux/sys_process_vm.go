package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// ProcessVMReadv implements process_vm_readv(2).
func ProcessVMReadv(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return processVM(t, a, false)
}

// ProcessVMWritev implements process_vm_writev(2).
func ProcessVMWritev(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return processVM(t, a, true)
}

// processVM copies between the caller's iovecs and another process's, in
// Linux's order of checks (process_vm_rw): flags, the local iovecs (as
// readv checks them), nothing to do when they are empty, the remote
// iovecs (only read: their addresses are the other process's), nothing
// to do when they are empty, then the process and the permission.
func processVM(t *kernel.Task, a arch.SyscallArguments, write bool) (uintptr, error) {
	pid, lvec, liovcnt, rvec, riovcnt, flags := a[0].Int(), a[1].Pointer(), a[2].Uint64(), a[3].Pointer(), a[4].Uint64(), a[5].Uint64()
	if flags != 0 || liovcnt > uioMaxIOV {
		return 0, unix.EINVAL
	}
	liovs, err := copyInIovecs(t, lvec, int32(liovcnt))
	if err != nil {
		return 0, err
	}
	if iovTotal(liovs) == 0 {
		return 0, nil
	}
	remote, err := copyInRemoteIovecs(t, rvec, riovcnt)
	if err != nil {
		return 0, err
	}
	if len(remote) == 0 {
		return 0, nil
	}
	m, err := t.MemoryForAccess(pid)
	if err != nil {
		return 0, err
	}
	defer m.DecUsers()
	local := make([]mm.Segment, len(liovs))
	for i, v := range liovs {
		local[i] = mm.Segment{Addr: v.base, Len: v.len}
	}
	var n int64
	if write {
		n, err = mm.CopyBetween(m, remote, t.MemoryManager(), local)
	} else {
		n, err = mm.CopyBetween(t.MemoryManager(), local, m, remote)
	}
	return uintptr(n), err
}

// copyInRemoteIovecs reads the remote iovec array: EINVAL for more than
// UIO_MAXIOV or a negative length, EFAULT if the array cannot be read.
// Empty segments are dropped. The addresses are not checked here: one
// outside the other process's memory fails the copy with EFAULT.
func copyInRemoteIovecs(t *kernel.Task, addr uintptr, n uint64) ([]mm.Segment, error) {
	if n > uioMaxIOV {
		return nil, unix.EINVAL
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, 16*n)
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return nil, unix.EFAULT
	}
	segs := make([]mm.Segment, 0, n)
	for i := uint64(0); i < n; i++ {
		base := binary.LittleEndian.Uint64(b[16*i:])
		l := binary.LittleEndian.Uint64(b[16*i+8:])
		if int64(l) < 0 {
			return nil, unix.EINVAL
		}
		if l > 0 {
			segs = append(segs, mm.Segment{Addr: uintptr(base), Len: l})
		}
	}
	return segs, nil
}
