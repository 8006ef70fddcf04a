package shim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	eventstypes "github.com/containerd/containerd/api/events"
)

func TestMemoryCgroupDir(t *testing.T) {
	hybrid := "12:pids:/\n4:memory:/ctr/ns/c1\n3:cpu,cpuacct:/ctr/ns/c1\n1:name=systemd:/\n0::/\n"
	for _, tc := range []struct {
		name    string
		file    string
		v2Host  bool
		wantDir string
		wantV2  bool
		wantErr bool
	}{
		{"hybrid", hybrid, false, "/cg/memory/ctr/ns/c1", false, false},
		{"v1 joined controllers", "5:memory,hugetlb:/a\n", false, "/cg/memory/a", false, false},
		{"v2", "0::/kubepods/pod1/c1\n", true, "/cg/kubepods/pod1/c1", true, false},
		{"v2 host ignores v1 lines", "4:memory:/x\n0::/y\n", true, "/cg/y", true, false},
		{"no memory on v1", "12:pids:/\n0::/\n", false, "", false, true},
		{"empty", "", true, "", false, true},
		{"garbage", "memory\n::\n", false, "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, v2, err := memoryCgroupDir([]byte(tc.file), "/cg", tc.v2Host)
			if (err != nil) != tc.wantErr || dir != tc.wantDir || v2 != tc.wantV2 {
				t.Errorf("memoryCgroupDir = %q, %v, %v; want %q, %v, error %v", dir, v2, err, tc.wantDir, tc.wantV2, tc.wantErr)
			}
		})
	}
}

func TestReadOOMKills(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		data    string
		want    uint64
		wantErr bool
	}{
		{"v1 oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", 3, false},
		{"v2 events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n", 1, false},
		{"no count (before Linux 4.13)", "oom_kill_disable 0\nunder_oom 0\n", 0, true},
		{"bad number", "oom_kill x\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readOOMKills(path)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("readOOMKills = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestOOMWatcherCheck checks that check publishes one event per new kill
// and stops once the counter is gone, and that a nil watcher is inert.
func TestOOMWatcherCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.events")
	if err := os.WriteFile(path, []byte("oom_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	w := &oomWatcher{id: "c1", counter: path, publish: func(ev *eventstypes.TaskOOM) {
		if ev.ContainerID != "c1" {
			t.Errorf("event for %q", ev.ContainerID)
		}
		n++
	}}
	for _, step := range []struct {
		count string
		want  int
		alive bool
	}{{"0", 0, true}, {"2", 2, true}, {"2", 2, true}, {"3", 3, true}} {
		if err := os.WriteFile(path, []byte("oom_kill "+step.count+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if alive, _ := w.check(); alive != step.alive || n != step.want {
			t.Errorf("count %s: check %v, %d events; want %v, %d", step.count, alive, n, step.alive, step.want)
		}
	}
	os.Remove(path)
	if alive, _ := w.check(); alive {
		t.Error("check with the cgroup gone reports it alive")
	}
	var none *oomWatcher
	if alive, _ := none.check(); alive {
		t.Error("nil watcher's check reports alive")
	}
	none.stop()
}

// TestWatchOOMNotified puts a host process that allocates 64 MiB in a
// memory cgroup limited to 16 MiB and checks that the kernel's
// notification alone (no check from an exit) publishes TaskOOM.
func TestWatchOOMNotified(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a cgroup")
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox to allocate memory with")
	}
	_, statErr := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	v2 := statErr == nil
	dir := filepath.Join(cgroupRoot, "memory", fmt.Sprintf("moat-oomtest-%d", os.Getpid()))
	limitFile, limit := "memory.limit_in_bytes", "16777216"
	if v2 {
		dir = filepath.Join(cgroupRoot, fmt.Sprintf("moat-oomtest-%d", os.Getpid()))
		limitFile = "memory.max"
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		// The cgroup empties once its process is reaped.
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(limit), 0); err != nil {
		t.Skipf("cannot limit the cgroup's memory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(limit), 0)
	os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)

	// The child stops itself, so that it is in the cgroup before it
	// allocates.
	cmd := exec.Command(busybox, "sh", "-c", "kill -STOP $$; exec "+busybox+" dd if=/dev/zero of=/dev/null bs=64M count=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	for {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if f := strings.Fields(string(data)); len(f) > 2 && f[2] == "T" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	events := make(chan *eventstypes.TaskOOM, 4)
	w := watchOOM(context.Background(), "c1", cmd.Process.Pid, func(ev *eventstypes.TaskOOM) { events <- ev })
	if w == nil {
		t.Fatal("watchOOM found nothing to watch")
	}
	defer w.stop()
	cmd.Process.Signal(syscall.SIGCONT)
	select {
	case ev := <-events:
		if ev.ContainerID != "c1" {
			t.Errorf("TaskOOM for %q, want c1", ev.ContainerID)
		}
	case <-time.After(20 * time.Second):
		data, _ := os.ReadFile(w.counter)
		t.Fatalf("no TaskOOM 20 s after the allocation began; %s: %q", w.counter, data)
	}
}
