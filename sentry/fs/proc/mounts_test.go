package proc

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// TestMountSourcesAndRoots checks the source and root columns a file
// system's MountInfo gives /proc/self/mounts and mountinfo.
func TestMountSourcesAndRoots(t *testing.T) {
	ctx, root, _ := setup(t)
	// The test root is read-only: mount a writable directory tree first.
	base, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/bin"})
	if err != nil {
		t.Fatal(err)
	}
	scratch := synth.NewFilesystem("tmpfs", 1, synth.NewDir(0o755, map[string]fs.Node{
		"shm": synth.NewDir(0o755, nil),
		"etc": synth.NewDir(0o755, nil),
		"sub": synth.NewDir(0o755, nil),
		"x":   synth.NewDir(0o755, map[string]fs.Node{"y": synth.NewDir(0o755, nil)}),
		"z":   synth.NewDir(0o755, nil),
	}), false)
	if _, err := root.Mount.Namespace().Mount(ctx, base, scratch, fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	resolve := func(p string) fs.VirtualDentry {
		t.Helper()
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p})
		if err != nil {
			t.Fatal(err)
		}
		return vd
	}
	shm := synth.NewFilesystem("tmpfs", 1, synth.NewDir(0o1777, nil), false)
	shm.SetMountInfo(fs.MountInfo{Source: "shm"})
	host := synth.NewFilesystem("9p", 1, synth.NewDir(0o755, map[string]fs.Node{"sub": synth.NewDir(0o755, nil)}), false)
	host.SetMountInfo(fs.MountInfo{Root: "/etc"})
	ns := root.Mount.Namespace()
	if _, err := ns.Mount(ctx, resolve("/bin/shm"), shm, fs.MountFlags{NoDev: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, resolve("/bin/etc"), host, fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.BindMount(ctx, resolve("/bin/sub"), resolve("/bin/etc/sub"), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	// A bind of a subtree of a file system with no root path of its own.
	if _, err := ns.BindMount(ctx, resolve("/bin/z"), resolve("/bin/x/y"), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	mounts := readAll(t, ctx, root, "/proc/mounts")
	info := readAll(t, ctx, root, "/proc/self/mountinfo")
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"shm source", "mounts", mounts, "shm /bin/shm tmpfs rw,nodev 0 0\n"},
		{"type when no source", "mounts", mounts, "tmpfs /bin tmpfs rw 0 0\n"},
		{"root none", "mounts", mounts, "none / rootfs ro 0 0\n"},
		{"shm mountinfo", "mountinfo", info, " / /bin/shm rw,nodev - tmpfs shm rw\n"},
		{"host root", "mountinfo", info, " /etc /bin/etc rw - 9p 9p rw\n"},
		{"bind below host root", "mountinfo", info, " /etc/sub /bin/sub rw - 9p 9p rw\n"},
		{"bind of a subtree", "mountinfo", info, " /x/y /bin/z rw - tmpfs tmpfs rw\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.text, tc.want) {
				t.Errorf("%s lacks %q:\n%s", tc.file, tc.want, tc.text)
			}
		})
	}
}
