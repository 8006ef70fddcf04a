package shim_test

import (
	"os"
	"strings"
	"testing"
)

// TestShimOOM runs a program that allocates past the container's memory
// limit: the sandbox is killed, the shim publishes /tasks/oom before the
// exit, and the task's status is 137.
func TestShimOOM(t *testing.T) {
	// ctr sets no swap limit: with swap, the allocation would be swapped
	// out rather than killed.
	if swaps, err := os.ReadFile("/proc/swaps"); err == nil && strings.Count(strings.TrimSpace(string(swaps)), "\n") > 0 {
		t.Skip("the host has swap: a memory limit without a swap limit swaps rather than kills")
	}
	daemons(t, func(t *testing.T, d daemon) {
		e := startEnv(t, d)
		const id = "oom1"
		// dd's buffer is one block: 256 MiB, touched as /dev/zero fills
		// it, against a 64 MiB limit.
		stdout, stderr, status := e.ctrRun(t, "run", "--rm", "--memory-limit", "67108864", "--runtime", runtime, imageRef, id,
			"busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1")
		if status != 137 {
			t.Errorf("status %d (stdout %q, stderr %q), want 137", status, stdout, stderr)
		}
		e.waitEvents(t, id, []string{"/tasks/create", "/tasks/start", "/tasks/oom", "/tasks/exit", "/tasks/delete"})
	})
}
