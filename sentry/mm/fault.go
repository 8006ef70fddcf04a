package mm

import (
	"golang.org/x/sys/unix"
)

// Fault outcomes.
const (
	// FaultHandled: the access can be retried.
	FaultHandled = iota
	// FaultSIGSEGV: deliver SIGSEGV with the returned si_code.
	FaultSIGSEGV
	// FaultSIGBUS: deliver SIGBUS (BUS_ADRERR).
	FaultSIGBUS
)

// Linux si_codes for SIGSEGV and SIGBUS.
const (
	SEGV_MAPERR = 1
	SEGV_ACCERR = 2
	BUS_ADRERR  = 2
)

// HandleFault resolves a page fault the platform reported at addr. hostCode
// is the host's si_code: SEGV_MAPERR when the stub had nothing mapped at
// addr, SEGV_ACCERR when the stub mapping's protection refused the access.
// It returns an outcome and, for FaultSIGSEGV, the si_code to deliver.
func (m *MemoryManager) HandleFault(addr uintptr, hostCode int32) (int, int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vi := m.findVMA(addr)
	if vi < 0 {
		vi = m.growStack(addr)
		if vi < 0 {
			return FaultSIGSEGV, SEGV_MAPERR
		}
	}
	v := m.vmas[vi]
	if v.prot == 0 {
		return FaultSIGSEGV, SEGV_ACCERR
	}
	if !v.hostMapped {
		// Map the whole vma from its host file if it may be (hostmap.go).
		if m.mapHost(v); v.hostMapped {
			return FaultHandled, 0
		}
	}
	page := pageDown(addr)
	pi := m.findPMA(page)
	if pi < 0 {
		// Populate a chunk around addr, within v.
		start := page &^ (populateChunk - 1)
		end := start + populateChunk
		if start < v.start {
			start = v.start
		}
		if end > v.end {
			end = v.end
		}
		if err := m.populateAround(v, start, end, page, page+pageSize); err != nil {
			// Past the end of a file, or out of memory.
			return FaultSIGBUS, BUS_ADRERR
		}
		m.privatizeAround(v, page)
		pi = m.findPMA(page)
		if pi < 0 {
			return FaultSIGBUS, BUS_ADRERR
		}
		return m.mapPMARange(v, pi, addr)
	}
	p := &m.pmas[pi]
	if p.stubProt == 0 {
		if m.privatizeAround(v, page) {
			pi = m.findPMA(page)
		}
		return m.mapPMARange(v, pi, addr)
	}
	if hostCode == SEGV_MAPERR {
		// Another thread mapped the page after this fault happened.
		return FaultHandled, 0
	}
	want := v.prot
	if want&unix.PROT_WRITE != 0 {
		want |= unix.PROT_READ
	}
	if p.stubProt&unix.PROT_WRITE == 0 && want&unix.PROT_WRITE != 0 {
		// A write to a copy-on-write page (or one mapped read-only for
		// another reason): make it private and writable, with the file
		// pages around it (a data segment's relocations are written
		// page after page).
		m.privatizeAround(v, page)
		if err := m.breakCOW(v, page); err != nil {
			return FaultSIGBUS, BUS_ADRERR
		}
		pi = m.findPMA(page)
		return m.mapPMARange(v, pi, addr)
	}
	if p.stubProt != want {
		// The vma's protection changed since the page was mapped.
		return m.mapPMARange(v, pi, addr)
	}
	if want&unix.PROT_WRITE != 0 && p.private && v.private {
		// Two threads wrote to a copy-on-write page: the other one's
		// fault gave the page its copy and mapped it writable after this
		// fault happened. Retry. (A genuine fault here, executing a
		// non-executable page, faults again and the kernel's repeat
		// guard delivers it.)
		return FaultHandled, 0
	}
	return FaultSIGSEGV, SEGV_ACCERR
}

// mapPMARange maps pma pi into the stub (the part within v), with the
// protection its pages allow. Pages of a private pma with different
// reference counts may need different protections, so a pma is split
// where that changes.
func (m *MemoryManager) mapPMARange(v *vma, pi int, addr uintptr) (int, int32) {
	if m.as == nil {
		// Faults only come from a running address space.
		return FaultSIGSEGV, SEGV_MAPERR
	}
	p := m.pmas[pi]
	start, end := p.start, p.end
	if start < v.start {
		start = v.start
	}
	if end > v.end {
		end = v.end
	}
	// Find the run around addr that has one protection.
	page := pageDown(addr)
	prot := m.effectiveProt(v, &p, page)
	runStart := page
	for runStart > start && m.effectiveProt(v, &p, runStart-pageSize) == prot {
		runStart -= pageSize
	}
	runEnd := page + pageSize
	for runEnd < end && m.effectiveProt(v, &p, runEnd) == prot {
		runEnd += pageSize
	}
	cached := p.obj != nil && p.obj.cache != nil && !p.private && prot&unix.PROT_WRITE != 0
	if cached && p.stubProt != 0 {
		// A write to a page of a cached file that writeback made
		// read-only (cached.go): only this page becomes dirty.
		runStart, runEnd = page, page+pageSize
	}
	m.splitPMAAt(runStart)
	m.splitPMAAt(runEnd)
	pi = m.findPMA(page)
	q := &m.pmas[pi]
	if err := m.as.MapFile(q.start, q.off, q.end-q.start, prot); err != nil {
		return FaultSIGBUS, BUS_ADRERR
	}
	q.stubProt = prot
	if cached {
		// The stub writes these pages without the Sentry seeing.
		q.obj.markDirty(v.objOff+uint64(q.start-v.start), uint64(q.end-q.start))
	}
	return FaultHandled, 0
}

