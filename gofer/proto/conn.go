package proto

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Conn is one end of a SOCK_SEQPACKET connection carrying messages and
// donated fds. Sends may be made from many goroutines at once (each message
// is one datagram, which the kernel delivers whole); receives from one
// goroutine at a time. The socket is non-blocking and parked in Go's poller,
// so a goroutine waiting on it holds no OS thread, and Close wakes it.
type Conn struct {
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool
}

// oobSize is room for the one fd a message may carry, plus a spare so that
// a peer sending two is noticed (and both are closed) instead of truncated.
var oobSize = unix.CmsgSpace(2 * 4)

// NewConn takes ownership of fd, which must be a connected SOCK_SEQPACKET
// unix socket. On error fd is closed.
func NewConn(fd int) (*Conn, error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("gofer connection fd %d: %w", fd, err)
	}
	if typ != unix.SOCK_SEQPACKET {
		unix.Close(fd)
		return nil, fmt.Errorf("gofer connection fd %d: socket type %d, want SOCK_SEQPACKET", fd, typ)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("gofer connection fd %d: set non-blocking: %w", fd, err)
	}
	f := os.NewFile(uintptr(fd), "gofer-conn")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("gofer connection fd %d: %w", fd, err)
	}
	return &Conn{f: f, rc: rc}, nil
}

var sendBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// WriteMessage sends m with tag. If m donates an fd (Ropen, Rdup), the fd is
// attached; the caller still owns its copy and closes it afterwards.
func (c *Conn) WriteMessage(tag uint32, m Message) error {
	bp := sendBufs.Get().(*[]byte)
	defer sendBufs.Put(bp)
	b, err := Encode((*bp)[:0], tag, m)
	if err != nil {
		return err
	}
	*bp = b
	var oob []byte
	if fm, ok := m.(fdMessage); ok {
		fd := *fm.fdPtr()
		if fd < 0 {
			return fmt.Errorf("send %v: no fd to donate", m.Type())
		}
		oob = unix.UnixRights(fd)
	}
	var serr error
	err = c.rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, oob, nil, unix.MSG_NOSIGNAL)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		if c.closed.Load() {
			return ErrClosed
		}
		return fmt.Errorf("send %v: %w", m.Type(), err)
	}
	return nil
}

// ReadMessage receives one message into buf (the returned message does
// not refer to it). A message longer than buf is refused as too large: a
// reader of responses needs MaxMessage bytes, a reader of requests
// MaxRequest. Fds that arrive with a message that does not carry one are
// closed. A *DecodeError means this message was bad but the connection is
// fine; io.EOF means the peer hung up; any other error means the
// connection is unusable.
func (c *Conn) ReadMessage(buf []byte) (uint32, Message, error) {
	if len(buf) < headerSize {
		return 0, nil, fmt.Errorf("receive: buffer of %d bytes is too small", len(buf))
	}
	var oobArr [64]byte
	oob := oobArr[:oobSize]
	var n, oobn, flags int
	var rerr error
	// A longer datagram is cut short and flagged MSG_TRUNC.
	rbuf := buf[:min(len(buf), MaxMessage)]
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, flags, _, rerr = unix.Recvmsg(int(fd), rbuf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		if c.closed.Load() {
			return 0, nil, ErrClosed
		}
		return 0, nil, fmt.Errorf("receive: %w", err)
	}
	fds, ferr := parseRights(oob[:oobn])
	if n == 0 && len(fds) == 0 {
		return 0, nil, io.EOF
	}
	if ferr == nil && flags&unix.MSG_CTRUNC != 0 {
		ferr = errors.New("control data truncated")
	}
	if ferr == nil && flags&unix.MSG_TRUNC != 0 {
		ferr = errTooLarge
	}
	if ferr != nil {
		closeAll(fds)
		de := &DecodeError{Err: ferr}
		if n >= headerSize {
			d := decoder{buf: buf[:n]}
			de.Tag, de.HasTag = d.u32(), true
		}
		return 0, nil, de
	}
	tag, m, err := Decode(buf[:n])
	if err != nil {
		closeAll(fds)
		return tag, nil, err
	}
	fm, wantFD := m.(fdMessage)
	switch {
	case wantFD && len(fds) == 1:
		*fm.fdPtr() = fds[0]
	case !wantFD && len(fds) == 0:
	default:
		closeAll(fds)
		return tag, nil, &DecodeError{Tag: tag, HasTag: true,
			Err: fmt.Errorf("%v: %d fds attached", m.Type(), len(fds))}
	}
	return tag, m, nil
}

// ErrClosed is returned by ReadMessage and WriteMessage after Close.
var ErrClosed = errors.New("gofer connection closed")

// parseRights returns every fd in the control data. It returns the fds it
// could find even on error, so that the caller can close them.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("control data: %w", err)
	}
	var fds []int
	var ferr error
	for i := range msgs {
		if msgs[i].Header.Level != unix.SOL_SOCKET || msgs[i].Header.Type != unix.SCM_RIGHTS {
			ferr = fmt.Errorf("unexpected control message %d/%d", msgs[i].Header.Level, msgs[i].Header.Type)
			continue
		}
		r, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			ferr = fmt.Errorf("control data: %w", err)
			continue
		}
		fds = append(fds, r...)
	}
	return fds, ferr
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// Close shuts the connection. A goroutine blocked in ReadMessage or
// WriteMessage returns an error; the fd is closed once none is using it.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return c.f.Close()
}
