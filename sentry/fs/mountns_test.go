package fs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// nsWorld is a mount namespace over a memfs with directories made on
// demand.
type nsWorld struct {
	t   *testing.T
	ctx fs.Context
	ns  *fs.MountNamespace
}

func newNSWorld(t *testing.T, dirs ...string) *nsWorld {
	t.Helper()
	w := &nsWorld{t: t, ctx: fstest.NewContext(), ns: fs.NewMountNamespace(newMemFS(), fs.MountFlags{})}
	root := w.ns.Root()
	for _, d := range dirs {
		if err := fs.Mkdir(w.ctx, &fs.Lookup{Root: root, Start: root, Path: d}, 0o755); err != nil {
			t.Fatalf("mkdir %s: %v", d, err)
		}
	}
	return w
}

// at resolves p from ns's root (following mounts).
func (w *nsWorld) at(ns *fs.MountNamespace, p string) fs.VirtualDentry {
	w.t.Helper()
	root := ns.TopRoot()
	vd, err := fs.Resolve(w.ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
	if err != nil {
		w.t.Fatalf("resolve %s: %v", p, err)
	}
	return vd
}

// mountOf returns the mount whose root is at p in ns, nil if none.
func (w *nsWorld) mountOf(ns *fs.MountNamespace, p string) *fs.Mount {
	w.t.Helper()
	m, err := fs.MountAt(w.at(ns, p))
	if err != nil {
		return nil
	}
	return m
}

// mountNew mounts a fresh memfs at p in ns.
func (w *nsWorld) mountNew(ns *fs.MountNamespace, p string) *fs.Mount {
	w.t.Helper()
	m, err := ns.Mount(w.ctx, w.at(ns, p), newMemFS(), fs.MountFlags{})
	if err != nil {
		w.t.Fatalf("mount %s: %v", p, err)
	}
	return m
}

func paths(ns *fs.MountNamespace) []string {
	var out []string
	for _, m := range ns.Mounts() {
		out = append(out, fs.MountPath(ns.Root(), m))
	}
	return out
}

func TestCopyHasEveryMount(t *testing.T) {
	w := newNSWorld(t, "/a", "/b")
	w.mountNew(w.ns, "/a")
	ro := w.mountNew(w.ns, "/b")
	ro.SetFlags(fs.MountFlags{ReadOnly: true, NoExec: true})
	stacked := w.mountNew(w.ns, "/b")
	cwd := w.at(w.ns, "/a")

	c, translate := w.ns.Copy(nil)
	defer c.DecRef()
	if got, want := paths(c), paths(w.ns); len(got) != len(want) {
		t.Fatalf("copy's mounts %v, want %v", got, want)
	} else {
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("mount %d at %q, want %q", i, got[i], want[i])
			}
		}
	}
	orig, copies := w.ns.Mounts(), c.Mounts()
	for i := range orig {
		t.Run(paths(w.ns)[i], func(t *testing.T) {
			o, cp := orig[i], copies[i]
			if cp.Namespace() != c || cp.Filesystem() != o.Filesystem() || cp.Root() != o.Root() || cp.Flags() != o.Flags() {
				t.Errorf("copy %v of %v differs", cp, o)
			}
			if cp.ID() == o.ID() {
				t.Errorf("copy keeps id %d", o.ID())
			}
		})
	}
	// The cwd maps onto the copy; the top of /b there is stacked's copy.
	ncwd := translate(cwd)
	if ncwd.Mount.Namespace() != c || ncwd.Dentry != cwd.Dentry {
		t.Errorf("translated cwd %v", ncwd)
	}
	if m := w.mountOf(c, "/b"); m == nil || m.Filesystem() != stacked.Filesystem() {
		t.Errorf("top of /b in the copy: %v", m)
	}
	// Unmounting in the copy leaves the original alone.
	if err := c.Umount(w.mountOf(c, "/a"), false); err != nil {
		t.Fatal(err)
	}
	if w.mountOf(c, "/a") != nil || w.mountOf(w.ns, "/a") == nil {
		t.Error("unmount in the copy reached the original")
	}
	// A mount of the original is not the copy's.
	if _, err := c.Mount(w.ctx, w.at(w.ns, "/a"), newMemFS(), fs.MountFlags{}); err != unix.EINVAL {
		t.Errorf("mount at the original's position in the copy: %v, want EINVAL", err)
	}
}

