package shim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// podArgs are the annotations containerd's CRI plugin puts on a pod's
// containers: the sandbox (pause) container's when id is sandbox, else
// an app container's joining it.
func podArgs(id, sandbox string) []string {
	typ := "container"
	if id == sandbox {
		typ = "sandbox"
	}
	return []string{
		"--annotation", "io.kubernetes.cri.container-type=" + typ,
		"--annotation", "io.kubernetes.cri.sandbox-id=" + sandbox,
	}
}

// taskPid returns the PID column of `ctr task ls` for id.
func (e *env) taskPid(t *testing.T, id string) string {
	t.Helper()
	for _, line := range strings.Split(e.mustCtr(t, "task", "ls"), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == id {
			return f[1]
		}
	}
	t.Fatalf("no task %s", id)
	return ""
}

// TestShimPod runs a "pod" through ctr with the CRI plugin's
// annotations: the app containers share the sandbox container's shim and
// Moat sandbox, each with its own root file system.
func TestShimPod(t *testing.T) {
	daemons(t, func(t *testing.T, d daemon) { testShimPod(t, startEnv(t, d)) })
}

func testShimPod(t *testing.T, e *env) {
	const pod, app1, app2 = "pod1", "pod1-app1", "pod1-app2"
	run := func(id string, args ...string) {
		t.Helper()
		e.mustCtr(t, append(append(append([]string{"run", "-d", "--runtime", runtime}, podArgs(id, pod)...), imageRef, id), args...)...)
	}
	run(pod, "sleep", "1000")
	run(app1, "sh", "-c", "echo one > /tmp/mine; exec sleep 1001")
	run(app2, "sh", "-c", "echo two > /tmp/mine; exec sleep 1002")
	for _, id := range []string{pod, app1, app2} {
		e.waitStatus(t, id, "RUNNING")
	}

	t.Run("one shim, one sandbox", func(t *testing.T) {
		addr := func(id string) string {
			b, err := os.ReadFile(filepath.Join(e.bundle(id), "address"))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		if a, b, c := addr(pod), addr(app1), addr(app2); a != b || a != c {
			t.Errorf("shim addresses %q, %q, %q: want one", a, b, c)
		}
		if a, b, c := e.taskPid(t, pod), e.taskPid(t, app1), e.taskPid(t, app2); a != b || a != c {
			t.Errorf("task pids %s, %s, %s: want the one sandbox's", a, b, c)
		}
	})

	t.Run("own root file systems", func(t *testing.T) {
		for _, tc := range []struct {
			id, want string
			status   int
		}{{app1, "one\n", 0}, {app2, "two\n", 0}, {pod, "", 1}} {
			stdout, _, status := e.ctrRun(t, "task", "exec", "--exec-id", "cat", tc.id, "cat", "/tmp/mine")
			if stdout != tc.want || status != tc.status {
				t.Errorf("cat /tmp/mine in %s: %q, status %d; want %q, %d", tc.id, stdout, status, tc.want, tc.status)
			}
		}
		// Each container's task lists its own processes only (inside,
		// /proc shows the whole sandbox: it has one PID namespace).
		for _, id := range []string{app1, app2} {
			if out := e.mustCtr(t, "task", "ps", id); len(strings.Split(strings.TrimSpace(out), "\n")) != 2 {
				t.Errorf("task ps %s: %q, want one process", id, out)
			}
		}
	})

	t.Run("kill one container", func(t *testing.T) {
		e.mustCtr(t, "task", "kill", "-s", "KILL", app1)
		e.waitStatus(t, app1, "STOPPED")
		if out := e.mustCtr(t, "task", "delete", app1); !strings.Contains(out, "137") {
			t.Errorf("task delete %s: %q, want status 137", app1, out)
		}
		e.mustCtr(t, "container", "rm", app1)
		e.waitEvents(t, app1, []string{"/tasks/create", "/tasks/start",
			"/tasks/exec-added", "/tasks/exec-started", "/tasks/exit", "/tasks/delete",
			"/tasks/exit", "/tasks/delete"})
		out := e.mustCtr(t, "task", "ls")
		if !hasTask(out, pod, "RUNNING") || !hasTask(out, app2, "RUNNING") {
			t.Errorf("after %s's delete: %q", app1, out)
		}
		stdout, _, status := e.ctrRun(t, "task", "exec", "--exec-id", "cat2", app2, "cat", "/tmp/mine")
		if stdout != "two\n" || status != 0 {
			t.Errorf("exec in %s after %s's delete: %q, %d", app2, app1, stdout, status)
		}
	})

	e.remove(t, app2)
	e.remove(t, pod)
	e.checkClean(t)
}
