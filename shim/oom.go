package shim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	eventstypes "github.com/containerd/containerd/api/events"
	"github.com/containerd/log"
	"golang.org/x/sys/unix"
)

// This file publishes /tasks/oom when a container's sandbox hits the
// memory limit of its cgroup (linux.resources.memory.limit, which runsc
// writes to memory.limit_in_bytes or memory.max): the host kernel's OOM
// killer then kills a process of the sandbox, which ends the container.
//
// The watcher reads the cgroup's oom_kill counter (v1: memory.oom_control,
// since Linux 4.13; v2: memory.events) and publishes one event per kill.
// It wakes on the kernel's notifications: on v1 an eventfd registered for
// memory.oom_control through cgroup.event_control, on v2 inotify on
// memory.events. The exit handler checks the counter once more before it
// publishes the container's exit, so the event comes first even when the
// notification loses the race with SIGCHLD.
//
// Only a sandbox in a memory cgroup of its own is watched: without one it
// shares the shim's cgroup, whose OOM kills are not the container's.

// cgroupRoot is where the cgroup hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// oomWatcher watches one container's memory cgroup.
type oomWatcher struct {
	id      string
	dir     string // the cgroup's directory
	counter string // the file with the oom_kill count
	publish func(*eventstypes.TaskOOM)

	// mu guards kills and serializes checks.
	mu    sync.Mutex
	kills uint64

	wake *os.File // eventfd (v1) or inotify (v2) descriptor
	// v1Control is memory.oom_control, held open while the eventfd is
	// registered (the registration names both).
	v1Control *os.File
}

// memoryCgroupDir returns the directory of the memory cgroup that a
// /proc/<pid>/cgroup file names, and whether it is cgroup v2. v1's memory
// hierarchy wins on a hybrid host (v2 mounted but without controllers).
func memoryCgroupDir(procCgroup []byte, root string, v2Host bool) (dir string, v2 bool, err error) {
	var unified string
	haveUnified := false
	sc := bufio.NewScanner(bytes.NewReader(procCgroup))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified, haveUnified = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" && !v2Host {
				return filepath.Join(root, "memory", parts[2]), false, nil
			}
		}
	}
	if haveUnified && v2Host {
		return filepath.Join(root, unified), true, nil
	}
	return "", false, errors.New("no memory cgroup")
}

// readOOMKills reads the oom_kill count of a memory.oom_control or
// memory.events file.
func readOOMKills(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "oom_kill" {
			return strconv.ParseUint(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no oom_kill count", path)
}

// watchOOM starts watching the memory cgroup of the sandbox process pid
// for container id, or returns nil when the sandbox has no memory cgroup
// of its own or the kernel cannot tell of OOM kills.
func watchOOM(ctx context.Context, id string, pid int, publish func(*eventstypes.TaskOOM)) *oomWatcher {
	l := log.G(ctx).WithField("id", id)
	mine, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		l.WithError(err).Debug("no OOM events: reading the shim's cgroup")
		return nil
	}
	theirs, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		l.WithError(err).Debug("no OOM events: reading the sandbox's cgroup")
		return nil
	}
	_, statErr := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	v2Host := statErr == nil
	myDir, _, err1 := memoryCgroupDir(mine, cgroupRoot, v2Host)
	dir, v2, err := memoryCgroupDir(theirs, cgroupRoot, v2Host)
	if err != nil || err1 != nil || dir == myDir {
		l.Debug("no OOM events: the sandbox has no memory cgroup of its own")
		return nil
	}
	w := &oomWatcher{id: id, dir: dir, publish: publish, counter: filepath.Join(dir, "memory.oom_control")}
	if v2 {
		w.counter = filepath.Join(dir, "memory.events")
	}
	if w.kills, err = readOOMKills(w.counter); err == nil {
		if v2 {
			err = w.startV2()
		} else {
			err = w.startV1()
		}
	}
	if err != nil {
		l.WithError(err).Warn("no OOM events")
		return nil
	}
	go w.run()
	return w
}

// startV1 registers an eventfd for memory.oom_control (w.counter).
func (w *oomWatcher) startV1() error {
	control, err := os.Open(w.counter)
	if err != nil {
		return err
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		control.Close()
		return fmt.Errorf("eventfd: %w", err)
	}
	wake := os.NewFile(uintptr(efd), "oom-eventfd")
	reg := fmt.Sprintf("%d %d", efd, control.Fd())
	if err := os.WriteFile(filepath.Join(w.dir, "cgroup.event_control"), []byte(reg), 0); err != nil {
		wake.Close()
		control.Close()
		return fmt.Errorf("registering for memory.oom_control: %w", err)
	}
	w.wake, w.v1Control = wake, control
	return nil
}

// startV2 watches memory.events (w.counter) with inotify.
func (w *oomWatcher) startV2() error {
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(ifd, w.counter, unix.IN_MODIFY); err != nil {
		unix.Close(ifd)
		return fmt.Errorf("inotify on %s: %w", w.counter, err)
	}
	w.wake = os.NewFile(uintptr(ifd), "oom-inotify")
	return nil
}

// run checks the counter at each notification until stop, or until the
// cgroup is gone (removing a cgroup signals its eventfds, and ends the
// inotify watch). v1 notifies when the cgroup runs out of memory, before
// the OOM killer has chosen and killed its victim, so after a wake-up the
// count is polled for a while (2 s) until it moves.
func (w *oomWatcher) run() {
	buf := make([]byte, 4096)
	for {
		if _, err := w.wake.Read(buf); err != nil {
			return
		}
		for i := 0; i < 100; i++ {
			alive, n := w.check()
			if !alive {
				return
			}
			if n > 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// check publishes one TaskOOM for each OOM kill since the last check and
// returns how many. It reports alive false once the counter cannot be read
// (the cgroup is gone). A nil watcher has nothing to check.
func (w *oomWatcher) check() (alive bool, published int) {
	if w == nil {
		return false, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	kills, err := readOOMKills(w.counter)
	if err != nil {
		return false, 0
	}
	for ; w.kills < kills; w.kills++ {
		w.publish(&eventstypes.TaskOOM{ContainerID: w.id})
		published++
	}
	return true, published
}

// stop ends the watch. A nil watcher has nothing to stop.
func (w *oomWatcher) stop() {
	if w == nil {
		return
	}
	w.wake.Close()
	if w.v1Control != nil {
		w.v1Control.Close()
	}
}
