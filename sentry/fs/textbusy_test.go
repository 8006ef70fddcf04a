package fs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// TestTextBusy checks ETXTBSY both ways: writers refuse execution, and
// execution refuses writers and truncation, until released.
func TestTextBusy(t *testing.T) {
	ctx := fstest.NewContext()
	root := fs.NewMountNamespace(newMemFS(), fs.MountFlags{}).Root()
	lk := func(p string) fs.Lookup { return fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true} }
	open := func(p string, flags uint32) (*fs.FileDescription, error) {
		return fs.Open(ctx, lk(p), fs.OpenOptions{Flags: flags, Mode: 0o755})
	}
	f, err := open("/prog", unix.O_WRONLY|unix.O_CREAT)
	if err != nil {
		t.Fatal(err)
	}
	l := lk("/prog")
	vd, err := fs.Resolve(ctx, &l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.DenyWriteAccess(ctx, vd); err != unix.ETXTBSY {
		t.Errorf("deny with a writer open: %v, want ETXTBSY", err)
	}
	f.DecRef()
	d, err := fs.DenyWriteAccess(ctx, vd)
	if err != nil {
		t.Fatalf("deny: %v", err)
	}
	for _, c := range []struct {
		name  string
		flags uint32
		want  error
	}{
		{"read", unix.O_RDONLY, nil},
		{"write", unix.O_WRONLY, unix.ETXTBSY},
		{"read-write", unix.O_RDWR, unix.ETXTBSY},
		{"read truncate", unix.O_RDONLY | unix.O_TRUNC, unix.ETXTBSY},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := open("/prog", c.flags)
			if err != c.want {
				t.Errorf("open: %v, want %v", err, c.want)
			}
			if g != nil {
				g.DecRef()
			}
		})
	}
	if err := fs.Truncate(ctx, vd, 0); err != unix.ETXTBSY {
		t.Errorf("truncate: %v, want ETXTBSY", err)
	}
	// Two executions (one a forked copy): both must go.
	d2 := d.Dup()
	d.Release()
	d.Release() // a second call changes nothing
	if _, err := open("/prog", unix.O_WRONLY); err != unix.ETXTBSY {
		t.Errorf("open with one execution left: %v, want ETXTBSY", err)
	}
	d2.Release()
	g, err := open("/prog", unix.O_RDWR)
	if err != nil {
		t.Fatalf("open after release: %v", err)
	}
	g.DecRef()
	if err := fs.Truncate(ctx, vd, 0); err != nil {
		t.Errorf("truncate after release: %v", err)
	}
	// A failed open leaves no writer behind.
	d3, err := fs.DenyWriteAccess(ctx, vd)
	if err != nil {
		t.Fatalf("deny after the writers went: %v", err)
	}
	d3.Release()
}
