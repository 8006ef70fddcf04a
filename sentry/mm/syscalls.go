package mm

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
)

// MMapOpts describes an mmap(2) request.
type MMapOpts struct {
	Addr, Length uintptr
	Prot         int
	// MaxProt bounds later mprotect calls (a shared mapping of a file
	// opened read-only cannot become writable).
	MaxProt   int
	Private   bool
	Fixed     bool
	NoReplace bool
	GrowsDown bool
	// NoReserve is MAP_NORESERVE: the memory is not committed.
	NoReserve bool
	// File backs the mapping (nil: anonymous); Offset is page aligned.
	File File
	// Object backs the mapping instead of File: its pages are mapped
	// (shared, or copy-on-write when Private).
	Object *Object
	Offset int64
	// Name is what /proc/[pid]/maps shows.
	Name string
	// Locked is MAP_LOCKED.
	Locked bool
	// Limits are the caller's (nil: none).
	Limits *Limits
}

// findGap finds length free bytes, top down below arch.MmapBase, preferring
// hint. Preconditions: m.mu is held.
func (m *MemoryManager) findGap(hint, length uintptr) (uintptr, error) {
	if hint != 0 {
		hint = pageDown(hint)
		if hint >= arch.MinUserAddress && hint+length <= arch.MaxUserAddress && hint+length > hint && m.isFree(hint, hint+length) {
			return hint, nil
		}
	}
	top := uintptr(arch.MmapBase)
	for i := len(m.vmas) - 1; i >= -1; i-- {
		var gapStart, gapEnd uintptr
		if i >= 0 {
			gapStart = m.vmas[i].end
		} else {
			gapStart = arch.MinUserAddress
		}
		if i+1 < len(m.vmas) {
			gapEnd = m.vmas[i+1].start
			if m.vmas[i+1].growsDown {
				// Leave room for the stack to grow.
				if gapEnd > m.stackLimit {
					gapEnd -= m.stackLimit
				} else {
					gapEnd = 0
				}
			}
		} else {
			gapEnd = arch.MaxUserAddress
		}
		if gapEnd > top {
			gapEnd = top
		}
		if gapEnd > gapStart && gapEnd-gapStart >= length {
			return gapEnd - length, nil
		}
	}
	return 0, unix.ENOMEM
}

// isFree reports whether no vma overlaps [start, end).
func (m *MemoryManager) isFree(start, end uintptr) bool {
	i := m.firstVMAAfter(start)
	return i >= len(m.vmas) || m.vmas[i].start >= end
}

