// Package mqueue implements POSIX message queues (mq_overview(7)): the
// mqueue file system, whose files are queues, and the queue operations
// mq_timedsend, mq_timedreceive, mq_notify and mq_getsetattr work on.
//
// A Namespace is one IPC namespace's queues: one file system, which every
// mount of type mqueue shows (as Linux's mounts of one IPC namespace share
// their superblock), and an internal mount of it that mq_open and
// mq_unlink resolve names in. Queues are created through the VFS (an
// O_CREAT open, or mq_open with its attributes riding on the context:
// WithCreateAttr), so the VFS's permission checks, umask and ownership
// rules apply as they do on Linux's mqueue file system.
//
// A queue holds messages sorted by priority, highest first and oldest
// first within a priority. Blocked receivers and senders are served
// oldest first, by direct handoff as Linux's pipelined send and receive:
// a message sent while a receiver waits goes to it, and a receive from a
// full queue moves a waiting sender's message in. Reading a queue file
// gives Linux's one status line (QSIZE, NOTIFY, SIGNO, NOTIFY_PID); poll
// reports POLLIN while a message waits and POLLOUT while there is room.
//
// Locks: Namespace.mu (the queue count and per-user byte accounting) and
// Queue.mu (a queue's messages, attributes and notification) are leaves:
// neither is held while the other is taken, nor across a wait or a
// notification's delivery. dir.mu guards the directory's entries.
package mqueue

import (
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Linux's limits: the defaults of /proc/sys/fs/mqueue/* and the hard
// limits that bind even tasks with CAP_SYS_RESOURCE.
const (
	MsgMax         = 10    // fs.mqueue.msg_max
	MsgsizeMax     = 8192  // fs.mqueue.msgsize_max
	MsgDefault     = 10    // fs.mqueue.msg_default
	MsgsizeDefault = 8192  // fs.mqueue.msgsize_default
	QueuesMax      = 256   // fs.mqueue.queues_max
	HardMsgMax     = 65536 // HARD_MSGMAX
	HardMsgsizeMax = 16 << 20
	// PrioMax is MQ_PRIO_MAX: priorities run from 0 to PrioMax-1.
	PrioMax = 32768
	// NameMax is NAME_MAX, the longest queue name.
	NameMax = 255
)

// FSType is the type /proc/mounts shows.
const FSType = "mqueue"

// magic is MQUEUE_MAGIC (statfs's f_type).
const magic = 0x19800202

// filentSize is the size a queue file reports (Linux's FILENT_SIZE).
const filentSize = 80

// Sizes the kernel charges against RLIMIT_MSGQUEUE besides the message
// bytes: a struct msg_msg per message and a tree node per priority in use
// (at most MQ_PRIO_MAX), on x86-64.
const (
	msgMsgSize   = 48
	treeNodeSize = 48
)

// Attr is struct mq_attr.
type Attr struct {
	Flags   int64 // O_NONBLOCK or 0
	MaxMsg  int64
	MsgSize int64
	CurMsgs int64
}

// Namespace is an IPC namespace's message queues.
type Namespace struct {
	fs   *fs.Filesystem
	mns  *fs.MountNamespace
	root *dir

	mu sync.Mutex
	// queues counts the queues that exist (named or still open).
	queues int
	// bytes is what each user's queues are charged against
	// RLIMIT_MSGQUEUE, as Linux's user_struct.mq_bytes.
	bytes map[auth.KUID]uint64
}

// NewNamespace returns a namespace with no queues.
func NewNamespace() *Namespace {
	ns := &Namespace{bytes: make(map[auth.KUID]uint64)}
	now := fs.Now()
	ns.root = &dir{ns: ns, ino: fs.NewIno(), entries: make(map[string]*Queue), mtime: now, ctime: now}
	ns.fs = fs.NewFilesystem(FSType, filesystem{}, ns.root, false)
	ns.mns = fs.NewMountNamespace(ns.fs, fs.MountFlags{NoSUID: true, NoDev: true, NoExec: true})
	return ns
}

// Filesystem returns the file system that mounts of type mqueue show.
func (ns *Namespace) Filesystem() *fs.Filesystem { return ns.fs }

// Root returns the root of the internal mount mq_open resolves names in.
func (ns *Namespace) Root() fs.VirtualDentry { return ns.mns.Root() }

// charge accounts a new queue to uid: ENOSPC past queues_max without
// CAP_SYS_RESOURCE, EMFILE past the RLIMIT_MSGQUEUE limit (when limit is
// not nil), as Linux's mqueue_get_inode.
func (ns *Namespace) charge(creds *auth.Credentials, uid auth.KUID, cost uint64, limit *uint64) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.queues >= QueuesMax && !creds.HasCapability(unix.CAP_SYS_RESOURCE) {
		return unix.ENOSPC
	}
	cur := ns.bytes[uid]
	if limit != nil && (cur+cost < cur || cur+cost > *limit) {
		return unix.EMFILE
	}
	ns.bytes[uid] = cur + cost
	ns.queues++
	return nil
}

