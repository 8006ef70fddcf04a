package cri_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// CRI namespace modes (runtime.v1.NamespaceMode).
const (
	nsPod       = 0
	nsContainer = 1
)

// busyboxImage is the image of the pod's containers (critest's default).
const busyboxImage = "registry.k8s.io/e2e-test-images/busybox:1.29-2"

// podRun is what one pod flow observed, by name.
type podRun map[string]string

// runPod runs issue #5's pod flow with handler: a pod (hostname moatpod)
// with two busybox containers, logs, exec in each, a failing exec, stop,
// rm, stopp and rmp. pidMode is the pod's PID namespace mode. It returns
// what each step printed, normalised so runc's and runsc's runs compare.
func runPod(t *testing.T, e *env, handler string, pidMode int) podRun {
	t.Helper()
	dir := t.TempDir()
	name := fmt.Sprintf("pod-%s-%d", handler, pidMode)
	pod := map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": "moat", "uid": name + "-uid", "attempt": 1},
		"hostname":      "moatpod",
		"log_directory": dir,
		"linux": map[string]any{"security_context": map[string]any{
			"namespace_options": map[string]any{"pid": pidMode},
		}},
	}
	podFile := writeJSON(t, dir, "pod.json", pod)
	ctrFile := func(n string) string {
		return writeJSON(t, dir, n+".json", map[string]any{
			"metadata": map[string]any{"name": n},
			"image":    map[string]any{"image": busyboxImage},
			"command":  []string{"sh", "-c", "echo hello-" + n + "; exec sleep 1000"},
			"log_path": n + ".log",
			"linux": map[string]any{"security_context": map[string]any{
				"namespace_options": map[string]any{"pid": pidMode},
			}},
		})
	}
	r := podRun{}
	p := e.mustCrictl(t, "runp", "--runtime", handler, podFile)
	r["pod-state"] = jsonPath(t, e.mustCrictl(t, "inspectp", p), "status", "state")
	a := e.mustCrictl(t, "create", p, ctrFile("one"), podFile)
	b := e.mustCrictl(t, "create", p, ctrFile("two"), podFile)
	if handler == "runsc" {
		e.ids = append(e.ids, p, a, b)
	}
	e.mustCrictl(t, "start", a)
	e.mustCrictl(t, "start", b)
	r["state-one"] = jsonPath(t, e.mustCrictl(t, "inspect", a), "status", "state")

	deadline := time.Now().Add(20 * time.Second)
	for {
		r["logs-one"] = e.mustCrictl(t, "logs", a)
		if r["logs-one"] != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range []struct {
		name, id string
		argv     []string
	}{
		{"echo", a, []string{"echo", "hi"}},
		{"hostname", a, []string{"hostname"}},
		{"etc-hostname", a, []string{"cat", "/etc/hostname"}},
		{"id", b, []string{"id"}},
		{"env-home", b, []string{"sh", "-c", "echo $HOME $PATH"}},
		{"cwd", b, []string{"pwd"}},
		{"rootfs", a, []string{"ls", "/"}},
	} {
		r["exec-"+c.name] = e.mustCrictl(t, append([]string{"exec", "-s", c.id}, c.argv...)...)
	}
	// Which processes each container sees: command lines, sorted, less ps.
	for n, id := range map[string]string{"one": a, "two": b} {
		out := e.mustCrictl(t, "exec", "-s", id, "ps", "-o", "args")
		var cmds []string
		for _, l := range strings.Split(out, "\n")[1:] {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "ps ") {
				cmds = append(cmds, l)
			}
		}
		sort.Strings(cmds)
		r["ps-"+n] = strings.Join(cmds, "|")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	_, err := e.crictl(ctx, "exec", "-s", a, "sh", "-c", "exit 3")
	cancel()
	r["exec-exit3"] = fmt.Sprint(err != nil && strings.Contains(err.Error(), "exited with 3"))

	// stop: sleep is PID 1 and has no handler, so SIGTERM does nothing and
	// the timeout's SIGKILL ends it.
	e.mustCrictl(t, "stop", "--timeout", "2", a)
	st := e.mustCrictl(t, "inspect", a)
	r["stopped-state"] = jsonPath(t, st, "status", "state")
	r["stopped-exit"] = jsonPath(t, st, "status", "exitCode")
	e.mustCrictl(t, "rm", a)
	e.mustCrictl(t, "stopp", p)
	r["stopped-b"] = jsonPath(t, e.mustCrictl(t, "inspect", b), "status", "state")
	e.mustCrictl(t, "rmp", p)
	r["left-pods"] = e.mustCrictl(t, "pods", "-q", "--name", name)
	r["left-containers"] = e.mustCrictl(t, "ps", "-a", "-q", "-p", p)
	return r
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonPath returns the value at keys in the JSON document js, printed.
func jsonPath(t *testing.T, js string, keys ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("parsing %q: %v", js, err)
	}
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	return fmt.Sprint(v)
}

