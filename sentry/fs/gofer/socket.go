package gofer

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// Unix sockets on host paths (issue #3): a gofer file system can be
// allowed to connect sandbox sockets to host sockets in its tree
// (HostUDS.Connect, --host-uds=open) and to bind sandbox sockets there as
// host sockets host processes connect to (HostUDS.Bind,
// --host-uds=create). Both go through the gofer (Tconnect, Tbind), which
// must allow them too (gofer.Config). The AF_UNIX side is
// sentry/socket/unix/host.go: socket nodes implement its
// HostSocketNode and HostBoundNode.

// HostUDS says which host unix socket operations a file system allows.
type HostUDS struct {
	// Connect lets sandbox sockets connect to host sockets.
	Connect bool
	// Bind makes bind(2) of a stream or seqpacket socket create a host
	// socket that host processes can connect to.
	Bind bool
}

// hostUDS holds the settings of the file systems given one (SetHostUDS);
// the rest follow defaultHostUDS.
var hostUDS sync.Map // *filesystem -> HostUDS

// defaultHostUDS is what file systems without a setting of their own
// allow: nothing, unless SetDefaultHostUDS says otherwise.
var defaultHostUDS atomic.Pointer[HostUDS]

// SetDefaultHostUDS sets what every file system of this package allows
// unless SetHostUDS gave it a setting: the sandbox's --host-uds.
func SetDefaultHostUDS(h HostUDS) { defaultHostUDS.Store(&h) }

// SetHostUDS sets what f, a file system of this package, allows. It is
// a no-op for other file systems.
func SetHostUDS(f *fs.Filesystem, h HostUDS) {
	g, ok := f.Impl().(*filesystem)
	if !ok {
		return
	}
	hostUDS.Store(g, h)
}

// hostUDSOf returns what g allows.
func (g *filesystem) hostUDSOf() HostUDS {
	if v, ok := hostUDS.Load(g); ok {
		return v.(HostUDS)
	}
	if d := defaultHostUDS.Load(); d != nil {
		return *d
	}
	return HostUDS{}
}

// ConnectHostSocket implements unix.HostSocketNode for socket files: a
// host socket of sockType connected, by the gofer, to the socket file
// name in dir. ECONNREFUSED where host connections are not allowed, as
// for a socket file nothing listens on.
func (n *node) ConnectHostSocket(_ fs.Context, dir fs.Node, name string, sockType int) (int, error) {
	if n.typ != unix.S_IFSOCK || !n.fs.hostUDSOf().Connect {
		return -1, unix.ECONNREFUSED
	}
	d, ok := dir.(dirNode)
	if !ok || d.fs != n.fs {
		return -1, unix.ECONNREFUSED
	}
	fd, err := n.fs.client.Connect(d.handle(), name, sockType)
	if err != nil {
		err = errno(err)
		if err == unix.EPERM || err == unix.ENOENT {
			// A gofer that refuses, or a name gone on the host: nobody
			// to connect to.
			err = unix.ECONNREFUSED
		}
		return -1, err
	}
	return fd, nil
}

// boundFDs holds the host sockets bind(2) made, until the binding socket
// takes them (TakeBoundHostSocket).
var boundFDs sync.Map // *node -> int

// TakeBoundHostSocket implements unix.HostBoundNode.
func (n *node) TakeBoundHostSocket() (int, bool) {
	v, ok := boundFDs.LoadAndDelete(n)
	if !ok {
		return -1, false
	}
	return v.(int), true
}

// bindingContext is what sentry/socket/unix's bind passes as context
// (unix.BindingContext).
type bindingContext interface {
	UnixSocketType() int
}

// bindHost makes the socket file name as a bound host socket when bind(2)
// of a stream or seqpacket socket asks (ctx is a binding context) and
// the file system allows it; handled false means the caller makes a plain
// socket file.
func (d dirNode) bindHost(ctx fs.Context, name string, opts fs.CreateOptions) (n fs.Node, handled bool, err error) {
	bc, ok := ctx.(bindingContext)
	if !ok || !d.fs.hostUDSOf().Bind {
		return nil, false, nil
	}
	typ := bc.UnixSocketType()
	if typ != unix.SOCK_STREAM && typ != unix.SOCK_SEQPACKET {
		// Datagrams from host processes are not received: a plain
		// socket file for sandbox senders.
		return nil, false, nil
	}
	h, attr, fd, err := d.fs.client.Bind(d.handle(), name, typ, opts.Mode&07777, uint32(opts.UID), uint32(opts.GID))
	if err != nil {
		return nil, true, errno(err)
	}
	d.changed()
	n = d.fs.newNode(h, attr)
	if gn, ok := n.(*node); ok {
		boundFDs.Store(gn, fd)
	} else {
		unix.Close(fd)
	}
	return n, true, nil
}
