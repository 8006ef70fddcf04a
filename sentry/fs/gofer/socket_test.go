package gofer

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	gofersrv "github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/gofer/gofertest"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/socket"
	sunix "github.com/moat-sandbox/moat/sentry/socket/unix"
)

// sockCtx is a task for socket calls over a gofer tree.
type sockCtx struct {
	*fstest.Context
	fsc *fs.FSContext
}

func (c sockCtx) FSContext() *fs.FSContext { return c.fsc }

// serveUDS serves dir read-write with the gofer allowing host (connect,
// bind) and the file system allowing h, and returns a task rooted there.
func serveUDS(t *testing.T, dir string, connect, bind bool, h HostUDS) sockCtx {
	t.Helper()
	srv, err := gofersrv.NewServer(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AllowHostUDSOps(connect, bind); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	client := gofertest.Serve(t, srv)
	f, err := NewWritable(client)
	if err != nil {
		t.Fatal(err)
	}
	SetHostUDS(f, h)
	root := fs.NewMountNamespace(f, fs.MountFlags{}).Root()
	return sockCtx{Context: fstest.NewContext(), fsc: fs.NewFSContext(root, root, 0o022)}
}

func sockAddr(path string) []byte {
	return append([]byte{byte(unix.AF_UNIX), 0}, path...)
}

// exchange writes out on f and reads the reply.
func exchange(t *testing.T, ctx sockCtx, f *fs.FileDescription, out string) string {
	t.Helper()
	s := socket.FromFile(f)
	if _, err := s.SendMsg(ctx, []byte(out), socket.SendOptions{Blocking: true}); err != nil {
		t.Fatalf("send: %v", err)
	}
	buf := make([]byte, 64)
	r, err := s.RecvMsg(ctx, buf, socket.RecvOptions{Blocking: true})
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return string(buf[:r.N])
}

// TestConnectHostSocket connects sandbox sockets to a host listener in
// the served tree, as --host-uds=open allows.
func TestConnectHostSocket(t *testing.T) {
	cases := []struct {
		name          string
		goferOK, fsOK bool
		wantErr       error
	}{
		{"allowed", true, true, nil},
		{"file system refuses", true, false, unix.ECONNREFUSED},
		{"gofer refuses", false, true, unix.ECONNREFUSED},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				buf := make([]byte, 64)
				n, _ := conn.Read(buf)
				conn.Write(append([]byte("pong:"), buf[:n]...))
			}()
			ctx := serveUDS(t, dir, c.goferOK, true, HostUDS{Connect: c.fsOK})
			ns := sunix.NewNamespace()
			f := sunix.New(ctx, ns, unix.SOCK_STREAM, 0)
			defer f.DecRef()
			err = socket.FromFile(f).Connect(ctx, sockAddr("/s.sock"), true)
			if err != c.wantErr {
				t.Fatalf("connect: %v, want %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if got := exchange(t, ctx, f, "ping"); got != "pong:ping" {
				t.Errorf("reply %q", got)
			}
			peer, err := socket.FromFile(f).PeerName(ctx)
			if err != nil || string(peer[2:]) != "/s.sock\x00" {
				t.Errorf("peer name %q %v", peer, err)
			}
		})
	}
}

