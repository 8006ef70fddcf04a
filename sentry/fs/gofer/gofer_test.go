package gofer

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/gofertest"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// serve starts a real read-only gofer on dir over a socketpair and returns
// the mounted tree's root.
func serve(t *testing.T, dir string) fs.VirtualDentry {
	t.Helper()
	return serveTree(t, dir, false)
}

// serveTree starts a gofer on dir, read-write if writable, and mounts its
// tree.
func serveTree(t *testing.T, dir string, writable bool) fs.VirtualDentry {
	t.Helper()
	client := gofertest.ServeDir(t, dir, !writable)
	newFS := New
	if writable {
		newFS = NewWritable
	}
	f, err := newFS(client)
	if err != nil {
		t.Fatal(err)
	}
	return fs.NewMountNamespace(f, fs.MountFlags{}).Root()
}

func makeTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "etc/hello"), []byte("hello, world\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "big"), []byte(strings.Repeat("0123456789", 100000)), 0o644))
	must(os.Symlink("hello", filepath.Join(dir, "etc/rel")))
	must(os.Symlink("/etc", filepath.Join(dir, "abs")))
	must(os.Symlink("../../../../etc/hello", filepath.Join(dir, "up")))
	must(unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "private"), 0o700))
	return dir
}

func TestGoferTree(t *testing.T) {
	root := serve(t, makeTree(t))
	ctx := fstest.NewContext()
	open := func(path string, flags uint32) (*fs.FileDescription, error) {
		return fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: path}, fs.OpenOptions{Flags: flags})
	}
	t.Run("read", func(t *testing.T) {
		for _, p := range []string{"/etc/hello", "/etc/rel", "/abs/rel", "/up"} {
			f, err := open(p, unix.O_RDONLY)
			if err != nil {
				t.Fatalf("open %s: %v", p, err)
			}
			buf := make([]byte, 100)
			n, err := f.Read(ctx, buf)
			if err != nil || string(buf[:n]) != "hello, world\n" {
				t.Fatalf("read %s = %q, %v", p, buf[:n], err)
			}
			if n, _ := f.Read(ctx, buf); n != 0 {
				t.Fatalf("no EOF: %d", n)
			}
			f.DecRef()
		}
	})
	t.Run("big pread", func(t *testing.T) {
		f, err := open("/big", unix.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		defer f.DecRef()
		buf := make([]byte, 1000000)
		if n, err := f.PRead(ctx, buf, 0); n != 1000000 || err != nil {
			t.Fatalf("pread = %d, %v", n, err)
		}
		if n, _ := f.PRead(ctx, buf[:5], 999998); n != 2 || string(buf[:2]) != "89" {
			t.Fatalf("pread at end = %d %q", n, buf[:2])
		}
		if off, _ := f.Seek(ctx, 0, unix.SEEK_END); off != 1000000 {
			t.Fatalf("seek end = %d", off)
		}
	})
	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			path  string
			flags uint32
			err   error
		}{
			{"/etc/hello", unix.O_WRONLY, unix.EROFS},
			{"/etc/hello", unix.O_RDWR | unix.O_CREAT, unix.EROFS},
			{"/etc/new", unix.O_WRONLY | unix.O_CREAT, unix.EROFS},
			{"/etc/missing", unix.O_RDONLY, unix.ENOENT},
			{"/fifo", unix.O_WRONLY | unix.O_NONBLOCK, unix.ENXIO}, // a named pipe with no reader
			{"/etc/hello/x", unix.O_RDONLY, unix.ENOTDIR},
			{"/etc/rel", unix.O_NOFOLLOW, unix.ELOOP},
		}
		for _, c := range cases {
			f, err := open(c.path, c.flags)
			if err != c.err {
				t.Errorf("open(%s, %#x) = %v, want %v", c.path, c.flags, err, c.err)
			}
			if f != nil {
				f.DecRef()
			}
		}
	})
	t.Run("stat", func(t *testing.T) {
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/fifo"})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := vd.Stat(ctx)
		if st.Type() != unix.S_IFIFO || st.Dev != root.Dentry.Filesystem().Dev() {
			t.Errorf("fifo stat %+v", st)
		}
		vd, _ = fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/etc/hello"})
		if st, _ := vd.Stat(ctx); st.Size != 13 || st.Mode != unix.S_IFREG|0o644 {
			t.Errorf("hello stat %+v", st)
		}
		sfs, err := root.Dentry.Filesystem().Impl().StatFS(ctx)
		if err != nil || sfs.Bsize == 0 {
			t.Errorf("statfs %+v %v", sfs, err)
		}
	})
	t.Run("getdents and readlink", func(t *testing.T) {
		f, err := open("/", unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			t.Fatal(err)
		}
		defer f.DecRef()
		var names []string
		f.Impl().(fs.DirIterator).IterDirents(ctx, f, func(d fs.Dirent) bool {
			names = append(names, d.Name)
			return true
		})
		sort.Strings(names)
		if got := strings.Join(names, " "); got != ". .. abs big etc fifo private up" {
			t.Errorf("dirents %q", got)
		}
		vd, _ := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/abs"})
		target, err := vd.Dentry.Node().(fs.SymlinkNode).Readlink(ctx)
		if err != nil || target != "/etc" {
			t.Errorf("readlink = %q, %v", target, err)
		}
	})
	t.Run("permissions", func(t *testing.T) {
		user := fstest.NewUserContext(4242, 4242)
		_, err := fs.Resolve(user, &fs.Lookup{Root: root, Start: root, Path: "/private/x"})
		if err != unix.EACCES {
			t.Errorf("user into 0700 dir = %v, want EACCES", err)
		}
	})
}
