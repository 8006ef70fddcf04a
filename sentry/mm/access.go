package mm

// Protection returns the application's protection (PROT_* bits) at addr,
// and false if no vma contains addr. The kernel uses it to describe a
// fault to a signal handler (the x86 page-fault error code).
func (m *MemoryManager) Protection(addr uintptr) (int, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	vi := m.findVMA(addr)
	if vi < 0 {
		return 0, false
	}
	return m.vmas[vi].prot, true
}
