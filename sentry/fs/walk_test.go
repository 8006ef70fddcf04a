package fs_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// testTree builds:
//
//	/etc/passwd            "root:x:0:0"
//	/etc/hosts -> passwd   (relative)
//	/abs -> /etc
//	/loop -> /loop
//	/dangling -> /nope
//	/secret/ (0700, uid 1000) /secret/file
//	/noexec/ (0666) /noexec/f
//	/mnt/ (a second file system mounted here: /mnt/inner)
func testTree(t *testing.T) (*fs.MountNamespace, fs.VirtualDentry) {
	t.Helper()
	ctx := fstest.NewContext()
	etc := synth.NewDir(0o755, map[string]fs.Node{
		"passwd": synth.NewStaticFile(0o644, []byte("root:x:0:0\n")),
		"hosts":  synth.NewSymlink("passwd"),
	})
	secret := synth.NewDir(0o700, map[string]fs.Node{"file": synth.NewStaticFile(0o644, []byte("s"))})
	secret.UID, secret.GID = 1000, 1000
	root := synth.NewDir(0o755, map[string]fs.Node{
		"etc":      etc,
		"abs":      synth.NewSymlink("/etc"),
		"loop":     synth.NewSymlink("/loop"),
		"dangling": synth.NewSymlink("/nope"),
		"secret":   secret,
		"noexec":   synth.NewDir(0o666, map[string]fs.Node{"f": synth.NewStaticFile(0o644, nil)}),
		"mnt":      synth.NewDir(0o755, nil),
	})
	ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	mntVD, err := fs.Resolve(ctx, &fs.Lookup{Root: ns.Root(), Start: ns.Root(), Path: "/mnt"})
	if err != nil {
		t.Fatal(err)
	}
	inner := synth.NewDir(0o755, map[string]fs.Node{"inner": synth.NewStaticFile(0o644, []byte("in"))})
	if _, err := ns.Mount(ctx, mntVD, synth.NewFilesystem("tmp", 2, inner, false), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	return ns, ns.Root()
}

func TestResolve(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	user := fstest.NewUserContext(2000, 2000)
	cases := []struct {
		name    string
		ctx     fs.Context
		path    string
		follow  bool
		resolve uint64
		want    string // path of the result, or "" if err
		err     error
	}{
		{name: "absolute", path: "/etc/passwd", want: "/etc/passwd"},
		{name: "relative", path: "etc/passwd", want: "/etc/passwd"},
		{name: "dot and slashes", path: "//etc/./passwd", want: "/etc/passwd"},
		{name: "dotdot stops at root", path: "/../../etc/../etc/passwd", want: "/etc/passwd"},
		{name: "symlink final followed", path: "/etc/hosts", follow: true, want: "/etc/passwd"},
		{name: "symlink final not followed", path: "/etc/hosts", want: "/etc/hosts"},
		{name: "symlink in middle", path: "/abs/passwd", want: "/etc/passwd"},
		{name: "symlink trailing slash followed", path: "/abs/", want: "/etc"},
		{name: "loop", path: "/loop", follow: true, err: unix.ELOOP},
		{name: "loop in middle", path: "/loop/x", err: unix.ELOOP},
		{name: "dangling", path: "/dangling", follow: true, err: unix.ENOENT},
		{name: "dangling unfollowed", path: "/dangling", want: "/dangling"},
		{name: "missing", path: "/etc/nope", err: unix.ENOENT},
		{name: "file as dir", path: "/etc/passwd/x", err: unix.ENOTDIR},
		{name: "file trailing slash", path: "/etc/passwd/", err: unix.ENOTDIR},
		{name: "file dot", path: "/etc/passwd/.", err: unix.ENOTDIR},
		{name: "empty", path: "", err: unix.ENOENT},
		{name: "long component", path: "/" + strings.Repeat("a", 256), err: unix.ENAMETOOLONG},
		{name: "255 component", path: "/" + strings.Repeat("a", 255), err: unix.ENOENT},
		{name: "long path", path: strings.Repeat("/", 4096), err: unix.ENAMETOOLONG},
		{name: "4095 path", path: strings.Repeat("/", 4095), want: "/"},
		{name: "into mount", path: "/mnt/inner", want: "/mnt/inner"},
		{name: "out of mount", path: "/mnt/../etc", want: "/etc"},
		{name: "root can search 0700", path: "/secret/file", want: "/secret/file"},
		{name: "user cannot search 0700", ctx: user, path: "/secret/file", err: unix.EACCES},
		{name: "user sees 0700 dir itself", ctx: user, path: "/secret", want: "/secret"},
		{name: "root searches 0666 dir", path: "/noexec/f", want: "/noexec/f"},
		{name: "user cannot search 0666", ctx: user, path: "/noexec/f", err: unix.EACCES},
		{name: "no symlinks", path: "/abs/passwd", resolve: unix.RESOLVE_NO_SYMLINKS, err: unix.ELOOP},
		{name: "no xdev", path: "/mnt/inner", resolve: unix.RESOLVE_NO_XDEV, err: unix.EXDEV},
		{name: "beneath absolute", path: "/etc", resolve: unix.RESOLVE_BENEATH, err: unix.EXDEV},
		{name: "beneath dotdot", path: "etc/../..", resolve: unix.RESOLVE_BENEATH, err: unix.EXDEV},
		{name: "beneath ok", path: "etc/../etc/passwd", resolve: unix.RESOLVE_BENEATH, want: "/etc/passwd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cx := c.ctx
			if cx == nil {
				cx = ctx
			}
			vd, err := fs.Resolve(cx, &fs.Lookup{Root: root, Start: root, Path: c.path, FollowFinal: c.follow, Resolve: c.resolve})
			if err != c.err {
				t.Fatalf("Resolve(%q) error = %v, want %v", c.path, err, c.err)
			}
			if err != nil {
				return
			}
			if got, _ := fs.PathOf(root, vd); got != c.want {
				t.Errorf("Resolve(%q) = %q, want %q", c.path, got, c.want)
			}
		})
	}
}

