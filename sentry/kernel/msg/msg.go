// Package msg implements System V message queues (msgget, msgsnd, msgrcv,
// msgctl) for one IPC namespace.
//
// A task blocked in msgsnd (queue full) or msgrcv (no matching message)
// waits on its queue's change channel, which every send, receive, IPC_SET
// and removal closes and replaces; the woken task retries.
//
// Locks: Registry.mu guards the queues, their messages and attributes. It
// is never held while a task blocks.
package msg

import (
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/ipc"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// Limits, as Linux's defaults (include/uapi/linux/msg.h).
const (
	MSGMNI  = 32000
	MSGMAX  = 8192
	MSGMNB  = 16384
	MSGSSZ  = 16
	MSGPOOL = MSGMNI * MSGMNB / 1024
	MSGMAP  = MSGMNB
	MSGTQL  = MSGMNB
	MSGSEG  = 0xffff
)

// msgrcv flags beyond golang.org/x/sys/unix.
const (
	FlagNoError = 0o10000 // MSG_NOERROR
	FlagExcept  = 0o20000 // MSG_EXCEPT
	FlagCopy    = 0o40000 // MSG_COPY
)

// Message is one queued message.
type Message struct {
	Type int64
	Text []byte
}

// Queue is one message queue.
type Queue struct {
	perm ipc.Perm

	// Guarded by Registry.mu.
	msgs                []Message
	cbytes              uint64
	qbytes              uint64
	stime, rtime, ctime int64
	lspid, lrpid        ipc.PID
	removed             bool
	changed             chan struct{}
}

// IPCPerm implements ipc.Object.
func (q *Queue) IPCPerm() *ipc.Perm { return &q.perm }

// notifyLocked wakes the tasks waiting on q. Preconditions: Registry.mu
// is held.
func (q *Queue) notifyLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Registry holds the message queues of an IPC namespace.
type Registry struct {
	mu    sync.Mutex
	table ipc.Table[*Queue]
	// msgs and bytes count the messages in all queues (MSG_INFO).
	msgs, bytes uint64
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

func now() int64 { return time.Now().Unix() }

// Get implements msgget(2).
func (r *Registry) Get(c *auth.Credentials, key, flags int32) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != unix.IPC_PRIVATE {
		if q, ok := r.table.ByKey(key); ok {
			if flags&unix.IPC_CREAT != 0 && flags&unix.IPC_EXCL != 0 {
				return 0, unix.EEXIST
			}
			if err := q.perm.CheckGet(c, flags); err != nil {
				return 0, err
			}
			return q.perm.ID, nil
		}
		if flags&unix.IPC_CREAT == 0 {
			return 0, unix.ENOENT
		}
	}
	q := &Queue{perm: ipc.NewPerm(c, key, flags), qbytes: MSGMNB, ctime: now(), changed: make(chan struct{})}
	if err := r.table.Add(q, MSGMNI); err != nil {
		return 0, err
	}
	return q.perm.ID, nil
}

// Blocker is the task a call blocks: kernel.Task's BlockOn, which
// returns syserror.ErrInterrupted for a signal.
type Blocker interface {
	BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error
}

// waitErr maps an interrupted wait to ERESTARTNOHAND, as Linux's msgsnd
// and msgrcv: restarted after a stop, EINTR after a handler.
func waitErr(err error) error {
	if err == syserror.ErrInterrupted {
		return syserror.ERESTARTNOHAND
	}
	return err
}

// Send implements msgsnd(2) of m by pid; the caller has checked the size
// (at most MSGMAX) and the type (positive).
func (r *Registry) Send(b Blocker, c *auth.Credentials, pid ipc.PID, id int32, m Message, flags int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, err := r.table.ByID(id)
	if err != nil {
		return err
	}
	if err := q.perm.Check(c, ipc.MayWrite); err != nil {
		return err
	}
	for {
		if q.removed {
			return unix.EIDRM
		}
		n := uint64(len(m.Text))
		if n+q.cbytes <= q.qbytes && 1+uint64(len(q.msgs)) <= q.qbytes {
			q.msgs = append(q.msgs, m)
			q.cbytes += n
			r.msgs++
			r.bytes += n
			q.lspid, q.stime = pid, now()
			q.notifyLocked()
			return nil
		}
		if flags&unix.IPC_NOWAIT != 0 {
			return unix.EAGAIN
		}
		ch := q.changed
		r.mu.Unlock()
		err := b.BlockOn(ch, time.Time{}, false)
		r.mu.Lock()
		if q.removed {
			return unix.EIDRM
		}
		if err != nil {
			return waitErr(err)
		}
	}
}

// find returns the index of the message msgrcv takes, -1 for none.
// Preconditions: Registry.mu is held.
func (q *Queue) find(typ int64, flags int32) int {
	if flags&FlagCopy != 0 {
		if typ < 0 || typ >= int64(len(q.msgs)) {
			return -1
		}
		return int(typ)
	}
	if typ == math.MinInt64 {
		// As Linux: -typ must not overflow.
		typ++
	}
	best := -1
	for i, m := range q.msgs {
		switch {
		case typ == 0:
			return i
		case typ > 0 && flags&FlagExcept != 0:
			if m.Type != typ {
				return i
			}
		case typ > 0:
			if m.Type == typ {
				return i
			}
		default:
			if m.Type <= -typ && (best < 0 || m.Type < q.msgs[best].Type) {
				best = i
			}
		}
	}
	return best
}

// Receive implements msgrcv(2) by pid: a message of at most size bytes
// (truncated with MSG_NOERROR, else E2BIG) selected by typ and flags.
// With MSG_COPY (which the caller allows only with IPC_NOWAIT) typ is an
// index and the message stays queued.
func (r *Registry) Receive(b Blocker, c *auth.Credentials, pid ipc.PID, id int32, size uint64, typ int64, flags int32) (Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, err := r.table.ByID(id)
	if err != nil {
		return Message{}, err
	}
	if err := q.perm.Check(c, ipc.MayRead); err != nil {
		return Message{}, err
	}
	for {
		if q.removed {
			return Message{}, unix.EIDRM
		}
		if i := q.find(typ, flags); i >= 0 {
			m := q.msgs[i]
			if uint64(len(m.Text)) > size {
				if flags&FlagNoError == 0 {
					return Message{}, unix.E2BIG
				}
				m.Text = m.Text[:size]
			}
			if flags&FlagCopy != 0 {
				return m, nil
			}
			n := uint64(len(q.msgs[i].Text))
			q.msgs = append(q.msgs[:i:i], q.msgs[i+1:]...)
			q.cbytes -= n
			r.msgs--
			r.bytes -= n
			q.lrpid, q.rtime = pid, now()
			q.notifyLocked()
			return m, nil
		}
		if flags&unix.IPC_NOWAIT != 0 {
			return Message{}, unix.ENOMSG
		}
		ch := q.changed
		r.mu.Unlock()
		err := b.BlockOn(ch, time.Time{}, false)
		r.mu.Lock()
		if q.removed {
			return Message{}, unix.EIDRM
		}
		if err != nil {
			return Message{}, waitErr(err)
		}
	}
}

// Desc is IPC_STAT's view of a queue, its pids numbered for the reader.
type Desc struct {
	Perm                ipc.Perm
	Stime, Rtime, Ctime int64
	CBytes, QNum        uint64
	QBytes              uint64
	LSPID, LRPID        int32
}

func (q *Queue) desc(reader any) Desc {
	return Desc{
		Perm: q.perm, Stime: q.stime, Rtime: q.rtime, Ctime: q.ctime,
		CBytes: q.cbytes, QNum: uint64(len(q.msgs)), QBytes: q.qbytes,
		LSPID: ipc.PIDFor(q.lspid, reader), LRPID: ipc.PIDFor(q.lrpid, reader),
	}
}

// Stat implements msgctl(IPC_STAT) (byIndex false) and MSG_STAT /
// MSG_STAT_ANY (byIndex true: id is a slot index, EINVAL when empty), for
// reader, whose PID namespace numbers the pids.
func (r *Registry) Stat(c *auth.Credentials, id int32, byIndex, anyPerm bool, reader any) (Desc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, err := r.table.ForStat(id, byIndex)
	if err != nil {
		return Desc{}, err
	}
	if !anyPerm {
		if err := q.perm.Check(c, ipc.MayRead); err != nil {
			return Desc{}, err
		}
	}
	return q.desc(reader), nil
}

// Set implements msgctl(IPC_SET): owner, permission bits and msg_qbytes
// (above MSGMNB only with CAP_SYS_RESOURCE).
func (r *Registry) Set(c *auth.Credentials, id int32, uid, gid, mode uint32, qbytes uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, err := r.table.ForChange(c, id)
	if err != nil {
		return err
	}
	if qbytes > MSGMNB && !c.HasCapability(unix.CAP_SYS_RESOURCE) {
		return unix.EPERM
	}
	q.perm.Set(uid, gid, mode)
	q.qbytes = qbytes
	q.ctime = now()
	q.notifyLocked()
	return nil
}

// Remove implements msgctl(IPC_RMID): waiters fail with EIDRM.
func (r *Registry) Remove(c *auth.Credentials, id int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, err := r.table.ForChange(c, id)
	if err != nil {
		return err
	}
	r.table.Remove(q)
	r.msgs -= uint64(len(q.msgs))
	r.bytes -= q.cbytes
	q.msgs, q.cbytes = nil, 0
	q.removed = true
	q.notifyLocked()
	return nil
}

// Info returns the number of queues, the highest slot in use (-1 when
// none), and the messages and bytes in all queues (MSG_INFO).
func (r *Registry) Info() (queues, highest int, msgs, bytes uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.table.Count(), r.table.Highest(), r.msgs, r.bytes
}

// All returns every queue's description for reader in slot order
// (/proc/sysvipc/msg).
func (r *Registry) All(reader any) []Desc {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Desc
	for _, q := range r.table.All() {
		out = append(out, q.desc(reader))
	}
	return out
}
