// Package shim_test runs Moat's containerd shim (containerd-shim-runsc-v1)
// under a real containerd: a private daemon (own root, state and sockets
// under a temp dir, its own namespace) with the shim and runsc on its
// PATH, a busybox image imported from a docker-archive tarball built
// here, and `ctr` as the client.
//
// Each test runs against Debian's containerd 1.6 and against containerd
// 2.x built from its Go module (tools/modbuild, cached under $MOAT_CACHE).
// It needs root, Debian's containerd package (containerd and ctr) and
// busybox-static (/bin/busybox); without containerd it is skipped, as the
// 2.x variant is when the module proxy cannot be reached.
// MOAT_RUNSC picks a prebuilt runsc; otherwise one is built.
package shim_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/shim"
	"github.com/moat-sandbox/moat/test/internal/harness"
	"github.com/moat-sandbox/moat/tools/modbuild"
)

func TestMain(m *testing.M) { harness.Main(m) }

// imageRef is the test image's name.
const imageRef = "docker.io/library/busybox:moat"

// daemon is the containerd a test runs: Debian's, or 2.x built here.
type daemon struct {
	name       string // for messages
	containerd string // the daemon's binary
	ctr        string // its client
	v2         bool   // containerd 2.x
}

// debianContainerd is Debian's containerd 1.6 from PATH.
var debianContainerd = daemon{name: "containerd 1.6", containerd: "containerd", ctr: "ctr"}

// containerd2 returns containerd 2.x, built from its module the first time
// (a few minutes), or skips t when the module cannot be fetched.
func containerd2(t testing.TB) daemon {
	bins := harness.Containerd2(t)
	return daemon{name: "containerd " + modbuild.Containerd2Version, containerd: bins.Containerd, ctr: bins.Ctr, v2: true}
}

// daemons runs f against each daemon as a subtest named after it.
func daemons(t *testing.T, f func(t *testing.T, d daemon)) {
	t.Run("containerd1", func(t *testing.T) { f(t, debianContainerd) })
	t.Run("containerd2", func(t *testing.T) { f(t, containerd2(t)) })
}

// env is a private containerd with the shim installed.
type env struct {
	d          daemon
	dir        string
	sock       string
	ns         string
	shimBin    string
	runscRoot  string
	containerd *exec.Cmd
	logPath    string

	// idsMu guards ids, the containers the test ran.
	idsMu sync.Mutex
	ids   []string

	eventsMu  sync.Mutex
	events    []event
	eventsCmd *exec.Cmd
}

// event is one line of `ctr events`.
type event struct {
	topic string
	body  string
}

