package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestStartInNetNS(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	// A process in a network namespace of its own names the namespace.
	holder := exec.Command("unshare", "--net", "sleep", "100")
	if err := holder.Start(); err != nil {
		t.Skipf("unshare: %v", err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	path := fmt.Sprintf("/proc/%d/ns/net", holder.Process.Pid)
	own, _ := os.Readlink("/proc/self/ns/net")
	var want string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		want, _ = os.Readlink(path)
		if want != "" && want != own {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unshare's namespace %q never differs from ours %q", want, own)
		}
	}
	for _, tc := range []struct {
		name, path, want string
		err              bool
	}{
		{"joined", path, want, false},
		{"own", "", own, false},
		{"missing", "/nonexistent/ns", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child := exec.Command("sleep", "100")
			err := startInNetNS(tc.path, child.Start)
			if tc.err {
				if err == nil {
					child.Process.Kill()
					child.Wait()
					t.Fatal("startInNetNS succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { child.Process.Kill(); child.Wait() }()
			got, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", child.Process.Pid))
			if err != nil || got != tc.want {
				t.Errorf("child's network namespace %q (%v), want %q", got, err, tc.want)
			}
			// The calling thread is back in runsc's namespace.
			if now, _ := os.Readlink("/proc/thread-self/ns/net"); now != own {
				t.Errorf("thread's namespace after start %q, want %q", now, own)
			}
		})
	}
}
