package container

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestKernelSettingsApplied runs a container with an oomScoreAdj, a
// sysctl, a user namespace with maps and a network namespace path, and
// checks what the container sees and what the host sees of its sandbox.
func TestKernelSettingsApplied(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	holder := exec.Command("unshare", "--net", "sleep", "100")
	if err := holder.Start(); err != nil {
		t.Skipf("unshare: %v", err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	netns := fmt.Sprintf("/proc/%d/ns/net", holder.Process.Pid)
	own, _ := os.Readlink("/proc/self/ns/net")
	var want string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if want, _ = os.Readlink(netns); want != "" && want != own {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unshare's network namespace never appeared")
		}
	}

	e := newEnv(t)
	// The sandbox execs the binary as the host id the spec maps root to:
	// runsc itself execs /proc/self/exe, which any id reaches, but the
	// tests' binary is named by a path in a private directory.
	if err := os.Chmod(filepath.Dir(e.exe), 0o755); err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile("/proc/self/oom_score_adj")
	adj := 700
	if strings.TrimSpace(string(cur)) == "700" {
		adj = 701
	}
	b := bundle(t, func(s *specs.Spec) {
		s.Process.OOMScoreAdj = &adj
		s.Linux.Sysctl = map[string]string{"net.ipv4.ip_forward": "1", "kernel.domainname": "sysctl.example"}
		for i, ns := range s.Linux.Namespaces {
			if ns.Type == specs.NetworkNamespace {
				s.Linux.Namespaces[i].Path = netns
			}
		}
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 200000, Size: 65536}}
	}, "sh", "-c", `cat /proc/self/oom_score_adj /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/domainname /proc/self/uid_map /proc/self/gid_map; echo 5 > /proc/self/oom_score_adj; echo $?; echo ready; sleep 100`)
	c, out := e.mustCreate("settings", b)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "ready\n")
	got, _ := os.ReadFile(out)
	wantOut := fmt.Sprintf("%d\n1\nsysctl.example\n         0     100000      65536\n         0     200000      65536\n", adj)
	if !strings.HasPrefix(string(got), wantOut) {
		t.Errorf("container saw\n%s\nwant it to start with\n%s", got, wantOut)
	}
	// Going below the floor the runtime set takes CAP_SYS_RESOURCE,
	// which the default capabilities lack: sh's echo fails.
	if !strings.Contains(string(got), "\n1\nready\n") {
		t.Errorf("lowering oom_score_adj below the spec's value succeeded:\n%s", got)
	}
	pid := c.rec.Sandbox.Pid
	for _, tc := range []struct{ file, want string }{
		{"oom_score_adj", fmt.Sprint(adj)},
		{"uid_map", "0 100000 65536"},
		{"gid_map", "0 200000 65536"},
	} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, tc.file))
		if got := strings.Join(strings.Fields(string(b)), " "); err != nil || got != tc.want {
			t.Errorf("host /proc/%d/%s = %q (%v), want %q", pid, tc.file, got, err, tc.want)
		}
	}
	if gofer, _ := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", c.rec.Gofer.Pid)); strings.TrimSpace(string(gofer)) != fmt.Sprint(adj) {
		t.Errorf("gofer's oom_score_adj %q, want %d", gofer, adj)
	}
	if got, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err != nil || got != want {
		t.Errorf("sandbox's network namespace %q (%v), want %q", got, err, want)
	}
	// A process exec starts gets the container's oom_score_adj, as runc
	// gives it.
	if st, out, err := execOut(t, c, proc("cat", "/proc/self/oom_score_adj")); err != nil || st != 0 || out != fmt.Sprintf("%d\n", adj) {
		t.Errorf("exec'd process: status %d, output %q, %v; want %d", st, out, err, adj)
	}
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
}
