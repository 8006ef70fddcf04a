package shim_test

import (
	"os"
	"testing"
)

// TestMakeImage writes the test image to $MOAT_SHIM_IMAGE_OUT, for
// trying the shim by hand; skipped without it.
func TestMakeImage(t *testing.T) {
	out := os.Getenv("MOAT_SHIM_IMAGE_OUT")
	if out == "" {
		t.Skip("set MOAT_SHIM_IMAGE_OUT to write the busybox image archive")
	}
	if err := buildBusyboxArchive(out, "/bin/busybox", "docker.io/library/busybox:moat"); err != nil {
		t.Fatal(err)
	}
}
