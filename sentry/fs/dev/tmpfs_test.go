package dev

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// TestPopulate fills a tmpfs /dev and checks what runc's /dev has: the
// devices, opened through OpenDevice, the symlinks, the mount point
// directories; and that other device numbers and new nodes behave as on
// Linux (ENXIO; a tmpfs takes new names).
func TestPopulate(t *testing.T) {
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	opts := tmpfs.DefaultOptions(mf)
	opts.OpenDevice = OpenDevice
	root := fs.NewMountNamespace(tmpfs.New(mf, opts, nil), fs.MountFlags{}).Root()
	ctx := fstest.NewContext()
	if err := Populate(ctx, root); err != nil {
		t.Fatal(err)
	}
	if err := Populate(ctx, root); err != nil {
		t.Errorf("second Populate: %v", err)
	}
	at := func(p string) fs.Lookup { return fs.Lookup{Root: root, Start: root, Path: p} }
	for _, d := range Devices {
		t.Run(d.Name, func(t *testing.T) {
			l := at(d.Name)
			vd, err := fs.Resolve(ctx, &l)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := vd.Stat(ctx)
			if st.Mode != unix.S_IFCHR|0o666 || st.Rdev != d.Rdev {
				t.Errorf("mode %#o rdev %#x", st.Mode, st.Rdev)
			}
			f, err := fs.Open(ctx, l, fs.OpenOptions{Flags: unix.O_RDWR})
			if d.Rdev == TTYDev {
				if err != unix.ENXIO {
					t.Errorf("open tty without a controlling terminal: %v, want ENXIO", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.DecRef()
			buf := []byte{1}
			n, err := f.Read(ctx, buf)
			if d.Rdev == NullDev && (n != 0 || err != nil) || d.Rdev == ZeroDev && (n != 1 || buf[0] != 0) {
				t.Errorf("read = %d %v %v", n, buf, err)
			}
		})
	}
	for _, l := range Symlinks {
		t.Run(l[0], func(t *testing.T) {
			lk := at(l[0])
			vd, err := fs.Resolve(ctx, &lk)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := vd.Dentry.Node().(fs.SymlinkNode).Readlink(ctx); got != l[1] {
				t.Errorf("-> %q, want %q", got, l[1])
			}
		})
	}
	for _, d := range []struct {
		name string
		mode uint32
	}{{"pts", 0o755}, {"shm", 0o1777}} {
		l := at(d.name)
		vd, err := fs.Resolve(ctx, &l)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := vd.Stat(ctx); st.Mode != unix.S_IFDIR|d.mode {
			t.Errorf("%s mode %#o", d.name, st.Mode)
		}
	}
	t.Run("other devices", func(t *testing.T) {
		l := at("fuse")
		if err := fs.Mknod(ctx, &l, unix.S_IFCHR|0o600, unix.Mkdev(10, 229)); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.Open(ctx, l, fs.OpenOptions{Flags: unix.O_RDWR}); err != unix.ENXIO {
			t.Errorf("open 10:229 = %v, want ENXIO", err)
		}
		m := at("mqueue")
		if err := fs.Mkdir(ctx, &m, 0o755); err != nil {
			t.Errorf("mkdir mqueue: %v", err)
		}
	})
}
