package gofer

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
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
	// ReadOnly refuses every change to the tree with EROFS.
	ReadOnly bool
	// HostUDS serves Tbind and Tconnect: sockets on host paths of the
	// tree, reaching (or offered to) host processes. Without it both
	// fail with EPERM.
	HostUDS bool
	// HostUDSConnect and HostUDSBind serve one of the two each
	// (runsc's --host-uds=open and =create).
	HostUDSConnect, HostUDSBind bool
	// Mounts are further attach points (bind mounts): Mounts[i] is
	// attach point i+1 (Tattach.Mount).
	Mounts []Mount
}

// Mount is an attach point besides the root: a bind mount's source.
type Mount struct {
	// Path is the source on the host, a directory or any other file;
	// after ConfineMounts, the path it returned. Symlinks in it are
	// followed: it comes from the trusted caller, not the sandbox.
	Path string
	// ReadOnly refuses every change under the attach point with EROFS.
	ReadOnly bool
	// Recursive brings the source's submounts along (an rbind); only
	// ConfineMounts, which clones the source, looks at it.
	Recursive bool
}

// Serve serves cfg.Root on cfg.ConnFD, and on every connection made from
// it with Tdup, until all of them have closed. A clean hang-up by the
// Sentry is not an error.
func Serve(cfg Config) error {
	s, err := NewServerMounts(append([]Mount{{Path: cfg.Root, ReadOnly: cfg.ReadOnly}}, cfg.Mounts...))
	if err != nil {
		unix.Close(cfg.ConnFD)
		return err
	}
	if cfg.HostUDS || cfg.HostUDSConnect || cfg.HostUDSBind {
		if err := s.AllowHostUDSOps(cfg.HostUDS || cfg.HostUDSConnect, cfg.HostUDS || cfg.HostUDSBind); err != nil {
			s.Close()
			unix.Close(cfg.ConnFD)
			return err
		}
	}
	defer s.Close()
	return s.ServeConn(cfg.ConnFD)
}

// maxWorkers bounds the requests of one connection served at once; the
// connection's readers wait (and the Sentry's sends back up) beyond it.
const maxWorkers = 16

// Server serves host trees, its attach points, to any number of
// connections: the root (attach point 0) and bind mounts (1, 2, ...).
type Server struct {
	// mounts are the attach points' root nodes; mounts[0] is the root.
	mounts []*node
	// readOnly says every attach point is read-only.
	readOnly bool
	idx      nameIndex      // where the non-directory nodes were found
	conns    sync.WaitGroup // connections being served

	// hostConnect and hostBind serve Tconnect and Tbind.
	hostConnect, hostBind bool

	// cwdMu serialises the operations that must name a socket by path
	// (bind, connect have no *at form): they fchdir into the directory,
	// act, and fchdir back to cwdFD, an O_PATH fd of the starting working
	// directory (-1 on a read-only server without host sockets).
	cwdMu sync.Mutex
	cwdFD int
}

// NewServer opens root (an O_PATH fd kept for the server's life) to serve
// it, read-only or read-write.
func NewServer(root string, readOnly bool) (*Server, error) {
	return NewServerMounts([]Mount{{Path: root, ReadOnly: readOnly}})
}

// NewServerMounts opens its attach points (O_PATH fds kept for the
// server's life) to serve them: mounts[0] is the root, which must be a
// directory; mounts[i] is attach point i.
func NewServerMounts(mounts []Mount) (*Server, error) {
	if len(mounts) == 0 {
		return nil, errors.New("gofer: no root to serve")
	}
	s := &Server{readOnly: true, cwdFD: -1}
	for _, m := range mounts {
		s.readOnly = s.readOnly && m.ReadOnly
	}
	fail := func(err error) (*Server, error) {
		for _, n := range s.mounts {
			n.decRef()
		}
		if s.cwdFD >= 0 {
			unix.Close(s.cwdFD)
		}
		return nil, err
	}
	if !s.readOnly {
		var err error
		if s.cwdFD, err = unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return fail(fmt.Errorf("gofer: open working directory: %w", err))
		}
	}
	for i, m := range mounts {
		n, err := s.openMount(i, m)
		if err != nil {
			return fail(fmt.Errorf("gofer: attach point %d: %w", i, err))
		}
		if i == 0 && n.mode != unix.S_IFDIR {
			n.decRef()
			return fail(fmt.Errorf("gofer: root %q: %w", m.Path, unix.ENOTDIR))
		}
		s.mounts = append(s.mounts, n)
	}
	return s, nil
}

