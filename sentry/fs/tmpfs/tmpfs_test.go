package tmpfs

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

func newTestFS(t *testing.T, opts Options) (*fs.Filesystem, *dir, *mm.MemoryFile) {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	f := New(mf, opts, auth.NewRootCredentials())
	return f, f.Root().Node().(*dir), mf
}

func reg(mode uint32) fs.CreateOptions { return fs.CreateOptions{Mode: unix.S_IFREG | mode} }
func dirOpts() fs.CreateOptions        { return fs.CreateOptions{Mode: unix.S_IFDIR | 0o755} }

func stat(t *testing.T, n fs.Node) fs.Stat {
	t.Helper()
	st, err := n.Stat(fstest.NewContext())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func names(t *testing.T, d *dir) []string {
	t.Helper()
	ents, err := d.Readdir(fstest.NewContext())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	return out
}

func TestTree(t *testing.T) {
	ctx := fstest.NewContext()
	f, root, _ := newTestFS(t, Options{})
	if st := stat(t, root); st.Mode != unix.S_IFDIR|0o1777 || st.Nlink != 2 || st.Size != 40 {
		t.Fatalf("root: mode %o nlink %d size %d", st.Mode, st.Nlink, st.Size)
	}
	sub, err := root.Mkdir(ctx, "sub", dirOpts())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.Mkdir(ctx, "sub", dirOpts()); err != unix.EEXIST {
		t.Fatalf("second mkdir: %v", err)
	}
	file, err := root.Mknod(ctx, "file", reg(0o644))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.Symlink(ctx, "link", "file", fs.CreateOptions{Mode: unix.S_IFLNK | 0o777}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, root); !slices.Equal(got, []string{"sub", "file", "link"}) {
		t.Fatalf("readdir %q", got)
	}
	st := stat(t, root)
	if st.Nlink != 3 || st.Size != 5*direntSize {
		t.Fatalf("root after mkdir: nlink %d size %d", st.Nlink, st.Size)
	}
	if n, err := root.Lookup(ctx, "link"); err != nil {
		t.Fatal(err)
	} else if tgt, _ := n.(fs.SymlinkNode).Readlink(ctx); tgt != "file" || stat(t, n).Size != 4 {
		t.Fatalf("symlink %q size %d", tgt, stat(t, n).Size)
	}

	// Hard links.
	if err := sub.(*dir).Link(ctx, "hard", file); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, file); st.Nlink != 2 {
		t.Fatalf("nlink after link: %d", st.Nlink)
	}
	if err := sub.(*dir).Link(ctx, "d", sub); err != unix.EPERM {
		t.Fatalf("link of a directory: %v", err)
	}

	// rmdir of a non-empty directory, then rename across directories.
	if err := root.Rmdir(ctx, "sub", sub); err != unix.ENOTEMPTY {
		t.Fatalf("rmdir non-empty: %v", err)
	}
	if err := root.Rename(ctx, "file", file, sub.(*dir), "hard", file, 0); err != nil {
		t.Fatalf("rename onto another link of the same file: %v", err)
	}
	if err := root.Unlink(ctx, "file", file); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, file); st.Nlink != 1 {
		t.Fatalf("nlink after unlink: %d", st.Nlink)
	}
	sub2, _ := root.Mkdir(ctx, "sub2", dirOpts())
	if err := root.Rename(ctx, "sub2", sub2, sub.(*dir), "moved", nil, 0); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, root); st.Nlink != 3 {
		t.Fatalf("root nlink after moving a directory out: %d", st.Nlink)
	}
	if st := stat(t, sub); st.Nlink != 3 {
		t.Fatalf("sub nlink after moving a directory in: %d", st.Nlink)
	}
	// RENAME_EXCHANGE of a directory and a file in different directories.
	if err := sub.(*dir).Rename(ctx, "moved", sub2, root, "link", mustLookup(t, root, "link"), unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustLookup(t, root, "link").(*dir); !ok {
		t.Fatal("exchange did not move the directory")
	}
	if st := stat(t, root); st.Nlink != 4 {
		t.Fatalf("root nlink after exchange: %d", st.Nlink)
	}
	if st := stat(t, sub); st.Nlink != 2 {
		t.Fatalf("sub nlink after exchange: %d", st.Nlink)
	}
	// Replacing an empty directory by rename.
	empty, _ := root.Mkdir(ctx, "empty", dirOpts())
	if err := root.Rename(ctx, "link", mustLookup(t, root, "link"), root, "empty", empty, 0); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, empty); st.Nlink != 0 {
		t.Fatalf("replaced directory nlink %d", st.Nlink)
	}
	if st := stat(t, root); st.Nlink != 4 {
		t.Fatalf("root nlink after replacing a directory: %d", st.Nlink)
	}
	_ = f
}

