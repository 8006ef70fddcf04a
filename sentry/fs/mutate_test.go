package fs_test

import (
	"fmt"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// TestReadOnlyChanges checks the errors of changes on the read-only
// synthetic tree of testTree and on its read-write synthetic mount, whose
// nodes cannot change.
func TestReadOnlyChanges(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	lk := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	resolve := func(p string) fs.VirtualDentry {
		vd, err := fs.Resolve(ctx, lk(p))
		if err != nil {
			t.Fatal(err)
		}
		return vd
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"mkdir existing", fs.Mkdir(ctx, lk("/etc"), 0o755), unix.EEXIST},
		{"mkdir /", fs.Mkdir(ctx, lk("/"), 0o755), unix.EEXIST},
		{"mkdir new", fs.Mkdir(ctx, lk("/etc/new"), 0o755), unix.EROFS},
		{"mkdir new slash", fs.Mkdir(ctx, lk("/etc/new/"), 0o755), unix.EROFS},
		{"mknod new slash", fs.Mknod(ctx, lk("/etc/new/"), 0o644, 0), unix.ENOENT},
		{"mkdir missing parent", fs.Mkdir(ctx, lk("/nope/new"), 0o755), unix.ENOENT},
		{"mkdir under file", fs.Mkdir(ctx, lk("/etc/passwd/x"), 0o755), unix.ENOTDIR},
		{"mkdir on unchangeable fs", fs.Mkdir(ctx, lk("/mnt/x"), 0o755), unix.EPERM},
		{"unlink missing on ro", fs.Unlink(ctx, lk("/etc/nope")), unix.EROFS},
		{"unlink dotdot", fs.Unlink(ctx, lk("/etc/..")), unix.EISDIR},
		{"unlink missing parent", fs.Unlink(ctx, lk("/nope/x")), unix.ENOENT},
		{"unlink on rw fs missing", fs.Unlink(ctx, lk("/mnt/nope")), unix.ENOENT},
		{"unlink file slash on rw fs", fs.Unlink(ctx, lk("/mnt/inner/")), unix.ENOTDIR},
		{"unlink on unchangeable fs", fs.Unlink(ctx, lk("/mnt/inner")), unix.EPERM},
		{"rmdir dot", fs.Rmdir(ctx, lk("/etc/.")), unix.EINVAL},
		{"rmdir dotdot", fs.Rmdir(ctx, lk("/etc/..")), unix.ENOTEMPTY},
		{"rmdir root", fs.Rmdir(ctx, lk("/")), unix.EBUSY},
		{"rmdir ro", fs.Rmdir(ctx, lk("/etc")), unix.EROFS},
		{"rmdir mountpoint", fs.Rmdir(ctx, lk("/mnt")), unix.EROFS},
		{"rename across mounts", fs.Rename(ctx, lk("/etc/passwd"), lk("/mnt/x"), 0), unix.EXDEV},
		{"rename ro", fs.Rename(ctx, lk("/etc/passwd"), lk("/etc/x"), 0), unix.EROFS},
		{"rename dot", fs.Rename(ctx, lk("/etc/."), lk("/etc/x"), 0), unix.EBUSY},
		{"rename missing parent", fs.Rename(ctx, lk("/x/y"), lk("/etc/x"), 0), unix.ENOENT},
		{"chmod ro", fs.Chmod(ctx, resolve("/etc/passwd"), 0o600), unix.EROFS},
		{"chmod unchangeable", fs.Chmod(ctx, resolve("/mnt/inner"), 0o600), unix.EPERM},
		{"truncate dir", fs.Truncate(ctx, resolve("/etc"), 0), unix.EISDIR},
		{"truncate ro", fs.Truncate(ctx, resolve("/etc/passwd"), 0), unix.EROFS},
		{"setxattr ro", fs.SetXattr(ctx, resolve("/etc/passwd"), "user.a", nil, 0), unix.EROFS},
		{"setxattr unsupported", fs.SetXattr(ctx, resolve("/mnt/inner"), "user.a", nil, 0), unix.EOPNOTSUPP},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err != c.want {
				t.Errorf("got %v, want %v", c.err, c.want)
			}
		})
	}
}

