// Package docker runs Docker end to end with runsc as its runtime: a
// private containerd and dockerd (own data root, exec root and sockets
// under a temporary directory, no iptables, no bridge), runsc registered
// in the daemon's daemon.json by `runsc install`, a busybox image made by
// `docker import` of a tarball built from the host's static busybox, and
// then `docker run --runtime=runsc` and friends, checked for their output,
// exit statuses and container states (see cases_test.go).
//
// The test needs root, dockerd, containerd, containerd-shim-runc-v2 and
// the docker client (Debian: docker.io, containerd, runc), and a static
// /bin/busybox (busybox-static). It skips, saying why, only when those are
// missing or dockerd cannot start. runsc is $MOAT_RUNSC or built from the
// tree; $MOAT_RUNSC_FLAGS become the runtime's runtimeArgs (runsc's logs
// go to runsc-logs/ in the directory, which MOAT_DOCKER_KEEP=1 keeps;
// MOAT_DOCKER_DEBUG=1 runs dockerd with --debug, which logs every API
// call the clients make, resizes and kills included, in dockerd.log).
//
// The cases run in parallel (go test's -parallel, GOMAXPROCS by default)
// against one daemon. About 40 containers: a few minutes on a quiet
// 2-core machine, more on a busy one, where -timeout 30m is wise; a case
// not started 3 minutes before the timeout fails saying so.
//
// Cases listed in known_failures.txt (docker:<case>) may fail: they are
// skipped with their reason when they do, and logged when they pass (a
// failure with MOAT_STRICT_KNOWN=1), so the list only shrinks.
package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// image is the name the busybox image is imported as.
const image = "moat-busybox:test"

// runtimeName is the name runsc is registered under in daemon.json.
const runtimeName = "runsc"

// daemon is a private containerd and dockerd pair.
type daemon struct {
	dir        string // everything lives under it
	runsc      string
	sock       string // dockerd's API socket
	execRoot   string
	env        []string // the docker client's environment
	dockerd    *exec.Cmd
	containerd *exec.Cmd
	dockerdLog string
}

// tools the test needs, by the package that provides them on Debian.
var tools = []struct{ name, pkg string }{
	{"dockerd", "docker.io"},
	{"docker", "docker.io (or docker-ce-cli)"},
	{"containerd", "containerd"},
	{"containerd-shim-runc-v2", "containerd"},
}

