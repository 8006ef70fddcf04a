package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// podRootfs returns a busybox root file system of its own holding
// /name.txt with content name.
func podRootfs(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	for _, d := range []string{"bin", "proc", "dev", "tmp", "etc", "sys"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	b, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "busybox"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"sh", "echo", "sleep", "cat", "ls", "test", "ps", "stty", "dd", "mkdir"} {
		os.Symlink("busybox", filepath.Join(dir, "bin", app))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// podBundle is a bundle of a pod's container: the sandbox (pause)
// container when sandbox is id, else one joining sandbox.
func podBundle(t *testing.T, id, sandbox, rootfs string, args ...string) string {
	t.Helper()
	return bundle(t, func(s *specs.Spec) {
		s.Root.Path = rootfs
		s.Process.Env = append(s.Process.Env, "CONTAINER="+id)
		typ := "container"
		if id == sandbox {
			typ = "sandbox"
		}
		s.Annotations = map[string]string{
			annotationContainerType: typ,
			annotationSandboxID:     sandbox,
		}
	}, args...)
}

// startPod creates and starts the pod id's sandbox container, a pause
// container running args.
func startPod(t *testing.T, e *env, id string, args ...string) *Container {
	t.Helper()
	root, _ := e.mustCreate(id, podBundle(t, id, id, podRootfs(t, "pause"), args...))
	if err := root.Start(); err != nil {
		t.Fatal(err)
	}
	return root
}

// deletePod deletes a pod's sandbox container, which stops the sandbox,
// and checks that it is gone.
func deletePod(t *testing.T, root *Container) {
	t.Helper()
	if err := root.Delete(true); err != nil {
		t.Fatal(err)
	}
	assertGone(t, root)
}

// TestPod runs a pod: a root container and two that join its sandbox,
// each with a root file system of its own.
func TestPod(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod", "sleep", "1000")
	const show = `cat /*.txt; for f in pause a b; do test -e /$f.txt || echo "no $f"; done; echo "env $CONTAINER"; echo ready; exec sleep 1000`
	a, outA := e.mustCreate("a", podBundle(t, "a", "pod", podRootfs(t, "a"), "sh", "-c", show))
	b, outB := e.mustCreate("b", podBundle(t, "b", "pod", podRootfs(t, "b"), "sh", "-c", show))
	for _, c := range []*Container{a, b} {
		if got := status(t, e.conf.RootDir, c.ID()); got != Created {
			t.Fatalf("%s after create: %s", c.ID(), got)
		}
		if c.Pid() != root.Pid() {
			t.Errorf("%s: pid %d, want the sandbox's %d", c.ID(), c.Pid(), root.Pid())
		}
		if err := c.Start(); err != nil {
			t.Fatalf("start %s: %v", c.ID(), err)
		}
	}
	waitOutput(t, outA, "ready")
	waitOutput(t, outB, "ready")
	for _, tc := range []struct {
		out, want string
	}{
		{outA, "a\nno pause\nno b\nenv a\nready\n"},
		{outB, "b\nno pause\nno a\nenv b\nready\n"},
	} {
		if got, _ := os.ReadFile(tc.out); string(got) != tc.want {
			t.Errorf("output %q, want %q", got, tc.want)
		}
	}
	for _, c := range []*Container{root, a, b} {
		if got := status(t, e.conf.RootDir, c.ID()); got != Running {
			t.Errorf("%s after start: %s", c.ID(), got)
		}
	}

	t.Run("exec", func(t *testing.T) {
		for _, tc := range []struct {
			c    *Container
			p    *specs.Process
			st   int
			want string
		}{
			{a, proc("cat", "/a.txt"), 0, "a\n"},
			{b, proc("cat", "/b.txt"), 0, "b\n"},
			{a, proc("cat", "/b.txt"), 1, "No such file"},
			{b, proc("sh", "-c", "cat /pause.txt"), 1, "No such file"},
			{root, proc("cat", "/pause.txt"), 0, "pause\n"},
			{a, proc("ls", "/proc/self/root/"), 0, "a.txt"},
		} {
			st, out, err := execOut(t, tc.c, tc.p)
			if err != nil {
				t.Fatalf("%s: exec %v: %v", tc.c.ID(), tc.p.Args, err)
			}
			if st != tc.st || !strings.Contains(out, tc.want) {
				t.Errorf("%s: exec %v: status %d output %q, want %d and %q", tc.c.ID(), tc.p.Args, st, out, tc.st, tc.want)
			}
		}
	})

	t.Run("ps and stats", func(t *testing.T) {
		for _, tc := range []struct {
			c    *Container
			want string
		}{{root, "sleep 1000"}, {a, "sleep 1000"}, {b, "sleep 1000"}} {
			ps, err := tc.c.Processes()
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 || ps[0].Cmdline != tc.want {
				t.Errorf("%s: ps %+v, want one %q", tc.c.ID(), ps, tc.want)
			}
			st, err := tc.c.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.Sentry.PIDs != 1 {
				t.Errorf("%s: stats count %d processes, want 1", tc.c.ID(), st.Sentry.PIDs)
			}
		}
	})

	t.Run("pause refused", func(t *testing.T) {
		if err := a.Pause(); err == nil {
			t.Error("paused one container of the pod")
			a.Resume()
		}
	})

	// Kill of a's processes leaves b and the root running.
	if err := a.Kill(unix.SIGKILL, true); err != nil {
		t.Fatal(err)
	}
	if st, err := a.Wait(); err != nil || st != 128+int(unix.SIGKILL) {
		t.Errorf("wait a: %d, %v", st, err)
	}
	if got := status(t, e.conf.RootDir, "a"); got != Stopped {
		t.Errorf("a after kill: %s", got)
	}
	if err := a.Delete(false); err != nil {
		t.Fatal(err)
	}
	assertSubGone(t, a)
	for _, c := range []*Container{root, b} {
		if got := status(t, e.conf.RootDir, c.ID()); got != Running {
			t.Errorf("%s after a's delete: %s", c.ID(), got)
		}
	}
	if st, out, err := execOut(t, b, proc("cat", "/b.txt")); err != nil || st != 0 || out != "b\n" {
		t.Errorf("exec in b after a's delete: %d %q %v", st, out, err)
	}

	// Deleting the root stops the sandbox and b with it.
	if err := root.Delete(true); err != nil {
		t.Fatal(err)
	}
	assertGone(t, root)
	if got := status(t, e.conf.RootDir, "b"); got != Stopped {
		t.Errorf("b after the root's delete: %s", got)
	}
	if !b.rec.Gofer.waitGone(10 * time.Second) {
		t.Error("b's gofer outlived the sandbox")
	}
	if st, err := b.Wait(); err != nil || st != 128+int(unix.SIGKILL) {
		t.Errorf("wait b after the root's delete: %d, %v", st, err)
	}
	if err := b.Delete(false); err != nil {
		t.Fatal(err)
	}
	assertSubGone(t, b)
	if ents, _ := os.ReadDir(e.conf.RootDir); len(ents) != 0 {
		t.Errorf("state root still holds %v", ents)
	}
}

// TestPodDeleteRunning: a forced delete of a running sub-container kills
// its processes, exec'd ones included, and leaves the sandbox running.
func TestPodDeleteRunning(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod2", "sleep", "1000")
	c, out := e.mustCreate("c", podBundle(t, "c", "pod2", podRootfs(t, "c"), "sh", "-c", "echo ready; sleep 1000"))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "ready")
	devNull, _ := os.Open(os.DevNull)
	defer devNull.Close()
	pid, err := c.Exec(ExecArgs{Process: proc("sleep", "999"), Stdin: devNull, Stdout: devNull, Stderr: devNull})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan int, 1)
	go func() {
		st, _ := c.WaitExec(pid, false)
		waited <- st
	}()
	if err := c.Delete(false); err == nil {
		t.Fatal("deleted a running container without force")
	}
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	assertSubGone(t, c)
	select {
	case st := <-waited:
		if st != 128+int(unix.SIGKILL) {
			t.Errorf("exec'd process status %d", st)
		}
	case <-time.After(10 * time.Second):
		t.Error("the exec'd process outlived its container")
	}
	ps, err := root.Processes()
	if err != nil || len(ps) != 1 {
		t.Errorf("root's processes after c's delete: %+v, %v", ps, err)
	}
	if got := status(t, e.conf.RootDir, "pod2"); got != Running {
		t.Errorf("root after c's delete: %s", got)
	}
}

