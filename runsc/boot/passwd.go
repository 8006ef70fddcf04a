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
// process whose environment has none. The file is opened O_NONBLOCK and
// read only if it is a regular file: a FIFO there (the Sentry serves
// named pipes itself) must not hang the boot waiting for a writer, and a
// device must not feed it, as warmInit's opens.
func homeDir(ctx fs.Context, root fs.VirtualDentry, uid uint32) string {
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/passwd", FollowFinal: true}, fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_NONBLOCK})
	if err != nil {
		return "/"
	}
	defer f.DecRef()
	if st, err := f.Stat(ctx); err != nil || st.Type() != unix.S_IFREG {
		return "/"
	}
	var data []byte
	buf := make([]byte, 64<<10)
	for len(data) < maxPasswdSize {
		n, err := f.PRead(ctx, buf, int64(len(data)))
		data = append(data, buf[:n]...)
		if n == 0 || err != nil {
			break
		}
	}
	if _, home, ok := PasswdUser(data, uid); ok && home != "" {
		return home
	}
	return "/"
}

// PasswdUser finds uid's entry in passwd, the text of an /etc/passwd
// (name:password:uid:gid:gecos:home:shell lines), and returns its user
// name and home directory (either may be empty).
func PasswdUser(passwd []byte, uid uint32) (name, home string, ok bool) {
	want := strconv.FormatUint(uint64(uid), 10)
	for _, line := range bytes.Split(passwd, []byte("\n")) {
		f := bytes.Split(line, []byte(":"))
		if len(f) < 3 || string(f[2]) != want {
			continue
		}
		if len(f) > 5 {
			home = string(f[5])
		}
		return string(f[0]), home, true
	}
	return "", "", false
}
