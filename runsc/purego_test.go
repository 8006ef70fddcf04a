package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPureGo keeps runsc free of cgo: its security calls (no_new_privs,
// capabilities, seccomp) must reach every thread, which Go does only in
// binaries without cgo, so a plain `go build ./runsc` must stay pure Go.
func TestPureGo(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}", ".")
	// What a plain build would link, whatever this test runs with.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if pkgs := strings.TrimSpace(string(out)); pkgs != "" {
		t.Errorf("runsc links packages with cgo (use pure-Go replacements):\n%s", pkgs)
	}
}
