package e2e

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// treeDigest describes every entry under dir (path, type, mode, size,
// mtime, content or link target), so any change to the tree shows.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v %d %d", rel, info.Mode(), info.Size(), info.ModTime().UnixNano())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " -> %s", target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// overlayScript changes the root in every way a container does, tries to
// reach the secret beside the root, and prints what it sees.
const overlayScript = `
set -e
cd /
echo changed > /etc/motd
echo new > /etc/new
mkdir -p /a/b/c && echo deep > /a/b/c/f
mv /data/keep /data/moved
rm /data/gone
rm -r /data/dir
ln -s /etc/new /lnk
ln /etc/motd /hard
chmod 600 /etc/passwd
touch -d @0 /etc/passwd
echo appended >> /data/moved
mkdir /data/dir
echo "motd=$(cat /etc/motd) new=$(cat /lnk) deep=$(cat /a/b/c/f) moved=$(cat /data/moved | tr '\n' ,)"
echo "data: $(ls /data | tr '\n' ' ')"
echo "dir: $(ls -A /data/dir | wc -l)"
echo "hard: $(stat -c %h /hard)"
set +e
for p in ../secret ../../secret /../secret /proc/self/root/../secret /proc/1/cwd/../secret; do
	cat "$p" 2>/dev/null && echo "LEAK via $p"
done
ln -s ../secret /esc && cat /esc 2>/dev/null && echo "LEAK via symlink"
ln -s /../../secret /esc2 && cat /esc2 2>/dev/null && echo "LEAK via absolute symlink"
echo done
`

// TestOverlayKeepsHostUnchanged runs a script that changes the container
// root under the default overlay and checks that the changes are seen
// inside, that nothing outside the root is reachable, and that the host
// directory is byte for byte what it was (issue #3).
func TestOverlayKeepsHostUnchanged(t *testing.T) {
	if harness.NativeOnly() {
		t.Skip("MOAT_NATIVE_ONLY is set")
	}
	runsc := harness.RequireRunsc(t)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox on the host")
	}
	top := t.TempDir()
	root := filepath.Join(top, "root")
	secret := filepath.Join(top, "secret")
	mustWrite := func(p, data string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(filepath.Join(root, "bin/busybox"), string(bb), 0o755)
	for _, applet := range []string{"sh", "cat", "ls", "mkdir", "mv", "rm", "ln", "chmod", "touch", "tr", "stat", "wc"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(filepath.Join(root, "etc/motd"), "hello\n", 0o644)
	mustWrite(filepath.Join(root, "etc/passwd"), "root:x:0:0::/:/bin/sh\n", 0o644)
	mustWrite(filepath.Join(root, "data/keep"), "kept\n", 0o644)
	mustWrite(filepath.Join(root, "data/gone"), "gone\n", 0o644)
	mustWrite(filepath.Join(root, "data/dir/x"), "x\n", 0o644)
	mustWrite(secret, "TOP SECRET\n", 0o600)
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	os.MkdirAll(filepath.Join(root, "sys"), 0o755)
	// Old times, so a touched mtime would show.
	old := time.Unix(1_000_000_000, 0)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	before := treeDigest(t, top)

	cmd := exec.Command(runsc, "do", "--rootfs", root, "--", "/bin/sh", "-c", overlayScript)
	cmd.Env = []string{"PATH=/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("runsc do: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"motd=changed new=new deep=deep moved=kept,appended,",
		"data: dir moved \n",
		"dir: 0\n",
		"hard: 2\n",
		"done\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "LEAK") || strings.Contains(got, "SECRET") {
		t.Errorf("the secret beside the root was read:\n%s", got)
	}
	if after := treeDigest(t, top); after != before {
		t.Errorf("the host tree changed under the overlay:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestReadOnlyRoot checks that `runsc do --read-only` refuses changes
// with EROFS and that the overlay is what makes the root writable.
func TestReadOnlyRoot(t *testing.T) {
	if harness.NativeOnly() {
		t.Skip("MOAT_NATIVE_ONLY is set")
	}
	runsc := harness.RequireRunsc(t)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox on the host")
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--read-only"}, "Read-only file system"},
		{nil, "written"},
	} {
		args := append([]string{"do"}, tc.flags...)
		args = append(args, "--", busybox, "sh", "-c", "echo x > /moat-ro-test && echo written; "+busybox+" rm -f /moat-ro-test")
		out, _ := exec.Command(runsc, args...).CombinedOutput()
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("runsc %v: output %q lacks %q", args, out, tc.want)
		}
	}
	if _, err := os.Stat("/moat-ro-test"); err == nil {
		os.Remove("/moat-ro-test")
		t.Errorf("a file written under the overlay reached the host")
	}
}
