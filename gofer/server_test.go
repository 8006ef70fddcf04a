package gofer

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

const fileContent = "hello from the host\n"

// makeTree builds the served tree:
//
//	file          regular, fileContent
//	dir/inner     regular
//	lnk -> file
//	esc -> /
//	up -> ../..
//	fifo          FIFO
//	sock          unix socket
//	null          char device 1,3 (if mknod is allowed)
//
// and, with big, big/ holding 3000 entries, every third a directory.
func makeTree(t *testing.T, big bool) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "file"), []byte(fileContent), 0644))
	must(os.Mkdir(filepath.Join(root, "dir"), 0755))
	must(os.WriteFile(filepath.Join(root, "dir", "inner"), []byte("inner"), 0600))
	must(os.Symlink("file", filepath.Join(root, "lnk")))
	must(os.Symlink("/", filepath.Join(root, "esc")))
	must(os.Symlink("../..", filepath.Join(root, "up")))
	must(unix.Mkfifo(filepath.Join(root, "fifo"), 0644))
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	must(err)
	t.Cleanup(func() { l.Close() })
	if err := unix.Mknod(filepath.Join(root, "null"), unix.S_IFCHR|0666, int(unix.Mkdev(1, 3))); err != nil {
		t.Logf("no device node in the tree: %v", err)
	}
	if !big {
		return root
	}
	must(os.Mkdir(filepath.Join(root, "big"), 0755))
	for i := 0; i < 3000; i++ {
		name := fmt.Sprintf("entry-with-a-longish-name-%05d", i)
		if i%3 == 0 {
			must(os.Mkdir(filepath.Join(root, "big", name), 0755))
		} else {
			must(os.WriteFile(filepath.Join(root, "big", name), nil, 0644))
		}
	}
	return root
}

// serve starts a server for root on one end of a socketpair and returns a
// client on the other end. Cleanup shuts the client down and waits for the
// server to finish.
func serve(t *testing.T, root string) *proto.Client {
	t.Helper()
	c, _, _ := serveRaw(t, root, true)
	return c
}

// serveRaw is serve, optionally returning the raw connection instead of a
// client, plus a dup of its fd for sending bytes that are no message (for
// sending what the client never would).
func serveRaw(t *testing.T, root string, client bool) (*proto.Client, *proto.Conn, int) {
	t.Helper()
	return serveMode(t, root, client, true)
}

// serveMode is serveRaw serving read-only or read-write.
func serveMode(t *testing.T, root string, client, readOnly bool) (*proto.Client, *proto.Conn, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(Config{Root: root, ConnFD: fds[0], ReadOnly: readOnly, HostUDS: !readOnly}) }()
	var c *proto.Client
	var pc *proto.Conn
	rawFD := -1
	if client {
		c, err = proto.NewClient(fds[1])
	} else {
		if rawFD, err = unix.Dup(fds[1]); err != nil {
			t.Fatal(err)
		}
		pc, err = proto.NewConn(fds[1])
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c != nil {
			c.Shutdown()
		} else {
			pc.Close()
			unix.Close(rawFD)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return c, pc, rawFD
}

// walkPath walks the components of p from root.
func walkPath(t *testing.T, c *proto.Client, root proto.Handle, p string) (proto.Handle, proto.Attr, error) {
	t.Helper()
	h, attr := root, proto.Attr{}
	for _, name := range strings.Split(p, "/") {
		next, a, err := c.Walk(h, name)
		if h != root {
			c.Close(h)
		}
		if err != nil {
			return 0, proto.Attr{}, err
		}
		h, attr = next, a
	}
	return h, attr, nil
}

func TestWalkAndStat(t *testing.T) {
	dir := makeTree(t, false)
	c := serve(t, dir)
	root, rattr, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		t.Fatal(err)
	}
	if rattr != proto.AttrFromStat(&st) {
		t.Errorf("root attr = %+v, want %+v", rattr, proto.AttrFromStat(&st))
	}
	for _, p := range []string{"file", "dir", "dir/inner", "lnk", "esc", "up", "fifo", "sock"} {
		t.Run(p, func(t *testing.T) {
			h, attr, err := walkPath(t, c, root, p)
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			defer c.Close(h)
			if err := unix.Lstat(filepath.Join(dir, p), &st); err != nil {
				t.Fatal(err)
			}
			want := proto.AttrFromStat(&st)
			if attr != want {
				t.Errorf("walk attr = %+v, want lstat %+v", attr, want)
			}
			got, err := c.Stat(h)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			// Stat is fresh; atime may move only for files read meanwhile.
			if got.Ino != want.Ino || got.Mode != want.Mode || got.Size != want.Size {
				t.Errorf("Stat = %+v, want %+v", got, want)
			}
		})
	}
}