// writableTree returns a namespace whose root is read-only and has a
// memfs at /w, with /w/m a mountpoint of a second memfs.
func writableTree(t testing.TB) fs.VirtualDentry {
	t.Helper()
	ctx := fstest.NewContext()
	root := synth.NewDir(0o755, map[string]fs.Node{"w": synth.NewDir(0o755, nil)})
	ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	rvd := ns.Root()
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, at, newMemFS(), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Mkdir(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/w/m"}, 0o755); err != nil {
		t.Fatal(err)
	}
	at, err = fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/w/m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, at, newMemFS(), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	return rvd
}

// tfs wraps a tree and a task for short test steps.
type tfs struct {
	t    testing.TB
	root fs.VirtualDentry
	ctx  fs.Context
}

func (f *tfs) as(ctx fs.Context) *tfs { return &tfs{t: f.t, root: f.root, ctx: ctx} }

func (f *tfs) lk(p string) *fs.Lookup { return &fs.Lookup{Root: f.root, Start: f.root, Path: p} }

func (f *tfs) vd(p string, follow bool) fs.VirtualDentry {
	f.t.Helper()
	vd, err := fs.Resolve(f.ctx, &fs.Lookup{Root: f.root, Start: f.root, Path: p, FollowFinal: follow})
	if err != nil {
		f.t.Fatalf("resolve %s: %v", p, err)
	}
	return vd
}

