package harness

import (
	"os"
	"strings"
)

// MountsUnder lists the mount points at or under dir in this process's
// mount table, deepest (latest) first, so that unmounting them in order
// works: what a test's daemon (containerd, dockerd) left mounted.
func MountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var ms []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			ms = append([]string{f[4]}, ms...)
		}
	}
	return ms
}

// TailLines returns the last n lines of s.
func TailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FileTail returns the last n lines of the file at path (a daemon's log),
// empty if it cannot be read.
func FileTail(path string, n int) string {
	data, _ := os.ReadFile(path)
	return TailLines(string(data), n)
}
