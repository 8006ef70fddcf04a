package gofer

import (
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/mm"
)

// MAP_SHARED mappings of a gofer file map a cached object (mm's
// NewCachedObject) that the node keeps while anything maps it: its pages
// are the file's as the sandbox sees them, like Linux's page cache. While
// it exists the node's reads come from it (pages it lacks from the host
// file), writes go to the host file and to it (WriteThrough), and size
// changes to both. Dirty pages go back to the host file at msync, fsync,
// the close of the file's last open, the munmap (or exit) that removes
// the last mapping, and every writebackInterval. The cache is dropped once
// nothing maps it.
//
// Host processes writing a bind-mounted file while the sandbox maps it
// shared are not seen by the mapping (the sandbox has no view of the
// host's page cache), and a writeback may put back bytes of a dirty page
// that a host process changed meanwhile.
//
// Locks: nodeCache.mu is taken before the object's locks; reads take it
// shared, and may do so holding an address space's mu (a private
// mapping's fault reads the file), so nothing holding it may take an
// address space's mu: writebacks and truncations run on a reference to
// the object, outside it. (dropCache writes back under it, but only an
// object nothing maps, which touches no address space.)

// writebackInterval is how often a cache's dirty pages go back to the
// host file (a variable for tests).
var writebackInterval = 5 * time.Second

type nodeCache struct {
	mu  sync.RWMutex
	obj *mm.Object
	// file is what the object reads and writes: its own duplicates of
	// the node's host fds, so that none is closed under it.
	file  *cacheFile
	timer *time.Timer
}

// cacheFile is the host file behind a cache: reads and writes go to fd
// (read-write once a writable file has mapped the node); earlier fds are
// kept until the cache goes, as a read may be using one.
type cacheFile struct {
	mu  sync.Mutex
	fd  int
	rw  bool
	old []int
}

func (c *cacheFile) cur() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fd
}

// ReadAt implements mm.Backing.
func (c *cacheFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := preadFull(c.cur(), p, off)
	if err == nil && n < len(p) {
		return n, io.EOF
	}
	return n, err
}

// WriteAt implements mm.Backing.
func (c *cacheFile) WriteAt(p []byte, off int64) (int, error) {
	return pwriteFull(c.cur(), p, off)
}

func (c *cacheFile) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	unix.Close(c.fd)
	for _, fd := range c.old {
		unix.Close(fd)
	}
	c.fd, c.old = -1, nil
}

