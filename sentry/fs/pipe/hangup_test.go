package pipe

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// TestReaderHangup checks when a read end reports POLLHUP: an anonymous
// pipe's once its writers are gone; a FIFO reader opened with O_NONBLOCK
// and no writer only after a writer came and went since.
func TestReaderHangup(t *testing.T) {
	ctx := fstest.NewContext()
	hup := func(f *fs.FileDescription) bool { return f.Readiness(waiter.EventHUp) != 0 }

	r, w := NewPair(ctx, 0)
	if hup(r) {
		t.Fatal("anonymous pipe with a writer reports POLLHUP")
	}
	w.DecRef()
	if !hup(r) {
		t.Fatal("anonymous pipe without writers does not report POLLHUP")
	}
	r.DecRef()

	var n Named
	vd := fs.VirtualDentry{}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (*fs.FileDescription, []*fs.FileDescription)
		want  bool
	}{
		{"nonblocking reader, no writer yet", func(t *testing.T) (*fs.FileDescription, []*fs.FileDescription) {
			r, err := n.Open(ctx, vd, unix.O_RDONLY|unix.O_NONBLOCK)
			if err != nil {
				t.Fatal(err)
			}
			return r, nil
		}, false},
		{"a writer came and went", func(t *testing.T) (*fs.FileDescription, []*fs.FileDescription) {
			r, err := n.Open(ctx, vd, unix.O_RDONLY|unix.O_NONBLOCK)
			if err != nil {
				t.Fatal(err)
			}
			w, err := n.Open(ctx, vd, unix.O_WRONLY|unix.O_NONBLOCK)
			if err != nil {
				t.Fatal(err)
			}
			w.DecRef()
			// A later reader starts afresh.
			r2, err := n.Open(ctx, vd, unix.O_RDONLY|unix.O_NONBLOCK)
			if err != nil {
				t.Fatal(err)
			}
			if hup(r2) {
				t.Error("a reader opened after the writer left reports POLLHUP")
			}
			return r, []*fs.FileDescription{r2}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, more := tc.setup(t)
			if got := hup(r); got != tc.want {
				t.Errorf("POLLHUP = %v, want %v", got, tc.want)
			}
			r.DecRef()
			for _, f := range more {
				f.DecRef()
			}
		})
	}
}
