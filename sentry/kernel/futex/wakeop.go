package futex

import "golang.org/x/sys/unix"

// wakeOp is a decoded FUTEX_WAKE_OP val3.
type wakeOp struct {
	op     uint32 // OpSet ... OpXor, without OpArgShift
	cmp    uint32 // CmpEq ... CmpGe
	oparg  uint32 // the operand, after OpArgShift
	cmparg int32
}

// decodeWakeOp splits val3 the way Linux does: op is bits 28-30 and bit 31
// is OpArgShift; oparg and cmparg are sign-extended 12-bit fields; a shift
// count outside [0, 31] is taken modulo 32 (Linux warns and does the same).
func decodeWakeOp(val3 uint32) wakeOp {
	d := wakeOp{
		op:     val3 >> 28 & 7,
		cmp:    val3 >> 24 & 0xf,
		cmparg: int32(val3<<20) >> 20,
	}
	oparg := int32(val3<<8) >> 20
	if val3&(OpArgShift<<28) != 0 {
		d.oparg = 1 << (uint32(oparg) & 31)
	} else {
		d.oparg = uint32(oparg)
	}
	return d
}

// apply returns old op oparg.
//
// Preconditions: d.op is a valid operation.
func (d wakeOp) apply(old uint32) uint32 {
	switch d.op {
	case OpSet:
		return d.oparg
	case OpAdd:
		return old + d.oparg
	case OpOr:
		return old | d.oparg
	case OpAndN:
		return old &^ d.oparg
	case OpXor:
		return old ^ d.oparg
	}
	panic("futex: invalid FUTEX_WAKE_OP operation")
}

// compare evaluates old cmp cmparg as signed integers, ok false if cmp is
// not a valid comparison.
func (d wakeOp) compare(old uint32) (result, ok bool) {
	v := int32(old)
	switch d.cmp {
	case CmpEq:
		return v == d.cmparg, true
	case CmpNe:
		return v != d.cmparg, true
	case CmpLt:
		return v < d.cmparg, true
	case CmpLe:
		return v <= d.cmparg, true
	case CmpGt:
		return v > d.cmparg, true
	case CmpGe:
		return v >= d.cmparg, true
	}
	return false, false
}

// WakeOp implements FUTEX_WAKE_OP. Atomically with respect to other
// operations on both futexes, it applies the operation encoded in val3 to
// the word at addr2 (saving its old value), wakes up to nwake1 waiters on
// the futex at addr1 and, if the old value compares true with val3's
// cmparg, up to nwake2 waiters on the futex at addr2. It returns how many it
// woke in all. As on Linux: bitsets are ignored; nwake1 or nwake2 <= 0 still
// wakes one; an unknown operation returns ENOSYS without touching memory,
// and an unknown comparison returns ENOSYS after the operation was applied,
// waking nobody. EINVAL if an address is misaligned; the Target's error
// (EFAULT) if addr2 cannot be written or, for shared futexes, an address is
// not mapped.
func (m *Manager) WakeOp(t Target, addr1, addr2 uintptr, private bool, nwake1, nwake2 int, val3 uint32) (int, error) {
	k1, err := key(t, addr1, private)
	if err != nil {
		return 0, err
	}
	k2, err := key(t, addr2, private)
	if err != nil {
		return 0, err
	}
	d := decodeWakeOp(val3)
	if d.op > OpXor {
		return 0, unix.ENOSYS
	}

	b1, b2 := m.bucketFor(k1), m.bucketFor(k2)
	lockPair(b1, b2)
	defer unlockPair(b1, b2)

	old, err := d.do(t, addr2)
	if err != nil {
		return 0, err
	}
	cond, ok := d.compare(old)
	if !ok {
		return 0, unix.ENOSYS
	}
	n, err := b1.wakeKey(k1, BitsetMatchAny, nwake1)
	if err != nil || !cond {
		return n, err
	}
	n2, err := b2.wakeKey(k2, BitsetMatchAny, nwake2)
	return n + n2, err
}

// do applies d to the word at addr atomically and returns its old value.
func (d wakeOp) do(t Target, addr uintptr) (uint32, error) {
	if d.op == OpSet {
		return t.SwapUint32(addr, d.oparg)
	}
	old, err := t.LoadUint32(addr)
	if err != nil {
		return 0, err
	}
	for {
		prev, err := t.CompareAndSwapUint32(addr, old, d.apply(old))
		if err != nil {
			return 0, err
		}
		if prev == old {
			return old, nil
		}
		old = prev
	}
}
