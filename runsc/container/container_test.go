package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/internal/runsctest"
	"github.com/moat-sandbox/moat/runsc/specutils"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The tests here run real containers: the runsc binary, built once, with
// a root file system made of the host's static busybox.

func buildRunsc(t *testing.T) string {
	t.Helper()
	return runsctest.Binary(t)
}

var (
	rootfsOnce sync.Once
	rootfsDir  string
	rootfsErr  error
)

// busyboxRootfs returns a root file system (shared by the tests, which
// only read it) holding /bin/busybox and its applets.
func busyboxRootfs(t *testing.T) string {
	t.Helper()
	rootfsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "moat-rootfs-")
		if err != nil {
			rootfsErr = err
			return
		}
		os.Chmod(dir, 0o755) // for the tests' non-root users
		for _, d := range []string{"bin", "proc", "dev", "tmp", "etc"} {
			os.MkdirAll(filepath.Join(dir, d), 0o755)
		}
		os.Chmod(filepath.Join(dir, "tmp"), 0o1777)
		b, err := os.ReadFile("/bin/busybox")
		if err != nil {
			rootfsErr = err
			return
		}
		if err := os.WriteFile(filepath.Join(dir, "bin", "busybox"), b, 0o755); err != nil {
			rootfsErr = err
			return
		}
		for _, app := range []string{"sh", "echo", "sleep", "cat", "true", "false", "id", "hostname", "pwd", "grep", "env"} {
			os.Symlink("busybox", filepath.Join(dir, "bin", app))
		}
		rootfsDir = dir
	})
	if rootfsErr != nil {
		t.Fatal(rootfsErr)
	}
	return rootfsDir
}

