package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/runsc/internal/runsctest"
)

// These tests run the runsc binary's OCI commands as a caller such as
// containerd does, checking outputs and exit statuses.

func runscBin(t *testing.T) string {
	t.Helper()
	return runsctest.Binary(t)
}

// ociEnv is a state root and a busybox bundle.
type ociEnv struct {
	t      *testing.T
	bin    string
	root   string
	bundle string
}

func newOCIEnv(t *testing.T) *ociEnv {
	t.Helper()
	e := &ociEnv{t: t, bin: runscBin(t), root: t.TempDir(), bundle: t.TempDir()}
	rootfs := filepath.Join(e.bundle, "rootfs")
	for _, d := range []string{"bin", "proc", "dev", "tmp"} {
		os.MkdirAll(filepath.Join(rootfs, d), 0o755)
	}
	b, _ := os.ReadFile("/bin/busybox")
	os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), b, 0o755)
	for _, app := range []string{"sh", "sleep", "echo", "true"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", app))
	}
	if code, _, stderr := e.run("spec", "--bundle", e.bundle); code != 0 {
		t.Fatalf("runsc spec: %d\n%s", code, stderr)
	}
	t.Cleanup(func() {
		e.run("delete", "--force", "a", "b", "c")
	})
	return e
}

// setArgs rewrites the bundle's process.args.
func (e *ociEnv) setArgs(args ...string) {
	e.t.Helper()
	path := filepath.Join(e.bundle, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		e.t.Fatal(err)
	}
	s.Process.Args = args
	s.Process.Terminal = false
	b, _ = json.Marshal(&s)
	os.WriteFile(path, b, 0o644)
}

// run runs runsc --root ROOT args with files for its stdio (a container
// keeps them open), and returns its status, stdout and stderr.
func (e *ociEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	dir := e.t.TempDir()
	stdout, _ := os.Create(filepath.Join(dir, "stdout"))
	stderr, _ := os.Create(filepath.Join(dir, "stderr"))
	defer stdout.Close()
	defer stderr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, append([]string{"--root", e.root}, args...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatalf("runsc %q: %v", args, err)
	}
	o, _ := os.ReadFile(stdout.Name())
	s, _ := os.ReadFile(stderr.Name())
	return cmd.ProcessState.ExitCode(), string(o), string(s)
}

func (e *ociEnv) mustRun(args ...string) string {
	e.t.Helper()
	code, stdout, stderr := e.run(args...)
	if code != 0 {
		e.t.Fatalf("runsc %q: status %d\n%s", args, code, stderr)
	}
	return stdout
}

func (e *ociEnv) state(id string) specs.State {
	e.t.Helper()
	var st specs.State
	if err := json.Unmarshal([]byte(e.mustRun("state", id)), &st); err != nil {
		e.t.Fatal(err)
	}
	return st
}

func TestOCIRun(t *testing.T) {
	e := newOCIEnv(t)
	e.setArgs("sh", "-c", "echo hello; exit 42")
	code, stdout, stderr := e.run("run", "--no-pivot", "--no-new-keyring", "--no-subreaper", "--preserve-fds=0", "--bundle", e.bundle, "a")
	if code != 42 || stdout != "hello\n" {
		t.Errorf("run: status %d, stdout %q, want 42 and hello; stderr:\n%s", code, stdout, stderr)
	}
	if ents, _ := os.ReadDir(e.root); len(ents) != 0 {
		t.Errorf("run left %d state entries", len(ents))
	}
}

