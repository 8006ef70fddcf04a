package shim

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// consoleSocket receives the pty master runsc sends for a terminal
// process, as runc's callers expect: one SCM_RIGHTS message on a unix
// socket named by --console-socket.
type consoleSocket struct {
	dir string
	l   *net.UnixListener
}

// newConsoleSocket listens on a new socket in a private directory.
func newConsoleSocket() (*consoleSocket, error) {
	dir, err := os.MkdirTemp("", "moat-pty")
	if err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "pty.sock"), Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("listening for the console: %w", err)
	}
	return &consoleSocket{dir: dir, l: l}, nil
}

// Path is the socket's path.
func (c *consoleSocket) Path() string { return filepath.Join(c.dir, "pty.sock") }

// Receive accepts one connection and returns the descriptor sent on it.
func (c *consoleSocket) Receive(ctx context.Context) (*os.File, error) {
	go func() {
		<-ctx.Done()
		c.l.Close()
	}()
	conn, err := c.l.AcceptUnix()
	if err != nil {
		return nil, fmt.Errorf("accepting the console connection: %w", err)
	}
	defer conn.Close()
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("receiving the console: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("receiving the console: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	if len(fds) == 0 {
		return nil, fmt.Errorf("receiving the console: no descriptor in the message")
	}
	for _, fd := range fds[1:] {
		unix.Close(fd)
	}
	// Non-blocking, so that reads go through the poller and Close
	// interrupts them.
	unix.SetNonblock(fds[0], true)
	return os.NewFile(uintptr(fds[0]), "pty-master"), nil
}

// Close removes the socket.
func (c *consoleSocket) Close() {
	c.l.Close()
	os.RemoveAll(c.dir)
}
