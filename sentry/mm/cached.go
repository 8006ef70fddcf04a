package mm

import (
	"sort"
	"sync"

	"golang.org/x/sys/unix"
)

// A cached object holds pages of a file that lives elsewhere (a gofer
// file mapped MAP_SHARED): it plays the part of Linux's page cache for
// that file. A page missing from the object is read from the file when
// first needed; pages that a shared writable mapping may have changed are
// dirty, and Writeback writes them to the file. The file's owner keeps
// the rest coherent: reads of the file go through the object (ReadAt),
// writes go to the file and to the pages the object holds
// (WriteThrough), truncation to both (TruncateThrough).
//
// Dirty pages: a page becomes dirty when the stub maps it writable (the
// application then writes it without the Sentry seeing) or the Sentry
// writes it for the application (a read(2) into the mapping). Writeback
// cleans the pages it writes and maps them read-only in every address
// space first, so a later write faults and dirties its page again: a
// mapping written once is not written back again and again.
//
// Locks: ioMu (one file change or writeback at a time, so a writeback
// never writes a page's old bytes over a write that went straight to the
// file) is taken before Object.mu and never while holding an address
// space's mu or calling into one; it may be taken with an address space's
// mu held (munmap's writeback of an object nothing can write any more).

// Backing is the file a cached object holds pages of.
type Backing interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
}

type fileBacking struct {
	file Backing
	// ioMu: see above.
	ioMu sync.Mutex
	// size is the file's size as the object knows it: writeback never
	// writes past it. Guarded by Object.mu.
	size int64
	// dirty holds the indices of dirty pages. Guarded by Object.mu.
	dirty map[uint64]struct{}
}

// NewCachedObject returns an object caching file, of the given size, with
// one reference.
func NewCachedObject(mf *MemoryFile, size int64, file Backing) *Object {
	o := NewObject(mf, size, nil)
	o.cache = &fileBacking{file: file, size: size, dirty: make(map[uint64]struct{})}
	return o
}

// readAt reads [off, off+len(p)) of the file; bytes past its end read as
// zeros.
func (b *fileBacking) readAt(p []byte, off int64) error {
	done := 0
	for done < len(p) {
		n, err := b.file.ReadAt(p[done:], off+int64(done))
		done += n
		if n == 0 || err != nil {
			if done == 0 && err != nil && !isEOF(err) {
				return err
			}
			break
		}
	}
	clear(p[done:])
	return nil
}

// fill reads fresh (zeroed) pages from the file; what cannot be read
// stays zero, as the part of a file's last page past its end does.
func (b *fileBacking) fill(p []byte, off int64) {
	if off >= b.size {
		return
	}
	if int64(len(p)) > b.size-off {
		p = p[:b.size-off]
	}
	b.readAt(p, off)
}

