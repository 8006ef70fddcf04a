// Package inotify implements inotify(7) instances: the file
// inotify_init1(2) returns, its watches (inotify_add_watch(2),
// inotify_rm_watch(2)) and its event queue, read as struct inotify_event
// records.
//
// The VFS reports events to watches (fs.Watch, see sentry/fs/notify.go);
// a watch filters them by its mask and queues them on its instance,
// merging an event identical to the last one queued and ending a full
// queue with one IN_Q_OVERFLOW, as Linux does. A watch goes with
// inotify_rm_watch, with IN_ONESHOT after its first event, when its node
// is deleted (IN_DELETE_SELF) and when the instance is closed; each but
// the last queues IN_IGNORED.
//
// Locks: Instance.mu guards the queue and the watch tables; it is taken
// inside the VFS's watch delivery (after the file system's watch table
// lock is released) and never held while calling into the VFS. Waiters
// are notified after it is released.
package inotify

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Limits, as /proc/sys/fs/inotify shows them.
const (
	MaxQueuedEvents  = 16384
	MaxUserWatches   = 8192
	MaxUserInstances = 128
)

// eventSize is sizeof(struct inotify_event) without the name.
const eventSize = 16

// flagBits are the bits of an add_watch mask that are not events.
const flagBits = unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK | unix.IN_MASK_ADD |
	unix.IN_MASK_CREATE | unix.IN_ONESHOT

// AllBits are the bits inotify_add_watch accepts (Linux's
// ALL_INOTIFY_BITS).
const AllBits = unix.IN_ALL_EVENTS | unix.IN_UNMOUNT | unix.IN_Q_OVERFLOW | unix.IN_IGNORED |
	unix.IN_ISDIR | flagBits

// userBits are the bits a read reports.
const userBits = unix.IN_ALL_EVENTS | unix.IN_ISDIR | unix.IN_UNMOUNT | unix.IN_IGNORED | unix.IN_Q_OVERFLOW

type event struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// size is the event's record size: the name padded with NULs to a
// multiple of the header size.
func (e *event) size() int {
	if e.name == "" {
		return eventSize
	}
	return eventSize + (len(e.name)+1+eventSize-1)/eventSize*eventSize
}

// per-user counts of instances and watches.
var (
	usersMu   sync.Mutex
	instances = map[auth.KUID]int{}
	watches   = map[auth.KUID]int{}
)

// Instance is an inotify file.
type Instance struct {
	fs.FileDefaults
	uid   auth.KUID
	queue waiter.Queue

	mu       sync.Mutex
	events   []event
	bytes    int
	overflow bool // the last queued event is IN_Q_OVERFLOW
	nextWD   int32
	byWD     map[int32]*watch
	released bool
}

// watch is one watch of an instance on a node.
type watch struct {
	in   *Instance
	wd   int32
	fsys *fs.Filesystem
	node fs.Node
	mask atomic.Uint32
	// gone is set once the watch is removed.
	gone atomic.Bool
}

// New returns a new inotify file; flags may hold IN_NONBLOCK and
// IN_CLOEXEC (the caller applies the latter). EMFILE past the user's
// instance limit.
func New(ctx fs.Context, flags uint32) (*fs.FileDescription, error) {
	if flags&^uint32(unix.IN_NONBLOCK|unix.IN_CLOEXEC) != 0 {
		return nil, unix.EINVAL
	}
	uid := ctx.Credentials().EffectiveUID
	usersMu.Lock()
	if instances[uid] >= MaxUserInstances {
		usersMu.Unlock()
		return nil, unix.EMFILE
	}
	instances[uid]++
	usersMu.Unlock()
	in := &Instance{uid: uid, nextWD: 1, byWD: make(map[int32]*watch)}
	return fs.NewAnonFileNamed("inotify", in, unix.O_RDONLY|flags&unix.O_NONBLOCK, fs.FDOptions{Stream: true}), nil
}