// MMap creates a mapping and returns its address.
func (m *MemoryManager) MMap(o MMapOpts) (uintptr, error) {
	if o.Length == 0 {
		return 0, unix.EINVAL
	}
	length := pageUp(o.Length)
	if length == 0 || length > arch.MaxUserAddress {
		return 0, unix.ENOMEM
	}
	if o.Offset%pageSize != 0 || o.Offset < 0 {
		return 0, unix.EINVAL
	}
	// Private writable memory is committed: like Linux's heuristic
	// overcommit, refuse at once what could never be backed.
	if o.Private && o.Prot&unix.PROT_WRITE != 0 && !o.NoReserve && !m.mf.CanCommit(uint64(length)) {
		return 0, unix.ENOMEM
	}
	if o.Object != nil {
		if err := o.Object.checkMap(o.Private, o.Prot); err != nil {
			return 0, err
		}
		if !o.Private && o.Object.writeSealedNow() {
			// A read-only shared mapping of a write-sealed object
			// can never become writable.
			if o.MaxProt == 0 {
				o.MaxProt = unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC
			}
			o.MaxProt &^= unix.PROT_WRITE
		}
	}
	if o.Locked {
		if err := canLock(o.Limits); err != nil {
			return 0, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var addr uintptr
	if o.Fixed || o.NoReplace {
		if o.Addr%pageSize != 0 {
			return 0, unix.EINVAL
		}
		addr = o.Addr
		if addr+length < addr || addr+length > arch.MaxUserAddress || addr < arch.MinUserAddress {
			if o.Fixed {
				return 0, unix.ENOMEM
			}
			return 0, unix.EPERM
		}
		if o.NoReplace && !m.isFree(addr, addr+length) {
			return 0, unix.EEXIST
		}
		if err := m.mapLimitsLocked(o, length, addr, addr+length); err != nil {
			return 0, err
		}
		m.removeVMAs(addr, addr+length)
	} else {
		if err := m.mapLimitsLocked(o, length, 0, 0); err != nil {
			return 0, err
		}
		var err error
		if addr, err = m.findGap(o.Addr, length); err != nil {
			return 0, err
		}
	}
	v := &vma{
		start: addr, end: addr + length,
		prot: o.Prot, maxProt: o.MaxProt,
		private: o.Private, growsDown: o.GrowsDown,
		name: o.Name, locked: o.Locked || m.lockFuture,
		written: o.Prot&unix.PROT_WRITE != 0,
	}
	if v.maxProt == 0 {
		v.maxProt = unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC
	}
	switch {
	case o.Object != nil:
		v.obj, v.objOff = o.Object, uint64(o.Offset)
		v.obj.attach(m, v)
	case o.File != nil:
		v.file, v.fileOff = o.File, o.Offset
	case !o.Private:
		// Shared anonymous memory is an object as large as the mapping.
		v.obj = NewObject(m.mf, int64(length), nil)
		v.obj.anon = true
		v.obj.attach(m, v)
		v.obj.DecRef()
		if v.name == "" {
			v.name = "/dev/zero (deleted)"
		}
	}
	m.insertVMA(v)
	return addr, nil
}

// mapLimitsLocked checks a new mapping of length bytes for o, replacing
// [start, end), against the caller's RLIMIT_AS, RLIMIT_DATA (ENOMEM) and,
// when it is to be locked, RLIMIT_MEMLOCK (EAGAIN).
//
// Preconditions: m.mu is held.
func (m *MemoryManager) mapLimitsLocked(o MMapOpts, length, start, end uintptr) error {
	if o.Locked || m.lockFuture {
		if err := m.mayLockLocked(o.Limits, length); err != nil {
			return err
		}
	}
	return m.mayExpandLocked(o.Limits, length, isData(o.Private, o.Prot, o.GrowsDown), start, end)
}

// MapFixedRange maps memory-file pages [off, off+length) shared at addr with
// prot (for the vDSO). They are never freed by the address space.
func (m *MemoryManager) MapFixedRange(addr, length uintptr, off uint64, prot int, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.isFree(addr, addr+length) {
		return unix.EEXIST
	}
	m.insertVMA(&vma{start: addr, end: addr + length, prot: prot, maxProt: prot, fixed: &fixedRange{off: off}, name: name})
	return nil
}

// FindGap returns a free range of length bytes.
func (m *MemoryManager) FindGap(hint, length uintptr) (uintptr, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.findGap(hint, length)
}

// MUnmap removes mappings in [addr, addr+length).
func (m *MemoryManager) MUnmap(addr, length uintptr) error {
	if addr%pageSize != 0 || length == 0 {
		return unix.EINVAL
	}
	length = pageUp(length)
	if addr+length < addr || addr+length > arch.MaxUserAddress {
		return unix.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeVMAs(addr, addr+length)
	return nil
}

// MProtectOpts are mprotect(2)'s options besides range and protection.
type MProtectOpts struct {
	// GrowsDown is PROT_GROWSDOWN: the change extends to the start of
	// the MAP_GROWSDOWN mapping addr is in.
	GrowsDown bool
	// ReadImpliesExec (the personality flag) adds PROT_EXEC to a
	// readable protection on each mapping that may be executable.
	ReadImpliesExec bool
}

// MProtect changes the protection of [addr, addr+length).
func (m *MemoryManager) MProtect(addr, length uintptr, prot int, o MProtectOpts) error {
	if addr%pageSize != 0 {
		return unix.EINVAL
	}
	if prot&^(unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC) != 0 {
		return unix.EINVAL
	}
	length = pageUp(length)
	if addr+length < addr {
		return unix.ENOMEM
	}
	if length == 0 {
		return nil
	}
	end := addr + length
	m.mu.Lock()
	defer m.mu.Unlock()
	if o.GrowsDown {
		// PROT_GROWSDOWN extends the change to the start of a
		// MAP_GROWSDOWN mapping; on any other it is EINVAL.
		i := m.findVMA(addr)
		if i < 0 {
			return unix.ENOMEM
		}
		if !m.vmas[i].growsDown {
			return unix.EINVAL
		}
		addr = m.vmas[i].start
	}
	// Linux fails with ENOMEM if any page is unmapped, and checks the
	// permission of every vma before changing any.
	for a := addr; a < end; {
		i := m.findVMA(a)
		if i < 0 {
			return unix.ENOMEM
		}
		if vmaProt(prot, m.vmas[i], o)&^m.vmas[i].maxProt != 0 {
			return unix.EACCES
		}
		a = m.vmas[i].end
	}
	m.splitVMAAt(addr)
	m.splitVMAAt(end)
	for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		v := m.vmas[i]
		v.prot = vmaProt(prot, v, o)
		if v.prot&unix.PROT_WRITE != 0 {
			v.written = true
		}
	}
	// Unmap the affected pages from the stub; they are mapped again with
	// the new protection on the next fault, or at once when the change
	// takes write permission away (restub).
	m.unmapHost(addr, end)
	m.restub(addr, end)
	m.mergeVMAs(addr, end)
	return nil
}

// vmaProt is the protection mprotect gives v when asked for prot.
func vmaProt(prot int, v *vma, o MProtectOpts) int {
	if o.ReadImpliesExec && prot&unix.PROT_READ != 0 && v.maxProt&unix.PROT_EXEC != 0 {
		prot |= unix.PROT_EXEC
	}
	return prot
}

// restub maps the pages of [start, end) that the stub maps already again
// with their vma's protection when it does not allow writing (a program's
// relocated data made read-only, RELRO, is read again at once: a fault
// each would cost a stub round trip); the rest it unmaps (unstub).
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) restub(start, end uintptr) {
	for vi := m.firstVMAAfter(start); vi < len(m.vmas) && m.vmas[vi].start < end; vi++ {
		v := m.vmas[vi]
		s, e := max(v.start, start), min(v.end, end)
		if v.prot == 0 || v.prot&unix.PROT_WRITE != 0 || m.as == nil {
			m.unstub(s, e)
			continue
		}
		m.splitPMAAt(s)
		m.splitPMAAt(e)
		for a := s; a < e; {
			i := m.firstPMAAfter(a)
			if i >= len(m.pmas) || m.pmas[i].start >= e {
				break
			}
			p := m.pmas[i]
			if p.stubProt == 0 {
				a = p.end
				continue
			}
			if res, _ := m.mapPMARange(v, i, p.start); res != FaultHandled {
				m.unstub(p.start, p.end)
				a = p.end
				continue
			}
			// mapPMARange mapped a run from p.start, splitting the
			// pma there; the rest, if any, comes next.
			a = m.pmas[m.findPMA(p.start)].end
		}
	}
	// Pages outside any vma have no pmas (mprotect covers mapped
	// memory only).
}

// unstub removes [start, end) from the stub without freeing pages.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) unstub(start, end uintptr) {
	any := false
	m.splitPMAAt(start)
	m.splitPMAAt(end)
	for i := m.firstPMAAfter(start); i < len(m.pmas) && m.pmas[i].start < end; i++ {
		if m.pmas[i].stubProt != 0 {
			any = true
			m.pmas[i].stubProt = 0
		}
	}
	if any && m.as != nil {
		m.as.Unmap(start, end-start)
	}
}