func mustLookup(t *testing.T, d *dir, name string) fs.Node {
	t.Helper()
	n, err := d.Lookup(fstest.NewContext(), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func openFile(t *testing.T, n fs.Node, flags uint32) *fs.FileDescription {
	t.Helper()
	fd, err := n.(fs.OpenNode).Open(fstest.NewContext(), fs.VirtualDentry{}, flags)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func TestRegularFile(t *testing.T) {
	ctx := fstest.NewContext()
	_, root, mf := newTestFS(t, Options{})
	n, _ := root.Mknod(ctx, "f", reg(0o644))
	fd := openFile(t, n, unix.O_RDWR)
	if _, err := fd.PWrite(ctx, []byte("hello"), 8192); err != nil {
		t.Fatal(err)
	}
	st := stat(t, n)
	if st.Size != 8197 || st.Blocks != 8 {
		t.Fatalf("size %d blocks %d", st.Size, st.Blocks)
	}
	buf := make([]byte, 10)
	if k, err := fd.PRead(ctx, buf, 8190); k != 7 || err != nil || !bytes.Equal(buf[:7], []byte("\x00\x00hello")) {
		t.Fatalf("pread %d %v %q", k, err, buf[:k])
	}
	if k, err := fd.PRead(ctx, buf, 9000); k != 0 || err != nil {
		t.Fatalf("pread at EOF: %d %v", k, err)
	}
	for _, tc := range []struct {
		name   string
		whence int
		off    int64
		want   int64
		err    error
	}{
		{"data", unix.SEEK_DATA, 0, 8192, nil},
		{"hole", unix.SEEK_HOLE, 0, 0, nil},
		{"hole after data", unix.SEEK_HOLE, 8192, 8197, nil},
		{"end", unix.SEEK_END, -1, 8196, nil},
		{"data past end", unix.SEEK_DATA, 9000, 0, unix.ENXIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fd.Seek(ctx, tc.off, tc.whence)
			if err != tc.err || (err == nil && got != tc.want) {
				t.Fatalf("got %d %v, want %d %v", got, err, tc.want, tc.err)
			}
		})
	}
	// Truncate through SetAttr.
	if err := n.(fs.SetAttrNode).SetAttr(ctx, &fs.SetAttrOptions{Mask: fs.SetAttrSize, Size: 3}); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, n); st.Size != 3 || st.Blocks != 0 {
		t.Fatalf("after truncate: size %d blocks %d", st.Size, st.Blocks)
	}
	// Fallocate modes.
	al := fd.Impl().(fs.Allocator)
	if err := al.Fallocate(ctx, fd, unix.FALLOC_FL_KEEP_SIZE, 0, 3*pageSize); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, n); st.Size != 3 || st.Blocks != 24 {
		t.Fatalf("after fallocate KEEP_SIZE: size %d blocks %d", st.Size, st.Blocks)
	}
	if err := al.Fallocate(ctx, fd, unix.FALLOC_FL_ZERO_RANGE, 0, 10); err != unix.EOPNOTSUPP {
		t.Fatalf("ZERO_RANGE: %v", err)
	}
	// Unlinked while open: the data lives until the last close.
	root.Unlink(ctx, "f", n)
	if mf.Used() == 0 {
		t.Fatal("data freed while open")
	}
	fd.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes left after the last close", u)
	}
}

func TestLimits(t *testing.T) {
	ctx := fstest.NewContext()
	f, root, _ := newTestFS(t, Options{Size: 2 * pageSize, Inodes: 3})
	a, err := root.Mknod(ctx, "a", reg(0o644))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.Mkdir(ctx, "b", dirOpts()); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Mknod(ctx, "c", reg(0o644)); err != unix.ENOSPC {
		t.Fatalf("past nr_inodes: %v", err)
	}
	sfs, _ := f.Impl().StatFS(ctx)
	if sfs.Type != Magic || sfs.Blocks != 2 || sfs.Bfree != 2 || sfs.Files != 3 || sfs.Ffree != 0 {
		t.Fatalf("statfs %+v", sfs)
	}
	fd := openFile(t, a, unix.O_RDWR)
	if k, err := fd.PWrite(ctx, make([]byte, 3*pageSize), 0); k != 2*pageSize || err != nil {
		t.Fatalf("write over size=: %d %v", k, err)
	}
	if _, err := fd.PWrite(ctx, []byte("x"), 5*pageSize); err != unix.ENOSPC {
		t.Fatalf("write with no space: %v", err)
	}
	fd.DecRef()
	root.Unlink(ctx, "a", a)
	sfs, _ = f.Impl().StatFS(ctx)
	if sfs.Bfree != 2 || sfs.Ffree != 1 {
		t.Fatalf("statfs after unlink %+v", sfs)
	}
}

