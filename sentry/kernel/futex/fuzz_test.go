package futex

import (
	"encoding/binary"
	"testing"
)

// FuzzWakeOp checks FUTEX_WAKE_OP against the reference for any val3 and
// old value.
func FuzzWakeOp(f *testing.F) {
	f.Add(uint32(0), uint32(0))
	f.Add(EncodeOp(OpAdd|OpArgShift, 0xfff, CmpLt, 0x800), uint32(0x80000000))
	f.Add(uint32(0xffffffff), uint32(7))
	m := NewManager()
	as := newFakeAS(1, base, size)
	f.Fuzz(func(t *testing.T, val3, old uint32) {
		checkWakeOp(t, m, as, val3, old)
	})
}

// FuzzRobustList walks robust lists built from arbitrary memory: it must
// end, read no more than the limit allows, and change only words that held
// the dying thread's TID.
func FuzzRobustList(f *testing.F) {
	seed := make([]byte, 256)
	binary.LittleEndian.PutUint64(seed[0:], base+0x40)
	binary.LittleEndian.PutUint64(seed[8:], 8)
	binary.LittleEndian.PutUint64(seed[16:], base+0x80|1)
	binary.LittleEndian.PutUint64(seed[0x40:], base+0x40)
	binary.LittleEndian.PutUint32(seed[0x48:], tid|Waiters)
	f.Add(seed)
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		const memSize = 512
		if len(data) > memSize {
			data = data[:memSize]
		}
		m := NewManager()
		as := newFakeAS(1, base, memSize)
		before := make([]uint32, memSize/4)
		for i := range before {
			var w [4]byte
			copy(w[:], data[min(len(data), i*4):])
			before[i] = binary.LittleEndian.Uint32(w[:])
			as.mem.words[i] = before[i]
		}
		m.HandleRobustList(as, base, tid)
		if n := as.copies.Load(); n > RobustListLimit+3 {
			t.Errorf("%d list reads", n)
		}
		for i, old := range before {
			got := as.mem.words[i]
			if got == old {
				continue
			}
			if old&TIDMask != tid || got != old&Waiters|OwnerDied {
				t.Errorf("word %d changed from %#x to %#x", i, old, got)
			}
		}
	})
}
