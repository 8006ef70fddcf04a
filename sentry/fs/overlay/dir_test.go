package overlay

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// TestDirReadSkipsRemoved: an overlay directory file does not list a name
// removed (whited out, or made only in the upper layer and removed)
// after it was opened, before the read that would return it.
func TestDirReadSkipsRemoved(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	v.write("/etc/new", "n\n")
	fd, err := fs.Open(w.ctx, *v.lookup("/etc"), fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_DIRECTORY})
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	it := fd.Impl().(fs.DirIterator)
	read := func(max int) []string {
		var names []string
		if err := it.IterDirents(w.ctx, fd, func(d fs.Dirent) bool {
			if len(names) == max {
				return false
			}
			names = append(names, d.Name)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := read(2); !slices.Equal(got, []string{".", ".."}) {
		t.Fatalf("first read %v", got)
	}
	for _, p := range []string{"/etc/hosts", "/etc/new"} {
		if err := fs.Unlink(w.ctx, v.lookup(p)); err != nil {
			t.Fatalf("unlink %s: %v", p, err)
		}
	}
	got := read(100)
	slices.Sort(got)
	if want := []string{"passwd", "sub"}; !slices.Equal(got, want) {
		t.Errorf("after removals: %v, want %v", got, want)
	}
	// The lower layer still has hosts; the overlay never lists it again.
	if _, err := fd.Seek(w.ctx, 0, unix.SEEK_SET); err != nil {
		t.Fatal(err)
	}
	got = read(100)
	slices.Sort(got)
	if want := []string{".", "..", "passwd", "sub"}; !slices.Equal(got, want) {
		t.Errorf("after rewind: %v, want %v", got, want)
	}
}
