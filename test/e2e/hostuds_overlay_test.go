package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// udsSelfServe binds argv[1], connects to it from the same process and
// prints what went through, then whether the socket file is there.
const udsSelfServe = `
import os, socket, stat, sys
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(sys.argv[1])
l.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sys.argv[1])
a, _ = l.accept()
c.sendall(b"ping")
print("inside:", a.recv(100).decode(), stat.S_ISSOCK(os.lstat(sys.argv[1]).st_mode))
`

// hostUDSRootRun runs python3 with script and arg in a sandbox over the
// host's root (arg is then the same path inside), with extra flags.
func hostUDSRootRun(runsc string, flags []string, script, arg string) *exec.Cmd {
	args := append(append([]string(nil), flags...), "do", "--rootfs", "/", "--", "/usr/bin/python3", "-I", "-B", "-c", script, arg)
	cmd := exec.Command(runsc, args...)
	cmd.Env = baseEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// TestHostUDSOverlayRoot: a host process listens on a socket in the
// container's root, which the default overlay serves from its lower
// (gofer) layer; a sandboxed program connects to it with
// --host-uds=open (or all), as it does with --overlay=none or through a
// bind mount, and gets ECONNREFUSED without it (issue #3).
func TestHostUDSOverlayRoot(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	runsc := harness.RequireRunsc(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"open", []string{"--host-uds=open"}, "got: pong:ping"},
		{"all", []string{"--host-uds=all"}, "got: pong:ping"},
		{"open without overlay", []string{"--host-uds=open", "--overlay=none"}, "got: pong:ping"},
		{"none", []string{"--host-uds=none"}, "connect: ECONNREFUSED"},
		{"create only", []string{"--host-uds=create"}, "connect: ECONNREFUSED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.sock")
			servePong(t, path)
			out, err := hostUDSRootRun(runsc, tc.flags, udsClient, path).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tc.want {
				t.Errorf("client: %v\n%s\nwant %q", err, out, tc.want)
			}
		})
	}
}

// TestHostUDSOverlayRootBind: bind(2) in the overlay root makes a socket
// of the sandbox's own, even with --host-uds=create: sandbox processes
// connect to it, and the host's directory never gets a socket file (the
// overlay keeps the host root untouched; gVisor's memory overlay does
// the same). Bind mounts are where --host-uds=create makes host sockets
// (TestHostUDSCreate).
func TestHostUDSOverlayRootBind(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	runsc := harness.RequireRunsc(t)
	for _, hostUDS := range []string{"none", "create", "all"} {
		t.Run(hostUDS, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.sock")
			out, err := hostUDSRootRun(runsc, []string{"--host-uds=" + hostUDS}, udsSelfServe, path).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "inside: ping True" {
				t.Errorf("sandbox: %v\n%s", err, out)
			}
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("host has %s after the sandbox bound it: %v", path, err)
			}
		})
	}
}