// bundle writes a bundle running args whose root is the busybox root.
func bundle(t *testing.T, edit func(*specs.Spec), args ...string) string {
	t.Helper()
	spec := specutils.Default(false, 0, 0)
	spec.Root.Path = busyboxRootfs(t)
	spec.Process.Args = args
	spec.Process.Terminal = false
	if edit != nil {
		edit(spec)
	}
	dir := t.TempDir()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// env is one test's state root and the runsc binary.
type env struct {
	t    *testing.T
	exe  string
	conf *config.Config
}

func newEnv(t *testing.T) *env {
	t.Helper()
	exe := buildRunsc(t)
	conf := config.Default()
	conf.RootDir = t.TempDir()
	e := &env{t: t, exe: exe, conf: conf}
	t.Cleanup(e.cleanup)
	return e
}

// cleanup deletes what a failed test left.
func (e *env) cleanup() {
	cs, _ := List(e.conf.RootDir)
	for _, c := range cs {
		c.Delete(true)
	}
}

// create makes container id from bundle; its stdout and stderr go to a
// file, returned.
func (e *env) create(id, bundle string) (*Container, string, error) {
	e.t.Helper()
	out := filepath.Join(e.t.TempDir(), "out")
	f, err := os.Create(out)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	devNull, _ := os.Open(os.DevNull)
	defer devNull.Close()
	c, err := Create(CreateArgs{Config: e.conf, ID: id, Bundle: bundle, Exe: e.exe, Stdin: devNull, Stdout: f, Stderr: f})
	return c, out, err
}

func (e *env) mustCreate(id, bundle string) (*Container, string) {
	e.t.Helper()
	c, out, err := e.create(id, bundle)
	if err != nil {
		e.t.Fatalf("create %s: %v", id, err)
	}
	return c, out
}

// waitOutput waits until file holds want.
func waitOutput(t *testing.T, file, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("output %q never held %q", b, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone checks that the container left no state and no process.
func assertGone(t *testing.T, c *Container) {
	t.Helper()
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory %s still there (%v)", c.dir, err)
	}
	for _, p := range []hostProcess{c.rec.Sandbox, c.rec.Gofer} {
		if p.alive() {
			t.Errorf("pid %d still alive", p.Pid)
		}
	}
}

func status(t *testing.T, root, id string) Status {
	t.Helper()
	c, err := Load(root, id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return c.Status()
}

const trapLoop = `trap "exit 7" TERM; echo started; while :; do sleep 0.1; done`

func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	c, out := e.mustCreate("life", bundle(t, nil, "sh", "-c", trapLoop))
	if got := status(t, e.conf.RootDir, "life"); got != Created {
		t.Fatalf("after create: %s, want created", got)
	}
	st := c.State()
	if st.Pid != c.rec.Sandbox.Pid || st.Pid <= 0 || st.Version != specs.Version || st.Bundle == "" {
		t.Errorf("state %+v", st)
	}
	if !c.rec.Sandbox.alive() || !c.rec.Gofer.alive() {
		t.Fatal("sandbox or gofer not running after create")
	}
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Errorf("init ran before start: output %q", b)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	waitOutput(t, out, "started")
	if got := status(t, e.conf.RootDir, "life"); got != Running {
		t.Fatalf("after start: %s, want running", got)
	}
	procs, err := c.Processes()
	if err != nil || len(procs) == 0 || procs[0].PID != 1 || !strings.HasPrefix(procs[0].Cmdline, "sh -c") {
		t.Errorf("processes %+v, %v", procs, err)
	}
	if err := c.Kill(unix.SIGTERM, false); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if code, err := c.Wait(); err != nil || code != 7 {
		t.Errorf("wait: %d, %v; want 7", code, err)
	}
	if got := status(t, e.conf.RootDir, "life"); got != Stopped {
		t.Errorf("after exit: %s, want stopped", got)
	}
	// Wait again, on a stopped container: the recorded status.
	c2, _ := Load(e.conf.RootDir, "life")
	if code, err := c2.Wait(); err != nil || code != 7 {
		t.Errorf("second wait: %d, %v; want 7", code, err)
	}
	if err := c.Delete(false); err != nil {
		t.Fatalf("delete: %v", err)
	}
	assertGone(t, c)
	if _, err := Load(e.conf.RootDir, "life"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("load after delete: %v", err)
	}
}

func TestWrongTransitions(t *testing.T) {
	e := newEnv(t)
	b := bundle(t, nil, "sh", "-c", trapLoop)
	running, _ := e.mustCreate("running", b)
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	stopped, _ := e.mustCreate("stopped", bundle(t, nil, "true"))
	if err := stopped.Start(); err != nil {
		t.Fatal(err)
	}
	if code, err := stopped.Wait(); err != nil || code != 0 {
		t.Fatalf("wait: %d, %v", code, err)
	}
	tests := []struct {
		name    string
		c       *Container
		op      func(*Container) error
		wantErr string
	}{
		{"start running", running, (*Container).Start, "cannot start an already running container"},
		{"delete running", running, func(c *Container) error { return c.Delete(false) }, "cannot delete container running that is not stopped: running"},
		{"start stopped", stopped, (*Container).Start, "cannot start a container that has stopped"},
		{"kill stopped", stopped, func(c *Container) error { return c.Kill(unix.SIGTERM, false) }, "container not running"},
		{"kill all stopped", stopped, func(c *Container) error { return c.Kill(unix.SIGKILL, true) }, "container not running"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op(tc.c)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
	t.Run("duplicate id", func(t *testing.T) {
		_, _, err := e.create("running", b)
		if err == nil || err.Error() != "container with id exists: running" {
			t.Errorf("error %v", err)
		}
		if got := status(t, e.conf.RootDir, "running"); got != Running {
			t.Errorf("the first container is %s after a duplicate create", got)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := Load(e.conf.RootDir, "nope")
		if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), `container "nope" does not exist`) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("force delete running", func(t *testing.T) {
		if err := running.Delete(true); err != nil {
			t.Fatal(err)
		}
		assertGone(t, running)
	})
}

func TestKillCreated(t *testing.T) {
	e := newEnv(t)
	b := bundle(t, nil, "sh", "-c", trapLoop)
	c, out := e.mustCreate("k", b)
	// Ignored by default: nothing happens.
	if err := c.Kill(unix.SIGCHLD, false); err != nil {
		t.Fatal(err)
	}
	if got := status(t, e.conf.RootDir, "k"); got != Created {
		t.Fatalf("after SIGCHLD: %s", got)
	}
	if err := c.Kill(unix.SIGTERM, false); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); err != nil || code != 128+int(unix.SIGTERM) {
		t.Errorf("wait: %d, %v", code, err)
	}
	if got := status(t, e.conf.RootDir, "k"); got != Stopped {
		t.Errorf("after kill: %s", got)
	}
	if err := c.Start(); err == nil {
		t.Error("started a killed container")
	}
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Errorf("init ran: %q", b)
	}
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
	assertGone(t, c)
}

// TestKillInitProtected: as runc's kill on Linux, a signal from outside
// reaches the container's init (a PID namespace's init) only if it is
// SIGKILL or SIGSTOP or init handles or blocks it: a sleep (which sets no
// handlers, unlike sh -c, which catches SIGINT) survives TERM, INT and
// USR1, and dies of KILL.
func TestKillInitProtected(t *testing.T) {
	e := newEnv(t)
	c, _ := e.mustCreate("prot", bundle(t, nil, "sleep", "100"))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGUSR1} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			if err := c.Kill(sig, false); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			if got := status(t, e.conf.RootDir, "prot"); got != Running {
				t.Errorf("after %v: %s, want running", sig, got)
			}
		})
	}
	if err := c.Kill(unix.SIGKILL, false); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); err != nil || code != 128+int(unix.SIGKILL) {
		t.Errorf("wait after SIGKILL: %d, %v; want %d", code, err, 128+int(unix.SIGKILL))
	}
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
	assertGone(t, c)
}

