package mm

import (
	"golang.org/x/sys/unix"
)

// access kinds for translate. The forced ones are ptrace's and
// /proc/[pid]/mem's (FOLL_FORCE; see force.go).
const (
	accessRead = iota
	accessWrite
	accessForceRead
	accessForceWrite
)

// writes reports whether access writes.
func writes(access int) bool { return access == accessWrite || access == accessForceWrite }

// translate calls fn with the Sentry's view of each piece of
// [addr, addr+length), populating pages as needed. It stops at the first
// inaccessible page and returns the bytes done and EFAULT.
func (m *MemoryManager) translate(addr uintptr, length int, access int, fn func(b []byte)) (int, error) {
	if length == 0 {
		return 0, nil
	}
	end := addr + uintptr(length)
	if end < addr {
		return 0, unix.EFAULT
	}
	// Fast path: everything already backed, and (for writes) owned.
	m.mu.RLock()
	if n, ok := m.translateLocked(addr, end, access, fn, false); ok {
		m.mu.RUnlock()
		return n, nil
	}
	m.mu.RUnlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.translateLocked(addr, end, access, fn, true)
	if !ok {
		return n, unix.EFAULT
	}
	return n, nil
}

// translateLocked walks [addr, end). With populate false it fails (ok false,
// having called fn for nothing) when a page needs work; with populate true
// it does the work and fails only on an inaccessible page, after calling fn
// for the accessible prefix.
func (m *MemoryManager) translateLocked(addr, end uintptr, access int, fn func([]byte), populate bool) (int, bool) {
	// Check the whole range first so that a failing fast path has no side
	// effects.
	if !populate {
		for a := addr; a < end; {
			vi := m.findVMA(a)
			if vi < 0 {
				return 0, false
			}
			v := m.vmas[vi]
			if !m.vmaAllows(v, access) {
				return 0, false
			}
			pi := m.findPMA(a)
			if pi < 0 {
				return 0, false
			}
			p := m.pmas[pi]
			stop := min(p.end, v.end, end)
			if writes(access) && p.private && v.private {
				first := p.off + uint64(pageDown(a)-p.start)
				if m.mf.sharedPage(first, p.off+uint64(stop-p.start)-first) {
					return 0, false
				}
			}
			a = stop
		}
	}
	done := 0
	for a := addr; a < end; {
		vi := m.findVMA(a)
		if vi < 0 && populate {
			vi = m.growStack(a)
		}
		if vi < 0 {
			return done, false
		}
		v := m.vmas[vi]
		if !m.vmaAllows(v, access) {
			return done, false
		}
		pi := m.findPMA(a)
		if pi < 0 {
			stop := min(pageUp(a+1), v.end)
			if pi2 := m.firstPMAAfter(a); pi2 < len(m.pmas) && m.pmas[pi2].start < stop {
				stop = m.pmas[pi2].start
			}
			// Populate up to the end of the request within the vma.
			fillEnd := min(pageUp(end), v.end)
			if err := m.populate(v, pageDown(a), fillEnd); err != nil {
				return done, false
			}
			pi = m.findPMA(a)
			if pi < 0 {
				return done, false
			}
		}
		if writes(access) && populate && m.pmas[pi].private && v.private {
			if err := m.breakCOW(v, pageDown(a)); err != nil {
				return done, false
			}
			pi = m.findPMA(a)
		}
		p := m.pmas[pi]
		stop := min(p.end, v.end, end)
		if writes(access) && p.private && v.private {
			// Page by page: each may need its own copy.
			stop = min(stop, pageDown(a)+pageSize)
		}
		off := p.off + uint64(a-p.start)
		if writes(access) && p.obj != nil && p.obj.cache != nil && !v.private {
			p.obj.markDirty(v.objOff+uint64(a-v.start), uint64(stop-a))
		}
		fn(m.mf.Bytes(off, uint64(stop-a)))
		done += int(stop - a)
		a = stop
	}
	return done, true
}

