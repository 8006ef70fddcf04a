package mm

import (
	"golang.org/x/sys/unix"
)

// Direct I/O. A read or write of a file moves data straight between the
// file and the memory-file pages behind the application's buffer (the
// Sentry maps the whole memory file, so those pages are a []byte to
// pread/pwrite or copy), instead of through a bounce buffer.
//
// Between finding the pages and finishing the I/O the address space's
// lock is not held (the I/O may take long), so the pages are pinned:
//
//   - A pinned page whose last reference goes (munmap, mremap over it,
//     MADV_DONTNEED, an object's truncation by another thread) is not
//     freed until it is unpinned, so it is never handed to someone else
//     while the I/O still writes it. Data a read puts there after the
//     munmap is lost, as it is on Linux when the buffer goes mid-read.
//
//   - Pin breaks copy-on-write sharing for a write pin before it returns
//     (as CopyOut does), and Fork gives a child a copy of a pinned page
//     instead of sharing it (as Linux copies pages pinned for DMA at
//     fork), so a later copy-on-write fault in the parent can never leave
//     the parent looking at a copy made before the I/O finished.
//
// Pins are few and short-lived (one per syscall in flight), so they are a
// list of ranges, not per-page state.

// Pinned is application memory pinned for direct I/O by Pin. The zero
// value is empty; it may be reused after Unpin.
type Pinned struct {
	// Blocks are the Sentry's views of the pinned memory, in the order
	// of the application's addresses. Each is contiguous in the memory
	// file; consecutive blocks are not.
	Blocks [][]byte

	mf     *MemoryFile
	ranges []frange
}

// Len returns the number of bytes pinned.
func (p *Pinned) Len() int {
	n := 0
	for _, b := range p.Blocks {
		n += len(b)
	}
	return n
}

// add appends b, a view of the memory file, joining it to the last block
// when it continues it.
func (p *Pinned) add(b []byte) {
	if len(b) == 0 {
		return
	}
	off := p.mf.offsetOf(b)
	end := off + uint64(len(b))
	if i := len(p.ranges) - 1; i >= 0 && p.ranges[i].end == off {
		p.ranges[i].end = end
		p.Blocks[i] = p.mf.Bytes(p.ranges[i].start, end-p.ranges[i].start)
		return
	}
	p.ranges = append(p.ranges, frange{off, end})
	p.Blocks = append(p.Blocks, b)
}

// Unpin releases the pages Pin pinned (freeing those whose last
// reference went meanwhile) and empties p.
func (p *Pinned) Unpin() {
	if len(p.ranges) > 0 {
		p.mf.unpin(p.ranges)
	}
	clear(p.Blocks)
	p.Blocks = p.Blocks[:0]
	p.ranges = p.ranges[:0]
}

// Pin appends to p the memory-file pages behind [addr, addr+length),
// populating them as CopyOut (write) or CopyIn (read) would, and pins
// them. It stops at the first page the application may not access that
// way and returns the bytes pinned, with EFAULT when that is fewer than
// length. The caller must Unpin p when its I/O is done.
func (m *MemoryManager) Pin(p *Pinned, addr uintptr, length int, write bool) (int, error) {
	if length <= 0 {
		return 0, nil
	}
	end := addr + uintptr(length)
	if end < addr {
		return 0, unix.EFAULT
	}
	access := accessRead
	if write {
		access = accessWrite
	}
	p.mf = m.mf
	first := len(p.ranges)
	m.mu.RLock()
	if n, ok := m.translateLocked(addr, end, access, p.add, false); ok {
		m.mf.pin(p.ranges[first:])
		m.mu.RUnlock()
		return n, nil
	}
	m.mu.RUnlock()
	m.mu.Lock()
	n, ok := m.translateLocked(addr, end, access, p.add, true)
	m.mf.pin(p.ranges[first:])
	m.mu.Unlock()
	if !ok {
		return n, unix.EFAULT
	}
	return n, nil
}

// pin records rs as pinned.
func (f *MemoryFile) pin(rs []frange) {
	if len(rs) == 0 {
		return
	}
	f.mu.Lock()
	f.pins = append(f.pins, rs...)
	f.mu.Unlock()
}

