package e2e

import (
	"testing"
)

// userNSScript is what `unshare -r` users do: busybox's unshare applet
// makes a user namespace as an unprivileged user (setpriv drops to 1000
// first), maps the user to root, and, with -u, changes the host name in a
// UTS namespace the new user namespace owns, which the initial one does
// not allow.
const userNSScript = `b=/bin/busybox
$b unshare -r $b id
$b unshare -U $b id -u
$b unshare -r -u $b sh -c "$b hostname inner && $b hostname && $b cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups"
$b unshare -r $b sh -c "$b hostname outer 2>/dev/null || echo hostname refused"
`

// TestUnshareUserNamespace runs busybox's unshare applet with -r and -U,
// natively and sandboxed, and compares the output.
func TestUnshareUserNamespace(t *testing.T) {
	want := "uid=0(root) gid=0(root)\n65534\ninner\n         0       1000          1\n         0       1000          1\ndeny\nhostname refused\n"
	runProgram(t, program{
		name:  "busybox_unshare_user",
		needs: "/usr/bin/setpriv",
		argv:  []string{"/usr/bin/setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "/bin/busybox", "sh", "-c", userNSScript},
		check: func(t *testing.T, out string) {
			if out != want {
				t.Errorf("native output %q, want %q", out, want)
			}
		},
	})
}