func (f *tfs) stat(p string) fs.Stat {
	f.t.Helper()
	st, err := f.vd(p, false).Stat(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

func (f *tfs) exists(p string) bool {
	_, err := fs.Resolve(f.ctx, &fs.Lookup{Root: f.root, Start: f.root, Path: p})
	return err == nil
}

func (f *tfs) open(p string, flags, mode uint32) (*fs.FileDescription, error) {
	return fs.Open(f.ctx, fs.Lookup{Root: f.root, Start: f.root, Path: p}, fs.OpenOptions{Flags: flags, Mode: mode})
}

func (f *tfs) must(what string, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("%s: %v", what, err)
	}
}

func (f *tfs) want(what string, err, want error) {
	f.t.Helper()
	if err != want {
		f.t.Errorf("%s = %v, want %v", what, err, want)
	}
}

func newTFS(t testing.TB) *tfs {
	return &tfs{t: t, root: writableTree(t), ctx: fstest.NewContext()}
}

func TestCreateAndRemove(t *testing.T) {
	f := newTFS(t)
	f.must("mkdir", fs.Mkdir(f.ctx, f.lk("/w/d"), 0o7755))
	if st := f.stat("/w/d"); st.Mode != unix.S_IFDIR|unix.S_ISVTX|0o755 || st.Nlink != 2 {
		t.Errorf("mkdir mode %o nlink %d, want setuid/setgid dropped", st.Mode, st.Nlink)
	}
	if st := f.stat("/w"); st.Nlink != 4 {
		t.Errorf("parent nlink %d, want 4", st.Nlink)
	}
	f.must("mknod", fs.Mknod(f.ctx, f.lk("/w/d/fifo"), unix.S_IFIFO|0o640, 0))
	if st := f.stat("/w/d/fifo"); st.Mode != unix.S_IFIFO|0o640 {
		t.Errorf("fifo mode %o", st.Mode)
	}
	f.must("mknod reg", fs.Mknod(f.ctx, f.lk("/w/d/reg"), 0o600, 0))
	if st := f.stat("/w/d/reg"); st.Mode != unix.S_IFREG|0o600 {
		t.Errorf("mknod 0 type gives %o", st.Mode)
	}
	f.must("mknod chr", fs.Mknod(f.ctx, f.lk("/w/d/null"), unix.S_IFCHR|0o666, unix.Mkdev(1, 3)))
	if st := f.stat("/w/d/null"); st.Rdev != unix.Mkdev(1, 3) {
		t.Errorf("rdev %#x", st.Rdev)
	}
	f.must("symlink", fs.Symlink(f.ctx, f.lk("/w/d/ln"), "reg"))
	if st := f.stat("/w/d/ln"); st.Mode != unix.S_IFLNK|0o777 || st.Size != 3 {
		t.Errorf("symlink mode %o size %d", st.Mode, st.Size)
	}

	fd, err := f.open("/w/d/file", unix.O_CREAT|unix.O_RDWR, 0o400)
	f.must("create with mode 0400 opens rw", err)
	if _, err := fd.Write(f.ctx, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	f.want("open created file again rw as user", func() error {
		_, err := f.as(fstest.NewUserContext(1000, 1000)).open("/w/d/file", unix.O_RDWR, 0)
		return err
	}(), unix.EACCES)
	f.must("link", fs.Link(f.ctx, f.vd("/w/d/file", false), f.lk("/w/file2")))
	if st := f.stat("/w/file2"); st.Nlink != 2 || st.Size != 5 {
		t.Errorf("after link nlink %d size %d", st.Nlink, st.Size)
	}
	f.must("unlink", fs.Unlink(f.ctx, f.lk("/w/d/file")))
	if f.exists("/w/d/file") {
		t.Error("unlinked file still resolves")
	}
	if st := f.stat("/w/file2"); st.Nlink != 1 {
		t.Errorf("after unlink nlink %d", st.Nlink)
	}
	if p, _ := fs.PathOf(f.root, fd.VirtualDentry()); p != "/w/d/file (deleted)" {
		t.Errorf("PathOf unlinked = %q", p)
	}
	buf := make([]byte, 5)
	if n, _ := fd.PRead(f.ctx, buf, 0); n != 5 || string(buf) != "hello" {
		t.Errorf("read after unlink = %q", buf[:n])
	}
	fd.DecRef()

	cases := []struct {
		name string
		err  error
		want error
	}{
		{"mkdir exists", fs.Mkdir(f.ctx, f.lk("/w/d"), 0o755), unix.EEXIST},
		{"mkdir over symlink", fs.Mkdir(f.ctx, f.lk("/w/d/ln"), 0o755), unix.EEXIST},
		{"symlink exists", fs.Symlink(f.ctx, f.lk("/w/d/reg"), "x"), unix.EEXIST},
		{"mknod slash", fs.Mknod(f.ctx, f.lk("/w/d/x/"), 0o644, 0), unix.ENOENT},
		{"mkdir slash", fs.Mkdir(f.ctx, f.lk("/w/d/x/"), 0o755), nil},
		{"link dir", fs.Link(f.ctx, f.vd("/w/d", false), f.lk("/w/d2")), unix.EPERM},
		{"link across mounts", fs.Link(f.ctx, f.vd("/w/file2", false), f.lk("/w/m/x")), unix.EXDEV},
		{"link exists", fs.Link(f.ctx, f.vd("/w/file2", false), f.lk("/w/d/reg")), unix.EEXIST},
		{"rmdir not empty", fs.Rmdir(f.ctx, f.lk("/w/d")), unix.ENOTEMPTY},
		{"rmdir file", fs.Rmdir(f.ctx, f.lk("/w/d/reg")), unix.ENOTDIR},
		{"unlink dir", fs.Unlink(f.ctx, f.lk("/w/d/x")), unix.EISDIR},
		{"unlink dir slash", fs.Unlink(f.ctx, f.lk("/w/d/x/")), unix.EISDIR},
		{"unlink missing", fs.Unlink(f.ctx, f.lk("/w/d/nope")), unix.ENOENT},
		{"rmdir mountpoint", fs.Rmdir(f.ctx, f.lk("/w/m")), unix.EBUSY},
		{"rmdir empty", fs.Rmdir(f.ctx, f.lk("/w/d/x/")), nil},
		{"unlink symlink", fs.Unlink(f.ctx, f.lk("/w/d/ln")), nil},
		{"open excl existing", openErr(f, "/w/d/reg", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY), unix.EEXIST},
		{"create through dangling symlink", func() error {
			if err := fs.Symlink(f.ctx, f.lk("/w/dangle"), "d/target"); err != nil {
				return err
			}
			return openErr(f, "/w/dangle", unix.O_CREAT|unix.O_WRONLY)
		}(), nil},
		{"excl on dangling symlink", func() error {
			if err := fs.Symlink(f.ctx, f.lk("/w/dangle2"), "d/target2"); err != nil {
				return err
			}
			return openErr(f, "/w/dangle2", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY)
		}(), unix.EEXIST},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err != c.want {
				t.Errorf("got %v, want %v", c.err, c.want)
			}
		})
	}
	if !f.exists("/w/d/target") {
		t.Error("O_CREAT through a dangling symlink did not create its target")
	}
	// A removed directory takes no new entries.
	f.must("mkdir gone", fs.Mkdir(f.ctx, f.lk("/w/gone"), 0o755))
	gone := f.vd("/w/gone", false)
	f.must("rmdir gone", fs.Rmdir(f.ctx, f.lk("/w/gone")))
	err = fs.Mkdir(f.ctx, &fs.Lookup{Root: f.root, Start: gone, Path: "x"}, 0o755)
	f.want("mkdir in removed dir", err, unix.ENOENT)
}

