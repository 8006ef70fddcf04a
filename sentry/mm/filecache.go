package mm

import (
	"io"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The file cache shares the pages of files mapped privately (programs and
// libraries above all) between every mapping of them in the sandbox: a
// page is read from the file once and mapped read-only everywhere; a write
// copies it, as for any page whose reference count is above one.
//
// Files opt in with CacheKey, which names the file (two keys are equal
// exactly when they name the same file). The cache is filled in aligned
// chunks of cacheChunk bytes so a chunk is contiguous in the memory file and
// maps with one stub mapping. Files served read-only do not change under
// the cache; there is no invalidation. At maxCacheBytes the cache drops
// the chunks no mapping uses (those of keys naming one open of a
// changeable file are never looked up again); when all are in use, new
// chunks are read into private pages as before.

// Cacheable is implemented by files whose pages the file cache may share.
type Cacheable interface {
	CacheKey() any
}

const cacheChunk = populateChunk

// maxCacheBytes bounds the cache (a variable for tests).
var maxCacheBytes uint64 = 512 << 20

type chunkKey struct {
	file any
	idx  int64
}

// fileCache is the memory file's cache of file chunks. Locks: mu is taken
// before MemoryFile.mu.
type fileCache struct {
	mu     sync.Mutex
	chunks map[chunkKey]uint64
	bytes  uint64
}

// cachedChunk returns the memory-file offset of chunk idx of f, reading it
// on first use, with one reference for the cache. ok is false when the
// cache is full and the caller must read the pages itself.
func (mf *MemoryFile) cachedChunk(key any, f File, idx int64) (off uint64, ok bool, err error) {
	c := &mf.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	k := chunkKey{key, idx}
	if off, ok := c.chunks[k]; ok {
		return off, true, nil
	}
	if c.bytes+cacheChunk > maxCacheBytes {
		mf.evictUnusedLocked()
		if c.bytes+cacheChunk > maxCacheBytes {
			return 0, false, nil
		}
	}
	off, err = mf.Allocate(cacheChunk)
	if err != nil {
		return 0, false, err
	}
	buf := mf.Bytes(off, cacheChunk)
	populateForRead(buf, f, idx*cacheChunk)
	// Bytes past the end of the file stay zero.
	if _, err := f.ReadAt(buf, idx*cacheChunk); err != nil && !isEOF(err) {
		mf.DecRef(off, cacheChunk)
		return 0, false, err
	}
	if c.chunks == nil {
		c.chunks = make(map[chunkKey]uint64)
	}
	c.chunks[k] = off
	c.bytes += cacheChunk
	return off, true, nil
}

// evictUnusedLocked drops the chunks no mapping uses (the cache holds the
// only reference to each of their pages): keys that name one open of a
// changeable file are never looked up again once its mappings are gone.
// Preconditions: mf.cache.mu is held.
func (mf *MemoryFile) evictUnusedLocked() {
	c := &mf.cache
	for k, off := range c.chunks {
		if mf.onlyReference(off, cacheChunk) {
			delete(c.chunks, k)
			c.bytes -= cacheChunk
			mf.DecRef(off, cacheChunk)
		}
	}
}

// CachedBytes returns how much file data the cache holds.
func (mf *MemoryFile) CachedBytes() uint64 {
	mf.cache.mu.Lock()
	defer mf.cache.mu.Unlock()
	return mf.cache.bytes
}

// fillFromCache creates pmas for [start, end) of the private file vma v
// from cached chunks. It reports false, having done nothing, when the cache
// cannot serve the range.
func (m *MemoryManager) fillFromCache(v *vma, key any, start, end uintptr) (bool, error) {
	type piece struct {
		start, end uintptr
		off        uint64
	}
	var pieces []piece
	for a := start; a < end; {
		fileOff := v.fileOff + int64(a-v.start)
		idx := fileOff / cacheChunk
		chunkEnd := (idx + 1) * cacheChunk
		pieceEnd := end
		if rest := uintptr(chunkEnd - fileOff); a+rest < pieceEnd {
			pieceEnd = a + rest
		}
		off, ok, err := m.mf.cachedChunk(key, v.file, idx)
		if err != nil || !ok {
			for _, p := range pieces {
				m.mf.DecRef(p.off, uint64(p.end-p.start))
			}
			return false, err
		}
		pageOff := off + uint64(fileOff-idx*cacheChunk)
		m.mf.IncRef(pageOff, uint64(pieceEnd-a))
		pieces = append(pieces, piece{a, pieceEnd, pageOff})
		a = pieceEnd
	}
	for _, p := range pieces {
		m.insertPMA(pma{start: p.start, end: p.end, off: p.off, private: true})
	}
	return true, nil
}

// noPopulateWrite is set once the host refused MADV_POPULATE_WRITE
// (Linux before 5.14 answers EINVAL).
var noPopulateWrite atomic.Bool

// populateForRead makes resident, in one call, the pages of buf that a read
// of f from fileOff will fill, so the read copies into them instead of
// faulting each in on its own (that halves the time to read a chunk). Pages
// past the end of the file are left alone: they stay holes and cost no
// memory. Without MADV_POPULATE_WRITE the read faults the pages in as before.
func populateForRead(buf []byte, f File, fileOff int64) {
	if noPopulateWrite.Load() {
		return
	}
	size, err := f.Size()
	if err != nil || size <= fileOff {
		return
	}
	n := uint64(size - fileOff)
	if n > uint64(len(buf)) {
		n = uint64(len(buf))
	}
	n = (n + pageSize - 1) &^ (pageSize - 1)
	if err := unix.Madvise(buf[:n], unix.MADV_POPULATE_WRITE); err == unix.EINVAL {
		noPopulateWrite.Store(true)
	}
}

func isEOF(err error) bool { return err == io.EOF }
