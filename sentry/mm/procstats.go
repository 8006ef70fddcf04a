package mm

// ResidentIn returns how many bytes of [start, end) are backed by pages
// (the Rss of /proc/[pid]/smaps).
func (m *MemoryManager) ResidentIn(start, end uintptr) uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var n uintptr
	for i := m.firstPMAAfter(start); i < len(m.pmas) && m.pmas[i].start < end; i++ {
		p := m.pmas[i]
		n += min(p.end, end) - max(p.start, start)
	}
	return uint64(n)
}
