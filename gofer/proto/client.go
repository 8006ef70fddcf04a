package proto

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sys/unix"
)

// Client is the Sentry's end of a gofer connection. It is safe for use by
// many goroutines at once: each call sends its request tagged with a fresh
// tag and waits for the response with that tag, which a single reader
// goroutine receives and hands over.
//
// Every error a call returns satisfies errors.As(err, new(unix.Errno)):
// errors from the gofer are bare unix.Errno values, exactly as the host
// reported them; a broken or shut connection, or a malformed response,
// wraps unix.EIO.
type Client struct {
	conn *Conn

	// mu guards the fields below. It is never held across a syscall.
	mu      sync.Mutex
	pending map[uint32]chan result
	nextTag uint32
	dead    error // non-nil once the connection is unusable

	shutdownOnce sync.Once
	readerDone   chan struct{}
}

type result struct {
	m   Message
	err error
}

var resultChans = sync.Pool{New: func() any { return make(chan result, 1) }}

// NewClient takes ownership of fd, a connected SOCK_SEQPACKET socket whose
// peer is a gofer, and starts the client's reader goroutine. On error fd
// is closed.
func NewClient(fd int) (*Client, error) {
	conn, err := NewConn(fd)
	if err != nil {
		return nil, err
	}
	c := &Client{
		conn:       conn,
		pending:    make(map[uint32]chan result),
		nextTag:    1,
		readerDone: make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// eio wraps unix.EIO with what went wrong.
func eio(format string, args ...any) error {
	return fmt.Errorf("gofer: %s: %w", fmt.Sprintf(format, args...), unix.EIO)
}

func (c *Client) readLoop() {
	defer close(c.readerDone)
	buf := make([]byte, MaxMessage)
	for {
		tag, m, err := c.conn.ReadMessage(buf)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				if de.HasTag {
					c.deliver(de.Tag, result{err: eio("bad response: %v", de.Err)})
				}
				continue
			}
			if err == io.EOF {
				c.fail(eio("connection closed by gofer"))
			} else if err == ErrClosed {
				c.fail(eio("client shut down"))
			} else {
				c.fail(eio("%v", err))
			}
			return
		}
		if !c.deliver(tag, result{m: m}) {
			// Nobody is waiting for this tag; do not leak what it donated.
			closeMessageFD(m)
		}
	}
}

// deliver hands r to the caller waiting on tag, if any.
func (c *Client) deliver(tag uint32, r result) bool {
	c.mu.Lock()
	ch, ok := c.pending[tag]
	if ok {
		delete(c.pending, tag)
	}
	c.mu.Unlock()
	if ok {
		ch <- r // buffered; its caller takes exactly one result
	}
	return ok
}

// fail marks the client dead and fails every waiting call with err.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.dead == nil {
		c.dead = err
	}
	pending := c.pending
	c.pending = make(map[uint32]chan result)
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- result{err: err}
	}
}

func closeMessageFD(m Message) {
	if fm, ok := m.(fdMessage); ok {
		if fd := *fm.fdPtr(); fd >= 0 {
			unix.Close(fd)
		}
	}
}

// call sends req and waits for its response, which must have type want or
// be Rerror.
func (c *Client) call(req Message, want MsgType) (Message, error) {
	return c.callEither(req, want, want)
}

// callEither is call for a request with two possible responses.
func (c *Client) callEither(req Message, want, alt MsgType) (Message, error) {
	ch := resultChans.Get().(chan result)
	c.mu.Lock()
	if c.dead != nil {
		err := c.dead
		c.mu.Unlock()
		resultChans.Put(ch)
		return nil, err
	}
	tag := c.nextTag
	for {
		if _, busy := c.pending[tag]; !busy {
			break
		}
		tag++
	}
	c.nextTag = tag + 1
	c.pending[tag] = ch
	c.mu.Unlock()

	if err := c.conn.WriteMessage(tag, req); err != nil {
		c.mu.Lock()
		_, stillPending := c.pending[tag]
		delete(c.pending, tag)
		c.mu.Unlock()
		if !stillPending {
			// The reader failed us concurrently and already sent a result.
			<-ch
		}
		resultChans.Put(ch)
		if err == ErrClosed {
			return nil, eio("client shut down")
		}
		return nil, eio("%v", err)
	}
	r := <-ch
	resultChans.Put(ch)
	if r.err != nil {
		return nil, r.err
	}
	switch m := r.m.(type) {
	case *Rerror:
		return nil, unix.Errno(m.Errno)
	default:
		if m.Type() != want && m.Type() != alt {
			closeMessageFD(m)
			return nil, eio("%v answered with %v", req.Type(), m.Type())
		}
		return m, nil
	}
}