func TestResolveInRootAndChroot(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	etc, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/etc"})
	if err != nil {
		t.Fatal(err)
	}
	// With /etc as root, ".." stays and absolute paths start there.
	for _, p := range []string{"../passwd", "/passwd", "../../hosts"} {
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: etc, Start: etc, Path: p, FollowFinal: true})
		if err != nil {
			t.Fatalf("chrooted Resolve(%q): %v", p, err)
		}
		if got, _ := fs.PathOf(etc, vd); got != "/passwd" {
			t.Errorf("chrooted Resolve(%q) = %q", p, got)
		}
	}
	// RESOLVE_IN_ROOT does the same from a full-root task.
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: etc, Path: "/../passwd", Resolve: unix.RESOLVE_IN_ROOT})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := fs.PathOf(root, vd); got != "/etc/passwd" {
		t.Errorf("RESOLVE_IN_ROOT = %q", got)
	}
	// A position outside the root is unreachable.
	if _, ok := fs.PathOf(etc, root); ok {
		t.Error("root reachable from /etc")
	}
}

func TestResolveParent(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	cases := []struct {
		path, dir, name string
		slash           bool
		err             error
	}{
		{path: "/etc/new", dir: "/etc", name: "new"},
		{path: "/etc/new/", dir: "/etc", name: "new", slash: true},
		{path: "/", dir: "/", name: ""},
		{path: "/etc/..", dir: "/etc", name: ".."},
		{path: "/abs/x", dir: "/etc", name: "x"},
		{path: "/nope/x", err: unix.ENOENT},
		{path: "/etc/passwd/x", err: unix.ENOTDIR},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			p, err := fs.ResolveParent(ctx, &fs.Lookup{Root: root, Start: root, Path: c.path})
			if err != c.err {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			dir, _ := fs.PathOf(root, p.Dir)
			if dir != c.dir || p.Name != c.name || p.TrailingSlash != c.slash {
				t.Errorf("got (%q, %q, %v), want (%q, %q, %v)", dir, p.Name, p.TrailingSlash, c.dir, c.name, c.slash)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	user := fstest.NewUserContext(2000, 2000)
	cases := []struct {
		name  string
		ctx   fs.Context
		path  string
		flags uint32
		err   error
	}{
		{name: "read file", path: "/etc/passwd", flags: unix.O_RDONLY},
		{name: "write file on ro", path: "/etc/passwd", flags: unix.O_WRONLY, err: unix.EROFS},
		{name: "trunc on ro", path: "/etc/passwd", flags: unix.O_RDONLY | unix.O_TRUNC, err: unix.EROFS},
		{name: "user write on ro is EROFS before EACCES", ctx: user, path: "/etc/passwd", flags: unix.O_RDWR, err: unix.EROFS},
		{name: "create existing", path: "/etc/passwd", flags: unix.O_CREAT | unix.O_RDONLY},
		{name: "create excl existing", path: "/etc/passwd", flags: unix.O_CREAT | unix.O_EXCL, err: unix.EEXIST},
		{name: "create missing on ro", path: "/etc/new", flags: unix.O_CREAT | unix.O_WRONLY, err: unix.EROFS},
		{name: "create missing parent", path: "/nope/new", flags: unix.O_CREAT, err: unix.ENOENT},
		{name: "create trailing slash", path: "/etc/new/", flags: unix.O_CREAT, err: unix.EISDIR},
		{name: "create on dir", path: "/etc", flags: unix.O_CREAT, err: unix.EISDIR},
		{name: "create through dangling on ro", path: "/dangling", flags: unix.O_CREAT | unix.O_WRONLY, err: unix.EROFS},
		{name: "create missing on unchangeable fs", path: "/mnt/new", flags: unix.O_CREAT | unix.O_WRONLY, err: unix.EACCES},
		{name: "dir read", path: "/etc", flags: unix.O_RDONLY | unix.O_DIRECTORY},
		{name: "dir write", path: "/etc", flags: unix.O_WRONLY, err: unix.EISDIR},
		{name: "O_DIRECTORY on file", path: "/etc/passwd", flags: unix.O_DIRECTORY, err: unix.ENOTDIR},
		{name: "nofollow symlink", path: "/etc/hosts", flags: unix.O_NOFOLLOW, err: unix.ELOOP},
		{name: "nofollow path symlink", path: "/etc/hosts", flags: unix.O_NOFOLLOW | unix.O_PATH},
		{name: "follow symlink", path: "/etc/hosts", flags: unix.O_RDONLY},
		{name: "user read 0600", ctx: user, path: "/secret", flags: unix.O_RDONLY, err: unix.EACCES},
		{name: "tmpfile on ro", path: "/etc", flags: unix.O_TMPFILE | unix.O_WRONLY, err: unix.EROFS},
		{name: "tmpfile rdonly", path: "/etc", flags: unix.O_TMPFILE, err: unix.EINVAL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cx := c.ctx
			if cx == nil {
				cx = ctx
			}
			fd, err := fs.Open(cx, fs.Lookup{Root: root, Start: root, Path: c.path}, fs.OpenOptions{Flags: c.flags})
			if err != c.err {
				t.Fatalf("Open(%q, %#x) = %v, want %v", c.path, c.flags, err, c.err)
			}
			if fd != nil {
				fd.DecRef()
			}
		})
	}
}

func TestReadAndDirents(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	fd, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/passwd"}, fs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	buf := make([]byte, 4)
	if n, err := fd.Read(ctx, buf); n != 4 || err != nil || string(buf) != "root" {
		t.Fatalf("Read = %d, %v, %q", n, err, buf)
	}
	if off, err := fd.Seek(ctx, -2, unix.SEEK_END); err != nil || off != 9 {
		t.Fatalf("Seek = %d, %v", off, err)
	}
	if n, _ := fd.PRead(ctx, buf, 5); n != 4 || string(buf) != "x:0:" {
		t.Fatalf("PRead = %d %q", n, buf)
	}
	if fd.Flags()&fs.OLargeFile == 0 {
		t.Error("O_LARGEFILE not set")
	}

	dir, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc"}, fs.OpenOptions{Flags: unix.O_DIRECTORY})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.DecRef()
	it := dir.Impl().(fs.DirIterator)
	var names []string
	// Take two entries, then the rest, checking the offset moves.
	count := 0
	if err := it.IterDirents(ctx, dir, func(d fs.Dirent) bool {
		if count == 2 {
			return false
		}
		count++
		names = append(names, d.Name)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if dir.Offset() != 2 {
		t.Errorf("offset = %d", dir.Offset())
	}
	it.IterDirents(ctx, dir, func(d fs.Dirent) bool { names = append(names, d.Name); return true })
	if got := strings.Join(names, ","); got != ".,..,hosts,passwd" {
		t.Errorf("dirents = %s", got)
	}
}