// FromFile returns the instance of an inotify file, or nil.
func FromFile(fd *fs.FileDescription) *Instance {
	in, _ := fd.Impl().(*Instance)
	return in
}

// Watch watches the node at vd with mask (inotify_add_watch after the
// path is resolved and checked) and returns the watch descriptor: the
// existing watch's if the instance already watches the node, its mask
// replaced, or extended with IN_MASK_ADD (EEXIST with IN_MASK_CREATE).
// ENOSPC past the user's watch limit.
func (in *Instance) Watch(vd fs.VirtualDentry, mask uint32) (int32, error) {
	f, n := vd.Dentry.Filesystem(), vd.Dentry.Node()
	create := mask&unix.IN_MASK_CREATE != 0
	add := mask&unix.IN_MASK_ADD != 0
	mask &= unix.IN_ALL_EVENTS | unix.IN_EXCL_UNLINK | unix.IN_ONESHOT
	in.mu.Lock()
	for _, w := range in.byWD {
		if w.fsys == f && w.node == n {
			defer in.mu.Unlock()
			if create {
				return 0, unix.EEXIST
			}
			if add {
				mask |= w.mask.Load()
			}
			w.mask.Store(mask)
			return w.wd, nil
		}
	}
	if in.released {
		in.mu.Unlock()
		return 0, unix.EBADF
	}
	usersMu.Lock()
	if watches[in.uid] >= MaxUserWatches {
		usersMu.Unlock()
		in.mu.Unlock()
		return 0, unix.ENOSPC
	}
	watches[in.uid]++
	usersMu.Unlock()
	w := &watch{in: in, wd: in.nextWD, fsys: f, node: n}
	w.mask.Store(mask)
	in.nextWD++
	if in.nextWD <= 0 {
		in.nextWD = 1
	}
	in.byWD[w.wd] = w
	in.mu.Unlock()
	if err := f.AddWatch(n, w); err != nil {
		in.mu.Lock()
		delete(in.byWD, w.wd)
		in.mu.Unlock()
		in.uncount()
		return 0, err
	}
	return w.wd, nil
}

// RemoveWatch removes the watch wd (inotify_rm_watch), queueing
// IN_IGNORED; EINVAL if there is none.
func (in *Instance) RemoveWatch(wd int32) error {
	in.mu.Lock()
	w, ok := in.byWD[wd]
	in.mu.Unlock()
	if !ok {
		return unix.EINVAL
	}
	if !w.remove() {
		return unix.EINVAL
	}
	return nil
}

// remove drops the watch from its node and instance and queues
// IN_IGNORED; false if it was already gone.
func (w *watch) remove() bool {
	if w.gone.Swap(true) {
		return false
	}
	w.fsys.RemoveWatch(w.node, w)
	in := w.in
	in.mu.Lock()
	delete(in.byWD, w.wd)
	notify := in.queueLocked(event{wd: w.wd, mask: unix.IN_IGNORED})
	in.mu.Unlock()
	in.uncount()
	if notify {
		in.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
	}
	return true
}

func (in *Instance) uncount() {
	usersMu.Lock()
	watches[in.uid]--
	usersMu.Unlock()
}

// Notify implements fs.Watch.
func (w *watch) Notify(mask uint32, name string, cookie uint32, unlinked bool) {
	if w.gone.Load() {
		return
	}
	m := w.mask.Load()
	hit := mask&m&unix.IN_ALL_EVENTS != 0
	if hit && !(unlinked && name != "" && m&unix.IN_EXCL_UNLINK != 0) {
		if mask&(unix.IN_MOVE_SELF|unix.IN_DELETE_SELF) != 0 {
			mask &^= unix.IN_ISDIR
		}
		in := w.in
		in.mu.Lock()
		notify := false
		if !w.gone.Load() {
			notify = in.queueLocked(event{wd: w.wd, mask: mask, cookie: cookie, name: name})
		}
		in.mu.Unlock()
		if notify {
			in.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
		}
		if m&unix.IN_ONESHOT != 0 {
			w.remove()
			return
		}
	}
	if mask&unix.IN_UNMOUNT != 0 {
		// Every watch hears of the unmount, whatever its mask.
		in := w.in
		in.mu.Lock()
		notify := in.queueLocked(event{wd: w.wd, mask: unix.IN_UNMOUNT})
		in.mu.Unlock()
		if notify {
			in.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
		}
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_UNMOUNT) != 0 {
		w.remove()
	}
}

