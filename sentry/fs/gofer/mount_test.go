package gofer

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	gofersrv "github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/gofer/gofertest"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// TestNewMount mounts a gofer's bind attach points (a writable file, a
// read-only directory) over a read-only root, as runsc boot does.
func TestNewMount(t *testing.T) {
	top := t.TempDir()
	rootDir, vol, hosts := filepath.Join(top, "root"), filepath.Join(top, "vol"), filepath.Join(top, "hosts")
	for _, d := range []string{rootDir, vol, filepath.Join(rootDir, "etc"), filepath.Join(rootDir, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range map[string]string{
		filepath.Join(rootDir, "etc/hosts"): "image's hosts\n",
		hosts:                               "127.0.0.1 localhost\n",
		filepath.Join(vol, "v"):             "volume\n",
	} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := gofersrv.NewServerMounts([]gofersrv.Mount{{Path: rootDir, ReadOnly: true}, {Path: hosts}, {Path: vol, ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	client := gofertest.Serve(t, srv)
	rootFS, err := New(client)
	if err != nil {
		t.Fatal(err)
	}
	mns := fs.NewMountNamespace(rootFS, fs.MountFlags{})
	root := mns.Root()
	ctx := fstest.NewContext()
	resolve := func(p string) fs.VirtualDentry {
		t.Helper()
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
		if err != nil {
			t.Fatalf("resolve %s: %v", p, err)
		}
		return vd
	}
	fileFS, err := NewMount(client, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mns.Mount(ctx, resolve("/etc/hosts"), fileFS, fs.MountFlags{}); err != nil {
		t.Fatalf("mounting the file over /etc/hosts: %v", err)
	}
	dirFS, err := NewMount(client, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mns.Mount(ctx, resolve("/data"), dirFS, fs.MountFlags{ReadOnly: true}); err != nil {
		t.Fatalf("mounting the volume: %v", err)
	}
	if _, err := NewMount(client, 3, false); err == nil {
		t.Error("NewMount of a missing attach point succeeded")
	}
	read := func(p string) string {
		t.Helper()
		f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{Flags: unix.O_RDONLY})
		if err != nil {
			t.Fatalf("open %s: %v", p, err)
		}
		defer f.DecRef()
		buf := make([]byte, 100)
		n, _ := f.PRead(ctx, buf, 0)
		return string(buf[:n])
	}
	if got := read("/etc/hosts"); got != "127.0.0.1 localhost\n" {
		t.Errorf("/etc/hosts reads %q", got)
	}
	if got := read("/data/v"); got != "volume\n" {
		t.Errorf("/data/v reads %q", got)
	}
	// A write to the file bind reaches the host, and the host's rewrite
	// reaches the sandbox.
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/hosts"}, fs.OpenOptions{Flags: unix.O_RDWR})
	if err != nil {
		t.Fatalf("open /etc/hosts for writing: %v", err)
	}
	if _, err := f.PWrite(ctx, []byte("10"), 0); err != nil {
		t.Errorf("write: %v", err)
	}
	f.DecRef()
	if b, _ := os.ReadFile(hosts); string(b) != "107.0.0.1 localhost\n" {
		t.Errorf("host reads %q", b)
	}
	if err := os.WriteFile(hosts, []byte("10.0.0.9 db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read("/etc/hosts"); got != "10.0.0.9 db\n" {
		t.Errorf("after the host's rewrite /etc/hosts reads %q", got)
	}
	// Attributes and listings follow the host's changes.
	if st, err := resolve("/etc/hosts").Stat(ctx); err != nil || st.Size != int64(len("10.0.0.9 db\n")) {
		t.Errorf("stat /etc/hosts after the host's rewrite: size %d, %v", st.Size, err)
	}
	list := func() int {
		t.Helper()
		d, ok := resolve("/data").Dentry.Node().(fs.DirNode)
		if !ok {
			t.Fatal("/data is no directory")
		}
		ents, err := d.Readdir(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	if n := list(); n != 1 {
		t.Errorf("/data lists %d entries, want 1", n)
	}
	if err := os.WriteFile(filepath.Join(vol, "w"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := list(); n != 2 {
		t.Errorf("/data lists %d entries after the host added one, want 2", n)
	}
	// A file the host replaces by renaming another over it (an atomic
	// save), or removes, is looked up again.
	if err := os.WriteFile(filepath.Join(vol, "v.tmp"), []byte("saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(vol, "v.tmp"), filepath.Join(vol, "v")); err != nil {
		t.Fatal(err)
	}
	if got := read("/data/v"); got != "saved\n" {
		t.Errorf("/data/v reads %q after the host replaced it", got)
	}
	resolve("/data/w") // cached now
	if err := os.Remove(filepath.Join(vol, "w")); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/data/w"}); err != unix.ENOENT {
		t.Errorf("/data/w after the host removed it: %v, want ENOENT", err)
	}
	if _, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/data/v"}, fs.OpenOptions{Flags: unix.O_WRONLY}); err != unix.EROFS {
		t.Errorf("write open in the read-only volume: %v, want EROFS", err)
	}
}
