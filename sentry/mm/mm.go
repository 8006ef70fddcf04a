// Package mm implements application address spaces: the virtual memory
// areas (VMAs) a program sees, the memory-file pages backing them (PMAs),
// copy-on-write after fork, and copying between the Sentry and application
// memory.
//
// Objects:
//
//   - MemoryFile: the memfd holding all application memory, with per-page
//     reference counts.
//
//   - MemoryManager: one address space. vmas describe what the application
//     mapped (range, protections, private or shared, what backs it); pmas
//     record which memory-file pages back which parts of the vmas, and how
//     each is mapped in the platform address space (the stub process).
//
//   - Pages are allocated lazily: on a fault in the stub, or when the Sentry
//     copies in or out. A private page shared with another address space
//     after fork has a reference count above one and is mapped read-only;
//     a write fault copies it.
//
//   - Object: memory shared by every mapping of it (tmpfs files, memfds,
//     MAP_SHARED anonymous memory); see object.go. A cached object holds
//     the pages of a file kept elsewhere (gofer files mapped MAP_SHARED)
//     and writes them back; see cached.go.
//
//   - Host mappings: program text and other never-written private mappings
//     of files that cannot change are mapped in the stub from the file's
//     host descriptor instead of memory-file pages; see hostmap.go. Writable
//     private file memory is copied a chunk at a time (privatizeAround).
//
//   - Pinned: application memory handed to a file's read or write as the
//     memory file's own pages (direct I/O, no bounce buffer); see pin.go.
//
//   - CopyBetween: process_vm_readv/writev's copy between two address
//     spaces through a Sentry buffer, taking one MemoryManager.mu at a
//     time, never both; see vmcopy.go.
//
// Locks: MemoryManager.mu, then Object.mu, then fileCache.mu, then
// MemoryFile.mu; a cached object's ioMu comes before Object.mu and is
// taken under MemoryManager.mu only by the writeback of the last munmap
// (cached.go). mu is
// never held while waiting for anything but the platform's injected mmap and
// munmap of this address space.
package mm

import (
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/platform"
)

const pageSize = arch.PageSize

var nextID atomic.Uint64

// populateChunk is how much a fault populates at once around the faulting
// address (within the vma), to amortise the cost of a stub round trip.
const populateChunk = 64 * pageSize

func pageDown(a uintptr) uintptr { return a &^ (pageSize - 1) }
func pageUp(a uintptr) uintptr   { return (a + pageSize - 1) &^ (pageSize - 1) }

// File is a file that can back a mapping: its contents are copied into
// private pages when touched.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	Size() (int64, error)
}

// fixedRange is memory-file pages mapped read-only into every address space
// (the vDSO and its data page). They are never freed.
type fixedRange struct {
	off uint64
}

// vma is one virtual memory area.
type vma struct {
	start, end uintptr
	prot       int
	maxProt    int
	private    bool
	growsDown  bool
	// dontFork (MADV_DONTFORK): a child does not get this range.
	// wipeOnFork (MADV_WIPEONFORK): a child gets it empty.
	dontFork, wipeOnFork bool
	// locked (VM_LOCKED) counts against RLIMIT_MEMLOCK; not inherited by
	// fork.
	locked bool

	// Exactly one backing or none (private anonymous).
	file    File
	fileOff int64 // file offset of start
	obj     *Object
	objOff  uint64 // object offset of start, for obj
	fixed   *fixedRange

	// name is what /proc/[pid]/maps shows.
	name string

	// written is set once the vma may hold pages that differ from its
	// file: it was writable, or was written through copy-on-write.
	written bool
	// hostMapped: the stub maps the vma's host file (hostmap.go).
	hostMapped bool
	// hostMapFailed: the platform refused to map the vma's host file;
	// its pages fault in through the memory file from then on.
	hostMapFailed bool
}

// pma is a run of memory-file pages backing part of a vma.
type pma struct {
	start, end uintptr
	off        uint64
	// private pmas hold one reference per page and are copy-on-write when
	// a page's count is above one.
	private bool
	// obj is set when the pages are an Object's (the pma holds a
	// reference per page too); a private copy of such a page has none.
	obj *Object
	// stubProt is how the range is mapped in the platform address space;
	// 0 when it is not mapped there.
	stubProt int
}

