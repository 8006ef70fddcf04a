package e2e

import (
	"testing"
)

// mountNSScript is what `unshare -m` users do: busybox's unshare applet
// makes a mount namespace (and the tree private, its default), a tmpfs
// mounted in it is seen there and nowhere else; with --propagation
// shared, a mount made inside on a shared mount shows outside.
const mountNSScript = `b=/bin/busybox
cd /dev/shm
$b mkdir -p mnt shared
$b unshare -m $b sh -c "$b mount -t tmpfs x /dev/shm/mnt && echo inside > /dev/shm/mnt/f && $b cat /dev/shm/mnt/f && $b grep -c ' /dev/shm/mnt ' /proc/self/mountinfo"
$b ls /dev/shm/mnt | $b wc -l
$b grep -c ' /dev/shm/mnt ' /proc/self/mountinfo
$b unshare -m $b sh -c "$b grep ' / ' /proc/self/mountinfo | $b grep -c shared:"
$b mount -t tmpfs s /dev/shm/shared && $b mount --make-shared /dev/shm/shared && $b mkdir /dev/shm/shared/in
$b unshare -m --propagation shared $b sh -c "$b mount -t tmpfs y /dev/shm/shared/in && echo through > /dev/shm/shared/in/f"
$b cat /dev/shm/shared/in/f
$b umount /dev/shm/shared/in /dev/shm/shared
`

// TestUnshareMountNamespace runs busybox's unshare applet with -m,
// natively and sandboxed, and compares the output.
func TestUnshareMountNamespace(t *testing.T) {
	want := "inside\n1\n0\n0\n0\nthrough\n"
	runProgram(t, program{
		name:  "busybox_unshare_mount",
		needs: "/bin/busybox",
		argv:  []string{"/bin/busybox", "sh", "-c", mountNSScript},
		check: func(t *testing.T, out string) {
			if out != want {
				t.Errorf("native output %q, want %q", out, want)
			}
		},
	})
}

// rootlessMountScript is `unshare -r -m` as an unprivileged user: in a
// user namespace of its own it may mount a tmpfs, not unmount what it
// inherited (locked), and nothing shows outside.
const rootlessMountScript = `b=/bin/busybox
$b mkdir -p /dev/shm/um
$b unshare -r -m $b sh -c "$b mount -t tmpfs x /dev/shm/um && echo in > /dev/shm/um/f && $b cat /dev/shm/um/f; $b umount /proc 2>/dev/null || echo locked; $b mount -t sysfs s /dev/shm/um 2>/dev/null || echo no sysfs"
$b ls /dev/shm/um | $b wc -l
`

// TestUnshareRootlessMount runs busybox's unshare -r -m as user 1000,
// natively and sandboxed, and compares the output.
func TestUnshareRootlessMount(t *testing.T) {
	want := "in\nlocked\nno sysfs\n0\n"
	runProgram(t, program{
		name:  "busybox_unshare_rootless_mount",
		needs: "/usr/bin/setpriv",
		argv:  []string{"/usr/bin/setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "/bin/busybox", "sh", "-c", rootlessMountScript},
		check: func(t *testing.T, out string) {
			if out != want {
				t.Errorf("native output %q, want %q", out, want)
			}
		},
	})
}
