package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// busyboxRoot makes a root holding a static busybox as /bin/busybox and
// /bin/sh, inside a fresh base directory, and returns the base and the
// root (base/root).
func busyboxRoot(t *testing.T) (base, root string) {
	t.Helper()
	bb := "/bin/busybox"
	src, err := os.Open(bb)
	if err != nil {
		t.Skipf("no static busybox: %v", err)
	}
	defer src.Close()
	base = t.TempDir()
	root = filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(filepath.Join(root, "bin", "busybox"), os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	for _, applet := range []string{"sh", "cat", "echo", "mkdir", "mv", "ln", "chmod", "rm",
		"mkfifo", "rmdir", "ls", "touch", "chown", "stat"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
	return base, root
}

func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			lines = append(lines, p+": "+err.Error())
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel + " " + info.Mode().String()
		if info.Mode().IsRegular() && !strings.HasPrefix(rel, "bin") {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestE2EWritableRoot: with --overlay=none the sandbox's changes reach the
// host directory.
func TestE2EWritableRoot(t *testing.T) {
	_, root := busyboxRoot(t)
	if err := os.WriteFile(filepath.Join(root, "old"), []byte("to be removed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `set -e
echo hello > /greeting
echo more >> /greeting
mkdir -p /a/b
echo inner > /a/b/file
mv /a/b/file /a/moved
ln -s moved /a/link
ln /a/moved /a/hard
chmod 600 /a/moved
rm /old
mkfifo /a/fifo
rm /a/fifo
rmdir /a/b
cat /a/link
ls /a
chown 1234:1235 /a/hard
echo more >> /a/hard
stat -c '%u:%g %s' /a/hard
`
	status, stdout, stderr := runsc(t, "--overlay=none", "do", "--rootfs", root, "/bin/sh", "-c", script)
	if status != 0 {
		t.Fatalf("status %d, stdout %q, stderr:\n%s", status, stdout, stderr)
	}
	// The owner survives the write after it: the Sentry's own fstat would
	// see host ids through its user namespace.
	if want := "inner\nhard\nlink\nmoved\n1234:1235 11\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	checks := map[string]string{"greeting": "hello\nmore\n", "a/moved": "inner\nmore\n", "a/hard": "inner\nmore\n"}
	for p, want := range checks {
		if b, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(b) != want {
			t.Errorf("host %s = %q, %v; want %q", p, b, err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "a/link")); err != nil || target != "moved" {
		t.Errorf("host a/link -> %q, %v", target, err)
	}
	if st, err := os.Stat(filepath.Join(root, "a/moved")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("host a/moved mode %v, %v", st.Mode(), err)
	}
	for _, gone := range []string{"old", "a/b", "a/fifo"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); !os.IsNotExist(err) {
			t.Errorf("host %s still there: %v", gone, err)
		}
	}

	// Without --overlay=none the host's files never change: the root is
	// read-only, or (once the memory overlay is the default) changes stay
	// in the sandbox.
	status, _, stderr = runsc(t, "do", "--rootfs", root, "/bin/sh", "-c", "echo x > /greeting; rm -f /a/moved; mkdir /new")
	if status != 0 && !strings.Contains(stderr, "Read-only file system") {
		t.Errorf("write without --overlay=none: status %d, stderr %q", status, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "greeting")); string(b) != "hello\nmore\n" {
		t.Errorf("greeting changed to %q without --overlay=none", b)
	}
	if _, err := os.Stat(filepath.Join(root, "a/moved")); err != nil {
		t.Errorf("a/moved removed without --overlay=none: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("new made without --overlay=none: %v", err)
	}
}

// TestE2EWritableRootEscapes: whatever a program in a writable root does
// with "..", symlinks and hard links, the files beside the root stay
// unread and unchanged.
func TestE2EWritableRootEscapes(t *testing.T) {
	base, root := busyboxRoot(t)
	secretDir := filepath.Join(base, "secret")
	if err := os.Mkdir(secretDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secretDir, "file"), []byte("top secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("beside the root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink planted on the host pointing out of the root.
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "planted")); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, secretDir) + "\n" + hostFileOr(filepath.Join(base, "secret.txt"))
	script := `
cd /
cat ../secret.txt ../secret/file /../secret.txt /../../secret/file 2>/dev/null
cat planted 2>/dev/null
echo pwned > planted
echo pwned > ../secret.txt
echo pwned > /../secret/file
ln -s ../secret sd; echo pwned > sd/file; ls sd/ 2>/dev/null
ln -s ../../../.. up; echo pwned > up/secret.txt; ls up/
ln ../secret.txt hard; ln /../secret/file hard2
mv ../secret.txt stolen; mv /../secret /stolendir
rm -rf ../secret ../secret.txt
cd ..; cd ..; echo pwned > secret.txt; mkdir -p secret; echo pwned > secret/file
chmod 777 ../secret/file /../secret.txt
touch -d 2001-01-01 ../secret.txt
echo done
`
	status, stdout, stderr := runsc(t, "--overlay=none", "do", "--rootfs", root, "/bin/sh", "-c", script)
	if status != 0 || !strings.HasSuffix(stdout, "done\n") {
		t.Fatalf("status %d, stdout %q, stderr:\n%s", status, stdout, stderr)
	}
	for _, leak := range []string{"top secret", "beside the root"} {
		if strings.Contains(stdout, leak) {
			t.Errorf("the sandbox read %q:\n%s", leak, stdout)
		}
	}
	after := treeOf(t, secretDir) + "\n" + hostFileOr(filepath.Join(base, "secret.txt"))
	if after != before {
		t.Errorf("files beside the root changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Everything the program made is inside the root.
	ents, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "root secret secret.txt" {
		t.Errorf("base dir holds %q", got)
	}
	var st os.FileInfo
	if st, err = os.Stat(filepath.Join(base, "secret.txt")); err == nil && st.ModTime().Year() == 2001 {
		t.Error("touch reached the secret")
	}
}

func hostFileOr(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
