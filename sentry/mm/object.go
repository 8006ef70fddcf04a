package mm

import (
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// An Object is memory that every mapping of it shares: the data of a tmpfs
// regular file or a memfd, or the pages of a MAP_SHARED anonymous mapping.
// Its pages live in the memory file and are allocated when first written
// (or touched through a mapping); a page never allocated is a hole that
// reads as zeros.
//
// A page of an object holds one memory-file reference for the object and
// one for each pma that maps it. MAP_SHARED mappings map the object's pages
// writable; MAP_PRIVATE mappings map them read-only and copy a page on the
// first write to it (the pma then holds a private page and no longer
// belongs to the object). Truncating or punching a hole drops the object's
// pages and then removes them from every address space that maps them
// (invalidate), so nobody sees stale data, and a page freed by the object
// stays allocated until the last pma holding it is gone.
//
// Locks: MemoryManager.mu is taken before Object.mu. Object methods called
// from file operations (ReadAt, WriteAt, Truncate...) never hold Object.mu
// while taking an address space's mu: they collect the address spaces first.
type Object struct {
	mf     *MemoryFile
	budget *Budget
	// anon is set for MAP_SHARED anonymous memory (see fillObject).
	anon bool

	mu sync.Mutex
	// refs counts the owners' references (IncRef) and attached vmas; the
	// pages are freed when it drops to zero.
	refs int64
	// pages maps a page index within the object to its memory-file offset.
	pages objPages
	size  int64
	seals int
	// writable counts the attached vmas that are shared and may be made
	// writable (F_SEAL_WRITE is refused while there are any).
	writable int
	// mappers counts the attached vmas of each address space.
	mappers map[*MemoryManager]int
	// vmas counts the attached vmas; onDetach, if set, is called (without
	// mu) after one goes, with the number left.
	vmas     int
	onDetach func(vmas int)

	// cache is set for an object caching a file's pages (cached.go).
	cache *fileBacking
}

// SetDetachHook arranges for f to be called, with the number of vmas
// still attached, whenever a vma of the object goes (munmap, exit, shmdt).
// f runs with an address space's lock held and must not call into mm.
func (o *Object) SetDetachHook(f func(vmas int)) {
	o.mu.Lock()
	o.onDetach = f
	o.mu.Unlock()
}

// Attachments returns the number of vmas mapping the object (SysV shm's
// shm_nattch: a vma split by mprotect counts twice, as on Linux).
func (o *Object) Attachments() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.vmas
}

// aheadPages is how many pages a sequential fault in a shared writable
// mapping allocates (see fillObject).
const aheadPages = 16

// populateMin is the smallest write that WriteAt hands to the host
// (pwrite to the memory file) instead of copying it itself.
const populateMin = 4 * pageSize

// MaxObjectSize is the largest size of an object (Linux's MAX_LFS_FILESIZE).
const MaxObjectSize = math.MaxInt64

// NewObject returns an empty object of the given size (zeros throughout,
// no pages allocated) with one reference. Its pages are charged to budget
// when it is not nil.
func NewObject(mf *MemoryFile, size int64, budget *Budget) *Object {
	o := &Object{mf: mf, budget: budget, refs: 1, size: size}
	return o
}

// Mappable is implemented by file implementations whose contents are an
// Object (tmpfs files, memfds): mmap maps the object's pages.
type Mappable interface {
	MemoryObject() *Object
}

// Budget bounds the memory a group of objects may hold (tmpfs's size=).
// The zero value has no limit.
type Budget struct {
	limit atomic.Int64 // bytes; 0: none
	used  atomic.Int64
}

// SetLimit sets the most bytes the objects may hold (0: no limit). Lowering
// it below what is used refuses only further allocations.
func (b *Budget) SetLimit(bytes int64) { b.limit.Store(bytes) }

// Limit returns the limit set by SetLimit.
func (b *Budget) Limit() int64 { return b.limit.Load() }

// Used returns the bytes the objects hold.
func (b *Budget) Used() int64 { return b.used.Load() }

