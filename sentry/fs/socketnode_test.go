package fs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// TestMknodSocket checks the node bind(2) creates for a Unix-domain
// socket: its type and mode, the returned position, and the errors.
func TestMknodSocket(t *testing.T) {
	root := writableTree(t)
	ctx := fstest.NewContext()
	lk := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	vd, err := fs.MknodSocket(ctx, lk("/w/s.sock"), 0o755)
	if err != nil {
		t.Fatalf("MknodSocket: %v", err)
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode != unix.S_IFSOCK|0o755 {
		t.Errorf("mode %#o, want %#o", st.Mode, unix.S_IFSOCK|0o755)
	}
	got, err := fs.Resolve(ctx, lk("/w/s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	if got != vd {
		t.Errorf("resolved %v, want the returned position %v", got, vd)
	}
	cases := []struct {
		name string
		path string
		want error
	}{
		{"existing", "/w/s.sock", unix.EADDRINUSE},
		{"existing dir", "/w", unix.EADDRINUSE},
		{"missing parent", "/w/nope/s", unix.ENOENT},
		{"read-only", "/s.sock", unix.EROFS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := fs.MknodSocket(ctx, lk(c.path), 0o777); err != c.want {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
}
