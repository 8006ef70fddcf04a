package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

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