func TestTmpfileAndXattrs(t *testing.T) {
	ctx := fstest.NewContext()
	_, root, _ := newTestFS(t, Options{})
	n, err := root.Tmpfile(ctx, reg(0o600))
	if err != nil {
		t.Fatal(err)
	}
	if st := stat(t, n); st.Nlink != 0 {
		t.Fatalf("tmpfile nlink %d", st.Nlink)
	}
	fd := openFile(t, n, unix.O_RDWR)
	if err := root.Link(ctx, "named", n); err != nil {
		t.Fatal(err)
	}
	root.Unlink(ctx, "named", n)
	if err := root.Link(ctx, "again", n); err != unix.ENOENT {
		t.Fatalf("second link of an unlinked tmpfile: %v", err)
	}
	fd.DecRef()

	x := n.(fs.XattrNode)
	if err := x.SetXattr(ctx, "user.a", []byte("1"), unix.XATTR_REPLACE); err != unix.ENODATA {
		t.Fatalf("XATTR_REPLACE of a missing name: %v", err)
	}
	x.SetXattr(ctx, "user.b", []byte("2"), 0)
	x.SetXattr(ctx, "trusted.a", []byte("3"), 0)
	if err := x.SetXattr(ctx, "user.b", []byte("2"), unix.XATTR_CREATE); err != unix.EEXIST {
		t.Fatalf("XATTR_CREATE of an existing name: %v", err)
	}
	if l, _ := x.ListXattr(ctx); !slices.Equal(l, []string{"trusted.a", "user.b"}) {
		t.Fatalf("list %q", l)
	}
	if v, err := x.GetXattr(ctx, "user.b"); err != nil || string(v) != "2" {
		t.Fatalf("get %q %v", v, err)
	}
	if err := x.RemoveXattr(ctx, "user.b"); err != nil {
		t.Fatal(err)
	}
	if _, err := x.GetXattr(ctx, "user.b"); err != unix.ENODATA {
		t.Fatalf("get after remove: %v", err)
	}
}

func TestMemfd(t *testing.T) {
	ctx := fstest.NewContext()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	creds := auth.NewRootCredentials()
	tests := []struct {
		name  string
		flags uint32
		mode  uint32
		seals int
	}{
		{"plain", 0, 0o777, unix.F_SEAL_SEAL},
		{"sealing", unix.MFD_ALLOW_SEALING, 0o777, 0},
		{"noexec", mfdNoexecSeal, 0o666, unix.F_SEAL_EXEC},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fd := NewMemfd(mf, "x", tc.flags, creds)
			defer fd.DecRef()
			st, _ := fd.Stat(ctx)
			if st.Mode != unix.S_IFREG|tc.mode || st.Nlink != 0 {
				t.Fatalf("mode %o nlink %d", st.Mode, st.Nlink)
			}
			if s, _ := Seals(fd); s != tc.seals {
				t.Fatalf("seals %#x", s)
			}
			if name := fd.Dentry().Name(); name != "/memfd:x (deleted)" {
				t.Fatalf("name %q", name)
			}
		})
	}
	// F_SEAL_EXEC on an executable memfd implies the write seals.
	fd := NewMemfd(mf, "e", unix.MFD_ALLOW_SEALING, creds)
	if err := AddSeals(fd, unix.F_SEAL_EXEC); err != nil {
		t.Fatal(err)
	}
	if s, _ := Seals(fd); s != unix.F_SEAL_EXEC|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_FUTURE_WRITE {
		t.Fatalf("seals after F_SEAL_EXEC: %#x", s)
	}
	if err := fd.Dentry().Node().(fs.SetAttrNode).SetAttr(ctx, &fs.SetAttrOptions{Mask: fs.SetAttrMode, Mode: 0o666}); err != unix.EPERM {
		t.Fatalf("chmod -x of an exec-sealed memfd: %v", err)
	}
	fd.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestParseOptions(t *testing.T) {
	const capacity = 1 << 30
	tests := []struct {
		data string
		want Options
		err  bool
	}{
		{data: "", want: Options{}},
		{data: "size=1m,nr_inodes=10k,mode=755,uid=5,gid=6", want: Options{Size: 1 << 20, Inodes: 10 << 10, Mode: 0o755, UID: 5, GID: 6, SetUID: true, SetGID: true}},
		{data: "size=50%", want: Options{Size: capacity / 2}},
		{data: "size=1", want: Options{Size: pageSize}},
		{data: "nr_blocks=3", want: Options{Size: 3 * pageSize}},
		{data: "mode=0", want: Options{Mode: modeZero}},
		{data: "size=", err: true},
		{data: "size=12q", err: true},
		{data: "size=101%", err: true},
		{data: "mode=8", err: true},
		{data: "uid=-1", err: true},
		{data: "bogus", err: true},
		{data: "size=99999999999999e", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.data, func(t *testing.T) {
			got, err := ParseOptions(tc.data, Options{}, capacity)
			if tc.err {
				if err == nil {
					t.Fatalf("no error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseOptions(f *testing.F) {
	f.Add("size=1m,nr_inodes=10k,mode=755,uid=5,gid=6")
	f.Add("size=50%,mode=01777")
	f.Fuzz(func(t *testing.T, data string) {
		o, err := ParseOptions(data, Options{}, 1<<36)
		if err != nil {
			return
		}
		if o.Size < 0 || o.Mode&^(0o7777|modeZero) != 0 {
			t.Fatalf("%q gave %+v", data, o)
		}
		// What String prints parses back to the same limits.
		again, err := ParseOptions(o.String(), Options{}, 1<<36)
		if err != nil || again.Size != o.Size&^1023 || again.Inodes != o.Inodes {
			t.Fatalf("%q: %q reparsed to %+v, %v", data, o.String(), again, err)
		}
	})
}
