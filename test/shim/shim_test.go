package shim_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	taskapi "github.com/containerd/containerd/api/runtime/task/v2"
	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/types/known/anypb"
)

const runtime = "io.containerd.runsc.v1"

// TestShim runs busybox containers through containerd and the shim.
func TestShim(t *testing.T) {
	daemons(t, func(t *testing.T, d daemon) { testShim(t, startEnv(t, d)) })
}

func testShim(t *testing.T, e *env) {

	t.Run("output and exit status", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			cmd    []string
			stdout string
			stderr string
			status int
		}{
			{"echo", []string{"echo", "hello", "world"}, "hello world\n", "", 0},
			{"stderr and status", []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, "out\n", "err\n", 3},
			{"status 255", []string{"sh", "-c", "exit 255"}, "", "", 255},
			{"true", []string{"true"}, "", "", 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id := "out-" + strings.ReplaceAll(tc.name, " ", "-")
				args := append([]string{"run", "--rm", "--runtime", runtime, imageRef, id}, tc.cmd...)
				stdout, stderr, status := e.ctrRun(t, args...)
				if stdout != tc.stdout || status != tc.status || !strings.Contains(stderr, tc.stderr) {
					t.Errorf("ctr run %q: stdout %q, stderr %q, status %d; want %q, %q, %d",
						tc.cmd, stdout, stderr, status, tc.stdout, tc.stderr, tc.status)
				}
				e.waitEvents(t, id, []string{"/tasks/create", "/tasks/start", "/tasks/exit", "/tasks/delete"})
			})
		}
	})

	t.Run("stdin", func(t *testing.T) {
		cmd := exec.Command(e.d.ctr, "-a", e.sock, "-n", e.ns, "run", "--rm", "--runtime", runtime, imageRef, "stdin1", "wc", "-c")
		cmd.Stdin = strings.NewReader("twelve bytes")
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != "12" {
			t.Errorf("wc -c of stdin: %q, %v; want 12", out, err)
		}
	})

	t.Run("exec", func(t *testing.T) {
		id := "exec1"
		e.mustCtr(t, "run", "-d", "--runtime", runtime, imageRef, id, "sleep", "1000")
		defer e.remove(t, id)
		stdout, _, status := e.ctrRun(t, "task", "exec", "--exec-id", "x1", id, "sh", "-c", "echo in-exec; exit 4")
		if stdout != "in-exec\n" || status != 4 {
			t.Errorf("task exec: stdout %q status %d; want %q 4", stdout, status, "in-exec\n")
		}
		// The exec sees init's processes.
		stdout, _, status = e.ctrRun(t, "task", "exec", "--exec-id", "x2", id, "ps")
		if status != 0 || !strings.Contains(stdout, "sleep 1000") {
			t.Errorf("ps in exec: status %d, output %q: want sleep 1000 listed", status, stdout)
		}
		e.waitEvents(t, id, []string{"/tasks/create", "/tasks/start",
			"/tasks/exec-added", "/tasks/exec-started", "/tasks/exit", "/tasks/delete",
			"/tasks/exec-added", "/tasks/exec-started", "/tasks/exit", "/tasks/delete"})
		if out := e.mustCtr(t, "task", "ps", id); !strings.Contains(out, "PID") {
			t.Errorf("task ps: %q", out)
		}
	})

	t.Run("kill", func(t *testing.T) {
		// Init, the PID namespace's init, gets from outside only SIGKILL,
		// SIGSTOP and the signals it handles or blocks (as with runc on
		// Linux): TERM goes to an init that traps it; "TERM ignored"
		// checks that a plain sleep survives it (then KILL ends it).
		for _, tc := range []struct {
			name    string
			signals []string
			args    []string
			status  string
		}{
			{"TERM", []string{"TERM"}, []string{"sh", "-c", "trap 'exit 143' TERM; sleep 1000 & wait"}, "143"},
			{"TERM ignored", []string{"TERM", "KILL"}, []string{"sleep", "1000"}, "137"},
			{"KILL", []string{"KILL"}, []string{"sleep", "1000"}, "137"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id := "kill-" + strings.ReplaceAll(strings.ToLower(tc.name), " ", "-")
				e.mustCtr(t, append([]string{"run", "-d", "--runtime", runtime, imageRef, id}, tc.args...)...)
				for i, sig := range tc.signals {
					// Time for sh to set its trap, or for the earlier
					// signal to act: it must have left init running.
					time.Sleep(300 * time.Millisecond)
					if i > 0 {
						if out := e.mustCtr(t, "task", "ls"); !hasTask(out, id, "RUNNING") {
							t.Fatalf("after SIG%s: task ls %q, want %s running", tc.signals[i-1], out, id)
						}
					}
					e.mustCtr(t, "task", "kill", "-s", sig, id)
				}
				e.waitStatus(t, id, "STOPPED")
				out := e.mustCtr(t, "task", "delete", id)
				if !strings.Contains(out, tc.status) {
					t.Errorf("task delete after %v: %q, want status %s", tc.signals, out, tc.status)
				}
				e.mustCtr(t, "container", "rm", id)
				e.waitEvents(t, id, []string{"/tasks/create", "/tasks/start", "/tasks/exit", "/tasks/delete"})
			})
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		id := "pause1"
		logFile := filepath.Join(e.dir, "pause1.log")
		e.mustCtr(t, "run", "-d", "--log-uri", "file://"+logFile, "--runtime", runtime, imageRef, id,
			"sh", "-c", "while true; do echo tick; sleep 0.1; done")
		defer e.remove(t, id)
		lines := func() int {
			data, _ := os.ReadFile(logFile)
			return strings.Count(string(data), "tick")
		}
		waitFor(t, "the first ticks", func() bool { return lines() >= 2 })
		e.mustCtr(t, "task", "pause", id)
		e.waitStatus(t, id, "PAUSED")
		time.Sleep(200 * time.Millisecond)
		before := lines()
		time.Sleep(700 * time.Millisecond)
		if after := lines(); after != before {
			t.Errorf("ticks went from %d to %d while paused", before, after)
		}
		e.mustCtr(t, "task", "resume", id)
		e.waitStatus(t, id, "RUNNING")
		waitFor(t, "ticks after resume", func() bool { return lines() > before+2 })
		e.waitEvents(t, id, []string{"/tasks/create", "/tasks/start", "/tasks/paused", "/tasks/resumed"})
	})

	t.Run("metrics", func(t *testing.T) {
		id := "metrics1"
		e.mustCtr(t, "run", "-d", "--runtime", runtime, imageRef, id, "sleep", "1000")
		defer e.remove(t, id)
		out := e.mustCtr(t, "task", "metrics", id)
		for _, want := range []string{"pids.current", "memory.usage_in_bytes", "cpuacct.usage"} {
			if !strings.Contains(out, want) {
				t.Errorf("task metrics lacks %s:\n%s", want, out)
			}
		}
	})

	t.Run("terminal", func(t *testing.T) {
		if _, err := exec.LookPath("script"); err != nil {
			t.Skip("no script(1) to give ctr a terminal")
		}
		// ctr run -t needs a terminal of its own: script gives it one.
		ctrCmd := e.d.ctr + " -a " + e.sock + " -n " + e.ns + " run -t --rm --runtime " + runtime + " " + imageRef +
			" tty1 sh -c 'echo on-tty; exit 6'"
		cmd := exec.Command("script", "-qec", ctrCmd, "/dev/null")
		cmd.Stdin = nil
		out, err := cmd.Output()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		}
		// The container's pty turns "\n" into "\r\n" (and script's own
		// pty may add another "\r").
		if !strings.Contains(string(out), "on-tty\r") || status != 6 {
			t.Errorf("ctr run -t: output %q, status %d (%v); want on-tty, 6", out, status, err)
		}
	})

	t.Run("exec with terminal", func(t *testing.T) {
		if _, err := exec.LookPath("script"); err != nil {
			t.Skip("no script(1) to give ctr a terminal")
		}
		id := "ttyexec1"
		e.mustCtr(t, "run", "-d", "--runtime", runtime, imageRef, id, "sleep", "1000")
		defer e.remove(t, id)
		ctrCmd := e.d.ctr + " -a " + e.sock + " -n " + e.ns + " task exec -t --exec-id tx1 " + id + " sh -c 'echo exec-tty; exit 9'"
		out, err := exec.Command("script", "-qec", ctrCmd, "/dev/null").Output()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		}
		if !strings.Contains(string(out), "exec-tty\r") || status != 9 {
			t.Errorf("ctr task exec -t: output %q, status %d (%v); want exec-tty, 9", out, status, err)
		}
	})

	t.Run("update", func(t *testing.T) {
		id := "update1"
		e.mustCtr(t, "run", "-d", "--runtime", runtime, imageRef, id, "sleep", "1000")
		defer e.remove(t, id)
		// ctr 1.6 has no task update: call the shim itself.
		client := e.shimClient(t, id)
		res := &anypb.Any{
			TypeUrl: "types.containerd.io/opencontainers/runtime-spec/1/LinuxResources",
			Value:   []byte(`{"pids":{"limit":77}}`),
		}
		if _, err := client.Update(t.Context(), &taskapi.UpdateTaskRequest{ID: id, Resources: res}); err != nil {
			t.Fatalf("Update: %v", err)
		}
		out := e.mustCtr(t, "task", "metrics", id)
		if !regexp.MustCompile(`pids\.limit\s+77\b`).MatchString(out) {
			t.Errorf("after Update, metrics do not show the pids limit 77:\n%s", out)
		}
	})

	t.Run("binary log", func(t *testing.T) {
		logger := filepath.Join(e.dir, "logger.sh")
		outFile := filepath.Join(e.dir, "binary.out")
		// Close the ready descriptor (5) first, so the readers do not
		// inherit it.
		script := "#!/bin/sh\nexec 5>&-\ncat <&3 > " + outFile + ".tmp &\ncat <&4 > /dev/null &\nwait\nmv " + outFile + ".tmp " + outFile + "\n"
		if err := os.WriteFile(logger, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		_, _, status := e.ctrRun(t, "run", "--rm", "--log-uri", "binary://"+logger, "--runtime", runtime, imageRef, "binlog1", "echo", "via-binary")
		if status != 0 {
			t.Fatalf("status %d", status)
		}
		var data []byte
		waitFor(t, "the logging binary's file", func() bool {
			var err error
			data, err = os.ReadFile(outFile)
			return err == nil
		})
		if string(data) != "via-binary\n" {
			t.Errorf("logging binary got %q", data)
		}
	})

	t.Run("absolute runtime path", func(t *testing.T) {
		stdout, stderr, status := e.ctrRun(t, "run", "--rm", "--runtime", e.shimBin, imageRef, "abs1", "echo", "by-path")
		if stdout != "by-path\n" || status != 0 {
			t.Errorf("stdout %q, stderr %q, status %d", stdout, stderr, status)
		}
	})

	t.Run("runsc config", func(t *testing.T) {
		logDir := filepath.Join(e.dir, "runsc-debug") + "/"
		conf := filepath.Join(e.dir, "runsc.toml")
		data := "# runsc.toml\n[runsc_config]\n  debug = \"true\"\n  debug-log = \"" + logDir + "\"\n"
		if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, status := e.ctrRun(t, "run", "--rm", "--runtime", runtime, "--runtime-config-path", conf, imageRef, "conf1", "echo", "configured")
		if stdout != "configured\n" || status != 0 {
			t.Fatalf("stdout %q, stderr %q, status %d", stdout, stderr, status)
		}
		logs, _ := filepath.Glob(filepath.Join(logDir, "runsc.*.create.log"))
		if len(logs) == 0 {
			t.Errorf("no runsc debug log in %s: the config's flags were not passed", logDir)
		}
	})

	t.Run("dead shim cleaned up", func(t *testing.T) {
		id := "dead1"
		e.mustCtr(t, "run", "-d", "--runtime", runtime, imageRef, id, "sleep", "1000")
		data, err := os.ReadFile(filepath.Join(e.bundle(id), "shim.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// containerd notices the hang-up and runs the shim's delete.
		waitFor(t, "containerd to drop the task", func() bool {
			out, _ := e.ctr(t.Context(), "task", "ls", "-q")
			return !strings.Contains(string(out), id)
		})
		e.mustCtr(t, "container", "rm", id)
		e.checkClean(t)
	})

	t.Run("error", func(t *testing.T) {
		_, stderr, status := e.ctrRun(t, "run", "--rm", "--runtime", runtime, imageRef, "err1", "/no/such/program")
		if status == 0 || !strings.Contains(stderr, "no/such/program") {
			t.Errorf("running a missing program: status %d, stderr %q", status, stderr)
		}
		e.checkClean(t)
	})
}

// shimClient connects to the shim serving container id.
func (e *env) shimClient(t *testing.T, id string) taskapi.TTRPCTaskService {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.bundle(id), "address"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", strings.TrimPrefix(string(data), "unix://"))
	if err != nil {
		t.Fatal(err)
	}
	c := ttrpc.NewClient(conn)
	t.Cleanup(func() { c.Close() })
	return taskapi.NewTTRPCTaskClient(c)
}

// remove kills and deletes container id.
func (e *env) remove(t *testing.T, id string) {
	t.Helper()
	e.ctr(t.Context(), "task", "kill", "-s", "KILL", id)
	waitFor(t, id+" to stop", func() bool {
		out, _ := e.ctr(t.Context(), "task", "ls")
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == id {
				return f[2] == "STOPPED"
			}
		}
		return true
	})
	e.ctr(t.Context(), "task", "delete", id)
	e.ctr(t.Context(), "container", "rm", id)
}

// waitStatus waits for container id's task to show status.
func (e *env) waitStatus(t *testing.T, id, status string) {
	t.Helper()
	waitFor(t, id+" to be "+status, func() bool {
		out, _ := e.ctr(t.Context(), "task", "ls")
		return hasTask(string(out), id, status)
	})
}

// hasTask reports whether the output of `ctr task ls` shows task id with
// status.
func hasTask(out, id, status string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == id && f[2] == status {
			return true
		}
	}
	return false
}

// waitFor polls cond for up to 15 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
