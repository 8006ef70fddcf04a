// Package unix implements Unix-domain sockets (AF_UNIX) of the three
// types Linux has: SOCK_STREAM, SOCK_SEQPACKET and SOCK_DGRAM, connected
// in pairs (socketpair), through a listener (bind, listen, connect,
// accept), or sending datagrams to a bound address. Addresses are paths in
// the VFS (bind makes an S_IFSOCK node; connect finds the socket bound to
// that node) or names in the sandbox's abstract namespace. Messages carry
// SCM_RIGHTS descriptors and SCM_CREDENTIALS. Socket files of a gofer
// mount may also lead to host processes (host.go, runsc --host-uds):
// connect reaches a host listener, and a socket bound there listens for
// host connections too; such connections carry data only.
//
// How data flows: each socket has a receive queue of messages. A sender
// appends to the queue of its peer (or of the datagram's destination);
// the bytes are charged to the sender's send buffer (SO_SNDBUF) until the
// receiver takes them, as Linux charges them to the sender's sk_wmem. A
// stream read runs across messages; a datagram or seqpacket read takes one
// message.
//
// Locks, outer first: a Socket's mu (bind holds it across the VFS
// calls that make the socket node), then Namespace.mu (a leaf, never
// held while calling into the VFS). A Socket's mu is held alone, except
// in connect, which holds the connecting socket's and then the
// listener's (a listening socket is never the one connecting). Waiter
// queues are notified after every mu is released; file references
// (SCM_RIGHTS) are dropped with no socket lock held, as dropping one may
// release another socket.
package unix