// uncharge gives back what charge took.
func (ns *Namespace) uncharge(uid auth.KUID, cost uint64) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.bytes[uid] -= cost
	if ns.bytes[uid] == 0 {
		delete(ns.bytes, uid)
	}
	ns.queues--
}

// Queues returns how many queues exist (for tests).
func (ns *Namespace) Queues() int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.queues
}

type filesystem struct{}

// StatFS implements fs.FilesystemImpl.
func (filesystem) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: magic, Bsize: 4096, Frsize: 4096, NameLen: NameMax}, nil
}

// CheckAttr checks the attributes of a new queue as Linux's mq_attr_ok:
// EINVAL for non-positive values or values past the limits (the sysctl
// ones, or the hard ones with CAP_SYS_RESOURCE), EOVERFLOW when the
// queue's size overflows.
func CheckAttr(creds *auth.Credentials, a *Attr) error {
	if a.MaxMsg <= 0 || a.MsgSize <= 0 {
		return unix.EINVAL
	}
	if creds.HasCapability(unix.CAP_SYS_RESOURCE) {
		if a.MaxMsg > HardMsgMax || a.MsgSize > HardMsgsizeMax {
			return unix.EINVAL
		}
	} else if a.MaxMsg > MsgMax || a.MsgSize > MsgsizeMax {
		return unix.EINVAL
	}
	if uint64(a.MsgSize)+msgMsgSize > (1<<63)/uint64(a.MaxMsg) {
		return unix.EOVERFLOW
	}
	return nil
}

// cost is what a queue of a is charged against RLIMIT_MSGQUEUE.
func cost(a *Attr) uint64 {
	tree := uint64(a.MaxMsg)*msgMsgSize + uint64(min(a.MaxMsg, PrioMax))*treeNodeSize
	return tree + uint64(a.MaxMsg)*uint64(a.MsgSize)
}

// CreateAttr is what mq_open passes on to the queue it creates.
type CreateAttr struct {
	// Attr is the new queue's mq_maxmsg and mq_msgsize; nil for the
	// defaults.
	Attr *Attr
	// Limit is the caller's RLIMIT_MSGQUEUE soft limit.
	Limit uint64
}

// createContext is the context mq_open creates a queue with.
type createContext struct {
	fs.Context
	attr CreateAttr
}

// WithCreateAttr returns ctx carrying a, for the queue an O_CREAT open
// through it creates. Opens of queue files without it (open(2) in a
// mounted mqueue file system) create queues with the default attributes.
func WithCreateAttr(ctx fs.Context, a CreateAttr) fs.Context {
	return &createContext{Context: ctx, attr: a}
}

// dir is the file system's root, the only directory.
type dir struct {
	ns  *Namespace
	ino uint64

	mu           sync.Mutex
	entries      map[string]*Queue
	mtime, ctime unix.Timespec
}

var (
	_ fs.MutableDir = (*dir)(nil)
	_ fs.OpenNode   = (*Queue)(nil)
)

