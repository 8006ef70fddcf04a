package mm

import (
	"golang.org/x/sys/unix"
)

// Fork returns a copy-on-write copy of m for a child process.
func (m *MemoryManager) Fork() (*MemoryManager, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := New(m.p, m.mf)
	c.forked = true
	// Once attached to objects, c can be reached by their truncations
	// (invalidateObject) before Fork returns.
	c.mu.Lock()
	unlocked := false
	defer func() {
		if !unlocked {
			c.mu.Unlock()
		}
	}()
	c.brkStart, c.brk, c.stackLimit = m.brkStart, m.brk, m.stackLimit
	c.ArgvStart, c.ArgvEnd, c.EnvvStart, c.EnvvEnd = m.ArgvStart, m.ArgvEnd, m.EnvvStart, m.EnvvEnd
	c.StartCode, c.EndCode, c.StartStack = m.StartCode, m.EndCode, m.StartStack
	c.Auxv = append([]uint64(nil), m.Auxv...)
	c.VDSOBase = m.VDSOBase
	c.exeHold = m.dupExeHold()
	c.vmas = make([]*vma, len(m.vmas))
	for i, v := range m.vmas {
		nv := *v
		nv.locked = false     // the child's memory is not locked (fork(2))
		nv.hostMapped = false // the child's stub maps it at its first fault
		if nv.obj != nil {
			nv.obj.attach(c, &nv)
		}
		c.vmas[i] = &nv
	}
	c.rss, c.maxRSS = m.rss, m.rss
	c.pmas = make([]pma, len(m.pmas))
	for i, p := range m.pmas {
		np := p
		np.stubProt = 0
		c.pmas[i] = np
		if p.holdsRef() {
			m.mf.IncRef(p.off, uint64(p.end-p.start))
		}
	}
	// MADV_DONTFORK ranges are left out of the child, MADV_WIPEONFORK
	// ones are given to it empty.
	excluded := false
	for i := 0; i < len(c.vmas); i++ {
		switch v := c.vmas[i]; {
		case v.dontFork:
			c.removeVMAs(v.start, v.end)
			i--
			excluded = true
		case v.wipeOnFork:
			c.removePMAs(v.start, v.end)
			excluded = true
		}
	}
	c.maxRSS = c.rss
	if err := c.unsharePinned(); err != nil {
		c.mu.Unlock()
		unlocked = true
		c.DecUsers()
		return nil, err
	}
	var downgrade []pma
	for i, p := range m.pmas {
		if p.private && p.stubProt&unix.PROT_WRITE != 0 && (!excluded || m.sharedAfterFork(p)) {
			downgrade = append(downgrade, p)
			m.pmas[i].stubProt = p.stubProt &^ unix.PROT_WRITE
		}
	}
	// The parent's writable private pages are now shared: map them
	// read-only so the next write faults and copies.
	for _, p := range downgrade {
		if m.as != nil {
			if err := m.as.MapFile(p.start, p.off, p.end-p.start, p.stubProt&^unix.PROT_WRITE); err != nil {
				c.mu.Unlock()
				unlocked = true
				c.DecUsers()
				return nil, err
			}
		}
	}
	return c, nil
}

// sharedAfterFork reports whether some page of p is now shared with another
// address space (it was not left out of the child).
func (m *MemoryManager) sharedAfterFork(p pma) bool {
	for off := p.off; off < p.off+uint64(p.end-p.start); off += pageSize {
		if m.mf.RefCount(off) > 1 {
			return true
		}
	}
	return false
}
