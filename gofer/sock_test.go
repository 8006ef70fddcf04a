package gofer

import (
	"net"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
)

// TestHostUDSOps checks that Tconnect and Tbind are each served only
// when allowed, on read-only servers (connect) as on read-write ones.
func TestHostUDSOps(t *testing.T) {
	cases := []struct {
		name              string
		readOnly          bool
		connect, bind     bool
		wantConn, wantBnd error
	}{
		{"connect only", false, true, false, nil, unix.EPERM},
		{"bind only", false, false, true, unix.EPERM, nil},
		{"both", false, true, true, nil, nil},
		{"read-only server connects", true, true, true, nil, unix.EROFS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, _ := writeTree(t)
			l, err := net.Listen("unix", filepath.Join(root, "h.sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				done <- Serve(Config{Root: root, ConnFD: fds[0], ReadOnly: c.readOnly, HostUDSConnect: c.connect, HostUDSBind: c.bind})
			}()
			cl, err := proto.NewClient(fds[1])
			if err != nil {
				t.Fatal(err)
			}
			defer func() { cl.Shutdown(); <-done }()
			rh, _, err := cl.Attach()
			if err != nil {
				t.Fatal(err)
			}
			fd, err := cl.Connect(rh, "h.sock", unix.SOCK_STREAM)
			if err != c.wantConn {
				t.Errorf("connect: %v, want %v", err, c.wantConn)
			}
			if err == nil {
				unix.Close(fd)
			}
			_, _, fd, err = cl.Bind(rh, "b.sock", unix.SOCK_STREAM, 0o700, proto.NoID, proto.NoID)
			if err != c.wantBnd {
				t.Errorf("bind: %v, want %v", err, c.wantBnd)
			}
			if err == nil {
				unix.Close(fd)
			}
		})
	}
}
