package mm

import (
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sys/unix"
)

// memFileSize is the size of the memory file's sparse extent: the most
// application memory the sandbox can hold at once.
const memFileSize = 64 << 30

// MemoryFile is the memfd that holds all application memory. The Sentry maps
// it once for its own reads and writes; address spaces map ranges of it.
// Pages are reference counted: copy-on-write sharing after fork holds one
// reference per address space.
type MemoryFile struct {
	fd      int
	mapping []byte

	mu   sync.Mutex
	next uint64
	// free holds freed page ranges, sorted by start, coalesced.
	free []frange
	// refs counts references per page index.
	refs pageRefs
	// used is the number of allocated bytes.
	used uint64
	// pins are the ranges pinned for direct I/O (pin.go); deferred holds
	// the pages that lost their last reference while pinned, freed at
	// unpin.
	pins     []frange
	deferred map[uint64]struct{}

	// cache shares file pages between private mappings (filecache.go).
	cache fileCache
}

type frange struct{ start, end uint64 }

// NewMemoryFile creates the memory file and maps it into the Sentry.
func NewMemoryFile() (*MemoryFile, error) {
	fd, err := unix.MemfdCreate("moat-memory", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating the memory file: %w", err)
	}
	if err := unix.Ftruncate(fd, memFileSize); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sizing the memory file: %w", err)
	}
	m, err := unix.Mmap(fd, 0, memFileSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_NORESERVE)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mapping the memory file: %w", err)
	}
	return &MemoryFile{fd: fd, mapping: m}, nil
}

// CanCommit reports whether a request for length more bytes of private
// memory could ever be backed: one larger than the memory file is refused,
// as Linux's heuristic overcommit refuses one larger than RAM plus swap.
func (f *MemoryFile) CanCommit(length uint64) bool { return length <= memFileSize }

// Capacity returns the most bytes of memory the file can hold.
func (f *MemoryFile) Capacity() uint64 { return memFileSize }

// FD returns the memory file's host descriptor.
func (f *MemoryFile) FD() int { return f.fd }

// Allocate returns the offset of length zeroed bytes (page aligned) with one
// reference per page.
func (f *MemoryFile) Allocate(length uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	off, ok := uint64(0), false
	for i, r := range f.free {
		if r.end-r.start >= length {
			off, ok = r.start, true
			if r.end-r.start == length {
				f.free = append(f.free[:i], f.free[i+1:]...)
			} else {
				f.free[i].start += length
			}
			break
		}
	}
	if !ok {
		if f.next+length > memFileSize {
			return 0, unix.ENOMEM
		}
		off = f.next
		f.next += length
	}
	for p := off / pageSize; p < (off+length)/pageSize; p++ {
		f.refs.set(p, 1)
	}
	f.used += length
	return off, nil
}

// IncRef adds a reference to every page of [off, off+length).
func (f *MemoryFile) IncRef(off, length uint64) {
	f.mu.Lock()
	for p := off / pageSize; p < (off+length)/pageSize; p++ {
		f.refs.set(p, f.refs.get(p)+1)
	}
	f.mu.Unlock()
}

// DecRef drops a reference to every page of [off, off+length), freeing the
// pages that have none left.
func (f *MemoryFile) DecRef(off, length uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	runStart := uint64(0)
	inRun := false
	flush := func(end uint64) {
		if inRun {
			f.releaseUnpinned(runStart, end)
			inRun = false
		}
	}
	for p := off / pageSize; p < (off+length)/pageSize; p++ {
		n := f.refs.get(p) - 1
		if n > 0 {
			f.refs.set(p, n)
			flush(p * pageSize)
			continue
		}
		f.refs.set(p, 0)
		if !inRun {
			runStart, inRun = p*pageSize, true
		}
	}
	flush(off + length)
}

// release frees [start, end). Preconditions: f.mu is held.
func (f *MemoryFile) release(start, end uint64) {
	// Give the memory back to the host; the range reads as zeros again.
	unix.Fallocate(f.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, int64(start), int64(end-start))
	f.used -= end - start
	i := sort.Search(len(f.free), func(i int) bool { return f.free[i].start >= start })
	f.free = append(f.free, frange{})
	copy(f.free[i+1:], f.free[i:])
	f.free[i] = frange{start, end}
	// Coalesce with neighbours.
	if i+1 < len(f.free) && f.free[i].end == f.free[i+1].start {
		f.free[i].end = f.free[i+1].end
		f.free = append(f.free[:i+1], f.free[i+2:]...)
	}
	if i > 0 && f.free[i-1].end == f.free[i].start {
		f.free[i-1].end = f.free[i].end
		f.free = append(f.free[:i], f.free[i+1:]...)
	}
}

// RefCount returns the number of references to the page at off.
func (f *MemoryFile) RefCount(off uint64) int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refs.get(off / pageSize)
}

// onlyReference reports whether every page of [off, off+length) has
// exactly one reference.
func (f *MemoryFile) onlyReference(off, length uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := off / pageSize; p < (off+length)/pageSize; p++ {
		if f.refs.get(p) != 1 {
			return false
		}
	}
	return true
}

// Used returns how many bytes are allocated.
func (f *MemoryFile) Used() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.used
}

// Resident sets vec[i] to 1 for each page i of [off, off+length) that holds
// data on the host, 0 for one never touched since it was allocated (freed
// pages are punched out, so a fresh page is a hole until written or read).
// That is exactly mincore(2)'s answer for anonymous memory on Linux, and it
// does not depend on how many pages a fault populated around itself.
func (f *MemoryFile) Resident(off, length uint64, vec []byte) error {
	if err := mincore(f.mapping[off:off+length], vec); err != nil {
		return fmt.Errorf("mincore of the memory file: %w", err)
	}
	for i := range vec {
		vec[i] &= 1
	}
	return nil
}

// Commit makes the pages of [off, off+length) resident on the host without
// changing their contents (mlock and MAP_POPULATE make pages resident).
func (f *MemoryFile) Commit(off, length uint64) {
	b := f.mapping[off : off+length]
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil {
		return
	}
	// Older hosts: a read faults a page of the memfd in.
	var sum byte
	for i := 0; i < len(b); i += pageSize {
		sum += b[i]
	}
	commitSink = sum
}

// commitSink keeps Commit's reads from being optimised away.
var commitSink byte

// Bytes returns the Sentry's view of [off, off+length).
func (f *MemoryFile) Bytes(off, length uint64) []byte {
	return f.mapping[off : off+length : off+length]
}