// MemoryManager is an application address space.
type MemoryManager struct {
	// ID identifies the address space (futex keys).
	ID uint64

	p  platform.Platform
	mf *MemoryFile

	// users counts the tasks sharing this address space (CLONE_VM).
	users atomic.Int32

	mu   sync.RWMutex
	as   platform.AddressSpace
	vmas []*vma
	pmas []pma

	brkStart, brk uintptr
	// rss is the bytes the pmas cover, maxRSS its high-water mark
	// (getrusage's ru_maxrss).
	rss, maxRSS uintptr
	// stackLimit is RLIMIT_STACK for growing the main stack.
	stackLimit uintptr
	// lockFuture is mlockall(MCL_FUTURE): new mappings are locked (and
	// populated, unless lockFutureOnFault).
	lockFuture, lockFutureOnFault bool

	// Recorded by the loader for /proc.
	ArgvStart, ArgvEnd, EnvvStart, EnvvEnd uintptr
	Auxv                                   []uint64
	// VDSOBase is where the vDSO is mapped, 0 if it is not.
	VDSOBase uintptr

	// StartCode and EndCode bound the main executable's text and
	// StartStack is the initial stack pointer (/proc/[pid]/stat).
	StartCode, EndCode, StartStack uintptr

	// forked is set in a fork's copy (mapOnCreate).
	forked bool

	// exeHold is what m holds of its executable (its ETXTBSY denial)
	// until its last user goes; exeMu guards it.
	exeMu   sync.Mutex
	exeHold ExeHold
}

// ExeHold is what an address space holds of the executable it runs
// while it lives (Linux's exe_file keeps writers out); Fork gives the
// copy a Dup of it.
type ExeHold interface {
	Dup() ExeHold
	Release()
}

// SetExeHold makes m hold h until its last user goes.
func (m *MemoryManager) SetExeHold(h ExeHold) {
	m.exeMu.Lock()
	old := m.exeHold
	m.exeHold = h
	m.exeMu.Unlock()
	if old != nil {
		old.Release()
	}
}

// dupExeHold returns a copy of m's executable hold for a forked copy.
func (m *MemoryManager) dupExeHold() ExeHold {
	m.exeMu.Lock()
	defer m.exeMu.Unlock()
	if m.exeHold == nil {
		return nil
	}
	return m.exeHold.Dup()
}

// New returns an empty address space.
func New(p platform.Platform, mf *MemoryFile) *MemoryManager {
	m := &MemoryManager{ID: nextID.Add(1), p: p, mf: mf, stackLimit: 8 << 20}
	m.users.Store(1)
	return m
}

// MemoryFile returns the memory file backing m.
func (m *MemoryManager) MemoryFile() *MemoryFile { return m.mf }

// AddressSpace returns the platform address space, creating it on first use.
func (m *MemoryManager) AddressSpace() (platform.AddressSpace, error) {
	m.mu.RLock()
	as := m.as
	m.mu.RUnlock()
	if as != nil {
		return as, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.as == nil {
		as, err := m.p.NewAddressSpace()
		if err != nil {
			return nil, err
		}
		m.as = as
		// A new address space gets every host mapping at once (ten or
		// so for a dynamic program): together, where that is cheaper.
		if b, ok := as.(platform.Batcher); ok {
			b.Batch(m.mapOnCreate)
		} else {
			m.mapOnCreate()
		}
	}
	return m.as, nil
}

// IncUsers adds a task sharing m.
func (m *MemoryManager) IncUsers() { m.users.Add(1) }

// Users returns how many tasks (and borrowers) share m now.
func (m *MemoryManager) Users() int32 { return m.users.Load() }

// TryIncUsers takes a reference on m unless its last user has gone (and
// its memory with it), for a borrower such as process_vm_readv that must
// not bring a released address space back. The caller drops it with
// DecUsers.
func (m *MemoryManager) TryIncUsers() bool {
	for {
		n := m.users.Load()
		if n <= 0 {
			return false
		}
		if m.users.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// DecUsers drops a task; the last one frees the address space.
func (m *MemoryManager) DecUsers() {
	if m.users.Add(-1) > 0 {
		return
	}
	defer m.SetExeHold(nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.pmas {
		if p.holdsRef() {
			m.mf.DecRef(p.off, uint64(p.end-p.start))
		}
	}
	m.pmas = nil
	m.rss = 0
	for _, v := range m.vmas {
		if v.obj != nil {
			v.obj.detach(m, v)
		}
	}
	m.vmas = nil
	if m.as != nil {
		m.as.Release()
		m.as = nil
	}
}

// SetStackLimit sets RLIMIT_STACK for the growth of the main stack.
func (m *MemoryManager) SetStackLimit(l uint64) {
	m.mu.Lock()
	if l > arch.StackTop/2 {
		l = arch.StackTop / 2
	}
	m.stackLimit = uintptr(l)
	m.mu.Unlock()
}

// findVMA returns the index of the vma containing addr, or -1.
// Preconditions: m.mu is held.
func (m *MemoryManager) findVMA(addr uintptr) int {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].end > addr })
	if i < len(m.vmas) && m.vmas[i].start <= addr {
		return i
	}
	return -1
}

// firstVMAAfter returns the index of the first vma ending after addr.
func (m *MemoryManager) firstVMAAfter(addr uintptr) int {
	return sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].end > addr })
}

