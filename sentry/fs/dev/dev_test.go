package dev

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

func TestDevices(t *testing.T) {
	ctx := fstest.NewContext()
	f, _ := New()
	root := fs.NewMountNamespace(f, fs.MountFlags{}).Root()
	open := func(p string, flags uint32) *fs.FileDescription {
		t.Helper()
		fd, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{Flags: flags})
		if err != nil {
			t.Fatalf("open %s: %v", p, err)
		}
		return fd
	}
	buf := bytes.Repeat([]byte{1}, 64)
	cases := []struct {
		path     string
		rdev     uint64
		readN    int
		zeros    bool
		writeErr error
	}{
		{"/null", NullDev, 0, false, nil},
		{"/zero", ZeroDev, 64, true, nil},
		{"/full", FullDev, 64, true, unix.ENOSPC},
		{"/random", RandomDev, 64, false, nil},
		{"/urandom", URandomDev, 64, false, nil},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			fd := open(c.path, unix.O_RDWR)
			defer fd.DecRef()
			st, _ := fd.Stat(ctx)
			if st.Type() != unix.S_IFCHR || st.Rdev != c.rdev || st.Mode&0o777 != 0o666 {
				t.Errorf("stat mode %#o rdev %#x", st.Mode, st.Rdev)
			}
			for i := range buf {
				buf[i] = 1
			}
			n, err := fd.Read(ctx, buf)
			if n != c.readN || err != nil {
				t.Fatalf("read = %d, %v", n, err)
			}
			if c.zeros && !bytes.Equal(buf, make([]byte, 64)) {
				t.Errorf("not zeros: %v", buf)
			}
			if _, err := fd.Write(ctx, []byte("x")); err != c.writeErr {
				t.Errorf("write err %v, want %v", err, c.writeErr)
			}
		})
	}
	// Two urandom reads differ.
	u := open("/urandom", unix.O_RDONLY)
	defer u.DecRef()
	a, b := make([]byte, 32), make([]byte, 32)
	u.Read(ctx, a)
	u.Read(ctx, b)
	if bytes.Equal(a, b) {
		t.Error("urandom repeated itself")
	}
	if _, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/tty"}, fs.OpenOptions{Flags: unix.O_RDWR}); err != unix.ENXIO {
		t.Errorf("open /tty without a controlling terminal = %v, want ENXIO", err)
	}
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/stderr"})
	if err != nil {
		t.Fatal(err)
	}
	if target, _ := vd.Dentry.Node().(fs.SymlinkNode).Readlink(ctx); target != "/proc/self/fd/2" {
		t.Errorf("stderr -> %q", target)
	}
}

// TestPtmxLayout checks /dev as runtimes lay it out: a tmpfs whose ptmx
// is a symlink to pts/ptmx, a device anyone may open there.
func TestPtmxLayout(t *testing.T) {
	ctx := fstest.NewContext()
	f, _ := New()
	if f.Type() != "tmpfs" {
		t.Errorf("type %q, want tmpfs", f.Type())
	}
	root := fs.NewMountNamespace(f, fs.MountFlags{}).Root()
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/ptmx"})
	if err != nil {
		t.Fatal(err)
	}
	if target, _ := vd.Dentry.Node().(fs.SymlinkNode).Readlink(ctx); target != "pts/ptmx" {
		t.Errorf("ptmx -> %q, want pts/ptmx", target)
	}
	for _, p := range []string{"/ptmx", "/pts/ptmx"} {
		t.Run(p, func(t *testing.T) {
			vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
			if err != nil {
				t.Fatal(err)
			}
			st, err := vd.Stat(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Type() != unix.S_IFCHR || st.Rdev != unix.Mkdev(5, 2) || st.Mode&0o777 != 0o666 {
				t.Errorf("mode %#o rdev %#x, want a 0666 char device 5:2", st.Mode, st.Rdev)
			}
			m, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			m.DecRef()
		})
	}
}
