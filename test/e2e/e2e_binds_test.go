package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// bindsScript exercises a container's bind mounts; the test sets them up
// (see TestSpecBindMounts) and checks the host side afterwards.
const bindsScript = `
echo "hosts: $(cat /etc/hosts)"
echo "resolv: $(cat /etc/resolv.conf)"
echo rw > /vol/new && echo "rw: ok"
echo "before: $(cat /vol/data) $(cat /vol/cfg/x)"
echo x > /ro/x 2>/dev/null || echo "ro: refused"
touch /ro 2>/dev/null || echo "ro dir: refused"
echo "ro read: $(cat /ro/data)"
/noexec/busybox true 2>/dev/null || echo "noexec: refused"
/exec/busybox true && echo "exec: ok"
echo "linked: $(cat /lnk/data)"
echo "nested: $(cat /vol/nested/inner)"
echo n > /vol/nested/new2 && echo "nested write: ok"
echo "deep: $(ls -A /new/deep/mnt | wc -l)"
echo "root write: $(echo o > /overlay-only && cat /overlay-only)"
for p in /vol/esc/secret /vol/up/secret /vol/sec /vol/../secret /ro/../secret /vol/abs /lnk/../secret /etc/hosts/../secret; do
	cat "$p" 2>/dev/null && echo "LEAK via $p"
done
ls /vol/esc/ | grep -q '^bin$' && echo "esc: the sandbox's own root"
touch /vol/ready
while [ ! -e /vol/go ]; do sleep 0.05; done
echo "hosts now: $(cat /etc/hosts)"
echo "new file: $(cat /vol/from-host)"
echo "after: $(cat /vol/data) $(cat /vol/cfg/x)"
echo done
`