// startEnv starts containerd d, builds the shim and imports the image.
func startEnv(t testing.TB, d daemon) *env {
	t.Helper()
	if os.Geteuid() != 0 {
		harness.Unavailable(t, "needs root")
	}
	for _, bin := range []string{d.containerd, d.ctr} {
		if _, err := exec.LookPath(bin); err != nil {
			harness.Unavailable(t, "%s not installed (Debian package containerd): %v", bin, err)
		}
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		harness.Unavailable(t, "no static busybox (Debian package busybox-static): %v", err)
	}
	// ctr 2.x warns on every call that cgroup v1 is deprecated (this host
	// is hybrid), into the output the tests read.
	t.Setenv("CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS", "1")
	runsc := harness.RequireRunsc(t)
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The directory's path must stay short: sockets live in it.
	dir, err := os.MkdirTemp("", "moat-shim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{
		d:       d,
		dir:     dir,
		sock:    filepath.Join(dir, "c.sock"),
		ns:      fmt.Sprintf("moat-shim-%d", os.Getpid()),
		shimBin: filepath.Join(bin, "containerd-shim-runsc-v1"),
		logPath: filepath.Join(dir, "containerd.log"),
	}
	e.runscRoot = filepath.Join("/run/containerd/runsc", e.ns)
	build := exec.Command("go", "build", "-o", e.shimBin, "./shim/cmd/containerd-shim-runsc-v1")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	if err := os.Symlink(runsc, filepath.Join(bin, "runsc")); err != nil {
		t.Fatal(err)
	}
	// containerd 2.x splits CRI into three plugins, and its NRI plugin
	// would listen on the host-wide /var/run/nri/nri.sock.
	disabled := `"io.containerd.grpc.v1.cri"`
	if d.v2 {
		disabled += `, "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images", "io.containerd.nri.v1.nri"`
	}
	config := filepath.Join(dir, "config.toml")
	err = os.WriteFile(config, []byte(fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = [%s]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  level = "debug"
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), disabled, e.sock, e.sock+".ttrpc", filepath.Join(dir, "opt"))), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(e.logPath)
	if err != nil {
		t.Fatal(err)
	}
	e.containerd = exec.Command(d.containerd, "--config", config)
	e.containerd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	e.containerd.Stdout, e.containerd.Stderr = logf, logf
	e.containerd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := e.containerd.Start(); err != nil {
		logf.Close()
		harness.Unavailable(t, "%s cannot start: %v", d.name, err)
	}
	logf.Close()
	t.Cleanup(func() { e.stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := e.ctr(context.Background(), "version"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up; its log:\n%s", d.name, e.logTail(30))
		}
		time.Sleep(100 * time.Millisecond)
	}
	archive := filepath.Join(dir, "busybox.tar")
	if err := buildBusyboxArchive(archive, "/bin/busybox", imageRef); err != nil {
		t.Fatal(err)
	}
	if out, err := e.ctr(context.Background(), "image", "import", archive); err != nil {
		t.Fatalf("ctr image import: %v\n%s", err, out)
	}
	e.startEvents(t)
	return e
}

// ctr runs ctr against the private containerd and returns its output.
func (e *env) ctr(ctx context.Context, args ...string) ([]byte, error) {
	e.noteID(args)
	full := append([]string{"-a", e.sock, "-n", e.ns}, args...)
	return exec.CommandContext(ctx, e.d.ctr, full...).CombinedOutput()
}

// ctrRun is ctr with separate stdout and stderr, and its exit status.
func (e *env) ctrRun(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e.noteID(args)
	cmd := exec.CommandContext(ctx, e.d.ctr, append([]string{"-a", e.sock, "-n", e.ns}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ctr %s timed out; stderr %q; containerd log:\n%s", strings.Join(args, " "), errb.String(), e.logTail(40))
	}
	status = 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ctr %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), status
}

// noteID records the container a `ctr run` names (after the image).
func (e *env) noteID(args []string) {
	if len(args) == 0 || args[0] != "run" {
		return
	}
	for i, a := range args {
		if a == imageRef && i+1 < len(args) {
			e.idsMu.Lock()
			e.ids = append(e.ids, args[i+1])
			e.idsMu.Unlock()
			return
		}
	}
}

// mustCtr runs ctr and fails the test if it fails.
func (e *env) mustCtr(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := e.ctr(ctx, args...)
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s\ncontainerd log:\n%s", strings.Join(args, " "), err, out, e.logTail(40))
	}
	return string(out)
}

// startEvents subscribes to the namespace's events for the whole test.
func (e *env) startEvents(t testing.TB) {
	cmd := exec.Command(e.d.ctr, "-a", e.sock, "-n", e.ns, "events")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.eventsCmd = cmd
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			// "2026-... +0000 UTC NAMESPACE TOPIC {json}"
			f := strings.Fields(sc.Text())
			for i, w := range f {
				if w == e.ns && i+1 < len(f) {
					e.eventsMu.Lock()
					e.events = append(e.events, event{topic: f[i+1], body: strings.Join(f[i+2:], " ")})
					e.eventsMu.Unlock()
					break
				}
			}
		}
	}()
	// ctr events subscribes asynchronously; give it a moment.
	time.Sleep(300 * time.Millisecond)
}