func TestReleaseTakesMountsDown(t *testing.T) {
	w := newNSWorld(t, "/a")
	c, _ := w.ns.Copy(nil)
	m := w.mountNew(c, "/a")
	if !c.TryIncRef() {
		t.Fatal("TryIncRef of a live namespace failed")
	}
	c.DecRef()
	if c.Released() {
		t.Fatal("released with a reference left")
	}
	c.DecRef()
	if !c.Released() || len(c.Mounts()) != 0 {
		t.Fatalf("after the last DecRef: released %v, %d mounts", c.Released(), len(c.Mounts()))
	}
	if c.TryIncRef() {
		t.Error("TryIncRef of a released namespace succeeded")
	}
	if m.Propagation() != (fs.Propagation{}) {
		t.Errorf("released mount still propagates: %+v", m.Propagation())
	}
	// The original's /a is no mountpoint any more: rmdir works.
	root := w.ns.Root()
	if err := fs.Rmdir(w.ctx, &fs.Lookup{Root: root, Start: root, Path: "/a"}); err != nil {
		t.Errorf("rmdir of a directory only a released namespace mounted on: %v", err)
	}
}

func TestPropagationTypes(t *testing.T) {
	w := newNSWorld(t, "/m", "/b")
	m := w.mountNew(w.ns, "/m")
	set := func(m *fs.Mount, typ uint64) {
		t.Helper()
		if err := w.ns.SetPropagation(m, typ, false); err != nil {
			t.Fatal(err)
		}
	}
	set(m, unix.MS_SHARED)
	g := m.Propagation().Shared
	if g == 0 {
		t.Fatal("shared mount has no group")
	}
	b, err := w.ns.BindMount(w.ctx, w.at(w.ns, "/b"), w.at(w.ns, "/m"), fs.MountFlags{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		typ  uint64
		want fs.Propagation
	}{
		{"bind of shared is a peer", 0, fs.Propagation{Shared: g}},
		{"slave of its group", unix.MS_SLAVE, fs.Propagation{Master: g}},
		{"shared and slave", unix.MS_SHARED, fs.Propagation{Shared: -1, Master: g}},
		{"private", unix.MS_PRIVATE, fs.Propagation{}},
		{"unbindable", unix.MS_UNBINDABLE, fs.Propagation{Unbindable: true}},
		{"shared clears unbindable", unix.MS_SHARED, fs.Propagation{Shared: -1}},
		{"last peer to slave without master is private", unix.MS_SLAVE, fs.Propagation{}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.typ != 0 {
				set(b, s.typ)
			}
			got := b.Propagation()
			if s.want.Shared == -1 {
				if got.Shared == 0 || got.Shared == g {
					t.Errorf("want a new group, got %+v", got)
				}
				got.Shared = -1
			}
			if got != s.want {
				t.Errorf("got %+v, want %+v", got, s.want)
			}
		})
	}
	set(m, unix.MS_UNBINDABLE)
	if _, err := w.ns.BindMount(w.ctx, w.at(w.ns, "/b"), w.at(w.ns, "/m"), fs.MountFlags{}); err != unix.EINVAL {
		t.Errorf("bind of unbindable: %v, want EINVAL", err)
	}
}