import (
	"fmt"
	"sync"
	"sync/atomic"

	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Limits, as Linux's defaults.
const (
	// MaxDgramQueue is net.unix.max_dgram_qlen: a datagram socket's
	// queue holds one more message than this from senders it is not
	// connected back to.
	MaxDgramQueue = 10
	// SoMaxConn is net.core.somaxconn: the largest listen backlog.
	SoMaxConn = 4096
	// MaxRights is SCM_MAX_FD: descriptors in one SCM_RIGHTS message.
	MaxRights = 253
	// pathMax is sizeof(sun_path).
	pathMax = 108
	// familyLen is offsetof(struct sockaddr_un, sun_path).
	familyLen = 2
)

type nodeKey struct{ dev, ino uint64 }

// abstractKey names a socket in the abstract namespace: as on Linux, each
// socket type has its own names.
type abstractKey struct {
	typ  int
	name string
}

// Namespace holds a sandbox's Unix socket names: the abstract namespace
// and the sockets bound to file system nodes.
type Namespace struct {
	mu       sync.Mutex
	abstract map[abstractKey]*Socket
	bound    map[nodeKey]*Socket
	// inflight counts descriptors in flight in SCM_RIGHTS messages, per
	// sending user.
	inflight map[auth.KUID]int
	autobind uint32
}

// NewNamespace returns an empty namespace.
func NewNamespace() *Namespace {
	return &Namespace{abstract: make(map[abstractKey]*Socket), bound: make(map[nodeKey]*Socket), inflight: make(map[auth.KUID]int)}
}

// state is a socket's connection state.
type state int

const (
	stateUnconnected state = iota
	stateListening
	stateConnected
)

var nextID atomic.Uint64

// Socket is one Unix-domain socket; it is the FileImpl of its file.
type Socket struct {
	fs.FileDefaults
	ns   *Namespace
	typ  int
	id   uint64
	opts *socket.Options

	// queue is notified of this socket's readiness changes.
	queue waiter.Queue
	// wmem counts the bytes this socket sent that wait in a receive
	// queue, with msgOverhead for each message.
	wmem atomic.Int64

	mu       sync.Mutex
	state    state
	released bool
	// addr is the bound address (a sockaddr_un), nil when unbound.
	addr     []byte
	boundKey *nodeKey
	abstract string
	// peer is the connected peer (the default destination of a datagram
	// socket). A stream peer stays set after the peer is released.
	peer *Socket
	// peerCred is SO_PEERCRED; hasPeerCred is false before a connection.
	peerCred    socket.Credentials
	hasPeerCred bool
	// recv is the receive queue.
	recv msgQueue
	// oob is the urgent message of recv, nil for none (oob.go).
	oob *message
	// file is the socket's file description, whose owner gets SIGURG.
	file atomic.Pointer[fs.FileDescription]
	// rcvShutdown and sndShutdown are Linux's RCV_SHUTDOWN and
	// SEND_SHUTDOWN.
	rcvShutdown, sndShutdown bool
	// err is the pending SO_ERROR.
	err sys.Errno
	// Listening sockets: backlog and the accept queue of connected
	// server-side sockets.
	backlog int
	acceptQ []*Socket
	// host is set once the socket is connected to a host socket (see
	// host.go); every data operation then goes there.
	host atomic.Pointer[hostConn]
	// hostL is set when the socket is bound to a host socket, on which
	// host processes connect (see host.go).
	hostL atomic.Pointer[hostListener]
}

// ValidType reports whether typ is a socket type Unix sockets have.
func ValidType(typ int) bool {
	return typ == sys.SOCK_STREAM || typ == sys.SOCK_DGRAM || typ == sys.SOCK_SEQPACKET
}

func newSocket(ns *Namespace, typ int) *Socket {
	return &Socket{ns: ns, typ: typ, id: nextID.Add(1), opts: socket.NewOptions()}
}

// New returns a new unbound socket's file (socket(2)). flags are the
// open flags (O_NONBLOCK).
func New(ctx fs.Context, ns *Namespace, typ int, flags uint32) *fs.FileDescription {
	return newFile(ctx, newSocket(ns, typ), flags)
}

// NewPair returns the files of two connected sockets (socketpair(2)).
func NewPair(ctx fs.Context, ns *Namespace, typ int, flags uint32) (*fs.FileDescription, *fs.FileDescription) {
	a, b := newSocket(ns, typ), newSocket(ns, typ)
	c := credsOf(ctx)
	a.peer, b.peer = b, a
	a.state, b.state = stateConnected, stateConnected
	a.peerCred, b.peerCred = c, c
	a.hasPeerCred, b.hasPeerCred = true, true
	return newFile(ctx, a, flags), newFile(ctx, b, flags)
}

// newFile returns s's file description, which s remembers.
func newFile(ctx fs.Context, s *Socket, flags uint32) *fs.FileDescription {
	f := socket.NewFile(ctx, s, flags)
	s.file.Store(f)
	return f
}

// credsOf returns the credentials of the task of ctx. The pid is the
// root PID namespace's (RootThreadGroupID), which each reader translates
// into its own namespace (pidForReader).
func credsOf(ctx fs.Context) socket.Credentials {
	c := ctx.Credentials()
	cr := socket.Credentials{UID: c.EffectiveUID, GID: c.EffectiveGID}
	if p, ok := ctx.(interface{ RootThreadGroupID() int32 }); ok {
		cr.PID = p.RootThreadGroupID()
	} else if p, ok := ctx.(interface{ ThreadGroupID() int32 }); ok {
		cr.PID = p.ThreadGroupID()
	}
	return cr
}

// pidForReader returns the root pid of credentials as the PID namespace of
// the task of ctx numbers it: 0 when the process is not visible there
// (SO_PEERCRED, SCM_CREDENTIALS, as Linux's pid_vnr).
func pidForReader(ctx any, pid int32) int32 {
	if p, ok := ctx.(interface{ PIDFromRoot(int32) int32 }); ok {
		return p.PIDFromRoot(pid)
	}
	return pid
}

var _ socket.Socket = (*Socket)(nil)

// Family implements socket.Socket.
func (s *Socket) Family() int { return sys.AF_UNIX }

// Type implements socket.Socket.
func (s *Socket) Type() int { return s.typ }

// Protocol implements socket.Socket.
func (s *Socket) Protocol() int { return 0 }

func (s *Socket) connectionOriented() bool { return s.typ != sys.SOCK_DGRAM }

// Address parsing.

// address is a parsed sockaddr_un.
type address struct {
	// abstract is set for the abstract namespace; name is then the name
	// without its leading NUL, else the path.
	abstract bool
	name     string
	// autobind is set for an address of just the family (bind only).
	autobind bool
}

// parseAddress checks a sockaddr_un as Linux's unix_validate_addr and
// unix_mkname_bsd do.
func parseAddress(b []byte, forBind bool) (address, error) {
	if len(b) < familyLen || len(b) > familyLen+pathMax {
		return address{}, sys.EINVAL
	}
	if int(b[0])|int(b[1])<<8 != sys.AF_UNIX {
		return address{}, sys.EINVAL
	}
	if len(b) == familyLen {
		if forBind {
			return address{autobind: true}, nil
		}
		return address{}, sys.EINVAL
	}
	p := b[familyLen:]
	if p[0] == 0 {
		return address{abstract: true, name: string(p[1:])}, nil
	}
	for i, c := range p {
		if c == 0 {
			p = p[:i]
			break
		}
	}
	return address{name: string(p)}, nil
}

// encode returns the sockaddr_un of a.
func (a address) encode() []byte {
	b := []byte{byte(sys.AF_UNIX), byte(sys.AF_UNIX >> 8)}
	if a.abstract {
		b = append(b, 0)
		return append(b, a.name...)
	}
	b = append(b, a.name...)
	return append(b, 0)
}

// unboundAddress is what getsockname and accept report for an unbound
// socket: the family alone.
func unboundAddress() []byte { return []byte{byte(sys.AF_UNIX), byte(sys.AF_UNIX >> 8)} }

// lookupPath resolves the socket bound at path for connect and sendto:
// ENOENT and friends from the walk, EACCES without write permission,
// ECONNREFUSED for a node that is not a bound socket. A socket file no
// sandbox socket is bound to but a host process may be (HostSocketNode)
// is returned as the second result.
func (ns *Namespace) lookupPath(ctx socket.Context, path string) (*Socket, *hostTarget, error) {
	fsc := ctx.FSContext()
	root, cwd := fsc.RootAndCwd()
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: cwd, Path: path, FollowFinal: true})
	if err != nil {
		return nil, nil, err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Linux checks MAY_WRITE on the inode without the mount's read-only
	// flag (path_permission).
	if err := fs.CheckPermission(ctx.Credentials(), &st, fs.MayWrite); err != nil {
		return nil, nil, err
	}
	if st.Type() != sys.S_IFSOCK {
		return nil, nil, sys.ECONNREFUSED
	}
	ns.mu.Lock()
	o := ns.bound[nodeKey{st.Dev, st.Ino}]
	ns.mu.Unlock()
	if o != nil {
		return o, nil, nil
	}
	if ht := hostTargetOf(vd); ht != nil {
		return nil, ht, nil
	}
	return nil, nil, sys.ECONNREFUSED
}

