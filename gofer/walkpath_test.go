package gofer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
)

func TestWalkPath(t *testing.T) {
	dir := makeTree(t, false)
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "c", "f"), []byte("deep"), 0644); err != nil {
		t.Fatal(err)
	}
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		steps   int    // components walked
		target  string // the last step's symlink target
		wantErr error
	}{
		{"whole path", "a/b/c/f", 4, "", nil},
		{"directories only", "a/b/c", 3, "", nil},
		{"one name", "file", 1, "", nil},
		{"missing in the middle", "a/nope/c/f", 1, "", unix.ENOENT},
		{"missing at the end", "a/b/c/nope", 3, "", unix.ENOENT},
		{"missing first", "nope/a", 0, "", unix.ENOENT},
		{"stops at a file", "file/x/y", 1, "", nil},
		{"stops at a symlink", "lnk/x", 1, "file", nil},
		{"symlink to / not followed", "esc/etc/passwd", 1, "/", nil},
		{"symlink upwards not followed", "up/up/etc", 1, "../..", nil},
		{"symlink last", "lnk", 1, "file", nil},
		{"fifo stops", "fifo/x", 1, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := c.WalkPath(root, strings.Split(tt.path, "/"))
			defer func() {
				for _, s := range steps {
					c.Close(s.Node)
				}
			}()
			if err != tt.wantErr || len(steps) != tt.steps {
				t.Fatalf("WalkPath(%q) = %d steps, %v; want %d, %v", tt.path, len(steps), err, tt.steps, tt.wantErr)
			}
			names := strings.Split(tt.path, "/")
			for i, s := range steps {
				var st unix.Stat_t
				p := filepath.Join(append([]string{dir}, names[:i+1]...)...)
				if err := unix.Lstat(p, &st); err != nil {
					t.Fatal(err)
				}
				if s.Attr.Ino != st.Ino || s.Attr.Mode != st.Mode {
					t.Errorf("step %d (%s): ino %d mode %o, want lstat's %d %o", i, p, s.Attr.Ino, s.Attr.Mode, st.Ino, st.Mode)
				}
				got, err := c.Stat(s.Node)
				if err != nil || got.Ino != st.Ino {
					t.Errorf("Stat of step %d's handle = %d, %v; want ino %d", i, got.Ino, err, st.Ino)
				}
				want := ""
				if i == len(steps)-1 {
					want = tt.target
				}
				if s.Target != want {
					t.Errorf("step %d target %q, want %q", i, s.Target, want)
				}
			}
		})
	}
	t.Run("handles open files", func(t *testing.T) {
		steps, err := c.WalkPath(root, []string{"a", "b", "c", "f"})
		if err != nil || len(steps) != 4 {
			t.Fatalf("WalkPath = %d steps, %v", len(steps), err)
		}
		fd, err := c.Open(steps[3].Node, unix.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		n, _ := unix.Read(fd, buf)
		unix.Close(fd)
		if string(buf[:n]) != "deep" {
			t.Errorf("read %q, want %q", buf[:n], "deep")
		}
	})
	t.Run("client stops at a bad name", func(t *testing.T) {
		steps, err := c.WalkPath(root, []string{"a", "..", "..", "etc"})
		if err != nil || len(steps) != 1 {
			t.Errorf("WalkPath(a/../../etc) = %d steps, %v; want 1 step (a), nil", len(steps), err)
		}
		if _, err := c.WalkPath(root, []string{"..", "etc"}); err != unix.EINVAL {
			t.Errorf("WalkPath(../etc) = %v, want EINVAL", err)
		}
		if _, err := c.WalkPath(root, []string{strings.Repeat("x", 256)}); err != unix.ENAMETOOLONG {
			t.Errorf("WalkPath(long name) = %v, want ENAMETOOLONG", err)
		}
	})
}