// TestPodCreateErrors: a container naming a sandbox that is missing,
// stopped or itself a sub-container, or whose command does not exist, is
// refused and leaves nothing.
func TestPodCreateErrors(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod3", "sleep", "1000")
	sub, _ := e.mustCreate("s", podBundle(t, "s", "pod3", podRootfs(t, "s"), "sleep", "1000"))
	for _, tc := range []struct {
		name, sandbox string
		args          []string
		want          string
	}{
		{"missing sandbox", "nope", []string{"true"}, "does not exist"},
		{"sub-container as sandbox", "s", []string{"true"}, "not a sandbox's root container"},
		{"bad sandbox id", "../x", []string{"true"}, "annotation"},
		{"missing command", "pod3", []string{"/nonexistent"}, "nonexistent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.create("x", podBundle(t, "x", tc.sandbox, podRootfs(t, "x"), tc.args...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(e.conf.RootDir, "x")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("state directory left: %v", err)
			}
		})
	}
	if err := sub.Delete(false); err != nil {
		t.Fatal(err)
	}
	assertSubGone(t, sub)
	deletePod(t, root)
}

// assertSubGone checks that a sub-container left no state and no gofer.
func assertSubGone(t *testing.T, c *Container) {
	t.Helper()
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory %s still there (%v)", c.dir, err)
	}
	if c.rec.Gofer.alive() {
		t.Errorf("gofer pid %d still alive", c.rec.Gofer.Pid)
	}
}