// findPMA returns the index of the pma containing addr, or -1.
func (m *MemoryManager) findPMA(addr uintptr) int {
	i := sort.Search(len(m.pmas), func(i int) bool { return m.pmas[i].end > addr })
	if i < len(m.pmas) && m.pmas[i].start <= addr {
		return i
	}
	return -1
}

// firstPMAAfter returns the index of the first pma ending after addr.
func (m *MemoryManager) firstPMAAfter(addr uintptr) int {
	return sort.Search(len(m.pmas), func(i int) bool { return m.pmas[i].end > addr })
}

// insertPMA adds p, which overlaps no pma.
func (m *MemoryManager) insertPMA(p pma) {
	m.rss += p.end - p.start
	m.maxRSS = max(m.maxRSS, m.rss)
	i := m.firstPMAAfter(p.start)
	m.pmas = append(m.pmas, pma{})
	copy(m.pmas[i+1:], m.pmas[i:])
	m.pmas[i] = p
}

// holdsRef reports whether p holds a memory-file reference per page.
func (p *pma) holdsRef() bool { return p.private || p.obj != nil }

// splitPMAAt makes addr a boundary between pmas.
func (m *MemoryManager) splitPMAAt(addr uintptr) {
	i := m.findPMA(addr)
	if i < 0 || m.pmas[i].start == addr {
		return
	}
	p := m.pmas[i]
	left, right := p, p
	left.end = addr
	right.start = addr
	right.off = p.off + uint64(addr-p.start)
	m.pmas = append(m.pmas, pma{})
	copy(m.pmas[i+2:], m.pmas[i+1:])
	m.pmas[i] = left
	m.pmas[i+1] = right
}

// splitVMAAt makes addr a boundary between vmas.
func (m *MemoryManager) splitVMAAt(addr uintptr) {
	i := m.findVMA(addr)
	if i < 0 || m.vmas[i].start == addr {
		return
	}
	v := m.vmas[i]
	right := *v
	right.start = addr
	if right.file != nil {
		right.fileOff += int64(addr - v.start)
	}
	if right.obj != nil {
		right.objOff += uint64(addr - v.start)
		right.obj.attach(m, &right)
	}
	if right.fixed != nil {
		right.fixed = &fixedRange{off: v.fixed.off + uint64(addr-v.start)}
	}
	v.end = addr
	m.vmas = append(m.vmas, nil)
	copy(m.vmas[i+2:], m.vmas[i+1:])
	m.vmas[i+1] = &right
}

// removePMAs drops the pmas in [start, end) and unmaps them from the stub.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) removePMAs(start, end uintptr) {
	m.splitPMAAt(start)
	m.splitPMAAt(end)
	i := m.firstPMAAfter(start)
	j := i
	unmap := false
	for j < len(m.pmas) && m.pmas[j].start < end {
		p := m.pmas[j]
		m.rss -= p.end - p.start
		if p.holdsRef() {
			m.mf.DecRef(p.off, uint64(p.end-p.start))
		}
		if p.stubProt != 0 {
			unmap = true
		}
		j++
	}
	m.pmas = append(m.pmas[:i], m.pmas[j:]...)
	if unmap && m.as != nil {
		m.as.Unmap(start, end-start)
	}
}

// removeVMAs drops the vmas and pmas in [start, end).
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) removeVMAs(start, end uintptr) {
	m.unmapHost(start, end)
	m.removePMAs(start, end)
	m.splitVMAAt(start)
	m.splitVMAAt(end)
	i := m.firstVMAAfter(start)
	j := i
	for j < len(m.vmas) && m.vmas[j].start < end {
		if v := m.vmas[j]; v.obj != nil {
			v.obj.detach(m, v)
		}
		j++
	}
	m.vmas = append(m.vmas[:i], m.vmas[j:]...)
}

// mergeable reports whether vma b, which starts where a ends, can join a:
// anonymous memory alike in every attribute, as Linux's vma_merge
// requires (file and object mappings are left apart).
func mergeable(a, b *vma) bool {
	return a.end == b.start &&
		a.file == nil && b.file == nil && a.obj == nil && b.obj == nil && a.fixed == nil && b.fixed == nil &&
		a.private == b.private && a.prot == b.prot && a.maxProt == b.maxProt &&
		a.growsDown == b.growsDown && a.dontFork == b.dontFork && a.wipeOnFork == b.wipeOnFork &&
		a.locked == b.locked && a.name == b.name
}

