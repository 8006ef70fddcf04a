package mm

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/loader"
)

// Loader adapts m to the loader's Memory interface.
type Loader struct {
	M *MemoryManager
	// Name names file mappings in /proc/[pid]/maps.
	Name func(f loader.File) string
}

// MapAnonymous implements loader.Memory.MapAnonymous.
func (l Loader) MapAnonymous(addr, length uintptr, prot int, fixed bool) (uintptr, error) {
	return l.M.MMap(MMapOpts{Addr: addr, Length: length, Prot: prot, Private: true, Fixed: fixed})
}

// MapFile implements loader.Memory.MapFile.
func (l Loader) MapFile(addr, length uintptr, prot int, fixed bool, f loader.File, off int64) (uintptr, error) {
	name := ""
	if l.Name != nil {
		name = l.Name(f)
	}
	return l.M.MMap(MMapOpts{Addr: addr, Length: length, Prot: prot, Private: true, Fixed: fixed, File: f, Offset: off, Name: name})
}

// MapStack implements loader.Memory.MapStack.
func (l Loader) MapStack() (uintptr, error) {
	_, err := l.M.MMap(MMapOpts{
		Addr: arch.StackTop - arch.DefaultStackSize, Length: arch.DefaultStackSize,
		Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true, Fixed: true, GrowsDown: true, Name: "[stack]",
	})
	if err != nil {
		return 0, err
	}
	return arch.StackTop, nil
}

// CopyOut implements loader.Memory.CopyOut.
func (l Loader) CopyOut(addr uintptr, b []byte) error {
	_, err := l.M.CopyOut(addr, b)
	return err
}

// SetBrkStart implements loader.Memory.SetBrkStart.
func (l Loader) SetBrkStart(addr uintptr) {
	l.M.mu.Lock()
	l.M.brkStart, l.M.brk = addr, addr
	l.M.mu.Unlock()
}

// Maps renders /proc/[pid]/maps.
func (m *MemoryManager) Maps() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var b strings.Builder
	for _, v := range m.vmas {
		perm := []byte("---p")
		if v.prot&unix.PROT_READ != 0 {
			perm[0] = 'r'
		}
		if v.prot&unix.PROT_WRITE != 0 {
			perm[1] = 'w'
		}
		if v.prot&unix.PROT_EXEC != 0 {
			perm[2] = 'x'
		}
		if !v.private && v.fixed == nil {
			// The vDSO pages are shared by every address space but
			// show as private, as Linux's special mappings do.
			perm[3] = 's'
		}
		line := fmt.Sprintf("%08x-%08x %s %08x 00:00 0", v.start, v.end, perm, v.fileOff)
		if v.name != "" {
			line = fmt.Sprintf("%-72s %s", line, v.name)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// CodeRange returns the first run of executable file mappings at or
// above base (where the main executable was loaded): its text, as
// /proc/[pid]/stat's startcode and endcode show it. Both are 0 if there
// is none.
func (m *MemoryManager) CodeRange(base uintptr) (start, end uintptr) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i := m.firstVMAAfter(base); i < len(m.vmas); i++ {
		v := m.vmas[i]
		if v.prot&unix.PROT_EXEC == 0 || v.file == nil && v.obj == nil {
			if start != 0 {
				break
			}
			continue
		}
		if start != 0 && v.start != end {
			break
		}
		if start == 0 {
			start = v.start
		}
		end = v.end
	}
	return start, end
}

// BrkRange returns the heap's start and current break.
func (m *MemoryManager) BrkRange() (uintptr, uintptr) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.brkStart, m.brk
}

// VirtualSize returns the total size of the vmas.
func (m *MemoryManager) VirtualSize() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var n uint64
	for _, v := range m.vmas {
		n += uint64(v.end - v.start)
	}
	return n
}

// MaxResidentSize returns the most bytes ever backed by pages at once.
func (m *MemoryManager) MaxResidentSize() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return uint64(m.maxRSS)
}

// ResidentSize returns the bytes backed by pages.
func (m *MemoryManager) ResidentSize() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return uint64(m.rss)
}
