package futex

import (
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// refWakeOp computes FUTEX_WAKE_OP from futex(2)'s description, checked
// against Linux 6.18: the new value of *uaddr2, whether the comparison holds,
// and the error. opErr means the operation is unknown (memory untouched),
// cmpErr that the comparison is unknown (memory changed).
func refWakeOp(val3, old uint32) (newVal uint32, cond, opErr, cmpErr bool) {
	op := val3 >> 28
	cmp := (val3 >> 24) & 0xf
	oparg := int64((val3 >> 12) & 0xfff)
	cmparg := int64(val3 & 0xfff)
	// Both 12-bit arguments are signed.
	if oparg >= 0x800 {
		oparg -= 0x1000
	}
	if cmparg >= 0x800 {
		cmparg -= 0x1000
	}
	if op&8 != 0 { // FUTEX_OP_OPARG_SHIFT
		oparg = 1 << (oparg & 31)
		op &^= 8
	}
	operand := uint32(oparg)
	switch op {
	case 0:
		newVal = operand
	case 1:
		newVal = old + operand
	case 2:
		newVal = old | operand
	case 3:
		newVal = old & ^operand
	case 4:
		newVal = old ^ operand
	default:
		return old, false, true, false
	}
	o := int64(int32(old))
	switch cmp {
	case 0:
		cond = o == cmparg
	case 1:
		cond = o != cmparg
	case 2:
		cond = o < cmparg
	case 3:
		cond = o <= cmparg
	case 4:
		cond = o > cmparg
	case 5:
		cond = o >= cmparg
	default:
		return newVal, false, false, true
	}
	return newVal, cond, false, false
}

func TestWakeOpTable(t *testing.T) {
	olds := []uint32{0, 5, 0x7ff, 0x80000000, 0xffffffff, 0xfffff800}
	args := []uint32{0, 5, 33, 0x7ff, 0x800, 0xfff}
	m := NewManager()
	as := newFakeAS(1, base, size)
	for op := uint32(0); op < 16; op++ {
		for cmp := uint32(0); cmp < 16; cmp++ {
			for _, oparg := range args {
				for _, cmparg := range args {
					for _, old := range olds {
						val3 := EncodeOp(op, oparg, cmp, cmparg)
						checkWakeOp(t, m, as, val3, old)
					}
				}
			}
		}
	}
}

func checkWakeOp(t *testing.T, m *Manager, as *fakeAS, val3, old uint32) {
	t.Helper()
	as.store(t, fb, old)
	w1 := prepare(t, m, as, fa, true, 0, BitsetMatchAny)
	w2 := prepare(t, m, as, fb, true, old, 1) // bitsets are ignored
	n, err := m.WakeOp(as, fa, fb, true, 1, 1, val3)
	newVal, cond, opErr, cmpErr := refWakeOp(val3, old)
	name := fmt.Sprintf("val3=%#08x old=%#x", val3, old)
	switch {
	case opErr || cmpErr:
		if err != unix.ENOSYS || n != 0 {
			t.Errorf("%s: WakeOp = %d, %v; want ENOSYS", name, n, err)
		}
		if w1.Woken() || w2.Woken() {
			t.Errorf("%s: woke a waiter with ENOSYS", name)
		}
	default:
		want := 1
		if cond {
			want = 2
		}
		if err != nil || n != want {
			t.Errorf("%s: WakeOp = %d, %v; want %d", name, n, err, want)
		}
		if !w1.Woken() || w2.Woken() != cond {
			t.Errorf("%s: woken %v, %v; want true, %v", name, w1.Woken(), w2.Woken(), cond)
		}
	}
	if got := as.load(t, fb); got != newVal {
		t.Errorf("%s: *uaddr2 = %#x, want %#x", name, got, newVal)
	}
	m.WaitComplete(w1)
	m.WaitComplete(w2)
}

// TestWakeOpLinux holds cases whose results were observed on Linux 6.18.
func TestWakeOpLinux(t *testing.T) {
	for _, tc := range []struct {
		name   string
		old    uint32
		val3   uint32
		err    error
		newVal uint32
		woke2  bool
	}{
		{"op 5 is ENOSYS, memory untouched", 10, 5<<28 | 3<<12, unix.ENOSYS, 10, false},
		{"op 7 is ENOSYS", 10, 7<<28 | 3<<12, unix.ENOSYS, 10, false},
		{"op 5|shift is ENOSYS", 1, 0xd<<28 | 4<<12, unix.ENOSYS, 1, false},
		{"cmp 6 is ENOSYS after the add", 10, 1<<28 | 6<<24 | 3<<12, unix.ENOSYS, 13, false},
		{"cmp 15 is ENOSYS after the add", 10, 1<<28 | 15<<24 | 3<<12, unix.ENOSYS, 13, false},
		{"shift 33 is shift 1", 0, 8<<28 | 33<<12, nil, 2, true},
		{"shift -1 is shift 31", 0, 8<<28 | 0xfff<<12, nil, 0x80000000, true},
		{"set 0xfff is -1", 0, 0xfff << 12, nil, 0xffffffff, true},
		{"set 0x800 sign-extends", 0, 0x800 << 12, nil, 0xfffff800, true},
		{"add -1", 5, 1<<28 | 0xfff<<12, nil, 4, false},
		{"andn 1", 7, 3<<28 | 1<<12, nil, 6, false},
		{"xor 0xfff", 1, 4<<28 | 0xfff<<12, nil, 0xfffffffe, false},
		{"or shift 4", 1, 0xa<<28 | 4<<12, nil, 0x11, false},
		{"lt is signed", 0x80000000, 1<<28 | 2<<24 | 0xfff, nil, 0x80000000, true},
		{"gt is signed", 0, 1<<28 | 4<<24 | 0xfff, nil, 0, true},
		{"eq -1 == 0xffffffff", 0xffffffff, 1<<28 | 0<<24 | 0xfff, nil, 0xffffffff, true},
		{"eq -1 != 0xfff", 0xfff, 1<<28 | 0<<24 | 0xfff, nil, 0xfff, false},
		{"ge", 5, 1<<28 | 5<<24 | 5, nil, 5, true},
		{"le false", 6, 1<<28 | 3<<24 | 5, nil, 6, false},
		{"ne", 6, 1<<28 | 1<<24 | 5, nil, 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			as.store(t, fb, tc.old)
			w2 := prepare(t, m, as, fb, true, tc.old, BitsetMatchAny)
			defer m.WaitComplete(w2)
			n, err := m.WakeOp(as, fa, fb, true, 1, 1, tc.val3)
			if err != tc.err {
				t.Errorf("WakeOp err = %v, want %v", err, tc.err)
			}
			if want := map[bool]int{false: 0, true: 1}[tc.woke2]; n != want {
				t.Errorf("WakeOp woke %d, want %d", n, want)
			}
			if got := as.load(t, fb); got != tc.newVal {
				t.Errorf("*uaddr2 = %#x, want %#x", got, tc.newVal)
			}
		})
	}
}

