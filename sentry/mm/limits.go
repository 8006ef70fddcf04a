package mm

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
)

// Resource limits on address spaces, checked as Linux checks them:
//
//   - RLIMIT_AS bounds the bytes of all mappings (may_expand_vm);
//   - RLIMIT_DATA bounds private writable mappings other than stacks
//     (is_data_mapping), and brk's heap;
//   - RLIMIT_MEMLOCK bounds locked bytes (mlock, mlockall, MAP_LOCKED and
//     every mapping made after mlockall(MCL_FUTURE)) unless the caller has
//     CAP_IPC_LOCK; a zero limit without it forbids locking (EPERM).
//
// Limits belong to the calling process, not the address space (vfork
// children share one), so every request carries its caller's. Locking
// is only accounting: the Sentry's memory is never swapped, and locking
// populates the pages.

// RLimInfinity is RLIM_INFINITY: no limit.
const RLimInfinity = ^uint64(0)

// Limits are the soft resource limits of the process making a request,
// in bytes (RLimInfinity for none). A nil *Limits is no limit at all.
type Limits struct {
	AS, Data, MemLock uint64
	// DataMax is RLIMIT_DATA's hard limit: Linux lets a zero soft limit
	// through up to it (a workaround kept for Valgrind).
	DataMax uint64
	// IPCLock is CAP_IPC_LOCK, which lifts RLIMIT_MEMLOCK.
	IPCLock bool
}

// isData reports whether v counts against RLIMIT_DATA.
func isData(private bool, prot int, growsDown bool) bool {
	return private && prot&unix.PROT_WRITE != 0 && !growsDown
}

// usageLocked returns the bytes of all mappings, of data mappings and of
// locked mappings in [start, end) (everything for 0, MaxUserAddress).
//
// Preconditions: m.mu is held.
func (m *MemoryManager) usageLocked(start, end uintptr) (total, data, locked uintptr) {
	for _, v := range m.vmas {
		s, e := max(v.start, start), min(v.end, end)
		if s >= e {
			continue
		}
		total += e - s
		if isData(v.private, v.prot, v.growsDown) {
			data += e - s
		}
		if v.locked {
			locked += e - s
		}
	}
	return
}

// mayExpandLocked reports whether the address space may grow by n bytes
// of a mapping that is data or not, replacing [start, end) (an empty range
// for none), as Linux's may_expand_vm: ENOMEM if not.
//
// Preconditions: m.mu is held.
func (m *MemoryManager) mayExpandLocked(l *Limits, n uintptr, data bool, start, end uintptr) error {
	if l == nil || (l.AS == RLimInfinity && (!data || l.Data == RLimInfinity)) {
		return nil
	}
	total, dataNow, _ := m.usageLocked(0, arch.MaxUserAddress)
	if start < end {
		t, d, _ := m.usageLocked(start, end)
		total -= t
		dataNow -= d
	}
	if uint64(total)+uint64(n) > l.AS {
		return unix.ENOMEM
	}
	if data && l.Data != RLimInfinity && uint64(dataNow)+uint64(n) > l.Data {
		if l.Data == 0 && uint64(dataNow)+uint64(n) <= l.DataMax {
			return nil
		}
		return unix.ENOMEM
	}
	return nil
}

// mayLockLocked reports whether n more bytes may be locked (Linux's
// mlock_future_ok), EAGAIN if not.
//
// Preconditions: m.mu is held.
func (m *MemoryManager) mayLockLocked(l *Limits, n uintptr) error {
	if l == nil || l.IPCLock || l.MemLock == RLimInfinity {
		return nil
	}
	_, _, locked := m.usageLocked(0, arch.MaxUserAddress)
	if uint64(locked)+uint64(n) > l.MemLock {
		return unix.EAGAIN
	}
	return nil
}

// canLock is Linux's can_do_mlock: EPERM for a zero RLIMIT_MEMLOCK
// without CAP_IPC_LOCK.
func canLock(l *Limits) error {
	if l != nil && l.MemLock == 0 && !l.IPCLock {
		return unix.EPERM
	}
	return nil
}

// LockedSize returns the bytes of locked mappings (VmLck).
func (m *MemoryManager) LockedSize() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, _, locked := m.usageLocked(0, arch.MaxUserAddress)
	return uint64(locked)
}

// MLock implements mlock(2) and mlock2(2): the range must be mapped, the
// locked total stays within l's RLIMIT_MEMLOCK (pages already locked
// count once; ENOMEM beyond it), and unless onFault the pages are
// populated. Pages past the end of a file mapping are left alone, as
// Linux's populate skips them.
func (m *MemoryManager) MLock(addr, length uintptr, onFault bool, l *Limits) error {
	if err := canLock(l); err != nil {
		return err
	}
	if err := m.CheckRange(addr, length); err != nil {
		return err
	}
	if length == 0 {
		return nil
	}
	end := addr + length
	m.mu.Lock()
	if l != nil && !l.IPCLock && l.MemLock != RLimInfinity {
		_, _, locked := m.usageLocked(0, arch.MaxUserAddress)
		_, _, already := m.usageLocked(addr, end)
		if uint64(locked)+uint64(length-already) > l.MemLock {
			m.mu.Unlock()
			return unix.ENOMEM
		}
	}
	m.setLockedLocked(addr, end, true)
	m.mu.Unlock()
	if onFault {
		return nil
	}
	return m.Populate(addr, length)
}

// MUnlock implements munlock(2).
func (m *MemoryManager) MUnlock(addr, length uintptr) error {
	if err := m.CheckRange(addr, length); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setLockedLocked(addr, addr+length, false)
	return nil
}

// setLockedLocked marks the vmas of [start, end) locked or not.
//
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) setLockedLocked(start, end uintptr, locked bool) {
	if start >= end {
		return
	}
	m.splitVMAAt(start)
	m.splitVMAAt(end)
	for i := m.firstVMAAfter(start); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		// The vDSO is a special mapping, which Linux never locks.
		m.vmas[i].locked = locked && m.vmas[i].fixed == nil
	}
	m.mergeVMAs(start, end)
}

// MLockAll implements mlockall(2): current locks every mapping (ENOMEM if
// all of them exceed RLIMIT_MEMLOCK), future every later one, onFault
// leaves pages to be faulted in.
func (m *MemoryManager) MLockAll(current, future, onFault bool, l *Limits) error {
	if err := canLock(l); err != nil {
		return err
	}
	m.mu.Lock()
	if current && l != nil && !l.IPCLock && l.MemLock != RLimInfinity {
		total, _, _ := m.usageLocked(0, arch.MaxUserAddress)
		if uint64(total) > l.MemLock {
			m.mu.Unlock()
			return unix.ENOMEM
		}
	}
	m.lockFuture = future
	m.lockFutureOnFault = future && onFault
	if current {
		for _, v := range m.vmas {
			v.locked = v.fixed == nil
		}
	}
	m.mu.Unlock()
	if current && !onFault {
		return m.Populate(0, arch.MaxUserAddress)
	}
	return nil
}

// MUnlockAll implements munlockall(2).
func (m *MemoryManager) MUnlockAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lockFuture, m.lockFutureOnFault = false, false
	for _, v := range m.vmas {
		v.locked = false
	}
}

// PopulatesNewMappings reports whether mlockall(MCL_FUTURE) without
// MCL_ONFAULT is in force, so that new mappings are to be populated.
func (m *MemoryManager) PopulatesNewMappings() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.lockFuture && !m.lockFutureOnFault
}