// vmaAllows reports whether the Sentry may access v on the application's
// behalf: reads need PROT_READ (or write, or exec, which imply it on amd64),
// writes need PROT_WRITE; forced accesses need only that the mapping may
// have the protection.
func (m *MemoryManager) vmaAllows(v *vma, access int) bool {
	switch access {
	case accessWrite:
		return v.prot&unix.PROT_WRITE != 0
	case accessForceWrite:
		// Through copy on write: a private mapping that may be made
		// writable (VM_MAYWRITE), never a shared read-only one.
		return v.prot&unix.PROT_WRITE != 0 || v.private && v.maxProt&unix.PROT_WRITE != 0
	case accessForceRead:
		return v.prot != 0 || v.maxProt&unix.PROT_READ != 0
	}
	return v.prot != 0
}

// CopyIn copies application memory at addr into dst.
func (m *MemoryManager) CopyIn(addr uintptr, dst []byte) (int, error) {
	done := 0
	return m.translate(addr, len(dst), accessRead, func(b []byte) {
		done += copy(dst[done:], b)
	})
}

// CopyOut copies src into application memory at addr.
func (m *MemoryManager) CopyOut(addr uintptr, src []byte) (int, error) {
	done := 0
	return m.translate(addr, len(src), accessWrite, func(b []byte) {
		done += copy(b, src[done:])
	})
}

// ZeroOut writes length zero bytes at addr.
func (m *MemoryManager) ZeroOut(addr uintptr, length int) (int, error) {
	return m.translate(addr, length, accessWrite, func(b []byte) {
		clear(b)
	})
}

// CopyInString reads a NUL-terminated string of at most maxLen bytes
// (without the NUL). It returns ENAMETOOLONG when no NUL is found within
// maxLen bytes.
func (m *MemoryManager) CopyInString(addr uintptr, maxLen int) (string, error) {
	var buf []byte
	var chunk [256]byte
	for len(buf) < maxLen+1 {
		// Read up to the end of the page so an unmapped next page is not
		// touched before it is needed.
		n := min(len(chunk), int(pageUp(addr+1)-addr), maxLen+1-len(buf))
		if n == 0 {
			n = min(len(chunk), maxLen+1-len(buf))
		}
		got, err := m.CopyIn(addr, chunk[:n])
		for i := 0; i < got; i++ {
			if chunk[i] == 0 {
				return string(append(buf, chunk[:i]...)), nil
			}
		}
		if err != nil {
			return "", err
		}
		buf = append(buf, chunk[:got]...)
		addr += uintptr(got)
	}
	return "", unix.ENAMETOOLONG
}

// SharedFutexKey says where the word at addr lives for a shared futex:
// shared is true with the memory-file offset when addr is in a shared
// mapping; otherwise the futex is keyed by the address space and addr.
func (m *MemoryManager) SharedFutexKey(addr uintptr) (shared bool, off uint64, err error) {
	m.mu.RLock()
	vi := m.findVMA(addr)
	if vi < 0 {
		m.mu.RUnlock()
		return false, 0, unix.EFAULT
	}
	private := m.vmas[vi].private
	m.mu.RUnlock()
	if private {
		return false, 0, nil
	}
	_, err = m.translate(addr, 4, accessRead, func(b []byte) {
		off = m.mf.offsetOf(b)
	})
	return true, off, err
}

// WritableLen returns how many bytes from addr, up to length, lie in
// mappings the application may write: a read syscall reads no more than
// that, so data it cannot deliver stays in the file or pipe, as on Linux.
func (m *MemoryManager) WritableLen(addr uintptr, length uint64) uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	end := addr + uintptr(length)
	if end < addr {
		end = ^uintptr(0)
	}
	a := addr
	for a < end {
		vi := m.findVMA(a)
		if vi < 0 {
			// A grows-down stack below its vma may still be written.
			if j := m.firstVMAAfter(a); j < len(m.vmas) && m.vmas[j].growsDown && m.vmas[j].end-pageDown(a) <= m.stackLimit && m.vmas[j].prot&unix.PROT_WRITE != 0 {
				a = m.vmas[j].start
				continue
			}
			break
		}
		v := m.vmas[vi]
		if v.prot&unix.PROT_WRITE == 0 {
			break
		}
		a = v.end
	}
	if a > end {
		a = end
	}
	return uint64(a - addr)
}