// openMount makes the root node of attach point i. A directory is its
// own O_PATH fd. Anything else is reached by name in its directory (a
// node nobody has a handle to), as it is reopened that way; it must be
// the file that opening the path resolved to.
func (s *Server) openMount(i int, m Mount) (*node, error) {
	p, err := filepath.EvalSymlinks(m.Path)
	if err != nil {
		return nil, err
	}
	m.Path = p
	fd, err := unix.Open(m.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", m.Path, err)
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat %q: %w", m.Path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		n := newNode(fd, &st, &s.idx, nil, "")
		n.ro, n.mount = m.ReadOnly, uint32(i)
		return n, nil
	}
	unix.Close(fd)
	dir, name := filepath.Split(filepath.Clean(m.Path))
	if dir == "" {
		dir = "."
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", dir, err)
	}
	var dst unix.Stat_t
	if err := fstat(dfd, &dst); err != nil {
		unix.Close(dfd)
		return nil, fmt.Errorf("stat %q: %w", dir, err)
	}
	parent := newNode(dfd, &dst, &s.idx, nil, "")
	parent.ro, parent.mount = m.ReadOnly, uint32(i)
	defer parent.decRef()
	n, _, err := walk(parent, name)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", m.Path, err)
	}
	if !n.same(&st) {
		n.decRef()
		return nil, fmt.Errorf("open %q: replaced while opened: %w", m.Path, unix.ESTALE)
	}
	return n, nil
}

// AllowHostUDS makes the server serve Tbind and Tconnect (Config.HostUDS).
// Call it before serving.
func (s *Server) AllowHostUDS() {
	if err := s.AllowHostUDSOps(true, true); err != nil {
		panic(fmt.Sprintf("gofer: %v", err))
	}
}

// AllowHostUDSOps makes the server serve Tconnect (connect) and Tbind
// (bind). Call it before serving. A read-only server then keeps a
// working directory fd too, to come back to after naming a socket.
func (s *Server) AllowHostUDSOps(connect, bind bool) error {
	if (connect || bind) && s.cwdFD < 0 {
		fd, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("gofer: open working directory: %w", err)
		}
		s.cwdFD = fd
	}
	s.hostConnect, s.hostBind = connect, bind
	return nil
}

// Close waits for every connection to end, then releases the root.
func (s *Server) Close() {
	s.conns.Wait()
	for _, n := range s.mounts {
		n.decRef()
	}
	if s.cwdFD >= 0 {
		unix.Close(s.cwdFD)
	}
}

// ServeConn serves the connection fd (taking ownership of it) until the
// peer hangs up or the connection breaks, then waits until every
// connection of the server (including those made by Tdup) has ended.
// Every handle of a connection is released at its end.
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
	c := &conn{srv: s, pc: pc}
	c.mu.Lock()
	c.startWorker()
	c.mu.Unlock()
	c.workers.Wait()
	c.nodes.clear()
	pc.Close()
	return c.err
}

// conn is one connection: its handles and the workers serving it.
//
// Workers take turns reading (readMu): the one that gets a request lets
// go of readMu and serves the request itself, so a request costs no
// goroutine switch, while another worker is already reading the next one.
// A worker is started when the last one waiting to read takes a request,
// up to maxWorkers; workers live as long as the connection.
type conn struct {
	srv   *Server
	pc    *proto.Conn
	nodes nodeTable

	readMu sync.Mutex // held while reading a request

	// mu guards the fields below.
	mu       sync.Mutex
	nworkers int  // workers started
	nreading int  // workers waiting for readMu or reading
	done     bool // the connection has ended
	err      error

	workers sync.WaitGroup
}