// find returns the socket at address a of type typ: EPROTOTYPE for
// another type.
func (s *Socket) find(ctx socket.Context, a address) (*Socket, error) {
	o, hn, err := s.findOrHost(ctx, a)
	if hn != nil {
		// Only connect reaches host sockets.
		return nil, sys.ECONNREFUSED
	}
	return o, err
}

// findOrHost is find that may also return a host socket node.
func (s *Socket) findOrHost(ctx socket.Context, a address) (*Socket, *hostTarget, error) {
	var o *Socket
	if a.abstract {
		s.ns.mu.Lock()
		o = s.ns.abstract[abstractKey{s.typ, a.name}]
		s.ns.mu.Unlock()
		if o == nil {
			return nil, nil, sys.ECONNREFUSED
		}
	} else {
		var hn *hostTarget
		var err error
		if o, hn, err = s.ns.lookupPath(ctx, a.name); err != nil || hn != nil {
			return nil, hn, err
		}
	}
	if o.typ != s.typ {
		return nil, nil, sys.EPROTOTYPE
	}
	return o, nil, nil
}

// Bind implements socket.Socket.
func (s *Socket) Bind(ctx socket.Context, b []byte) error {
	a, err := parseAddress(b, true)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr != nil {
		return sys.EINVAL
	}
	if a.autobind {
		return s.autobindLocked()
	}
	if a.abstract {
		s.ns.mu.Lock()
		defer s.ns.mu.Unlock()
		k := abstractKey{s.typ, a.name}
		if _, ok := s.ns.abstract[k]; ok {
			return sys.EADDRINUSE
		}
		s.ns.abstract[k] = s
		s.abstract = a.name
		s.addr = a.encode()
		return nil
	}
	fsc := ctx.FSContext()
	root, cwd := fsc.RootAndCwd()
	vd, err := fs.MknodSocket(bindingContext{ctx, s.typ}, &fs.Lookup{Root: root, Start: cwd, Path: a.name}, 0o777&^fsc.Umask())
	if err != nil {
		return err
	}
	if hb, ok := vd.Dentry.Node().(HostBoundNode); ok {
		if fd, ok := hb.TakeBoundHostSocket(); ok {
			if err := s.attachHostListener(fd); err != nil {
				return err
			}
		}
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	key := nodeKey{st.Dev, st.Ino}
	s.ns.mu.Lock()
	s.ns.bound[key] = s
	s.ns.mu.Unlock()
	s.boundKey = &key
	s.addr = a.encode()
	return nil
}

// autobindLocked binds s to a fresh abstract name of five hex digits, as
// Linux's unix_autobind.
//
// Preconditions: s.mu is held; s is unbound.
func (s *Socket) autobindLocked() error {
	s.ns.mu.Lock()
	defer s.ns.mu.Unlock()
	for i := 0; i < 1<<20; i++ {
		s.ns.autobind = (s.ns.autobind + 1) & 0xfffff
		name := fmt.Sprintf("%05x", s.ns.autobind)
		k := abstractKey{s.typ, name}
		if _, ok := s.ns.abstract[k]; ok {
			continue
		}
		s.ns.abstract[k] = s
		s.abstract = name
		s.addr = address{abstract: true, name: name}.encode()
		return nil
	}
	return sys.ENOSPC
}

// autobindIfPassCred binds an unbound socket with SO_PASSCRED, as Linux
// does before connect and send, so the peer can tell who sent.
func (s *Socket) autobindIfPassCred() error {
	if !s.opts.PassCred() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr != nil {
		return nil
	}
	return s.autobindLocked()
}

// Listen implements socket.Socket.
func (s *Socket) Listen(ctx socket.Context, backlog int) error {
	if !s.connectionOriented() {
		return sys.EOPNOTSUPP
	}
	if uint32(backlog) > SoMaxConn {
		backlog = SoMaxConn
	}
	s.mu.Lock()
	if s.addr == nil || (s.state != stateUnconnected && s.state != stateListening) {
		s.mu.Unlock()
		return sys.EINVAL
	}
	if l := s.hostListenerOf(); l != nil {
		if err := l.listen(backlog); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.backlog = backlog
	s.state = stateListening
	s.peerCred, s.hasPeerCred = credsOf(ctx), true
	s.mu.Unlock()
	// A larger backlog may let blocked connectors in.
	s.queue.Notify(waiter.EventOut)
	return nil
}

// Accept implements socket.Socket.
func (s *Socket) Accept(ctx socket.Context, flags uint32, blocking bool) (*fs.FileDescription, []byte, error) {
	if !s.connectionOriented() {
		return nil, nil, sys.EOPNOTSUPP
	}
	var srv *Socket
	err := block(ctx, &s.queue, waiter.EventIn, blocking, s.opts.RcvTimeout(), func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.state != stateListening {
			return sys.EINVAL
		}
		if len(s.acceptQ) == 0 {
			if s.rcvShutdown {
				// shutdown(2) of a listener ends its accepts.
				return sys.EINVAL
			}
			if l := s.hostListenerOf(); l != nil {
				var err error
				srv, err = l.accept(s)
				return err
			}
			return syserror.ErrWouldBlock
		}
		srv = s.acceptQ[0]
		s.acceptQ[0] = nil
		s.acceptQ = s.acceptQ[1:]
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// Room for another connector.
	s.queue.Notify(waiter.EventOut)
	if h := srv.hostConnOf(); h != nil {
		return newFile(ctx, srv, flags), append([]byte(nil), h.addr...), nil
	}
	srv.mu.Lock()
	peer := srv.peer
	srv.mu.Unlock()
	return newFile(ctx, srv, flags), peer.nameOrFamily(), nil
}

// nameOrFamily returns the bound address, or the family alone.
func (s *Socket) nameOrFamily() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr == nil {
		return unboundAddress()
	}
	return append([]byte(nil), s.addr...)
}

// boundAddr returns the bound address, nil if unbound.
func (s *Socket) boundAddr() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.addr...)
}

