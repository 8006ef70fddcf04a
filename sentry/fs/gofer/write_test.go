package gofer

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// serveRW starts a read-write gofer on dir and mounts it writable.
func serveRW(t *testing.T, dir string) fs.VirtualDentry {
	t.Helper()
	return serveTree(t, dir, true)
}

func hostFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func listNames(t *testing.T, ctx fs.Context, root fs.VirtualDentry, path string) string {
	t.Helper()
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: path}, fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_DIRECTORY})
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	var names []string
	f.Impl().(fs.DirIterator).IterDirents(ctx, f, func(d fs.Dirent) bool {
		if d.Name != "." && d.Name != ".." {
			names = append(names, d.Name)
		}
		return true
	})
	sort.Strings(names)
	return strings.Join(names, " ")
}

// TestWritableTree makes every kind of change through the VFS and checks
// the host directory and the Sentry's view (caches) after each.
func TestWritableTree(t *testing.T) {
	dir := makeTree(t)
	secret := filepath.Join(filepath.Dir(dir), "secret-"+filepath.Base(dir))
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(secret)
	root := serveRW(t, dir)
	ctx := fstest.NewContext()
	lookup := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	open := func(p string, flags, mode uint32) (*fs.FileDescription, error) {
		return fs.Open(ctx, *lookup(p), fs.OpenOptions{Flags: flags, Mode: mode})
	}
	stat := func(p string) fs.Stat {
		t.Helper()
		vd, err := fs.Resolve(ctx, lookup(p))
		if err != nil {
			t.Fatalf("resolve %s: %v", p, err)
		}
		st, err := vd.Stat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	// Listing cached before the changes: it must not go stale.
	if got := listNames(t, ctx, root, "/etc"); got != "hello rel" {
		t.Fatalf("etc lists %q", got)
	}

	t.Run("create and write", func(t *testing.T) {
		f, err := open("/etc/new", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := f.Write(ctx, []byte("first line\n")); n != 11 || err != nil {
			t.Fatalf("write = %d, %v", n, err)
		}
		f.DecRef()
		if got := hostFile(t, filepath.Join(dir, "etc/new")); got != "first line\n" {
			t.Errorf("host sees %q", got)
		}
		if st := stat("/etc/new"); st.Size != 11 || st.Mode != unix.S_IFREG|0o640 {
			t.Errorf("stat after write: size %d mode %o", st.Size, st.Mode)
		}
		if got := listNames(t, ctx, root, "/etc"); got != "hello new rel" {
			t.Errorf("etc lists %q after create", got)
		}
		// O_APPEND lands at the end; O_TRUNC empties.
		f, err = open("/etc/new", unix.O_WRONLY|unix.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(ctx, []byte("second\n"))
		f.DecRef()
		if got := hostFile(t, filepath.Join(dir, "etc/new")); got != "first line\nsecond\n" {
			t.Errorf("after append host sees %q", got)
		}
		// A file first opened read-only, then for writing: the write goes
		// through (the node's fd is upgraded) and the reader still reads.
		r, err := open("/etc/hello", unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := open("/etc/hello", unix.O_WRONLY|unix.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(ctx, []byte("bye\n"))
		buf := make([]byte, 10)
		if n, _ := r.Read(ctx, buf); string(buf[:n]) != "bye\n" {
			t.Errorf("reader reads %q", buf[:n])
		}
		w.DecRef()
		r.DecRef()
		if got := hostFile(t, filepath.Join(dir, "etc/hello")); got != "bye\n" {
			t.Errorf("after truncate and write host sees %q", got)
		}
		if _, err := open("/etc/new", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600); err != unix.EEXIST {
			t.Errorf("O_EXCL of an existing file = %v", err)
		}
	})

	t.Run("mkdir symlink mknod link", func(t *testing.T) {
		if err := fs.Mkdir(ctx, lookup("/d"), 0o750); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dir, "d")); err != nil || !st.IsDir() || st.Mode().Perm() != 0o750 {
			t.Errorf("host dir: %v, %v", st, err)
		}
		if err := fs.Symlink(ctx, lookup("/d/l"), "../etc/new"); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.Readlink(filepath.Join(dir, "d/l")); got != "../etc/new" {
			t.Errorf("host symlink %q", got)
		}
		if err := fs.Mknod(ctx, lookup("/d/p"), unix.S_IFIFO|0o600, 0); err != nil {
			t.Fatal(err)
		}
		// The FIFO is a Sentry pipe: what one end writes the other reads.
		r, err := open("/d/p", unix.O_RDONLY|unix.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := open("/d/p", unix.O_WRONLY|unix.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := w.Write(ctx, []byte("z")); n != 1 || err != nil {
			t.Errorf("fifo write = %d, %v", n, err)
		}
		buf := make([]byte, 4)
		if n, err := r.Read(ctx, buf); n != 1 || err != nil || buf[0] != 'z' {
			t.Errorf("fifo read = %d %q, %v", n, buf[:n], err)
		}
		w.DecRef()
		r.DecRef()
		if err := fs.Mknod(ctx, lookup("/d/null"), unix.S_IFCHR|0o600, unix.Mkdev(1, 3)); err != unix.EPERM {
			t.Errorf("mknod of a device = %v, want EPERM", err)
		}
		old, err := fs.Resolve(ctx, lookup("/etc/new"))
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Link(ctx, old, lookup("/d/hard")); err != nil {
			t.Fatal(err)
		}
		if st := stat("/etc/new"); st.Nlink != 2 {
			t.Errorf("nlink after link = %d", st.Nlink)
		}
		if got := listNames(t, ctx, root, "/d"); got != "hard l p" {
			t.Errorf("d lists %q", got)
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, "d/p"), &st); err != nil || st.Mode != unix.S_IFIFO|0o600 {
			t.Errorf("host fifo mode %o, %v", st.Mode, err)
		}
	})

	t.Run("rename", func(t *testing.T) {
		if err := fs.Rename(ctx, lookup("/etc/new"), lookup("/d/renamed"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "etc/new")); !os.IsNotExist(err) {
			t.Errorf("old name still on the host: %v", err)
		}
		if got := hostFile(t, filepath.Join(dir, "d/renamed")); got != "first line\nsecond\n" {
			t.Errorf("renamed file holds %q", got)
		}
		f, err := open("/d/renamed", unix.O_RDONLY, 0)
		if err != nil {
			t.Fatalf("open after rename: %v", err)
		}
		f.DecRef()
		if got := listNames(t, ctx, root, "/etc"); got != "hello rel" {
			t.Errorf("etc lists %q after rename", got)
		}
		if err := fs.Rename(ctx, lookup("/d/renamed"), lookup("/d/hard"), unix.RENAME_NOREPLACE); err != unix.EEXIST {
			t.Errorf("RENAME_NOREPLACE = %v, want EEXIST", err)
		}
		if err := fs.Rename(ctx, lookup("/d/p"), lookup("/etc/hello"), unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, "etc/hello"), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			t.Errorf("after exchange etc/hello mode %o, %v", st.Mode, err)
		}
	})

	t.Run("setattr and xattrs", func(t *testing.T) {
		vd, err := fs.Resolve(ctx, lookup("/d/renamed"))
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Chmod(ctx, vd, 0o604); err != nil {
			t.Fatal(err)
		}
		if err := fs.Truncate(ctx, vd, 3); err != nil {
			t.Fatal(err)
		}
		times := [2]unix.Timespec{{Sec: 100}, {Sec: 200}}
		if err := fs.Utimes(ctx, vd, &times); err != nil {
			t.Fatal(err)
		}
		if err := fs.Chown(ctx, vd, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, "d/renamed"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&0o7777 != 0o604 || st.Size != 3 || st.Mtim.Sec != 200 || st.Atim.Sec != 100 || st.Uid != 1000 {
			t.Errorf("host: mode %o size %d mtime %d atime %d uid %d", st.Mode&0o7777, st.Size, st.Mtim.Sec, st.Atim.Sec, st.Uid)
		}
		if s := stat("/d/renamed"); s.Mode&0o7777 != 0o604 || s.Size != 3 || s.Mtime.Sec != 200 || s.UID != 1000 {
			t.Errorf("sentry stat %+v", s)
		}
		if err := fs.SetXattr(ctx, vd, "user.test", []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		if v, err := fs.GetXattr(ctx, vd, "user.test"); err != nil || string(v) != "v" {
			t.Errorf("getxattr = %q, %v", v, err)
		}
		if names, err := fs.ListXattr(ctx, vd); err != nil || strings.Join(names, ",") != "user.test" {
			t.Errorf("listxattr = %v, %v", names, err)
		}
		if err := fs.RemoveXattr(ctx, vd, "user.test"); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.GetXattr(ctx, vd, "user.test"); err != unix.ENODATA {
			t.Errorf("getxattr after remove = %v", err)
		}
	})

	t.Run("unlink and rmdir", func(t *testing.T) {
		f, err := open("/d/hard", unix.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/d/hard", "/d/renamed", "/d/l", "/d/p", "/etc/hello"} {
			if err := fs.Unlink(ctx, lookup(p)); err != nil {
				t.Errorf("unlink %s: %v", p, err)
			}
		}
		// The open file lives on: it can be written, truncated, stat'ed.
		if n, err := f.PWrite(ctx, []byte("xyz"), 0); n != 3 || err != nil {
			t.Errorf("write to an unlinked open file = %d, %v", n, err)
		}
		if err := fs.Ftruncate(ctx, f, 2); err != nil {
			t.Errorf("ftruncate of an unlinked open file: %v", err)
		}
		if st, err := f.Stat(ctx); err != nil || st.Size != 2 || st.Nlink != 0 {
			t.Errorf("stat of an unlinked open file: size %d nlink %d, %v", st.Size, st.Nlink, err)
		}
		f.DecRef()
		if err := fs.Rmdir(ctx, lookup("/d")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
			t.Errorf("d still on the host: %v", err)
		}
		if _, err := open("/d/hard", unix.O_RDONLY, 0); err != unix.ENOENT {
			t.Errorf("open after rmdir = %v", err)
		}
	})

	t.Run("escapes", func(t *testing.T) {
		// Paths with ".." and symlinks out of the root resolve inside the
		// Sentry's view: they stay in the tree whatever they name.
		if err := fs.Symlink(ctx, lookup("/out"), "../../../"+filepath.Base(secret)); err != nil {
			t.Fatal(err)
		}
		f, err := open("/out", unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(ctx, []byte("pwned"))
		f.DecRef()
		// The symlink's ".." stopped at the root: the file was made there.
		inRoot := filepath.Join(dir, filepath.Base(secret))
		if got := hostFile(t, inRoot); got != "pwned" {
			t.Errorf("file created through the symlink holds %q", got)
		}
		if err := fs.Rename(ctx, lookup("/../../"+filepath.Base(secret)), lookup("/stolen"), 0); err != nil {
			t.Fatal(err)
		}
		if got := hostFile(t, filepath.Join(dir, "stolen")); got != "pwned" {
			t.Errorf("renamed in-root file holds %q", got)
		}
		if err := fs.Unlink(ctx, lookup("/../stolen")); err != nil {
			t.Fatal(err)
		}
		if got := hostFile(t, secret); got != "secret" {
			t.Errorf("secret now holds %q", got)
		}
	})
}

func TestReadOnlyRefuses(t *testing.T) {
	dir := makeTree(t)
	root := serve(t, dir)
	ctx := fstest.NewContext()
	lookup := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	if err := fs.Mkdir(ctx, lookup("/d"), 0o755); err != unix.EROFS {
		t.Errorf("mkdir on a read-only gofer = %v, want EROFS", err)
	}
	if err := fs.Unlink(ctx, lookup("/etc/hello")); err != unix.EROFS {
		t.Errorf("unlink on a read-only gofer = %v, want EROFS", err)
	}
	sfs, err := root.Dentry.Filesystem().Impl().StatFS(ctx)
	if err != nil || sfs.Flags&unix.ST_RDONLY == 0 {
		t.Errorf("statfs flags %#x, %v; want ST_RDONLY", sfs.Flags, err)
	}
}

func TestTmpfile(t *testing.T) {
	dir := makeTree(t)
	root := serveRW(t, dir)
	ctx := fstest.NewContext()
	lookup := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	f, err := fs.Open(ctx, *lookup("/etc"), fs.OpenOptions{Flags: unix.O_TMPFILE | unix.O_RDWR, Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	if st, err := f.Stat(ctx); err != nil || st.Nlink != 0 || st.Mode != unix.S_IFREG|0o600 {
		t.Errorf("tmpfile stat nlink %d mode %o, %v", st.Nlink, st.Mode, err)
	}
	if n, err := f.Write(ctx, []byte("tmp")); n != 3 || err != nil {
		t.Fatalf("write = %d, %v", n, err)
	}
	if got := listNames(t, ctx, root, "/etc"); got != "hello rel" {
		t.Errorf("the unnamed file shows in the listing: %q", got)
	}
	if err := fs.Link(ctx, f.VirtualDentry(), lookup("/etc/named")); err != nil {
		t.Fatal(err)
	}
	if got := hostFile(t, filepath.Join(dir, "etc/named")); got != "tmp" {
		t.Errorf("host sees %q", got)
	}
	if st, err := f.Stat(ctx); err != nil || st.Nlink != 1 {
		t.Errorf("nlink after link %d, %v", st.Nlink, err)
	}
	// The node now has a name to reopen it by.
	if err := fs.Chmod(ctx, f.VirtualDentry(), 0o640); err != nil {
		t.Errorf("chmod after link: %v", err)
	}
	if err := fs.SetXattr(ctx, f.VirtualDentry(), "user.x", []byte("1"), 0); err != nil {
		t.Errorf("setxattr after link: %v", err)
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestRemovedNodesReleased creates and removes many files: once their
// nodes are garbage, their gofer handles (O_PATH fds in the gofer, here
// in-process) and kept host fds are released.
func TestRemovedNodesReleased(t *testing.T) {
	dir := makeTree(t)
	root := serveRW(t, dir)
	ctx := fstest.NewContext()
	lookup := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	churn := func() {
		for i := 0; i < 200; i++ {
			p := "/etc/tmp" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
			f, err := fs.Open(ctx, *lookup(p), fs.OpenOptions{Flags: unix.O_RDWR | unix.O_CREAT | unix.O_EXCL, Mode: 0o600})
			if err != nil {
				t.Fatal(err)
			}
			f.Write(ctx, []byte("data"))
			f.DecRef()
			if err := fs.Unlink(ctx, lookup(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	churn() // warm up the connection's workers and caches
	settle := func() int {
		for i := 0; i < 20; i++ {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		return countFDs(t)
	}
	before := settle()
	churn()
	churn()
	if after := settle(); after > before+10 {
		t.Errorf("%d fds open after creating and removing 400 files, %d before", after, before)
	}
}