// TestPodKillCreated: a signal to a sub-container that has not started
// ends it as one to any created container does, leaving the sandbox.
func TestPodKillCreated(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod4", "sleep", "1000")
	c, out := e.mustCreate("k", podBundle(t, "k", "pod4", podRootfs(t, "k"), "sh", "-c", "echo ran"))
	if err := c.Kill(unix.SIGCHLD, false); err != nil {
		t.Fatal(err)
	}
	if got := status(t, e.conf.RootDir, "k"); got != Created {
		t.Fatalf("after SIGCHLD: %s", got)
	}
	if err := c.Kill(unix.SIGTERM, false); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 128+int(unix.SIGTERM) {
		t.Errorf("wait: %d, %v", st, err)
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
	assertSubGone(t, c)
	if got := status(t, e.conf.RootDir, "pod4"); got != Running {
		t.Errorf("root after k's delete: %s", got)
	}
	deletePod(t, root)
}

// TestPodMounts: a sub-container's spec mounts, maskedPaths and
// readonlyPaths apply in its own root, its bind mounts served by its own
// gofer.
func TestPodMounts(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod5", "sleep", "1000")
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "shared"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := podBundle(t, "m", "pod5", podRootfs(t, "m"), "sleep", "1000")
	editSpec(t, b, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts,
			specs.Mount{Destination: "/data", Type: "bind", Source: host, Options: []string{"rbind", "ro"}},
			specs.Mount{Destination: "/scratch", Type: "tmpfs", Source: "tmpfs", Options: []string{"size=1m"}})
		s.Linux.MaskedPaths = []string{"/m.txt"}
		s.Linux.ReadonlyPaths = []string{"/tmp"}
	})
	c, _ := e.mustCreate("m", b)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    *specs.Process
		st   int
		want string
	}{
		{proc("cat", "/data/shared"), 0, "from the host\n"},
		{proc("sh", "-c", "echo x > /data/new"), 1, "Read-only"},
		{proc("sh", "-c", "echo x > /scratch/f && cat /scratch/f"), 0, "x\n"},
		{proc("cat", "/m.txt"), 0, ""},
		{proc("sh", "-c", "echo x > /tmp/f"), 1, "Read-only"},
		{proc("sh", "-c", "cat /proc/mounts"), 0, "/scratch"},
	} {
		st, out, err := execOut(t, c, tc.p)
		if err != nil {
			t.Fatalf("exec %v: %v", tc.p.Args, err)
		}
		if st != tc.st || !strings.Contains(out, tc.want) || (tc.want == "" && out != "") {
			t.Errorf("exec %v: status %d output %q, want %d and %q", tc.p.Args, st, out, tc.st, tc.want)
		}
	}
	// The root container has none of them.
	if st, out, _ := execOut(t, root, proc("sh", "-c", "cat /proc/mounts")); st != 0 || strings.Contains(out, "/scratch") || strings.Contains(out, "/data") {
		t.Errorf("root container's mounts: %d %q", st, out)
	}
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	assertSubGone(t, c)
	deletePod(t, root)
}