// taskEvents returns the /tasks/ topics published for container id, in
// order, each with the process id it names (`"id":"..."`) if any.
func (e *env) taskEvents(id string) []string {
	e.eventsMu.Lock()
	defer e.eventsMu.Unlock()
	var topics []string
	for _, ev := range e.events {
		if !strings.HasPrefix(ev.topic, "/tasks/") || !strings.Contains(ev.body, `"container_id":"`+id+`"`) {
			continue
		}
		topics = append(topics, ev.topic)
	}
	return topics
}

// waitEvents waits until container id's task events end with last.
func (e *env) waitEvents(t *testing.T, id string, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := e.taskEvents(id)
		if strings.Join(got, " ") == strings.Join(want, " ") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("events of %s: got %q, want %q", id, got, want)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) logTail(n int) string { return harness.FileTail(e.logPath, n) }

// stop removes what is left, stops containerd and checks that nothing of
// the shim is left behind.
func (e *env) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := e.ctr(ctx, "task", "ls", "-q"); err == nil {
		for _, id := range strings.Fields(string(out)) {
			e.ctr(ctx, "task", "kill", "-s", "KILL", id)
			e.ctr(ctx, "task", "delete", "-f", id)
		}
	}
	if out, err := e.ctr(ctx, "container", "ls", "-q"); err == nil {
		for _, id := range strings.Fields(string(out)) {
			e.ctr(ctx, "container", "rm", id)
		}
	}
	if e.eventsCmd != nil {
		e.eventsCmd.Process.Kill()
		e.eventsCmd.Wait()
	}
	e.checkClean(t)
	e.containerd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { e.containerd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		e.containerd.Process.Kill()
		<-done
	}
	// containerd leaves its own mounts (the overlay snapshotter's) only
	// while running; unmount anything left under the dir.
	for _, m := range harness.MountsUnder(e.dir) {
		syscall.Unmount(m, syscall.MNT_DETACH)
	}
	os.RemoveAll(e.runscRoot)
}

// checkClean fails the test if a shim, sandbox or gofer of this test's
// namespace is still running, if a container rootfs is still mounted, or
// if runsc still has state for the namespace.
func (e *env) checkClean(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := e.leftoverProcesses()
		mounts := harness.MountsUnder(filepath.Join(e.dir, "state"))
		entries, _ := os.ReadDir(e.runscRoot)
		bundles, _ := os.ReadDir(filepath.Join(e.dir, "state", "io.containerd.runtime.v2.task", e.ns))
		for _, b := range bundles {
			entries = append(entries, b)
		}
		var sockets []string
		e.idsMu.Lock()
		for _, id := range e.ids {
			path := shim.SocketPath(shim.DefaultSocketDir, e.sock, e.ns, id)
			if _, err := os.Lstat(path); err == nil {
				sockets = append(sockets, id+": "+path)
			}
		}
		e.idsMu.Unlock()
		if len(procs) == 0 && len(mounts) == 0 && len(entries) == 0 && len(sockets) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			for _, d := range entries {
				names = append(names, d.Name())
			}
			t.Errorf("left behind: processes %q, mounts %q, runsc state or bundles %q, shim sockets %q", procs, mounts, names, sockets)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// leftoverProcesses lists processes whose command line names this
// test's namespace: its shims (-namespace NS) and the sandboxes and
// gofers runsc started under its --root.
func (e *env) leftoverProcesses() []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || len(data) == 0 {
			continue
		}
		cmdline := strings.ReplaceAll(string(data), "\x00", " ")
		if strings.Contains(cmdline, "-namespace "+e.ns+" ") || strings.Contains(cmdline, e.runscRoot) {
			if strings.Contains(cmdline, "ctr -a") {
				continue
			}
			found = append(found, d.Name()+": "+cmdline)
		}
	}
	return found
}

// bundle is the bundle directory containerd made for container id.
func (e *env) bundle(id string) string {
	return filepath.Join(e.dir, "state", "io.containerd.runtime.v2.task", e.ns, id)
}