// TestServerRefusesBadWalkPaths sends TwalkPaths the client never would:
// no name may leave the tree.
func TestServerRefusesBadWalkPaths(t *testing.T) {
	_, pc, _ := serveRaw(t, makeTree(t, false), false)
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
		return r
	}
	root := call(&proto.Tattach{Version: proto.Version}).(*proto.Rattach).Root
	tests := []struct {
		name  string
		names []string
		steps int        // steps in an RwalkPath (0: an Rerror)
		errno unix.Errno // the Rerror's or the RwalkPath's
	}{
		{"dot-dot first", []string{"..", "etc"}, 0, unix.EINVAL},
		{"dot-dot after a dir", []string{"dir", "..", "..", "etc"}, 1, unix.EINVAL},
		{"slashes", []string{"dir", "../../etc"}, 1, unix.EINVAL},
		{"absolute", []string{"/etc", "passwd"}, 0, unix.EINVAL},
		{"empty", []string{"dir", ""}, 1, unix.EINVAL},
		{"dot", []string{"dir", "."}, 1, unix.EINVAL},
		{"NUL", []string{"dir", "inner\x00"}, 1, unix.EINVAL},
		{"too long", []string{"dir", strings.Repeat("a", 300)}, 1, unix.ENAMETOOLONG},
		{"through a symlink to /", []string{"esc", "etc", "passwd"}, 1, 0},
		{"through a symlink upwards", []string{"up", "up", "etc"}, 1, 0},
		{"in a file", []string{"file", "x"}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(&proto.TwalkPath{Dir: root, Names: tt.names})
			switch r := r.(type) {
			case *proto.Rerror:
				if tt.steps != 0 || unix.Errno(r.Errno) != tt.errno {
					t.Errorf("Rerror %v; want %d steps, errno %v", unix.Errno(r.Errno), tt.steps, tt.errno)
				}
			case *proto.RwalkPath:
				if len(r.Steps) != tt.steps || unix.Errno(r.Errno) != tt.errno {
					t.Errorf("%d steps, errno %v; want %d, %v", len(r.Steps), unix.Errno(r.Errno), tt.steps, tt.errno)
				}
				for _, s := range r.Steps {
					call(&proto.Tclose{Node: s.Node})
				}
			default:
				t.Errorf("answered with %v", r.Type())
			}
		})
	}
	t.Run("too many names", func(t *testing.T) {
		names := make([]string, proto.MaxWalkNames+1)
		for i := range names {
			names[i] = "dir"
		}
		if r, ok := call(&proto.TwalkPath{Dir: root, Names: names}).(*proto.Rerror); !ok || unix.Errno(r.Errno) != unix.EINVAL {
			t.Errorf("TwalkPath of %d names answered with %+v, want EINVAL", len(names), r)
		}
	})
	t.Run("unknown handle", func(t *testing.T) {
		if r, ok := call(&proto.TwalkPath{Dir: 4242, Names: []string{"dir"}}).(*proto.Rerror); !ok || unix.Errno(r.Errno) != unix.EBADF {
			t.Errorf("TwalkPath from an unknown handle answered with %+v, want EBADF", r)
		}
	})
}

// TestWalkPathReleasesFDs checks that a multi-name walk holds no fd beyond
// its handles: closing them, or ending the connection, frees everything.
func TestWalkPathReleasesFDs(t *testing.T) {
	dir := makeTree(t, false)
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0755); err != nil {
		t.Fatal(err)
	}
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	for i := 0; i < 20; i++ {
		steps, err := c.WalkPath(root, []string{"a", "b", "c", "nope"})
		if err != unix.ENOENT || len(steps) != 3 {
			t.Fatalf("WalkPath = %d steps, %v", len(steps), err)
		}
		for _, s := range steps {
			if err := c.Close(s.Node); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d fds open after closing every handle, %d before", after, before)
	}
}

func TestWalkPathOpen(t *testing.T) {
	dir := makeTree(t, false)
	c := serve(t, dir)
	root, _, err := c.Attach()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		steps   int
		content string // what the donated fd reads; "" for no fd
		wantErr error
	}{
		{"dir/inner", 2, "inner", nil},
		{"file", 1, fileContent, nil},
		{"dir", 1, "", nil},
		{"lnk", 1, "", nil},     // a symlink is not followed, not opened
		{"esc/etc", 1, "", nil}, // stopped at the symlink
		{"file/x", 1, "", nil},  // stopped before the last name
		{"fifo", 1, "", nil},    // never opened
		{"dir/nope", 1, "", unix.ENOENT},
		{"nope", 0, "", unix.ENOENT},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			steps, fd, err := c.WalkPathOpen(root, strings.Split(tt.path, "/"))
			for _, s := range steps {
				defer c.Close(s.Node)
			}
			if fd >= 0 {
				defer unix.Close(fd)
			}
			if err != tt.wantErr || len(steps) != tt.steps {
				t.Fatalf("WalkPathOpen = %d steps, %v; want %d, %v", len(steps), err, tt.steps, tt.wantErr)
			}
			if tt.content == "" {
				if fd >= 0 {
					t.Errorf("fd %d donated, want none", fd)
				}
				return
			}
			if fd < 0 {
				t.Fatal("no fd donated")
			}
			buf := make([]byte, 64)
			n, _ := unix.Pread(fd, buf, 0)
			if string(buf[:n]) != tt.content {
				t.Errorf("fd reads %q, want %q", buf[:n], tt.content)
			}
			if _, err := unix.Write(fd, []byte("x")); err != unix.EBADF {
				t.Errorf("write to the donated fd = %v, want EBADF (read-only)", err)
			}
		})
	}
}