// Connect implements socket.Socket.
func (s *Socket) Connect(ctx socket.Context, b []byte, blocking bool) error {
	if !s.connectionOriented() {
		if len(b) >= familyLen && int(b[0])|int(b[1])<<8 == sys.AF_UNSPEC {
			s.disconnect()
			return nil
		}
	}
	a, err := parseAddress(b, false)
	if err != nil {
		return err
	}
	if err := s.autobindIfPassCred(); err != nil {
		return err
	}
	o, hn, err := s.findOrHost(ctx, a)
	if err != nil {
		return err
	}
	if hn != nil {
		return s.connectHost(ctx, hn, a, blocking)
	}
	if !s.connectionOriented() {
		return s.connectDgram(o)
	}
	return s.connectStream(ctx, o, blocking)
}

// disconnect drops a datagram socket's default destination.
func (s *Socket) disconnect() {
	s.mu.Lock()
	s.peer = nil
	s.state = stateUnconnected
	s.mu.Unlock()
	s.queue.Notify(waiter.EventOut)
}

// connectDgram sets a datagram socket's default destination: EPERM if o
// is connected to another socket.
func (s *Socket) connectDgram(o *Socket) error {
	if o != s {
		o.mu.Lock()
		other := o.peer
		released := o.released
		o.mu.Unlock()
		if released {
			return sys.ECONNREFUSED
		}
		if other != nil && other != s {
			return sys.EPERM
		}
	}
	s.mu.Lock()
	s.peer = o
	s.state = stateConnected
	s.mu.Unlock()
	s.queue.Notify(waiter.EventOut)
	return nil
}