func TestWalkErrors(t *testing.T) {
	c := serve(t, makeTree(t, false))
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	file, _, err := c.Walk(root, "file")
	if err != nil {
		t.Fatal(err)
	}
	esc, attr, err := c.Walk(root, "esc")
	if err != nil {
		t.Fatal(err)
	}
	if attr.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Fatalf("walk to symlink esc gave mode %o, want the symlink's", attr.Mode)
	}
	closed, _, err := c.Walk(root, "dir")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(closed); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  proto.Handle
		elem string
		want error
	}{
		{"missing", root, "nope", unix.ENOENT},
		{"in a file", file, "x", unix.ENOTDIR},
		{"through symlink to /", esc, "etc", unix.ENOTDIR},
		{"closed handle", closed, "inner", unix.EBADF},
		{"unknown handle", 9999, "x", unix.EBADF},
		{"dot-dot", root, "..", unix.EINVAL},
		{"dot", root, ".", unix.EINVAL},
		{"empty", root, "", unix.EINVAL},
		{"slash", root, "dir/inner", unix.EINVAL},
		{"absolute", root, "/etc", unix.EINVAL},
		{"too long", root, strings.Repeat("a", 256), unix.ENAMETOOLONG},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if h, _, err := c.Walk(tt.dir, tt.elem); err != tt.want {
				t.Errorf("Walk(%q) = %v, %v; want %v", tt.elem, h, err, tt.want)
			}
		})
	}
}

