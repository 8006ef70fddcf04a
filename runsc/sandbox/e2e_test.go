package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests in this file run the real runsc binary (`runsc do`), Sentry
// included. They need runsc/boot; until it exists they are skipped. Once
// it exists a build failure fails them.

var (
	runscOnce sync.Once
	runscPath string
	runscErr  error
)

func buildRunsc(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("../boot"); errors.Is(err, os.ErrNotExist) {
		t.Skip("runsc/boot does not exist yet")
	}
	skipUnlessConfinable(t)
	runscOnce.Do(func() {
		dir, err := os.MkdirTemp("", "moat-e2e-")
		if err != nil {
			runscErr = err
			return
		}
		runscPath = filepath.Join(dir, "runsc")
		cmd := exec.Command("go", "build", "-o", runscPath, "github.com/moat-sandbox/moat/runsc")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			runscErr = errors.New("building runsc: " + err.Error() + "\n" + string(out))
		}
	})
	if runscErr != nil {
		t.Fatal(runscErr)
	}
	return runscPath
}

// e2eTimeout bounds one runsc run; killing runsc kills its children.
const e2eTimeout = 60 * time.Second

// runsc runs the binary with args and returns its status, stdout, stderr.
func runsc(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildRunsc(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("runsc %q did not finish in %v; stdout %q, stderr:\n%s", args, e2eTimeout, stdout.String(), stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running runsc: %v", err)
	}
	return ExitStatus(cmd.ProcessState), stdout.String(), stderr.String()
}

func hostFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("host has no %s: %v", path, err)
	}
	return string(b)
}

func TestE2EDo(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantStdout string // exact, unless empty
		wantStderr string // substring, unless empty
	}{
		{"true", []string{"do", "true"}, 0, "", ""},
		{"false", []string{"do", "false"}, 1, "", ""},
		{"exit status", []string{"do", "sh", "-c", "exit 3"}, 3, "", ""},
		{"echo", []string{"do", "echo", "hello", "world"}, 0, "hello world\n", ""},
		{"env", []string{"do", "--env", "FOO=bar baz", "sh", "-c", `echo "$FOO"`}, 0, "bar baz\n", ""},
		{"default PATH", []string{"do", "sh", "-c", `echo "$PATH"`}, 0, DefaultPath + "\n", ""},
		{"cwd", []string{"do", "--cwd", "/tmp", "pwd"}, 0, "/tmp\n", ""},
		// The command is the sandbox's init, which (as on Linux) ignores
		// signals it has no handler for unless they are forced, such as a
		// fault: a NULL dereference kills it.
		{"killed by signal", []string{"do", "python3", "-c", "import ctypes; ctypes.string_at(0)"}, 128 + int(unix.SIGSEGV), "", ""},
		{"init ignores unhandled signals", []string{"do", "sh", "-c", "kill -TERM $$; echo alive"}, 0, "alive\n", ""},
		// As shells and docker report a command that is not there.
		{"not found", []string{"do", "no-such-command-moat"}, 127, "", "not found"},
		{"not executable", []string{"do", "/etc/passwd"}, 126, "", "permission denied"},
		{"no user namespace", []string{"do", "--userns=false", "true"}, 0, "", ""},
		{"self-test open killed", []string{"do", "--self-test-open", "true"}, 128 + int(unix.SIGSYS), "", ""},
		{"network host refused", []string{"--network=host", "do", "true"}, 2, "", "only --network=none"},
		{"platform kvm refused", []string{"--platform=kvm", "do", "true"}, 2, "", "only ptrace"},
		{"missing rootfs", []string{"do", "--rootfs", "/nonexistent", "true"}, ExitInternal, "", "root filesystem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, stdout, stderr := runsc(t, tc.args...)
			if status != tc.wantStatus {
				t.Errorf("status %d, want %d; stderr:\n%s", status, tc.wantStatus, stderr)
			}
			if tc.wantStdout != "" && stdout != tc.wantStdout {
				t.Errorf("stdout %q, want %q", stdout, tc.wantStdout)
			}
			if tc.wantStderr != "" && !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.wantStderr)
			}
		})
	}
}

func TestE2EReadsHostFilesThroughGofer(t *testing.T) {
	want := hostFile(t, "/etc/os-release")
	status, stdout, stderr := runsc(t, "do", "cat", "/etc/os-release")
	if status != 0 || stdout != want {
		t.Errorf("status %d, stdout %q, want %q; stderr:\n%s", status, stdout, want, stderr)
	}
}

// TestE2ERootfs runs a static program from a root of its own.
func TestE2ERootfs(t *testing.T) {
	runsc := buildRunsc(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	root := t.TempDir()
	src := filepath.Join(t.TempDir(), "hello.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include <unistd.h>
int main(void) {
	printf("hello from %s\n", access("/etc/passwd", F_OK) == 0 ? "a host root" : "my own root");
	return 0;
}
`), 0o644)
	if out, err := exec.Command("gcc", "-static", "-O2", "-o", filepath.Join(root, "hello"), src).CombinedOutput(); err != nil {
		t.Skipf("cannot build a static program: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, runsc, "do", "--rootfs", root, "/hello").CombinedOutput()
	if err != nil || string(out) != "hello from my own root\n" {
		t.Errorf("runsc do --rootfs: %v, output %q", err, out)
	}
}

func TestE2EForwardsSignals(t *testing.T) {
	cmd := exec.Command(buildRunsc(t), "do", "sh", "-c", `trap "exit 7" TERM; echo ready; while :; do sleep 0.1; done`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("got %q, %v before the signal; stderr:\n%s", line, err, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if s := ExitStatus(cmd.ProcessState); s != 7 {
			t.Errorf("status %d, want 7 (the app's TERM trap); stderr:\n%s", s, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runsc did not exit after SIGTERM")
	}
}

func TestE2EDebugLogs(t *testing.T) {
	dir := t.TempDir()
	status, _, stderr := runsc(t, "--debug", "--strace", "--debug-log", dir, "do", "true")
	if status != 0 {
		t.Fatalf("status %d; stderr:\n%s", status, stderr)
	}
	for _, cmd := range []string{"do", "gofer", "boot"} {
		m, _ := filepath.Glob(filepath.Join(dir, "runsc.*."+cmd+".log"))
		if len(m) != 1 {
			t.Errorf("%d %s logs in %s, want 1", len(m), cmd, dir)
			continue
		}
		if b, _ := os.ReadFile(m[0]); len(b) == 0 {
			t.Errorf("%s is empty", m[0])
		}
	}
}
