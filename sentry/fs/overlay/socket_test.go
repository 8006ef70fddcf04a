package overlay

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// hostSock is a lower-layer socket file a host process listens on: it
// records where connect asked for it.
type hostSock struct {
	ino  uint64
	dir  fs.Node
	name string
}

func (s *hostSock) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{Ino: s.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1}, nil
}

func (s *hostSock) ConnectHostSocket(_ fs.Context, dir fs.Node, name string, sockType int) (int, error) {
	s.dir, s.name = dir, name
	return 100 + sockType, nil
}

// TestConnectHostSocket checks which overlay socket files reach the
// lower layer's host sockets: lower-only ones, through the lower
// directory; not copied-up ones, nor those bound in the upper layer.
func TestConnectHostSocket(t *testing.T) {
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := fstest.NewContext()
	top, deep, moved := &hostSock{ino: 10}, &hostSock{ino: 11}, &hostSock{ino: 12}
	sub := synth.NewDir(0o755, map[string]fs.Node{"deep.sock": deep})
	lowerRoot := synth.NewDir(0o755, map[string]fs.Node{"top.sock": top, "moved.sock": moved, "sub": sub})
	lowerFS := synth.NewFilesystem("lower", 1, lowerRoot, true)
	upperFS := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	ofs, err := New(ctx, upperFS, lowerFS)
	if err != nil {
		t.Fatal(err)
	}
	root := fs.NewMountNamespace(ofs, fs.MountFlags{}).Root()
	lk := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	connect := func(p string) (int, error) {
		vd, err := fs.Resolve(ctx, lk(p))
		if err != nil {
			return -1, err
		}
		hn, ok := vd.Dentry.Node().(hostSocketNode)
		if !ok {
			return -1, unix.ENOTSOCK
		}
		return hn.ConnectHostSocket(ctx, vd.Dentry.Parent().Node(), vd.Dentry.Name(), unix.SOCK_STREAM)
	}
	moveVD, err := fs.Resolve(ctx, lk("/moved.sock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Chmod(ctx, moveVD, 0o700); err != nil {
		t.Fatalf("chmod (copy-up): %v", err)
	}
	if _, err := fs.MknodSocket(ctx, lk("/bound.sock"), 0o755); err != nil {
		t.Fatalf("bind: %v", err)
	}
	cases := []struct {
		path    string
		wantErr error
		sock    *hostSock
		wantDir fs.Node
	}{
		{"/top.sock", nil, top, lowerRoot},
		{"/sub/deep.sock", nil, deep, sub},
		{"/moved.sock", unix.ECONNREFUSED, nil, nil},
		{"/bound.sock", unix.ECONNREFUSED, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			fd, err := connect(c.path)
			if err != c.wantErr {
				t.Fatalf("connect = %d, %v; want error %v", fd, err, c.wantErr)
			}
			if c.sock == nil {
				return
			}
			if fd != 100+unix.SOCK_STREAM {
				t.Errorf("fd %d", fd)
			}
			if c.sock.dir != c.wantDir || "/"+c.sock.name != c.path[len(c.path)-len(c.sock.name)-1:] {
				t.Errorf("asked the lower layer for %q in %v", c.sock.name, c.sock.dir)
			}
		})
	}
}