func (b *Budget) charge(n int64) bool {
	if b == nil {
		return true
	}
	for {
		u := b.used.Load()
		if l := b.limit.Load(); l > 0 && u+n > l {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// available returns how many bytes may still be charged.
func (b *Budget) available() uint64 {
	l := b.limit.Load()
	if l <= 0 {
		return math.MaxUint64
	}
	return uint64(max(l-b.used.Load(), 0))
}

func (b *Budget) uncharge(n int64) {
	if b != nil {
		b.used.Add(-n)
	}
}

// IncRef takes a reference for an owner (a file's inode, an open memfd).
func (o *Object) IncRef() {
	o.mu.Lock()
	o.refs++
	o.mu.Unlock()
}

// DecRef drops a reference; the last one frees the pages.
func (o *Object) DecRef() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decRefLocked()
}

// Preconditions: o.mu is held.
func (o *Object) decRefLocked() {
	o.refs--
	switch {
	case o.refs > 0:
		return
	case o.refs < 0:
		panic("mm: Object.DecRef of a released object")
	}
	o.freePagesLocked(0, math.MaxUint64)
	o.pages.reset()
}

// Size returns the object's size in bytes.
func (o *Object) Size() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.size
}

// Allocated returns the bytes of memory the object holds (st_blocks is
// this over 512).
func (o *Object) Allocated() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return int64(o.pages.len()) * pageSize
}

// Seals returns the object's seals (F_SEAL_*).
func (o *Object) Seals() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seals
}

// SetSeals sets the seals an object starts with (F_SEAL_SEAL for a file
// that may not be sealed), without the checks of AddSeals.
func (o *Object) SetSeals(seals int) {
	o.mu.Lock()
	o.seals = seals
	o.mu.Unlock()
}

// sealsKnown are the seals AddSeals accepts.
const sealsKnown = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_FUTURE_WRITE | unix.F_SEAL_EXEC

