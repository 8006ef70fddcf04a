package gofer

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// Config says what to serve and on which connection.
type Config struct {
	// Root is the host directory to serve; "/" after Confine.
	Root string
	// ConnFD is a connected SOCK_SEQPACKET socket; Serve takes ownership.
	ConnFD int
	// ReadOnly must be true: writes are not implemented yet.
	ReadOnly bool
}

// Serve serves cfg.Root on cfg.ConnFD, and on every connection made from
// it with Tdup, until all of them have closed. A clean hang-up by the
// Sentry is not an error.
func Serve(cfg Config) error {
	s, err := NewServer(cfg.Root, cfg.ReadOnly)
	if err != nil {
		unix.Close(cfg.ConnFD)
		return err
	}
	defer s.Close()
	return s.ServeConn(cfg.ConnFD)
}

// maxInFlight bounds the requests of one connection served at once; the
// connection's reader waits (and the Sentry's sends back up) beyond it.
const maxInFlight = 16

// Server serves one host directory tree to any number of connections.
type Server struct {
	root  *node
	conns sync.WaitGroup // connections being served
}

// NewServer opens root (an O_PATH fd kept for the server's life) to serve
// it. Only read-only serving is implemented.
func NewServer(root string, readOnly bool) (*Server, error) {
	if !readOnly {
		return nil, errors.New("gofer: read-write serving is not implemented")
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("gofer: open root %q: %w", root, err)
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("gofer: stat root %q: %w", root, err)
	}
	return &Server{root: newNode(fd, &st, nil, "")}, nil
}

// Close waits for every connection to end, then releases the root.
func (s *Server) Close() {
	s.conns.Wait()
	s.root.decRef()
}

// ServeConn serves the connection fd (taking ownership of it) until the
// peer hangs up or the connection breaks, then waits for connections made
// from it by Tdup. Every handle of the connection is released at its end.
func (s *Server) ServeConn(fd int) error {
	s.conns.Add(1)
	err := s.serveConn(fd)
	s.conns.Done()
	s.conns.Wait()
	return err
}

// serveConn is ServeConn without the wait for other connections.
func (s *Server) serveConn(fd int) error {
	pc, err := proto.NewConn(fd)
	if err != nil {
		return err
	}
	c := &conn{srv: s, pc: pc, sem: make(chan struct{}, maxInFlight)}
	err = c.serve()
	c.inFlight.Wait()
	c.nodes.clear()
	pc.Close()
	return err
}

// conn is one connection: its handles and its requests in progress.
type conn struct {
	srv      *Server
	pc       *proto.Conn
	nodes    nodeTable
	sem      chan struct{}
	inFlight sync.WaitGroup
}

func (c *conn) serve() error {
	buf := make([]byte, proto.MaxMessage)
	for {
		tag, m, err := c.pc.ReadMessage(buf)
		if err != nil {
			var de *proto.DecodeError
			if errors.As(err, &de) {
				if de.HasTag {
					c.reply(de.Tag, &proto.Rerror{Errno: uint32(unix.EINVAL)})
				}
				continue
			}
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("gofer: %w", err)
		}
		c.sem <- struct{}{}
		c.inFlight.Add(1)
		go func() {
			defer func() {
				<-c.sem
				c.inFlight.Done()
			}()
			c.reply(tag, c.handle(m))
		}()
	}
}

// reply sends r and closes the fd r donated, if any: the peer now has its
// own copy (or, if sending failed, nobody wants it).
func (c *conn) reply(tag uint32, r proto.Message) {
	c.pc.WriteMessage(tag, r) // a broken connection shows up in the reader
	switch r := r.(type) {
	case *proto.Ropen:
		unix.Close(r.FD)
	case *proto.Rdup:
		unix.Close(r.FD)
	}
}

// errMsg converts err to an Rerror; anything but an errno becomes EIO.
func errMsg(err error) proto.Message {
	var errno unix.Errno
	if !errors.As(err, &errno) || errno == 0 {
		errno = unix.EIO
	}
	return &proto.Rerror{Errno: uint32(errno)}
}

// handle serves one request and returns its response.
func (c *conn) handle(m proto.Message) proto.Message {
	switch m := m.(type) {
	case *proto.Tattach:
		if m.Version != proto.Version {
			return errMsg(unix.EPROTONOSUPPORT)
		}
		var st unix.Stat_t
		if err := fstat(c.srv.root.fd, &st); err != nil {
			return errMsg(err)
		}
		c.srv.root.incRef()
		h := c.nodes.add(c.srv.root)
		return &proto.Rattach{Root: proto.Handle(h), Attr: proto.AttrFromStat(&st)}
	case *proto.Tclose:
		if !c.nodes.remove(uint64(m.Node)) {
			return errMsg(unix.EBADF)
		}
		return &proto.Rclose{}
	case *proto.Tdup:
		return c.dup()
	}

	// Everything else works on one node.
	var h proto.Handle
	switch m := m.(type) {
	case *proto.Twalk:
		h = m.Dir
	case *proto.Tstat:
		h = m.Node
	case *proto.Topen:
		h = m.Node
	case *proto.Treadlink:
		h = m.Node
	case *proto.Tgetdents:
		h = m.Dir
	case *proto.Tstatfs:
		h = m.Node
	default:
		return errMsg(unix.EINVAL) // a response sent as a request
	}
	if tw, ok := m.(*proto.Twalk); ok {
		// Check the name before the handle, as Linux checks the path
		// before it needs the directory.
		if err := checkName(tw.Name); err != nil {
			return errMsg(err)
		}
	}
	n, ok := c.nodes.get(uint64(h))
	if !ok {
		return errMsg(unix.EBADF)
	}
	defer n.decRef()
	switch m := m.(type) {
	case *proto.Twalk:
		child, attr, err := walk(n, m.Name)
		if err != nil {
			return errMsg(err)
		}
		return &proto.Rwalk{Node: proto.Handle(c.nodes.add(child)), Attr: attr}
	case *proto.Tstat:
		var st unix.Stat_t
		if err := fstat(n.fd, &st); err != nil {
			return errMsg(err)
		}
		return &proto.Rstat{Attr: proto.AttrFromStat(&st)}
	case *proto.Topen:
		fd, err := openRead(n, int(m.Flags))
		if err != nil {
			return errMsg(err)
		}
		return &proto.Ropen{FD: fd}
	case *proto.Treadlink:
		target, err := readlink(n)
		if err != nil {
			return errMsg(err)
		}
		return &proto.Rreadlink{Target: target}
	case *proto.Tgetdents:
		r, err := getdents(n, m.Offset)
		if err != nil {
			return errMsg(err)
		}
		return r
	case *proto.Tstatfs:
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(n.fd, &sfs); err != nil {
			return errMsg(err)
		}
		return &proto.Rstatfs{Statfs: sfs}
	}
	panic("unreachable")
}

// dup makes a new connection served by the same server and returns the
// peer's end to donate.
func (c *conn) dup() proto.Message {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return errMsg(err)
	}
	s := c.srv
	s.conns.Add(1)
	go func() {
		defer s.conns.Done()
		s.serveConn(fds[0]) // its end is the peer's business
	}()
	return &proto.Rdup{FD: fds[1]}
}
