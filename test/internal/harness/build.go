package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// CFlags are the flags every test program is built with.
var CFlags = []string{"-static", "-O1", "-pthread", "-g", "-Wall", "-Werror=implicit-function-declaration"}

var (
	ccVersionOnce sync.Once
	ccVersion     string
)

func compilerVersion() string {
	ccVersionOnce.Do(func() {
		out, err := exec.Command("gcc", "--version").Output()
		if err != nil {
			ccVersion = "unknown"
			return
		}
		ccVersion = string(out)
	})
	return ccVersion
}

// BuildC compiles the C sources srcs (the first names the program) into a
// static binary under CacheDir()/kind, keyed by a hash of the sources, the
// flags and the compiler version, and returns its path. A cached binary is
// reused. Concurrent builds of the same key are safe (write, then rename).
func BuildC(kind string, srcs []string, extra ...string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", compilerVersion(), strings.Join(CFlags, " "), strings.Join(extra, " "))
	for _, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", src, err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(src), len(data))
		h.Write(data)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	name := strings.TrimSuffix(filepath.Base(srcs[0]), ".c")
	dir := filepath.Join(cache, kind, hex.EncodeToString(h.Sum(nil))[:20])
	out := filepath.Join(dir, name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("temp file: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := append(append([]string{}, CFlags...), extra...)
	args = append(args, "-o", tmp.Name())
	args = append(args, srcs...)
	cmd := exec.Command("gcc", args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", fmt.Errorf("install %s: %w", out, err)
	}
	return out, nil
}
