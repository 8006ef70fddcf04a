package gofer

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// TestLookupPath resolves uncached paths, which the walk looks up as
// runs of components (one WalkPath each): each resolution must end where
// the host's does, through symlinks (whose targets come with the walk),
// "..", missing names and files in the middle, on a fresh tree each
// time so nothing is cached.
func TestLookupPath(t *testing.T) {
	dir := makeTree(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "usr/lib/x86_64-linux-gnu"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "usr/lib/x86_64-linux-gnu/libc.so.6"), []byte("libc"), 0o644))
	must(os.Symlink("usr/lib", filepath.Join(dir, "lib")))
	must(os.Symlink("/lib/x86_64-linux-gnu/libc.so.6", filepath.Join(dir, "usr/lib/libc-abs")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))
	tests := []struct {
		path        string
		followFinal bool
		content     string // "" for a directory or symlink
		err         error
	}{
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", true, "libc", nil},
		{"/lib/x86_64-linux-gnu/libc.so.6", true, "libc", nil},
		{"/usr/lib/libc-abs", true, "libc", nil},
		{"/lib/libc-abs", true, "libc", nil},
		{"/usr/lib/x86_64-linux-gnu", true, "", nil},
		{"/usr/lib/x86_64-linux-gnu/", true, "", nil},
		{"/usr/lib/../lib/x86_64-linux-gnu/libc.so.6", true, "libc", nil},
		{"/usr/./lib/x86_64-linux-gnu/libc.so.6", true, "libc", nil},
		{"/lib/x86_64-linux-gnu/../../../etc/hello", true, "hello, world\n", nil},
		{"/abs/rel", true, "hello, world\n", nil},
		{"/up", true, "hello, world\n", nil},
		{"/usr/lib/nope/libc.so.6", true, "", unix.ENOENT},
		{"/usr/lib/x86_64-linux-gnu/nope", true, "", unix.ENOENT},
		{"/usr/nope/lib/x86_64-linux-gnu", true, "", unix.ENOENT},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6/x", true, "", unix.ENOTDIR},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6/", true, "", unix.ENOTDIR},
		{"/etc/hello/x/y", true, "", unix.ENOTDIR},
		{"/loop1/x", true, "", unix.ELOOP},
		{"/usr/lib/libc-abs", false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			root := serve(t, dir) // a fresh tree: nothing cached
			ctx := fstest.NewContext()
			l := &fs.Lookup{Root: root, Start: root, Path: tt.path, FollowFinal: tt.followFinal}
			vd, err := fs.Resolve(ctx, l)
			if err != tt.err {
				t.Fatalf("Resolve = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			st, err := vd.Stat(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.content == "" {
				if !tt.followFinal && st.Type() != unix.S_IFLNK {
					t.Errorf("mode %o, want the symlink", st.Mode)
				}
				return
			}
			f, err := fs.Open(ctx, *l, fs.OpenOptions{Flags: unix.O_RDONLY})
			if err != nil {
				t.Fatal(err)
			}
			defer f.DecRef()
			buf := make([]byte, 64)
			n, _ := f.Read(ctx, buf)
			if string(buf[:n]) != tt.content {
				t.Errorf("read %q, want %q", buf[:n], tt.content)
			}
		})
	}
	t.Run("parent", func(t *testing.T) {
		root := serve(t, dir)
		ctx := fstest.NewContext()
		p, err := fs.ResolveParent(ctx, &fs.Lookup{Root: root, Start: root, Path: "/lib/x86_64-linux-gnu/new"})
		if err != nil || p.Name != "new" {
			t.Fatalf("ResolveParent = %q, %v", p.Name, err)
		}
		want, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/usr/lib/x86_64-linux-gnu"})
		if err != nil || want.Dentry != p.Dir.Dentry {
			t.Errorf("parent dentry %p, want %p (%v)", p.Dir.Dentry, want.Dentry, err)
		}
	})
	t.Run("permissions", func(t *testing.T) {
		must(os.MkdirAll(filepath.Join(dir, "private/in/deep"), 0o755))
		root := serve(t, dir)
		user := fstest.NewUserContext(4242, 4242)
		if _, err := fs.Resolve(user, &fs.Lookup{Root: root, Start: root, Path: "/private/in/deep"}); err != unix.EACCES {
			t.Errorf("user through a 0700 dir = %v, want EACCES", err)
		}
		// The run looked up for the user is cached, but root's walk
		// checks each directory itself.
		if _, err := fs.Resolve(fstest.NewContext(), &fs.Lookup{Root: root, Start: root, Path: "/private/in/deep"}); err != nil {
			t.Errorf("root after the user = %v", err)
		}
		if _, err := fs.Resolve(user, &fs.Lookup{Root: root, Start: root, Path: "/private/in/deep"}); err != unix.EACCES {
			t.Errorf("user again, cached = %v, want EACCES", err)
		}
	})
}