func TestWakeOpCounts(t *testing.T) {
	always := EncodeOp(OpAdd, 0, CmpEq, 0) // *uaddr2 stays 0; 0 == 0
	never := EncodeOp(OpAdd, 0, CmpNe, 0)
	for _, tc := range []struct {
		name           string
		nwake1, nwake2 int
		val3           uint32
		want           int
	}{
		{"both", 2, 2, always, 4},
		{"cmp false", 2, 2, never, 2},
		{"n=0 wakes one", 0, 0, always, 2},
		{"negative wakes one", -5, -5, always, 2},
		{"large", 100, 100, always, 6},
		{"one and two", 1, 2, always, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			as := newFakeAS(1, base, size)
			var ws []*Waiter
			for range 3 {
				ws = append(ws, prepare(t, m, as, fa, true, 0, BitsetMatchAny))
				ws = append(ws, prepare(t, m, as, fb, true, 0, BitsetMatchAny))
			}
			n, err := m.WakeOp(as, fa, fb, true, tc.nwake1, tc.nwake2, tc.val3)
			if err != nil || n != tc.want {
				t.Errorf("WakeOp = %d, %v; want %d", n, err, tc.want)
			}
			for _, w := range ws {
				m.WaitComplete(w)
			}
		})
	}
}

func TestWakeOpSameFutex(t *testing.T) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	var ws []*Waiter
	for range 3 {
		ws = append(ws, prepare(t, m, as, fa, true, 0, BitsetMatchAny))
	}
	// addr1 == addr2: both wakes act on the same queue.
	n, err := m.WakeOp(as, fa, fa, true, 1, 1, EncodeOp(OpAdd, 1, CmpEq, 0))
	if err != nil || n != 2 {
		t.Errorf("WakeOp = %d, %v; want 2", n, err)
	}
	if got := as.load(t, fa); got != 1 {
		t.Errorf("*uaddr = %d, want 1", got)
	}
	for _, w := range ws {
		m.WaitComplete(w)
	}
}

func TestWakeOpErrors(t *testing.T) {
	rw := newFakeAS(1, base, size)
	ro := &fakeAS{id: 1, mem: rw.mem, base: base, readOnly: true}
	rw.store(t, fb, 9)
	for _, tc := range []struct {
		name         string
		as           *fakeAS
		addr1, addr2 uintptr
		private      bool
		val3         uint32
		err          error
	}{
		{"misaligned addr1", rw, fa + 1, fb, true, 0, unix.EINVAL},
		{"misaligned addr2", rw, fa, fb + 2, true, 0, unix.EINVAL},
		{"read-only addr2", ro, fa, fb, true, EncodeOp(OpAdd, 1, CmpEq, 0), unix.EFAULT},
		{"read-only addr2 set", ro, fa, fb, true, EncodeOp(OpSet, 1, CmpEq, 0), unix.EFAULT},
		{"unmapped addr2", rw, fa, 0x4, true, 0, unix.EFAULT},
		{"unmapped addr1 private", rw, 0x4, fb, true, EncodeOp(OpAdd, 0, CmpEq, 0), nil},
		{"unmapped addr1 shared", rw, 0x4, fb, false, 0, unix.EFAULT},
		// The operation is checked before memory is touched.
		{"bad op on unmapped addr2", rw, fa, 0x4, true, 6 << 28, unix.ENOSYS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager()
			_, err := m.WakeOp(tc.as, tc.addr1, tc.addr2, tc.private, 1, 1, tc.val3)
			if !errors.Is(err, tc.err) {
				t.Errorf("WakeOp err = %v, want %v", err, tc.err)
			}
			if got := rw.load(t, fb); got != 9 {
				t.Errorf("*uaddr2 changed to %d", got)
			}
		})
	}
}