func TestOCICommands(t *testing.T) {
	e := newOCIEnv(t)
	e.setArgs("sh", "-c", `trap "exit 9" USR1; echo up; while :; do sleep 0.1; done`)
	pidFile := filepath.Join(t.TempDir(), "pid")
	e.mustRun("create", "--bundle", e.bundle, "--pid-file", pidFile, "a")
	st := e.state("a")
	if st.Status != specs.StateCreated || st.ID != "a" || st.Bundle != e.bundle {
		t.Errorf("state after create: %+v", st)
	}
	if b, _ := os.ReadFile(pidFile); string(b) != fmt.Sprint(st.Pid) {
		t.Errorf("pid file %q, state pid %d", b, st.Pid)
	}
	e.mustRun("start", "a")
	if st := e.state("a"); st.Status != specs.StateRunning {
		t.Errorf("state after start: %s", st.Status)
	}

	var list []specs.State
	if err := json.Unmarshal([]byte(e.mustRun("list", "--format", "json")), &list); err != nil || len(list) != 1 || list[0].ID != "a" {
		t.Errorf("list json: %+v, %v", list, err)
	}
	if out := e.mustRun("list"); !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "running") {
		t.Errorf("list table:\n%s", out)
	}
	if out := e.mustRun("list", "-q"); out != "a\n" {
		t.Errorf("list -q: %q", out)
	}
	var pids []int
	if err := json.Unmarshal([]byte(e.mustRun("ps", "--format", "json", "--sentry", "a")), &pids); err != nil || len(pids) == 0 || pids[0] != 1 {
		t.Errorf("ps json --sentry: %v, %v", pids, err)
	}
	// Without --sentry, host pids as runc's: the sandbox (the state's
	// pid) and its stub processes, all in the sandbox's PID namespace.
	var sb struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("state", "a")), &sb); err != nil {
		t.Fatal(err)
	}
	pids = nil
	if err := json.Unmarshal([]byte(e.mustRun("ps", "--format", "json", "a")), &pids); err != nil || !slices.Contains(pids, sb.Pid) || len(pids) < 2 {
		t.Errorf("ps json: %v, %v; want the sandbox %d and its stubs", pids, err, sb.Pid)
	}
	sandboxNS, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", sb.Pid))
	for _, pid := range pids {
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && ns != sandboxNS {
			t.Errorf("ps json lists host pid %d, in PID namespace %s, not the sandbox's %s", pid, ns, sandboxNS)
		}
	}
	if out := e.mustRun("ps", "a"); !strings.Contains(out, "PID") || !strings.Contains(out, "sh -c") {
		t.Errorf("ps table:\n%s", out)
	}

	errTests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"start", "a"}, "cannot start an already running container"},
		{[]string{"delete", "a"}, "cannot delete container a that is not stopped: running"},
		{[]string{"state", "nope"}, `container "nope" does not exist`},
		{[]string{"kill", "a", "NOSUCHSIG"}, `unknown signal "NOSUCHSIG"`},
		{[]string{"create", "--bundle", e.bundle, "a"}, "container with id exists: a"},
		{[]string{"state"}, "requires exactly 1 argument"},
		{[]string{"ps", "a", "-ef"}, "ps options ([\"-ef\"]) are not supported"},
		{[]string{"create", "--preserve-fds", "2", "--bundle", e.bundle, "z"}, "--preserve-fds=2 is not supported yet"},
	}
	for _, tc := range errTests {
		code, _, stderr := e.run(tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.wantErr) {
			t.Errorf("runsc %q: status %d, stderr %q; want 1 and %q", tc.args, code, stderr, tc.wantErr)
		}
	}

	e.mustRun("kill", "a", "SIGUSR1")
	var w struct {
		ID         string `json:"id"`
		ExitStatus int    `json:"exitStatus"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("wait", "a")), &w); err != nil || w.ExitStatus != 9 {
		t.Errorf("wait: %+v, %v", w, err)
	}
	if st := e.state("a"); st.Status != specs.StateStopped || st.Pid != 0 {
		t.Errorf("state after exit: %+v", st)
	}
	if code, _, stderr := e.run("events", "--stats", "a"); code != 1 || !strings.Contains(stderr, "container not running") {
		t.Errorf("events of a stopped container: %d %q", code, stderr)
	}
	code, _, stderr := e.run("kill", "a", "KILL")
	if code != 1 || !strings.Contains(stderr, "container not running") {
		t.Errorf("kill stopped: %d %q", code, stderr)
	}
	e.mustRun("delete", "a")
	if code, _, _ := e.run("state", "a"); code != 1 {
		t.Errorf("state after delete: status %d", code)
	}
	// --force ignores containers that do not exist.
	e.mustRun("delete", "--force", "a")
}

func TestOCIRunDetachAndKillAll(t *testing.T) {
	e := newOCIEnv(t)
	e.setArgs("sh", "-c", `sleep 100 & sleep 100 & wait`)
	e.mustRun("run", "--detach", "--bundle", e.bundle, "b")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		json.Unmarshal([]byte(e.mustRun("ps", "--format", "json", "--sentry", "b")), &pids)
		if len(pids) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ps: %v, want 3 processes", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var ev struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Data struct {
			CPU struct {
				Usage struct{ Total uint64 } `json:"usage"`
			} `json:"cpu"`
			Memory struct {
				Usage struct{ Usage, Limit uint64 } `json:"usage"`
			} `json:"memory"`
			Pids struct{ Current int } `json:"pids"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("events", "--stats", "b")), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "stats" || ev.ID != "b" || ev.Data.Pids.Current != 3 || ev.Data.Memory.Usage.Usage == 0 ||
		ev.Data.Memory.Usage.Limit < ev.Data.Memory.Usage.Usage || ev.Data.CPU.Usage.Total == 0 {
		t.Errorf("events --stats: %+v", ev)
	}
	e.mustRun("kill", "--all", "b", "9")
	var w struct{ ExitStatus int }
	json.Unmarshal([]byte(e.mustRun("wait", "b")), &w)
	if w.ExitStatus != 128+9 {
		t.Errorf("exit status %d, want 137", w.ExitStatus)
	}
	e.mustRun("delete", "b")
}