// startDaemon starts containerd and dockerd with runsc installed as a
// runtime, or skips the test when they cannot run here. The daemons stop,
// and their files go, when t ends.
func startDaemon(t *testing.T) *daemon {
	t.Helper()
	if os.Geteuid() != 0 {
		harness.Unavailable(t, "dockerd needs root")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool.name); err != nil {
			harness.Unavailable(t, "%s not found (apt-get install %s): %v", tool.name, tool.pkg, err)
		}
	}
	runsc := harness.RequireRunsc(t)
	// A short directory: unix socket paths under it must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "moat-docker-")
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{
		dir:        dir,
		runsc:      runsc,
		sock:       filepath.Join(dir, "docker.sock"),
		execRoot:   filepath.Join(dir, "exec"),
		dockerdLog: filepath.Join(dir, "dockerd.log"),
	}
	d.env = append(os.Environ(),
		"DOCKER_HOST=unix://"+d.sock,
		"DOCKER_CONFIG="+filepath.Join(dir, "client"),
		"DOCKER_CLI_HINTS=false",
	)
	t.Cleanup(func() { d.stop(t) })

	// runsc registers itself, as a user would.
	config := filepath.Join(dir, "daemon.json")
	args := []string{"install", "--config_file", config, "--runtime", runtimeName, "--", "--debug-log=" + filepath.Join(dir, "runsc-logs") + "/"}
	args = append(args, strings.Fields(os.Getenv("MOAT_RUNSC_FLAGS"))...)
	if out, err := exec.Command(runsc, args...).CombinedOutput(); err != nil {
		t.Fatalf("runsc install: %v\n%s", err, out)
	}

	ctdSock := filepath.Join(dir, "containerd.sock")
	ctdConfig := filepath.Join(dir, "containerd.toml")
	toml := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(dir, "containerd", "root"), filepath.Join(dir, "containerd", "state"), ctdSock, ctdSock+".ttrpc")
	if err := os.WriteFile(ctdConfig, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	d.containerd, err = startLogged(filepath.Join(dir, "containerd.log"), "containerd", "--config", ctdConfig)
	if err != nil {
		harness.Unavailable(t, "containerd cannot start: %v", err)
	}
	if err := waitFor(20*time.Second, func() bool { _, err := os.Stat(ctdSock); return err == nil }); err != nil {
		harness.Unavailable(t, "containerd did not come up (%v); its log:\n%s", err, tail(filepath.Join(dir, "containerd.log"), 30))
	}
	dockerdArgs := []string{
		"--iptables=false", "--ip6tables=false", "--bridge=none", "--ip-masq=false",
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", d.execRoot,
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--config-file", config,
		"--containerd", ctdSock,
		"-H", "unix://" + d.sock,
	}
	if os.Getenv("MOAT_DOCKER_DEBUG") == "1" {
		// Every API call (resizes, kills) in dockerd.log.
		dockerdArgs = append(dockerdArgs, "--debug")
	}
	d.dockerd, err = startLogged(d.dockerdLog, "dockerd", dockerdArgs...)
	if err != nil {
		harness.Unavailable(t, "dockerd cannot start: %v", err)
	}
	var last result
	if err := waitFor(30*time.Second, func() bool {
		last = d.docker(t, "", "version")
		return last.code == 0
	}); err != nil {
		harness.Unavailable(t, "dockerd did not come up (%v): %s\ndockerd log:\n%s", err, last, tail(d.dockerdLog, 30))
	}
	d.importBusybox(t)
	return d
}

// startLogged starts name with args, its output going to logFile.
func startLogged(logFile, name string, args ...string) (*exec.Cmd, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// waitFor polls ok until it holds or timeout passes.
func waitFor(timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// stop removes every container, stops dockerd and containerd, checks
// that nothing of runsc's is left, and removes the directory.
func (d *daemon) stop(t *testing.T) {
	if d.dockerd != nil {
		if ids := strings.Fields(d.docker(t, "", "ps", "-aq").stdout); len(ids) > 0 {
			d.docker(t, "", append([]string{"rm", "-f"}, ids...)...)
		}
		d.checkNoLeftovers(t)
		terminate(d.dockerd, 20*time.Second)
	}
	if d.containerd != nil {
		terminate(d.containerd, 20*time.Second)
	}
	// Shims outlive containerd, and the sandboxes and gofers they run
	// outlive a dockerd that could not remove a container: every process
	// whose command line names the directory is this test's.
	if pids := processesNaming(d.dir); len(pids) > 0 {
		t.Errorf("processes left after the daemons stopped (killed now): %v", pids)
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if t.Failed() {
		t.Logf("dockerd log (last lines):\n%s", tail(d.dockerdLog, 40))
		// runsc's errors; its warnings (spec fields not applied) are
		// in every log and say little.
		logs, _ := filepath.Glob(filepath.Join(d.dir, "runsc-logs", "*"))
		var errs []string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, `"level":"error"`) || strings.Contains(line, "level=ERROR") {
					errs = append(errs, filepath.Base(l)+": "+line)
				}
			}
		}
		if len(errs) > 30 {
			errs = errs[len(errs)-30:]
		}
		t.Logf("runsc errors (last 30):\n%s", strings.Join(errs, "\n"))
	}
	unmountUnder(d.dir)
	if os.Getenv("MOAT_DOCKER_KEEP") == "1" {
		t.Logf("MOAT_DOCKER_KEEP=1: logs and data left in %s", d.dir)
		return
	}
	if err := os.RemoveAll(d.dir); err != nil {
		t.Logf("removing %s: %v", d.dir, err)
	}
}

