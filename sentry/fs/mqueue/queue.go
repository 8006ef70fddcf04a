package mqueue

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// sigevent notify kinds (SIGEV_*).
const (
	SigevSignal = 0
	SigevNone   = 1
	SigevThread = 2
)

// Notification is an mq_notify registration.
type Notification struct {
	// Notify is SigevSignal or SigevNone (SIGEV_THREAD is glibc's,
	// over a netlink socket the caller refuses).
	Notify int
	// Signo is the signal of SigevSignal.
	Signo int
	// Owner identifies the registering process (its thread group), and
	// PID is its process ID in the root PID namespace, for the status
	// line (which each reader sees in its own namespace).
	Owner any
	PID   int32
	// Deliver sends the notification, called once with the sender's
	// process ID and user ID, with no lock held.
	Deliver func(senderPID int32, senderUID uint32)
}

// Sender names who sends a message, for the notification it may fire.
type Sender struct {
	PID int32
	UID uint32
}

type message struct {
	prio uint32
	data []byte
}

// Queue is a message queue: the node of a queue file.
type Queue struct {
	ns      *Namespace
	ino     uint64
	maxMsg  int64
	msgSize int64
	cost    uint64

	// queue is notified when messages arrive (EventIn) and leave
	// (EventOut).
	queue waiter.Queue

	mu                  sync.Mutex
	mode                uint32
	uid                 auth.KUID
	gid                 auth.KGID
	atime, mtime, ctime unix.Timespec
	msgs                []message // priority order, highest first
	qsize               int64     // bytes of the messages held
	notify              *Notification
	// recvWaiters and sendWaiters are the blocked receivers (of an
	// empty queue) and senders (to a full one), oldest first. As on
	// Linux, a message sent while a receiver waits goes straight to the
	// oldest one (and fires no notification), and a receive from a full
	// queue moves the oldest waiting sender's message in, so nobody
	// arriving later overtakes a waiter.
	recvWaiters, sendWaiters []*handoff
	linked                   bool
	opens                    int
	released                 bool
}

// Stat implements fs.Node.
func (q *Queue) Stat(fs.Context) (fs.Stat, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	nlink := uint32(0)
	if q.linked {
		nlink = 1
	}
	return fs.Stat{
		Mode: q.mode, Nlink: nlink, UID: q.uid, GID: q.gid, Ino: q.ino, Size: filentSize, Blksize: 4096,
		Atime: q.atime, Mtime: q.mtime, Ctime: q.ctime,
	}, nil
}

// SetAttr implements fs.SetAttrNode (chmod, chown, utimes).
func (q *Queue) SetAttr(_ fs.Context, opts *fs.SetAttrOptions) error {
	if opts.Mask&fs.SetAttrSize != 0 {
		return unix.EINVAL
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if opts.Mask&fs.SetAttrMode != 0 {
		q.mode = unix.S_IFREG | opts.Mode&0o7777
	}
	if opts.Mask&fs.SetAttrUID != 0 {
		q.uid = opts.UID
	}
	if opts.Mask&fs.SetAttrGID != 0 {
		q.gid = opts.GID
	}
	if opts.Mask&fs.SetAttrAtime != 0 {
		q.atime = opts.Atime
	}
	if opts.Mask&fs.SetAttrMtime != 0 {
		q.mtime = opts.Mtime
	}
	if opts.Mask&fs.SetAttrCtime != 0 {
		q.ctime = opts.Ctime
	}
	return nil
}

// Attr returns the queue's attributes (Flags is left 0: it belongs to
// the open file).
func (q *Queue) Attr() Attr {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Attr{MaxMsg: q.maxMsg, MsgSize: q.msgSize, CurMsgs: int64(len(q.msgs))}
}

// unlinked drops the queue's name; it goes once no file has it open.
func (q *Queue) unlinked() {
	q.mu.Lock()
	q.linked = false
	q.ctime = fs.Now()
	gone := q.opens == 0 && !q.released
	if gone {
		q.released = true
	}
	q.mu.Unlock()
	if gone {
		q.ns.uncharge(q.uid, q.cost)
	}
}

// Open implements fs.OpenNode.
func (q *Queue) Open(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	q.mu.Lock()
	q.opens++
	q.mu.Unlock()
	return fs.NewFileDescription(&File{q: q}, vd, flags, fs.FDOptions{}), nil
}

// File is an open queue.
type File struct {
	fs.FileDefaults
	q *Queue
}

// Queue returns the file's queue.
func (f *File) Queue() *Queue { return f.q }

// Read implements fs.FileImpl: the status line, from offset off, with
// the notified process's id as the reader's PID namespace numbers it.
func (f *File) Read(ctx fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	s := f.q.status(ctx)
	if off >= int64(len(s)) {
		return 0, nil
	}
	n := copy(dst, s[off:])
	f.q.mu.Lock()
	f.q.atime = fs.Now()
	f.q.mu.Unlock()
	return n, nil
}

// Write implements fs.FileImpl: queue files have no write (EINVAL).
func (f *File) Write(fs.Context, *fs.FileDescription, []byte, int64) (int, error) {
	return 0, unix.EINVAL
}

// Seek implements fs.FileImpl as Linux's default_llseek over a file of
// filentSize bytes.
func (f *File) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	return fs.SeekWithSize(cur, offset, whence, filentSize)
}

