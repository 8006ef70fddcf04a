package strace

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fuzzMem is application memory built from fuzz input, in one of several
// shapes chosen by mode.
type fuzzMem struct {
	data []byte
	mode byte
}

const fuzzBase = 0x10000

func (m *fuzzMem) CopyInBytes(addr uintptr, dst []byte) (int, error) {
	if len(m.data) == 0 {
		return 0, unix.EFAULT
	}
	switch m.mode % 4 {
	case 0:
		// Every address is readable and repeats the data: pointers in
		// the data always lead somewhere.
		for i := range dst {
			dst[i] = m.data[(uint64(addr)+uint64(i))%uint64(len(m.data))]
		}
		return len(dst), nil
	case 1:
		// One region at fuzzBase.
		a := uint64(addr)
		if a < fuzzBase || a-fuzzBase >= uint64(len(m.data)) {
			return 0, unix.EFAULT
		}
		n := copy(dst, m.data[a-fuzzBase:])
		if n < len(dst) {
			return n, unix.EFAULT
		}
		return n, nil
	case 2:
		// A broken implementation: nonsense counts with no error.
		for i := range dst {
			dst[i] = m.data[i%len(m.data)]
		}
		return int(int8(m.data[0])) * 1000, nil
	default:
		// Repeating data, with every third page unmapped.
		for i := range dst {
			a := uint64(addr) + uint64(i)
			if (a>>12)%3 == 0 {
				return i, unix.EFAULT
			}
			dst[i] = m.data[a%uint64(len(m.data))]
		}
		return len(dst), nil
	}
}

func FuzzEntryExit(f *testing.F) {
	f.Add(uint16(unix.SYS_EXECVE), uint64(fuzzBase), uint64(fuzzBase+8), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), byte(0), []byte("/bin/ls\x00-l\x00"))
	f.Add(uint16(unix.SYS_READ), uint64(3), uint64(fuzzBase), uint64(100), uint64(0), uint64(0), uint64(0), uint64(40), byte(1), []byte("hello\x00\x01\xff"))
	f.Add(uint16(unix.SYS_FUTEX), uint64(fuzzBase), uint64(9), uint64(1), uint64(fuzzBase), uint64(0), uint64(0xffffffff), uint64(0), byte(0), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint16(unix.SYS_IOCTL), uint64(0), uint64(unix.TCGETS), uint64(fuzzBase), uint64(0), uint64(0), uint64(0), uint64(0), byte(3), []byte{0xff, 0xff})
	f.Add(uint16(unix.SYS_GETDENTS64), uint64(3), uint64(fuzzBase), uint64(4096), uint64(0), uint64(0), uint64(0), uint64(4096), byte(0), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 24, 0})
	f.Add(uint16(unix.SYS_CLONE3), uint64(fuzzBase), uint64(88), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), byte(2), []byte{0x80, 1})
	f.Add(uint16(unix.SYS_SENDMSG), uint64(3), uint64(fuzzBase), uint64(0), uint64(0), uint64(0), uint64(0), uint64(5), byte(0), []byte{1, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint16(unix.SYS_PSELECT6), uint64(1<<20), uint64(fuzzBase), uint64(fuzzBase), uint64(0), uint64(fuzzBase), uint64(fuzzBase), uint64(3), byte(0), []byte{0xff})
	f.Add(uint16(999), uint64(1), uint64(2), uint64(3), uint64(4), uint64(5), uint64(6), uint64(7), byte(0), []byte{})
	f.Fuzz(func(t *testing.T, sysno uint16, a0, a1, a2, a3, a4, a5, ret uint64, mode byte, data []byte) {
		m := &fuzzMem{data: data, mode: mode}
		args := [6]uintptr{uintptr(a0), uintptr(a1), uintptr(a2), uintptr(a3), uintptr(a4), uintptr(a5)}
		nr := uintptr(sysno) % (MaxSyscall + 10)
		entry := entryLine(m, nr, args)
		exit := exitLine(m, nr, args, uintptr(ret))
		for _, s := range []string{entry, exit} {
			for i := 0; i < len(s); i++ {
				if s[i] < ' ' || s[i] > '~' {
					t.Fatalf("non-printable byte %#x in %q", s[i], s)
				}
			}
		}
		name, _, _ := strings.Cut(entry, "(")
		if !strings.HasPrefix(exit, name+"(") || !strings.Contains(exit, ") = ") {
			t.Fatalf("exit %q does not match entry %q", exit, entry)
		}
	})
}

// TestRandomArgs runs the decoder over random arguments and memory
// for every syscall, as a quick form of the fuzz target.
func TestRandomArgs(t *testing.T) {
	seed := uint64(0x9e3779b97f4a7c15)
	rnd := func() uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	data := make([]byte, 512)
	for i := range data {
		data[i] = byte(rnd())
	}
	for nr := uintptr(0); nr < MaxSyscall+2; nr++ {
		for round := 0; round < 40; round++ {
			m := &fuzzMem{data: data, mode: byte(round)}
			var args [6]uintptr
			for i := range args {
				switch rnd() % 4 {
				case 0:
					args[i] = uintptr(fuzzBase + rnd()%600)
				case 1:
					args[i] = uintptr(rnd() % 64)
				default:
					args[i] = uintptr(rnd())
				}
			}
			ret := uintptr(rnd() % 300)
			if round%5 == 0 {
				ret = uintptr(-int64(rnd() % 600))
			}
			entryLine(m, nr, args)
			exitLine(m, nr, args, ret)
		}
	}
}