// AddSeals implements fcntl(F_ADD_SEALS) with Linux's errors: EINVAL for
// unknown seals, EPERM once F_SEAL_SEAL is set, EBUSY for F_SEAL_WRITE
// while a shared mapping may write. F_SEAL_EXEC on an executable file
// (exec) implies the write, shrink and grow seals, as on Linux.
func (o *Object) AddSeals(seals int, exec bool) error {
	if seals&^sealsKnown != 0 {
		return unix.EINVAL
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seals&unix.F_SEAL_SEAL != 0 {
		return unix.EPERM
	}
	if seals&unix.F_SEAL_WRITE != 0 && o.seals&unix.F_SEAL_WRITE == 0 && o.writable > 0 {
		return unix.EBUSY
	}
	if seals&unix.F_SEAL_EXEC != 0 && exec {
		seals |= unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_FUTURE_WRITE
	}
	o.seals |= seals
	return nil
}

// writeSealed reports whether writes are refused (EPERM).
// Preconditions: o.mu is held.
func (o *Object) writeSealed() bool {
	return o.seals&(unix.F_SEAL_WRITE|unix.F_SEAL_FUTURE_WRITE) != 0
}

// ReadAt copies the object's bytes at off into dst. As io.ReaderAt, it
// returns io.EOF when it reads fewer than len(dst) bytes because the object
// ends.
func (o *Object) ReadAt(dst []byte, off int64) (int, error) {
	if off < 0 {
		return 0, unix.EINVAL
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if off >= o.size {
		return 0, io.EOF
	}
	n := len(dst)
	if int64(n) > o.size-off {
		n = int(o.size - off)
	}
	done := 0
	for done < n {
		pos := uint64(off) + uint64(done)
		idx, inPage := pos/pageSize, pos%pageSize
		chunk := min(n-done, int(pageSize-inPage))
		if p, ok := o.pages.get(idx); ok {
			copy(dst[done:done+chunk], o.mf.Bytes(p+inPage, uint64(chunk)))
		} else if o.cache != nil {
			// Not cached: the file has it. Read the run of missing
			// pages at once.
			for done+chunk < n {
				if o.pages.has((pos + uint64(chunk)) / pageSize) {
					break
				}
				chunk = min(n-done, chunk+pageSize)
			}
			if err := o.cache.readAt(dst[done:done+chunk], int64(pos)); err != nil {
				if done == 0 {
					return 0, err
				}
				return done, nil
			}
		} else {
			clear(dst[done : done+chunk])
		}
		done += chunk
	}
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt copies src into the object at off, allocating pages and growing
// the object as needed. Seals give EPERM, a write past MaxObjectSize EFBIG,
// an exhausted budget ENOSPC (after writing what fit).
func (o *Object) WriteAt(src []byte, off int64) (int, error) {
	if off < 0 {
		return 0, unix.EINVAL
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writeLocked(src, off)
}

// writeLocked is WriteAt. Preconditions: o.mu is held.
func (o *Object) writeLocked(src []byte, off int64) (int, error) {
	if len(src) == 0 {
		return 0, nil
	}
	if o.writeSealed() {
		return 0, unix.EPERM
	}
	if off > MaxObjectSize-int64(len(src)) {
		if off >= MaxObjectSize {
			return 0, unix.EFBIG
		}
		src = src[:MaxObjectSize-off]
	}
	end := off + int64(len(src))
	if end > o.size && o.seals&unix.F_SEAL_GROW != 0 {
		// Linux checks the seal per page-sized step of the write
		// (shmem_write_begin): the steps that end within the file are
		// written, the first one that would grow it fails.
		allowed := off
		for allowed < end {
			step := min((allowed/pageSize+1)*pageSize, end)
			if step > o.size {
				break
			}
			allowed = step
		}
		if allowed == off {
			return 0, unix.EPERM
		}
		src = src[:allowed-off]
		end = allowed
	}
	startIdx, endIdx := uint64(off)/pageSize, (uint64(end)+pageSize-1)/pageSize
	// A large write goes to the memory file with pwrite, one per run of
	// pages contiguous in it: new pages then come from the host unzeroed
	// (a copy into the Sentry's mapping would fault each in zeroed).
	large := len(src) >= populateMin
	n, err := o.allocateLocked(startIdx, endIdx)
	if n == 0 {
		return 0, err
	}
	// Write only into the pages allocated.
	if limit := int64(startIdx+n) * pageSize; limit < end {
		end = limit
	}

	done := 0
	for pos := off; pos < end; {
		idx, inPage := uint64(pos)/pageSize, uint64(pos)%pageSize
		chunk := min(end-pos, int64(pageSize-inPage))
		first, _ := o.pages.get(idx)
		first += inPage
		if large {
			for pos+chunk < end {
				if next, _ := o.pages.get(uint64(pos+chunk) / pageSize); next != first+uint64(chunk) {
					break
				}
				chunk += min(end-pos-chunk, pageSize)
			}
			o.mf.writeAt(src[done:done+int(chunk)], first)
		} else {
			copy(o.mf.Bytes(first, uint64(chunk)), src[done:])
		}
		done += int(chunk)
		pos += chunk
	}
	if end > o.size {
		o.size = end
	}
	// A short write (out of space) reports what was written.
	return done, nil
}

// Append writes src at the object's end, atomically with respect to other
// writes (O_APPEND), and returns the bytes written and the new end.
func (o *Object) Append(src []byte) (int, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.writeLocked(src, o.size)
	return n, o.size, err
}

// allocateLocked makes pages [start, end) of the object present, allocating
// runs of missing pages at once. It returns how many pages from start are
// present, and the error that stopped it.
// Preconditions: o.mu is held.
func (o *Object) allocateLocked(start, end uint64) (uint64, error) {
	for idx := start; idx < end; {
		if o.pages.has(idx) {
			idx++
			continue
		}
		run := uint64(1)
		for idx+run < end && run < 512 {
			if o.pages.has(idx + run) {
				break
			}
			run++
		}
		for !o.budget.charge(int64(run * pageSize)) {
			// Take what the budget still allows.
			if run = min(run, o.budget.available()/pageSize); run == 0 {
				return idx - start, unix.ENOSPC
			}
		}
		off, err := o.mf.Allocate(run * pageSize)
		if err != nil {
			o.budget.uncharge(int64(run * pageSize))
			return idx - start, unix.ENOSPC
		}
		if o.cache != nil {
			o.cache.fill(o.mf.Bytes(off, run*pageSize), int64(idx*pageSize))
		}
		for i := uint64(0); i < run; i++ {
			o.pages.set(idx+i, off+i*pageSize)
		}
		idx += run
	}
	return end - start, nil
}

// pageLocked returns the memory-file offset of page idx, allocating it.
// Preconditions: o.mu is held.
func (o *Object) pageLocked(idx uint64) (uint64, error) {
	if off, ok := o.pages.get(idx); ok {
		return off, nil
	}
	if _, err := o.allocateLocked(idx, idx+1); err != nil {
		return 0, err
	}
	off, _ := o.pages.get(idx)
	return off, nil
}

// freePagesLocked drops the object's pages [start, end), giving runs that
// are contiguous in the memory file back together.
// Preconditions: o.mu is held.
func (o *Object) freePagesLocked(start, end uint64) {
	var offs []uint64
	if end-start < uint64(o.pages.len()) {
		for idx := start; idx < end; idx++ {
			if off, ok := o.pages.del(idx); ok {
				offs = append(offs, off)
			}
		}
	} else {
		o.pages.each(func(idx, off uint64) {
			if idx >= start && idx < end {
				offs = append(offs, off)
				o.pages.del(idx)
			}
		})
	}
	if len(offs) == 0 {
		return
	}
	o.budget.uncharge(int64(len(offs)) * pageSize)
	slices.Sort(offs)
	runStart, runEnd := offs[0], offs[0]+pageSize
	for _, off := range offs[1:] {
		if off == runEnd {
			runEnd += pageSize
			continue
		}
		o.mf.DecRef(runStart, runEnd-runStart)
		runStart, runEnd = off, off+pageSize
	}
	o.mf.DecRef(runStart, runEnd-runStart)
}

// zeroLocked writes zeros over [start, end) of the pages present.
// Preconditions: o.mu is held.
func (o *Object) zeroLocked(start, end uint64) {
	for pos := start; pos < end; {
		idx, inPage := pos/pageSize, pos%pageSize
		chunk := min(end-pos, pageSize-inPage)
		if p, ok := o.pages.get(idx); ok {
			clear(o.mf.Bytes(p+inPage, chunk))
		}
		pos += chunk
	}
}

// Truncate sets the object's size (ftruncate(2)). Shrinking frees the pages
// past the end, zeroes the rest of the last page, and removes the freed
// pages from every mapping (even private copies of them, which then give
// SIGBUS as the range is past the end). F_SEAL_SHRINK and F_SEAL_GROW give
// EPERM.
func (o *Object) Truncate(size int64) error {
	if size < 0 {
		return unix.EINVAL
	}
	o.mu.Lock()
	old := o.size
	switch {
	case size < old && o.seals&unix.F_SEAL_SHRINK != 0,
		size > old && o.seals&unix.F_SEAL_GROW != 0:
		o.mu.Unlock()
		return unix.EPERM
	case size == old:
		o.mu.Unlock()
		return nil
	}
	o.size = size
	if size > old {
		// Bytes past the old end in its last page (written through a
		// mapping) must read as zeros.
		o.zeroLocked(uint64(old), min(uint64(pageUp(uintptr(old))), uint64(size)))
		o.mu.Unlock()
		return nil
	}
	first := (uint64(size) + pageSize - 1) / pageSize
	o.zeroLocked(uint64(size), first*pageSize)
	o.freePagesLocked(first, math.MaxUint64)
	mappers := o.mappersLocked()
	o.mu.Unlock()
	for _, m := range mappers {
		m.invalidateObject(o, first*pageSize, math.MaxUint64, true)
	}
	return nil
}

// Allocate implements fallocate(2) modes 0 and FALLOC_FL_KEEP_SIZE: the
// pages of [off, off+length) are allocated and, without keepSize, the
// object grows to cover them.
func (o *Object) Allocate(off, length int64, keepSize bool) error {
	if off < 0 || length <= 0 {
		return unix.EINVAL
	}
	if off > MaxObjectSize-length {
		return unix.EFBIG
	}
	end := off + length
	o.mu.Lock()
	defer o.mu.Unlock()
	if !keepSize && end > o.size && o.seals&unix.F_SEAL_GROW != 0 {
		return unix.EPERM
	}
	start, stop := uint64(off)/pageSize, (uint64(end)+pageSize-1)/pageSize
	if n, err := o.allocateLocked(start, stop); n < stop-start {
		return err
	}
	if !keepSize && end > o.size {
		o.size = end
	}
	return nil
}

// PunchHole implements fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE):
// [off, off+length) reads as zeros afterwards; whole pages in it are freed
// and removed from shared mappings (private copies stay). Write seals give
// EPERM.
func (o *Object) PunchHole(off, length int64) error {
	if off < 0 || length <= 0 {
		return unix.EINVAL
	}
	if off > MaxObjectSize-length {
		return unix.EFBIG
	}
	end := uint64(off + length)
	o.mu.Lock()
	if o.writeSealed() {
		o.mu.Unlock()
		return unix.EPERM
	}
	first := (uint64(off) + pageSize - 1) / pageSize
	last := end / pageSize
	if first >= last {
		o.zeroLocked(uint64(off), end)
		o.mu.Unlock()
		return nil
	}
	o.zeroLocked(uint64(off), first*pageSize)
	o.zeroLocked(last*pageSize, end)
	o.freePagesLocked(first, last)
	mappers := o.mappersLocked()
	o.mu.Unlock()
	for _, m := range mappers {
		m.invalidateObject(o, first*pageSize, last*pageSize, false)
	}
	return nil
}

// SeekData returns the first offset at or after off inside an allocated
// page (lseek SEEK_DATA), ENXIO when there is none before the end.
func (o *Object) SeekData(off int64) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if off < 0 || off >= o.size {
		return 0, unix.ENXIO
	}
	start, end := uint64(off)/pageSize, (uint64(o.size)+pageSize-1)/pageSize
	first, found := uint64(0), false
	if end-start <= uint64(o.pages.len()) {
		for idx := start; idx < end && !found; idx++ {
			found = o.pages.has(idx)
			first = idx
		}
	} else {
		// A sparse range larger than the pages held: look at the pages.
		o.pages.each(func(idx, _ uint64) {
			if idx >= start && idx < end && (!found || idx < first) {
				first, found = idx, true
			}
		})
	}
	if !found {
		return 0, unix.ENXIO
	}
	return max(off, int64(first*pageSize)), nil
}

// SeekHole returns the first offset at or after off in a hole, the end of
// the object counting as one (lseek SEEK_HOLE).
func (o *Object) SeekHole(off int64) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if off < 0 || off >= o.size {
		return 0, unix.ENXIO
	}
	end := (uint64(o.size) + pageSize - 1) / pageSize
	for idx := uint64(off) / pageSize; idx < end; idx++ {
		if !o.pages.has(idx) {
			return max(off, int64(idx*pageSize)), nil
		}
	}
	return o.size, nil
}

// resident sets vec[0] to whether page idx is held and resident on the
// host.
func (o *Object) resident(idx uint64, vec []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	off, ok := o.pages.get(idx)
	if !ok {
		vec[0] = 0
		return nil
	}
	return o.mf.Resident(off, pageSize, vec)
}

// mappersLocked returns the address spaces with vmas of o.
// Preconditions: o.mu is held.
func (o *Object) mappersLocked() []*MemoryManager {
	if len(o.mappers) == 0 {
		return nil
	}
	ms := make([]*MemoryManager, 0, len(o.mappers))
	for m := range o.mappers {
		ms = append(ms, m)
	}
	return ms
}

// isWritableShared reports whether v counts against F_SEAL_WRITE.
func (v *vma) isWritableShared() bool { return !v.private && v.maxProt&unix.PROT_WRITE != 0 }

// checkMap returns EPERM when a shared writable mapping is asked of a
// write-sealed object.
func (o *Object) checkMap(private bool, prot int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !private && prot&unix.PROT_WRITE != 0 && o.writeSealed() {
		return unix.EPERM
	}
	return nil
}

// writeSealedNow reports whether writes are sealed.
func (o *Object) writeSealedNow() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writeSealed()
}

// attach records v, a vma of m backed by o: a reference, and m as an
// address space to invalidate.
// Preconditions: m.mu is held.
func (o *Object) attach(m *MemoryManager, v *vma) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.refs <= 0 {
		panic("mm: attaching a released object")
	}
	o.refs++
	o.vmas++
	if v.isWritableShared() {
		o.writable++
	}
	if o.mappers == nil {
		o.mappers = make(map[*MemoryManager]int)
	}
	o.mappers[m]++
}

