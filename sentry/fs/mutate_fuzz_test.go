package fs_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// fuzzPaths are the names the fuzzed changes use: two levels, so renames
// can move directories into and out of each other.
var fuzzPaths = []string{"/w/a", "/w/b", "/w/c", "/w/a/x", "/w/a/y", "/w/b/x", "/w/b/y", "/w/a/x/z", "/w/b/x/z"}

// truth resolves p directly in the memfs, bypassing the dentry cache.
func truth(root *memDir, p string) fs.Node {
	var n fs.Node = root
	for _, c := range strings.Split(strings.TrimPrefix(p, "/w/"), "/") {
		d, ok := n.(*memDir)
		if !ok {
			return nil
		}
		if n, ok = d.children[c]; !ok {
			return nil
		}
	}
	return n
}

// FuzzChanges runs random sequences of namespace changes and checks that
// path resolution through the dentry cache always finds what the file
// system holds.
func FuzzChanges(f *testing.F) {
	f.Add([]byte{0, 0, 1, 3, 2, 0, 4, 0, 1, 5, 3, 1})
	f.Add([]byte{0, 0, 0, 1, 1, 3, 4, 3, 5, 2, 0, 5, 6, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ft := newTFS(t)
		ctx := fstest.NewContext()
		wvd := ft.vd("/w", true)
		root := wvd.Dentry.Node().(*memDir)
		path := func(b byte) string { return fuzzPaths[int(b)%len(fuzzPaths)] }
		for i := 0; i+2 < len(ops) && i < 300; i += 3 {
			a, b := path(ops[i+1]), path(ops[i+2])
			switch ops[i] % 8 {
			case 0:
				fs.Mkdir(ctx, ft.lk(a), 0o755)
			case 1:
				if fd, err := ft.open(a, unix.O_CREAT|unix.O_WRONLY, 0o644); err == nil {
					fd.DecRef()
				}
			case 2:
				fs.Unlink(ctx, ft.lk(a))
			case 3:
				fs.Rmdir(ctx, ft.lk(a))
			case 4:
				fs.Rename(ctx, ft.lk(a), ft.lk(b), 0)
			case 5:
				fs.Rename(ctx, ft.lk(a), ft.lk(b), unix.RENAME_EXCHANGE)
			case 6:
				if vd, err := fs.Resolve(ctx, ft.lk(a)); err == nil {
					fs.Link(ctx, vd, ft.lk(b))
				}
			case 7:
				fs.Symlink(ctx, ft.lk(a), "x")
			}
			for _, p := range fuzzPaths {
				want := truth(root, p)
				vd, err := fs.Resolve(ctx, ft.lk(p))
				switch {
				case want == nil && err == nil:
					t.Fatalf("after op %d: %s resolves but the file system has no such file", i/3, p)
				case want != nil && err != nil:
					t.Fatalf("after op %d: %s: %v, but the file system has it", i/3, p, err)
				case want != nil && vd.Dentry.Node() != want:
					t.Fatalf("after op %d: %s resolves to another node", i/3, p)
				}
				if err == nil {
					if got, _ := fs.PathOf(ft.root, vd); got != p {
						t.Fatalf("after op %d: PathOf(%s) = %q", i/3, p, got)
					}
				}
			}
		}
	})
}