// startWorker starts a worker that begins by reading.
//
// Preconditions: c.mu is held.
func (c *conn) startWorker() {
	c.nworkers++
	c.nreading++
	c.workers.Add(1)
	go c.work()
}

func (c *conn) work() {
	defer c.workers.Done()
	buf := make([]byte, proto.MaxRequest)
	for {
		c.readMu.Lock()
		tag, m, err := c.next(buf)
		c.readMu.Unlock()

		c.mu.Lock()
		c.nreading--
		if err != nil && !c.done {
			c.done = true
			if err != io.EOF {
				c.err = fmt.Errorf("gofer: %w", err)
			}
		}
		if c.done {
			c.mu.Unlock()
			return
		}
		if c.nreading == 0 && c.nworkers < maxWorkers {
			c.startWorker()
		}
		c.mu.Unlock()

		c.reply(tag, c.handle(m))

		c.mu.Lock()
		c.nreading++
		c.mu.Unlock()
	}
}

// next reads the next well-formed request, answering malformed ones with
// EINVAL. It returns an error once the connection has ended.
//
// Preconditions: c.readMu is held.
func (c *conn) next(buf []byte) (uint32, proto.Message, error) {
	for {
		c.mu.Lock()
		done := c.done
		c.mu.Unlock()
		if done {
			return 0, nil, io.EOF
		}
		tag, m, err := c.pc.ReadMessage(buf)
		if err == nil {
			return tag, m, nil
		}
		var de *proto.DecodeError
		if !errors.As(err, &de) {
			return 0, nil, err
		}
		if de.HasTag {
			c.reply(de.Tag, &proto.Rerror{Errno: uint32(unix.EINVAL)})
		}
	}
}

// reply sends r and closes the fd r donated, if any: the peer now has its
// own copy (or, if sending failed, nobody wants it).
func (c *conn) reply(tag uint32, r proto.Message) {
	c.pc.WriteMessage(tag, r) // a broken connection shows up in the reader
	if fd := proto.MessageFD(r); fd >= 0 {
		unix.Close(fd)
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
		if uint64(m.Mount) >= uint64(len(c.srv.mounts)) {
			return errMsg(unix.ENOENT)
		}
		root := c.srv.mounts[m.Mount]
		var st unix.Stat_t
		if err := fstat(root.fd, &st); err != nil {
			return errMsg(err)
		}
		root.incRef()
		h := c.nodes.add(root)
		return &proto.Rattach{Root: proto.Handle(h), Attr: proto.AttrFromStat(&st)}
	case *proto.Tclose:
		if !c.nodes.remove(uint64(m.Node)) {
			return errMsg(unix.EBADF)
		}
		return &proto.Rclose{}
	case *proto.Tdup:
		return c.dup()
	}
	if r, ok := c.handleWrite(m); ok {
		return r
	}

	// Everything else works on one node.
	var h proto.Handle
	switch m := m.(type) {
	case *proto.Twalk:
		h = m.Dir
	case *proto.TwalkPath:
		h = m.Dir
	case *proto.TwalkOpen:
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
	case *proto.TwalkPath:
		return c.walkPath(n, m.Names, false)
	case *proto.TwalkOpen:
		return c.walkPath(n, m.Names, true)
	case *proto.Tstat:
		var st unix.Stat_t
		if err := fstat(n.fd, &st); err != nil {
			return errMsg(err)
		}
		return &proto.Rstat{Attr: proto.AttrFromStat(&st)}
	case *proto.Topen:
		fd, err := openFile(n, int(m.Flags), c.srv.readOnly || n.ro)
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
