package shim_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkCtrRunTrue measures `ctr run --rm` of busybox true with the
// Moat shim and with containerd's runc shim (io.containerd.runc.v2), in the
// same run, and logs the ratio and the Moat shim's resident memory.
func BenchmarkCtrRunTrue(b *testing.B) {
	e := startEnv(b, debianContainerd)
	per := map[string]time.Duration{}
	for _, rt := range []struct{ name, runtime string }{
		{"moat", runtime},
		{"runc", "io.containerd.runc.v2"},
	} {
		b.Run(rt.name, func(b *testing.B) {
			if rt.name == "runc" {
				if _, err := exec.LookPath("runc"); err != nil {
					b.Skip("no runc (Debian package runc)")
				}
			}
			n := 0
			for b.Loop() {
				id := fmt.Sprintf("bench-%s-%d", rt.name, n)
				n++
				if out, err := e.ctr(b.Context(), "run", "--rm", "--runtime", rt.runtime, imageRef, id, "true"); err != nil {
					b.Fatalf("ctr run: %v\n%s", err, out)
				}
			}
			per[rt.name] = b.Elapsed() / time.Duration(n)
		})
	}
	if per["moat"] > 0 && per["runc"] > 0 {
		b.Logf("ctr run --rm true: moat %v, runc %v, ratio %.2f", per["moat"], per["runc"], float64(per["moat"])/float64(per["runc"]))
	}
	// The shim's memory while it serves one container.
	id := "bench-rss"
	if out, err := e.ctr(b.Context(), "run", "-d", "--runtime", runtime, imageRef, id, "sleep", "1000"); err != nil {
		b.Fatalf("ctr run -d: %v\n%s", err, out)
	}
	defer func() {
		e.ctr(b.Context(), "task", "kill", "-s", "KILL", id)
		for i := 0; i < 100; i++ {
			if out, _ := e.ctr(b.Context(), "task", "delete", id); !strings.Contains(string(out), "running") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		e.ctr(b.Context(), "container", "rm", id)
	}()
	pid, err := os.ReadFile(filepath.Join(e.bundle(id), "shim.pid"))
	if err != nil {
		b.Fatal(err)
	}
	status, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "status"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			b.Logf("shim resident memory: %s (target: under 15 MiB)", strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")))
		}
	}
}
