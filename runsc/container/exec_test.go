package container

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// execOut runs p in c with stdout and stderr to a file and returns its
// status and output.
func execOut(t *testing.T, c *Container, p *specs.Process) (int, string, error) {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	devNull, _ := os.Open(os.DevNull)
	defer devNull.Close()
	pid, err := c.Exec(ExecArgs{Process: p, Stdin: devNull, Stdout: out, Stderr: out})
	if err != nil {
		return 0, "", err
	}
	st, err := c.WaitExec(pid, true)
	if err != nil {
		t.Fatalf("wait for %v: %v", p.Args, err)
	}
	b, _ := os.ReadFile(out.Name())
	return st, string(b), nil
}

func proc(args ...string) *specs.Process {
	return &specs.Process{Args: args, Cwd: "/", Env: []string{"PATH=/bin"}}
}

func TestExec(t *testing.T) {
	e := newEnv(t)
	c, _ := e.mustCreate("exec", bundle(t, nil, "sh", "-c", "echo init; sleep 1000"))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		p      *specs.Process
		status int
		want   []string
	}{
		{"echo", proc("echo", "hello"), 0, []string{"hello\n"}},
		{"exit code", proc("sh", "-c", "exit 3"), 3, nil},
		{"killed by a signal", proc("sh", "-c", "kill -9 $$"), 128 + 9, nil},
		{"env and cwd", func() *specs.Process {
			p := proc("sh", "-c", `echo "$FOO"; pwd`)
			p.Env = append(p.Env, "FOO=bar")
			p.Cwd = "/tmp"
			return p
		}(), 0, []string{"bar\n/tmp\n"}},
		{"user and groups", func() *specs.Process {
			p := proc("id")
			p.User = specs.User{UID: 1000, GID: 1001, AdditionalGids: []uint32{1002}}
			return p
		}(), 0, []string{"uid=1000", "gid=1001", "1002"}},
		{"no parent, own session", proc("sh", "-c", `read -r pid comm state ppid pgrp sid rest </proc/$$/stat; echo "ppid=$ppid"`), 0, []string{"ppid=0"}},
		{"sees init's processes", proc("/bin/busybox", "ps"), 0, []string{"sleep 1000"}},
		{"umask", func() *specs.Process {
			p := proc("sh", "-c", "umask")
			m := uint32(0o077)
			p.User.Umask = &m
			return p
		}(), 0, []string{"0077"}},
		{"no_new_privs", func() *specs.Process {
			p := proc("grep", "NoNewPrivs", "/proc/self/status")
			p.NoNewPrivileges = true
			return p
		}(), 0, []string{"1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, out, err := execOut(t, c, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.status {
				t.Errorf("status %d, want %d (output %q)", st, tc.status, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
		})
	}
	t.Run("session leader", func(t *testing.T) {
		_, out, err := execOut(t, c, proc("sh", "-c", `read -r pid comm state ppid pgrp sid rest </proc/$$/stat; [ "$sid" = "$$" ] && [ "$pgrp" = "$$" ] && echo leader`))
		if err != nil || !strings.Contains(out, "leader") {
			t.Errorf("output %q, err %v", out, err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		_, _, err := execOut(t, c, proc("nosuch"))
		var ee *ExecError
		if !errors.As(err, &ee) || ee.Status != 127 || !strings.Contains(err.Error(), "executable file not found") {
			t.Errorf("error %v, want an ExecError with status 127", err)
		}
	})
	t.Run("bad cwd", func(t *testing.T) {
		p := proc("true")
		p.Cwd = "/nonexistent"
		if _, _, err := execOut(t, c, p); err == nil {
			t.Error("exec with a missing cwd worked")
		}
	})
	t.Run("ps shows it and signal", func(t *testing.T) {
		devNull, _ := os.Open(os.DevNull)
		defer devNull.Close()
		pid, err := c.Exec(ExecArgs{Process: proc("sleep", "1000"), Stdin: devNull, Stdout: devNull, Stderr: devNull})
		if err != nil {
			t.Fatal(err)
		}
		procs, err := c.Processes()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range procs {
			if p.PID == pid {
				found = true
				if p.PPID != 0 || p.Cmdline != "sleep 1000" {
					t.Errorf("ps shows %+v", p)
				}
			}
		}
		if !found {
			t.Errorf("ps %+v lacks the exec'd pid %d", procs, pid)
		}
		if err := c.SignalProcess(pid, unix.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if st, err := c.WaitExec(pid, false); err != nil || st != 128+int(unix.SIGTERM) {
			t.Errorf("wait: %d, %v; want %d", st, err, 128+int(unix.SIGTERM))
		}
	})
	t.Run("killed when the waiter hangs up", func(t *testing.T) {
		devNull, _ := os.Open(os.DevNull)
		defer devNull.Close()
		pid, err := c.Exec(ExecArgs{Process: proc("sleep", "1000"), Stdin: devNull, Stdout: devNull, Stderr: devNull})
		if err != nil {
			t.Fatal(err)
		}
		// A waiter that goes away: a call made and abandoned.
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Connect(fd, &unix.SockaddrUnix{Name: filepath.Join(c.dir, "control.sock")}); err != nil {
			t.Fatal(err)
		}
		unix.Write(fd, []byte(`{"method":"wait","pid":`+strconv.Itoa(int(pid))+`,"killOnHangup":true}`))
		time.Sleep(100 * time.Millisecond)
		unix.Close(fd)
		if gone := waitGone(c, pid); !gone {
			t.Errorf("process %d still there after its waiter hung up", pid)
		}
	})
	t.Run("stdio stays the caller's", func(t *testing.T) {
		// The sandbox holds its own copies: closing ours after Exec
		// loses nothing.
		r, w, _ := os.Pipe()
		defer r.Close()
		devNull, _ := os.Open(os.DevNull)
		defer devNull.Close()
		pid, err := c.Exec(ExecArgs{Process: proc("sh", "-c", "sleep 0.2; echo late"), Stdin: devNull, Stdout: w, Stderr: w})
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 100)
		n, _ := r.Read(b)
		if got := string(b[:n]); got != "late\n" {
			t.Errorf("read %q", got)
		}
		c.WaitExec(pid, false)
	})

	if err := c.Kill(unix.SIGKILL, false); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	stopped, _ := Load(e.conf.RootDir, "exec")
	if _, _, err := execOut(t, stopped, proc("true")); err == nil || err.Error() != "cannot exec in a stopped container" {
		t.Errorf("exec in a stopped container: %v", err)
	}
}

// waitGone waits up to 10 seconds for pid to leave c's process list.
func waitGone(c *Container, pid int32) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		procs, err := c.Processes()
		if err != nil {
			return false
		}
		found := false
		for _, p := range procs {
			found = found || p.PID == pid
		}
		if !found {
			return true
		}
	}
	return false
}

