// Package cri_test drives Moat through containerd's CRI plugin, as
// Kubernetes does: a private containerd (CRI enabled, runtime handlers
// `runsc` for Moat's shim and `runc` for comparison) with a private
// registry (Debian's docker-registry on 127.0.0.1) that stands in for
// registry.k8s.io and gcr.io, test images built here with umoci from
// busybox-static and pushed with skopeo, a bridge CNI network, and crictl
// and critest from sigs.k8s.io/cri-tools, built from the module proxy.
//
// It needs root, containerd, docker-registry, umoci, skopeo,
// containernetworking-plugins, gcc and busybox-static (scripts/setup-deps.sh
// installs them); without them it is skipped, or fails under
// MOAT_REQUIRE_ALL=1.
package cri_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
	"github.com/moat-sandbox/moat/tools/modbuild"
)

func TestMain(m *testing.M) { harness.Main(m) }

// criToolsVersion is the sigs.k8s.io/cri-tools release crictl and critest
// come from.
const criToolsVersion = "v1.36.0"

// env is a private containerd with CRI, a registry and crictl.
type env struct {
	dir        string
	sock       string
	crictlBin  string
	registry   string // host:port
	bridge     string
	runscRoot  string   // runsc's --root for the CRI namespace
	ids        []string // pods and containers run with runsc
	containerd *exec.Cmd
	regCmd     *exec.Cmd
	logPath    string
}

// startEnv starts the registry and containerd d and pushes the images.
func startEnv(t *testing.T, d daemon) *env {
	t.Helper()
	if os.Geteuid() != 0 {
		harness.Unavailable(t, "needs root")
	}
	for _, bin := range []string{d.containerd, "docker-registry", "umoci", "skopeo", "gcc", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			harness.Unavailable(t, "%s not installed (scripts/setup-deps.sh installs it): %v", bin, err)
		}
	}
	for _, f := range []string{"/bin/busybox", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"} {
		if _, err := os.Stat(f); err != nil {
			harness.Unavailable(t, "%s missing (busybox-static, containernetworking-plugins): %v", f, err)
		}
	}
	runsc := harness.RequireRunsc(t)
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	crictl, err := buildCriTool(t, "crictl")
	if err != nil {
		t.Fatal(err)
	}
	// The directory's path must stay short: sockets live in it.
	dir, err := os.MkdirTemp("", "moat-cri-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	e := &env{
		dir:       dir,
		sock:      filepath.Join(dir, "c.sock"),
		crictlBin: crictl,
		bridge:    fmt.Sprintf("moatcri%d", os.Getpid()%10000),
		logPath:   filepath.Join(dir, "containerd.log"),
		runscRoot: "/run/containerd/runsc/k8s.io",
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "containerd-shim-runsc-v1"), "./shim/cmd/containerd-shim-runsc-v1")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	if err := os.Symlink(runsc, filepath.Join(bin, "runsc")); err != nil {
		t.Fatal(err)
	}
	if d.runcShim != "" {
		if err := os.Symlink(d.runcShim, filepath.Join(bin, "containerd-shim-runc-v2")); err != nil {
			t.Fatal(err)
		}
	}
	pause, err := harness.BuildC("cri", []string{filepath.Join(root, "test/cri/testdata/pause.c")})
	if err != nil {
		t.Fatal(err)
	}

	e.startRegistry(t)
	if err := pushImages(filepath.Join(dir, "images"), e.registry, testImages(pause)); err != nil {
		t.Fatal(err)
	}
	e.startContainerd(t, d, bin)
	return e
}

