package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/runsc/config"
)

// TestWaitCmd checks that waitCmd waits for the child's exit and reports
// it as cmd.Wait does: exit status, death by signal, success.
func TestWaitCmd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		code   int            // exit status, or -1
		signal syscall.Signal // when killed
	}{
		{"success after a while", "sleep 0.1", 0, 0},
		{"exit status", "exit 3", 3, 0},
		{"killed", "kill -9 $$", -1, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			err := waitCmd(cmd)
			if cmd.ProcessState == nil {
				t.Fatalf("waitCmd: %v, and no ProcessState", err)
			}
			if tc.code == 0 && tc.signal == 0 {
				if err != nil {
					t.Fatalf("waitCmd: %v", err)
				}
				if d := time.Since(start); d < 100*time.Millisecond {
					t.Errorf("returned after %v, before the child's exit", d)
				}
				return
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("waitCmd: %v, want an exit error", err)
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal) {
				t.Errorf("status %v, want death by %v", ws, tc.signal)
			}
			if tc.code >= 0 && ws.ExitStatus() != tc.code {
				t.Errorf("exit status %d, want %d", ws.ExitStatus(), tc.code)
			}
		})
	}
}

// TestGoferCommand checks that a gofer starts with one P and is told
// runsc's GOMAXPROCS for once it is confined.
func TestGoferCommand(t *testing.T) {
	cmd := goferCommand("/proc/self/exe", config.Default(), "/", 3, nil)
	if cmd.Args[0] != "runsc-gofer" {
		t.Errorf("name %q, want runsc-gofer", cmd.Args[0])
	}
	if !slices.Contains(cmd.Env, "GOMAXPROCS=1") || cmd.Env[len(cmd.Env)-1] != "GOMAXPROCS=1" {
		t.Errorf("environment does not end with GOMAXPROCS=1: %q", cmd.Env)
	}
	i := slices.Index(cmd.Args, "--gomaxprocs")
	g := slices.Index(cmd.Args, "gofer")
	if i < 0 || g < 0 || i < g || i+1 >= len(cmd.Args) || cmd.Args[i+1] != strconv.Itoa(runtime.GOMAXPROCS(0)) {
		t.Errorf("arguments %q lack gofer's --gomaxprocs %d", cmd.Args, runtime.GOMAXPROCS(0))
	}
}

// TestGoferStartCaps checks which gofers confine themselves, and that one
// that does not starts with only the capabilities it keeps.
func TestGoferStartCaps(t *testing.T) {
	dir := t.TempDir()
	toRoot := filepath.Join(dir, "root")
	if err := os.Symlink("/", toRoot); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root  string
		binds []gofer.Mount
		want  bool
	}{
		{"/", nil, false},
		{toRoot, nil, false},
		{dir, nil, true},
		{"/", []gofer.Mount{{Path: dir}}, true},
		{filepath.Join(dir, "missing"), nil, true},
	} {
		if got := goferConfines(tc.root, tc.binds); got != tc.want {
			t.Errorf("goferConfines(%q, %d binds) = %v, want %v", tc.root, len(tc.binds), got, tc.want)
		}
	}
	has := func(caps []uintptr, c uintptr) bool { return slices.Contains(caps, c) }
	for _, writable := range []bool{false, true} {
		plain, confining := goferStartCaps(writable, false), goferStartCaps(writable, true)
		for _, c := range []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SYS_PTRACE, unix.CAP_SETPCAP} {
			if has(plain, c) || !has(confining, c) {
				t.Errorf("writable %v: capability %d: without confinement %v, with %v", writable, c, plain, confining)
			}
		}
		for _, c := range goferCaps {
			if !has(plain, c) || !has(confining, c) {
				t.Errorf("writable %v: kept capability %d missing: %v, %v", writable, c, plain, confining)
			}
		}
		if has(plain, unix.CAP_CHOWN) != writable {
			t.Errorf("writable %v: CAP_CHOWN in %v", writable, plain)
		}
	}
}