func TestExecTerminal(t *testing.T) {
	e := newEnv(t)
	c, _ := e.mustCreate("exectty", bundle(t, nil, "sleep", "1000"))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	sock, masters := consoleSocket(t)
	p := proc("sh", "-c", `[ -t 0 ] && [ -t 1 ] && echo on a tty; stty size; read line; echo "got $line"`)
	p.Terminal = true
	p.ConsoleSize = &specs.Box{Height: 25, Width: 90}
	pid, err := c.Exec(ExecArgs{Process: p, ConsoleSocket: sock})
	if err != nil {
		t.Fatal(err)
	}
	var master *os.File
	select {
	case master = <-masters:
	case <-time.After(10 * time.Second):
		t.Fatal("no terminal master on the console socket")
	}
	defer master.Close()
	master.Write([]byte("hi\n"))
	var out []byte
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(string(out), "got hi") && time.Now().Before(deadline); {
		master.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := master.Read(buf)
		out = append(out, buf[:n]...)
	}
	for _, want := range []string{"on a tty", "25 90", "got hi"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
	}
	if st, err := c.WaitExec(pid, false); err != nil || st != 0 {
		t.Errorf("wait: %d, %v", st, err)
	}
}

// counterLines returns the number of lines in file.
func counterLines(file string) int {
	b, _ := os.ReadFile(file)
	return strings.Count(string(b), "\n")
}