// Attach returns a handle to the root of the served tree (attach point 0,
// the container's root).
func (c *Client) Attach() (Handle, Attr, error) {
	return c.AttachMount(0)
}

// AttachMount returns a handle to the root of attach point mount: 0 is
// the container's root, i > 0 the gofer's i-th bind mount. An attach
// point the gofer does not have fails with ENOENT.
func (c *Client) AttachMount(mount uint32) (Handle, Attr, error) {
	m, err := c.call(&Tattach{Version: Version, Mount: mount}, MsgRattach)
	if err != nil {
		return 0, Attr{}, err
	}
	r := m.(*Rattach)
	return r.Root, r.Attr, nil
}

// Walk looks up one component, name, in directory dir and returns a new
// handle to it. A symlink is not followed: the handle names the symlink.
// name must be a single component: "", ".", "..", and names holding '/'
// or NUL fail with EINVAL, names longer than NAME_MAX with ENAMETOOLONG.
func (c *Client) Walk(dir Handle, name string) (Handle, Attr, error) {
	if len(name) > NameMax {
		return 0, Attr{}, unix.ENAMETOOLONG
	}
	if !ValidName(name) {
		return 0, Attr{}, unix.EINVAL
	}
	m, err := c.call(&Twalk{Dir: dir, Name: name}, MsgRwalk)
	if err != nil {
		return 0, Attr{}, err
	}
	r := m.(*Rwalk)
	return r.Node, r.Attr, nil
}

// Stat returns the attributes of h (not following a symlink).
func (c *Client) Stat(h Handle) (Attr, error) {
	m, err := c.call(&Tstat{Node: h}, MsgRstat)
	if err != nil {
		return Attr{}, err
	}
	return m.(*Rstat).Attr, nil
}

// Open returns a host fd for h, opened for reading. The fd belongs to the
// caller. Write access or O_TRUNC fail with EROFS (the gofer is read-only);
// other flags are for the caller's own file description and are ignored.
func (c *Client) Open(h Handle, flags int) (int, error) {
	m, err := c.call(&Topen{Node: h, Flags: uint32(flags)}, MsgRopen)
	if err != nil {
		return -1, err
	}
	return m.(*Ropen).FD, nil
}

// Readlink returns the target of the symlink h.
func (c *Client) Readlink(h Handle) (string, error) {
	m, err := c.call(&Treadlink{Node: h}, MsgRreadlink)
	if err != nil {
		return "", err
	}
	return m.(*Rreadlink).Target, nil
}

// Getdents returns every entry of directory h, without "." and "..",
// fetching as many pages as it takes.
func (c *Client) Getdents(h Handle) ([]Dirent, error) {
	var all []Dirent
	var off uint64
	for {
		m, err := c.call(&Tgetdents{Dir: h, Offset: off}, MsgRgetdents)
		if err != nil {
			return nil, err
		}
		r := m.(*Rgetdents)
		all = append(all, r.Entries...)
		if r.EOF {
			return all, nil
		}
		if len(r.Entries) == 0 {
			// A page that makes no progress would loop forever.
			return nil, eio("getdents: empty page before end of directory")
		}
		off = r.Next
	}
}

// StatFS returns statfs(2) of the filesystem holding h.
func (c *Client) StatFS(h Handle) (unix.Statfs_t, error) {
	m, err := c.call(&Tstatfs{Node: h}, MsgRstatfs)
	if err != nil {
		return unix.Statfs_t{}, err
	}
	return m.(*Rstatfs).Statfs, nil
}

// Close releases h. Using h afterwards fails with EBADF.
func (c *Client) Close(h Handle) error {
	_, err := c.call(&Tclose{Node: h}, MsgRclose)
	return err
}

// Dup asks the gofer for a second, independent connection to the same
// tree and returns a client for it. Handles are per connection.
func (c *Client) Dup() (*Client, error) {
	m, err := c.call(&Tdup{}, MsgRdup)
	if err != nil {
		return nil, err
	}
	nc, err := NewClient(m.(*Rdup).FD)
	if err != nil {
		return nil, eio("dup: %v", err)
	}
	return nc, nil
}

// Shutdown closes the connection. Calls in progress and later calls fail
// with an error wrapping EIO. The gofer releases every handle of the
// connection when it sees it close.
func (c *Client) Shutdown() {
	c.shutdownOnce.Do(func() {
		c.conn.Close()
		<-c.readerDone
	})
}