// SharedObject implements mm.SharedMappable.
func (f *regularFile) SharedObject(mf *mm.MemoryFile) (*mm.Object, error) {
	n := f.node
	c := &n.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.obj == nil {
		fd, err := unix.FcntlInt(uintptr(f.hostFD), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, err
		}
		c.file = &cacheFile{fd: fd, rw: f.hostRW}
		o := mm.NewCachedObject(mf, st.Size, c.file)
		o.SetDetachHook(func(vmas int) {
			if vmas == 0 {
				// The last mapping went (munmap, exit): its writes
				// reach the file now, as they would be in the page
				// cache on Linux; the cache itself goes later.
				o.Writeback(0, -1)
				go n.dropCache(o)
			}
		})
		c.obj = o
		c.timer = time.AfterFunc(writebackInterval, func() { n.periodicWriteback(o) })
	} else if f.hostRW && !c.file.rw {
		fd, err := unix.FcntlInt(uintptr(f.hostFD), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		c.file.mu.Lock()
		c.file.old = append(c.file.old, c.file.fd)
		c.file.fd, c.file.rw = fd, true
		c.file.mu.Unlock()
	}
	c.obj.IncRef()
	return c.obj, nil
}

// periodicWriteback writes o back and arms the next one, while o is the
// node's cache. The writeback itself runs without the cache's lock: it
// takes address spaces' locks (to map cleaned pages read-only), and a
// fault holding one may be reading the file.
func (n *node) periodicWriteback(o *mm.Object) {
	c := &n.cache
	c.mu.RLock()
	if c.obj != o {
		c.mu.RUnlock()
		return
	}
	o.IncRef()
	c.mu.RUnlock()
	o.Writeback(0, -1)
	o.DecRef()
	if o.Unused() {
		// Nothing maps it (an mmap that failed after getting it leaves
		// no munmap to drop it).
		n.dropCache(o)
		return
	}
	c.mu.RLock()
	if c.obj == o {
		c.timer.Reset(writebackInterval)
	}
	c.mu.RUnlock()
}

// dropCache drops o, the node's cache, if nothing maps it any more.
func (n *node) dropCache(o *mm.Object) {
	c := &n.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.obj != o || !o.Unused() {
		return
	}
	o.Writeback(0, -1)
	c.timer.Stop()
	c.obj, c.timer = nil, nil
	o.DecRef()
	c.file.close()
	c.file = nil
}

// writeback writes the node's cache back, if it has one (not under the
// cache's lock: see periodicWriteback).
func (n *node) writeback() error {
	o := n.cached()
	if o == nil {
		return nil
	}
	defer o.DecRef()
	return o.Writeback(0, -1)
}

// cached returns the node's cache with a reference, or nil.
func (n *node) cached() *mm.Object {
	c := &n.cache
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.obj != nil {
		c.obj.IncRef()
	}
	return c.obj
}

// preadFull reads p at off from fd until p is full or the file ends.
func preadFull(fd int, p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		n, err := unix.Pread(fd, p[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if n == 0 {
			break
		}
		total += n
	}
	return total, nil
}

// pwriteFull writes all of p at off to fd, or as much as the host took
// before an error.
func pwriteFull(fd int, p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		n, err := unix.Pwrite(fd, p[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if total > 0 {
				break
			}
			return 0, err
		}
		total += n
	}
	return total, nil
}

// fallocateCached is Fallocate for a node with a cache: the dirty pages
// go to the file first, and the cache then forgets what the change made
// stale (a punched hole's pages; a new size).
func (f *regularFile) fallocateCached(o *mm.Object, mode uint32, off, length int64) error {
	if err := o.Writeback(0, -1); err != nil {
		return unix.EIO
	}
	if err := unix.Fallocate(f.hostFD, mode, off, length); err != nil {
		return err
	}
	f.node.attrStale.Store(true)
	if mode&unix.FALLOC_FL_PUNCH_HOLE != 0 || mode&unix.FALLOC_FL_ZERO_RANGE != 0 {
		// The cache's pages there read as the file's zeros now.
		if err := o.PunchHole(off, length); err != nil {
			return err
		}
	}
	var st unix.Stat_t
	if err := unix.Fstat(f.hostFD, &st); err != nil {
		return err
	}
	if st.Size != o.Size() {
		return o.TruncateThrough(st.Size, func(int64) error { return nil })
	}
	return nil
}

// truncateCached sets the size of a node with a cache, through its host
// fd (done false when it has no read-write one).
func (n *node) truncateCached(o *mm.Object, size int64) (done bool, err error) {
	n.mu.Lock()
	if n.hostFD < 0 || !n.hostRW {
		n.mu.Unlock()
		return false, nil
	}
	// A duplicate: the node's fd may be retired meanwhile, and n.mu
	// cannot be held across the truncation (it reaches address spaces).
	fd, err := unix.FcntlInt(uintptr(n.hostFD), unix.F_DUPFD_CLOEXEC, 0)
	n.mu.Unlock()
	if err != nil {
		return true, err
	}
	defer unix.Close(fd)
	return true, o.TruncateThrough(size, func(size int64) error { return unix.Ftruncate(fd, size) })
}

// DirectIO marks the file's reads and writes as splittable at any byte:
// read(2) and write(2) hand it the application's pages directly
// (sentry/syscalls/linux/sys_read_write_direct.go).
func (*regularFile) DirectIO() {}