// detach undoes attach.
// Preconditions: m.mu is held.
func (o *Object) detach(m *MemoryManager, v *vma) {
	o.mu.Lock()
	if v.isWritableShared() {
		o.writable--
	}
	if n := o.mappers[m] - 1; n > 0 {
		o.mappers[m] = n
	} else {
		delete(o.mappers, m)
	}
	o.vmas--
	left, hook := o.vmas, o.onDetach
	o.decRefLocked()
	o.mu.Unlock()
	if hook != nil {
		hook(left)
	}
}

// fillObject creates pmas for the gap [start, end) of v, which o backs.
// Pages in [mustStart, mustEnd) are allocated in the object when missing;
// others are mapped only if the object has them (as Linux's fault-around
// maps only pages already in the page cache), except in anonymous shared
// memory, whose pages nobody counts: there the whole gap is allocated, to
// spare faults. A must page past the end of the object gives errBeyondEOF
// unless some page before it was filled.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) fillObject(v *vma, start, end, mustStart, mustEnd uintptr) error {
	o := v.obj
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.anon {
		mustStart, mustEnd = start, end
	}
	sizePages := (uint64(o.size) + pageSize - 1) / pageSize
	if !v.private && v.prot&unix.PROT_WRITE != 0 && mustEnd-mustStart == pageSize {
		// A sequential first touch of a shared writable mapping (this
		// page is missing, the one before it is there) allocates a few
		// pages ahead, so filling a new mapping costs a fault per
		// aheadPages pages rather than per page. st_blocks may count up
		// to aheadPages-1 pages not touched yet.
		idx := (v.objOff + uint64(mustStart-v.start)) / pageSize
		have := o.pages.has(idx)
		prev := o.pages.has(idx - 1)
		if !have && idx > 0 && prev {
			limit := min(idx+aheadPages, sizePages, (v.objOff+uint64(end-v.start))/pageSize)
			if limit > idx {
				o.allocateLocked(idx, limit) // a shortfall leaves the rest to later faults
			}
		}
	}
	// Pages are inserted in runs contiguous in the memory file, with one
	// reference update each.
	runStart, runEnd, runOff := uintptr(0), uintptr(0), uint64(0)
	flush := func() {
		if runEnd > runStart {
			m.mf.IncRef(runOff, uint64(runEnd-runStart))
			m.insertPMA(pma{start: runStart, end: runEnd, off: runOff, private: v.private, obj: o})
		}
		runStart, runEnd = 0, 0
	}
	filled := false
	for a := start; a < end; a += pageSize {
		idx := (v.objOff + uint64(a-v.start)) / pageSize
		must := a >= mustStart && a < mustEnd
		if idx >= sizePages {
			if must && !filled {
				return errBeyondEOF
			}
			break
		}
		off, ok := o.pages.get(idx)
		if !ok {
			if !must {
				flush()
				continue
			}
			var err error
			if off, err = o.pageLocked(idx); err != nil {
				if filled {
					break
				}
				return err
			}
		}
		if runEnd == a && runEnd > runStart && runOff+uint64(a-runStart) == off {
			runEnd += pageSize
		} else {
			flush()
			runStart, runEnd, runOff = a, a+pageSize, off
		}
		filled = true
	}
	flush()
	m.mergePMAs(start, end)
	return nil
}

