package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// TestMmapSharedWriteback runs testdata/mmap_shared.c, which writes a
// file through a MAP_SHARED mapping, natively and sandboxed, and checks
// what reached the host: with --overlay=none and through a --volume bind
// mount, the mapped writes (msync'd, munmapped, or still mapped at exit);
// under the default overlay, nothing (the files are the overlay's, copied
// up when they existed).
func TestMmapSharedWriteback(t *testing.T) {
	repo, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := harness.BuildC("e2e", []string{filepath.Join(repo, "test/e2e/testdata/mmap_shared.c")})
	if err != nil {
		t.Fatal(err)
	}
	wantA := bytes.Repeat([]byte("a"), 3*4096)
	copy(wantA[10:], "MAPPED")
	copy(wantA[100:], "AFTERSYNC")
	copy(wantA[4096+5:], "WRITTEN")
	copy(wantA[2*4096:], "CHILD")
	wantB := make([]byte, 4096)
	copy(wantB, "EXITDATA")
	checkHost := func(t *testing.T, dir string) {
		t.Helper()
		for name, want := range map[string][]byte{"a": wantA, "b": wantB} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("host file %s: %v", name, err)
				continue
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("host file %s differs at byte %d (len %d, want %d)", name, i, len(got), len(want))
			}
		}
	}
	run := func(t *testing.T, argv ...string) {
		t.Helper()
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), "done\n") {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}

	t.Run("native", func(t *testing.T) {
		dir := t.TempDir()
		run(t, prog, dir)
		checkHost(t, dir)
	})
	if harness.NativeOnly() {
		return
	}
	runsc := harness.RequireRunsc(t)
	t.Run("overlay_none", func(t *testing.T) {
		dir := t.TempDir()
		run(t, runsc, "--overlay=none", "do", "--", prog, dir)
		checkHost(t, dir)
	})
	t.Run("volume", func(t *testing.T) {
		dir := t.TempDir()
		run(t, runsc, "do", "--volume", dir+":/mnt/v", "--", prog, "/mnt/v")
		checkHost(t, dir)
	})
	t.Run("overlay", func(t *testing.T) {
		// a exists on the host (copied up when opened for writing), b
		// does not: neither changes there.
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a"), []byte("host"), 0o644)
		run(t, runsc, "do", "--", prog, dir)
		if got, _ := os.ReadFile(filepath.Join(dir, "a")); string(got) != "host" {
			t.Errorf("host file a changed under the overlay: %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
			t.Error("host has b, made under the overlay")
		}
	})
}
