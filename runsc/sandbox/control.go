package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/moat-sandbox/moat/runsc/boot"
	"golang.org/x/sys/unix"
)

// ErrNoSandbox is Call's error when nothing answers on the control
// socket: the sandbox has exited (or never started).
var ErrNoSandbox = errors.New("the sandbox is not running")

// Call makes one control call to the sandbox whose state directory is
// stateDir and returns its answer. timeout bounds the wait for the answer
// (0: no bound, for wait). An error the sandbox answers with is returned
// as an error.
func Call(stateDir string, req boot.Request, timeout time.Duration) (*boot.Response, error) {
	return CallFDs(stateDir, req, nil, timeout)
}

// CallFDs is Call for a request that carries descriptors (one SCM_RIGHTS
// message with the request), such as exec's stdio.
func CallFDs(stateDir string, req boot.Request, fds []int, timeout time.Duration) (*boot.Response, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	defer unix.Close(fd)
	path := filepath.Join(stateDir, ControlSocket)
	err = withShortPath(path, func(p string) error {
		return unix.Connect(fd, &unix.SockaddrUnix{Name: p})
	})
	if errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENOENT) {
		return nil, ErrNoSandbox
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to the sandbox: %w", err)
	}
	if timeout > 0 {
		tv := unix.NsecToTimeval(timeout.Nanoseconds())
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	}
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(fd, b, oob, nil, 0); err != nil {
		if errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
			return nil, ErrNoSandbox
		}
		return nil, fmt.Errorf("control call %s: %w", req.Method, err)
	}
	buf := make([]byte, boot.MaxMessage)
	var n int
	for {
		n, _, _, _, err = unix.Recvmsg(fd, buf, nil, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.ECONNRESET) {
		// Connected but never accepted: the sandbox exited meanwhile.
		return nil, ErrNoSandbox
	}
	if errors.Is(err, unix.EAGAIN) {
		return nil, fmt.Errorf("control call %s: no answer in %v", req.Method, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("control call %s: %w", req.Method, err)
	}
	if n == 0 {
		// Closed without an answer: the sandbox exited meanwhile.
		return nil, ErrNoSandbox
	}
	var resp boot.Response
	if err := json.Unmarshal(buf[:n], &resp); err != nil {
		return nil, fmt.Errorf("control call %s: bad answer: %w", req.Method, err)
	}
	if resp.Error != "" {
		return &resp, errors.New(resp.Error)
	}
	return &resp, nil
}