func TestDeleteCreated(t *testing.T) {
	e := newEnv(t)
	c, _ := e.mustCreate("dc", bundle(t, nil, "true"))
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
	assertGone(t, c)
}

// TestSandboxKilled: kill -9 of the sandbox or of the gofer.
func TestSandboxKilled(t *testing.T) {
	for _, victim := range []string{"sandbox", "gofer"} {
		t.Run(victim, func(t *testing.T) {
			e := newEnv(t)
			c, out := e.mustCreate("v", bundle(t, nil, "sh", "-c", trapLoop))
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitOutput(t, out, "started")
			p := c.rec.Sandbox
			if victim == "gofer" {
				p = c.rec.Gofer
			}
			unix.Kill(p.Pid, unix.SIGKILL)
			if !p.waitGone(10 * time.Second) {
				t.Fatalf("%s survived SIGKILL", victim)
			}
			if victim == "sandbox" {
				if _, err := c.Wait(); err == nil {
					t.Error("wait of a killed sandbox reported a status")
				}
			} else {
				// The sandbox sees the gofer hang up and kills the
				// container, which has lost its files.
				if code, err := c.Wait(); err != nil || code != 128+int(unix.SIGKILL) {
					t.Errorf("wait: %d, %v; want 137", code, err)
				}
			}
			if got := status(t, e.conf.RootDir, "v"); got != Stopped {
				t.Errorf("state %s, want stopped", got)
			}
			if err := c.Delete(false); err != nil {
				t.Fatal(err)
			}
			assertGone(t, c)
		})
	}
}

