package overlay

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// world is an overlay mounted as a namespace's root, with the lower
// layer's own namespace to check that it never changes.
type world struct {
	t     *testing.T
	ctx   *fstest.Context
	root  fs.VirtualDentry
	lower fs.VirtualDentry
}

func newWorld(t *testing.T) *world {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := fstest.NewContext()
	lowerFS := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	w := &world{t: t, ctx: ctx, lower: fs.NewMountNamespace(lowerFS, fs.MountFlags{}).Root()}
	// The lower tree.
	w.at(w.lower).mkdir("/etc", 0o755)
	w.at(w.lower).write("/etc/passwd", "root:x:0:0\n")
	w.at(w.lower).write("/etc/hosts", "127.0.0.1 localhost\n")
	w.at(w.lower).mkdir("/etc/sub", 0o700)
	w.at(w.lower).write("/etc/sub/deep", "deep\n")
	w.at(w.lower).mkdir("/empty", 0o755)
	if err := fs.Symlink(ctx, w.at(w.lower).lookup("/link"), "etc/passwd"); err != nil {
		t.Fatal(err)
	}
	upperFS := tmpfs.New(mf, tmpfs.DefaultOptions(mf), auth.NewRootCredentials())
	ofs, err := New(ctx, upperFS, lowerFS)
	if err != nil {
		t.Fatal(err)
	}
	w.root = fs.NewMountNamespace(ofs, fs.MountFlags{}).Root()
	return w
}

// view is a world seen from one root.
type view struct {
	*world
	root fs.VirtualDentry
}

func (w *world) at(root fs.VirtualDentry) view { return view{w, root} }
func (w *world) top() view                     { return view{w, w.root} }

func (v view) lookup(path string) *fs.Lookup {
	return &fs.Lookup{Root: v.root, Start: v.root, Path: path}
}

func (v view) mkdir(path string, mode uint32) {
	v.t.Helper()
	if err := fs.Mkdir(v.ctx, v.lookup(path), mode); err != nil {
		v.t.Fatalf("mkdir %s: %v", path, err)
	}
}

func (v view) write(path, data string) {
	v.t.Helper()
	f, err := fs.Open(v.ctx, *v.lookup(path), fs.OpenOptions{Flags: unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC, Mode: 0o644})
	if err != nil {
		v.t.Fatalf("open %s: %v", path, err)
	}
	defer f.DecRef()
	if _, err := f.Write(v.ctx, []byte(data)); err != nil {
		v.t.Fatalf("write %s: %v", path, err)
	}
}

func (v view) read(path string) (string, error) {
	f, err := fs.Open(v.ctx, *v.lookup(path), fs.OpenOptions{Flags: unix.O_RDONLY})
	if err != nil {
		return "", err
	}
	defer f.DecRef()
	buf := make([]byte, 4096)
	n, err := f.Read(v.ctx, buf)
	return string(buf[:n]), err
}

func (v view) mustRead(path, want string) {
	v.t.Helper()
	got, err := v.read(path)
	if err != nil || got != want {
		v.t.Fatalf("read %s = %q, %v; want %q", path, got, err, want)
	}
}

