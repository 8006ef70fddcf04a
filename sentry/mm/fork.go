package mm

import (
	"golang.org/x/sys/unix"
)

// Fork returns a copy-on-write copy of m for a child process.
func (m *MemoryManager) Fork() (*MemoryManager, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := New(m.p, m.mf)
	c.brkStart, c.brk, c.stackLimit = m.brkStart, m.brk, m.stackLimit
	c.ArgvStart, c.ArgvEnd, c.EnvvStart, c.EnvvEnd = m.ArgvStart, m.ArgvEnd, m.EnvvStart, m.EnvvEnd
	c.Auxv = append([]uint64(nil), m.Auxv...)
	c.VDSOBase = m.VDSOBase
	c.vmas = make([]*vma, len(m.vmas))
	for i, v := range m.vmas {
		nv := *v
		if nv.shared != nil {
			nv.shared.incRef()
		}
		c.vmas[i] = &nv
	}
	c.pmas = make([]pma, len(m.pmas))
	var downgrade []pma
	for i, p := range m.pmas {
		np := p
		np.stubProt = 0
		c.pmas[i] = np
		if p.private {
			m.mf.IncRef(p.off, uint64(p.end-p.start))
			if p.stubProt&unix.PROT_WRITE != 0 {
				downgrade = append(downgrade, p)
				m.pmas[i].stubProt = p.stubProt &^ unix.PROT_WRITE
			}
		}
	}
	// The parent's writable private pages are now shared: map them
	// read-only so the next write faults and copies.
	for _, p := range downgrade {
		if m.as != nil {
			if err := m.as.MapFile(p.start, p.off, p.end-p.start, p.stubProt&^unix.PROT_WRITE); err != nil {
				c.DecUsers()
				return nil, err
			}
		}
	}
	return c, nil
}
