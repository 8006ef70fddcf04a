package fs

import (
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// FDFlags are per-descriptor flags.
type FDFlags struct {
	CloseOnExec bool
}

// NrOpen is fs.nr_open: the highest RLIMIT_NOFILE allowed.
const NrOpen = 1 << 20

type fdEntry struct {
	file  *FileDescription
	flags FDFlags
}

// FDTable maps descriptor numbers to file descriptions. It is safe for
// concurrent use; tasks created with CLONE_FILES share one (IncRef).
type FDTable struct {
	refs atomic.Int64

	mu sync.RWMutex
	// files is indexed by descriptor; nil file means free.
	files []fdEntry
	// next is no greater than the lowest free descriptor.
	next int32
	used int
}

// NewFDTable returns an empty table with one reference.
func NewFDTable() *FDTable {
	t := &FDTable{}
	t.refs.Store(1)
	return t
}

// IncRef takes a reference on the table (CLONE_FILES).
func (t *FDTable) IncRef() { t.refs.Add(1) }

// DecRef drops a reference; the last closes every descriptor.
func (t *FDTable) DecRef() {
	if t.refs.Add(-1) == 0 {
		t.RemoveAll()
	}
}

// Get returns the description at fd with a reference the caller drops
// with DecRef, and the descriptor's flags.
func (t *FDTable) Get(fd int32) (*FileDescription, FDFlags, bool) {
	t.mu.RLock()
	if fd < 0 || int(fd) >= len(t.files) || t.files[fd].file == nil {
		t.mu.RUnlock()
		return nil, FDFlags{}, false
	}
	e := t.files[fd]
	e.file.IncRef()
	t.mu.RUnlock()
	return e.file, e.flags, true
}

// GetFile is Get without the flags, for handlers: nil if fd is not open.
func (t *FDTable) GetFile(fd int32) *FileDescription {
	f, _, _ := t.Get(fd)
	return f
}

// Preconditions: t.mu is locked.
func (t *FDTable) set(fd int32, f *FileDescription, flags FDFlags) *FileDescription {
	for int(fd) >= len(t.files) {
		n := len(t.files) * 2
		if n < 16 {
			n = 16
		}
		for n <= int(fd) {
			n *= 2
		}
		grown := make([]fdEntry, n)
		copy(grown, t.files)
		t.files = grown
	}
	old := t.files[fd].file
	t.files[fd] = fdEntry{file: f, flags: flags}
	switch {
	case old == nil && f != nil:
		t.used++
	case old != nil && f == nil:
		t.used--
	}
	if f == nil && fd < t.next {
		t.next = fd
	}
	return old
}

// Preconditions: t.mu is locked.
func (t *FDTable) lowestFree(min int32, limit int32) (int32, error) {
	fd := min
	if fd < t.next {
		fd = t.next
	}
	for ; fd < limit; fd++ {
		if int(fd) >= len(t.files) || t.files[fd].file == nil {
			return fd, nil
		}
	}
	return -1, unix.EMFILE
}

// clampLimit turns an RLIMIT_NOFILE value into a descriptor bound.
func clampLimit(limit uint64) int32 {
	if limit > NrOpen {
		return NrOpen
	}
	return int32(limit)
}

// NewFD installs f at the lowest free descriptor >= min below limit (the
// task's RLIMIT_NOFILE), taking a reference on f. EMFILE if none is free.
func (t *FDTable) NewFD(min int32, f *FileDescription, flags FDFlags, limit uint64) (int32, error) {
	fds, err := t.NewFDs(min, []*FileDescription{f}, flags, limit)
	if err != nil {
		return -1, err
	}
	return fds[0], nil
}

// NewFDs installs several files at once (pipe(2)): all or none.
func (t *FDTable) NewFDs(min int32, files []*FileDescription, flags FDFlags, limit uint64) ([]int32, error) {
	lim := clampLimit(limit)
	if min < 0 {
		return nil, unix.EINVAL
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fds := make([]int32, 0, len(files))
	for _, f := range files {
		fd, err := t.lowestFree(min, lim)
		if err != nil {
			for _, d := range fds {
				t.set(d, nil, FDFlags{})
			}
			return nil, err
		}
		t.set(fd, f, flags)
		fds = append(fds, fd)
		min = fd + 1
	}
	if t.next == fds[0] {
		t.next = fds[len(fds)-1] + 1
	}
	for _, f := range files {
		f.IncRef()
	}
	return fds, nil
}

// NewFDAt installs f at fd (dup2, dup3), closing what was there, taking a
// reference on f. EBADF if fd is not below limit.
func (t *FDTable) NewFDAt(fd int32, f *FileDescription, flags FDFlags, limit uint64) error {
	if fd < 0 || fd >= clampLimit(limit) {
		return unix.EBADF
	}
	f.IncRef()
	t.mu.Lock()
	old := t.set(fd, f, flags)
	t.mu.Unlock()
	if old != nil {
		old.DecRef()
	}
	return nil
}

// SetFlags sets the flags of fd; EBADF if it is not open.
func (t *FDTable) SetFlags(fd int32, flags FDFlags) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || int(fd) >= len(t.files) || t.files[fd].file == nil {
		return unix.EBADF
	}
	t.files[fd].flags = flags
	return nil
}

// Remove closes fd, dropping the table's reference on its description.
// EBADF if fd is not open.
func (t *FDTable) Remove(fd int32) error {
	t.mu.Lock()
	if fd < 0 || int(fd) >= len(t.files) || t.files[fd].file == nil {
		t.mu.Unlock()
		return unix.EBADF
	}
	old := t.set(fd, nil, FDFlags{})
	t.mu.Unlock()
	old.DecRef()
	return nil
}

// RemoveRange closes the descriptors first..last (close_range(2)); with
// cloexecOnly it marks them close-on-exec instead.
func (t *FDTable) RemoveRange(first, last uint32, cloexecOnly bool) {
	var closed []*FileDescription
	t.mu.Lock()
	for fd := uint64(first); fd <= uint64(last) && fd < uint64(len(t.files)); fd++ {
		if t.files[fd].file == nil {
			continue
		}
		if cloexecOnly {
			t.files[fd].flags.CloseOnExec = true
			continue
		}
		closed = append(closed, t.set(int32(fd), nil, FDFlags{}))
	}
	t.mu.Unlock()
	for _, f := range closed {
		f.DecRef()
	}
}

// RemoveAll closes every descriptor.
func (t *FDTable) RemoveAll() { t.RemoveRange(0, ^uint32(0), false) }

// CloseOnExec closes every descriptor marked close-on-exec (execve).
func (t *FDTable) CloseOnExec() {
	var closed []*FileDescription
	t.mu.Lock()
	for fd := range t.files {
		if t.files[fd].file != nil && t.files[fd].flags.CloseOnExec {
			closed = append(closed, t.set(int32(fd), nil, FDFlags{}))
		}
	}
	t.mu.Unlock()
	for _, f := range closed {
		f.DecRef()
	}
}

// Fork returns a copy of the table (fork without CLONE_FILES), sharing the
// descriptions.
func (t *FDTable) Fork() *FDTable {
	n := NewFDTable()
	t.mu.RLock()
	n.files = make([]fdEntry, len(t.files))
	copy(n.files, t.files)
	n.next, n.used = t.next, t.used
	t.mu.RUnlock()
	for _, e := range n.files {
		if e.file != nil {
			e.file.IncRef()
		}
	}
	return n
}

// FDs returns the open descriptors in increasing order.
func (t *FDTable) FDs() []int32 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	fds := make([]int32, 0, t.used)
	for fd, e := range t.files {
		if e.file != nil {
			fds = append(fds, int32(fd))
		}
	}
	sort.Slice(fds, func(i, j int) bool { return fds[i] < fds[j] })
	return fds
}

// Len returns the number of open descriptors.
func (t *FDTable) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.used
}