func TestConcurrent(t *testing.T) {
	e := newEnv(t)
	b := bundle(t, nil, "sh", "-c", "echo hi; exit 3")
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	cs := make([]*Container, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("c%d", i)
			c, _, err := e.create(id, b)
			if err != nil {
				errs <- fmt.Errorf("create %s: %w", id, err)
				return
			}
			cs[i] = c
			if err := c.Start(); err != nil {
				errs <- fmt.Errorf("start %s: %w", id, err)
				return
			}
			if code, err := c.Wait(); err != nil || code != 3 {
				errs <- fmt.Errorf("wait %s: %d, %v", id, code, err)
				return
			}
			if err := c.Delete(false); err != nil {
				errs <- fmt.Errorf("delete %s: %w", id, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, c := range cs {
		if c != nil {
			assertGone(t, c)
		}
	}
	if ents, _ := os.ReadDir(e.conf.RootDir); len(ents) != 0 {
		t.Errorf("state root holds %d entries", len(ents))
	}
}

// TestConcurrentSameID: of several creates of one id, exactly one wins.
func TestConcurrentSameID(t *testing.T) {
	e := newEnv(t)
	b := bundle(t, nil, "true")
	const n = 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := e.create("same", b)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else if err.Error() != "container with id exists: same" {
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d creates won, want 1", wins)
	}
}

func TestMalformedBundles(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		id      string
		bundle  func(t *testing.T) string
		wantErr string
	}{
		{"missing config.json", "m1", func(t *testing.T) string { return t.TempDir() }, "has no config.json"},
		{"bad JSON", "m2", func(t *testing.T) string {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, "config.json"), []byte("{"), 0o644)
			return d
		}, "parsing config.json"},
		{"no args", "m3", func(t *testing.T) string { return bundle(t, nil) }, "process.args is missing"},
		{"root escapes", "m4", func(t *testing.T) string {
			return bundle(t, func(s *specs.Spec) { s.Root.Path = "../../../../../../etc" })
		}, "outside the bundle"},
		{"unknown namespace", "m5", func(t *testing.T) string {
			return bundle(t, func(s *specs.Spec) {
				s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "bogus"})
			}, "true")
		}, `"bogus" is not a namespace type`},
		{"id with slash", "a/b", func(t *testing.T) string { return bundle(t, nil, "true") }, "must not contain '/'"},
		{"terminal", "m6", func(t *testing.T) string {
			return bundle(t, func(s *specs.Spec) { s.Process.Terminal = true }, "sh")
		}, "process.terminal is set but no --console-socket"},
		{"command not found", "m7", func(t *testing.T) string { return bundle(t, nil, "no-such-command") }, "executable file not found"},
		{"bad cwd", "m8", func(t *testing.T) string { return bundle(t, func(s *specs.Spec) { s.Process.Cwd = "/nope" }, "true") }, "working directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.create(tc.id, tc.bundle(t))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
			if ents, _ := os.ReadDir(e.conf.RootDir); len(ents) != 0 {
				t.Errorf("state root holds %d entries after a failed create", len(ents))
			}
		})
	}
}

func TestProcessSettings(t *testing.T) {
	e := newEnv(t)
	umask := uint32(0o027)
	b := bundle(t, func(s *specs.Spec) {
		s.Process.User = specs.User{UID: 1000, GID: 100, AdditionalGids: []uint32{5, 6}, Umask: &umask}
		s.Process.Env = append(s.Process.Env, "FOO=bar baz")
		s.Process.Cwd = "/tmp"
		s.Hostname = "boxy"
		s.Domainname = "example.org"
		s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 123, Hard: 456}}
		s.Process.Capabilities = &specs.LinuxCapabilities{
			Bounding: []string{"CAP_KILL", "CAP_CHOWN"}, Effective: []string{"CAP_KILL"}, Permitted: []string{"CAP_KILL"},
		}
		// init (sh) holds the capabilities; a non-root exec drops them.
	}, "sh", "-c", `id; echo "$FOO"; pwd; hostname; cat /proc/sys/kernel/domainname; ulimit -n; ulimit -Hn; umask; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/1/status; exit 0`)
	c, out := e.mustCreate("ps", b)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); err != nil || code != 0 {
		t.Fatalf("wait: %d, %v", code, err)
	}
	got, _ := os.ReadFile(out)
	want := "uid=1000 gid=100 groups=5,6\nbar baz\n/tmp\nboxy\nexample.org\n123\n456\n0027\n" +
		"CapEff:\t0000000000000020\nCapBnd:\t0000000000000021\nNoNewPrivs:\t1\n"
	if string(got) != want {
		t.Errorf("output\n%s\nwant\n%s", got, want)
	}
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
}

