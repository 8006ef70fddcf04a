package gofer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// serveMounts serves root (read-only) and mounts on a socketpair and
// returns a client; cleanup waits for the server.
func serveMounts(t *testing.T, root string, mounts []Mount) *proto.Client {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(Config{Root: root, ConnFD: fds[0], ReadOnly: true, Mounts: mounts}) }()
	c, err := proto.NewClient(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Shutdown()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return c
}

// bindFixture is a container root plus bind sources, all under one
// temporary directory with a secret beside them that no attach point
// may reach.
type bindFixture struct {
	top, root, vol, rovol, hosts, hostsLink string
}

func makeBindFixture(t *testing.T) bindFixture {
	t.Helper()
	top := t.TempDir()
	f := bindFixture{
		top:       top,
		root:      filepath.Join(top, "root"),
		vol:       filepath.Join(top, "vol"),
		rovol:     filepath.Join(top, "rovol"),
		hosts:     filepath.Join(top, "hosts"),
		hostsLink: filepath.Join(top, "hosts-link"),
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{f.root, f.vol, f.rovol, filepath.Join(f.vol, "sub")} {
		must(os.Mkdir(d, 0o755))
	}
	must(os.WriteFile(filepath.Join(top, "secret"), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(f.vol, "data"), []byte("vol data"), 0o644))
	must(os.WriteFile(filepath.Join(f.rovol, "data"), []byte("ro data"), 0o644))
	must(os.WriteFile(f.hosts, []byte("127.0.0.1 localhost\n"), 0o644))
	must(os.Symlink("hosts", f.hostsLink))
	// Escape attempts inside the volume.
	must(os.Symlink("/", filepath.Join(f.vol, "esc")))
	must(os.Symlink("..", filepath.Join(f.vol, "up")))
	must(os.Symlink("../secret", filepath.Join(f.vol, "sec")))
	return f
}

func (f bindFixture) mounts() []Mount {
	return []Mount{
		{Path: f.vol, Recursive: true},
		{Path: f.rovol, ReadOnly: true},
		{Path: f.hosts},
		{Path: f.hostsLink, ReadOnly: true},
	}
}

func TestAttachPoints(t *testing.T) {
	f := makeBindFixture(t)
	c := serveMounts(t, f.root, f.mounts())

	type want struct {
		mount uint32
		typ   uint32
		ino   string // host path whose inode the root must be
	}
	for _, w := range []want{
		{0, unix.S_IFDIR, f.root},
		{1, unix.S_IFDIR, f.vol},
		{2, unix.S_IFDIR, f.rovol},
		{3, unix.S_IFREG, f.hosts},
		{4, unix.S_IFREG, f.hosts}, // the symlink is followed, host side
	} {
		h, attr, err := c.AttachMount(w.mount)
		if err != nil {
			t.Fatalf("AttachMount(%d): %v", w.mount, err)
		}
		var st unix.Stat_t
		if err := unix.Stat(w.ino, &st); err != nil {
			t.Fatal(err)
		}
		if attr.Mode&unix.S_IFMT != w.typ || attr.Ino != st.Ino {
			t.Errorf("AttachMount(%d) = mode %o ino %d, want type %o ino %d", w.mount, attr.Mode, attr.Ino, w.typ, st.Ino)
		}
		c.Close(h)
	}
	if _, _, err := c.AttachMount(5); !errors.Is(err, unix.ENOENT) {
		t.Errorf("AttachMount(5) = %v, want ENOENT", err)
	}
}

func TestAttachPointWrites(t *testing.T) {
	f := makeBindFixture(t)
	c := serveMounts(t, f.root, f.mounts())
	attach := func(i uint32) proto.Handle {
		t.Helper()
		h, _, err := c.AttachMount(i)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	root, vol, rovol, hosts, roHosts := attach(0), attach(1), attach(2), attach(3), attach(4)

	t.Run("rw dir reaches the host", func(t *testing.T) {
		_, _, fd, err := c.Create(vol, "new", unix.O_WRONLY, 0o644, proto.NoID, proto.NoID)
		if err != nil {
			t.Fatalf("Create in the volume: %v", err)
		}
		unix.Write(fd, []byte("written"))
		unix.Close(fd)
		if b, err := os.ReadFile(filepath.Join(f.vol, "new")); err != nil || string(b) != "written" {
			t.Errorf("host sees %q, %v", b, err)
		}
	})
	for _, tc := range []struct {
		name string
		op   func() error
		want unix.Errno
	}{
		{"root stays read-only", func() error { _, _, err := c.Mkdir(root, "x", 0o755, proto.NoID, proto.NoID); return err }, unix.EROFS},
		{"ro dir create", func() error {
			_, _, fd, err := c.Create(rovol, "x", unix.O_WRONLY, 0o644, proto.NoID, proto.NoID)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.EROFS},
		{"ro dir open for writing", func() error {
			h, _, err := c.Walk(rovol, "data")
			if err != nil {
				return err
			}
			fd, err := c.Open(h, unix.O_RDWR)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.EROFS},
		{"ro dir unlink", func() error { return c.Unlink(rovol, "data", 0) }, unix.EROFS},
		{"ro file open for writing", func() error {
			fd, err := c.Open(roHosts, unix.O_WRONLY)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.EROFS},
		{"rename across attach points", func() error {
			return c.Rename(vol, "data", rovol, "moved", 0)
		}, unix.EXDEV},
		{"rename from rw into root", func() error {
			return c.Rename(vol, "data", root, "moved", 0)
		}, unix.EXDEV},
		{"walk below a file attach point", func() error { _, _, err := c.Walk(hosts, "x"); return err }, unix.ENOTDIR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.rovol, "data")); err != nil {
		t.Errorf("read-only volume changed: %v", err)
	}

	t.Run("file bind follows host rewrites", func(t *testing.T) {
		fd, err := c.Open(hosts, unix.O_RDWR)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer unix.Close(fd)
		// The host rewrites the file in place, as Docker does.
		if err := os.WriteFile(f.hosts, []byte("10.0.0.2 web\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, _ := unix.Pread(fd, buf, 0)
		if string(buf[:n]) != "10.0.0.2 web\n" {
			t.Errorf("read %q after the host's rewrite", buf[:n])
		}
		fd2, err := c.Open(roHosts, unix.O_RDONLY)
		if err != nil {
			t.Fatalf("Open ro: %v", err)
		}
		n, _ = unix.Pread(fd2, buf, 0)
		unix.Close(fd2)
		if string(buf[:n]) != "10.0.0.2 web\n" {
			t.Errorf("read %q through the read-only file bind", buf[:n])
		}
	})
}

// TestAttachPointEscapes: symlinks and ".." inside a bind mount never
// take the gofer out of the bind's source; each comes back as a
// symlink for the Sentry to resolve in the sandbox's own view.
func TestAttachPointEscapes(t *testing.T) {
	f := makeBindFixture(t)
	c := serveMounts(t, f.root, f.mounts())
	vol, _, err := c.AttachMount(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"esc", "up", "sec"} {
		t.Run(name, func(t *testing.T) {
			h, attr, err := c.Walk(vol, name)
			if err != nil {
				t.Fatal(err)
			}
			if attr.Mode&unix.S_IFMT != unix.S_IFLNK {
				t.Errorf("mode %o, want a symlink", attr.Mode)
			}
			if fd, err := c.Open(h, unix.O_RDONLY); !errors.Is(err, unix.ELOOP) {
				if err == nil {
					unix.Close(fd)
				}
				t.Errorf("Open of the symlink = %v, want ELOOP", err)
			}
			if _, _, err := c.Walk(h, "secret"); !errors.Is(err, unix.ENOTDIR) {
				t.Errorf("Walk through the symlink = %v, want ENOTDIR", err)
			}
		})
	}
	for _, name := range []string{"..", ".", "../secret", "sub/../../secret"} {
		t.Run("walk "+name, func(t *testing.T) {
			if _, _, err := c.Walk(vol, name); !errors.Is(err, unix.EINVAL) {
				t.Errorf("Walk(%q) = %v, want EINVAL", name, err)
			}
		})
	}
	// A file attach point's hidden directory cannot be named either.
	hosts, _, err := c.AttachMount(3)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Walk(hosts, ".."); !errors.Is(err, unix.EINVAL) {
		t.Errorf("Walk(hosts, ..) = %v, want EINVAL", err)
	}
}

func TestNewServerMountsErrors(t *testing.T) {
	f := makeBindFixture(t)
	for _, tc := range []struct {
		name   string
		mounts []Mount
	}{
		{"no root", nil},
		{"root is a file", []Mount{{Path: f.hosts}}},
		{"missing source", []Mount{{Path: f.root}, {Path: filepath.Join(f.top, "missing")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewServerMounts(tc.mounts)
			if err == nil {
				s.Close()
				t.Fatal("accepted")
			}
		})
	}
}