// Stat implements fs.Node: root's sticky, world-writable directory.
func (d *dir) Stat(fs.Context) (fs.Stat, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fs.Stat{
		Mode: unix.S_IFDIR | unix.S_ISVTX | 0o777, Nlink: 2, Ino: d.ino, Blksize: 4096,
		Size: filentSize * int64(len(d.entries)), Atime: d.mtime, Mtime: d.mtime, Ctime: d.ctime,
	}, nil
}

// Lookup implements fs.DirNode.
func (d *dir) Lookup(_ fs.Context, name string) (fs.Node, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if q, ok := d.entries[name]; ok {
		return q, nil
	}
	if len(name) > NameMax {
		return nil, unix.ENAMETOOLONG
	}
	return nil, unix.ENOENT
}

// Readdir implements fs.DirNode.
func (d *dir) Readdir(fs.Context) ([]fs.Dirent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]fs.Dirent, 0, len(d.entries))
	for name, q := range d.entries {
		out = append(out, fs.Dirent{Name: name, Ino: q.ino, Type: unix.DT_REG})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Mknod implements fs.MutableDir: regular files (an O_CREAT open) are new
// queues; nothing else can be made here (EPERM, as Linux's mqueue
// directory has no mknod).
func (d *dir) Mknod(ctx fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	if opts.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, unix.EPERM
	}
	a := Attr{MaxMsg: MsgDefault, MsgSize: MsgsizeDefault}
	var limit *uint64
	if cc, ok := ctx.(*createContext); ok {
		if cc.attr.Attr != nil {
			a = Attr{MaxMsg: cc.attr.Attr.MaxMsg, MsgSize: cc.attr.Attr.MsgSize}
			if err := CheckAttr(ctx.Credentials(), &a); err != nil {
				return nil, err
			}
		}
		limit = &cc.attr.Limit
	}
	if len(name) > NameMax {
		return nil, unix.ENAMETOOLONG
	}
	c := cost(&a)
	if err := d.ns.charge(ctx.Credentials(), opts.UID, c, limit); err != nil {
		return nil, err
	}
	now := fs.Now()
	q := &Queue{ns: d.ns, ino: fs.NewIno(), maxMsg: a.MaxMsg, msgSize: a.MsgSize, cost: c,
		mode: unix.S_IFREG | opts.Mode&0o7777, uid: opts.UID, gid: opts.GID, linked: true,
		atime: now, mtime: now, ctime: now}
	d.mu.Lock()
	d.entries[name] = q
	d.mtime, d.ctime = now, now
	d.mu.Unlock()
	return q, nil
}

// Unlink implements fs.MutableDir. The queue lives on while open.
func (d *dir) Unlink(_ fs.Context, name string, child fs.Node) error {
	d.mu.Lock()
	q, ok := d.entries[name]
	if !ok || q != child {
		d.mu.Unlock()
		return unix.ENOENT
	}
	delete(d.entries, name)
	now := fs.Now()
	d.mtime, d.ctime = now, now
	d.mu.Unlock()
	q.unlinked()
	return nil
}

// Mkdir implements fs.MutableDir: EPERM, as on Linux.
func (d *dir) Mkdir(fs.Context, string, fs.CreateOptions) (fs.Node, error) {
	return nil, unix.EPERM
}

// Symlink implements fs.MutableDir: EPERM, as on Linux.
func (d *dir) Symlink(fs.Context, string, string, fs.CreateOptions) (fs.Node, error) {
	return nil, unix.EPERM
}

// Link implements fs.MutableDir: EPERM, as on Linux.
func (d *dir) Link(fs.Context, string, fs.Node) error { return unix.EPERM }

// Rmdir implements fs.MutableDir: there are no subdirectories.
func (d *dir) Rmdir(fs.Context, string, fs.Node) error { return unix.ENOTDIR }

// Rename implements fs.MutableDir: EPERM, as Linux's mqueue directory has
// no rename.
func (d *dir) Rename(fs.Context, string, fs.Node, fs.MutableDir, string, fs.Node, uint32) error {
	return unix.EPERM
}

// statusLine is what reading a queue file gives, as Linux formats it.
func statusLine(qsize int64, notify, signo int, pid int32) string {
	return fmt.Sprintf("QSIZE:%-10d NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n", qsize, notify, signo, pid)
}