// hook returns a hook that appends its name and the state it reads to
// log, then exits with status.
func hook(t *testing.T, log, name string, status int) specs.Hook {
	t.Helper()
	script := fmt.Sprintf(`echo "%s $(cat)" >> %s; exit %d`, name, log, status)
	return specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", script}}
}

func TestHooks(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(t.TempDir(), "hooks.log")
	b := bundle(t, func(s *specs.Spec) {
		s.Hooks = &specs.Hooks{
			Prestart:      []specs.Hook{hook(t, log, "prestart", 0)},
			CreateRuntime: []specs.Hook{hook(t, log, "createRuntime", 0)},
			Poststart:     []specs.Hook{hook(t, log, "poststart", 1)}, // a failure is only logged
			Poststop:      []specs.Hook{hook(t, log, "poststop", 0)},
		}
	}, "true")
	c, _ := e.mustCreate("h", b)
	pid := c.Pid()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	wantStatus := []string{"creating", "creating", "running", "stopped"}
	wantNames := []string{"prestart", "createRuntime", "poststart", "poststop"}
	if len(lines) != len(wantNames) {
		t.Fatalf("hook log:\n%s", got)
	}
	for i, l := range lines {
		name, js, _ := strings.Cut(l, " ")
		var st specs.State
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			t.Fatalf("%s got %q: %v", name, js, err)
		}
		if name != wantNames[i] || string(st.Status) != wantStatus[i] || st.ID != "h" {
			t.Errorf("hook %d: %s with %+v, want %s with status %s", i, name, st, wantNames[i], wantStatus[i])
		}
		if st.Status != specs.StateStopped && st.Pid != pid {
			t.Errorf("%s: pid %d, want %d", name, st.Pid, pid)
		}
	}
}

func TestHookFailures(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(t.TempDir(), "hooks.log")
	one := 1
	tests := []struct {
		name    string
		hooks   specs.Hooks
		wantErr string
	}{
		{"createRuntime fails", specs.Hooks{CreateRuntime: []specs.Hook{hook(t, log, "boom", 3)}}, "createRuntime hook #0 (/bin/sh): exit status 3"},
		{"timeout", specs.Hooks{Prestart: []specs.Hook{{Path: "/bin/sleep", Args: []string{"sleep", "10"}, Timeout: &one}}}, "timed out after 1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.create("hf", bundle(t, func(s *specs.Spec) { s.Hooks = &tc.hooks }, "true"))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if ents, _ := os.ReadDir(e.conf.RootDir); len(ents) != 0 {
				t.Errorf("state root holds %d entries after a failed create", len(ents))
			}
		})
	}
}

// consoleSocket listens on a unix socket and returns its path and a
// channel that gets the first descriptor sent to it.
func consoleSocket(t *testing.T) (string, <-chan *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "console.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	unix.Listen(fd, 1)
	ch := make(chan *os.File, 1)
	go func() {
		defer unix.Close(fd)
		nfd, _, err := unix.Accept(fd)
		if err != nil {
			return
		}
		defer unix.Close(nfd)
		buf, oob := make([]byte, 256), make([]byte, unix.CmsgSpace(4))
		n, oobn, _, _, err := unix.Recvmsg(nfd, buf, oob, 0)
		if err != nil {
			return
		}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		if len(msgs) != 1 {
			return
		}
		fds, _ := unix.ParseUnixRights(&msgs[0])
		if len(fds) == 1 {
			ch <- os.NewFile(uintptr(fds[0]), string(buf[:n]))
		}
	}()
	return path, ch
}