// mergeVMAs joins the mergeable neighbours among the vmas touching
// [start, end], after a change of attributes split them.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) mergeVMAs(start, end uintptr) {
	i := m.firstVMAAfter(start)
	if i > 0 {
		i--
	}
	for i+1 < len(m.vmas) && m.vmas[i].start <= end {
		a, b := m.vmas[i], m.vmas[i+1]
		if !mergeable(a, b) {
			i++
			continue
		}
		a.end = b.end
		m.vmas = append(m.vmas[:i+1], m.vmas[i+2:]...)
	}
}

// insertVMA adds v, which overlaps no vma.
func (m *MemoryManager) insertVMA(v *vma) {
	i := m.firstVMAAfter(v.start)
	m.vmas = append(m.vmas, nil)
	copy(m.vmas[i+1:], m.vmas[i:])
	m.vmas[i] = v
}

// effectiveProt is how a page of p in v may be mapped in the stub: without
// write while it is shared copy-on-write.
func (m *MemoryManager) effectiveProt(v *vma, p *pma, addr uintptr) int {
	prot := v.prot
	if prot&unix.PROT_WRITE != 0 {
		prot |= unix.PROT_READ
	}
	if p.private && v.private && prot&unix.PROT_WRITE != 0 {
		if m.mf.RefCount(p.off+uint64(addr-p.start)) > 1 {
			prot &^= unix.PROT_WRITE
		}
	}
	return prot
}

// populate makes pmas cover [start, end), which lies inside v: it fills
// every gap. It returns errBeyondEOF for file pages past EOF.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) populate(v *vma, start, end uintptr) error {
	return m.populateAround(v, start, end, start, end)
}

// populateAround is populate for a fault at [mustStart, mustEnd): pages of
// an Object outside it are mapped only if the object already has them.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) populateAround(v *vma, start, end, mustStart, mustEnd uintptr) error {
	addr := start
	for addr < end {
		i := m.firstPMAAfter(addr)
		if i < len(m.pmas) && m.pmas[i].start <= addr {
			addr = m.pmas[i].end
			continue
		}
		gapEnd := end
		if i < len(m.pmas) && m.pmas[i].start < gapEnd {
			gapEnd = m.pmas[i].start
		}
		if err := m.fill(v, addr, gapEnd, mustStart, mustEnd); err != nil {
			return err
		}
		addr = gapEnd
	}
	return nil
}

// errBeyondEOF reports a file page entirely past the end of the file.
var errBeyondEOF = unix.EFAULT

// fill creates pmas for the gap [start, end) in v (see populateAround).
func (m *MemoryManager) fill(v *vma, start, end, mustStart, mustEnd uintptr) error {
	switch {
	case v.fixed != nil:
		m.insertPMA(pma{start: start, end: end, off: v.fixed.off + uint64(start-v.start)})
		return nil
	case v.obj != nil:
		return m.fillObject(v, start, end, mustStart, mustEnd)
	}
	if v.file != nil {
		// Pages entirely past the end of the file give SIGBUS.
		size, err := v.file.Size()
		if err != nil {
			return unix.EIO
		}
		fileEnd := v.start + uintptr(pageUp(uintptr(size-v.fileOff)))
		if size <= v.fileOff {
			fileEnd = v.start
		}
		if start >= fileEnd {
			return errBeyondEOF
		}
		if end > fileEnd {
			end = fileEnd
		}
	}
	if c, ok := v.file.(Cacheable); ok && v.private {
		if done, err := m.fillFromCache(v, c.CacheKey(), start, end); done || err != nil {
			return err
		}
	}
	off, err := m.mf.Allocate(uint64(end - start))
	if err != nil {
		return err
	}
	if v.file != nil {
		buf := m.mf.Bytes(off, uint64(end-start))
		n, err := v.file.ReadAt(buf, v.fileOff+int64(start-v.start))
		if n < len(buf) && err != nil && n == 0 && start == v.start {
			// A read error (not EOF) on the first page: report it.
			if size, serr := v.file.Size(); serr == nil && size > v.fileOff {
				m.mf.DecRef(off, uint64(end-start))
				return unix.EIO
			}
		}
	}
	m.insertPMA(pma{start: start, end: end, off: off, private: true})
	return nil
}

// mergePMAs joins adjacent pmas in [start, end) whose pages are contiguous.
func (m *MemoryManager) mergePMAs(start, end uintptr) {
	i := m.firstPMAAfter(start)
	if i > 0 {
		i--
	}
	for i+1 < len(m.pmas) && m.pmas[i].start < end {
		a, b := &m.pmas[i], m.pmas[i+1]
		if a.end == b.start && a.off+uint64(a.end-a.start) == b.off && a.private == b.private && a.obj == b.obj && a.stubProt == b.stubProt {
			a.end = b.end
			m.pmas = append(m.pmas[:i+1], m.pmas[i+2:]...)
			continue
		}
		i++
	}
}