// unpin drops one pin of each of rs and frees the pages among them that
// lost their last reference while pinned and are pinned no more.
func (f *MemoryFile) unpin(rs []frange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rs {
		for i, q := range f.pins {
			if q == r {
				last := len(f.pins) - 1
				f.pins[i] = f.pins[last]
				f.pins = f.pins[:last]
				break
			}
		}
	}
	if len(f.deferred) == 0 {
		return
	}
	for _, r := range rs {
		for pg := r.start / pageSize; pg*pageSize < r.end; pg++ {
			if _, ok := f.deferred[pg]; ok && !f.pinnedLocked(pg) {
				delete(f.deferred, pg)
				f.release(pg*pageSize, (pg+1)*pageSize)
			}
		}
	}
	if len(f.deferred) == 0 {
		f.deferred = nil
	}
}

// pinnedLocked reports whether page pg (an index) is pinned.
// Preconditions: f.mu is held.
func (f *MemoryFile) pinnedLocked(pg uint64) bool {
	start, end := pg*pageSize, (pg+1)*pageSize
	for _, r := range f.pins {
		if r.start < end && start < r.end {
			return true
		}
	}
	return false
}

// releaseUnpinned frees the pages of [start, end), which have no
// references left, except those pinned: they are freed by the unpin that
// leaves them unpinned.
// Preconditions: f.mu is held.
func (f *MemoryFile) releaseUnpinned(start, end uint64) {
	if len(f.pins) == 0 {
		f.release(start, end)
		return
	}
	run := start
	for a := start; a < end; a += pageSize {
		if !f.pinnedLocked(a / pageSize) {
			continue
		}
		if run < a {
			f.release(run, a)
		}
		if f.deferred == nil {
			f.deferred = make(map[uint64]struct{})
		}
		f.deferred[a/pageSize] = struct{}{}
		run = a + pageSize
	}
	if run < end {
		f.release(run, end)
	}
}

// anyPinned reports whether a page of [off, off+length) is pinned.
func (f *MemoryFile) anyPinned(off, length uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pins) == 0 {
		return false
	}
	for _, r := range f.pins {
		if r.start < off+length && off < r.end {
			return true
		}
	}
	return false
}

// sharedPage reports whether some page of [off, off+length) has more than
// one reference (a private page shared copy-on-write), in one lock.
func (f *MemoryFile) sharedPage(off, length uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for pg := off / pageSize; pg*pageSize < off+length; pg++ {
		if f.refs.get(pg) > 1 {
			return true
		}
	}
	return false
}

// unsharePinned gives c, a child being forked from m, its own copy of
// every private page that is pinned (a read under way may still write
// it): sharing it copy-on-write would let the parent's next write fault
// copy it before the read is done, and the rest of the read would land in
// the child's page.
// Preconditions: m.mu and c.mu are held for writing; c's pmas are m's.
func (c *MemoryManager) unsharePinned() error {
	mf := c.mf
	mf.mu.Lock()
	none := len(mf.pins) == 0
	mf.mu.Unlock()
	if none {
		return nil
	}
	for i := 0; i < len(c.pmas); i++ {
		p := c.pmas[i]
		if !p.private || !mf.anyPinned(p.off, uint64(p.end-p.start)) {
			continue
		}
		for a := p.start; a < p.end; a += pageSize {
			off := p.off + uint64(a-p.start)
			if !mf.anyPinned(off, pageSize) {
				continue
			}
			n, err := mf.Allocate(pageSize)
			if err != nil {
				return err
			}
			copy(mf.Bytes(n, pageSize), mf.Bytes(off, pageSize))
			mf.DecRef(off, pageSize)
			c.splitPMAAt(a)
			c.splitPMAAt(a + pageSize)
			j := c.findPMA(a)
			c.pmas[j].off = n
			c.pmas[j].obj = nil
		}
		// The splits moved later pmas; carry on after this one's end.
		i = c.firstPMAAfter(p.end - 1)
	}
	return nil
}

// writeAt copies b into the memory file at off with pwrite, falling back
// to a copy through the Sentry's mapping for what pwrite did not take.
func (f *MemoryFile) writeAt(b []byte, off uint64) {
	done := 0
	for done < len(b) {
		n, err := unix.Pwrite(f.fd, b[done:], int64(off)+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		done += n
	}
	copy(f.Bytes(off+uint64(done), uint64(len(b)-done)), b[done:])
}