// invalidateObject removes from m the pmas of o's pages in the object range
// [start, end). Private copies stay unless evenCOW (truncation drops them
// too, as Linux does).
func (m *MemoryManager) invalidateObject(o *Object, start, end uint64, evenCOW bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 0; i < len(m.vmas); i++ {
		v := m.vmas[i]
		if v.obj != o {
			continue
		}
		vs, ve := v.objOff, v.objOff+uint64(v.end-v.start)
		s, e := max(vs, start), min(ve, end)
		if s >= e {
			continue
		}
		as, ae := v.start+uintptr(s-vs), v.start+uintptr(e-vs)
		if evenCOW || !v.private {
			m.removePMAs(as, ae)
		} else {
			m.removeObjectPMAs(as, ae, o)
		}
	}
}

// removeObjectPMAs drops the pmas in [start, end) that map pages of o and
// unmaps them from the stub.
// Preconditions: m.mu is held for writing.
func (m *MemoryManager) removeObjectPMAs(start, end uintptr, o *Object) {
	m.splitPMAAt(start)
	m.splitPMAAt(end)
	for i := m.firstPMAAfter(start); i < len(m.pmas) && m.pmas[i].start < end; {
		p := m.pmas[i]
		if p.obj != o {
			i++
			continue
		}
		m.rss -= p.end - p.start
		m.mf.DecRef(p.off, uint64(p.end-p.start))
		m.pmas = append(m.pmas[:i], m.pmas[i+1:]...)
		if p.stubProt != 0 && m.as != nil {
			m.as.Unmap(p.start, p.end-p.start)
		}
	}
}