// Brk implements brk(2): it returns the new break, or the old one when the
// request cannot be met.
//
// With l, the heap stays within RLIMIT_DATA and its growth within
// RLIMIT_AS and RLIMIT_DATA (and RLIMIT_MEMLOCK after mlockall
// MCL_FUTURE).
func (m *MemoryManager) Brk(addr uintptr, l *Limits) uintptr {
	m.mu.Lock()
	defer m.mu.Unlock()
	if addr < m.brkStart || addr >= arch.MaxUserAddress {
		return m.brk
	}
	// Linux's check_data_rlimit; the data segment is part of the heap's
	// vma here, so only the heap itself is counted.
	if l != nil && l.Data != RLimInfinity && uint64(addr-m.brkStart) > l.Data {
		return m.brk
	}
	oldEnd, newEnd := pageUp(m.brk), pageUp(addr)
	switch {
	case newEnd > oldEnd:
		if !m.isFree(oldEnd, newEnd) || !m.mf.CanCommit(uint64(newEnd-oldEnd)) {
			return m.brk
		}
		if m.mayExpandLocked(l, newEnd-oldEnd, true, 0, 0) != nil {
			return m.brk
		}
		if m.lockFuture && m.mayLockLocked(l, newEnd-oldEnd) != nil {
			return m.brk
		}
		if i := m.findVMA(oldEnd - 1); oldEnd > m.brkStart && i >= 0 && m.vmas[i].name == "[heap]" && m.vmas[i].end == oldEnd {
			m.vmas[i].end = newEnd
		} else {
			m.insertVMA(&vma{start: oldEnd, end: newEnd, prot: unix.PROT_READ | unix.PROT_WRITE,
				maxProt: unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC, private: true, name: "[heap]",
				locked: m.lockFuture})
		}
	case newEnd < oldEnd:
		m.removeVMAs(newEnd, oldEnd)
	}
	m.brk = addr
	return m.brk
}

