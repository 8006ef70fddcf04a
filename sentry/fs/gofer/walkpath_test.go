package gofer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// readFDsOn counts this process's fds open for reading (not O_PATH) on
// the host file path.
func readFDsOn(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err != nil || target != path {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f, ok := strings.CutPrefix(line, "flags:"); ok {
				if flags, _ := strconv.ParseUint(strings.TrimSpace(f), 8, 64); flags&unix.O_PATH == 0 {
					n++
				}
			}
		}
	}
	return n
}

// settledReadFDsOn returns how many more read fds this process has on host
// than before, once that is want or 5 s have passed: the gofer server runs
// in this process and closes its copy of a donated fd only after sending
// it, so the client may count that copy for a moment.
func settledReadFDsOn(t *testing.T, host string, before, want int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := readFDsOn(t, host) - before
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLookupPathOpenHint checks that a lookup for an open (OpenHint) gets
// the file's host fd with the walk, and one without does not.
func TestLookupPathOpenHint(t *testing.T) {
	tests := []struct {
		name string
		path string
		hint bool
		want int // read fds on the file afterwards
	}{
		{"run with hint", "/a/../etc/hello", true, 1},
		{"single name with hint", "/etc/hello", true, 1},
		{"through a symlink with hint", "/etc/rel", true, 1},
		{"no hint", "/etc/hello", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A tree of its own: fds kept by earlier cases' nodes
			// close whenever those become garbage.
			dir := makeTree(t)
			if err := os.MkdirAll(filepath.Join(dir, "a/b"), 0o755); err != nil {
				t.Fatal(err)
			}
			host := filepath.Join(dir, "etc/hello")
			root := serve(t, dir)
			ctx := fstest.NewContext()
			// /etc is cached first, so "single name" walks one name.
			if _, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/etc"}); err != nil {
				t.Fatal(err)
			}
			before := readFDsOn(t, host)
			if _, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: tt.path, FollowFinal: true, OpenHint: tt.hint}); err != nil {
				t.Fatal(err)
			}
			if got := settledReadFDsOn(t, host, before, tt.want); got != tt.want {
				t.Errorf("%d read fds on the file after the lookup, want %d", got, tt.want)
			}
			f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: tt.path}, fs.OpenOptions{Flags: unix.O_RDONLY})
			if err != nil {
				t.Fatal(err)
			}
			defer f.DecRef()
			if got := settledReadFDsOn(t, host, before, 1); got != 1 {
				t.Errorf("%d read fds on the file once open, want 1 (the lookup's reused)", got)
			}
		})
	}
}