// queueLocked appends e unless it repeats the last event or the queue
// is full (then one IN_Q_OVERFLOW ends it). It reports whether the
// queue grew.
//
// Preconditions: in.mu is held.
func (in *Instance) queueLocked(e event) bool {
	if in.released {
		return false
	}
	if n := len(in.events); n > 0 {
		last := &in.events[n-1]
		if last.wd == e.wd && last.mask == e.mask && last.cookie == e.cookie && last.name == e.name &&
			!in.overflow {
			return false
		}
	}
	if len(in.events) >= MaxQueuedEvents {
		if in.overflow {
			return false
		}
		in.overflow = true
		e = event{wd: -1, mask: unix.IN_Q_OVERFLOW}
	}
	in.events = append(in.events, e)
	in.bytes += e.size()
	return true
}

// Read implements fs.FileImpl: whole events, as many as fit; EINVAL if
// the first does not.
func (in *Instance) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.events) == 0 {
		return 0, syserror.ErrWouldBlock
	}
	n, i := 0, 0
	le := binary.LittleEndian
	for ; i < len(in.events); i++ {
		e := &in.events[i]
		sz := e.size()
		if n+sz > len(dst) {
			break
		}
		b := dst[n : n+sz]
		le.PutUint32(b[0:], uint32(e.wd))
		le.PutUint32(b[4:], e.mask&userBits)
		le.PutUint32(b[8:], e.cookie)
		le.PutUint32(b[12:], uint32(sz-eventSize))
		k := copy(b[eventSize:], e.name)
		clear(b[eventSize+k:])
		n += sz
		in.bytes -= sz
	}
	if i == 0 {
		return 0, unix.EINVAL
	}
	if i == len(in.events) {
		in.events = in.events[:0]
		in.overflow = false
	} else {
		in.events = append(in.events[:0], in.events[i:]...)
		in.overflow = in.overflow && len(in.events) > 0
	}
	return n, nil
}

// Pending returns the bytes a read could return now (FIONREAD).
func (in *Instance) Pending() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.bytes
}

// Ioctl implements fs.FileImpl: FIONREAD.
func (in *Instance) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if cmd != unix.TIOCINQ {
		return 0, unix.ENOTTY
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(in.Pending()))
	if _, err := ctx.CopyOutBytes(arg, b[:]); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}

// Readiness implements waiter.Waitable.
func (in *Instance) Readiness(mask waiter.EventMask) waiter.EventMask {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.events) > 0 {
		return mask & (waiter.EventIn | waiter.EventRdNorm)
	}
	return 0
}

// EventRegister implements waiter.Waitable.
func (in *Instance) EventRegister(e *waiter.Entry) { in.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (in *Instance) EventUnregister(e *waiter.Entry) { in.queue.EventUnregister(e) }

// Release implements fs.FileImpl: the watches go without IN_IGNORED.
func (in *Instance) Release() {
	in.mu.Lock()
	in.released = true
	ws := make([]*watch, 0, len(in.byWD))
	for _, w := range in.byWD {
		ws = append(ws, w)
	}
	in.events = nil
	in.mu.Unlock()
	for _, w := range ws {
		w.remove()
	}
	usersMu.Lock()
	instances[in.uid]--
	usersMu.Unlock()
}

// AsyncEvents implements fs.AsyncFile: signal-driven I/O signals when an
// event is queued.
func (in *Instance) AsyncEvents(*fs.FileDescription) waiter.EventMask { return waiter.EventIn }
