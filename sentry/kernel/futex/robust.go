package futex

import "fmt"

// maxDeathRetries bounds how often HandleRobustList retries marking one
// futex word when other threads keep changing it, so that an exiting task
// cannot be held forever by a thread that spins on the word. Linux retries
// without bound; real contention ends in a few tries.
const maxDeathRetries = 1 << 16

// HandleRobustList processes the robust futex list of a thread that is
// exiting or calling execve: head is the address its set_robust_list(2)
// registered and tid its thread ID as its PID namespace sees it. It does
// what Linux does:
//
//   - It reads head's list.next, futex_offset and list_op_pending, and stops
//     if any cannot be read.
//   - It follows the list from list.next until it comes back to head, for at
//     most RobustListLimit entries (so a circular list ends), stopping early
//     when an entry cannot be read. The low bit of each pointer marks a PI
//     futex and is not part of the address.
//   - For each entry other than the pending one, the futex word at entry +
//     futex_offset, if its TID bits are tid, becomes FUTEX_OWNER_DIED with
//     its FUTEX_WAITERS bit kept and its TID cleared; if FUTEX_WAITERS was
//     set and the futex is not PI, one waiter on it is woken (as a shared
//     futex, since glibc waits on robust mutexes with shared operations). A
//     word that is misaligned or cannot be read or written ends the walk.
//   - Last, the list_op_pending entry, if any, is handled the same way,
//     except that a non-PI word whose TID bits are 0 (a lock released, or
//     not yet taken, when the thread died) is left alone and one waiter is
//     woken regardless, so that it is not stranded.
//
// Errors are not reported: the thread is gone, and a bad list only means its
// futexes are not cleaned up, as on Linux.
func (m *Manager) HandleRobustList(t Target, head uintptr, tid uint32) {
	if head == 0 || tid == 0 {
		return
	}
	entry, pi, err := readRobustPtr(t, head)
	if err != nil {
		return
	}
	offWord, err := readRobustWord(t, head+robustOffsetOffset)
	if err != nil {
		return
	}
	off := uintptr(offWord) // futex_offset is signed; addition wraps.
	pending, pendingPI, err := readRobustPtr(t, head+robustPendingOffset)
	if err != nil {
		return
	}

	for limit := RobustListLimit; entry != head; {
		// Read the next pointer before the futex word is released, as
		// Linux does: a woken waiter may unlink the entry.
		next, nextPI, nextErr := readRobustPtr(t, entry)
		// A pending lock may already be on the list: do not handle it
		// twice.
		if entry != pending {
			if !m.handleDeath(t, entry+off, tid, pi, false) {
				return
			}
		}
		if nextErr != nil {
			return
		}
		entry, pi = next, nextPI
		limit--
		if limit == 0 {
			break
		}
	}

	if pending != 0 {
		m.handleDeath(t, pending+off, tid, pendingPI, true)
	}
}

// handleDeath marks the futex word at addr as abandoned by the thread tid
// (see HandleRobustList). It returns false if the word is misaligned or
// cannot be accessed, which ends the list walk.
func (m *Manager) handleDeath(t Target, addr uintptr, tid uint32, pi, pendingOp bool) bool {
	if addr%4 != 0 {
		return false
	}
	for range maxDeathRetries {
		val, err := t.LoadUint32(addr)
		if err != nil {
			return false
		}
		owner := val & TIDMask
		if pendingOp && !pi && owner == 0 {
			m.Wake(t, addr, false, BitsetMatchAny, 1)
			return true
		}
		if owner != tid {
			return true
		}
		nval := val&Waiters | OwnerDied
		prev, err := t.CompareAndSwapUint32(addr, val, nval)
		if err != nil {
			return false
		}
		if prev != val {
			continue
		}
		// Wake even if FUTEX_OWNER_DIED was already set: a waiter may have
		// died holding it in turn. PI futexes are not woken here (Linux
		// hands them over in its PI state cleanup, which we do not have).
		if !pi && val&Waiters != 0 {
			m.Wake(t, addr, false, BitsetMatchAny, 1)
		}
		return true
	}
	return true
}

// readRobustPtr reads a robust list pointer at addr, splitting off the PI
// flag in its low bit.
func readRobustPtr(t Target, addr uintptr) (ptr uintptr, pi bool, err error) {
	w, err := readRobustWord(t, addr)
	if err != nil {
		return 0, false, err
	}
	return uintptr(w &^ 1), w&1 != 0, nil
}

// readRobustWord reads a pointer-sized word of a robust list at addr.
func readRobustWord(t Target, addr uintptr) (uint64, error) {
	var buf [robustWordSize]byte
	n, err := t.CopyInBytes(addr, buf[:])
	if err != nil {
		return 0, fmt.Errorf("reading robust list at %#x: %w", addr, err)
	}
	if n != len(buf) {
		return 0, fmt.Errorf("reading robust list at %#x: short read of %d bytes", addr, n)
	}
	return decodeRobustWord(buf[:]), nil
}
