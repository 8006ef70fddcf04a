package proc

// This file is /proc/[pid]/ns and the nsfs files its links open.

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Namespace inode numbers: the sandbox has one namespace of each kind.
var namespaces = []struct {
	name, kind string
	ino        uint64
	typ        uint32 // CLONE_NEW*
}{
	{"cgroup", "cgroup", 0xeffffffb, unix.CLONE_NEWCGROUP},
	{"ipc", "ipc", 0xefffffff, unix.CLONE_NEWIPC},
	{"mnt", "mnt", 0xeffffff8, unix.CLONE_NEWNS},
	{"net", "net", 0xeffffff9, unix.CLONE_NEWNET},
	{"pid", "pid", 0xeffffffc, unix.CLONE_NEWPID},
	{"pid_for_children", "pid", 0xeffffffc, unix.CLONE_NEWPID},
	{"time", "time", 0xeffffffa, unix.CLONE_NEWTIME},
	{"time_for_children", "time", 0xeffffffa, unix.CLONE_NEWTIME},
	{"user", "user", 0xeffffffd, unix.CLONE_NEWUSER},
	{"uts", "uts", 0xeffffffe, unix.CLONE_NEWUTS},
}

// userNS is the user namespace's node, which owns every other namespace.
var userNS = nsNode{ino: 0xeffffffd, typ: unix.CLONE_NEWUSER, name: "user:[4026531837]"}

// nsNode is a namespace's inode in nsfs, what /proc/[pid]/ns/X opens.
type nsNode struct {
	ino  uint64
	typ  uint32
	name string
	// ns is the kernel's namespace object, nil for the kinds the
	// sandbox has one of (setns(2) finds it through NamespaceOf).
	ns any
}

// NamespaceTask is implemented by tasks whose namespaces of some kinds
// are their own: Namespace returns the inode number and the kernel's
// object of the namespace name ("uts", "pid_for_children", ...), false
// for the sandbox-wide ones; inode 0 for one that cannot be named yet
// (pid_for_children before the namespace's init exists: ENOENT).
type NamespaceTask interface {
	Namespace(name string) (ino uint64, ns any, ok bool)
}

// NamespaceOf returns the CLONE_NEW* type and the kernel's object of the
// namespace a file opened from /proc/[pid]/ns names (ns nil for the
// sandbox-wide kinds); false if f is not such a file.
func NamespaceOf(f *fs.FileDescription) (typ uint32, ns any, ok bool) {
	nf, isNS := f.Impl().(*nsFile)
	if !isNS {
		return 0, nil, false
	}
	return nf.node.typ, nf.node.ns, true
}

// Stat implements fs.Node.
func (n nsNode) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{Mode: unix.S_IFREG | 0o444, Nlink: 1, Ino: n.ino, Blksize: 4096}, nil
}

// heldNamespace is a namespace object that the files naming it hold a
// reference on (a mount namespace lives while one names it).
type heldNamespace interface {
	TryIncRef() bool
	DecRef()
}

// hold takes a reference on n's namespace for a new file; ENOENT if the
// namespace is gone.
func (n nsNode) hold() error {
	if h, ok := n.ns.(heldNamespace); ok && !h.TryIncRef() {
		return unix.ENOENT
	}
	return nil
}

// Open implements fs.OpenNode: the file only names the namespace.
func (n nsNode) Open(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	if err := n.hold(); err != nil {
		return nil, err
	}
	return fs.NewFileDescription(&nsFile{node: n}, vd, flags, fs.FDOptions{}), nil
}

// open returns a new read-only file of the namespace.
//
// Preconditions: a heldNamespace is held for the file (hold).
func (n nsNode) open() *fs.FileDescription {
	d := fs.NewAnonDentry(nsFS, n.name, n)
	return fs.NewFileDescription(&nsFile{node: n}, fs.VirtualDentry{Dentry: d}, unix.O_RDONLY, fs.FDOptions{})
}

type nsFSImpl struct{}

// nsfsMagic is NSFS_MAGIC.
const nsfsMagic = 0x6e736673

func (nsFSImpl) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: nsfsMagic, Bsize: 4096, Frsize: 4096, NameLen: fs.NameMax}, nil
}

var nsFS = fs.NewFilesystem("nsfs", nsFSImpl{}, nsNode{ino: 0xeffffff0}, true)

// FDInstaller is implemented by contexts that can give the calling task a
// new descriptor (for ioctl(NS_GET_USERNS)).
type FDInstaller interface {
	InstallFD(f *fs.FileDescription, closeOnExec bool) (int32, error)
}

// The ioctls of namespace files (ioctl_ns(2)).
const (
	nsGetUserNS   = 0xb701
	nsGetParent   = 0xb702
	nsGetNSType   = 0xb703
	nsGetOwnerUID = 0xb704
)

type nsFile struct {
	fs.FileDefaults
	fs.NotPollable
	node nsNode
}