func TestOCISpecAndFeatures(t *testing.T) {
	e := newOCIEnv(t)
	// spec refuses to overwrite.
	code, _, stderr := e.run("spec", "--bundle", e.bundle)
	if code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("second spec: %d %q", code, stderr)
	}
	dir := t.TempDir()
	e.mustRun("spec", "--rootless", "--bundle", dir)
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	var s specs.Spec
	if err := json.Unmarshal(b, &s); err != nil || len(s.Linux.UIDMappings) != 1 {
		t.Errorf("rootless spec: %v, %+v", err, s.Linux)
	}
	var f features.Features
	if err := json.Unmarshal([]byte(e.mustRun("features")), &f); err != nil || f.OCIVersionMax != "1.3.0" || len(f.Linux.Capabilities) == 0 || len(f.Hooks) != 6 {
		t.Errorf("features: %+v, %v", f, err)
	}
	if !bytes.Contains(b, []byte(`"ociVersion": "1.3.0"`)) {
		t.Errorf("spec's version:\n%s", b)
	}
}

// TestOCICreateKilled: a runsc create killed before it is done (here by
// its createRuntime hook) leaves a container that state calls stopped and
// delete removes with its sandbox and gofer.
func TestOCICreateKilled(t *testing.T) {
	e := newOCIEnv(t)
	e.setArgs("true")
	path := filepath.Join(e.bundle, "config.json")
	b, _ := os.ReadFile(path)
	var s specs.Spec
	json.Unmarshal(b, &s)
	s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", "kill -9 $PPID"}}}}
	b, _ = json.Marshal(&s)
	os.WriteFile(path, b, 0o644)

	if code, _, _ := e.run("create", "--bundle", e.bundle, "c"); code != 128+9 && code != -1 {
		t.Fatalf("create: status %d, want it killed", code)
	}
	var rec struct {
		Sandbox struct{ Pid int } `json:"sandbox"`
		Gofer   struct{ Pid int } `json:"gofer"`
	}
	b, err := os.ReadFile(filepath.Join(e.root, "c", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &rec)
	if rec.Sandbox.Pid <= 0 || rec.Gofer.Pid <= 0 {
		t.Fatalf("state.json records no processes: %s", b)
	}
	if st := e.state("c"); st.Status != specs.StateStopped {
		t.Errorf("state %s, want stopped", st.Status)
	}
	e.mustRun("delete", "c")
	if _, err := os.Stat(filepath.Join(e.root, "c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory left: %v", err)
	}
	for _, pid := range []int{rec.Sandbox.Pid, rec.Gofer.Pid} {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(b), ") Z") {
			t.Errorf("pid %d still running: %s", pid, b)
		}
	}
}

// TestOCIRunTerminal: a foreground run of a process asking for a
// terminal, without a console socket, gives it runsc's own terminal.
func TestOCIRunTerminal(t *testing.T) {
	e := newOCIEnv(t)
	e.setArgs("sh", "-c", `[ -t 0 ] && echo on a tty; read l; echo "got $l"; exit 5`)
	path := filepath.Join(e.bundle, "config.json")
	b, _ := os.ReadFile(path)
	var s specs.Spec
	json.Unmarshal(b, &s)
	s.Process.Terminal = true
	b, _ = json.Marshal(&s)
	os.WriteFile(path, b, 0o644)

	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip(err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	cmd := exec.Command(e.bin, "--root", e.root, "run", "--bundle", e.bundle, "a")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = replica, replica, replica
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var out []byte
	buf := make([]byte, 1024)
	deadline := time.Now().Add(30 * time.Second)
	wrote := false
	for !strings.Contains(string(out), "got hi") && time.Now().Before(deadline) {
		if !wrote && strings.Contains(string(out), "on a tty") {
			master.Write([]byte("hi\n"))
			wrote = true
		}
		master.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, _ := master.Read(buf)
		out = append(out, buf[:n]...)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run did not exit; output %q", out)
	}
	if !strings.Contains(string(out), "got hi") || cmd.ProcessState.ExitCode() != 5 {
		t.Errorf("output %q, status %d; want \"got hi\" and 5", out, cmd.ProcessState.ExitCode())
	}
}