// Writeback writes the dirty pages of the object range [off, off+length)
// (length -1: to the end) back to its file. Bytes past the file's end (in
// its last page) are not written. It reports the first error the file
// gave; the pages stay dirty then.
//
// Preconditions: no address space's mu is held, unless no shared
// writable mapping of o is left.
func (o *Object) Writeback(off, length int64) error {
	b := o.cache
	if b == nil {
		return nil
	}
	start := uint64(off) / pageSize
	end := ^uint64(0)
	if length >= 0 && off+length >= off {
		end = uint64(off+length+pageSize-1) / pageSize
	}
	o.mu.Lock()
	var idxs []uint64
	for idx := range b.dirty {
		if idx >= start && idx < end {
			idxs = append(idxs, idx)
			delete(b.dirty, idx)
		}
	}
	var mappers []*MemoryManager
	if o.writable > 0 && len(idxs) > 0 {
		mappers = o.mappersLocked()
	}
	o.mu.Unlock()
	if len(idxs) == 0 {
		return nil
	}
	// Clean before writing: a write from now on faults and marks its
	// page again, and one made before lands in what is written below.
	for _, m := range mappers {
		m.writeProtectObject(o, start*pageSize, end*pageSize)
	}
	sort.Slice(idxs, func(i, j int) bool { return idxs[i] < idxs[j] })
	b.ioMu.Lock()
	defer b.ioMu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	var firstErr error
	for _, idx := range idxs {
		pos := int64(idx * pageSize)
		p, ok := o.pages.get(idx)
		if !ok || pos >= b.size {
			continue // truncated meanwhile
		}
		n := min(int64(pageSize), b.size-pos)
		if err := writeAll(b.file, o.mf.Bytes(p, uint64(n)), pos); err != nil {
			b.dirty[idx] = struct{}{}
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// markDirty marks the pages of the object range [off, off+length) dirty.
func (o *Object) markDirty(off, length uint64) {
	o.mu.Lock()
	for idx := off / pageSize; idx*pageSize < off+length; idx++ {
		o.cache.dirty[idx] = struct{}{}
	}
	o.mu.Unlock()
}

// writeProtectObject maps the pages of the object range [start, end) of
// o read-only in m's shared mappings of it that the stub has writable.
func (m *MemoryManager) writeProtectObject(o *Object, start, end uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.as == nil {
		return
	}
	for _, v := range m.vmas {
		if v.obj != o || v.private {
			continue
		}
		vs, ve := v.objOff, v.objOff+uint64(v.end-v.start)
		s, e := max(vs, start), min(ve, end)
		if s >= e {
			continue
		}
		as, ae := v.start+uintptr(s-vs), v.start+uintptr(e-vs)
		m.splitPMAAt(as)
		m.splitPMAAt(ae)
		for i := m.firstPMAAfter(as); i < len(m.pmas) && m.pmas[i].start < ae; i++ {
			p := &m.pmas[i]
			if p.stubProt&unix.PROT_WRITE == 0 || p.obj != o {
				continue
			}
			prot := p.stubProt &^ unix.PROT_WRITE
			if err := m.as.MapFile(p.start, p.off, p.end-p.start, prot); err != nil {
				// Leave it unmapped: the next access faults it in.
				m.as.Unmap(p.start, p.end-p.start)
				prot = 0
			}
			p.stubProt = prot
		}
		m.mergePMAs(as, ae)
	}
}

func writeAll(f Backing, p []byte, off int64) error {
	for len(p) > 0 {
		n, err := f.WriteAt(p, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return unix.EIO
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// WriteThrough writes src at off with write, which writes the file
// itself, and then copies what it wrote into the pages the object holds,
// growing the object when the file grew.
func (o *Object) WriteThrough(src []byte, off int64, write func([]byte, int64) (int, error)) (int, error) {
	b := o.cache
	b.ioMu.Lock()
	defer b.ioMu.Unlock()
	n, err := write(src, off)
	if n <= 0 {
		return n, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	end := off + int64(n)
	for pos := off; pos < end; {
		idx, inPage := uint64(pos)/pageSize, uint64(pos)%pageSize
		chunk := min(end-pos, int64(pageSize-inPage))
		if p, ok := o.pages.get(idx); ok {
			copy(o.mf.Bytes(p+inPage, uint64(chunk)), src[pos-off:])
		}
		pos += chunk
	}
	if end > b.size {
		b.size = end
	}
	if end > o.size {
		// Bytes between the old end and off in its last page read as
		// zeros, as the file's do.
		o.zeroLocked(uint64(o.size), min(uint64(pageUp(uintptr(o.size))), uint64(off)))
		o.size = end
	}
	return n, err
}

// TruncateThrough sets the size of the file with truncate and then of
// the object (see Truncate), with no writeback in between writing a page
// past the new end back.
func (o *Object) TruncateThrough(size int64, truncate func(int64) error) error {
	b := o.cache
	b.ioMu.Lock()
	if err := truncate(size); err != nil {
		b.ioMu.Unlock()
		return err
	}
	o.mu.Lock()
	b.size = size
	for idx := range b.dirty {
		if int64(idx*pageSize) >= size {
			delete(b.dirty, idx)
		}
	}
	o.mu.Unlock()
	b.ioMu.Unlock()
	// Truncate removes the pages from the mappings, which takes address
	// spaces' locks: not under ioMu.
	return o.Truncate(size)
}

// Unused reports whether only the owner's reference is left (no mapping,
// no caller between getting the object and mapping it).
func (o *Object) Unused() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refs == 1
}

// Dirty returns how many pages are dirty.
func (o *Object) Dirty() int {
	if o.cache == nil {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.cache.dirty)
}

// SyncRange writes back the cached objects that shared mappings of
// [addr, addr+length) map (msync): the parts of them mapped there.
func (m *MemoryManager) SyncRange(addr, length uintptr) error {
	type part struct {
		o           *Object
		off, length int64
	}
	var parts []part
	end := addr + length
	m.mu.RLock()
	for i := m.firstVMAAfter(addr); i < len(m.vmas) && m.vmas[i].start < end; i++ {
		v := m.vmas[i]
		if v.obj == nil || v.obj.cache == nil || v.private {
			continue
		}
		s, e := max(v.start, addr), min(v.end, end)
		v.obj.IncRef()
		parts = append(parts, part{v.obj, int64(v.objOff + uint64(s-v.start)), int64(e - s)})
	}
	m.mu.RUnlock()
	var firstErr error
	for _, p := range parts {
		if err := p.o.Writeback(p.off, p.length); err != nil && firstErr == nil {
			firstErr = unix.EIO
		}
		p.o.DecRef()
	}
	return firstErr
}

// SharedMappable is implemented by files whose MAP_SHARED mappings are a
// cached object the file keeps coherent with its reads and writes (gofer
// files). SharedObject returns it with a reference for the caller.
type SharedMappable interface {
	SharedObject(mf *MemoryFile) (*Object, error)
}