// breakCOW gives the page at addr its own copy if it is shared.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) breakCOW(v *vma, addr uintptr) error {
	pi := m.findPMA(addr)
	p := m.pmas[pi]
	if !p.private || !v.private {
		return nil
	}
	if v.hostMapped {
		// The page is about to differ from the file the stub shows
		// there: take the file's page out; the next access maps the
		// pma. The vma is never host-mapped again.
		m.splitPMAAt(addr)
		m.splitPMAAt(addr + pageSize)
		m.pmas[m.findPMA(addr)].stubProt = 0
		if m.as != nil {
			m.as.Unmap(addr, pageSize)
		}
	}
	v.written = true
	off := p.off + uint64(addr-p.start)
	if m.mf.RefCount(off) <= 1 {
		if p.obj != nil {
			// The object let go of the page (truncation under way):
			// the copy is ours.
			m.splitPMAAt(addr)
			m.splitPMAAt(addr + pageSize)
			m.pmas[m.findPMA(addr)].obj = nil
		}
		return nil
	}
	n, err := m.mf.Allocate(pageSize)
	if err != nil {
		return err
	}
	copy(m.mf.Bytes(n, pageSize), m.mf.Bytes(off, pageSize))
	m.mf.DecRef(off, pageSize)
	m.splitPMAAt(addr)
	m.splitPMAAt(addr + pageSize)
	pi = m.findPMA(addr)
	stubbed := m.pmas[pi].stubProt != 0
	m.pmas[pi].off = n
	m.pmas[pi].obj = nil
	m.pmas[pi].stubProt = 0
	if stubbed && m.as != nil {
		// The stub still maps the shared page; the next access must see
		// the copy.
		m.as.Unmap(addr, pageSize)
	}
	return nil
}

// growStack extends a grows-down vma to cover addr if addr is within the
// stack limit below it. It returns the vma's index or -1.
func (m *MemoryManager) growStack(addr uintptr) int {
	i := m.firstVMAAfter(addr)
	if i >= len(m.vmas) {
		return -1
	}
	v := m.vmas[i]
	if !v.growsDown || v.start <= addr {
		return -1
	}
	newStart := pageDown(addr)
	if v.end-newStart > m.stackLimit {
		return -1
	}
	// Keep a guard gap of one page above the previous vma.
	if i > 0 && m.vmas[i-1].end+pageSize > newStart {
		return -1
	}
	v.start = newStart
	return i
}

// cowAround is the window a fault in writable private file memory gives
// private copies at once (see privatizeAround): a populated chunk.
const cowAround = populateChunk

// privatizeAround gives the pages of v around page (an aligned window of
// cowAround bytes, within v) that it shares with the file cache private
// copies, in one run of the memory file, so the fault maps them writable at
// once (the new pma replaces any stub mapping of them when the fault maps
// it: it is one run of one protection). Without it a program's data segment (which the dynamic loader
// reads and then relocates page by page) takes a read fault, then a
// copy-on-write fault per page, each a stub round trip. A page only ever
// read costs a copy it did not need; the window bounds that. Pages not
// shared (private reads, copies made already) are left as they are.
// It does nothing unless v is private, file-backed and writable, and
// reports whether it replaced pmas.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) privatizeAround(v *vma, page uintptr) bool {
	if !v.private || v.file == nil || v.prot&unix.PROT_WRITE == 0 {
		return false
	}
	start := max(page&^(cowAround-1), v.start)
	end := min(start+cowAround, v.end)
	// The run of shared pages around page, each covered by a pma.
	shared := func(a uintptr) bool {
		i := m.findPMA(a)
		if i < 0 {
			return false
		}
		p := &m.pmas[i]
		return p.private && p.obj == nil && m.mf.RefCount(p.off+uint64(a-p.start)) > 1
	}
	if !shared(page) {
		return false
	}
	lo, hi := page, page+pageSize
	for lo > start && shared(lo-pageSize) {
		lo -= pageSize
	}
	for hi < end && shared(hi) {
		hi += pageSize
	}
	n, err := m.mf.Allocate(uint64(hi - lo))
	if err != nil {
		return false // each page is copied at its own write fault instead
	}
	m.splitPMAAt(lo)
	m.splitPMAAt(hi)
	i := m.firstPMAAfter(lo)
	j := i
	for j < len(m.pmas) && m.pmas[j].start < hi {
		p := m.pmas[j]
		size := uint64(p.end - p.start)
		copy(m.mf.Bytes(n+uint64(p.start-lo), size), m.mf.Bytes(p.off, size))
		m.mf.DecRef(p.off, size)
		j++
	}
	m.pmas[i] = pma{start: lo, end: hi, off: n, private: true}
	m.pmas = append(m.pmas[:i+1], m.pmas[j:]...)
	return true
}
