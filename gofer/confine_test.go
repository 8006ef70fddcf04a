package gofer

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// confineEnv names the root a re-executed test binary confines itself to
// before serving on fd 3.
const confineEnv = "MOAT_GOFER_TEST_CONFINE"

func TestMain(m *testing.M) {
	if root := os.Getenv(confineEnv); root != "" {
		os.Exit(confinedChild(root))
	}
	if top := os.Getenv(confineMountsEnv); top != "" {
		os.Exit(confinedMountsChild(top))
	}
	os.Exit(m.Run())
}

// confinedChild is the body of the re-executed test binary: confine, check
// the view, serve.
func confinedChild(root string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return 1
	}
	if err := Confine(root); err != nil {
		return fail("Confine: %v", err)
	}
	if _, err := os.Stat("/marker"); err != nil {
		return fail("after Confine, /marker: %v", err)
	}
	for _, p := range []string{"/etc", "/proc", "/tmp", root} {
		if _, err := os.Lstat(p); err == nil {
			return fail("after Confine, %s is still reachable", p)
		}
	}
	if wd, err := os.Getwd(); err != nil || wd != "/" {
		return fail("after Confine, cwd = %q, %v", wd, err)
	}
	if err := Serve(Config{Root: "/", ConnFD: 3, ReadOnly: true}); err != nil {
		return fail("Serve: %v", err)
	}
	return 0
}

func TestConfine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount namespaces")
	}
	mountsBefore, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	root := makeTree(t, false)
	if err := os.WriteFile(filepath.Join(root, "marker"), nil, 0644); err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	childEnd := os.NewFile(uintptr(fds[0]), "gofer-child")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), confineEnv+"="+root)
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
		rootH, _, err := c.Attach()
		if err != nil {
			t.Errorf("Attach: %v (child: %s)", err, stderr.String())
			return
		}
		ents, err := c.Getdents(rootH)
		if err != nil {
			t.Errorf("Getdents: %v", err)
			return
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name)
		}
		sort.Strings(got)
		hostEnts, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, e := range hostEnts {
			want = append(want, e.Name())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("confined root lists %v, want %v", got, want)
		}
		esc, attr, err := c.Walk(rootH, "esc")
		if err != nil || attr.Mode&unix.S_IFMT != unix.S_IFLNK {
			t.Errorf("Walk esc = %o, %v; want the symlink", attr.Mode, err)
		}
		if target, err := c.Readlink(esc); err != nil || target != "/" {
			t.Errorf("Readlink esc = %q, %v", target, err)
		}
		h, _, err := c.Walk(rootH, "file")
		if err != nil {
			t.Errorf("Walk file: %v", err)
			return
		}
		fd, err := c.Open(h, unix.O_RDONLY)
		if err != nil {
			t.Errorf("Open file: %v", err)
			return
		}
		buf := make([]byte, 64)
		n, _ := unix.Read(fd, buf)
		unix.Close(fd)
		if string(buf[:n]) != fileContent {
			t.Errorf("read %q from the confined gofer", buf[:n])
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Errorf("confined gofer: %v; stderr: %s", err, stderr.String())
	}
	mountsAfter, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if changed := confineLeaks(mountsBefore, mountsAfter, root); len(changed) > 0 {
		t.Errorf("the confined gofer changed the test's mount table:\n%s\nbefore:\n%s\nafter:\n%s", strings.Join(changed, "\n"), mountsBefore, mountsAfter)
	}
}

// confineLeaks returns the mountinfo lines that differ between before and
// after and could come from Confine: the root's mount and anything at or
// under the confined tree or on a gofer staging tmpfs. Other processes
// (tests running beside this one) may mount and unmount elsewhere at the
// same time, so the rest of the table is not compared.
func confineLeaks(before, after []byte, root string) []string {
	lines := func(b []byte) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				m[l] = true
			}
		}
		return m
	}
	b, a := lines(before), lines(after)
	relevant := func(l string) bool {
		f := strings.Fields(l)
		if len(f) < 5 {
			return true
		}
		mp := f[4]
		return mp == "/" || mp == root || strings.HasPrefix(mp, root+"/") || strings.Contains(l, "moat-gofer")
	}
	var out []string
	for l := range b {
		if !a[l] && relevant(l) {
			out = append(out, "gone: "+l)
		}
	}
	for l := range a {
		if !b[l] && relevant(l) {
			out = append(out, "new: "+l)
		}
	}
	sort.Strings(out)
	return out
}

func TestConfineChecks(t *testing.T) {
	// This process shares the mount namespace of its parent: the check must
	// say so (Confine would then refuse before touching any mount).
	own, err := inOwnMountNamespace()
	if err != nil {
		t.Fatal(err)
	}
	if own {
		t.Fatal("inOwnMountNamespace says the test runs in a namespace of its own")
	}
	if err := Confine("relative/root"); err == nil {
		t.Fatal("Confine accepted a relative root")
	}
}
