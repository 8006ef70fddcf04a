package mm

import (
	"golang.org/x/sys/unix"
)

// Host file mappings. A private, never-written mapping of a file whose
// contents cannot change while the sandbox runs (program text and
// read-only data of binaries and libraries on the gofer's read-only tree)
// is mapped in the stub straight from the file's host descriptor
// (platform MapHostFD): the host's page cache serves the application's
// reads, with no fault for the Sentry and no copy into the memory file.
//
// The stub maps such a vma (hostMapped) at the first fault in it, or when
// the stub is created for the vmas exec loaded. The stub then shows, at each of its pages,
// either the host file, or the page's pma (stubProt != 0), or nothing
// (after a partial unmap of the stub; the next access faults and takes the
// ordinary path). The Sentry's own view is unchanged: copy-in fills pmas
// from the file cache, the same bytes as the host file. A page whose pma
// stops matching the file (a forced write through copy-on-write) is
// unmapped from the stub when it is copied (breakCOW), so the stub cannot
// go on showing the file there.
//
// A vma stops being hostMapped (the stub range is unmapped) when its
// protection changes, when it is moved or resized, and in a forked child;
// a vma that was ever writable (written) is never host-mapped, since its
// pmas may differ from the file.

// HostMappable is implemented by files the stubs may map straight from a
// host descriptor.
type HostMappable interface {
	// HostMapFD returns a readable host descriptor of the file whose
	// contents do not change while the sandbox runs, or -1. It stays
	// open while the file is mapped.
	HostMapFD() int
}

// hostMapper is implemented by platform address spaces that can map a
// Sentry descriptor (the ptrace platform's MapHostFD).
type hostMapper interface {
	MapHostFD(addr, length uintptr, prot int, fd int, off uint64) error
}

// hostFD returns the host descriptor v's pages may be mapped from, or -1.
func (v *vma) hostFD() int {
	if !v.private || v.file == nil || v.written || v.hostMapFailed || v.prot == 0 || v.prot&unix.PROT_WRITE != 0 {
		return -1
	}
	h, ok := v.file.(HostMappable)
	if !ok {
		return -1
	}
	return h.HostMapFD()
}

// mapHost maps v from its host file in the stub if it can (the first
// fault in v does, or the creation of the stub for the vmas exec loaded);
// otherwise v's pages fault in through the memory file as usual. v's pmas
// hold the file's bytes (it was never written), so the host mapping may
// replace them in the stub.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) mapHost(v *vma) {
	if m.as == nil || v.hostMapped {
		return
	}
	fd := v.hostFD()
	if fd < 0 {
		return
	}
	hm, ok := m.as.(hostMapper)
	if !ok {
		return
	}
	// Pages past the end of the file get the host's SIGBUS, as Linux
	// gives. A failure leaves nothing of v mapped, as before, and is not
	// tried again for v: each later fault would otherwise take the pages
	// of v mapped since out of the stub again (and pay a round trip).
	if err := hm.MapHostFD(v.start, v.end-v.start, v.prot, fd, uint64(v.fileOff)); err != nil {
		m.unstub(v.start, v.end)
		v.hostMapFailed = true
		return
	}
	v.hostMapped = true
	for i := m.firstPMAAfter(v.start); i < len(m.pmas) && m.pmas[i].start < v.end; i++ {
		m.pmas[i].stubProt = 0
	}
}

// mapOnCreate fills the stub just made for m: every vma that may be is
// host-mapped, and, unless m is a fork's copy (which may hold many pages
// and often execs at once), the pages the Sentry populated already (the
// stack exec wrote argv and the auxv to, the zeroed tails of data
// segments) are mapped, each saving its first fault.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) mapOnCreate() {
	for _, v := range m.vmas {
		m.mapHost(v)
	}
	if m.forked {
		return
	}
	for a := uintptr(0); ; {
		i := m.firstPMAAfter(a)
		if i >= len(m.pmas) {
			return
		}
		p := m.pmas[i]
		a = p.end
		vi := m.findVMA(p.start)
		if p.stubProt != 0 || vi < 0 || m.vmas[vi].prot == 0 || m.vmas[vi].hostMapped {
			continue
		}
		m.mapPMARange(m.vmas[vi], i, p.start)
	}
}

// unmapHost takes the host mappings of the vmas in [start, end) out of the
// stub, with whatever else is mapped there, and clears their hostMapped;
// the vmas are split at start and end. Their pages fault in again.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) unmapHost(start, end uintptr) {
	if !m.anyHostMapped(start, end) {
		return
	}
	m.splitVMAAt(start)
	m.splitVMAAt(end)
	for i := m.firstVMAAfter(start); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		m.vmas[i].hostMapped = false
	}
	m.splitPMAAt(start)
	m.splitPMAAt(end)
	for i := m.firstPMAAfter(start); i < len(m.pmas) && m.pmas[i].start < end; i++ {
		m.pmas[i].stubProt = 0
	}
	if m.as != nil {
		m.as.Unmap(start, end-start)
	}
}

// anyHostMapped reports whether a vma overlapping [start, end) is
// host-mapped.
// Preconditions: m.mu is held.
func (m *MemoryManager) anyHostMapped(start, end uintptr) bool {
	for i := m.firstVMAAfter(start); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		if m.vmas[i].hostMapped {
			return true
		}
	}
	return false
}
