package boot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/gofertest"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

func TestPasswdUser(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/sh\n# comment\nbad line\nwww-data:x:33:33:www-data:/var/www:/bin/false\nnohome:x:7:7:::/bin/sh\nshort:x:8\n"
	for _, tc := range []struct {
		uid        uint32
		name, home string
		ok         bool
	}{
		{0, "root", "/root", true},
		{33, "www-data", "/var/www", true},
		{7, "nohome", "", true},
		{8, "short", "", true},
		{1000, "", "", false},
	} {
		name, home, ok := PasswdUser([]byte(passwd), tc.uid)
		if name != tc.name || home != tc.home || ok != tc.ok {
			t.Errorf("uid %d: got %q, %q, %v; want %q, %q, %v", tc.uid, name, home, ok, tc.name, tc.home, tc.ok)
		}
	}
}

func FuzzPasswdUser(f *testing.F) {
	f.Add([]byte("root:x:0:0:root:/root:/bin/sh\n"), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, uid uint32) {
		name, home, ok := PasswdUser(data, uid)
		if !ok && (name != "" || home != "") {
			t.Fatalf("no entry but %q, %q", name, home)
		}
	})
}

// goferRoot serves dir with an in-process read-only gofer and returns
// the root of a mount namespace over it.
func goferRoot(t *testing.T, dir string) fs.VirtualDentry {
	t.Helper()
	f, err := gofer.New(gofertest.ServeDir(t, dir, true))
	if err != nil {
		t.Fatal(err)
	}
	return fs.NewMountNamespace(f, fs.MountFlags{}).Root()
}

// TestHomeDir checks HOME's lookup in the container's /etc/passwd, and
// that what is not a regular file there gives "/" at once: a FIFO must
// not hang the boot waiting for a writer.
func TestHomeDir(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/sh\nu:x:1000:1000::/home/u:/bin/sh\n"
	for _, tc := range []struct {
		name  string
		setup func(etc string) error
		uid   uint32
		want  string
	}{
		{"entry", func(etc string) error { return os.WriteFile(filepath.Join(etc, "passwd"), []byte(passwd), 0o644) }, 1000, "/home/u"},
		{"no entry", func(etc string) error { return os.WriteFile(filepath.Join(etc, "passwd"), []byte(passwd), 0o644) }, 7, "/"},
		{"no file", func(string) error { return nil }, 0, "/"},
		{"symlink", func(etc string) error {
			if err := os.WriteFile(filepath.Join(etc, "passwd.real"), []byte(passwd), 0o644); err != nil {
				return err
			}
			return os.Symlink("passwd.real", filepath.Join(etc, "passwd"))
		}, 0, "/root"},
		{"FIFO", func(etc string) error { return unix.Mkfifo(filepath.Join(etc, "passwd"), 0o644) }, 0, "/"},
		{"directory", func(etc string) error { return os.Mkdir(filepath.Join(etc, "passwd"), 0o755) }, 0, "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			etc := filepath.Join(dir, "etc")
			if err := os.Mkdir(etc, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.setup(etc); err != nil {
				t.Fatal(err)
			}
			root := goferRoot(t, dir)
			got := make(chan string, 1)
			go func() { got <- homeDir(kernel.Background(), root, tc.uid) }()
			select {
			case home := <-got:
				if home != tc.want {
					t.Errorf("homeDir(%d) = %q, want %q", tc.uid, home, tc.want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("homeDir did not return within 30 s")
			}
		})
	}
}
