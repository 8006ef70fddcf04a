package gofer

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// writeTree builds, under a fresh temp dir, the served root and beside it
// a secret directory the server must never reach:
//
//	secret/file         secretContent
//	secret/sock         a listening unix socket
//	root/file           fileContent
//	root/dir/inner
//	root/out -> ../secret          (relative escape)
//	root/abs -> <abs secret>       (absolute escape)
//	root/outfile -> ../secret/file
//
// It returns the root and the secret directory.
func writeTree(t testing.TB) (root, secret string) {
	t.Helper()
	base := t.TempDir()
	root, secret = filepath.Join(base, "root"), filepath.Join(base, "secret")
	for _, d := range []string{root, secret, filepath.Join(root, "dir")} {
		if err := os.Mkdir(d, 0755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(secret, "file"):       secretContent,
		filepath.Join(root, "file"):         fileContent,
		filepath.Join(root, "dir", "inner"): "inner",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"out": "../secret", "abs": secret, "outfile": "../secret/file"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, secret
}

const secretContent = "secret, never to be read or changed\n"

// checkSecret fails the test if the secret directory changed in any way.
func checkSecret(t testing.TB, secret string) {
	t.Helper()
	ents, err := os.ReadDir(secret)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "file" {
		t.Errorf("secret dir holds %v, want only file", names)
	}
	b, err := os.ReadFile(filepath.Join(secret, "file"))
	if err != nil || string(b) != secretContent {
		t.Errorf("secret file = %q, %v", b, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(secret, "file"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&07777 != 0644 || st.Uid != 0 || st.Nlink != 1 {
		t.Errorf("secret file mode %o uid %d nlink %d changed", st.Mode&07777, st.Uid, st.Nlink)
	}
	if _, err := unix.Lgetxattr(filepath.Join(secret, "file"), "user.x", nil); err != unix.ENODATA {
		t.Errorf("secret file has user.x: %v", err)
	}
}

// serveRW serves root read-write and attaches.
func serveRW(t *testing.T, root string) (*proto.Client, proto.Handle) {
	t.Helper()
	c, _, _ := serveMode(t, root, true, false)
	h, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

func mustWalk(t *testing.T, c *proto.Client, dir proto.Handle, name string) proto.Handle {
	t.Helper()
	h, _, err := c.Walk(dir, name)
	if err != nil {
		t.Fatalf("walk %q: %v", name, err)
	}
	return h
}

func readHost(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadOnlyRefusesChanges(t *testing.T) {
	root, _ := writeTree(t)
	c := serve(t, root)
	rh, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	file := mustWalk(t, c, rh, "file")
	none := func(err error) error { return err }
	tests := []struct {
		name string
		err  error
	}{
		{"create", func() error { _, _, _, err := c.Create(rh, "n", unix.O_RDWR, 0644, proto.NoID, proto.NoID); return err }()},
		{"mkdir", func() error { _, _, err := c.Mkdir(rh, "n", 0755, proto.NoID, proto.NoID); return err }()},
		{"mknod", func() error { _, _, err := c.Mknod(rh, "n", unix.S_IFIFO|0644, proto.NoID, proto.NoID); return err }()},
		{"symlink", func() error { _, _, err := c.Symlink(rh, "n", "file", proto.NoID, proto.NoID); return err }()},
		{"link", func() error { _, _, err := c.Link(rh, "n", file); return err }()},
		{"unlink", none(c.Unlink(rh, "file", 0))},
		{"rename", none(c.Rename(rh, "file", rh, "n", 0))},
		{"setattr", func() error {
			_, err := c.Setattr(proto.Tsetattr{Node: file, Mask: proto.SetattrMode, Mode: 0600})
			return err
		}()},
		{"setxattr", none(c.Setxattr(file, "user.x", "v", 0))},
		{"removexattr", none(c.Removexattr(file, "user.x"))},
		{"fallocate", none(c.Fallocate(file, 0, 0, 4096))},
		{"bind", func() error {
			_, _, _, err := c.Bind(rh, "n", unix.SOCK_STREAM, 0755, proto.NoID, proto.NoID)
			return err
		}()},
		{"open write", func() error { _, err := c.Open(file, unix.O_WRONLY); return err }()},
	}
	for _, tt := range tests {
		if tt.err != unix.EROFS {
			t.Errorf("%s on a read-only server: %v, want EROFS", tt.name, tt.err)
		}
	}
	if _, err := c.Getxattr(file, "user.x"); err != unix.ENODATA {
		t.Errorf("getxattr on a read-only server: %v, want ENODATA", err)
	}
	if _, err := c.Connect(rh, "file", unix.SOCK_STREAM); err != unix.EPERM {
		t.Errorf("connect on a server without HostUDS: %v, want EPERM", err)
	}
	if err := c.Fsync(file, false); err != nil {
		t.Errorf("fsync on a read-only server: %v", err)
	}
	if readHost(t, filepath.Join(root, "file")) != fileContent {
		t.Error("file changed")
	}
}

func TestCreateAndWrite(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	dir := mustWalk(t, c, rh, "dir")
	h, attr, fd, err := c.Create(dir, "new", unix.O_RDWR, 0640, proto.NoID, proto.NoID)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if attr.Mode != unix.S_IFREG|0640 || attr.Size != 0 {
		t.Errorf("created attr mode %o size %d, want regular 0640 (umask undone), empty", attr.Mode, attr.Size)
	}
	if _, err := unix.Pwrite(fd, []byte("written"), 0); err != nil {
		t.Fatal(err)
	}
	if got := readHost(t, filepath.Join(root, "dir", "new")); got != "written" {
		t.Errorf("host sees %q", got)
	}
	// The new handle reopens the file.
	rfd, err := c.Open(h, unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(rfd)

	tests := []struct {
		name  string
		dir   proto.Handle
		elem  string
		flags int
		want  error
	}{
		{"exists", dir, "inner", unix.O_RDWR, unix.EEXIST},
		{"over symlink out", rh, "out", unix.O_RDWR, unix.EEXIST},
		{"over symlink to file", rh, "outfile", unix.O_WRONLY, unix.EEXIST},
		{"dot-dot", rh, "..", unix.O_RDWR, unix.EINVAL},
		{"slash", rh, "out/x", unix.O_RDWR, unix.EINVAL},
		{"in a file", h, "x", unix.O_RDWR, unix.ENOTDIR},
		{"bad access mode", rh, "x", unix.O_ACCMODE, unix.EINVAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, fd, err := c.Create(tt.dir, tt.elem, tt.flags, 0644, proto.NoID, proto.NoID)
			if err == nil {
				unix.Close(fd)
			}
			if err != tt.want {
				t.Errorf("Create(%q) = %v, want %v", tt.elem, err, tt.want)
			}
		})
	}
	checkSecret(t, secret)
}

func TestCreateOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown needs root")
	}
	root, _ := writeTree(t)
	c, rh := serveRW(t, root)
	_, attr, fd, err := c.Create(rh, "owned", unix.O_WRONLY, 0600, 1234, 5678)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, "owned"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 1234 || st.Gid != 5678 || attr.UID != 1234 || attr.GID != 5678 {
		t.Errorf("owner %d:%d (attr %d:%d), want 1234:5678", st.Uid, st.Gid, attr.UID, attr.GID)
	}
	for _, mk := range []func() error{
		func() error { _, _, err := c.Mkdir(rh, "d", 0700, 1, 2); return err },
		func() error { _, _, err := c.Symlink(rh, "l", "owned", 1, 2); return err },
	} {
		if err := mk(); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"d", "l"} {
		if err := unix.Lstat(filepath.Join(root, name), &st); err != nil || st.Uid != 1 || st.Gid != 2 {
			t.Errorf("%s owner %d:%d, %v; want 1:2", name, st.Uid, st.Gid, err)
		}
	}
}

func TestOpenForWrite(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	file := mustWalk(t, c, rh, "file")
	fd, err := c.Open(file, unix.O_WRONLY|unix.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(fd, []byte("more\n")); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if got := readHost(t, filepath.Join(root, "file")); got != fileContent+"more\n" {
		t.Errorf("after append: %q", got)
	}
	fd, err = c.Open(file, unix.O_RDWR|unix.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	unix.Close(fd)
	if fl&unix.O_ACCMODE != unix.O_RDWR || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("donated flags %#x, want O_RDWR, blocking", fl)
	}
	if got := readHost(t, filepath.Join(root, "file")); got != "" {
		t.Errorf("after O_TRUNC: %q", got)
	}

	// The name is swapped for a symlink out of the root after the walk:
	// opening for writing (or truncating) must not touch the secret.
	if err := os.Rename(filepath.Join(root, "file"), filepath.Join(root, "file.moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret/file", filepath.Join(root, "file")); err != nil {
		t.Fatal(err)
	}
	for _, flags := range []int{unix.O_WRONLY, unix.O_RDWR | unix.O_TRUNC, unix.O_RDONLY | unix.O_TRUNC} {
		fd, err := c.Open(file, flags)
		if err == nil {
			unix.Close(fd)
			t.Errorf("Open(%#x) of a file replaced by a symlink succeeded", flags)
		}
	}
	if _, err := c.Setattr(proto.Tsetattr{Node: file, Mask: proto.SetattrSize, Size: 0}); err == nil {
		t.Error("truncate of a file replaced by a symlink succeeded")
	}
	checkSecret(t, secret)
}

func TestMknod(t *testing.T) {
	root, _ := writeTree(t)
	c, rh := serveRW(t, root)
	tests := []struct {
		name string
		mode uint32
		want error
		typ  uint32
	}{
		{"fifo", unix.S_IFIFO | 0600, nil, unix.S_IFIFO},
		{"sock", unix.S_IFSOCK | 0600, nil, unix.S_IFSOCK},
		{"reg", unix.S_IFREG | 0600, nil, unix.S_IFREG},
		{"plain", 0600, nil, unix.S_IFREG},
		{"chr", unix.S_IFCHR | 0600, unix.EPERM, 0},
		{"blk", unix.S_IFBLK | 0600, unix.EPERM, 0},
		{"dirtype", unix.S_IFDIR | 0600, unix.EINVAL, 0},
		{"file", unix.S_IFIFO | 0600, unix.EEXIST, 0},
		{"out", unix.S_IFIFO | 0600, unix.EEXIST, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, attr, err := c.Mknod(rh, tt.name, tt.mode, proto.NoID, proto.NoID)
			if err != tt.want {
				t.Fatalf("Mknod = %v, want %v", err, tt.want)
			}
			if err != nil {
				return
			}
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(root, tt.name), &st); err != nil {
				t.Fatal(err)
			}
			if st.Mode != tt.typ|0600 || attr.Mode != st.Mode {
				t.Errorf("host mode %o, attr %o; want %o", st.Mode, attr.Mode, tt.typ|0600)
			}
		})
	}
}

func TestSymlinkLinkUnlink(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	_, attr, err := c.Symlink(rh, "sl", "../secret/file", proto.NoID, proto.NoID)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Errorf("symlink attr mode %o", attr.Mode)
	}
	if got, _ := os.Readlink(filepath.Join(root, "sl")); got != "../secret/file" {
		t.Errorf("host symlink target %q", got)
	}
	for _, bad := range []string{"", "a\x00b", strings.Repeat("a", proto.PathMax)} {
		if _, _, err := c.Symlink(rh, "bad", bad, proto.NoID, proto.NoID); err == nil {
			t.Errorf("Symlink to %q succeeded", bad)
		}
	}

	// Hard links: to a file, to a symlink (the link itself, never its
	// target), never to a directory.
	file := mustWalk(t, c, rh, "file")
	hl, attr, err := c.Link(rh, "hard", file)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Nlink != 2 {
		t.Errorf("nlink after link = %d", attr.Nlink)
	}
	outfile := mustWalk(t, c, rh, "outfile")
	if _, _, err := c.Link(rh, "hardlink-to-symlink", outfile); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(root, "hardlink-to-symlink")); err != nil || got != "../secret/file" {
		t.Errorf("link of a symlink: %q, %v", got, err)
	}
	dir := mustWalk(t, c, rh, "dir")
	if _, _, err := c.Link(rh, "dirlink", dir); err != unix.EPERM {
		t.Errorf("link of a directory = %v, want EPERM", err)
	}
	if _, _, err := c.Link(rh, "file", hl); err != unix.EEXIST {
		t.Errorf("link over an existing name = %v, want EEXIST", err)
	}

	// Unlink removes names, symlinks as themselves.
	for _, name := range []string{"hard", "sl", "out", "hardlink-to-symlink"} {
		if err := c.Unlink(rh, name, 0); err != nil {
			t.Errorf("unlink %s: %v", name, err)
		}
		if _, err := os.Lstat(filepath.Join(root, name)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", name, err)
		}
	}
	// The handle of an unlinked name no longer reopens.
	if fd, err := c.Open(hl, unix.O_RDONLY); err != unix.ESTALE {
		t.Errorf("Open of an unlinked name = %d, %v; want ESTALE", fd, err)
	}
	tests := []struct {
		name  string
		flags int
		want  error
	}{
		{"dir", 0, unix.EISDIR},
		{"file", unix.AT_REMOVEDIR, unix.ENOTDIR},
		{"missing", 0, unix.ENOENT},
		{"..", unix.AT_REMOVEDIR, unix.EINVAL},
		{"dir/inner", 0, unix.EINVAL},
		{"file", 0x8000, unix.EINVAL},
	}
	for _, tt := range tests {
		if err := c.Unlink(rh, tt.name, tt.flags); err != tt.want {
			t.Errorf("Unlink(%q, %#x) = %v, want %v", tt.name, tt.flags, err, tt.want)
		}
	}
	if err := c.Unlink(dir, "inner", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Unlink(rh, "dir", unix.AT_REMOVEDIR); err != nil {
		t.Fatalf("rmdir: %v", err)
	}
	checkSecret(t, secret)
}

func TestRename(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	dir := mustWalk(t, c, rh, "dir")
	file := mustWalk(t, c, rh, "file")
	inner := mustWalk(t, c, dir, "inner")

	if err := c.Rename(rh, "file", dir, "moved", 0); err != nil {
		t.Fatal(err)
	}
	if got := readHost(t, filepath.Join(root, "dir", "moved")); got != fileContent {
		t.Errorf("moved file holds %q", got)
	}
	// The handle follows the file to its new name.
	fd, err := c.Open(file, unix.O_RDONLY)
	if err != nil {
		t.Fatalf("Open after rename: %v", err)
	}
	unix.Close(fd)

	if err := c.Rename(dir, "moved", dir, "inner", unix.RENAME_NOREPLACE); err != unix.EEXIST {
		t.Errorf("RENAME_NOREPLACE over inner = %v, want EEXIST", err)
	}
	if err := c.Rename(dir, "moved", dir, "inner", unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	if got := readHost(t, filepath.Join(root, "dir", "inner")); got != fileContent {
		t.Errorf("after exchange inner holds %q", got)
	}
	// Both handles follow the exchange.
	for _, h := range []proto.Handle{file, inner} {
		fd, err := c.Open(h, unix.O_RDONLY)
		if err != nil {
			t.Fatalf("Open after exchange: %v", err)
		}
		buf := make([]byte, 100)
		n, _ := unix.Pread(fd, buf, 0)
		unix.Close(fd)
		want := fileContent
		if h == inner {
			want = "inner"
		}
		if string(buf[:n]) != want {
			t.Errorf("handle reads %q, want %q", buf[:n], want)
		}
	}
	// A plain rename over a name leaves the replaced file's handle stale.
	if err := c.Rename(dir, "moved", dir, "inner", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(file, unix.O_RDONLY); err != unix.ESTALE {
		t.Errorf("Open of a replaced file = %v, want ESTALE", err)
	}

	// A symlink out of the root is renamed as itself.
	if err := c.Rename(rh, "out", dir, "out2", 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(filepath.Join(root, "dir", "out2")); got != "../secret" {
		t.Errorf("renamed symlink target %q", got)
	}
	tests := []struct {
		name             string
		oldName, newName string
		flags            uint32
		want             error
	}{
		{"dot-dot source", "..", "x", 0, unix.EINVAL},
		{"dot-dot target", "inner", "..", 0, unix.EINVAL},
		{"slash target", "inner", "../../secret/file", 0, unix.EINVAL},
		{"both flags", "inner", "x", unix.RENAME_NOREPLACE | unix.RENAME_EXCHANGE, unix.EINVAL},
		{"whiteout", "inner", "x", unix.RENAME_WHITEOUT, unix.EINVAL},
		{"missing", "nope", "x", 0, unix.ENOENT},
		{"exchange with missing", "inner", "nope", unix.RENAME_EXCHANGE, unix.ENOENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Rename(dir, tt.oldName, dir, tt.newName, tt.flags); err != tt.want {
				t.Errorf("Rename = %v, want %v", err, tt.want)
			}
		})
	}
	checkSecret(t, secret)
}

func TestSetattr(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	file := mustWalk(t, c, rh, "file")
	mt := unix.Timespec{Sec: 1000000000, Nsec: 5}
	attr, err := c.Setattr(proto.Tsetattr{
		Node: file, Mask: proto.SetattrMode | proto.SetattrSize | proto.SetattrAtime | proto.SetattrMtime,
		Mode: 04711, Size: 5, Atime: unix.Timespec{Nsec: unix.UTIME_OMIT}, Mtime: mt,
	})
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, "file"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&07777 != 04711 || st.Size != 5 || st.Mtim != mt {
		t.Errorf("host mode %o size %d mtime %v", st.Mode&07777, st.Size, st.Mtim)
	}
	if attr != proto.AttrFromStat(&st) {
		t.Errorf("Rsetattr %+v, want %+v", attr, proto.AttrFromStat(&st))
	}
	before := time.Now().Add(-time.Second).Unix()
	attr, err = c.Setattr(proto.Tsetattr{Node: file, Mask: proto.SetattrAtime, Atime: unix.Timespec{Nsec: unix.UTIME_NOW}})
	if err != nil {
		t.Fatal(err)
	}
	if attr.Atime.Sec < before || attr.Mtime != mt {
		t.Errorf("UTIME_NOW atime %v, mtime %v (want unchanged %v)", attr.Atime, attr.Mtime, mt)
	}
	if os.Getuid() == 0 {
		attr, err = c.Setattr(proto.Tsetattr{Node: file, Mask: proto.SetattrUID | proto.SetattrGID, UID: 42, GID: 43})
		if err != nil || attr.UID != 42 || attr.GID != 43 {
			t.Errorf("chown: %+v, %v", attr, err)
		}
	}

	// A symlink out of the root: chown changes the link; chmod has no
	// meaning (EOPNOTSUPP); truncate is EINVAL. The target never changes.
	out := mustWalk(t, c, rh, "outfile")
	if os.Getuid() == 0 {
		if _, err := c.Setattr(proto.Tsetattr{Node: out, Mask: proto.SetattrUID, UID: 7}); err != nil {
			t.Errorf("chown of a symlink: %v", err)
		}
		if err := unix.Lstat(filepath.Join(root, "outfile"), &st); err != nil || st.Uid != 7 {
			t.Errorf("symlink uid %d, %v", st.Uid, err)
		}
	}
	if _, err := c.Setattr(proto.Tsetattr{Node: out, Mask: proto.SetattrMode, Mode: 0777}); err != unix.EOPNOTSUPP {
		t.Errorf("chmod of a symlink = %v, want EOPNOTSUPP", err)
	}
	if _, err := c.Setattr(proto.Tsetattr{Node: out, Mask: proto.SetattrSize}); err != unix.EINVAL {
		t.Errorf("truncate of a symlink = %v, want EINVAL", err)
	}
	if _, err := c.Setattr(proto.Tsetattr{Node: out, Mask: proto.SetattrMtime, Mtime: mt}); err != nil {
		t.Errorf("utimes of a symlink: %v", err)
	}
	dir := mustWalk(t, c, rh, "dir")
	if _, err := c.Setattr(proto.Tsetattr{Node: dir, Mask: proto.SetattrSize}); err != unix.EISDIR {
		t.Errorf("truncate of a dir = %v, want EISDIR", err)
	}
	if _, err := c.Setattr(proto.Tsetattr{Node: dir, Mask: proto.SetattrMode, Mode: 0700}); err != nil {
		t.Errorf("chmod of a dir: %v", err)
	}
	if _, err := c.Setattr(proto.Tsetattr{Node: file, Mask: proto.SetattrSize, Size: -1}); err != unix.EINVAL {
		t.Errorf("negative size = %v, want EINVAL", err)
	}
	checkSecret(t, secret)
}

func TestXattrs(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	file := mustWalk(t, c, rh, "file")
	if err := c.Setxattr(file, "user.mime", "text/plain", unix.XATTR_CREATE); err != nil {
		if err == unix.EOPNOTSUPP {
			t.Skip("no user xattrs on this file system")
		}
		t.Fatal(err)
	}
	if err := c.Setxattr(file, "user.mime", "x", unix.XATTR_CREATE); err != unix.EEXIST {
		t.Errorf("XATTR_CREATE of an existing name = %v, want EEXIST", err)
	}
	big := strings.Repeat("v", 3000) // ext4 keeps a block for all of a file's xattrs
	if err := c.Setxattr(file, "user.big", big, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Getxattr(file, "user.big"); err != nil || v != big {
		t.Errorf("Getxattr big = %d bytes, %v", len(v), err)
	}
	buf := make([]byte, 100)
	if n, err := unix.Lgetxattr(filepath.Join(root, "file"), "user.mime", buf); err != nil || string(buf[:n]) != "text/plain" {
		t.Errorf("host sees %q, %v", buf[:n], err)
	}
	names, err := c.Listxattr(file)
	sort.Strings(names)
	if err != nil || strings.Join(names, ",") != "user.big,user.mime" {
		t.Errorf("Listxattr = %v, %v", names, err)
	}
	if err := c.Removexattr(file, "user.mime"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Getxattr(file, "user.mime"); err != unix.ENODATA {
		t.Errorf("Getxattr after remove = %v, want ENODATA", err)
	}
	if err := c.Setxattr(file, "user.huge", strings.Repeat("v", proto.XattrValueMax+1), 0); err != unix.E2BIG {
		t.Errorf("oversized value = %v, want E2BIG", err)
	}
	// Namespaces not served, and a symlink out of the root.
	for _, name := range []string{"security.selinux", "system.posix_acl_access", "other.x", "user."} {
		if err := c.Setxattr(file, name, "v", 0); err != unix.EOPNOTSUPP {
			t.Errorf("Setxattr %q = %v, want EOPNOTSUPP", name, err)
		}
	}
	out := mustWalk(t, c, rh, "outfile")
	if err := c.Setxattr(out, "user.x", "v", 0); err != unix.EPERM {
		t.Errorf("Setxattr on a symlink = %v, want EPERM", err)
	}
	if _, err := c.Getxattr(out, "user.x"); err != unix.ENODATA {
		t.Errorf("Getxattr on a symlink = %v, want ENODATA", err)
	}
	if os.Getuid() == 0 {
		if err := c.Setxattr(file, "trusted.t", "v", 0); err != nil {
			t.Errorf("trusted xattr as root: %v", err)
		}
	}
	checkSecret(t, secret)
}

func TestFsyncFallocate(t *testing.T) {
	root, _ := writeTree(t)
	c, rh := serveRW(t, root)
	file := mustWalk(t, c, rh, "file")
	dir := mustWalk(t, c, rh, "dir")
	for _, h := range []proto.Handle{file, dir} {
		for _, dataOnly := range []bool{false, true} {
			if err := c.Fsync(h, dataOnly); err != nil {
				t.Errorf("Fsync: %v", err)
			}
		}
	}
	if err := c.Fallocate(file, 0, 0, 1<<16); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(root, "file")); err != nil || st.Size() != 1<<16 {
		t.Errorf("size after fallocate: %v, %v", st.Size(), err)
	}
	if err := c.Fallocate(dir, 0, 0, 10); err != unix.EISDIR {
		t.Errorf("fallocate of a dir = %v, want EISDIR", err)
	}
	out := mustWalk(t, c, rh, "outfile")
	if err := c.Fallocate(out, 0, 0, 10); err != unix.ENODEV {
		t.Errorf("fallocate of a symlink = %v, want ENODEV", err)
	}
}

func TestBindConnect(t *testing.T) {
	root, secret := writeTree(t)
	// A socket in the secret dir: connecting through a symlink to it
	// must fail.
	sfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sfd)
	secretSock := filepath.Join(filepath.Dir(secret), "secret.sock")
	if err := unix.Bind(sfd, &unix.SockaddrUnix{Name: secretSock}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(sfd, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.sock", filepath.Join(root, "outsock")); err != nil {
		t.Fatal(err)
	}

	c, rh := serveRW(t, root)
	dir := mustWalk(t, c, rh, "dir")
	h, attr, lfd, err := c.Bind(dir, "s", unix.SOCK_STREAM, 0700, proto.NoID, proto.NoID)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if attr.Mode != unix.S_IFSOCK|0700 {
		t.Errorf("socket attr mode %o, want socket 0700", attr.Mode)
	}
	if err := unix.Listen(lfd, 4); err != nil {
		t.Fatal(err)
	}
	cfd, err := c.Connect(dir, "s", unix.SOCK_STREAM)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(cfd)
	afd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(afd)
	if _, err := unix.Write(cfd, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := unix.Read(afd, buf); err != nil || !bytes.Equal(buf[:n], []byte("ping")) {
		t.Errorf("read %q, %v", buf[:n], err)
	}
	if _, err := c.Stat(h); err != nil {
		t.Errorf("Stat of the bound socket's handle: %v", err)
	}
	wd, _ := os.Getwd()
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"bind existing", func() error {
			_, _, fd, err := c.Bind(dir, "s", unix.SOCK_STREAM, 0700, proto.NoID, proto.NoID)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.EADDRINUSE},
		{"bind over symlink", func() error {
			_, _, fd, err := c.Bind(rh, "outsock", unix.SOCK_STREAM, 0700, proto.NoID, proto.NoID)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.EADDRINUSE},
		{"connect through symlink out", func() error {
			fd, err := c.Connect(rh, "outsock", unix.SOCK_STREAM)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.ECONNREFUSED},
		{"connect to a file", func() error { _, err := c.Connect(rh, "file", unix.SOCK_STREAM); return err }, unix.ECONNREFUSED},
		{"connect dot-dot", func() error { _, err := c.Connect(rh, "..", unix.SOCK_STREAM); return err }, unix.EINVAL},
		{"bad type", func() error { _, err := c.Connect(dir, "s", unix.SOCK_RAW); return err }, unix.ESOCKTNOSUPPORT},
		{"wrong type", func() error { _, err := c.Connect(dir, "s", unix.SOCK_DGRAM); return err }, unix.EPROTOTYPE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err != tt.want {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	if now, _ := os.Getwd(); now != wd {
		t.Errorf("working directory moved from %s to %s", wd, now)
	}
	checkSecret(t, secret)
}

// TestSwappedDirectory replaces, on the host, a directory the client holds
// a handle to with a symlink out of the root: changes through the handle
// land in the directory itself (wherever it moved), never through the
// symlink.
func TestSwappedDirectory(t *testing.T) {
	root, secret := writeTree(t)
	c, rh := serveRW(t, root)
	dir := mustWalk(t, c, rh, "dir")
	inner := mustWalk(t, c, dir, "inner")
	if err := os.Rename(filepath.Join(root, "dir"), filepath.Join(root, "dir.moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret", filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	_, _, fd, err := c.Create(dir, "planted", unix.O_WRONLY, 0644, proto.NoID, proto.NoID)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if _, err := os.Stat(filepath.Join(root, "dir.moved", "planted")); err != nil {
		t.Errorf("created file not in the moved directory: %v", err)
	}
	ops := []func() error{
		func() error { _, _, err := c.Mkdir(dir, "d", 0755, proto.NoID, proto.NoID); return err },
		func() error { _, _, err := c.Symlink(dir, "l", "x", proto.NoID, proto.NoID); return err },
		func() error { return c.Rename(dir, "planted", dir, "file", 0) },
		func() error { return c.Unlink(dir, "d", unix.AT_REMOVEDIR) },
		func() error {
			_, err := c.Setattr(proto.Tsetattr{Node: inner, Mask: proto.SetattrMode | proto.SetattrSize, Mode: 0600, Size: 1})
			return err
		},
	}
	for i, op := range ops {
		if err := op(); err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	// "file" in dir.moved now holds the planted (empty) file; the secret's
	// file is untouched.
	if got := readHost(t, filepath.Join(root, "dir.moved", "file")); got != "" {
		t.Errorf("dir.moved/file holds %q", got)
	}
	if got := readHost(t, filepath.Join(root, "dir.moved", "inner")); got != "i" {
		t.Errorf("inner after truncate holds %q", got)
	}
	checkSecret(t, secret)
}

// TestServerRefusesBadWriteNames sends, with the raw connection, what the
// client never would.
func TestServerRefusesBadWriteNames(t *testing.T) {
	root, secret := writeTree(t)
	_, pc, _ := serveMode(t, root, false, false)
	buf := make([]byte, proto.MaxMessage)
	call := func(m proto.Message) proto.Message {
		t.Helper()
		if err := pc.WriteMessage(9, m); err != nil {
			t.Fatal(err)
		}
		_, r, err := pc.ReadMessage(buf)
		if err != nil {
			t.Fatal(err)
		}
		if fd := proto.MessageFD(r); fd >= 0 {
			unix.Close(fd)
		}
		return r
	}
	rh := call(&proto.Tattach{Version: proto.Version}).(*proto.Rattach).Root
	bad := []string{"..", ".", "", "../secret/file", "/etc", "a\x00", strings.Repeat("a", 300)}
	for _, name := range bad {
		msgs := []proto.Message{
			&proto.Tcreate{Dir: rh, Name: name, Flags: unix.O_RDWR, Mode: 0644, UID: proto.NoID, GID: proto.NoID},
			&proto.Tmkdir{Dir: rh, Name: name, Mode: 0755, UID: proto.NoID, GID: proto.NoID},
			&proto.Tmknod{Dir: rh, Name: name, Mode: unix.S_IFIFO | 0644, UID: proto.NoID, GID: proto.NoID},
			&proto.Tsymlink{Dir: rh, Name: name, Target: "x", UID: proto.NoID, GID: proto.NoID},
			&proto.Tlink{Dir: rh, Name: name, Target: rh},
			&proto.Tunlink{Dir: rh, Name: name},
			&proto.Trename{OldDir: rh, OldName: "file", NewDir: rh, NewName: name},
			&proto.Trename{OldDir: rh, OldName: name, NewDir: rh, NewName: "x"},
			&proto.Tbind{Dir: rh, Name: name, SockType: unix.SOCK_STREAM, Mode: 0755, UID: proto.NoID, GID: proto.NoID},
			&proto.Tconnect{Dir: rh, Name: name, SockType: unix.SOCK_STREAM},
		}
		for _, m := range msgs {
			r, ok := call(m).(*proto.Rerror)
			want := unix.EINVAL
			if len(name) > proto.NameMax {
				want = unix.ENAMETOOLONG
			}
			if !ok || unix.Errno(r.Errno) != want {
				t.Errorf("%v with name %q answered %+v, want %v", m.Type(), name, r, want)
			}
		}
	}
	if r, ok := call(&proto.Tunlink{Dir: 4242, Name: "file"}).(*proto.Rerror); !ok || unix.Errno(r.Errno) != unix.EBADF {
		t.Errorf("unknown handle answered %+v, want EBADF", r)
	}
	checkSecret(t, secret)
	if readHost(t, filepath.Join(root, "file")) != fileContent {
		t.Error("file changed")
	}
}

func TestTmpfile(t *testing.T) {
	root, _ := writeTree(t)
	c, rh := serveRW(t, root)
	dir := mustWalk(t, c, rh, "dir")
	h, attr, fd, err := c.Tmpfile(dir, unix.O_RDWR, 0640, proto.NoID, proto.NoID)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if attr.Nlink != 0 || attr.Mode != unix.S_IFREG|0640 {
		t.Errorf("tmpfile attr nlink %d mode %o", attr.Nlink, attr.Mode)
	}
	unix.Pwrite(fd, []byte("tmp"), 0)
	if _, _, err := c.Link(dir, "named", h); err != nil {
		t.Fatal(err)
	}
	if got := readHost(t, filepath.Join(root, "dir", "named")); got != "tmp" {
		t.Errorf("linked tmpfile holds %q", got)
	}
	if a, err := c.Stat(h); err != nil || a.Nlink != 1 {
		t.Errorf("stat after link: nlink %d, %v", a.Nlink, err)
	}

	h2, _, fd2, err := c.Tmpfile(dir, unix.O_WRONLY|unix.O_EXCL, 0600, proto.NoID, proto.NoID)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd2)
	if _, _, err := c.Link(dir, "named2", h2); err != unix.ENOENT {
		t.Errorf("link of an O_EXCL tmpfile = %v, want ENOENT", err)
	}
	if _, _, _, err := c.Tmpfile(dir, unix.O_RDONLY, 0600, proto.NoID, proto.NoID); err != unix.EINVAL {
		t.Errorf("read-only tmpfile = %v, want EINVAL", err)
	}
	file := mustWalk(t, c, rh, "file")
	if _, _, _, err := c.Tmpfile(file, unix.O_RDWR, 0600, proto.NoID, proto.NoID); err != unix.ENOTDIR {
		t.Errorf("tmpfile in a file = %v, want ENOTDIR", err)
	}
}

func TestHostUDSNeedsOptIn(t *testing.T) {
	root, _ := writeTree(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(Config{Root: root, ConnFD: fds[0]}) }()
	c, err := proto.NewClient(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Shutdown(); <-done }()
	rh, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, fd, err := c.Bind(rh, "s", unix.SOCK_STREAM, 0700, proto.NoID, proto.NoID); err != unix.EPERM {
		unix.Close(fd)
		t.Errorf("Bind without HostUDS = %v, want EPERM", err)
	}
	if fd, err := c.Connect(rh, "s", unix.SOCK_STREAM); err != unix.EPERM {
		unix.Close(fd)
		t.Errorf("Connect without HostUDS = %v, want EPERM", err)
	}
}
