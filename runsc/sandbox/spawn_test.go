package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// spawnCmd returns a shell command whose process attributes are those Do
// gives the sandbox (with a user namespace), its stdio and one extra
// file (fd 3) files.
func spawnCmd(t *testing.T, script string) (*exec.Cmd, *os.File) {
	t.Helper()
	out, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	w.WriteString("extra file\n")
	w.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devNull.Close() })
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devNull, out, out
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC,
		Pdeathsig:  unix.SIGKILL,
		Setpgid:    true,
	}
	newUserNS(cmd.SysProcAttr, nil, nil)
	return cmd, out
}

// spawnAndWait spawns cmd, which canSpawn must accept, waits for it to
// exit with status, and returns what it wrote to out.
func spawnAndWait(t *testing.T, cmd *exec.Cmd, out *os.File, status int) string {
	t.Helper()
	if !canSpawn(cmd) {
		t.Fatalf("canSpawn refuses %+v", cmd.SysProcAttr)
	}
	if err := spawn(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != status {
		t.Fatalf("Wait: %v, want exit status %d", err, status)
	}
	b, _ := os.ReadFile(out.Name())
	return string(b)
}

func TestSpawnUserNS(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	cmd, out := spawnCmd(t, `cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; readlink /proc/self/ns/user; [ "$(ps -o pgid= -p $$ | tr -d ' ')" = "$$" ] && echo own-group; cat <&3; grep SigBlk /proc/self/status; exit 7`)
	got := spawnAndWait(t, cmd, out, 7)
	self, _ := os.Readlink("/proc/self/ns/user")
	for _, want := range []string{
		fmt.Sprintf("0 %10d %10d", os.Getuid(), 1), fmt.Sprintf("0 %10d %10d", os.Getgid(), 1),
		"deny\n0\n", "user:[", "own-group\n", "extra file\n", "SigBlk:\t0000000000000000\n",
	} {
		if !strings.Contains(strings.Join(strings.Fields(got), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("child output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, self) {
		t.Errorf("child is in the test's user namespace %s:\n%s", self, got)
	}
}

// noUserNS undoes newUserNS.
func noUserNS(a *syscall.SysProcAttr) {
	a.Cloneflags &^= unix.CLONE_NEWUSER
	a.UidMappings, a.GidMappings = nil, nil
}

// TestSpawnWithoutUserNS spawns a command with the gofer's attributes:
// new mount, UTS and IPC namespaces but runsc's user namespace.
func TestSpawnWithoutUserNS(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	cmd, out := spawnCmd(t, `readlink /proc/self/ns/user /proc/self/ns/mnt; [ "$(ps -o pgid= -p $$ | tr -d ' ')" = "$$" ] && echo own-group; cat <&3; exit 5`)
	noUserNS(cmd.SysProcAttr)
	got := spawnAndWait(t, cmd, out, 5)
	user, _ := os.Readlink("/proc/self/ns/user")
	mnt, _ := os.Readlink("/proc/self/ns/mnt")
	for _, want := range []string{user + "\n", "own-group\n", "extra file\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("child output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, mnt) {
		t.Errorf("child is in the test's mount namespace %s:\n%s", mnt, got)
	}
}

// TestSpawnParentGone checks that a child in runsc's PID namespace that
// finds another parent once its parent-death signal is set (its own died
// before: no signal would come) exits before its execve, and that the
// spawn reports it.
func TestSpawnParentGone(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	cmd, out := spawnCmd(t, "echo ran")
	noUserNS(cmd.SysProcAttr)
	defer func(f func() int) { parentPID = f }(parentPID)
	parentPID = func() int { return os.Getpid() + 1 }
	err := spawn(cmd)
	if !errors.Is(err, unix.ESRCH) || !strings.Contains(err.Error(), fmt.Sprint("system call ", unix.SYS_GETPPID)) {
		t.Fatalf("spawn: %v, want getppid's step failing with ESRCH", err)
	}
	if cmd.Process != nil {
		t.Errorf("Process set after a failed start")
	}
	if b, _ := os.ReadFile(out.Name()); len(b) != 0 {
		t.Errorf("the child ran its command: %q", b)
	}
}

// TestSpawnsShareForkLock checks that a spawn does not wait for another
// under way, while both keep syscall.ForkLock from its readers (the
// makers of descriptors without close-on-exec).
func TestSpawnsShareForkLock(t *testing.T) {
	acquireForkLock()
	second := make(chan struct{})
	go func() {
		acquireForkLock()
		close(second)
	}()
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		// Let the rest of the package's tests fork: the second
		// acquire, still waiting, then takes the lock and keeps it.
		releaseForkLock()
		t.Fatal("a second spawn waits for the first's hold of ForkLock")
	}
	read := make(chan struct{})
	go func() {
		syscall.ForkLock.RLock()
		syscall.ForkLock.RUnlock()
		close(read)
	}()
	releaseForkLock()
	select {
	case <-read:
		t.Fatal("ForkLock was readable while a spawn held it")
	case <-time.After(50 * time.Millisecond):
	}
	releaseForkLock()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("ForkLock stayed held after the last spawn")
	}
}

// TestSpawnUserNSExecFails checks that a failed execve is reported as
// Start's error and leaves no child behind.
func TestSpawnUserNSExecFails(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	cmd, _ := spawnCmd(t, "true")
	cmd.Path = "/nonexistent/runsc"
	err := spawn(cmd)
	if !errors.Is(err, unix.ENOENT) || !strings.Contains(err.Error(), fmt.Sprint("system call ", unix.SYS_EXECVE)) {
		t.Fatalf("spawn: %v, want execve's ENOENT", err)
	}
	if cmd.Process != nil {
		t.Errorf("Process set after a failed start")
	}
	var ws unix.WaitStatus
	if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil); pid > 0 {
		t.Errorf("a child (%d) was left to reap: %v", pid, err)
	}
}

func TestCanSpawn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*exec.Cmd)
		want   bool
	}{
		{"Do's sandbox", func(*exec.Cmd) {}, true},
		{"the gofer: no user namespace", func(c *exec.Cmd) { noUserNS(c.SysProcAttr) }, true},
		{"maps but no user namespace", func(c *exec.Cmd) { c.SysProcAttr.Cloneflags &^= unix.CLONE_NEWUSER }, false},
		{"foreground", func(c *exec.Cmd) { c.SysProcAttr.Foreground = true }, false},
		{"shared descriptor table", func(c *exec.Cmd) { c.SysProcAttr.Cloneflags |= unix.CLONE_FILES }, false},
		{"own maps", func(c *exec.Cmd) {
			c.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 100000, Size: 65536}}
		}, false},
		{"setgroups allowed", func(c *exec.Cmd) { c.SysProcAttr.GidMappingsEnableSetgroups = true }, false},
		{"credential", func(c *exec.Cmd) { c.SysProcAttr.Credential = &syscall.Credential{} }, false},
		{"stdin a reader", func(c *exec.Cmd) { c.Stdin = strings.NewReader("") }, false},
		{"directory", func(c *exec.Cmd) { c.Dir = "/" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, _ := spawnCmd(t, "true")
			tc.change(cmd)
			if got := canSpawn(cmd); got != tc.want {
				t.Errorf("canSpawn = %v, want %v", got, tc.want)
			}
		})
	}
}