// checkNoLeftovers fails t if, with every container removed, runsc still
// has state directories under the shim's runtime root or processes
// running.
func (d *daemon) checkNoLeftovers(t *testing.T) {
	err := waitFor(10*time.Second, func() bool {
		return len(runscStates(d.execRoot)) == 0 && len(runscProcesses(d.runsc)) == 0
	})
	if err != nil {
		t.Errorf("after removing every container: runsc state left %q, runsc processes left %v", runscStates(d.execRoot), runscProcesses(d.runsc))
	}
}

// runscStates lists the container directories under the runtime roots the
// runc shim gives runsc (<exec-root>/runtime-*/moby/<id>).
func runscStates(execRoot string) []string {
	m, _ := filepath.Glob(filepath.Join(execRoot, "runtime-*", "moby", "*"))
	return m
}

// runscProcesses lists the pids whose executable is runsc.
func runscProcesses(runsc string) []int {
	want, err := os.Stat(runsc)
	if err != nil {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		st, err := os.Stat(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && os.SameFile(st, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesNaming lists the pids whose command line contains s.
func processesNaming(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// terminate sends SIGTERM to cmd's process group and waits, then SIGKILL.
func terminate(cmd *exec.Cmd, grace time.Duration) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// unmountUnder detaches every mount below dir, deepest first (overlays
// and shm mounts a killed dockerd may have left).
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		unix.Unmount(points[i], unix.MNT_DETACH)
	}
}

// tail returns the last n lines of file.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// result is what one docker client call gave.
type result struct {
	args           []string
	stdout, stderr string
	code           int
	err            error // failing to start, or the timeout
}

func (r result) String() string {
	s := fmt.Sprintf("docker %s: exit %d", strings.Join(r.args, " "), r.code)
	if r.err != nil {
		s += fmt.Sprintf(" (%v)", r.err)
	}
	return s + fmt.Sprintf("\nstdout: %q\nstderr: %q", clip(r.stdout), clip(r.stderr))
}

// dockerTimeout bounds every docker client call.
const dockerTimeout = 90 * time.Second

// helper is what docker needs of a test: testing.TB or a case's check.
type helper interface{ Helper() }

// docker runs the docker client with args and stdin.
func (d *daemon) docker(t helper, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = d.env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{args: args, stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) || ctx.Err() != nil {
		r.err = err
		if ctx.Err() != nil {
			r.err = fmt.Errorf("timed out after %v", dockerTimeout)
		}
	}
	return r
}

// busyboxPath is the static busybox the image is made of.
const busyboxPath = "/bin/busybox"

// importBusybox makes the test image: busybox, a link per applet,
// /etc/passwd and /etc/group with root and nobody, PATH=/bin.
func (d *daemon) importBusybox(t *testing.T) {
	t.Helper()
	f, err := elf.Open(busyboxPath)
	if err != nil {
		harness.Unavailable(t, "%s: %v (apt-get install busybox-static)", busyboxPath, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			f.Close()
			harness.Unavailable(t, "%s is dynamically linked: the image needs a static one (apt-get install busybox-static)", busyboxPath)
		}
	}
	f.Close()
	list, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	bin, err := os.ReadFile(busyboxPath)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	add := func(h *tar.Header, data []byte) {
		h.ModTime = now
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []struct {
		name string
		mode int64
	}{{"bin/", 0o755}, {"etc/", 0o755}, {"root/", 0o700}, {"tmp/", 0o1777}, {"home/", 0o755}} {
		add(&tar.Header{Typeflag: tar.TypeDir, Name: dir.name, Mode: dir.mode}, nil)
	}
	add(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755}, bin)
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" && !strings.Contains(applet, "/") {
			add(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + applet, Linkname: "busybox", Mode: 0o777}, nil)
		}
	}
	add(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644}, []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n"))
	add(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/group", Mode: 0o644}, []byte("root:x:0:\nnobody:x:65534:\n"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "import", "-c", "ENV PATH=/bin", "-", image)
	cmd.Env = d.env
	cmd.Stdin = io.NopCloser(&buf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v\n%s", err, out)
	}
}
