package inotify

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/overlay"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

type world struct {
	t    *testing.T
	ctx  *fstest.Context
	root fs.VirtualDentry
	in   *Instance
	file *fs.FileDescription
}

func newWorld(t *testing.T) *world {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := fstest.NewContext()
	f := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	w := &world{t: t, ctx: ctx, root: fs.NewMountNamespace(f, fs.MountFlags{}).Root()}
	fd, err := New(ctx, unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	w.file, w.in = fd, FromFile(fd)
	t.Cleanup(fd.DecRef)
	return w
}

func (w *world) lookup(path string) *fs.Lookup {
	return &fs.Lookup{Root: w.root, Start: w.root, Path: path, FollowFinal: true}
}

func (w *world) resolve(path string) fs.VirtualDentry {
	w.t.Helper()
	vd, err := fs.Resolve(w.ctx, w.lookup(path))
	if err != nil {
		w.t.Fatalf("resolve %s: %v", path, err)
	}
	return vd
}

func (w *world) create(path string) {
	w.t.Helper()
	fd, err := fs.Open(w.ctx, *w.lookup(path), fs.OpenOptions{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: 0o644})
	if err != nil {
		w.t.Fatalf("create %s: %v", path, err)
	}
	fd.DecRef()
}

func (w *world) watch(path string, mask uint32) int32 {
	w.t.Helper()
	wd, err := w.in.Watch(w.resolve(path), mask)
	if err != nil {
		w.t.Fatalf("watch %s: %v", path, err)
	}
	return wd
}

// anyCookie in an expected event stands for the cookie of a move.
const anyCookie = ^uint32(0)

type ev struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// drain reads every queued event.
func (w *world) drain() []ev {
	w.t.Helper()
	var out []ev
	buf := make([]byte, 1<<16)
	for {
		n, err := w.in.Read(w.ctx, w.file, buf, -1)
		if err == syserror.ErrWouldBlock {
			return out
		}
		if err != nil {
			w.t.Fatalf("read: %v", err)
		}
		le := binary.LittleEndian
		for off := 0; off < n; {
			e := ev{wd: int32(le.Uint32(buf[off:])), mask: le.Uint32(buf[off+4:]), cookie: le.Uint32(buf[off+8:])}
			l := int(le.Uint32(buf[off+12:]))
			name := buf[off+16 : off+16+l]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			e.name = string(name)
			out = append(out, e)
			off += 16 + l
		}
	}
}

func TestEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(w *world) []ev
	}{
		{"create and unlink", func(w *world) []ev {
			wd := w.watch("/", unix.IN_CREATE|unix.IN_DELETE)
			w.create("/f")
			if err := fs.Mkdir(w.ctx, w.lookup("/d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := fs.Unlink(w.ctx, w.lookup("/f")); err != nil {
				t.Fatal(err)
			}
			return []ev{{wd, unix.IN_CREATE, 0, "f"}, {wd, unix.IN_CREATE | unix.IN_ISDIR, 0, "d"}, {wd, unix.IN_DELETE, 0, "f"}}
		}},
		{"identical events merge", func(w *world) []ev {
			w.create("/f")
			wd := w.watch("/f", unix.IN_ATTRIB)
			for i := 0; i < 3; i++ {
				if err := fs.Chmod(w.ctx, w.resolve("/f"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			return []ev{{wd, unix.IN_ATTRIB, 0, ""}}
		}},
		{"oneshot", func(w *world) []ev {
			wd := w.watch("/", unix.IN_CREATE|unix.IN_ONESHOT)
			w.create("/a")
			w.create("/b")
			return []ev{{wd, unix.IN_CREATE, 0, "a"}, {wd, unix.IN_IGNORED, 0, ""}}
		}},
		{"hard links share the watch", func(w *world) []ev {
			w.create("/f")
			wd := w.watch("/f", unix.IN_ATTRIB)
			if err := fs.Link(w.ctx, w.resolve("/f"), w.lookup("/g")); err != nil {
				t.Fatal(err)
			}
			if got := w.watch("/g", unix.IN_ATTRIB|unix.IN_MASK_ADD); got != wd {
				t.Errorf("second name: wd %d, want %d", got, wd)
			}
			return []ev{{wd, unix.IN_ATTRIB, 0, ""}}
		}},
		{"rename cookie", func(w *world) []ev {
			w.create("/f")
			wd := w.watch("/", unix.IN_MOVE)
			if err := fs.Rename(w.ctx, w.lookup("/f"), w.lookup("/g"), 0); err != nil {
				t.Fatal(err)
			}
			return []ev{{wd, unix.IN_MOVED_FROM, anyCookie, "f"}, {wd, unix.IN_MOVED_TO, anyCookie, "g"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			want := tc.run(w)
			got := w.drain()
			if len(got) != len(want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			var cookie uint32
			for i := range want {
				if want[i].cookie == anyCookie {
					// Moves share one cookie, not 0.
					if got[i].cookie == 0 || (cookie != 0 && got[i].cookie != cookie) {
						t.Errorf("event %d: cookie %d, want one nonzero cookie", i, got[i].cookie)
					}
					cookie = got[i].cookie
					want[i].cookie = got[i].cookie
				}
				if got[i] != want[i] {
					t.Errorf("event %d: got %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestReadSizes(t *testing.T) {
	w := newWorld(t)
	w.watch("/", unix.IN_CREATE)
	w.create("/abc")
	if got := w.in.Pending(); got != 32 {
		t.Fatalf("pending %d, want 32", got)
	}
	buf := make([]byte, 31)
	if _, err := w.in.Read(w.ctx, w.file, buf, -1); err != unix.EINVAL {
		t.Fatalf("short read: %v, want EINVAL", err)
	}
	buf = make([]byte, 32)
	for i := range buf {
		buf[i] = 0xff
	}
	if n, err := w.in.Read(w.ctx, w.file, buf, -1); n != 32 || err != nil {
		t.Fatalf("read: %d %v", n, err)
	}
	if l := binary.LittleEndian.Uint32(buf[12:]); l != 16 {
		t.Errorf("len %d, want 16", l)
	}
	if string(buf[16:19]) != "abc" {
		t.Errorf("name %q", buf[16:19])
	}
	for i := 19; i < 32; i++ {
		if buf[i] != 0 {
			t.Fatalf("padding byte %d is %#x", i, buf[i])
		}
	}
}

func TestOverflowAndReadiness(t *testing.T) {
	w := newWorld(t)
	w.create("/a")
	w.create("/b")
	wd := w.watch("/", unix.IN_ATTRIB)
	if r := w.in.Readiness(waiter.EventIn); r != 0 {
		t.Fatalf("empty instance ready: %#x", r)
	}
	a, b := w.resolve("/a"), w.resolve("/b")
	for i := 0; i < MaxQueuedEvents+5; i++ {
		vd := a
		if i%2 == 1 {
			vd = b
		}
		if err := fs.Chmod(w.ctx, vd, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if r := w.in.Readiness(waiter.EventIn); r != waiter.EventIn {
		t.Fatalf("readiness %#x", r)
	}
	evs := w.drain()
	if len(evs) != MaxQueuedEvents+1 {
		t.Fatalf("%d events, want %d", len(evs), MaxQueuedEvents+1)
	}
	if evs[0] != (ev{wd, unix.IN_ATTRIB, 0, "a"}) {
		t.Errorf("first %+v", evs[0])
	}
	if last := evs[len(evs)-1]; last != (ev{-1, unix.IN_Q_OVERFLOW, 0, ""}) {
		t.Errorf("last %+v", last)
	}
}

func TestWatchErrors(t *testing.T) {
	w := newWorld(t)
	wd := w.watch("/", unix.IN_CREATE)
	if _, err := w.in.Watch(w.resolve("/"), unix.IN_CREATE|unix.IN_MASK_CREATE); err != unix.EEXIST {
		t.Errorf("IN_MASK_CREATE again: %v, want EEXIST", err)
	}
	if err := w.in.RemoveWatch(wd + 1); err != unix.EINVAL {
		t.Errorf("rm unknown: %v", err)
	}
	if err := w.in.RemoveWatch(wd); err != nil {
		t.Errorf("rm: %v", err)
	}
	if err := w.in.RemoveWatch(wd); err != unix.EINVAL {
		t.Errorf("rm twice: %v", err)
	}
	if evs := w.drain(); len(evs) != 1 || evs[0].mask != unix.IN_IGNORED {
		t.Errorf("events %+v, want one IN_IGNORED", evs)
	}
}

// TestOverlayCopyUp watches files of an overlay (the container root's
// file system) across copy-up.
func TestOverlayCopyUp(t *testing.T) {
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := fstest.NewContext()
	lowerFS := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	lw := &world{t: t, ctx: ctx, root: fs.NewMountNamespace(lowerFS, fs.MountFlags{}).Root()}
	if err := fs.Mkdir(ctx, lw.lookup("/etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	lw.create("/etc/passwd")
	upperFS := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	ofs, err := overlay.New(ctx, upperFS, lowerFS)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.root = fs.NewMountNamespace(ofs, fs.MountFlags{}).Root()
	wf := w.watch("/etc/passwd", unix.IN_MODIFY|unix.IN_ATTRIB|unix.IN_CLOSE_WRITE)
	wd := w.watch("/etc", unix.IN_CREATE|unix.IN_DELETE)
	fd, err := fs.Open(ctx, *w.lookup("/etc/passwd"), fs.OpenOptions{Flags: unix.O_WRONLY})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.Write(ctx, []byte("root")); err != nil {
		t.Fatal(err)
	}
	fd.DecRef()
	if err := fs.Chmod(ctx, w.resolve("/etc/passwd"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.create("/etc/new")
	if err := fs.Unlink(ctx, w.lookup("/etc/passwd")); err != nil {
		t.Fatal(err)
	}
	want := []ev{
		{wf, unix.IN_MODIFY, 0, ""},
		{wf, unix.IN_CLOSE_WRITE, 0, ""},
		{wf, unix.IN_ATTRIB, 0, ""},
		{wd, unix.IN_CREATE, 0, "new"},
		{wf, unix.IN_ATTRIB, 0, ""},
		{wd, unix.IN_DELETE, 0, "passwd"},
		// IN_DELETE_SELF is not in the mask, but the watch goes.
		{wf, unix.IN_IGNORED, 0, ""},
	}
	got := w.drain()
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
