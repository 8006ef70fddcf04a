package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// direntSize returns the record length of a dirent with name.
func direntSize(name string, old bool) int {
	if old {
		// d_ino, d_off (unsigned long), d_reclen, name, NUL, d_type.
		return (8 + 8 + 2 + len(name) + 2 + 7) &^ 7
	}
	// d_ino, d_off, d_reclen, d_type, name, NUL.
	return (8 + 8 + 2 + 1 + len(name) + 1 + 7) &^ 7
}

func appendDirent(b []byte, d fs.Dirent, old bool) []byte {
	n := direntSize(d.Name, old)
	rec := make([]byte, n)
	le := binary.LittleEndian
	le.PutUint64(rec[0:], d.Ino)
	le.PutUint64(rec[8:], uint64(d.NextOff))
	le.PutUint16(rec[16:], uint16(n))
	if old {
		copy(rec[18:], d.Name)
		rec[n-1] = d.Type
	} else {
		rec[18] = d.Type
		copy(rec[19:], d.Name)
	}
	return append(b, rec...)
}

func getdents(t *kernel.Task, a arch.SyscallArguments, old bool) (uintptr, error) {
	addr, size := a[1].Pointer(), int(a[2].Uint())
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	it, ok := f.Impl().(fs.DirIterator)
	if !ok {
		return 0, unix.ENOTDIR
	}
	if size < 0 {
		size = 1 << 30
	}
	// Entries that would land on memory the application cannot write
	// are not consumed: Linux stops at the first record it fails to copy
	// (EFAULT if it is the first), leaving the position there.
	writable := int(writablePrefix(t, []iovec{{addr, uint64(size)}}))
	var out []byte
	tooSmall, fault := false, false
	err = it.IterDirents(t, f, func(d fs.Dirent) bool {
		n := direntSize(d.Name, old)
		if len(out)+n > size {
			tooSmall = len(out) == 0
			return false
		}
		if len(out)+n > writable {
			fault = true
			return false
		}
		out = appendDirent(out, d, old)
		return true
	})
	fs.NotifyAccess(f)
	if err != nil && len(out) == 0 {
		return 0, err
	}
	if tooSmall {
		return 0, unix.EINVAL
	}
	if fault && len(out) == 0 {
		return 0, unix.EFAULT
	}
	if len(out) > 0 {
		if _, err := t.CopyOutBytes(addr, out); err != nil {
			return 0, unix.EFAULT
		}
	}
	return uintptr(len(out)), nil
}

// Getdents64 implements getdents64(2).
func Getdents64(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return getdents(t, a, false)
}

// Getdents implements getdents(2) (struct linux_dirent).
func Getdents(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return getdents(t, a, true)
}
