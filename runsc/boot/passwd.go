package boot

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// maxPasswdSize bounds how much of the container's /etc/passwd is read.
const maxPasswdSize = 1 << 20

// homeDir returns the home directory /etc/passwd under root gives uid, or
// "/" when the file or the entry is missing, as runc sets HOME for a
// process whose environment has none.
func homeDir(ctx fs.Context, root fs.VirtualDentry, uid uint32) string {
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/passwd"}, fs.OpenOptions{Flags: unix.O_RDONLY})
	if err != nil {
		return "/"
	}
	defer f.DecRef()
	var data []byte
	buf := make([]byte, 64<<10)
	for len(data) < maxPasswdSize {
		n, err := f.PRead(ctx, buf, int64(len(data)))
		data = append(data, buf[:n]...)
		if n == 0 || err != nil {
			break
		}
	}
	if home, ok := passwdHome(data, uid); ok {
		return home
	}
	return "/"
}

// passwdHome finds uid's entry in passwd (name:pw:uid:gid:gecos:home:shell
// lines) and returns its home directory.
func passwdHome(passwd []byte, uid uint32) (string, bool) {
	want := strconv.FormatUint(uint64(uid), 10)
	for _, line := range bytes.Split(passwd, []byte("\n")) {
		f := bytes.Split(line, []byte(":"))
		if len(f) < 6 || string(f[2]) != want || len(f[5]) == 0 {
			continue
		}
		return string(f[5]), true
	}
	return "", false
}
