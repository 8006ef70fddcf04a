// Package fuzz runs tools/syscallfuzz, the random-syscall fuzzer, inside a
// sandbox for a short while and checks that the sandbox survived it: the
// run ends normally, the Sentry's debug log has no panic, the sandbox's
// memory stayed bounded, and a host directory the fuzzer was pointed at is
// unchanged.
//
//	go test ./test/fuzz                                # 20 s, seed 1
//	MOAT_FUZZ_SECONDS=600 MOAT_FUZZ_SEED=7 go test ./test/fuzz -timeout 20m -v
//
// The long run by hand, without Go (see tools/syscallfuzz/README.md):
//
//	gcc -static -O1 -o /tmp/syscallfuzz tools/syscallfuzz/syscallfuzz.c
//	runsc --debug --debug-log=/tmp/fuzzlog/ do -- /tmp/syscallfuzz -seed 7 -time 3600
package fuzz

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// snapshot describes every file under dir: path, mode, size, mtime and a
// hash of the content or the link target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// makeCanary fills dir with files, a subdirectory and a symlink for the
// fuzzer to aim at.
func makeCanary(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	for i, content := range []string{"canary one\n", strings.Repeat("x", 10000), ""} {
		p := filepath.Join(dir, fmt.Sprintf("file%d", i))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "inner"), []byte("inner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file0", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return append(paths, sub, filepath.Join(sub, "inner"), filepath.Join(dir, "link"), filepath.Join(dir, "new"))
}

// treeRSS returns the summed resident set (KiB) of pid and its descendants.
func treeRSS(pid int) int64 {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var total int64
	var walk func(int)
	walk = func(p int) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "VmRSS:") {
					f := strings.Fields(line)
					if len(f) >= 2 {
						v, _ := strconv.ParseInt(f[1], 10, 64)
						total += v
					}
				}
			}
		}
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return total
}

var panicRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[running\]|SIGSEGV: segmentation violation)`)

func TestFuzzInSandbox(t *testing.T) {
	runsc := harness.RequireRunsc(t)
	repo, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := harness.BuildC("fuzz", []string{filepath.Join(repo, "tools/syscallfuzz/syscallfuzz.c")})
	if err != nil {
		t.Fatal(err)
	}
	seconds := envInt("MOAT_FUZZ_SECONDS", 20)
	seed := envInt("MOAT_FUZZ_SEED", 1)
	maxRSSMiB := int64(envInt("MOAT_FUZZ_MAX_RSS_MIB", 1536))

	canary := t.TempDir()
	targets := makeCanary(t, canary)
	before := snapshot(t, canary)
	logDir := t.TempDir()

	args := []string{"--debug", "--debug-log=" + logDir + "/", "do", "--rootfs", "/", "--",
		bin, "-seed", strconv.Itoa(seed), "-time", strconv.Itoa(seconds), "-report", "5"}
	for _, p := range targets {
		args = append(args, "-path", p)
	}
	cmd := exec.Command(runsc, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	limit := time.Duration(seconds)*time.Second + 60*time.Second
	timeout := time.After(limit)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var maxRSS, firstRSS int64
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-tick.C:
			rss := treeRSS(cmd.Process.Pid)
			if firstRSS == 0 && rss > 0 {
				firstRSS = rss
			}
			maxRSS = max(maxRSS, rss)
		case <-timeout:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("the sandbox did not finish within %v (hang)\nstdout:\n%s\nstderr:\n%s", limit, stdout.String(), tail(stderr.String(), 3000))
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	t.Logf("stdout:\n%s", stdout.String())
	t.Logf("sandbox RSS: first sample %d MiB, max %d MiB", firstRSS/1024, maxRSS/1024)

	if waitErr != nil {
		t.Errorf("runsc do exited with %v, want success\nstderr:\n%s", waitErr, tail(stderr.String(), 3000))
	}
	if !regexp.MustCompile(`(?m)^syscallfuzz: done seed \d+ syscalls [1-9]\d*`).Match(stdout.Bytes()) {
		t.Errorf("the fuzzer did not report a finished run")
	}
	logs, _ := filepath.Glob(filepath.Join(logDir, "*"))
	if len(logs) == 0 {
		t.Errorf("no debug logs in %s", logDir)
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Error(err)
			continue
		}
		if loc := panicRE.FindIndex(b); loc != nil {
			start := max(0, loc[0]-500)
			end := min(len(b), loc[1]+3000)
			t.Errorf("%s shows a Go panic or crash:\n%s", filepath.Base(l), b[start:end])
		}
	}
	if maxRSS/1024 > maxRSSMiB {
		t.Errorf("the sandbox's resident memory reached %d MiB, above the %d MiB bound (MOAT_FUZZ_MAX_RSS_MIB)", maxRSS/1024, maxRSSMiB)
	}
	after := snapshot(t, canary)
	for p, d := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("host canary %s vanished", p)
		} else if a != d {
			t.Errorf("host canary %s changed: %s -> %s", p, d, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("host canary directory gained %s", p)
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