func openErr(f *tfs, p string, flags uint32) error {
	fd, err := f.open(p, flags, 0o644)
	if fd != nil {
		fd.DecRef()
	}
	return err
}

func TestPermissionsAndOwnership(t *testing.T) {
	f := newTFS(t)
	alice := fstest.NewUserContext(1000, 1000)
	bob := fstest.NewUserContext(1001, 1001)
	f.must("mkdir sticky", fs.Mkdir(f.ctx, f.lk("/w/tmp"), 0o1777))
	f.must("mkdir private", fs.Mkdir(f.ctx, f.lk("/w/priv"), 0o755))
	a, b := f.as(alice), f.as(bob)
	fd, err := a.open("/w/tmp/a", unix.O_CREAT|unix.O_WRONLY, 0o666)
	a.must("alice creates", err)
	fd.DecRef()
	if st := f.stat("/w/tmp/a"); st.UID != 1000 || st.GID != 1000 {
		t.Errorf("owner %d:%d", st.UID, st.GID)
	}
	b.want("bob unlinks alice's file in sticky dir", fs.Unlink(bob, b.lk("/w/tmp/a")), unix.EPERM)
	b.want("bob renames it away", fs.Rename(bob, b.lk("/w/tmp/a"), b.lk("/w/tmp/b"), 0), unix.EPERM)
	b.want("bob creates in root-owned dir", fs.Mkdir(bob, b.lk("/w/priv/x"), 0o755), unix.EACCES)
	b.want("bob chmods alice's file", fs.Chmod(bob, b.vd("/w/tmp/a", false), 0o777), unix.EPERM)
	b.want("bob chowns to himself", fs.Chown(bob, b.vd("/w/tmp/a", false), 1001, fs.NoID), unix.EPERM)
	a.want("alice chgrp to a group she is not in", fs.Chown(alice, a.vd("/w/tmp/a", false), fs.NoID, 5), unix.EPERM)
	a.want("alice chown to same owner", fs.Chown(alice, a.vd("/w/tmp/a", false), 1000, 1000), nil)
	f.want("root unlinks in sticky dir", fs.Unlink(f.ctx, f.lk("/w/tmp/a")), nil)

	// Setgid directories hand their group down, and the bit to new
	// directories.
	f.must("mkdir sgid", fs.Mkdir(f.ctx, f.lk("/w/sg"), 0o777))
	f.must("chown sgid", fs.Chown(f.ctx, f.vd("/w/sg", false), 0, 50))
	f.must("chmod sgid", fs.Chmod(f.ctx, f.vd("/w/sg", false), 0o2777))
	a.must("alice mkdir in sgid", fs.Mkdir(alice, a.lk("/w/sg/sub"), 0o755))
	if st := f.stat("/w/sg/sub"); st.GID != 50 || st.Mode&unix.S_ISGID == 0 || st.UID != 1000 {
		t.Errorf("sgid subdir %d:%d mode %o", st.UID, st.GID, st.Mode)
	}
	fd, err = a.open("/w/sg/f", unix.O_CREAT|unix.O_WRONLY, 0o2775)
	a.must("alice creates setgid file", err)
	fd.DecRef()
	if st := f.stat("/w/sg/f"); st.GID != 50 || st.Mode&unix.S_ISGID != 0 {
		t.Errorf("setgid file of non-member: gid %d mode %o (want sgid dropped)", st.GID, st.Mode)
	}

	// chown drops setuid; chmod by owner keeps what she may set.
	fd, err = f.open("/w/suid", unix.O_CREAT|unix.O_WRONLY, 0o6755)
	f.must("create suid", err)
	fd.DecRef()
	f.must("chown suid", fs.Chown(f.ctx, f.vd("/w/suid", false), 1000, fs.NoID))
	if st := f.stat("/w/suid"); st.Mode&0o7777 != 0o755 || st.UID != 1000 {
		t.Errorf("after chown mode %o uid %d", st.Mode, st.UID)
	}
	a.must("alice chmod g+s", fs.Chmod(alice, a.vd("/w/suid", false), 0o2755))
	if st := f.stat("/w/suid"); st.Mode&0o7777 != 0o755 {
		t.Errorf("setgid kept for a non-member: %o", st.Mode)
	}
	f.want("chmod symlink", func() error {
		f.must("symlink", fs.Symlink(f.ctx, f.lk("/w/sl"), "suid"))
		return fs.Chmod(f.ctx, f.vd("/w/sl", false), 0o700)
	}(), unix.EOPNOTSUPP)
	// Protected hardlinks: bob may not link alice's file he cannot write.
	b.want("bob links alice's file", fs.Link(bob, f.vd("/w/suid", false), b.lk("/w/tmp/l")), unix.EPERM)
}

