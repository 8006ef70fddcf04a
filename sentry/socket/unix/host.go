package unix

import (
	"time"

	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/host"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// HostSocketNode is implemented by socket files that a host process may
// be listening on: socket files of a gofer mount served with host Unix
// sockets (issue #3, --host-uds=open). connect(2) to such a file that no
// sandbox socket is bound to asks the node for a host socket connected
// to it, and the sandbox socket then carries its data to and from that
// host socket.
type HostSocketNode interface {
	fs.Node
	// ConnectHostSocket returns a host socket of sockType connected to
	// the host socket this node names, the entry name of directory dir;
	// the caller owns the descriptor. Errors are connect(2)'s
	// (ECONNREFUSED, EPROTOTYPE...).
	ConnectHostSocket(ctx fs.Context, dir fs.Node, name string, sockType int) (int, error)
}

// HostBoundNode is implemented by socket files that bind(2) made as host
// sockets (a gofer mount served with --host-uds=create): the node holds
// the bound host socket until the binding sandbox socket takes it.
type HostBoundNode interface {
	fs.Node
	// TakeBoundHostSocket returns the bound host socket, once; the
	// caller owns it.
	TakeBoundHostSocket() (int, bool)
}

// BindingContext is the context bind(2) makes a socket file with: file
// systems that can make host sockets (see HostBoundNode) learn the
// socket's type from it.
type BindingContext interface {
	fs.Context
	// UnixSocketType is the type of the socket being bound.
	UnixSocketType() int
}

type bindingContext struct {
	socket.Context
	typ int
}

// UnixSocketType implements BindingContext.
func (c bindingContext) UnixSocketType() int { return c.typ }

// hostTarget is a socket file no sandbox socket is bound to that a host
// process may be: the node, and its directory and name in it.
type hostTarget struct {
	node HostSocketNode
	dir  fs.Node
	name string
}

// hostTargetOf returns the host target at vd, or nil.
func hostTargetOf(vd fs.VirtualDentry) *hostTarget {
	hn, ok := vd.Dentry.Node().(HostSocketNode)
	if !ok {
		return nil
	}
	parent := vd.Dentry.Parent()
	if parent == nil {
		return nil
	}
	return &hostTarget{node: hn, dir: parent.Node(), name: vd.Dentry.Name()}
}

// hostConnectRetry is how long a blocking connect waits before asking
// again for a host connection that found the listener's backlog full.
const hostConnectRetry = 5 * time.Millisecond

// connectHost connects s to the host socket of target hn. The gofer's
// connect does not wait: a full backlog is EAGAIN, on which a blocking
// connect tries again until there is room, SO_SNDTIMEO passes (EAGAIN)
// or a signal comes (syserror.ErrInterrupted).
func (s *Socket) connectHost(ctx socket.Context, hn *hostTarget, a address, blocking bool) error {
	s.mu.Lock()
	switch {
	case s.state == stateConnected || s.host.Load() != nil:
		s.mu.Unlock()
		return sys.EISCONN
	case s.state == stateListening:
		s.mu.Unlock()
		return sys.EINVAL
	}
	s.mu.Unlock()
	deadline, hasDeadline := s.opts.SndTimeout().Deadline()
	for {
		fd, err := hn.node.ConnectHostSocket(ctx, hn.dir, hn.name, s.typ)
		if err == nil {
			return s.attachHost(fd, a.encode())
		}
		if err != sys.EAGAIN || !blocking {
			return err
		}
		wake := time.Now().Add(hostConnectRetry)
		if hasDeadline {
			if !time.Now().Before(deadline) {
				return sys.EAGAIN
			}
			if deadline.Before(wake) {
				wake = deadline
			}
		}
		if werr := ctx.BlockOn(nil, wake, true); werr != sys.ETIMEDOUT {
			return werr
		}
	}
}

// hostListener is the host side of a sandbox socket bound to a host
// path: a host socket bound there, on which host processes connect. It
// listens when the sandbox socket does, and its connections are accepted
// as sandbox sockets carrying their data over the accepted host sockets
// (hostConn). Sandbox sockets connecting to the path reach the sandbox
// socket itself, as for any bound socket.
type hostListener struct {
	raw  int                 // the bound host socket
	file *fs.FileDescription // a host file of a duplicate of raw: readiness
	fwd  *waiter.Entry
}

// hostListenerOf returns the host listener of s, nil if s has none.
func (s *Socket) hostListenerOf() *hostListener { return s.hostL.Load() }

// attachHostListener makes s own the bound host socket fd.
//
// Preconditions: s.mu is held; s was just bound.
func (s *Socket) attachHostListener(fd int) error {
	dup, err := sys.Dup(fd)
	if err != nil {
		sys.Close(fd)
		return hostErr(err)
	}
	f, err := host.NewFile(dup, host.Options{Name: "socket"})
	if err != nil {
		sys.Close(dup)
		sys.Close(fd)
		return sys.EIO
	}
	l := &hostListener{raw: fd, file: f}
	l.fwd = &waiter.Entry{Mask: waiter.EventIn, Callback: func(_ *waiter.Entry, m waiter.EventMask) { s.queue.Notify(m) }}
	f.EventRegister(l.fwd)
	s.hostL.Store(l)
	return nil
}

// listen makes the host socket listen too.
func (l *hostListener) listen(backlog int) error {
	if err := sys.Listen(l.raw, backlog); err != nil {
		return hostErr(err)
	}
	return nil
}

// pending reports whether a host connection waits to be accepted.
func (l *hostListener) pending() bool {
	return l.file.Readiness(waiter.EventIn) != 0
}

// accept takes a host connection, if one waits, as a new connected
// sandbox socket of listener s (syserror.ErrWouldBlock if none).
//
// Preconditions: s.mu is held.
func (l *hostListener) accept(s *Socket) (*Socket, error) {
	fd, sa, err := sys.Accept4(l.raw, sys.SOCK_CLOEXEC|sys.SOCK_NONBLOCK)
	if err != nil {
		if err == sys.EINTR || err == sys.ECONNABORTED {
			return nil, syserror.ErrWouldBlock
		}
		return nil, hostErr(err)
	}
	peer := unboundAddress()
	// Go names an unnamed peer "@" (its leading NUL); it is the
	// far commoner case than an abstract name of length 0.
	if u, ok := sa.(*sys.SockaddrUnix); ok && u.Name != "" && u.Name != "@" {
		if u.Name[0] == '@' {
			peer = address{abstract: true, name: u.Name[1:]}.encode()
		} else {
			peer = address{name: u.Name}.encode()
		}
	}
	srv := newSocket(s.ns, s.typ)
	srv.addr = append([]byte(nil), s.addr...)
	if err := srv.attachHost(fd, peer); err != nil {
		return nil, err
	}
	return srv, nil
}

func (l *hostListener) release() {
	l.file.EventUnregister(l.fwd)
	l.file.DecRef()
	sys.Close(l.raw)
}

// hostConn is the host side of a sandbox socket connected to a host
// socket. The Sentry makes these host syscalls on the donated descriptor:
// sendmsg, recvmsg (always MSG_DONTWAIT), shutdown, dup, close; readiness
// and FIONREAD come from the host file package's notifier.
//
// Descriptors cannot cross between the sandbox and the host: sending
// SCM_RIGHTS is EOPNOTSUPP, and descriptors a host process sends are
// closed and reported as MSG_CTRUNC. Host credentials (SCM_CREDENTIALS,
// SO_PEERCRED) are not passed on: they name host processes.
type hostConn struct {
	raw  int                 // the connected host socket
	file *fs.FileDescription // a host file of a duplicate of raw: readiness, FIONREAD
	addr []byte              // the address connected to
	fwd  *waiter.Entry       // forwards the host file's events to the socket's queue
}

// hostConnOf returns the host connection of s, nil if s has none.
func (s *Socket) hostConnOf() *hostConn { return s.host.Load() }

// attachHost makes s carry its data over the connected host socket fd,
// which it takes over.
func (s *Socket) attachHost(fd int, addr []byte) error {
	dup, err := sys.Dup(fd)
	if err != nil {
		sys.Close(fd)
		return err
	}
	f, err := host.NewFile(dup, host.Options{Name: "socket"})
	if err != nil {
		sys.Close(dup)
		sys.Close(fd)
		return sys.EIO
	}
	h := &hostConn{raw: fd, file: f, addr: addr}
	h.fwd = &waiter.Entry{Mask: waiter.AllEvents, Callback: func(_ *waiter.Entry, m waiter.EventMask) { s.queue.Notify(m) }}
	s.mu.Lock()
	if s.state != stateUnconnected || s.host.Load() != nil {
		s.mu.Unlock()
		f.DecRef()
		sys.Close(fd)
		return sys.EISCONN
	}
	s.state = stateConnected
	s.host.Store(h)
	s.mu.Unlock()
	f.EventRegister(h.fwd)
	s.queue.Notify(waiter.EventOut | waiter.EventIn)
	return nil
}

func (h *hostConn) release() {
	h.file.EventUnregister(h.fwd)
	h.file.DecRef()
	sys.Close(h.raw)
}

// hostErr maps a host error to the application's errno.
func hostErr(err error) error {
	if err == sys.EAGAIN || err == sys.EWOULDBLOCK {
		return syserror.ErrWouldBlock
	}
	if e, ok := err.(sys.Errno); ok {
		return e
	}
	return sys.EIO
}

func (h *hostConn) send(ctx fs.Context, s *Socket, data []byte, o *socket.SendOptions) (int, error) {
	if len(o.Control.Rights) > 0 {
		return 0, sys.EOPNOTSUPP
	}
	stream := s.typ == sys.SOCK_STREAM
	sent := 0
	err := block(ctx, &s.queue, waiter.EventOut, o.Blocking, s.opts.SndTimeout(), func() error {
		n, err := sys.SendmsgN(h.raw, data[sent:], nil, nil, sys.MSG_DONTWAIT|sys.MSG_NOSIGNAL)
		if n > 0 {
			sent += n
		}
		if err != nil {
			return hostErr(err)
		}
		if stream && sent < len(data) {
			return syserror.ErrWouldBlock
		}
		return nil
	})
	if sent > 0 {
		return sent, nil
	}
	return 0, err
}

// hostRecvFlags are the recv flags passed on to the host.
const hostRecvFlags = sys.MSG_PEEK | sys.MSG_TRUNC

func (h *hostConn) recv(ctx fs.Context, s *Socket, dst []byte, o socket.RecvOptions) (socket.RecvResult, error) {
	var res socket.RecvResult
	stream := s.typ == sys.SOCK_STREAM
	waitAll := stream && o.Flags&sys.MSG_WAITALL != 0 && o.Flags&sys.MSG_PEEK == 0
	oob := make([]byte, sys.CmsgSpace(4*MaxRights))
	err := block(ctx, &s.queue, waiter.EventIn|waiter.EventRdHUp, o.Blocking, s.opts.RcvTimeout(), func() error {
		n, oobn, rflags, _, err := sys.Recvmsg(h.raw, dst[res.N:], oob, o.Flags&hostRecvFlags|sys.MSG_DONTWAIT|sys.MSG_CMSG_CLOEXEC)
		if err != nil {
			if res.N > 0 && err == sys.EAGAIN && !waitAll {
				return nil
			}
			if res.N > 0 && err != sys.EAGAIN {
				return nil
			}
			return hostErr(err)
		}
		if oobn > 0 {
			// Host descriptors do not enter the sandbox.
			if msgs, perr := sys.ParseSocketControlMessage(oob[:oobn]); perr == nil {
				for _, m := range msgs {
					if fds, ferr := sys.ParseUnixRights(&m); ferr == nil {
						for _, fd := range fds {
							sys.Close(fd)
						}
						res.Flags |= sys.MSG_CTRUNC
					}
				}
			}
		}
		res.Flags |= rflags & (sys.MSG_TRUNC | sys.MSG_CTRUNC)
		if !stream {
			res.N, res.MsgLen = min(n, len(dst)), n
			return nil
		}
		res.N += min(n, len(dst)-res.N)
		if n == 0 || !waitAll || res.N == len(dst) {
			return nil
		}
		return syserror.ErrWouldBlock
	})
	if stream {
		res.MsgLen = res.N
		if res.N > 0 {
			err = nil
		}
	}
	if err != nil {
		return socket.RecvResult{}, err
	}
	return res, nil
}

func (h *hostConn) shutdown(how int) error {
	if err := sys.Shutdown(h.raw, how); err != nil {
		return hostErr(err)
	}
	return nil
}