// Release implements fs.FileImpl: the file's reference on its namespace
// goes.
func (f *nsFile) Release() {
	if h, ok := f.node.ns.(heldNamespace); ok {
		h.DecRef()
	}
}

// userNSNode returns the nsfs node of user namespace u.
func userNSNode(u *auth.UserNamespace) nsNode {
	if u.IsInitial() {
		return userNS
	}
	return nsNode{ino: u.Inode(), typ: unix.CLONE_NEWUSER, name: fmt.Sprintf("user:[%d]", u.Inode()), ns: u}
}

// owner returns the user namespace that owns the namespace of n: a user
// namespace's parent, the creator's for the other kinds that record it,
// the sandbox's otherwise.
func (n nsNode) owner() *auth.UserNamespace {
	switch o := n.ns.(type) {
	case *auth.UserNamespace:
		return o.Parent()
	case interface{ Owner() *auth.UserNamespace }:
		return o.Owner()
	}
	return nil
}

// installNS gives the caller a descriptor of user namespace u.
func installNS(ctx fs.Context, u *auth.UserNamespace) (uintptr, error) {
	inst, ok := ctx.(FDInstaller)
	if !ok {
		return 0, unix.EPERM
	}
	nf := userNSNode(u).open()
	defer nf.DecRef()
	fd, err := inst.InstallFD(nf, true)
	return uintptr(fd), err
}

// Ioctl implements fs.FileImpl: the namespace queries of ioctl_ns(2). The
// sandbox's user namespace is the top of the hierarchy its processes can
// see, so asking for its owner or a parent is EPERM; so is asking for a
// user namespace outside the caller's (above it or beside it), as Linux.
func (f *nsFile) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	mine := readerUserNS(ctx)
	isUser := f.node.typ == unix.CLONE_NEWUSER
	u, _ := f.node.ns.(*auth.UserNamespace)
	switch cmd {
	case nsGetNSType:
		return uintptr(f.node.typ), nil
	case nsGetUserNS:
		if isUser && u.IsInitial() {
			return 0, unix.EPERM
		}
		o := f.node.owner()
		if !mine.Contains(o) {
			return 0, unix.EPERM
		}
		return installNS(ctx, o)
	case nsGetParent:
		if isUser {
			// A user namespace's parent is its owner, and asked for as
			// NS_GET_USERNS is.
			o := u.Parent()
			if u.IsInitial() || !mine.Contains(o) {
				return 0, unix.EPERM
			}
			return installNS(ctx, o)
		}
		if f.node.typ == unix.CLONE_NEWPID {
			return 0, unix.EPERM
		}
		return 0, unix.EINVAL
	case nsGetOwnerUID:
		if !isUser {
			return 0, unix.EINVAL
		}
		k, _ := u.Owner()
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, mine.UIDOf(k))
		if _, err := ctx.CopyOutBytes(arg, b); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil
	}
	return 0, unix.ENOTTY
}

// nsDir is /proc/[pid]/ns: a magic link per namespace, reading
// "kind:[inode]" and opening the namespace's nsfs file.
func nsDir(attr synth.Attr, t Task) fs.Node {
	entries := make(map[string]fs.Node, len(namespaces))
	for _, ns := range namespaces {
		static := nsNode{ino: ns.ino, typ: ns.typ, name: fmt.Sprintf("%s:[%d]", ns.kind, ns.ino)}
		kind, name := ns.kind, ns.name
		// node returns the namespace the task has now.
		node := func() (nsNode, error) {
			if nt, ok := t.(NamespaceTask); ok {
				if ino, obj, ok := nt.Namespace(name); ok {
					if ino == 0 {
						return nsNode{}, unix.ENOENT
					}
					return nsNode{ino: ino, typ: static.typ, name: fmt.Sprintf("%s:[%d]", kind, ino), ns: obj}, nil
				}
			}
			return static, nil
		}
		// Reading or following a link takes the ptrace access check
		// (Linux's proc_ns_get_link, proc_ns_readlink), EACCES otherwise.
		entries[ns.name] = &synth.MagicLink{
			Attr:  synth.Attr{Mode: 0o777, UID: attr.UID, GID: attr.GID},
			Check: ptraceCheck(t),
			Path: func(ctx fs.Context) (string, error) {
				n, err := node()
				return n.name, err
			},
			Resolve: func(ctx fs.Context) (fs.VirtualDentry, *fs.FileDescription, error) {
				n, err := node()
				if err != nil {
					return fs.VirtualDentry{}, nil, err
				}
				if err := n.hold(); err != nil {
					return fs.VirtualDentry{}, nil, err
				}
				return fs.VirtualDentry{}, n.open(), nil
			},
		}
	}
	d := synth.NewDir(0o511, entries)
	d.UID, d.GID = attr.UID, attr.GID
	return d
}
