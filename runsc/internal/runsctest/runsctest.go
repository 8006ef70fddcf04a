// Package runsctest holds runsc's test helpers: it builds the runsc binary
// once per test process, for tests that drive it as its callers do, and
// reads the test process's own mappings (smaps.go), for tests of how
// runsc uses its memory.
package runsctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	path string
	err  error
)

// Binary returns a runsc built (pure Go, as runsc must be) for this test
// process. It skips t unless it runs as root with /bin/busybox, which the
// tests' containers use.
func Binary(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no /bin/busybox")
	}
	once.Do(func() {
		dir, e := os.MkdirTemp("", "moat-runsc-")
		if e != nil {
			err = e
			return
		}
		path = filepath.Join(dir, "runsc")
		cmd := exec.Command("go", "build", "-o", path, "github.com/moat-sandbox/moat/runsc")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, e := cmd.CombinedOutput(); e != nil {
			err = fmt.Errorf("building runsc: %v\n%s", e, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}