// connectStream connects s to the listener o: a server-side socket
// connected to s joins o's accept queue.
func (s *Socket) connectStream(ctx socket.Context, o *Socket, blocking bool) error {
	cred := credsOf(ctx)
	err := block(ctx, &o.queue, waiter.EventOut, blocking, s.opts.SndTimeout(), func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case s.state == stateConnected:
			return sys.EISCONN
		case s.state == stateListening:
			return sys.EINVAL
		}
		if o == s {
			return sys.ECONNREFUSED
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.state != stateListening || o.released || o.rcvShutdown {
			return sys.ECONNREFUSED
		}
		if len(o.acceptQ) > o.backlog {
			return syserror.ErrWouldBlock
		}
		srv := newSocket(s.ns, s.typ)
		srv.addr = append([]byte(nil), o.addr...)
		srv.state = stateConnected
		srv.peer = s
		srv.peerCred, srv.hasPeerCred = cred, true
		if o.opts.PassCred() {
			srv.opts.Set(sys.SO_PASSCRED, socket.Int(1), false)
		}
		o.acceptQ = append(o.acceptQ, srv)
		s.peer = srv
		s.state = stateConnected
		s.peerCred, s.hasPeerCred = o.peerCred, o.hasPeerCred
		return nil
	})
	if err != nil {
		return err
	}
	o.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
	s.queue.Notify(waiter.EventOut | waiter.EventWrNorm)
	return nil
}

