package overlay

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/gofertest"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// goferLower serves dir with a real read-only gofer and returns its file
// system, whose directories look up runs of names at once.
func goferLower(t *testing.T, dir string) *fs.Filesystem {
	t.Helper()
	client := gofertest.ServeDir(t, dir, true)
	f, err := gofer.New(client)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLookupPathMergesLayers changes an overlay over a gofer lower layer
// (whiteouts, an opaque directory, copy-ups, upper-only directories),
// then walks a fresh overlay of the same two layers, whose lookups go
// through LookupPath runs: every path must resolve as in the overlay
// that made the changes one lookup at a time.
func TestLookupPathMergesLayers(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a/b/c"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "a/b/d"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "top/sub"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "gone"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a/b/c/file"), []byte("lower"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "a/b/c/other"), []byte("other"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "a/b/d/x"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "top/sub/f"), []byte("f"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "gone/g"), []byte("g"), 0o644))
	must(os.Symlink("b/c", filepath.Join(dir, "a/link")))
	must(os.Symlink("/top/sub", filepath.Join(dir, "abs")))

	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := fstest.NewContext()
	lowerFS := goferLower(t, dir)
	upperFS := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	mount := func() view {
		t.Helper()
		ofs, err := New(ctx, upperFS, lowerFS)
		if err != nil {
			t.Fatal(err)
		}
		w := &world{t: t, ctx: ctx}
		w.root = fs.NewMountNamespace(ofs, fs.MountFlags{}).Root()
		return w.top()
	}

	first := mount()
	first.write("/a/b/c/file", "upper")                                            // copy-up of a, a/b, a/b/c
	first.wantErr("unlink a/b/d/x", fs.Unlink(ctx, first.lookup("/a/b/d/x")), nil) // whiteout
	first.wantErr("unlink gone/g", fs.Unlink(ctx, first.lookup("/gone/g")), nil)
	first.wantErr("rmdir gone", fs.Rmdir(ctx, first.lookup("/gone")), nil)
	first.mkdir("/gone", 0o755) // opaque
	first.write("/gone/new", "new")
	first.mkdir("/fresh", 0o755)
	first.mkdir("/fresh/inner", 0o755)
	first.write("/fresh/inner/f", "fresh")

	second := mount()
	tests := []struct {
		path    string
		content string // "" for a directory
		err     error
	}{
		{"/a/b/c/file", "upper", nil},
		{"/a/b/c/other", "other", nil},
		{"/a/b/d/x", "", unix.ENOENT},
		{"/a/b/d", "", nil},
		{"/a/link/file", "upper", nil},
		{"/a/link/other", "other", nil},
		{"/abs/f", "f", nil},
		{"/top/sub/f", "f", nil},
		{"/gone/g", "", unix.ENOENT},
		{"/gone/new", "new", nil},
		{"/fresh/inner/f", "fresh", nil},
		{"/a/b/c/file/x", "", unix.ENOTDIR},
		{"/a/nope/x/y", "", unix.ENOENT},
		{"/a/b/c/nope", "", unix.ENOENT},
		{"/a/b/../b/c/other", "other", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			for _, v := range []view{second, first} {
				st, err := v.stat(tt.path)
				if err != tt.err {
					t.Fatalf("stat = %v, want %v", err, tt.err)
				}
				if err != nil {
					continue
				}
				if tt.content == "" {
					if !st.IsDir() {
						t.Errorf("mode %o, want a directory", st.Mode)
					}
					continue
				}
				v.mustRead(tt.path, tt.content)
			}
			st1, err1 := first.stat(tt.path)
			st2, err2 := second.stat(tt.path)
			if err1 == nil && err2 == nil && (st1.Ino != st2.Ino || st1.Mode != st2.Mode) {
				t.Errorf("fresh overlay: ino %d mode %o; overlay that made the changes: %d %o", st2.Ino, st2.Mode, st1.Ino, st1.Mode)
			}
		})
	}
	if got := second.ls("/a/b/d"); len(got) != 0 {
		t.Errorf("ls /a/b/d = %v, want nothing (x is whited out)", got)
	}
	if got := second.ls("/gone"); len(got) != 1 || got[0] != "new" {
		t.Errorf("ls /gone = %v, want [new] (opaque)", got)
	}
}