// TestSpecBindMounts runs a container whose spec has host bind mounts
// (issues #3 and #4): a directory read-write (writes reach the host), one
// read-only (EROFS), a file over /etc/hosts (read again after the host
// rewrites it), a source that is a symlink on the host, a bind inside a
// bind, a mount point made in the overlay; and symlinks and ".." inside a
// bind that must never reach the host's files beside its source.
func TestSpecBindMounts(t *testing.T) {
	runsc := harness.RequireRunsc(t)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox on the host")
	}
	top := t.TempDir()
	bundle := filepath.Join(top, "bundle")
	rootfs := filepath.Join(bundle, "rootfs")
	p := func(rel string) string { return filepath.Join(top, rel) }
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(rootfs, "bin/busybox"), string(bb))
	os.Chmod(filepath.Join(rootfs, "bin/busybox"), 0o755)
	for _, app := range []string{"sh", "cat", "ls", "wc", "grep", "touch", "sleep", "echo"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", app))
	}
	for _, d := range []string{"proc", "dev", "etc"} {
		os.MkdirAll(filepath.Join(rootfs, d), 0o755)
	}
	write(filepath.Join(rootfs, "etc/hosts"), "image hosts\n")
	// A dangling link, as some images have: the mount point is made
	// where it leads (in the overlay).
	if err := os.Symlink("../run/resolv/stub.conf", filepath.Join(rootfs, "etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	write(p("resolv.conf"), "nameserver 10.0.0.53\n")
	write(p("hosts"), "10.0.0.1 first\n")
	write(p("vol/data"), "vol\n")
	write(p("vol/v1/x"), "one\n")
	if err := os.Symlink("v1", p("vol/cfg")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p("vol/nested"), 0o755) // the nested bind's mount point
	write(p("rovol/data"), "read-only\n")
	write(p("linked/data"), "through a link\n")
	write(p("nested/inner"), "inner\n")
	os.MkdirAll(p("deepsrc"), 0o755)
	write(p("secret"), "TOP SECRET\n")
	write(p("bin/busybox"), string(bb))
	os.Chmod(p("bin/busybox"), 0o755)
	for link, target := range map[string]string{
		"vol/esc": "/", "vol/up": "..", "vol/sec": "../secret", "vol/abs": "/../../secret", "linkdir": "linked",
	} {
		if err := os.Symlink(target, p(link)); err != nil {
			t.Fatal(err)
		}
	}

	state := filepath.Join(top, "state")
	run := func(args ...string) *exec.Cmd {
		return exec.Command(runsc, append([]string{"--root", state}, args...)...)
	}
	if out, err := run("spec", "--bundle", bundle).CombinedOutput(); err != nil {
		t.Fatalf("runsc spec: %v\n%s", err, out)
	}
	specPath := filepath.Join(bundle, "config.json")
	b, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	var spec specs.Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	spec.Process.Terminal = false
	spec.Root.Readonly = false // the overlay: mount points and writes stay in the sandbox
	spec.Process.Args = []string{"/bin/sh", "-c", bindsScript}
	spec.Mounts = append(spec.Mounts,
		specs.Mount{Destination: "/etc/hosts", Type: "bind", Source: p("hosts"), Options: []string{"rbind", "rprivate"}},
		specs.Mount{Destination: "/etc/resolv.conf", Type: "bind", Source: p("resolv.conf"), Options: []string{"rbind", "ro"}},
		specs.Mount{Destination: "/vol", Type: "bind", Source: p("vol"), Options: []string{"rbind", "rw"}},
		specs.Mount{Destination: "/ro", Type: "bind", Source: p("rovol"), Options: []string{"rbind", "ro", "nosuid", "nodev"}},
		specs.Mount{Destination: "/lnk", Source: p("linkdir"), Options: []string{"bind"}},
		specs.Mount{Destination: "/vol/nested", Type: "bind", Source: p("nested"), Options: []string{"rbind"}},
		specs.Mount{Destination: "/new/deep/mnt", Type: "bind", Source: p("deepsrc"), Options: []string{"rbind", "ro"}},
		specs.Mount{Destination: "/noexec", Type: "bind", Source: p("bin"), Options: []string{"rbind", "ro", "noexec", "rslave"}},
		specs.Mount{Destination: "/exec", Type: "bind", Source: p("bin"), Options: []string{"bind", "ro", "nosuid", "nodev", "rshared"}},
	)
	if b, err = json.Marshal(&spec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(specPath, b, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, runsc, "--root", state, "run", "--bundle", bundle, "binds")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run("delete", "--force", "binds").Run() })
	// Once the container has looked at everything, the host rewrites
	// /etc/hosts in place (as Docker does) and adds a file to the volume.
	for i := 0; ; i++ {
		if _, err := os.Stat(p("vol/ready")); err == nil {
			break
		}
		if i > 1200 || ctx.Err() != nil {
			cancel()
			cmd.Wait()
			t.Fatalf("the container never got ready\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	write(p("hosts"), "10.0.0.2 second\n")
	write(p("vol/from-host"), "from the host\n")
	// An atomic save and a ConfigMap-style switch of a symlink, both by
	// rename over the old name.
	write(p("vol/data.tmp"), "saved\n")
	write(p("vol/v2/x"), "two\n")
	if err := os.Symlink("v2", p("vol/cfg.tmp")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"data", "cfg"} {
		if err := os.Rename(p("vol/"+n+".tmp"), p("vol/"+n)); err != nil {
			t.Fatal(err)
		}
	}
	write(p("vol/go"), "")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("runsc run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"hosts: 10.0.0.1 first\n",
		"resolv: nameserver 10.0.0.53\n",
		"rw: ok\n",
		"ro: refused\n",
		"ro dir: refused\n",
		"ro read: read-only\n",
		"noexec: refused\n",
		"exec: ok\n",
		"linked: through a link\n",
		"nested: inner\n",
		"nested write: ok\n",
		"deep: 0\n",
		"root write: o\n",
		"esc: the sandbox's own root\n",
		"hosts now: 10.0.0.2 second\n",
		"new file: from the host\n",
		"before: vol one\n",
		"after: saved two\n",
		"done\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s\nstderr:\n%s", want, got, stderr.String())
		}
	}
	if strings.Contains(got, "LEAK") || strings.Contains(got, "SECRET") {
		t.Errorf("a file beside a bind's source was read:\n%s", got)
	}
	for path, want := range map[string]string{
		"vol/new":      "rw\n",
		"nested/new2":  "n\n",
		"rovol/data":   "read-only\n",
		"secret":       "TOP SECRET\n",
		"linked/data":  "through a link\n",
		"nested/inner": "inner\n",
	} {
		if b, err := os.ReadFile(p(path)); err != nil || string(b) != want {
			t.Errorf("host %s = %q, %v; want %q", path, b, err, want)
		}
	}
	for _, gone := range []string{"rovol/x", "vol/nested/new2", "overlay-only", "bundle/rootfs/overlay-only", "bundle/rootfs/new", "bundle/rootfs/run"} {
		if _, err := os.Stat(p(gone)); err == nil {
			t.Errorf("host has %s", gone)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(rootfs, "etc/hosts")); string(b) != "image hosts\n" {
		t.Errorf("the image's /etc/hosts changed: %q", b)
	}
}

// TestRunscDoVolume checks `runsc do --volume HOST:CONTAINER[:ro]`.
func TestRunscDoVolume(t *testing.T) {
	runsc := harness.RequireRunsc(t)
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox on the host")
	}
	top := t.TempDir()
	vol, ro := filepath.Join(top, "vol"), filepath.Join(top, "ro")
	os.MkdirAll(vol, 0o755)
	os.MkdirAll(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "f"), []byte("ro file\n"), 0o644)
	script := `echo hi > /mnt/v/out && cat /mnt/r/f && (echo x > /mnt/r/x) 2>&1; ` + busybox + ` grep -c ' /mnt/r 9p ro' /proc/mounts`
	out, err := exec.Command(runsc, "do", "--volume", vol+":/mnt/v", "--volume", ro+":/mnt/r:ro", "--", busybox, "sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("runsc do: %v\n%s", err, out)
	}
	for _, want := range []string{"ro file\n", "Read-only file system", "1\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(vol, "out")); err != nil || string(b) != "hi\n" {
		t.Errorf("host reads %q, %v", b, err)
	}
	for _, bad := range []string{"nocolon", vol + ":relative", vol + ":/x:rx", ":/x", vol + ":/proc", vol + ":/sys/x"} {
		out, err := exec.Command(runsc, "do", "--volume", bad, "--", busybox, "true").CombinedOutput()
		if err == nil {
			t.Errorf("--volume %q accepted:\n%s", bad, out)
		}
	}
	out, err = exec.Command(runsc, "do", "--volume", filepath.Join(top, "missing")+":/m", "--", busybox, "true").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no such file") {
		t.Errorf("a missing source: %v\n%s", err, out)
	}
}