// TestBindHostSocket binds sandbox sockets on the served tree as host
// sockets host processes connect to, as --host-uds=create allows.
func TestBindHostSocket(t *testing.T) {
	for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_SEQPACKET} {
		t.Run(map[int]string{unix.SOCK_STREAM: "stream", unix.SOCK_SEQPACKET: "seqpacket"}[typ], func(t *testing.T) {
			dir := t.TempDir()
			ctx := serveUDS(t, dir, true, true, HostUDS{Bind: true})
			ns := sunix.NewNamespace()
			f := sunix.New(ctx, ns, typ, 0)
			defer f.DecRef()
			s := socket.FromFile(f)
			if err := s.Bind(ctx, sockAddr("/c.sock")); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(dir, "c.sock"))
			if err != nil || st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o755 {
				t.Fatalf("host socket file: %v %v", st, err)
			}
			// Before listen(2), the host sees no listener.
			hostFD, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(hostFD)
			if err := unix.Connect(hostFD, &unix.SockaddrUnix{Name: filepath.Join(dir, "c.sock")}); err != unix.ECONNREFUSED {
				t.Errorf("host connect before listen: %v, want ECONNREFUSED", err)
			}
			if err := s.Listen(ctx, 4); err != nil {
				t.Fatal(err)
			}
			hostFD2, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(hostFD2)
			if err := unix.Connect(hostFD2, &unix.SockaddrUnix{Name: filepath.Join(dir, "c.sock")}); err != nil {
				t.Fatalf("host connect: %v", err)
			}
			// The sandbox's accept waits for the host connection.
			accepted, _, err := s.Accept(ctx, 0, true)
			if err != nil {
				t.Fatalf("accept: %v", err)
			}
			defer accepted.DecRef()
			if _, err := unix.Write(hostFD2, []byte("hello")); err != nil {
				t.Fatal(err)
			}
			as := socket.FromFile(accepted)
			buf := make([]byte, 64)
			r, err := as.RecvMsg(ctx, buf, socket.RecvOptions{Blocking: true})
			if err != nil || string(buf[:r.N]) != "hello" {
				t.Fatalf("recv %q %v", buf[:r.N], err)
			}
			if _, err := as.SendMsg(ctx, []byte("echo:hello"), socket.SendOptions{Blocking: true}); err != nil {
				t.Fatal(err)
			}
			unix.SetsockoptTimeval(hostFD2, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 5})
			n, err := unix.Read(hostFD2, buf)
			if err != nil || string(buf[:n]) != "echo:hello" {
				t.Errorf("host read %q %v", buf[:max(n, 0)], err)
			}
			if name, _ := as.SockName(ctx); string(name[2:]) != "/c.sock\x00" {
				t.Errorf("accepted socket's name %q", name)
			}
			// A sandbox socket connecting to the path meets the sandbox
			// listener itself.
			g := sunix.New(ctx, ns, typ, 0)
			defer g.DecRef()
			if err := socket.FromFile(g).Connect(ctx, sockAddr("/c.sock"), true); err != nil {
				t.Fatalf("sandbox connect: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				a, _, err := s.Accept(ctx, 0, true)
				if err == nil {
					a.DecRef()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("accept of the sandbox connection: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("accept of the sandbox connection hangs")
			}
		})
	}
}

// TestBindWithoutCreate keeps today's behaviour: a plain socket file
// nothing on the host can reach.
func TestBindWithoutCreate(t *testing.T) {
	dir := t.TempDir()
	ctx := serveUDS(t, dir, true, true, HostUDS{Connect: true})
	f := sunix.New(ctx, sunix.NewNamespace(), unix.SOCK_STREAM, 0)
	defer f.DecRef()
	s := socket.FromFile(f)
	if err := s.Bind(ctx, sockAddr("/p.sock")); err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("unix", filepath.Join(dir, "p.sock")); err == nil {
		t.Error("a host process reached a sandbox socket bound without create")
	}
}

// TestConnectHostFullBacklog: a blocking connect to a host listener whose
// backlog is full waits until the host accepts; a non-blocking one gets
// EAGAIN, as on Linux.
func TestConnectHostFullBacklog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.sock")
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 0); err != nil { // room for one pending connection
		t.Fatal(err)
	}
	ctx := serveUDS(t, dir, true, false, HostUDS{Connect: true})
	ns := sunix.NewNamespace()
	connect := func(blocking bool) (*fs.FileDescription, error) {
		f := sunix.New(ctx, ns, unix.SOCK_STREAM, 0)
		if err := socket.FromFile(f).Connect(ctx, sockAddr("/full.sock"), blocking); err != nil {
			f.DecRef()
			return nil, err
		}
		return f, nil
	}
	first, err := connect(true)
	if err != nil {
		t.Fatalf("first connect: %v", err)
	}
	defer first.DecRef()
	if _, err := connect(false); err != unix.EAGAIN {
		t.Errorf("non-blocking connect to a full backlog: %v, want EAGAIN", err)
	}
	accepted := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		for i := 0; i < 2; i++ {
			if fd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC); err == nil {
				defer unix.Close(fd)
			}
		}
		close(accepted)
		<-time.After(time.Second)
	}()
	second, err := connect(true)
	if err != nil {
		t.Fatalf("blocking connect: %v", err)
	}
	second.DecRef()
	<-accepted
}