func TestConsoleSocket(t *testing.T) {
	e := newEnv(t)
	sock, masters := consoleSocket(t)
	b := bundle(t, func(s *specs.Spec) {
		s.Process.Terminal = true
		s.Process.ConsoleSize = &specs.Box{Height: 30, Width: 100}
	}, "sh", "-c", `[ -t 0 ] && [ -t 1 ] && echo on a tty; stty size; read line; echo "got $line"`)
	devNull, _ := os.Open(os.DevNull)
	defer devNull.Close()
	c, err := Create(CreateArgs{Config: e.conf, ID: "tty", Bundle: b, Exe: e.exe, ConsoleSocket: sock, Stdin: devNull, Stdout: devNull, Stderr: devNull})
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
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	master.Write([]byte("hello\n"))
	var out []byte
	buf := make([]byte, 4096)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(string(out), "got hello") && time.Now().Before(deadline) {
		master.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := master.Read(buf)
		out = append(out, buf[:n]...)
	}
	for _, want := range []string{"on a tty", "30 100", "got hello"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
	}
	if code, err := c.Wait(); err != nil || code != 0 {
		t.Errorf("wait: %d, %v", code, err)
	}
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
	t.Run("console socket without terminal", func(t *testing.T) {
		_, err := Create(CreateArgs{Config: e.conf, ID: "tty2", Bundle: bundle(t, nil, "true"), Exe: e.exe, ConsoleSocket: sock})
		if err == nil || !strings.Contains(err.Error(), "process.terminal is not set") {
			t.Errorf("error %v", err)
		}
	})
}

// TestStaleState: a state directory without a readable record (a create
// that died before writing one, a damaged file) shows as stopped and
// delete removes it; one whose create holds the lock shows as creating.
func TestStaleState(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		id, record string
	}{{"empty", ""}, {"damaged", "{not json"}} {
		t.Run(tc.id, func(t *testing.T) {
			dir := filepath.Join(root, tc.id)
			os.Mkdir(dir, 0o711)
			if tc.record != "" {
				os.WriteFile(filepath.Join(dir, stateFile), []byte(tc.record), 0o600)
			}
			c, err := Load(root, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status() != Stopped {
				t.Errorf("status %s, want stopped", c.Status())
			}
			if err := c.Delete(false); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("directory left: %v", err)
			}
		})
	}
	t.Run("locked", func(t *testing.T) {
		dir := filepath.Join(root, "busy")
		os.Mkdir(dir, 0o711)
		l, err := lockDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer l.unlock()
		c, err := Load(root, "busy")
		if err != nil || c.Status() != Creating {
			t.Errorf("load: %v, %v; want creating", c, err)
		}
		cs, _ := List(root)
		if len(cs) != 1 || cs[0].ID() != "busy" {
			t.Errorf("list: %v", cs)
		}
	})
}

