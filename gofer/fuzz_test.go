package gofer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// FuzzServerRequests sends arbitrary well-formed requests to a read-write
// server over a tree with a secret beside it: the server must answer each
// (never panic or hang) and never touch the secret.
func FuzzServerRequests(f *testing.F) {
	seeds := []proto.Message{
		&proto.Tattach{Version: proto.Version},
		&proto.Tattach{Version: proto.Version, Mount: 1},
		&proto.Tattach{Version: proto.Version, Mount: 2},
		&proto.Tattach{Version: proto.Version, Mount: 3},
		&proto.Tattach{Version: proto.Version, Mount: 9},
		&proto.Twalk{Dir: 1, Name: "out"},
		&proto.TwalkPath{Dir: 1, Names: []string{"out", "..", "secret", "file"}},
		&proto.TwalkPath{Dir: 1, Names: []string{"l", "file"}},
		&proto.TwalkOpen{Dir: 1, Names: []string{"out", "file"}},
		&proto.Tcreate{Dir: 1, Name: "n", Flags: unix.O_RDWR, Mode: 0644, UID: proto.NoID, GID: proto.NoID},
		&proto.Tmkdir{Dir: 1, Name: "d", Mode: 0755, UID: proto.NoID, GID: proto.NoID},
		&proto.Tmknod{Dir: 1, Name: "p", Mode: unix.S_IFIFO | 0600, UID: proto.NoID, GID: proto.NoID},
		&proto.Tsymlink{Dir: 1, Name: "l", Target: "../secret/file", UID: proto.NoID, GID: proto.NoID},
		&proto.Tlink{Dir: 1, Name: "h", Target: 2},
		&proto.Tunlink{Dir: 1, Name: "file"},
		&proto.Trename{OldDir: 1, OldName: "out", NewDir: 1, NewName: "x", Flags: unix.RENAME_EXCHANGE},
		&proto.Tsetattr{Node: 2, Mask: proto.SetattrMode | proto.SetattrSize, Mode: 0777, Size: 1},
		&proto.Tsetxattr{Node: 2, Name: "user.a", Value: "v"},
		&proto.Tgetxattr{Node: 2, Name: "user.a"},
		&proto.Tlistxattr{Node: 2},
		&proto.Tremovexattr{Node: 2, Name: "user.a"},
		&proto.Tfsync{Node: 2},
		&proto.Tfallocate{Node: 2, Length: 10},
		&proto.Topen{Node: 2, Flags: unix.O_RDWR | unix.O_TRUNC},
		&proto.Tbind{Dir: 1, Name: "s", SockType: unix.SOCK_DGRAM, Mode: 0700, UID: proto.NoID, GID: proto.NoID},
		&proto.Tconnect{Dir: 1, Name: "s", SockType: unix.SOCK_DGRAM},
		&proto.Ttmpfile{Dir: 1, Flags: unix.O_RDWR, Mode: 0600, UID: proto.NoID, GID: proto.NoID},
		&proto.Tgetdents{Dir: 1},
		&proto.Tclose{Node: 2},
	}
	for _, m := range seeds {
		b, err := proto.Encode(nil, 7, m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// One server and tree for the whole run (f.TempDir lives as long),
	// with attach points besides the root: a read-write directory, a
	// read-only file and a read-only directory beside the root, which
	// must not change either.
	root, secret := writeTree(f)
	rodir := filepath.Join(filepath.Dir(root), "rodir")
	if err := os.Mkdir(rodir, 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rodir, "ro"), []byte("ro"), 0o644); err != nil {
		f.Fatal(err)
	}
	mounts := []Mount{{Path: filepath.Join(root, "dir")}, {Path: filepath.Join(root, "file"), ReadOnly: true}, {Path: rodir, ReadOnly: true}}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		f.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(Config{Root: root, ConnFD: fds[0], HostUDS: true, Mounts: mounts}) }()
	pc, err := proto.NewConn(fds[1])
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		pc.Close()
		<-done
	})
	buf := make([]byte, proto.MaxMessage)
	if err := pc.WriteMessage(1, &proto.Tattach{Version: proto.Version}); err != nil {
		f.Fatal(err)
	}
	if _, _, err := pc.ReadMessage(buf); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tag, m, err := proto.Decode(b)
		if err != nil || !proto.IsRequest(m.Type()) {
			return
		}
		switch m := m.(type) {
		case *proto.Tdup:
			return // a new connection per input would pile up
		case *proto.Tfallocate:
			if m.Length > 1<<20 || m.Offset > 1<<20 {
				return // real blocks: the disk is shared
			}
		}
		if err := pc.WriteMessage(tag, m); err != nil {
			t.Fatal(err)
		}
		rtag, r, err := pc.ReadMessage(buf)
		if err != nil {
			t.Fatalf("%v: %v", m.Type(), err)
		}
		if fd := proto.MessageFD(r); fd >= 0 {
			unix.Close(fd)
		}
		if rtag != tag {
			t.Fatalf("%v answered with tag %d, want %d", m.Type(), rtag, tag)
		}
		checkSecret(t, secret)
		if ents, err := os.ReadDir(rodir); err != nil || len(ents) != 1 {
			t.Fatalf("the read-only attach point changed: %v, %v", ents, err)
		}
		if b, err := os.ReadFile(filepath.Join(rodir, "ro")); err != nil || string(b) != "ro" {
			t.Fatalf("the read-only attach point's file changed: %q, %v", b, err)
		}
	})
}