func (v view) ls(path string) []string {
	v.t.Helper()
	f, err := fs.Open(v.ctx, *v.lookup(path), fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_DIRECTORY})
	if err != nil {
		v.t.Fatalf("open %s: %v", path, err)
	}
	defer f.DecRef()
	var names []string
	it := f.Impl().(fs.DirIterator)
	if err := it.IterDirents(v.ctx, f, func(d fs.Dirent) bool {
		if d.Name != "." && d.Name != ".." {
			names = append(names, d.Name)
		}
		return true
	}); err != nil {
		v.t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func (v view) stat(path string) (fs.Stat, error) {
	vd, err := fs.Resolve(v.ctx, v.lookup(path))
	if err != nil {
		return fs.Stat{}, err
	}
	return vd.Stat(v.ctx)
}

func (v view) wantErr(what string, err, want error) {
	v.t.Helper()
	if err != want {
		v.t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// lowerUnchanged checks the lower tree is what newWorld made.
func (w *world) lowerUnchanged() {
	w.t.Helper()
	lv := w.at(w.lower)
	lv.mustRead("/etc/passwd", "root:x:0:0\n")
	lv.mustRead("/etc/hosts", "127.0.0.1 localhost\n")
	lv.mustRead("/etc/sub/deep", "deep\n")
	if got := lv.ls("/etc"); !slices.Equal(got, []string{"hosts", "passwd", "sub"}) {
		w.t.Fatalf("lower /etc = %v", got)
	}
	if got := lv.ls("/"); !slices.Equal(got, []string{"empty", "etc", "link"}) {
		w.t.Fatalf("lower / = %v", got)
	}
	if got := lv.ls("/empty"); len(got) != 0 {
		w.t.Fatalf("lower /empty = %v", got)
	}
}

func TestReadThrough(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	v.mustRead("/etc/passwd", "root:x:0:0\n")
	v.mustRead("/link", "root:x:0:0\n")
	if got := v.ls("/etc"); !slices.Equal(got, []string{"hosts", "passwd", "sub"}) {
		t.Fatalf("/etc = %v", got)
	}
	lst, _ := w.at(w.lower).stat("/etc/passwd")
	st, err := v.stat("/etc/passwd")
	if err != nil || st.Ino != lst.Ino || st.Mode != lst.Mode {
		t.Fatalf("stat = %+v %v, lower %+v", st, err, lst)
	}
}

func TestWriteCopiesUp(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	before, _ := v.stat("/etc/sub/deep")
	v.write("/etc/sub/deep", "changed\n")
	v.mustRead("/etc/sub/deep", "changed\n")
	after, _ := v.stat("/etc/sub/deep")
	if after.Ino != before.Ino {
		t.Errorf("inode number changed across copy-up: %d -> %d", before.Ino, after.Ino)
	}
	st, _ := v.stat("/etc/sub")
	if st.Mode&07777 != 0o700 {
		t.Errorf("copied-up parent mode %#o, want 0700", st.Mode&07777)
	}
	// Appending keeps the copied data.
	f, err := fs.Open(w.ctx, *v.lookup("/etc/hosts"), fs.OpenOptions{Flags: unix.O_WRONLY | unix.O_APPEND})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(w.ctx, []byte("::1 localhost\n"))
	f.DecRef()
	v.mustRead("/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n")
	if err := fs.Chmod(w.ctx, mustResolve(t, v, "/etc/passwd"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ := v.stat("/etc/passwd"); st.Mode&07777 != 0o600 {
		t.Errorf("chmod: mode %#o", st.Mode&07777)
	}
	v.mustRead("/etc/passwd", "root:x:0:0\n")
	w.lowerUnchanged()
}

func mustResolve(t *testing.T, v view, path string) fs.VirtualDentry {
	t.Helper()
	vd, err := fs.Resolve(v.ctx, v.lookup(path))
	if err != nil {
		t.Fatal(err)
	}
	return vd
}

func TestRemoveLeavesWhiteout(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	if err := fs.Unlink(w.ctx, v.lookup("/etc/passwd")); err != nil {
		t.Fatal(err)
	}
	_, err := v.read("/etc/passwd")
	v.wantErr("read removed file", err, unix.ENOENT)
	if got := v.ls("/etc"); !slices.Equal(got, []string{"hosts", "sub"}) {
		t.Fatalf("/etc after unlink = %v", got)
	}
	// A new file with the same name is a new file.
	v.write("/etc/passwd", "new\n")
	v.mustRead("/etc/passwd", "new\n")
	if err := fs.Unlink(w.ctx, v.lookup("/etc/passwd")); err != nil {
		t.Fatal(err)
	}
	_, err = v.read("/etc/passwd")
	v.wantErr("read re-removed file", err, unix.ENOENT)

	// rmdir of a merged directory: ENOTEMPTY until its lower entries go.
	v.wantErr("rmdir /etc/sub", fs.Rmdir(w.ctx, v.lookup("/etc/sub")), unix.ENOTEMPTY)
	if err := fs.Unlink(w.ctx, v.lookup("/etc/sub/deep")); err != nil {
		t.Fatal(err)
	}
	if err := fs.Rmdir(w.ctx, v.lookup("/etc/sub")); err != nil {
		t.Fatalf("rmdir of emptied merged dir: %v", err)
	}
	// A directory made where a lower one was is opaque.
	v.mkdir("/etc/sub", 0o755)
	if got := v.ls("/etc/sub"); len(got) != 0 {
		t.Fatalf("recreated /etc/sub lists %v", got)
	}
	if err := fs.Rmdir(w.ctx, v.lookup("/empty")); err != nil {
		t.Fatal(err)
	}
	if got := v.ls("/"); !slices.Equal(got, []string{"etc", "link"}) {
		t.Fatalf("/ = %v", got)
	}
	w.lowerUnchanged()
}

func TestRename(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	if err := fs.Rename(w.ctx, v.lookup("/etc/hosts"), v.lookup("/hosts2"), 0); err != nil {
		t.Fatal(err)
	}
	v.mustRead("/hosts2", "127.0.0.1 localhost\n")
	_, err := v.read("/etc/hosts")
	v.wantErr("old name", err, unix.ENOENT)
	// Over an existing lower file.
	if err := fs.Rename(w.ctx, v.lookup("/hosts2"), v.lookup("/etc/passwd"), 0); err != nil {
		t.Fatal(err)
	}
	v.mustRead("/etc/passwd", "127.0.0.1 localhost\n")
	if got := v.ls("/etc"); !slices.Equal(got, []string{"passwd", "sub"}) {
		t.Fatalf("/etc = %v", got)
	}
	// Lower directories do not move.
	v.wantErr("rename lower dir", fs.Rename(w.ctx, v.lookup("/etc/sub"), v.lookup("/sub"), 0), unix.EXDEV)
	// Upper ones do, and over an empty lower directory.
	v.mkdir("/new", 0o755)
	v.write("/new/f", "f\n")
	if err := fs.Rename(w.ctx, v.lookup("/new"), v.lookup("/empty"), 0); err != nil {
		t.Fatal(err)
	}
	if got := v.ls("/empty"); !slices.Equal(got, []string{"f"}) {
		t.Fatalf("/empty = %v", got)
	}
	v.wantErr("no /new", func() error { _, err := v.stat("/new"); return err }(), unix.ENOENT)
	w.lowerUnchanged()
}

func TestLinkAndSymlink(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	if err := fs.Link(w.ctx, mustResolve(t, v, "/etc/hosts"), v.lookup("/hosts.link")); err != nil {
		t.Fatal(err)
	}
	v.mustRead("/hosts.link", "127.0.0.1 localhost\n")
	a, _ := v.stat("/etc/hosts")
	b, _ := v.stat("/hosts.link")
	if a.Ino != b.Ino || b.Nlink != 2 {
		t.Fatalf("hard link: ino %d vs %d, nlink %d", a.Ino, b.Ino, b.Nlink)
	}
	if err := fs.Symlink(w.ctx, v.lookup("/s"), "/etc/hosts"); err != nil {
		t.Fatal(err)
	}
	v.mustRead("/s", "127.0.0.1 localhost\n")
	// Upper-only and lower inode numbers never collide.
	seen := map[uint64]string{}
	for _, p := range []string{"/", "/etc", "/etc/passwd", "/etc/hosts", "/etc/sub", "/etc/sub/deep", "/empty", "/link", "/s"} {
		st, err := fs.Resolve(w.ctx, &fs.Lookup{Root: v.root, Start: v.root, Path: p})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := st.Stat(w.ctx)
		if other, ok := seen[s.Ino]; ok {
			t.Errorf("%s and %s share inode %d", p, other, s.Ino)
		}
		seen[s.Ino] = p
	}
	w.lowerUnchanged()
}

func TestXattrsHideOverlayNames(t *testing.T) {
	w := newWorld(t)
	v := w.top()
	if err := fs.Unlink(w.ctx, v.lookup("/etc/sub/deep")); err != nil {
		t.Fatal(err)
	}
	if err := fs.Rmdir(w.ctx, v.lookup("/etc/sub")); err != nil {
		t.Fatal(err)
	}
	v.mkdir("/etc/sub", 0o755) // opaque
	x := mustResolve(t, v, "/etc/sub").Dentry.Node().(fs.XattrNode)
	if names, err := x.ListXattr(w.ctx); err != nil || len(names) != 0 {
		t.Fatalf("ListXattr = %v, %v; want none", names, err)
	}
	if _, err := x.GetXattr(w.ctx, opaqueXattr); err != unix.ENODATA {
		t.Fatalf("GetXattr(opaque) = %v, want ENODATA", err)
	}
	if err := x.SetXattr(w.ctx, "trusted.overlay.redirect", []byte("/x"), 0); err != unix.EPERM {
		t.Fatalf("SetXattr(trusted.overlay.*) = %v, want EPERM", err)
	}
	px := mustResolve(t, v, "/etc/passwd").Dentry.Node().(fs.XattrNode)
	if err := px.SetXattr(w.ctx, "user.k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := px.GetXattr(w.ctx, "user.k"); err != nil || string(got) != "v" {
		t.Fatalf("GetXattr = %q, %v", got, err)
	}
	w.lowerUnchanged()
}
