package gofer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// fuzzTree makes a host tree in dir with deep directories, files, and
// relative, absolute, dangling, looping and upward symlinks.
func fuzzTree(t testing.TB, dir string) {
	for _, d := range []string{"a/b/c/d", "usr/lib/x", "e"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/b/c/d/f", "a/b/g", "usr/lib/x/libc.so", "top"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"lib": "usr/lib", "a/b/up": "../..", "a/abs": "/usr/lib/x", "a/b/c/self": ".",
		"loop1": "loop2", "loop2": "loop1", "dangling": "nope/x", "a/b/tofile": "g",
		"usr/lib/x/back": "../../../a/b", "e/root": "/", "e/dotdot": "../../../..",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzLookupPath resolves arbitrary paths in a fresh gofer tree (so that
// uncached runs go through LookupPath) and checks the result against the
// host's own resolution of the same path with the tree as root
// (openat2 with RESOLVE_IN_ROOT): the same file, or the same error.
func FuzzLookupPath(f *testing.F) {
	for _, s := range []string{
		"/a/b/c/d/f", "lib/x/libc.so", "/a/b/up/a/b/g", "a/abs/back/c/d/f", "loop1/x", "dangling",
		"a/b/tofile/x", "a/b/c/self/self/d/f", "e/root/e/dotdot/top", "a/b/c/d/f/", "/usr/lib/x/nope/y",
		"a/../a/b/../b/c/./d", "top/x", "//a//b//g", "",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	dir := f.TempDir()
	fuzzTree(f, dir)
	f.Fuzz(func(t *testing.T, path string, follow bool) {
		if strings.IndexByte(path, 0) >= 0 || len(path) > 512 {
			return
		}
		root := serve(t, dir)
		ctx := fstest.NewContext()
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: path, FollowFinal: follow})

		dfd, herr := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
		if herr != nil {
			t.Fatal(herr)
		}
		defer unix.Close(dfd)
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
		if !follow {
			how.Flags |= unix.O_NOFOLLOW
		}
		hfd, herr := unix.Openat2(dfd, path, &how)
		if herr != nil {
			if err != herr {
				t.Fatalf("Resolve(%q, follow %v) = %v; the host says %v", path, follow, err, herr)
			}
			return
		}
		defer unix.Close(hfd)
		var hst unix.Stat_t
		if err := unix.Fstat(hfd, &hst); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatalf("Resolve(%q, follow %v) = %v; the host finds ino %d", path, follow, err, hst.Ino)
		}
		st, err := vd.Stat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Ino != hst.Ino || st.Mode != hst.Mode {
			t.Fatalf("Resolve(%q, follow %v) = ino %d mode %o; the host finds ino %d mode %o", path, follow, st.Ino, st.Mode, hst.Ino, hst.Mode)
		}
	})
}