func TestPauseResume(t *testing.T) {
	e := newEnv(t)
	c, out := e.mustCreate("pause", bundle(t, nil, "sh", "-c", `trap "echo term; exit 7" TERM; i=0; while :; do i=$((i+1)); echo $i; sleep 0.02; done`))
	if err := c.Resume(); err == nil || err.Error() != "container not paused" {
		t.Errorf("resume of a created container: %v", err)
	}
	if err := c.Pause(); err == nil || err.Error() != "container not running" {
		t.Errorf("pause of a created container: %v", err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "5\n")
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	if s := status(t, e.conf.RootDir, "pause"); s != Paused {
		t.Fatalf("status %s after pause, want paused", s)
	}
	if err := c.Pause(); err == nil || err.Error() != "container already paused" {
		t.Errorf("second pause: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	n := counterLines(out)
	time.Sleep(300 * time.Millisecond)
	if m := counterLines(out); m != n {
		t.Fatalf("the counter went on while paused: %d lines, then %d", n, m)
	}
	if _, err := c.Exec(ExecArgs{Process: proc("true")}); err == nil || !strings.Contains(err.Error(), "cannot exec in a paused container") {
		t.Errorf("exec in a paused container: %v", err)
	}
	if procs, err := c.Processes(); err != nil || len(procs) == 0 {
		t.Errorf("ps of a paused container: %v, %v", procs, err)
	}
	// A signal sent while paused waits for resume.
	if err := c.Kill(unix.SIGTERM, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if s := status(t, e.conf.RootDir, "pause"); s != Paused {
		t.Fatalf("status %s after a kill while paused, want paused", s)
	}
	if m := counterLines(out); m != n {
		t.Fatalf("the container ran after a kill while paused: %d lines, then %d", n, m)
	}
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 7 {
		t.Errorf("wait: %d, %v; want 7 (the queued SIGTERM's trap)", st, err)
	}
	waitOutput(t, out, "term\n")
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}

	t.Run("resume lets it run", func(t *testing.T) {
		c, out := e.mustCreate("pause2", bundle(t, nil, "sh", "-c", `i=0; while :; do i=$((i+1)); echo $i; sleep 0.02; done`))
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitOutput(t, out, "3\n")
		if err := c.Pause(); err != nil {
			t.Fatal(err)
		}
		n := counterLines(out)
		if err := c.Resume(); err != nil {
			t.Fatal(err)
		}
		if s := status(t, e.conf.RootDir, "pause2"); s != Running {
			t.Errorf("status %s after resume", s)
		}
		waitOutput(t, out, strconv.Itoa(n+5)+"\n")
	})
	t.Run("delete --force of a paused container", func(t *testing.T) {
		c, out := e.mustCreate("pause3", bundle(t, nil, "sleep", "1000"))
		_ = out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if err := c.Pause(); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(false); err == nil || !strings.Contains(err.Error(), "not stopped: paused") {
			t.Errorf("delete of a paused container: %v", err)
		}
		if err := c.Delete(true); err != nil {
			t.Fatal(err)
		}
		assertGone(t, c)
	})
}

func TestUpdate(t *testing.T) {
	e := newEnv(t)
	limit := int64(300)
	b := bundle(t, func(s *specs.Spec) {
		s.Linux.CgroupsPath = "/moat-test-update/" + strconv.Itoa(os.Getpid())
		s.Linux.Resources = &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &limit}}
	}, "sleep", "1000")
	c, _ := e.mustCreate("update", b)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	cg := c.rec.Cgroup
	if cg == nil {
		t.Skip("no cgroup made here")
	}
	pidsMax := filepath.Join(cg.Dirs["pids"], "pids.max")
	if d := cg.Dirs[""]; d != "" {
		pidsMax = filepath.Join(d, "pids.max")
	}
	read := func() string {
		b, _ := os.ReadFile(pidsMax)
		return strings.TrimSpace(string(b))
	}
	for _, tc := range []struct {
		name  string
		limit int64
		want  string
	}{{"lower", 200, "200"}, {"higher", 400, "400"}, {"none", -1, "max"}} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.limit
			if _, err := c.Update(&specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &l}}); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != tc.want {
				t.Errorf("pids.max is %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("unsupported fields", func(t *testing.T) {
		_, err := c.Update(&specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: true}}, Network: &specs.LinuxNetwork{}})
		if err == nil || !strings.Contains(err.Error(), "devices, network") {
			t.Errorf("error %v, want one naming devices and network", err)
		}
	})
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(&specs.LinuxResources{}); err == nil {
		t.Error("update of a deleted container worked")
	}
}