// TestRootReadonly: root.readonly makes the root read-only, even with
// --overlay=none; without it the container writes to a memory overlay
// and the host root is untouched, or with --overlay=none to the host.
func TestRootReadonly(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		readonly  bool
		overlay   config.Overlay
		want      string
		reachHost bool
	}{
		{true, config.OverlayDefault, "failed\n", false},
		{false, config.OverlayDefault, "written\n", false},
		{true, config.OverlayNone, "failed\n", false},
		{false, config.OverlayNone, "written\n", true},
	} {
		t.Run(fmt.Sprintf("readonly=%v,overlay=%s", tc.readonly, tc.overlay), func(t *testing.T) {
			e.conf.Overlay = tc.overlay
			defer func() { e.conf.Overlay = config.OverlayDefault }()
			// A root of its own: the test may write to it.
			root := t.TempDir()
			os.Chmod(root, 0o755)
			for _, d := range []string{"bin", "dev", "proc"} {
				os.Mkdir(filepath.Join(root, d), 0o755)
			}
			bb, _ := os.ReadFile("/bin/busybox")
			os.WriteFile(filepath.Join(root, "bin", "sh"), bb, 0o755)
			b := bundle(t, func(s *specs.Spec) { s.Root.Readonly = tc.readonly; s.Root.Path = root },
				"sh", "-c", "(echo x > /newfile) 2>/dev/null && echo written || echo failed")
			c, out := e.mustCreate("ro", b)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			c.Wait()
			if got, _ := os.ReadFile(out); string(got) != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
			_, err := os.Stat(filepath.Join(root, "newfile"))
			if reached := err == nil; reached != tc.reachHost {
				t.Errorf("the write reached the host's root: %v, want %v", reached, tc.reachHost)
			}
			if err := c.Delete(false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConcurrentStart: of several starts of one container, exactly one
// runs it; the others get runc's error.
func TestConcurrentStart(t *testing.T) {
	e := newEnv(t)
	c, out := e.mustCreate("cs", bundle(t, nil, "sh", "-c", "echo ran"))
	const n = 5
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := Load(e.conf.RootDir, "cs")
			if err == nil {
				err = c.Start()
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case err.Error() != "cannot start an already running container" && err.Error() != "cannot start a container that has stopped":
			t.Errorf("start: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d starts succeeded, want 1", ok)
	}
	c.Wait()
	if got, _ := os.ReadFile(out); string(got) != "ran\n" {
		t.Errorf("output %q", got)
	}
}

// TestCgroup: linux.resources and cgroupsPath make a cgroup on the host
// holding the sandbox and the gofer, with the limits written; delete
// removes it, and so does a failed create.
func TestCgroup(t *testing.T) {
	e := newEnv(t)
	if _, err := os.Stat("/sys/fs/cgroup/pids"); err != nil && !isCgroup2() {
		t.Skip("no cgroup v1 pids hierarchy or v2")
	}
	path := fmt.Sprintf("/moat-test-%d", os.Getpid())
	limit, mem := int64(1000), int64(256<<20)
	shares, quota, period := uint64(512), int64(50000), uint64(100000)
	reservation, swappiness := int64(128<<20), uint64(10)
	b := bundle(t, func(s *specs.Spec) {
		s.Linux.CgroupsPath = path
		s.Linux.Resources = &specs.LinuxResources{
			Pids:   &specs.LinuxPids{Limit: &limit},
			Memory: &specs.LinuxMemory{Limit: &mem, Reservation: &reservation, Swappiness: &swappiness},
			CPU:    &specs.LinuxCPU{Shares: &shares, Quota: &quota, Period: &period, Cpus: "0"},
		}
	}, "sleep", "100")
	c, _ := e.mustCreate("cg", b)
	cg := c.rec.Cgroup
	if cg == nil {
		t.Fatal("no cgroup recorded")
	}
	read := func(ctl, file string) string {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(cg.Dirs[ctl], file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(got))
	}
	if isCgroup2() {
		for file, want := range map[string]string{"pids.max": "1000", "memory.max": "268435456", "cpu.max": "50000 100000", "memory.low": "134217728"} {
			if got := read("", file); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
	} else {
		for _, f := range []struct{ ctl, file, want string }{
			{"pids", "pids.max", "1000"}, {"memory", "memory.limit_in_bytes", "268435456"},
			{"cpu", "cpu.shares", "512"}, {"cpu", "cpu.cfs_quota_us", "50000"}, {"cpu", "cpu.cfs_period_us", "100000"},
			{"memory", "memory.soft_limit_in_bytes", "134217728"}, {"memory", "memory.swappiness", "10"},
			{"cpuset", "cpuset.cpus", "0"},
		} {
			if got := read(f.ctl, f.file); got != f.want {
				t.Errorf("%s = %q, want %q", f.file, got, f.want)
			}
		}
	}
	for ctl := range cg.Dirs {
		procs := read(ctl, "cgroup.procs")
		for _, pid := range []int{c.rec.Sandbox.Pid, c.rec.Gofer.Pid} {
			if !strings.Contains("\n"+procs+"\n", fmt.Sprintf("\n%d\n", pid)) {
				t.Errorf("%s cgroup.procs %q lacks pid %d", ctl, procs, pid)
			}
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if cs := st.Cgroup; cs == nil || cs.MemoryLimit != uint64(mem) || cs.PidsLimit != uint64(limit) || cs.MemoryUsage == 0 || cs.CPUUsageNS == 0 {
		t.Errorf("cgroup stats %+v", st.Cgroup)
	}
	if st.Sentry.PIDs != 1 {
		t.Errorf("the Sentry counts %d processes, want 1", st.Sentry.PIDs)
	}
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	for _, dir := range cg.Created {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s left: %v", dir, err)
		}
	}

	t.Run("failed create", func(t *testing.T) {
		b := bundle(t, func(s *specs.Spec) {
			s.Linux.CgroupsPath = path
			s.Linux.Resources = &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &limit}}
		}, "no-such-command")
		if _, _, err := e.create("cg2", b); err == nil {
			t.Fatal("create of a missing command succeeded")
		}
		for _, ctl := range []string{"pids", ""} {
			dir := filepath.Join(cgroupRoot, ctl, path)
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("cgroup %s left after a failed create: %v", dir, err)
			}
		}
	})
}

func TestCgroupPath(t *testing.T) {
	tests := []struct {
		path, id string
		systemd  bool
		res      bool
		want     string
		wantErr  bool
	}{
		{"", "x", false, false, "", false},
		{"", "x", false, true, "/runsc/x", false},
		{"/a/b", "x", false, false, "/a/b", false},
		{"a/../b", "x", false, false, "/b", false},
		{"system.slice:docker:abc", "x", true, false, "/system.slice/docker-abc.scope", false},
		{":runsc:abc", "x", true, false, "/system.slice/runsc-abc.scope", false},
		{"bad", "x", true, false, "", true},
		{"/", "x", false, false, "", true},
	}
	for _, tc := range tests {
		spec := &specs.Spec{Linux: &specs.Linux{CgroupsPath: tc.path}}
		if tc.res {
			spec.Linux.Resources = &specs.LinuxResources{}
		}
		got, err := cgroupPath(spec, tc.id, tc.systemd)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("cgroupPath(%q, systemd %v) = %q, %v; want %q, error %v", tc.path, tc.systemd, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestSpecMounts checks the spec's mounts of sandbox file systems,
// maskedPaths and readonlyPaths inside the container.
func TestSpecMounts(t *testing.T) {
	e := newEnv(t)
	rootfs := busyboxRootfs(t)
	for _, d := range []string{"masked-dir", "ro-dir"} {
		os.MkdirAll(filepath.Join(rootfs, d), 0o755)
	}
	os.WriteFile(filepath.Join(rootfs, "masked-dir", "hidden"), []byte("hidden\n"), 0o644)
	os.WriteFile(filepath.Join(rootfs, "etc", "masked-file"), []byte("secret\n"), 0o644)
	os.WriteFile(filepath.Join(rootfs, "ro-dir", "keep"), []byte("kept\n"), 0o644)
	b := bundle(t, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/run/app", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "mode=0700", "size=1m"}})
		s.Linux.MaskedPaths = []string{"/etc/masked-file", "/masked-dir", "/does/not/exist"}
		s.Linux.ReadonlyPaths = []string{"/ro-dir"}
	}, "sh", "-c", `busybox stat -f -c %T /run/app; busybox stat -c %a /run/app; echo x > /run/app/f && cat /run/app/f; `+
		`echo "[$(cat /etc/masked-file)]"; echo "[$(busybox ls -A /masked-dir)]"; `+
		`(echo y > /ro-dir/f) 2>/dev/null || echo ro-refused; cat /ro-dir/keep; (echo z > /etc/other) 2>/dev/null || echo root-ro`)
	c, out := e.mustCreate("mnt", b)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); err != nil || code != 0 {
		got, _ := os.ReadFile(out)
		t.Fatalf("wait: %d, %v\n%s", code, err, got)
	}
	got, _ := os.ReadFile(out)
	want := "tmpfs\n700\nx\n[]\n[]\nro-refused\nkept\nroot-ro\n"
	if string(got) != want {
		t.Errorf("output\n%s\nwant\n%s", got, want)
	}
	if err := c.Delete(false); err != nil {
		t.Fatal(err)
	}
}