func TestMountEventsPropagate(t *testing.T) {
	w := newNSWorld(t, "/p")
	p := w.mountNew(w.ns, "/p")
	for _, d := range []string{"/p/a", "/p/b"} {
		root := w.ns.TopRoot()
		if err := fs.Mkdir(w.ctx, &fs.Lookup{Root: root, Start: root, Path: d}, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.ns.SetPropagation(p, unix.MS_SHARED, false); err != nil {
		t.Fatal(err)
	}
	peer, _ := w.ns.Copy(nil)
	defer peer.DecRef()
	slave, _ := w.ns.Copy(nil)
	defer slave.DecRef()
	if err := slave.SetPropagation(w.mountOf(slave, "/p"), unix.MS_SLAVE, false); err != nil {
		t.Fatal(err)
	}
	private, _ := w.ns.Copy(nil)
	defer private.DecRef()
	if err := private.SetPropagation(w.mountOf(private, "/p"), unix.MS_PRIVATE, false); err != nil {
		t.Fatal(err)
	}

	a := w.mountNew(w.ns, "/p/a")
	for _, c := range []struct {
		name string
		ns   *fs.MountNamespace
		want bool
	}{{"peer", peer, true}, {"slave", slave, true}, {"private", private, false}} {
		t.Run("mount reaches "+c.name, func(t *testing.T) {
			m := w.mountOf(c.ns, "/p/a")
			if (m != nil) != c.want {
				t.Fatalf("mounted %v, want %v", m != nil, c.want)
			}
			if m != nil && m.Filesystem() != a.Filesystem() {
				t.Errorf("a copy of another file system")
			}
		})
	}
	if got := w.mountOf(peer, "/p/a").Propagation(); got.Shared != a.Propagation().Shared {
		t.Errorf("peer's copy %+v, want a peer of %+v", got, a.Propagation())
	}
	if got := w.mountOf(slave, "/p/a").Propagation(); got.Master != a.Propagation().Shared || got.Shared != 0 {
		t.Errorf("slave's copy %+v, want a slave of %+v", got, a.Propagation())
	}
	// A slave's mount does not go back; a peer's does.
	w.mountNew(slave, "/p/b")
	if w.mountOf(w.ns, "/p/b") != nil || w.mountOf(peer, "/p/b") != nil {
		t.Error("slave's mount propagated")
	}
	w.mountNew(peer, "/p/b")
	if w.mountOf(w.ns, "/p/b") == nil {
		t.Error("peer's mount did not propagate")
	}
	// Unmounts follow the same way.
	if err := w.ns.Umount(a, false); err != nil {
		t.Fatal(err)
	}
	if w.mountOf(peer, "/p/a") != nil || w.mountOf(slave, "/p/a") != nil {
		t.Error("unmount did not propagate")
	}
}

// unmountWatch records IN_UNMOUNT events.
type unmountWatch struct{ n int }

func (w *unmountWatch) Notify(mask uint32, _ string, _ uint32, _ bool) {
	if mask&unix.IN_UNMOUNT != 0 {
		w.n++
	}
}

// TestUnmountEventOnlyWhenLastMountGoes: a file system mounted in two
// namespaces gets IN_UNMOUNT when its last mount goes, whether by an
// unmount or by the release of the namespace holding it.
func TestUnmountEventOnlyWhenLastMountGoes(t *testing.T) {
	for _, last := range []string{"umount", "release"} {
		t.Run(last, func(t *testing.T) {
			w := newNSWorld(t, "/a")
			m := w.mountNew(w.ns, "/a")
			f := m.Filesystem()
			watch := &unmountWatch{}
			if err := f.AddWatch(m.Root().Node(), watch); err != nil {
				t.Fatal(err)
			}
			c, _ := w.ns.Copy(nil)
			if err := w.ns.Umount(m, false); err != nil {
				t.Fatal(err)
			}
			if watch.n != 0 {
				t.Fatalf("IN_UNMOUNT while the copy still mounts the file system")
			}
			if last == "umount" {
				if err := c.Umount(w.mountOf(c, "/a"), false); err != nil {
					t.Fatal(err)
				}
			}
			c.DecRef()
			if watch.n != 1 {
				t.Errorf("%d IN_UNMOUNT events after the last mount went, want 1", watch.n)
			}
		})
	}
}