func TestRename(t *testing.T) {
	f := newTFS(t)
	mk := func(p string) {
		t.Helper()
		fd, err := f.open(p, unix.O_CREAT|unix.O_WRONLY, 0o644)
		f.must("create "+p, err)
		fd.Write(f.ctx, []byte(p))
		fd.DecRef()
	}
	content := func(p string) string {
		t.Helper()
		fd, err := f.open(p, unix.O_RDONLY, 0)
		f.must("open "+p, err)
		defer fd.DecRef()
		b := make([]byte, 64)
		n, _ := fd.Read(f.ctx, b)
		return string(b[:n])
	}
	f.must("mkdir a", fs.Mkdir(f.ctx, f.lk("/w/a"), 0o755))
	f.must("mkdir a/b", fs.Mkdir(f.ctx, f.lk("/w/a/b"), 0o755))
	f.must("mkdir e", fs.Mkdir(f.ctx, f.lk("/w/e"), 0o755))
	f.must("mkdir full", fs.Mkdir(f.ctx, f.lk("/w/full"), 0o755))
	mk("/w/full/x")
	mk("/w/f1")
	mk("/w/f2")
	b := f.vd("/w/a/b", false)

	cases := []struct {
		name     string
		from, to string
		flags    uint32
		want     error
	}{
		{"file in dir", "/w/f1", "/w/g1", 0, nil},
		{"file over file", "/w/g1", "/w/f2", 0, nil},
		{"noreplace over file", "/w/f2", "/w/full/x", unix.RENAME_NOREPLACE, unix.EEXIST},
		{"file over dir", "/w/f2", "/w/e", 0, unix.EISDIR},
		{"dir over file", "/w/e", "/w/f2", 0, unix.ENOTDIR},
		{"dir over nonempty dir", "/w/e", "/w/full", 0, unix.ENOTEMPTY},
		{"dir into itself", "/w/a", "/w/a/b/c", 0, unix.EINVAL},
		{"dir onto its child", "/w/a", "/w/a/b", 0, unix.EINVAL},
		{"dir over its ancestor", "/w/a/b", "/w/a", 0, unix.ENOTEMPTY},
		{"across mounts", "/w/f2", "/w/m/f", 0, unix.EXDEV},
		{"mountpoint", "/w/m", "/w/m2", 0, unix.EBUSY},
		{"missing", "/w/nope", "/w/x", 0, unix.ENOENT},
		{"file slash", "/w/f2/", "/w/x", 0, unix.ENOTDIR},
		{"to slash", "/w/f2", "/w/x/", 0, unix.ENOTDIR},
		{"exchange missing", "/w/f2", "/w/nope", unix.RENAME_EXCHANGE, unix.ENOENT},
		{"dir across dirs", "/w/a", "/w/e/a", 0, nil},
		{"dir over empty dir", "/w/e", "/w/full/x2", 0, nil},
		{"exchange file and dir", "/w/f2", "/w/full", unix.RENAME_EXCHANGE, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := fs.Rename(f.ctx, f.lk(c.from), f.lk(c.to), c.flags); err != c.want {
				t.Errorf("rename %s %s = %v, want %v", c.from, c.to, err, c.want)
			}
		})
	}
	if got := content("/w/full"); got != "/w/f1" {
		t.Errorf("after renames /w/full holds %q", got)
	}
	if !f.exists("/w/f2/x") || !f.exists("/w/f2/x2/a/b") {
		t.Error("exchanged or moved directories do not resolve")
	}
	if f.exists("/w/f1") || f.exists("/w/e") {
		t.Error("old names still resolve")
	}
	if p, _ := fs.PathOf(f.root, b); p != "/w/f2/x2/a/b" {
		t.Errorf("moved dentry path %q", p)
	}
	if st := f.stat("/w/f2/x2"); st.Nlink != 3 {
		t.Errorf("nlink of dir with one subdir %d", st.Nlink)
	}
	// RENAME_WHITEOUT leaves a 0/0 character device behind.
	mk("/w/wo")
	f.must("whiteout", fs.Rename(f.ctx, f.lk("/w/wo"), f.lk("/w/wo2"), unix.RENAME_WHITEOUT))
	if st := f.stat("/w/wo"); st.Mode != unix.S_IFCHR || st.Rdev != 0 {
		t.Errorf("whiteout mode %o rdev %d", st.Mode, st.Rdev)
	}
	if got := content("/w/wo2"); got != "/w/wo" {
		t.Errorf("whited-out file holds %q", got)
	}
	// Hard links to the same node: rename does nothing.
	f.must("link", fs.Link(f.ctx, f.vd("/w/full", false), f.lk("/w/hl")))
	f.must("rename onto own link", fs.Rename(f.ctx, f.lk("/w/full"), f.lk("/w/hl"), 0))
	if !f.exists("/w/full") || !f.exists("/w/hl") {
		t.Error("rename onto another link of the same node removed a name")
	}
	// ".." follows a moved directory.
	vd, err := fs.Resolve(f.ctx, &fs.Lookup{Root: f.root, Start: b, Path: "../../.."})
	f.must("dotdot", err)
	if p, _ := fs.PathOf(f.root, vd); p != "/w/f2" {
		t.Errorf("../../.. from moved dir is %q", p)
	}
}

