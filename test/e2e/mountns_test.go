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