// Release implements fs.FileImpl.
func (f *File) Release() {
	q := f.q
	q.mu.Lock()
	q.opens--
	gone := q.opens == 0 && !q.linked && !q.released
	if gone {
		q.released = true
	}
	q.mu.Unlock()
	if gone {
		q.ns.uncharge(q.uid, q.cost)
	}
}

// Readiness implements waiter.Waitable.
func (f *File) Readiness(mask waiter.EventMask) waiter.EventMask {
	q := f.q
	q.mu.Lock()
	defer q.mu.Unlock()
	var r waiter.EventMask
	if len(q.msgs) > 0 {
		r |= waiter.EventIn | waiter.EventRdNorm
	}
	if int64(len(q.msgs)) < q.maxMsg {
		r |= waiter.EventOut | waiter.EventWrNorm
	}
	return r & mask
}

// EventRegister implements waiter.Waitable.
func (f *File) EventRegister(e *waiter.Entry) { f.q.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (f *File) EventUnregister(e *waiter.Entry) { f.q.queue.EventUnregister(e) }

// Status returns the line reading the queue's file gives, with the
// notified process's id as Notification.PID has it.
func (q *Queue) Status() string { return q.status(nil) }

// status is Status for the task of ctx: a ctx that translates ids
// (PIDFromRoot, the kernel's Task) gets the notified process's id in its
// PID namespace, 0 when it is not visible there (Linux's pid_vnr).
func (q *Queue) status(ctx any) string {
	q.mu.Lock()
	notify, signo, pid := 0, 0, int32(0)
	if n := q.notify; n != nil {
		notify, pid = n.Notify, n.PID
		if n.Notify == SigevSignal {
			signo = n.Signo
		}
	}
	qsize := q.qsize
	q.mu.Unlock()
	if p, ok := ctx.(interface{ PIDFromRoot(int32) int32 }); ok && pid != 0 {
		pid = p.PIDFromRoot(pid)
	}
	return statusLine(qsize, notify, signo, pid)
}

// Deadline is an mq_timed* timeout: an absolute CLOCK_REALTIME time, or
// none (wait for ever).
type Deadline struct {
	At  time.Time
	Set bool
}

// handoff is a blocked sender or receiver: done is set, under Queue.mu,
// once its message has been taken from it (a sender) or given to it (a
// receiver), and ch is then signalled.
type handoff struct {
	msg  message
	done bool
	ch   chan struct{}
}

func newHandoff(m message) *handoff { return &handoff{msg: m, ch: make(chan struct{}, 1)} }

// complete marks h done and wakes it.
//
// Preconditions: q.mu is held.
func (h *handoff) complete() {
	h.done = true
	h.ch <- struct{}{}
}

// await blocks until h is done, the deadline passes or the task is
// interrupted; a wait cut short takes h off list, unless it was done
// meanwhile (then the wait succeeded).
func (q *Queue) await(ctx fs.Context, h *handoff, list *[]*handoff, d Deadline) error {
	for {
		err := ctx.BlockOn(h.ch, d.At, d.Set)
		q.mu.Lock()
		if h.done {
			q.mu.Unlock()
			return nil
		}
		if err != nil {
			for i, o := range *list {
				if o == h {
					*list = append((*list)[:i], (*list)[i+1:]...)
					break
				}
			}
			q.mu.Unlock()
			return err
		}
		q.mu.Unlock()
	}
}

// insertLocked adds m in priority order.
//
// Preconditions: q.mu is held; the queue has room.
func (q *Queue) insertLocked(m message) {
	i := len(q.msgs)
	for i > 0 && q.msgs[i-1].prio < m.prio {
		i--
	}
	q.msgs = append(q.msgs, message{})
	copy(q.msgs[i+1:], q.msgs[i:])
	q.msgs[i] = m
	q.qsize += int64(len(m.data))
}

// Send implements mq_timedsend on file fd: data at priority prio (the
// caller has checked prio < PrioMax), waiting for room unless fd is
// non-blocking (EAGAIN). EBADF if fd is not open for writing, EMSGSIZE
// for data longer than the queue's message size, ETIMEDOUT at the
// deadline, syserror.ErrInterrupted for a signal.
func Send(ctx fs.Context, fd *fs.FileDescription, data []byte, prio uint32, d Deadline, from Sender) error {
	f, ok := fd.Impl().(*File)
	if !ok || !fd.Writable() {
		return unix.EBADF
	}
	q := f.q
	if int64(len(data)) > q.msgSize {
		return unix.EMSGSIZE
	}
	msg := message{prio: prio, data: append([]byte(nil), data...)}
	var fire *Notification
	q.mu.Lock()
	now := fs.Now()
	switch {
	case int64(len(q.msgs)) < q.maxMsg && len(q.recvWaiters) > 0:
		// Straight to the oldest waiting receiver.
		r := q.recvWaiters[0]
		q.recvWaiters = q.recvWaiters[1:]
		r.msg = msg
		r.complete()
		q.mtime, q.ctime = now, now
		q.mu.Unlock()
		return nil
	case int64(len(q.msgs)) < q.maxMsg:
		q.insertLocked(msg)
		q.mtime, q.ctime = now, now
		// Linux notifies when a message lands in an empty queue, and
		// then forgets the registration.
		if len(q.msgs) == 1 && q.notify != nil {
			fire, q.notify = q.notify, nil
		}
		q.mu.Unlock()
	default:
		if fd.NonBlocking() {
			q.mu.Unlock()
			return syserror.ErrWouldBlock
		}
		h := newHandoff(msg)
		q.sendWaiters = append(q.sendWaiters, h)
		q.mu.Unlock()
		// A receiver moves the message in (pipelined_receive).
		return q.await(ctx, h, &q.sendWaiters, d)
	}
	q.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
	if fire != nil && fire.Deliver != nil {
		fire.Deliver(from.PID, from.UID)
	}
	return nil
}

// Receive implements mq_timedreceive on file fd: the oldest message of
// the highest priority, copied to dst, with its length and priority.
// EBADF if fd is not open for reading, EMSGSIZE if dst is shorter than
// the queue's message size, EAGAIN for an empty non-blocking queue,
// ETIMEDOUT at the deadline, syserror.ErrInterrupted for a signal.
func Receive(ctx fs.Context, fd *fs.FileDescription, dst []byte, d Deadline) (int, uint32, error) {
	f, ok := fd.Impl().(*File)
	if !ok || !fd.Readable() {
		return 0, 0, unix.EBADF
	}
	q := f.q
	if int64(len(dst)) < q.msgSize {
		return 0, 0, unix.EMSGSIZE
	}
	q.mu.Lock()
	if len(q.msgs) == 0 {
		if fd.NonBlocking() {
			q.mu.Unlock()
			return 0, 0, syserror.ErrWouldBlock
		}
		h := newHandoff(message{})
		q.recvWaiters = append(q.recvWaiters, h)
		q.mu.Unlock()
		if err := q.await(ctx, h, &q.recvWaiters, d); err != nil {
			return 0, 0, err
		}
		q.mu.Lock()
		now := fs.Now()
		q.atime, q.ctime = now, now
		q.mu.Unlock()
		return copy(dst, h.msg.data), h.msg.prio, nil
	}
	got := q.msgs[0]
	q.msgs[0] = message{}
	q.msgs = q.msgs[1:]
	q.qsize -= int64(len(got.data))
	now := fs.Now()
	q.atime, q.ctime = now, now
	room := true
	if len(q.sendWaiters) > 0 {
		// The oldest waiting sender's message takes the place.
		s := q.sendWaiters[0]
		q.sendWaiters = q.sendWaiters[1:]
		q.insertLocked(s.msg)
		s.complete()
		room = false
	}
	q.mu.Unlock()
	if room {
		q.queue.Notify(waiter.EventOut | waiter.EventWrNorm)
	}
	return copy(dst, got.data), got.prio, nil
}

// SetNotify implements mq_notify on file fd: n registers (EBUSY if a
// registration exists), nil removes the registration of owner, if it is
// owner's.
func SetNotify(fd *fs.FileDescription, n *Notification, owner any) error {
	f, ok := fd.Impl().(*File)
	if !ok {
		return unix.EBADF
	}
	q := f.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if n == nil {
		if q.notify != nil && q.notify.Owner == owner {
			q.notify = nil
			now := fs.Now()
			q.atime, q.ctime = now, now
		}
		return nil
	}
	if q.notify != nil {
		return unix.EBUSY
	}
	q.notify = n
	now := fs.Now()
	q.atime, q.ctime = now, now
	return nil
}

// Flush is what close(2) of a descriptor of fd by process owner does to
// the queue, as Linux's mqueue_flush_file: owner's notification
// registration goes.
func Flush(fd *fs.FileDescription, owner any) {
	f, ok := fd.Impl().(*File)
	if !ok {
		return
	}
	q := f.q
	q.mu.Lock()
	if q.notify != nil && q.notify.Owner == owner {
		q.notify = nil
	}
	q.mu.Unlock()
}

// GetSetAttr implements mq_getsetattr on file fd: it returns the queue's
// attributes with fd's O_NONBLOCK as Flags and, if set is not nil,
// changes fd's O_NONBLOCK to set.Flags' (EINVAL for any other flag).
func GetSetAttr(fd *fs.FileDescription, set *Attr) (Attr, error) {
	if set != nil && set.Flags&^unix.O_NONBLOCK != 0 {
		return Attr{}, unix.EINVAL
	}
	f, ok := fd.Impl().(*File)
	if !ok {
		return Attr{}, unix.EBADF
	}
	old := f.q.Attr()
	old.Flags = int64(fd.Flags() & unix.O_NONBLOCK)
	if set != nil {
		fl := fd.Flags() &^ unix.O_NONBLOCK
		if set.Flags&unix.O_NONBLOCK != 0 {
			fl |= unix.O_NONBLOCK
		}
		fd.SetStatusFlags(fl)
	}
	return old, nil
}
