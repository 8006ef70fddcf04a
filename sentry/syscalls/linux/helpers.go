package linux

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// copyOutUint32 writes v at addr.
func copyOutUint32(t *kernel.Task, addr uintptr, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	_, err := t.CopyOutBytes(addr, b[:])
	return err
}

// copyOutUint64 writes v at addr.
func copyOutUint64(t *kernel.Task, addr uintptr, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, err := t.CopyOutBytes(addr, b[:])
	return err
}

// copyInUint64 reads a 64-bit word at addr.
func copyInUint64(t *kernel.Task, addr uintptr) (uint64, error) {
	var b [8]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// copyInUint32 reads a 32-bit word at addr.
func copyInUint32(t *kernel.Task, addr uintptr) (uint32, error) {
	var b [4]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// copyInStringArray reads a NULL-terminated array of string pointers
// (execve's argv and envp), with Linux's limits.
func copyInStringArray(t *kernel.Task, addr uintptr) ([]string, error) {
	if addr == 0 {
		return nil, nil
	}
	const maxStrings = 0x7fffffff
	const maxArgStrlen = 32 * 4096
	var out []string
	total := 0
	for i := 0; ; i++ {
		if i >= maxStrings {
			return nil, unix.E2BIG
		}
		p, err := copyInUint64(t, addr+uintptr(i)*8)
		if err != nil {
			return nil, err
		}
		if p == 0 {
			return out, nil
		}
		s, err := t.CopyInString(uintptr(p), maxArgStrlen-1)
		if err == unix.ENAMETOOLONG {
			return nil, unix.E2BIG
		}
		if err != nil {
			return nil, err
		}
		total += len(s) + 1
		if total > 6<<20 {
			return nil, unix.E2BIG
		}
		out = append(out, s)
	}
}

// timespec is struct timespec.
type timespec struct {
	Sec, Nsec int64
}

func copyInTimespec(t *kernel.Task, addr uintptr) (timespec, error) {
	var b [16]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return timespec{}, err
	}
	return timespec{int64(binary.LittleEndian.Uint64(b[0:])), int64(binary.LittleEndian.Uint64(b[8:]))}, nil
}

func copyOutTimespec(t *kernel.Task, addr uintptr, ts timespec) error {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(ts.Sec))
	binary.LittleEndian.PutUint64(b[8:], uint64(ts.Nsec))
	_, err := t.CopyOutBytes(addr, b[:])
	return err
}

// valid reports whether ts is a valid timespec (EINVAL otherwise).
func (ts timespec) valid() bool { return ts.Sec >= 0 && ts.Nsec >= 0 && ts.Nsec < 1e9 }

func (ts timespec) nanos() int64 {
	if ts.Sec > (1<<63-1)/1_000_000_000-1 {
		return 1<<63 - 1
	}
	return ts.Sec*1e9 + ts.Nsec
}

func timespecFromNanos(ns int64) timespec { return timespec{ns / 1e9, ns % 1e9} }

// timeval is struct timeval.
type timeval struct {
	Sec, Usec int64
}

func copyInTimeval(t *kernel.Task, addr uintptr) (timeval, error) {
	var b [16]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return timeval{}, err
	}
	return timeval{int64(binary.LittleEndian.Uint64(b[0:])), int64(binary.LittleEndian.Uint64(b[8:]))}, nil
}

func copyOutTimeval(t *kernel.Task, addr uintptr, tv timeval) error {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(tv.Sec))
	binary.LittleEndian.PutUint64(b[8:], uint64(tv.Usec))
	_, err := t.CopyOutBytes(addr, b[:])
	return err
}

func timevalFromNanos(ns int64) timeval { return timeval{ns / 1e9, (ns % 1e9) / 1e3} }

func le64(b []byte) uint64       { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32       { return binary.LittleEndian.Uint32(b) }
func putLE64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
func putLE32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