// editSpec rewrites the bundle's config.json through edit.
func editSpec(t *testing.T, bundle string, edit func(*specs.Spec)) {
	t.Helper()
	path := filepath.Join(bundle, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	edit(&s)
	if data, err = json.Marshal(&s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPodTerminal: a sub-container asking for a terminal gets one through
// the console socket, as any container does.
func TestPodTerminal(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod6", "sleep", "1000")
	sock, masters := consoleSocket(t)
	b := podBundle(t, "tty", "pod6", podRootfs(t, "tty"), "sh", "-c", `[ -t 0 ] && [ -t 1 ] && echo on a tty; stty size; read line; echo "got $line"`)
	editSpec(t, b, func(s *specs.Spec) {
		s.Process.Terminal = true
		s.Process.ConsoleSize = &specs.Box{Height: 30, Width: 100}
	})
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
	assertSubGone(t, c)
	deletePod(t, root)
}

// TestPodKillInitProtected: as runc's kill, a signal from outside reaches
// a sub-container's init only if it is SIGKILL or SIGSTOP or init handles
// or blocks it, with or without --all.
func TestPodKillInitProtected(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod7", "sleep", "1000")
	for _, tc := range []struct {
		name    string
		args    []string
		all     bool
		signals []unix.Signal
		status  int
	}{
		{"TERM ignored", []string{"sleep", "1000"}, false, []unix.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGKILL}, 137},
		{"TERM ignored with all", []string{"sleep", "1000"}, true, []unix.Signal{unix.SIGTERM, unix.SIGKILL}, 137},
		{"TERM handled", []string{"sh", "-c", trapLoop}, false, []unix.Signal{unix.SIGTERM}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.ReplaceAll(tc.name, " ", "-")
			c, out := e.mustCreate(id, podBundle(t, id, "pod7", podRootfs(t, "p"), tc.args...))
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.args[0] == "sh" {
				waitOutput(t, out, "started")
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			for i, sig := range tc.signals {
				if i > 0 {
					time.Sleep(300 * time.Millisecond)
					if got := status(t, e.conf.RootDir, id); got != Running {
						t.Fatalf("after %v: %s", tc.signals[i-1], got)
					}
				}
				if err := c.Kill(sig, tc.all); err != nil {
					t.Fatalf("kill %v: %v", sig, err)
				}
			}
			if st, err := c.Wait(); err != nil || st != tc.status {
				t.Errorf("wait: %d, %v; want %d", st, err, tc.status)
			}
			if err := c.Delete(false); err != nil {
				t.Fatal(err)
			}
			assertSubGone(t, c)
		})
	}
	deletePod(t, root)
}

// TestPodReleasesMemory: the memory a deleted sub-container's files held
// (its root's overlay, its /dev/shm) goes back to the sandbox.
func TestPodReleasesMemory(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod8", "sleep", "1000")
	usage := func() uint64 {
		t.Helper()
		st, err := root.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.Sentry.MemoryUsage
	}
	b := podBundle(t, "mem", "pod8", podRootfs(t, "mem"), "sleep", "1000")
	editSpec(t, b, func(s *specs.Spec) { s.Root.Readonly = false })
	c, _ := e.mustCreate("mem", b)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	fill := proc("sh", "-c", "mkdir -p /tmp/d/e && dd if=/dev/zero of=/tmp/d/e/f bs=1M count=16 && dd if=/dev/zero of=/dev/shm/g bs=1M count=16")
	if st, out, err := execOut(t, c, fill); err != nil || st != 0 {
		t.Fatalf("filling: %d %q %v", st, out, err)
	}
	full := usage()
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	assertSubGone(t, c)
	if after := usage(); full < after+28*mib {
		t.Errorf("memory in use: %d MiB with the container's files, %d MiB after its delete; want 32 MiB back", full/mib, after/mib)
	}
	deletePod(t, root)
}

// TestPodPIDNamespaces: a sub-container whose spec asks for a PID
// namespace of its own (a pid entry without a path) has its init as pid 1
// and sees only its own processes; one naming a namespace path (CRI's pod
// mode) shares the sandbox's and sees the others.
func TestPodPIDNamespaces(t *testing.T) {
	e := newEnv(t)
	root := startPod(t, e, "pod9", "sleep", "999")
	const show = `echo "pid $$"; exec sleep 1000`
	own, ownOut := e.mustCreate("own", podBundle(t, "own", "pod9", podRootfs(t, "own"), "sh", "-c", show))
	sb := podBundle(t, "shared", "pod9", podRootfs(t, "shared"), "sh", "-c", show)
	editSpec(t, sb, func(s *specs.Spec) {
		for i := range s.Linux.Namespaces {
			if s.Linux.Namespaces[i].Type == specs.PIDNamespace {
				s.Linux.Namespaces[i].Path = fmt.Sprintf("/proc/%d/ns/pid", root.Pid())
			}
		}
	})
	shared, sharedOut := e.mustCreate("shared", sb)
	for _, c := range []*Container{own, shared} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitOutput(t, ownOut, "pid ")
	waitOutput(t, sharedOut, "pid ")
	if b, _ := os.ReadFile(ownOut); string(b) != "pid 1\n" {
		t.Errorf("own namespace: init says %q, want pid 1", b)
	}
	if b, _ := os.ReadFile(sharedOut); string(b) == "pid 1\n" {
		t.Errorf("shared namespace: init says %q", b)
	}
	for _, tc := range []struct {
		c        *Container
		has, not []string
	}{
		{own, []string{"sleep 1000"}, []string{"sleep 999"}},
		{shared, []string{"sleep 1000", "sleep 999"}, nil},
	} {
		st, out, err := execOut(t, tc.c, proc("ps"))
		if err != nil || st != 0 {
			t.Fatalf("ps in %s: %d %v", tc.c.ID(), st, err)
		}
		for _, w := range tc.has {
			if !strings.Contains(out, w) {
				t.Errorf("ps in %s lacks %q:\n%s", tc.c.ID(), w, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("ps in %s shows %q:\n%s", tc.c.ID(), w, out)
			}
		}
	}
	// The init of a namespace of its own dies of SIGKILL from outside.
	if err := own.Kill(unix.SIGKILL, false); err != nil {
		t.Fatal(err)
	}
	if st, err := own.Wait(); err != nil || st != 128+int(unix.SIGKILL) {
		t.Errorf("wait own: %d, %v", st, err)
	}
	for _, c := range []*Container{own, shared} {
		if err := c.Delete(true); err != nil {
			t.Fatal(err)
		}
		assertSubGone(t, c)
	}
	deletePod(t, root)
}