// TestPod runs the pod flow with runc and with Moat and compares every
// step; it also checks the absolute results a pod must give.
func TestPod(t *testing.T) {
	t.Run("containerd1", func(t *testing.T) { testPod(t, debianContainerd) })
	t.Run("containerd2", func(t *testing.T) { testPod(t, containerd2(t)) })
}

func testPod(t *testing.T, d daemon) {
	e := startEnv(t, d)
	known := readKnown(t)
	// The kubelet pulls images before it creates containers; CRI's
	// CreateContainer does not pull.
	e.mustCrictl(t, "pull", busyboxImage)
	for _, mode := range []struct {
		name string
		pid  int
	}{{"private-pid", nsContainer}, {"shared-pid", nsPod}} {
		t.Run(mode.name, func(t *testing.T) {
			want := runPod(t, e, "runc", mode.pid)
			got := runPod(t, e, "runsc", mode.pid)
			for _, k := range []string{"pod-state", "state-one", "logs-one", "exec-echo", "exec-exit3", "stopped-state", "stopped-exit", "stopped-b", "left-pods", "left-containers"} {
				if want[k] == "" && !strings.HasPrefix(k, "left-") {
					t.Errorf("runc gave nothing for %s", k)
				}
			}
			if want["logs-one"] != "hello-one" || want["exec-echo"] != "hi" {
				t.Errorf("runc's pod: logs %q, exec %q", want["logs-one"], want["exec-echo"])
			}
			keys := make([]string, 0, len(want))
			for k := range want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if got[k] == want[k] {
					if known.Exact(mode.name, k) {
						t.Errorf("%s:%s is listed in known_failures.txt but now matches runc: remove it", mode.name, k)
					}
					continue
				}
				if reason, ok := known.Reason(mode.name, k); ok {
					t.Logf("known difference %s:%s (%s): runsc %q, runc %q", mode.name, k, reason, got[k], want[k])
					continue
				}
				t.Errorf("%s: runsc gave %q, runc %q", k, got[k], want[k])
			}
		})
	}
	e.checkClean(t)
}

func readKnown(t *testing.T) *harness.Known {
	data, err := os.ReadFile("known_failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	k, err := harness.ParseKnown(data)
	if err != nil {
		t.Fatalf("known_failures.txt: %v", err)
	}
	return k
}

// checkClean fails the test if runsc still has state for a container the
// test ran, or a shim or sandbox of this test's containerd still runs,
// after every pod is gone.
func (e *env) checkClean(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for _, id := range e.ids {
			if _, err := os.Stat(filepath.Join(e.runscRoot, id)); err == nil {
				left = append(left, id)
			}
		}
		procs := runscProcesses(e.dir)
		if len(left) == 0 && len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind: runsc state %v, processes %v", left, procs)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runscProcesses lists the processes whose command line names dir (the
// shims and sandboxes of this test's containerd).
func runscProcesses(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, d := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		s := strings.ReplaceAll(string(cmd), "\x00", " ")
		if strings.Contains(s, dir) && (strings.Contains(s, "runsc") || strings.Contains(s, "shim")) {
			out = append(out, d.Name()+": "+s)
		}
	}
	return out
}