// TestServerRefusesBadWalks sends what the client never would, to check
// the server does not rely on the client's checks.
func TestServerRefusesBadWalks(t *testing.T) {
	_, pc, rawFD := serveRaw(t, makeTree(t, false), false)
	buf := make([]byte, proto.MaxMessage)
	call := func(m proto.Message) proto.Message {
		t.Helper()
		if err := pc.WriteMessage(7, m); err != nil {
			t.Fatal(err)
		}
		tag, r, err := pc.ReadMessage(buf)
		if err != nil {
			t.Fatal(err)
		}
		if tag != 7 {
			t.Fatalf("response tag %d, want 7", tag)
		}
		return r
	}
	errno := func(r proto.Message) unix.Errno {
		if e, ok := r.(*proto.Rerror); ok {
			return unix.Errno(e.Errno)
		}
		return 0
	}
	root := call(&proto.Tattach{Version: proto.Version}).(*proto.Rattach).Root
	tests := []struct {
		name string
		m    proto.Message
		want unix.Errno
	}{
		{"dot-dot", &proto.Twalk{Dir: root, Name: ".."}, unix.EINVAL},
		{"dot", &proto.Twalk{Dir: root, Name: "."}, unix.EINVAL},
		{"empty", &proto.Twalk{Dir: root, Name: ""}, unix.EINVAL},
		{"escape with slashes", &proto.Twalk{Dir: root, Name: "../../etc"}, unix.EINVAL},
		{"absolute", &proto.Twalk{Dir: root, Name: "/etc/passwd"}, unix.EINVAL},
		{"NUL", &proto.Twalk{Dir: root, Name: "file\x00"}, unix.EINVAL},
		{"too long", &proto.Twalk{Dir: root, Name: strings.Repeat("a", 300)}, unix.ENAMETOOLONG},
		{"wrong version", &proto.Tattach{Version: 99}, unix.EPROTONOSUPPORT},
		{"response as request", &proto.Rclose{}, unix.EINVAL},
		{"close unknown", &proto.Tclose{Node: 12345}, unix.EBADF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errno(call(tt.m)); got != tt.want {
				t.Errorf("errno = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("oversized", func(t *testing.T) {
		b := make([]byte, proto.MaxRequest+100)
		copy(b, []byte{7, 0, 0, 0, byte(proto.MsgTstat)})
		if err := unix.Sendmsg(rawFD, b, nil, nil, 0); err != nil {
			t.Fatal(err)
		}
		tag, r, err := pc.ReadMessage(buf)
		if err != nil {
			t.Fatal(err)
		}
		if tag != 7 || errno(r) != unix.EINVAL {
			t.Errorf("oversized request answered with tag %d, %+v; want 7, EINVAL", tag, r)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		// An undecodable request is answered under its tag with EINVAL.
		b := []byte{7, 0, 0, 0, byte(proto.MsgTwalk), 1, 2}
		if err := unix.Sendmsg(rawFD, b, nil, nil, 0); err != nil {
			t.Fatal(err)
		}
		_, r, err := pc.ReadMessage(buf)
		if err != nil {
			t.Fatal(err)
		}
		if errno(r) != unix.EINVAL {
			t.Errorf("garbage answered with %+v, want EINVAL", r)
		}
	})
}

func TestOpenAndRead(t *testing.T) {
	dir := makeTree(t, false)
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Walk(root, "file")
	if err != nil {
		t.Fatal(err)
	}
	fd, err := c.Open(h, unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 100)
	n, err := unix.Pread(fd, buf, 0)
	if err != nil || string(buf[:n]) != fileContent {
		t.Fatalf("pread = %q, %v", buf[:n], err)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fl&unix.O_ACCMODE != unix.O_RDONLY || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("donated fd flags %#x, want O_RDONLY without O_NONBLOCK", fl)
	}
	if _, err := unix.Write(fd, []byte("x")); err != unix.EBADF {
		t.Errorf("write to donated fd: %v, want EBADF", err)
	}

	// A directory opens for reading its entries.
	d, _, err := c.Walk(root, "dir")
	if err != nil {
		t.Fatal(err)
	}
	dfd, err := c.Open(d, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	dbuf := make([]byte, 4096)
	if n, err := unix.Getdents(dfd, dbuf); err != nil || n == 0 {
		t.Errorf("getdents on donated dir fd = %d, %v", n, err)
	}
	if !strings.Contains(string(dbuf), "inner") {
		t.Error("donated dir fd does not list inner")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := makeTree(t, false)
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		flags int
		want  error
	}{
		{"file", unix.O_WRONLY, unix.EROFS},
		{"file", unix.O_RDWR, unix.EROFS},
		{"file", unix.O_RDONLY | unix.O_TRUNC, unix.EROFS},
		{"dir", unix.O_WRONLY, unix.EISDIR},
		{"lnk", unix.O_RDONLY, unix.ELOOP},
		{"esc", unix.O_RDONLY, unix.ELOOP},
		{"fifo", unix.O_RDONLY, unix.EACCES},
		{"sock", unix.O_RDONLY, unix.ENXIO},
		{"null", unix.O_RDONLY, unix.EACCES},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s-%#x", tt.path, tt.flags), func(t *testing.T) {
			h, _, err := c.Walk(root, tt.path)
			if err == unix.ENOENT && tt.path == "null" {
				t.Skip("no device node (mknod not permitted)")
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(h)
			fd, err := c.Open(h, tt.flags)
			if err == nil {
				unix.Close(fd)
			}
			if err != tt.want {
				t.Errorf("Open = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestOpenAfterReplace checks that a file replaced on the host after the
// walk is not opened in its stead.
func TestOpenAfterReplace(t *testing.T) {
	dir := makeTree(t, false)
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Walk(root, "file")
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("other"), 0644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	if fd, err := c.Open(h, unix.O_RDONLY); err != unix.ESTALE {
		if err == nil {
			unix.Close(fd)
		}
		t.Fatalf("Open of replaced file = %v, want ESTALE", err)
	}
	// Replaced by a symlink: O_NOFOLLOW refuses it.
	if err := os.Remove(filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	h2, _, err := c.Walk(root, "dir")
	if err != nil {
		t.Fatal(err)
	}
	inner, _, err := c.Walk(h2, "inner")
	if err != nil {
		t.Fatal(err)
	}
	if fd, err := c.Open(h, unix.O_RDONLY); err != unix.ELOOP {
		if err == nil {
			unix.Close(fd)
		}
		t.Errorf("Open of file replaced by symlink = %v, want ELOOP", err)
	}
	// A file outlives the handle of its directory.
	if err := c.Close(h2); err != nil {
		t.Fatal(err)
	}
	fd, err := c.Open(inner, unix.O_RDONLY)
	if err != nil {
		t.Fatalf("Open after closing the parent handle: %v", err)
	}
	unix.Close(fd)
}

func TestReadlink(t *testing.T) {
	c := serve(t, makeTree(t, false))
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
		err        error
	}{
		{"lnk", "file", nil},
		{"esc", "/", nil},
		{"up", "../..", nil},
		{"file", "", unix.EINVAL},
		{"dir", "", unix.EINVAL},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			h, _, err := c.Walk(root, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(h)
			got, err := c.Readlink(h)
			if got != tt.want || err != tt.err {
				t.Errorf("Readlink = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestGetdents(t *testing.T) {
	dir := makeTree(t, true)
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "big", "dir"} {
		t.Run(p, func(t *testing.T) {
			h := root
			if p != "." {
				if h, _, err = c.Walk(root, p); err != nil {
					t.Fatal(err)
				}
				defer c.Close(h)
			}
			got, err := c.Getdents(h)
			if err != nil {
				t.Fatal(err)
			}
			host, err := os.ReadDir(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(host) {
				t.Fatalf("Getdents returned %d entries, host has %d", len(got), len(host))
			}
			sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
			for i, e := range host {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(dir, p, e.Name()), &st); err != nil {
					t.Fatal(err)
				}
				want := proto.Dirent{Name: e.Name(), Ino: st.Ino, Type: uint8(st.Mode & unix.S_IFMT >> 12)}
				if got[i] != want {
					t.Fatalf("entry %d = %+v, want %+v", i, got[i], want)
				}
			}
		})
	}

	t.Run("pages", func(t *testing.T) {
		// 3000 entries do not fit one message: the server must page.
		s, err := NewServer(dir, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n, _, err := walk(s.mounts[0], "big")
		if err != nil {
			t.Fatal(err)
		}
		defer n.decRef()
		pages, total := 0, 0
		seen := map[string]bool{}
		for off, eof := uint64(0), false; !eof; pages++ {
			r, err := getdents(n, off)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range r.Entries {
				if seen[e.Name] {
					t.Fatalf("entry %q returned twice", e.Name)
				}
				seen[e.Name] = true
			}
			total += len(r.Entries)
			off, eof = r.Next, r.EOF
			if b, err := proto.Encode(nil, 0, r); err != nil || len(b) > proto.MaxMessage {
				t.Fatalf("page encodes to %d bytes, %v", len(b), err)
			}
		}
		if total != 3000 || pages < 2 {
			t.Errorf("%d entries in %d pages, want 3000 in more than one", total, pages)
		}
	})

	t.Run("not a directory", func(t *testing.T) {
		h, _, err := c.Walk(root, "file")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(h)
		if _, err := c.Getdents(h); err != unix.ENOTDIR {
			t.Errorf("Getdents on a file = %v, want ENOTDIR", err)
		}
	})
}

func TestStatFS(t *testing.T) {
	dir := makeTree(t, false)
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.StatFS(root)
	if err != nil {
		t.Fatal(err)
	}
	var want unix.Statfs_t
	if err := unix.Statfs(dir, &want); err != nil {
		t.Fatal(err)
	}
	if got.Type != want.Type || got.Bsize != want.Bsize || got.Blocks != want.Blocks || got.Fsid != want.Fsid {
		t.Errorf("StatFS = %+v, want %+v", got, want)
	}
}

func TestCloseReleases(t *testing.T) {
	c := serve(t, makeTree(t, false))
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Walk(root, "file")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(h); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(h); err != unix.EBADF {
		t.Errorf("Stat after Close = %v, want EBADF", err)
	}
	if err := c.Close(h); err != unix.EBADF {
		t.Errorf("second Close = %v, want EBADF", err)
	}
}

// openFDs counts this process's open fds.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestConnectionEndReleasesFDs(t *testing.T) {
	dir := makeTree(t, true)
	before := openFDs(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(Config{Root: dir, ConnFD: fds[0], ReadOnly: true}) }()
	c, err := proto.NewClient(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if _, _, err := c.Walk(root, "file"); err != nil { // never closed
			t.Fatal(err)
		}
	}
	big, _, err := c.Walk(root, "big")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Getdents(big); err != nil {
		t.Fatal(err)
	}
	d, err := c.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Attach(); err != nil {
		t.Fatal(err)
	}
	if during := openFDs(t); during < before+50 {
		t.Fatalf("%d fds open while serving, want at least %d", during, before+50)
	}
	c.Shutdown()
	d.Shutdown()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d fds open after the connections ended, %d before", after, before)
	}
}

func TestConcurrentWalks(t *testing.T) {
	dir := makeTree(t, true)
	c := serve(t, dir)
	d, err := c.Dup()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown()
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		cl := c
		if g%2 == 1 {
			cl = d
		}
		wg.Go(func() {
			root, _, err := cl.Attach()
			if err != nil {
				t.Error(err)
				return
			}
			defer cl.Close(root)
			for i := 0; i < 100; i++ {
				name := fmt.Sprintf("entry-with-a-longish-name-%05d", (g*100+i)%3000)
				h, _, err := walkPath(t, cl, root, "big/"+name)
				if err != nil {
					t.Errorf("walk %s: %v", name, err)
					return
				}
				if i%3 != 0 || (g*100+i)%3 != 0 {
					if a, err := cl.Stat(h); err != nil || a.Mode&unix.S_IFMT == 0 {
						t.Errorf("stat %s: %+v, %v", name, a, err)
					}
				}
				if err := cl.Close(h); err != nil {
					t.Errorf("close %s: %v", name, err)
				}
				f, _, err := cl.Walk(root, "file")
				if err != nil {
					t.Error(err)
					return
				}
				fd, err := cl.Open(f, unix.O_RDONLY)
				if err != nil {
					t.Errorf("open: %v", err)
				} else {
					buf := make([]byte, 64)
					if n, _ := unix.Pread(fd, buf, 0); string(buf[:n]) != fileContent {
						t.Errorf("read %q", buf[:n])
					}
					unix.Close(fd)
				}
				cl.Close(f)
			}
		})
	}
	wg.Wait()
}

func TestServeMissingRoot(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	err = Serve(Config{Root: "/nonexistent/moat", ConnFD: fds[0], ReadOnly: true})
	if !errors.Is(err, unix.ENOENT) {
		t.Fatalf("Serve of a missing root = %v, want ENOENT", err)
	}
}

func TestErrMsg(t *testing.T) {
	if r := errMsg(fmt.Errorf("wrapped: %w", unix.ENOSPC)).(*proto.Rerror); unix.Errno(r.Errno) != unix.ENOSPC {
		t.Errorf("wrapped errno = %v", unix.Errno(r.Errno))
	}
	if r := errMsg(errors.New("plain")).(*proto.Rerror); unix.Errno(r.Errno) != unix.EIO {
		t.Errorf("plain error = %v, want EIO", unix.Errno(r.Errno))
	}
}

// BenchmarkStat measures one Tstat round trip through client and server.
func BenchmarkStat(b *testing.B) {
	c, root := benchClient(b)
	for b.Loop() {
		if _, err := c.Stat(root); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatParallel measures Tstat from many goroutines sharing one
// client.
func BenchmarkStatParallel(b *testing.B) {
	c, root := benchClient(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Stat(root); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkWalkOpenClose measures what opening a file by name costs: a
// walk, an open (fd donation) and a close.
func BenchmarkWalkOpenClose(b *testing.B) {
	c, root := benchClient(b)
	for b.Loop() {
		h, _, err := c.Walk(root, "file")
		if err != nil {
			b.Fatal(err)
		}
		fd, err := c.Open(h, unix.O_RDONLY)
		if err != nil {
			b.Fatal(err)
		}
		unix.Close(fd)
		if err := c.Close(h); err != nil {
			b.Fatal(err)
		}
	}
}

func benchClient(b *testing.B) (*proto.Client, proto.Handle) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte(fileContent), 0644); err != nil {
		b.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(Config{Root: dir, ConnFD: fds[0], ReadOnly: true}) }()
	c, err := proto.NewClient(fds[1])
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Shutdown()
		<-done
	})
	root, _, err := c.Attach()
	if err != nil {
		b.Fatal(err)
	}
	return c, root
}