// MRemapOpts are mremap(2)'s flags and new address.
type MRemapOpts struct {
	// MayMove, Fixed and DontUnmap are MREMAP_MAYMOVE, MREMAP_FIXED and
	// MREMAP_DONTUNMAP.
	MayMove, Fixed, DontUnmap bool
	// NewAddr is the target of a fixed move.
	NewAddr uintptr
	// Limits are the caller's (nil: none).
	Limits *Limits
}

// MRemap implements mremap(2).
func (m *MemoryManager) MRemap(old, oldSize, newSize uintptr, o MRemapOpts) (uintptr, error) {
	mayMove, fixed, newAddr := o.MayMove, o.Fixed, o.NewAddr
	if (fixed || o.DontUnmap) && !mayMove {
		return 0, unix.EINVAL
	}
	// MREMAP_DONTUNMAP moves the pages and leaves the old range mapped and
	// empty; it cannot resize.
	if o.DontUnmap && oldSize != newSize {
		return 0, unix.EINVAL
	}
	if old%pageSize != 0 || newSize == 0 {
		return 0, unix.EINVAL
	}
	if fixed && newAddr%pageSize != 0 {
		return 0, unix.EINVAL
	}
	oldSize, newSize = pageUp(oldSize), pageUp(newSize)
	if newSize == 0 || newSize > arch.MaxUserAddress {
		return 0, unix.ENOMEM
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vi := m.findVMA(old)
	if vi < 0 {
		return 0, unix.EFAULT
	}
	v := m.vmas[vi]
	if v.hostMapped {
		// The moved or grown vma faults in again.
		m.unmapHost(v.start, v.end)
	}
	if oldSize == 0 {
		// Duplicating a shared mapping; private ones cannot be.
		if v.private || !mayMove {
			return 0, unix.EINVAL
		}
		oldSize = 0
	}
	if oldSize != 0 && old+oldSize > v.end {
		return 0, unix.EFAULT
	}
	if o.DontUnmap && oldSize == 0 {
		return 0, unix.EINVAL
	}
	// Growth counts against RLIMIT_AS and RLIMIT_DATA (ENOMEM) and, for a
	// locked mapping, RLIMIT_MEMLOCK (EAGAIN); a copy that leaves the old
	// range mapped counts whole.
	grow := newSize - min(newSize, oldSize)
	if o.DontUnmap {
		grow = newSize
	}
	if grow > 0 {
		if v.locked {
			if err := m.mayLockLocked(o.Limits, grow); err != nil {
				return 0, err
			}
		}
		if err := m.mayExpandLocked(o.Limits, grow, isData(v.private, v.prot, v.growsDown), 0, 0); err != nil {
			return 0, err
		}
	}
	if !fixed && !o.DontUnmap {
		if newSize <= oldSize {
			m.removeVMAs(old+newSize, old+oldSize)
			return old, nil
		}
		// Grow in place if the vma ends at the old end and the space after
		// it is free.
		if oldSize != 0 && old+oldSize == v.end && m.isFree(v.end, old+newSize) && old+newSize <= arch.MaxUserAddress {
			v.end = old + newSize
			return old, nil
		}
		if !mayMove {
			return 0, unix.ENOMEM
		}
		var err error
		if newAddr, err = m.findGap(0, newSize); err != nil {
			return 0, err
		}
	} else if !fixed {
		var err error
		if newAddr, err = m.findGap(0, newSize); err != nil {
			return 0, err
		}
	} else {
		if newAddr+newSize > arch.MaxUserAddress || newAddr < arch.MinUserAddress {
			return 0, unix.EINVAL
		}
		if newAddr < old+oldSize && old < newAddr+newSize {
			return 0, unix.EINVAL
		}
		m.removeVMAs(newAddr, newAddr+newSize)
		// Removal may have shifted v's index but not v itself.
	}
	return m.moveLocked(v, old, oldSize, newAddr, newSize, o.DontUnmap)
}

// moveLocked moves [old, old+oldSize) of v to newAddr with newSize bytes.
// With keepOld the old range stays mapped, without its pages.
func (m *MemoryManager) moveLocked(v *vma, old, oldSize, newAddr, newSize uintptr, keepOld bool) (uintptr, error) {
	nv := *v
	nv.start, nv.end = newAddr, newAddr+newSize
	if v.file != nil {
		nv.fileOff = v.fileOff + int64(old-v.start)
	}
	if v.obj != nil {
		nv.objOff = v.objOff + uint64(old-v.start)
		nv.obj.attach(m, &nv)
	}
	if v.fixed != nil {
		nv.fixed = &fixedRange{off: v.fixed.off + uint64(old-v.start)}
	}
	if oldSize == 0 {
		m.insertVMA(&nv)
		return newAddr, nil
	}
	// Move the pmas of the moved part.
	moveLen := min(oldSize, newSize)
	m.splitPMAAt(old)
	m.splitPMAAt(old + moveLen)
	var moved []pma
	i := m.firstPMAAfter(old)
	j := i
	for j < len(m.pmas) && m.pmas[j].start < old+moveLen {
		p := m.pmas[j]
		p.start = p.start - old + newAddr
		p.end = p.end - old + newAddr
		p.stubProt = 0
		moved = append(moved, p)
		m.rss -= p.end - p.start // insertPMA counts them again
		j++
	}
	m.pmas = append(m.pmas[:i], m.pmas[j:]...)
	if m.as != nil {
		m.as.Unmap(old, moveLen)
	}
	if !keepOld {
		m.removeVMAs(old, old+oldSize)
	}
	m.insertVMA(&nv)
	for _, p := range moved {
		m.insertPMA(p)
	}
	return newAddr, nil
}

// MAdviseDontNeed drops the pages of [addr, addr+length): private anonymous
// memory reads as zeros afterwards, private file memory as the file again.
func (m *MemoryManager) MAdviseDontNeed(addr, length uintptr) error {
	end := addr + pageUp(length)
	m.mu.Lock()
	defer m.mu.Unlock()
	for a := addr; a < end; {
		i := m.findVMA(a)
		if i < 0 {
			return unix.ENOMEM
		}
		v := m.vmas[i]
		stop := min(v.end, end)
		// Locked pages cannot be dropped (can_madv_lru_vma).
		if v.locked {
			return unix.EINVAL
		}
		if v.private {
			m.removePMAs(a, stop)
		}
		a = stop
	}
	return nil
}

// DetachObject implements the unmapping of shmdt(2): it finds the first
// mapping at or after addr of an object accepted by match whose object
// offset equals its distance from addr, and removes every such mapping of
// that object within the object's size from addr. It returns the object,
// or EINVAL when there is none.
func (m *MemoryManager) DetachObject(addr uintptr, match func(*Object) bool) (*Object, error) {
	if addr%pageSize != 0 {
		return nil, unix.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var o *Object
	for i := m.firstVMAAfter(addr); i < len(m.vmas); i++ {
		v := m.vmas[i]
		if v.obj != nil && v.start >= addr && v.objOff == uint64(v.start-addr) && match(v.obj) {
			o = v.obj
			break
		}
	}
	if o == nil {
		return nil, unix.EINVAL
	}
	// The object stays alive while its vmas go.
	o.IncRef()
	defer o.DecRef()
	end := addr + pageUp(uintptr(o.Size()))
	for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; {
		v := m.vmas[i]
		if v.obj == o && v.start >= addr && v.end <= end && v.objOff == uint64(v.start-addr) {
			m.removeVMAs(v.start, v.end)
			continue // removal shifted the next vma into i
		}
		i++
	}
	return o, nil
}

// MAdviseRemove implements MADV_REMOVE: the range's pages of shared
// memory objects are freed, as by punching a hole in the file. Like Linux:
// EINVAL for memory without a file, EACCES for a mapping that is private
// or may not write, ENOMEM for a hole in the range. Other shared file
// mappings (snapshots of gofer files) give EOPNOTSUPP.
func (m *MemoryManager) MAdviseRemove(addr, length uintptr) error {
	end := addr + pageUp(length)
	if end < addr {
		return unix.ENOMEM
	}
	type punch struct {
		o        *Object
		off, len uint64
	}
	var punches []punch
	m.mu.Lock()
	var err error
	for a := addr; a < end && err == nil; {
		i := m.findVMA(a)
		if i < 0 {
			err = unix.ENOMEM
			break
		}
		v := m.vmas[i]
		stop := min(v.end, end)
		switch {
		case v.obj == nil && v.file == nil:
			err = unix.EINVAL
		case v.private || v.maxProt&unix.PROT_WRITE == 0:
			err = unix.EACCES
		case v.obj == nil:
			err = unix.EOPNOTSUPP
		default:
			v.obj.IncRef()
			punches = append(punches, punch{v.obj, v.objOff + uint64(a-v.start), uint64(stop - a)})
		}
		a = stop
	}
	m.mu.Unlock()
	// Punching takes the address spaces' locks to remove the pages.
	for _, p := range punches {
		if err == nil {
			err = p.o.PunchHole(int64(p.off), int64(p.len))
		}
		p.o.DecRef()
	}
	return err
}

// MAdviseFree implements MADV_FREE: private anonymous pages may be dropped,
// and are at once. Linux refuses other memory with EINVAL.
func (m *MemoryManager) MAdviseFree(addr, length uintptr) error {
	end := addr + pageUp(length)
	if end < addr {
		return unix.ENOMEM
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for a := addr; a < end; {
		i := m.findVMA(a)
		if i < 0 {
			return unix.ENOMEM
		}
		v := m.vmas[i]
		if !v.private || v.file != nil || v.obj != nil || v.fixed != nil || v.locked {
			return unix.EINVAL
		}
		a = v.end
	}
	for a := addr; a < end; {
		i := m.findVMA(a)
		v := m.vmas[i]
		stop := min(v.end, end)
		m.removePMAs(a, stop)
		a = stop
	}
	return nil
}

// MAdvisePopulate implements MADV_POPULATE_READ and MADV_POPULATE_WRITE:
// the pages of [addr, addr+length) are filled as a read (or write) fault
// would, breaking copy-on-write sharing for writes. As Linux: ENOMEM for a
// hole, EINVAL for memory the access may not touch (PROT_NONE, a write to
// read-only memory), EFAULT for file pages past the end.
func (m *MemoryManager) MAdvisePopulate(addr, length uintptr, write bool) error {
	end := addr + pageUp(length)
	if end < addr {
		return unix.ENOMEM
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for a := addr; a < end; {
		i := m.findVMA(a)
		if i < 0 {
			return unix.ENOMEM
		}
		v := m.vmas[i]
		if v.prot == 0 || write && v.prot&unix.PROT_WRITE == 0 {
			return unix.EINVAL
		}
		a = v.end
	}
	for a := addr; a < end; {
		v := m.vmas[m.findVMA(a)]
		stop := min(v.end, end)
		if err := m.populate(v, a, stop); err != nil {
			return unix.EFAULT
		}
		// A hole past the end of a file is left unfilled by populate.
		for pa := a; pa < stop; pa += pageSize {
			if m.findPMA(pa) < 0 {
				return unix.EFAULT
			}
			if write {
				if err := m.breakCOW(v, pa); err != nil {
					return unix.ENOMEM
				}
			}
		}
		for i := m.firstPMAAfter(a); i < len(m.pmas) && m.pmas[i].start < stop; i++ {
			p := m.pmas[i]
			s, e := max(p.start, a), min(p.end, stop)
			m.mf.Commit(p.off+uint64(s-p.start), uint64(e-s))
		}
		a = stop
	}
	return nil
}

// MAdviseFork applies MADV_DONTFORK, MADV_DOFORK, MADV_WIPEONFORK or
// MADV_KEEPONFORK to the vmas of [addr, addr+length): whether a child gets
// the range at fork, and whether it gets it empty. WIPEONFORK applies only
// to private anonymous memory (EINVAL otherwise). As on Linux, holes give
// ENOMEM after the mapped parts are changed.
func (m *MemoryManager) MAdviseFork(addr, length uintptr, advice int) error {
	end := addr + pageUp(length)
	if end < addr {
		return unix.ENOMEM
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if advice == unix.MADV_WIPEONFORK {
		for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; i++ {
			if v := m.vmas[i]; !v.private || v.file != nil || v.obj != nil || v.fixed != nil {
				return unix.EINVAL
			}
		}
	}
	m.splitVMAAt(addr)
	m.splitVMAAt(end)
	hole := false
	a := addr
	for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		v := m.vmas[i]
		if v.start > a {
			hole = true
		}
		switch advice {
		case unix.MADV_DONTFORK:
			v.dontFork = true
		case unix.MADV_DOFORK:
			v.dontFork = false
		case unix.MADV_WIPEONFORK:
			v.wipeOnFork = true
		case unix.MADV_KEEPONFORK:
			v.wipeOnFork = false
		}
		a = v.end
	}
	if hole || a < end {
		return unix.ENOMEM
	}
	return nil
}

// Populate fills the pages of [addr, addr+length) that are mapped and
// accessible and makes them resident (MAP_POPULATE, MAP_LOCKED, mlock).
func (m *MemoryManager) Populate(addr, length uintptr) error {
	end := pageUp(addr + length)
	m.mu.Lock()
	defer m.mu.Unlock()
	for a := pageDown(addr); a < end; {
		i := m.firstVMAAfter(a)
		if i >= len(m.vmas) || m.vmas[i].start >= end {
			break
		}
		v := m.vmas[i]
		start := max(a, v.start)
		stop := min(v.end, end)
		if v.prot != 0 {
			if err := m.populate(v, start, stop); err != nil && err != errBeyondEOF {
				return err
			}
			for i := m.firstPMAAfter(start); i < len(m.pmas) && m.pmas[i].start < stop; i++ {
				p := m.pmas[i]
				s, e := max(p.start, start), min(p.end, stop)
				m.mf.Commit(p.off+uint64(s-p.start), uint64(e-s))
			}
		}
		a = stop
	}
	return nil
}

// CheckRange returns ENOMEM unless [addr, addr+length) is fully mapped
// (msync, mincore, madvise validation).
func (m *MemoryManager) CheckRange(addr, length uintptr) error {
	end := addr + length
	if end < addr {
		return unix.ENOMEM
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for a := addr; a < end; {
		i := m.findVMA(a)
		if i < 0 {
			return unix.ENOMEM
		}
		a = m.vmas[i].end
	}
	return nil
}

// AnyLocked reports whether a mapping in [addr, addr+length) is locked
// (mlock, VM_LOCKED): msync(MS_INVALIDATE) refuses those with EBUSY.
func (m *MemoryManager) AnyLocked(addr, length uintptr) bool {
	end := addr + length
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		if m.vmas[i].locked {
			return true
		}
	}
	return false
}

// Resident reports, for each page of [addr, addr+length), whether it is
// backed by memory.
func (m *MemoryManager) Resident(addr, length uintptr) ([]byte, error) {
	if err := m.CheckRange(addr, length); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]byte, pageUp(length)/pageSize)
	end := addr + uintptr(len(out))*pageSize
	for i := m.firstPMAAfter(addr); i < len(m.pmas) && m.pmas[i].start < end; i++ {
		p := m.pmas[i]
		start, stop := max(p.start, addr), min(p.end, end)
		off := p.off + uint64(start-p.start)
		if err := m.mf.Resident(off, uint64(stop-start), out[(start-addr)/pageSize:(stop-addr)/pageSize]); err != nil {
			return nil, err
		}
	}
	// Pages of a shared object this address space has not touched are
	// resident if the object holds them (mincore reports the page cache
	// for file mappings, as on Linux); so are those of a host-mapped file,
	// which the host's page cache serves to the stub.
	for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		v := m.vmas[i]
		if v.hostMapped {
			for a := max(v.start, addr); a < min(v.end, end); a += pageSize {
				if m.findPMA(a) < 0 {
					out[(a-addr)/pageSize] = 1
				}
			}
			continue
		}
		if v.obj == nil {
			continue
		}
		for a := max(v.start, addr); a < min(v.end, end); a += pageSize {
			if m.findPMA(a) >= 0 {
				continue
			}
			if err := v.obj.resident((v.objOff+uint64(a-v.start))/pageSize, out[(a-addr)/pageSize:(a-addr)/pageSize+1]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