// freeAddr returns a 127.0.0.1 address no one listens on now.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (e *env) startRegistry(t *testing.T) {
	e.registry = freeAddr(t)
	config := filepath.Join(e.dir, "registry.yml")
	err := os.WriteFile(config, []byte(fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
		filepath.Join(e.dir, "registry"), e.registry)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(e.dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	e.regCmd = exec.Command("docker-registry", "serve", config)
	e.regCmd.Stdout, e.regCmd.Stderr = logf, logf
	if err := e.regCmd.Start(); err != nil {
		harness.Unavailable(t, "docker-registry cannot start: %v", err)
	}
	t.Cleanup(func() { e.regCmd.Process.Kill(); e.regCmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + e.registry + "/v2/")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(e.dir, "registry.log"))
			t.Fatalf("the registry did not come up: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) startContainerd(t *testing.T, d daemon, bin string) {
	certs := filepath.Join(e.dir, "certs.d")
	for _, host := range []string{"registry.k8s.io", "gcr.io", e.registry} {
		d := filepath.Join(certs, host)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		hosts := fmt.Sprintf("server = \"http://%s\"\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", e.registry, e.registry)
		if err := os.WriteFile(filepath.Join(d, "hosts.toml"), []byte(hosts), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cni := filepath.Join(e.dir, "cni")
	if err := os.Mkdir(cni, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`{"cniVersion":"0.4.0","name":"moat-cri","plugins":[{"type":"bridge","bridge":%q,"isGateway":false,"ipMasq":false,"ipam":{"type":"host-local","dataDir":%q,"ranges":[[{"subnet":"10.244.%d.0/24"}]]}},{"type":"loopback"}]}`,
		e.bridge, filepath.Join(e.dir, "ipam"), 100+os.Getpid()%100)
	if err := os.WriteFile(filepath.Join(cni, "10-moat.conflist"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// containerd 2.x reads this version 2 configuration too (it migrates
	// it); its NRI plugin would listen on the host-wide
	// /var/run/nri/nri.sock.
	disabled := ""
	if d.v2 {
		disabled = `"io.containerd.nri.v1.nri"`
	}
	config := filepath.Join(e.dir, "config.toml")
	err := os.WriteFile(config, []byte(fmt.Sprintf(`version = 2
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
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.9"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %q
`, filepath.Join(e.dir, "root"), filepath.Join(e.dir, "state"), disabled, e.sock, e.sock+".ttrpc", filepath.Join(e.dir, "opt"), cni, certs)), 0o644)
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := e.crictl(context.Background(), "version"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's CRI did not come up; its log:\n%s", d.name, e.logTail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// crictl runs crictl against the private containerd.
func (e *env) crictl(ctx context.Context, args ...string) ([]byte, error) {
	full := append([]string{"--runtime-endpoint", "unix://" + e.sock, "--image-endpoint", "unix://" + e.sock, "--timeout", "60s"}, args...)
	cmd := exec.CommandContext(ctx, e.crictlBin, full...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return out, fmt.Errorf("crictl %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
	}
	return out, err
}

// mustCrictl runs crictl and fails the test if it fails; it returns the
// trimmed output.
func (e *env) mustCrictl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := e.crictl(ctx, args...)
	if err != nil {
		t.Fatalf("%v\ncontainerd log:\n%s", err, e.logTail(40))
	}
	return strings.TrimSpace(string(out))
}

func (e *env) logTail(n int) string { return harness.FileTail(e.logPath, n) }

// stop removes the pods left, stops containerd and the network.
func (e *env) stop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := e.crictl(ctx, "pods", "-q"); err == nil {
		for _, id := range strings.Fields(string(out)) {
			e.crictl(ctx, "stopp", id)
			e.crictl(ctx, "rmp", "-f", id)
		}
	}
	e.containerd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { e.containerd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		e.containerd.Process.Kill()
		<-done
	}
	for _, m := range harness.MountsUnder(e.dir) {
		syscall.Unmount(m, syscall.MNT_DETACH)
	}
	exec.Command("ip", "link", "del", e.bridge).Run()
}

// buildCriTool builds crictl or critest from cri-tools (once per cache
// directory) and returns its path.
func buildCriTool(t *testing.T, name string) (string, error) {
	cache, err := harness.CacheDir()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c := modbuild.Command{Name: name, Package: "./cmd/" + name, Test: name == "critest"}
	paths, err := modbuild.Build(ctx, cache, "sigs.k8s.io/cri-tools", criToolsVersion, c)
	if errors.Is(err, modbuild.ErrFetch) {
		harness.Unavailable(t, "cannot build %s: %v", name, err)
	}
	if err != nil {
		return "", err
	}
	return paths[0], nil
}

// daemon is the containerd a test runs: Debian's, or 2.x built here.
type daemon struct {
	name       string // for messages
	containerd string // the daemon's binary
	runcShim   string // containerd-shim-runc-v2 to put on its PATH, if not Debian's
	v2         bool   // containerd 2.x
}

// debianContainerd is Debian's containerd 1.6 from PATH.
var debianContainerd = daemon{name: "containerd 1.6", containerd: "containerd"}

// containerd2 returns containerd 2.x, built from its module the first time
// (a few minutes), or skips t when the module cannot be fetched.
func containerd2(t *testing.T) daemon {
	bins := harness.Containerd2(t)
	return daemon{name: "containerd " + modbuild.Containerd2Version, containerd: bins.Containerd, runcShim: bins.RuncShim, v2: true}
}