func TestSetAttrAndTruncate(t *testing.T) {
	f := newTFS(t)
	fd, err := f.open("/w/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	f.must("create", err)
	fd.Write(f.ctx, []byte("0123456789"))
	f.must("ftruncate", fs.Ftruncate(f.ctx, fd, 4))
	if st := f.stat("/w/f"); st.Size != 4 {
		t.Errorf("size %d", st.Size)
	}
	f.must("truncate up", fs.Truncate(f.ctx, f.vd("/w/f", true), 8))
	if st := f.stat("/w/f"); st.Size != 8 {
		t.Errorf("size %d", st.Size)
	}
	times := [2]unix.Timespec{{Sec: 100, Nsec: 1}, {Sec: 0, Nsec: unix.UTIME_OMIT}}
	before := f.stat("/w/f")
	f.must("utimes", fs.Utimes(f.ctx, f.vd("/w/f", true), &times))
	st := f.stat("/w/f")
	if st.Atime != times[0] || st.Mtime != before.Mtime {
		t.Errorf("utimes atime %v mtime %v (before %v)", st.Atime, st.Mtime, before.Mtime)
	}
	alice := fstest.NewUserContext(1000, 1000)
	f.want("alice utimes explicit", fs.Utimes(alice, f.vd("/w/f", true), &times), unix.EPERM)
	f.want("alice utimes now without write", fs.Utimes(alice, f.vd("/w/f", true), nil), unix.EACCES)
	f.must("chmod 666", fs.Chmod(f.ctx, f.vd("/w/f", true), 0o666))
	f.want("alice utimes now with write", fs.Utimes(alice, f.vd("/w/f", true), nil), nil)
	f.want("ftruncate read-only fd", func() error {
		r, err := f.open("/w/f", unix.O_RDONLY, 0)
		f.must("open", err)
		defer r.DecRef()
		return fs.Ftruncate(f.ctx, r, 0)
	}(), unix.EINVAL)
	fd2, err := f.open("/w/f", unix.O_WRONLY|unix.O_TRUNC, 0)
	f.must("O_TRUNC", err)
	fd2.DecRef()
	if st := f.stat("/w/f"); st.Size != 0 {
		t.Errorf("size after O_TRUNC %d", st.Size)
	}
	// O_APPEND writes at the end.
	ap, err := f.open("/w/f", unix.O_WRONLY|unix.O_APPEND, 0)
	f.must("O_APPEND", err)
	fd.PWrite(f.ctx, []byte("abc"), 0)
	ap.Write(f.ctx, []byte("de"))
	ap.DecRef()
	buf := make([]byte, 8)
	if n, _ := fd.PRead(f.ctx, buf, 0); string(buf[:n]) != "abcde" {
		t.Errorf("after append %q", buf[:n])
	}
	f.want("fallocate bad mode", fs.Fallocate(f.ctx, fd, unix.FALLOC_FL_PUNCH_HOLE, 0, 1), unix.EOPNOTSUPP)
	f.want("fallocate zero length", fs.Fallocate(f.ctx, fd, 0, 0, 0), unix.EINVAL)
	f.must("fallocate", fs.Fallocate(f.ctx, fd, 0, 0, 100))
	if st := f.stat("/w/f"); st.Size != 100 {
		t.Errorf("size after fallocate %d", st.Size)
	}
	fd.DecRef()
}

func TestXattrs(t *testing.T) {
	f := newTFS(t)
	fd, err := f.open("/w/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	f.must("create", err)
	fd.DecRef()
	vd := f.vd("/w/f", true)
	f.must("set", fs.SetXattr(f.ctx, vd, "user.a", []byte("1"), 0))
	f.want("create existing", fs.SetXattr(f.ctx, vd, "user.a", []byte("2"), unix.XATTR_CREATE), unix.EEXIST)
	f.want("replace missing", fs.SetXattr(f.ctx, vd, "user.b", []byte("2"), unix.XATTR_REPLACE), unix.ENODATA)
	f.must("trusted", fs.SetXattr(f.ctx, vd, "trusted.t", []byte("t"), 0))
	f.want("system", fs.SetXattr(f.ctx, vd, "system.x", nil, 0), unix.EOPNOTSUPP)
	f.want("unknown space", fs.SetXattr(f.ctx, vd, "foo.x", nil, 0), unix.EOPNOTSUPP)
	if v, err := fs.GetXattr(f.ctx, vd, "user.a"); err != nil || string(v) != "1" {
		t.Errorf("get = %q, %v", v, err)
	}
	alice := fstest.NewUserContext(1000, 1000)
	if names, _ := fs.ListXattr(alice, vd); fmt.Sprint(names) != "[user.a]" {
		t.Errorf("alice lists %v", names)
	}
	if names, _ := fs.ListXattr(f.ctx, vd); fmt.Sprint(names) != "[trusted.t user.a]" {
		t.Errorf("root lists %v", names)
	}
	f.want("alice sets without write", fs.SetXattr(alice, vd, "user.a", nil, 0), unix.EACCES)
	_, err = fs.GetXattr(alice, vd, "trusted.t")
	f.want("alice reads trusted", err, unix.ENODATA)
	f.must("remove", fs.RemoveXattr(f.ctx, vd, "user.a"))
	f.want("remove again", fs.RemoveXattr(f.ctx, vd, "user.a"), unix.ENODATA)
	f.must("symlink", fs.Symlink(f.ctx, f.lk("/w/l"), "f"))
	f.want("user xattr on symlink", fs.SetXattr(f.ctx, f.vd("/w/l", false), "user.a", nil, 0), unix.EPERM)
}

func TestTmpfile(t *testing.T) {
	f := newTFS(t)
	fd, err := f.open("/w", unix.O_TMPFILE|unix.O_RDWR, 0o600)
	f.must("O_TMPFILE", err)
	if st, _ := fd.Stat(f.ctx); st.Nlink != 0 || !st.IsRegular() {
		t.Errorf("tmpfile nlink %d mode %o", st.Nlink, st.Mode)
	}
	f.must("link tmpfile", fs.Link(f.ctx, fd.VirtualDentry(), f.lk("/w/named")))
	if st := f.stat("/w/named"); st.Nlink != 1 {
		t.Errorf("named tmpfile nlink %d", st.Nlink)
	}
	fd.DecRef()
	ex, err := f.open("/w", unix.O_TMPFILE|unix.O_RDWR|unix.O_EXCL, 0o600)
	f.must("O_TMPFILE|O_EXCL", err)
	f.want("link excl tmpfile", fs.Link(f.ctx, ex.VirtualDentry(), f.lk("/w/named2")), unix.ENOENT)
	ex.DecRef()
}

// TestConcurrentChanges races creates, removes, renames and lookups of
// the same names (run with -race).
func TestConcurrentChanges(t *testing.T) {
	f := newTFS(t)
	f.must("mkdir", fs.Mkdir(f.ctx, f.lk("/w/c"), 0o777))
	f.must("mkdir", fs.Mkdir(f.ctx, f.lk("/w/c2"), 0o777))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				name := fmt.Sprintf("/w/c/n%d", i%5)
				switch (g + i) % 5 {
				case 0:
					fs.Mkdir(f.ctx, f.lk(name), 0o755)
				case 1:
					fs.Rmdir(f.ctx, f.lk(name))
				case 2:
					fs.Rename(f.ctx, f.lk(name), f.lk(fmt.Sprintf("/w/c2/n%d", i%5)), 0)
				case 3:
					fs.Rename(f.ctx, f.lk(fmt.Sprintf("/w/c2/n%d", i%5)), f.lk(name), 0)
				case 4:
					if vd, err := fs.Resolve(f.ctx, f.lk(name+"/..")); err == nil {
						fs.PathOf(f.root, vd)
					}
				}
			}
		}()
	}
	wg.Wait()
	// The cache agrees with the file system: every name the directory
	// lists resolves, and nothing else does.
	for _, dir := range []string{"/w/c", "/w/c2"} {
		d := f.vd(dir, true)
		ents, err := d.Dentry.Node().(fs.DirNode).Readdir(f.ctx)
		f.must("readdir", err)
		listed := map[string]bool{}
		for _, e := range ents {
			listed[e.Name] = true
		}
		for i := 0; i < 5; i++ {
			n := fmt.Sprintf("n%d", i)
			if got := f.exists(dir + "/" + n); got != listed[n] {
				t.Errorf("%s/%s resolves %v, listed %v", dir, n, got, listed[n])
			}
		}
	}
}