// SockName implements socket.Socket.
func (s *Socket) SockName(socket.Context) ([]byte, error) { return s.nameOrFamily(), nil }

// PeerName implements socket.Socket.
func (s *Socket) PeerName(socket.Context) ([]byte, error) {
	if h := s.hostConnOf(); h != nil {
		return append([]byte(nil), h.addr...), nil
	}
	s.mu.Lock()
	peer := s.peer
	s.mu.Unlock()
	if peer == nil {
		return nil, sys.ENOTCONN
	}
	return peer.nameOrFamily(), nil
}

// Shutdown implements socket.Socket.
func (s *Socket) Shutdown(_ socket.Context, how int) error {
	if how < sys.SHUT_RD || how > sys.SHUT_RDWR {
		return sys.EINVAL
	}
	rd, wr := how != sys.SHUT_WR, how != sys.SHUT_RD
	if h := s.hostConnOf(); h != nil {
		return h.shutdown(how)
	}
	s.mu.Lock()
	s.rcvShutdown = s.rcvShutdown || rd
	s.sndShutdown = s.sndShutdown || wr
	peer := s.peer
	s.mu.Unlock()
	s.queue.Notify(waiter.EventIn | waiter.EventOut | waiter.EventRdHUp | waiter.EventHUp)
	if peer != nil && s.connectionOriented() {
		peer.mu.Lock()
		peer.rcvShutdown = peer.rcvShutdown || wr
		peer.sndShutdown = peer.sndShutdown || rd
		peer.mu.Unlock()
		peer.queue.Notify(waiter.EventIn | waiter.EventOut | waiter.EventRdHUp | waiter.EventHUp)
	}
	return nil
}

// Release implements fs.FileImpl: the socket's name goes, its peer
// sees the connection end (ECONNRESET if this side left data unread),
// and queued messages and pending connections are dropped.
func (s *Socket) Release() { s.release(false) }

// release is Release; embryo says s was never accepted, which its peer
// sees as a reset.
func (s *Socket) release(embryo bool) {
	s.mu.Lock()
	s.released = true
	peer := s.peer
	s.peer = nil
	unread := s.recv.len() > 0
	msgs := s.recv.drain()
	s.oob = nil
	pending := s.acceptQ
	s.acceptQ = nil
	s.state = stateUnconnected
	s.rcvShutdown, s.sndShutdown = true, true
	abstract, key := s.abstract, s.boundKey
	s.mu.Unlock()

	s.ns.mu.Lock()
	if k := (abstractKey{s.typ, abstract}); abstract != "" && s.ns.abstract[k] == s {
		delete(s.ns.abstract, k)
	}
	if key != nil && s.ns.bound[*key] == s {
		delete(s.ns.bound, *key)
	}
	s.ns.mu.Unlock()

	if peer != nil && s.connectionOriented() {
		peer.mu.Lock()
		peer.rcvShutdown, peer.sndShutdown = true, true
		if unread || embryo {
			peer.err = sys.ECONNRESET
		}
		peer.mu.Unlock()
		peer.queue.Notify(waiter.EventIn | waiter.EventOut | waiter.EventHUp | waiter.EventRdHUp | waiter.EventErr)
	}
	for _, m := range msgs {
		m.discard(s.ns)
	}
	for _, srv := range pending {
		// A connection never accepted: its client sees a reset.
		srv.release(true)
	}
	if h := s.hostConnOf(); h != nil {
		h.release()
	}
	if l := s.hostListenerOf(); l != nil {
		l.release()
	}
	s.queue.Notify(waiter.EventIn | waiter.EventOut | waiter.EventHUp)
}
