package gofer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// confineMountsEnv names the bind fixture whose root and sources a
// re-executed test binary confines itself to with ConfineMounts.
const confineMountsEnv = "MOAT_GOFER_TEST_CONFINE_MOUNTS"

// confinedMountsChild confines itself to the fixture under top, checks
// its view and serves. The read-only bind is served as writable, so that
// only the host kernel's read-only mount stands in the way of a write.
func confinedMountsChild(top string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return 1
	}
	f := fixtureAt(top)
	root, served, err := ConfineMounts(f.root, f.mounts())
	if err != nil {
		return fail("ConfineMounts: %v", err)
	}
	for _, p := range []string{"/etc", "/proc", "/tmp", top, root + "/../secret", "/secret"} {
		if _, err := os.Lstat(p); err == nil {
			return fail("after ConfineMounts, %s is still reachable", p)
		}
	}
	if b, err := os.ReadFile(served[0].Path + "/data"); err != nil || string(b) != "vol data" {
		return fail("after ConfineMounts, the volume reads %q, %v", b, err)
	}
	if err := os.WriteFile("/stray", nil, 0o644); err == nil {
		return fail("the staging root is writable")
	}
	for i := range served {
		served[i].ReadOnly = false
	}
	if err := Serve(Config{Root: root, ConnFD: 3, Mounts: served}); err != nil {
		return fail("Serve: %v", err)
	}
	return 0
}

func fixtureAt(top string) bindFixture {
	return bindFixture{
		top:       top,
		root:      filepath.Join(top, "root"),
		vol:       filepath.Join(top, "vol"),
		rovol:     filepath.Join(top, "rovol"),
		hosts:     filepath.Join(top, "hosts"),
		hostsLink: filepath.Join(top, "hosts-link"),
	}
}

func TestConfineMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount namespaces")
	}
	mountsBefore, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	f := makeBindFixture(t)
	if err := os.WriteFile(filepath.Join(f.root, "marker"), []byte("root"), 0o644); err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	childEnd := os.NewFile(uintptr(fds[0]), "gofer-child")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), confineMountsEnv+"="+f.top)
	cmd.ExtraFiles = []*os.File{childEnd}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &unix.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		childEnd.Close()
		unix.Close(fds[1])
		t.Skipf("cannot start a process in a new mount namespace: %v", err)
	}
	childEnd.Close()
	c, err := proto.NewClient(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer c.Shutdown()
		attach := func(i uint32) proto.Handle {
			h, _, err := c.AttachMount(i)
			if err != nil {
				t.Fatalf("AttachMount(%d): %v (child: %s)", i, err, stderr.String())
			}
			return h
		}
		root, vol, rovol, hosts := attach(0), attach(1), attach(2), attach(3)
		if h, _, err := c.Walk(root, "marker"); err != nil {
			t.Errorf("Walk root/marker: %v", err)
		} else {
			c.Close(h)
		}
		t.Run("rw volume", func(t *testing.T) {
			_, _, fd, err := c.Create(vol, "new", unix.O_WRONLY, 0o644, proto.NoID, proto.NoID)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			unix.Write(fd, []byte("from the gofer"))
			unix.Close(fd)
			if b, err := os.ReadFile(filepath.Join(f.vol, "new")); err != nil || string(b) != "from the gofer" {
				t.Errorf("host reads %q, %v", b, err)
			}
		})
		t.Run("ro volume refused by the host kernel", func(t *testing.T) {
			_, _, fd, err := c.Create(rovol, "new", unix.O_WRONLY, 0o644, proto.NoID, proto.NoID)
			if err == nil {
				unix.Close(fd)
			}
			if !errors.Is(err, unix.EROFS) {
				t.Errorf("Create = %v, want EROFS", err)
			}
		})
		t.Run("rename across binds", func(t *testing.T) {
			if err := c.Rename(vol, "data", root, "data", 0); !errors.Is(err, unix.EXDEV) {
				t.Errorf("Rename = %v, want EXDEV", err)
			}
		})
		t.Run("file bind", func(t *testing.T) {
			if err := os.WriteFile(f.hosts, []byte("10.1.1.1 db\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fd, err := c.Open(hosts, unix.O_RDONLY)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			buf := make([]byte, 64)
			n, _ := unix.Pread(fd, buf, 0)
			unix.Close(fd)
			if string(buf[:n]) != "10.1.1.1 db\n" {
				t.Errorf("read %q", buf[:n])
			}
		})
		t.Run("escapes", func(t *testing.T) {
			for _, name := range []string{"esc", "up", "sec"} {
				h, attr, err := c.Walk(vol, name)
				if err != nil || attr.Mode&unix.S_IFMT != unix.S_IFLNK {
					t.Errorf("Walk %s = %o, %v; want the symlink", name, attr.Mode, err)
					continue
				}
				if _, _, err := c.Walk(h, "secret"); err == nil {
					t.Errorf("walked through symlink %s", name)
				}
			}
		})
	}()
	if err := cmd.Wait(); err != nil {
		t.Errorf("confined gofer: %v; stderr: %s", err, stderr.String())
	}
	mountsAfter, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	// Other tests on the machine may mount things meanwhile: only mounts
	// where the confinement works (the fixture and /tmp, where the staging
	// tmpfs goes) count.
	ours := func(table []byte) []string {
		var lines []string
		for _, l := range strings.Split(string(table), "\n") {
			fields := strings.Fields(l)
			if len(fields) > 4 && (fields[4] == os.TempDir() || fields[4] == "/tmp" || strings.HasPrefix(fields[4], f.top)) {
				lines = append(lines, l)
			}
		}
		return lines
	}
	if before, after := ours(mountsBefore), ours(mountsAfter); !slices.Equal(before, after) {
		t.Errorf("the test's mount table changed:\nbefore:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
}
