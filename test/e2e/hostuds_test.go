package e2e

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// udsClient connects to the unix socket argv[1], sends "ping", half-closes
// and prints what comes back (or the connect error's errno name).
const udsClient = `
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", errno.errorcode[e.errno])
    sys.exit(0)
s.sendall(b"ping")
s.shutdown(socket.SHUT_WR)
data = b""
while True:
    d = s.recv(100)
    if not d:
        break
    data += d
print("got:", data.decode())
`

// udsServer binds argv[1], listens, accepts one connection, echoes what
// it reads with a prefix and prints what it saw.
const udsServer = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
d = c.recv(100)
c.sendall(b"echo:" + d)
c.close()
print("served:", d.decode())
`

// lockedBuffer is a bytes.Buffer a command writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hostUDSRun runs python3 with script and arg natively (path given as
// is) or in the sandbox with dir mounted at /v (then arg names /v/...).
func hostUDSRun(t *testing.T, runsc, hostUDS, dir, script, arg string) *exec.Cmd {
	t.Helper()
	py := "/usr/bin/python3"
	if runsc == "" {
		return exec.Command(py, "-I", "-B", "-c", script, filepath.Join(dir, arg))
	}
	args := []string{"--host-uds=" + hostUDS, "do", "--rootfs", "/", "--volume", dir + ":/v", "--", py, "-I", "-B", "-c", script, "/v/" + arg}
	cmd := exec.Command(runsc, args...)
	cmd.Env = baseEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// servePong listens on the unix socket path (closed when t ends), accepts
// one connection, reads it to EOF and answers "pong:" and what it read.
func servePong(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var in bytes.Buffer
		buf := make([]byte, 100)
		for {
			n, err := c.Read(buf)
			in.Write(buf[:n])
			if err != nil {
				break
			}
		}
		c.Write(append([]byte("pong:"), in.Bytes()...))
	}()
}

// TestHostUDSConnect: a host process listens on a socket in a directory
// bind-mounted into the sandbox; a sandboxed program connects and the two
// exchange data both ways with --host-uds=open (or all), and get
// ECONNREFUSED without it (issue #3).
func TestHostUDSConnect(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	runsc := harness.RequireRunsc(t)
	for _, tc := range []struct {
		name, hostUDS, want string
		sandboxed           bool
	}{
		{"native", "", "got: pong:ping", false},
		{"open", "open", "got: pong:ping", true},
		{"all", "all", "got: pong:ping", true},
		{"none", "none", "connect: ECONNREFUSED", true},
		{"create only", "create", "connect: ECONNREFUSED", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			servePong(t, filepath.Join(dir, "s.sock"))
			r := runsc
			if !tc.sandboxed {
				r = ""
			}
			out, err := hostUDSRun(t, r, tc.hostUDS, dir, udsClient, "s.sock").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tc.want {
				t.Errorf("client: %v\n%s\nwant %q", err, out, tc.want)
			}
		})
	}
}

// TestHostUDSCreate: a sandboxed program binds and listens on a socket in
// a bind-mounted directory with --host-uds=create (or all) and a host
// process connects to it and exchanges data; without it the socket file
// exists on the host but nothing answers there.
func TestHostUDSCreate(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	runsc := harness.RequireRunsc(t)
	for _, tc := range []struct {
		name, hostUDS string
		sandboxed     bool
		reachable     bool
	}{
		{"native", "", false, true},
		{"create", "create", true, true},
		{"all", "all", true, true},
		{"open only", "open", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runsc
			if !tc.sandboxed {
				r = ""
			}
			cmd := hostUDSRun(t, r, tc.hostUDS, dir, udsServer, "c.sock")
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if cmd.Process != nil {
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					cmd.Wait()
				}
			}()
			path := filepath.Join(dir, "c.sock")
			// Wait for "listening": the socket is bound and listens.
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(out.String(), "listening") {
				if time.Now().After(deadline) {
					t.Fatalf("server never listened:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSocket == 0 {
				t.Fatalf("socket file on the host: %v %v", st, err)
			}
			c, err := net.DialTimeout("unix", path, 5*time.Second)
			if !tc.reachable {
				if err == nil {
					c.Close()
					t.Fatal("a host process reached a sandbox socket without --host-uds=create")
				}
				return
			}
			if err != nil {
				t.Fatalf("host connect: %v\n%s", err, out.String())
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write([]byte("hello")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 100)
			n, err := c.Read(buf)
			if err != nil || string(buf[:n]) != "echo:hello" {
				t.Errorf("host read %q %v", buf[:n], err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				cmd.Process = nil
				if err != nil || !strings.Contains(out.String(), "served: hello") {
					t.Errorf("server: %v\n%s", err, out.String())
				}
			case <-time.After(30 * time.Second):
				t.Errorf("server did not exit:\n%s", out.String())
			}
		})
	}
}
