// Package harness runs programs twice, natively and in a Moat sandbox, for
// the conformance and end-to-end tests under test/.
//
// The native run happens in fresh user (identity-mapped), mount, PID, UTS,
// IPC and network namespaces with the root file system remounted read-only, so the
// program sees what it sees in the sandbox: it is PID 1, a session leader,
// and writes to / fail with EROFS. The namespace set-up is done by the test
// binary itself, re-executed as the new namespaces' init: every test
// package using this one must call harness.Main from its TestMain.
//
// The sandboxed run is `runsc do --rootfs / -- PROG ARGS...`, with the
// runsc binary from $MOAT_RUNSC or built once from the repository.
//
// Environment knobs: MOAT_RUNSC (a prebuilt runsc), MOAT_CACHE (cache dir
// for built test programs), MOAT_NATIVE_ONLY=1 (skip sandboxed runs, for
// working on tests without a runsc), MOAT_RUNSC_FLAGS (extra global runsc
// flags, space separated, e.g. "--debug --strace").
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nativeInitEnv marks the re-executed test binary as a namespace init.
const nativeInitEnv = "MOAT_HARNESS_NATIVE_INIT"

// Main runs the test binary's tests, or, when the binary was re-executed by
// NativeCommand, sets up the namespaces and executes the program instead.
func Main(m *testing.M) {
	if os.Getenv(nativeInitEnv) != "" {
		nativeInit()
		// nativeInit never returns.
	}
	code := m.Run()
	if runscBuildDir != "" {
		os.RemoveAll(runscBuildDir)
	}
	os.Exit(code)
}

// NativeOnly reports whether sandboxed runs are to be skipped.
func NativeOnly() bool {
	return os.Getenv("MOAT_NATIVE_ONLY") == "1"
}

// RepoRoot returns the repository's top directory (the one with go.mod).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getwd: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// CacheDir returns the directory for built test artifacts: $MOAT_CACHE or
// the user cache directory's "moat" folder.
func CacheDir() (string, error) {
	if d := os.Getenv("MOAT_CACHE"); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	d := filepath.Join(base, "moat")
	return d, os.MkdirAll(d, 0o755)
}

var (
	runscOnce     sync.Once
	runscPath     string
	runscErr      error
	runscBuildDir string // removed when the test binary ends
)

// Runsc returns the path of the runsc binary: $MOAT_RUNSC if set, else one
// built (once per test binary) from the repository's ./runsc package.
func Runsc() (string, error) {
	runscOnce.Do(func() {
		if p := os.Getenv("MOAT_RUNSC"); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				runscErr = fmt.Errorf("MOAT_RUNSC=%s: %w", p, err)
				return
			}
			if _, err := os.Stat(abs); err != nil {
				runscErr = fmt.Errorf("MOAT_RUNSC: %w", err)
				return
			}
			runscPath = abs
			return
		}
		root, err := RepoRoot()
		if err != nil {
			runscErr = err
			return
		}
		cache, err := CacheDir()
		if err != nil {
			runscErr = err
			return
		}
		dir, err := os.MkdirTemp(cache, "runsc-")
		if err != nil {
			runscErr = fmt.Errorf("temp dir for runsc: %w", err)
			return
		}
		runscBuildDir = dir
		out := filepath.Join(dir, "runsc")
		cmd := exec.Command("go", "build", "-o", out, "./runsc")
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			runscErr = fmt.Errorf("go build ./runsc failed: %v\n%s", err, msg)
			return
		}
		runscPath = out
	})
	return runscPath, runscErr
}

// RequireRunsc returns the runsc path or ends the test: a failure when runsc
// cannot be had, a skip only with MOAT_NATIVE_ONLY=1.
func RequireRunsc(t testing.TB) string {
	t.Helper()
	if NativeOnly() {
		t.Skip("MOAT_NATIVE_ONLY=1: sandboxed run skipped")
	}
	p, err := Runsc()
	if err != nil {
		t.Fatalf("runsc is unavailable, so the sandboxed run cannot happen: %v", err)
	}
	return p
}

// Spec describes one program run.
type Spec struct {
	Argv    []string      // program and arguments; Argv[0] must be absolute
	Env     []string      // the program's whole environment
	Dir     string        // working directory ("" means /)
	Stdin   []byte        // standard input (nil means /dev/null)
	Timeout time.Duration // 0 means 60 s
}

// Result is what a run produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int // the exit status, 128+N for death by signal N, -1 if unknown
	TimedOut bool
	Err      error // a failure to start or wait, or the timeout
}

// String summarises a result for failure messages.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit %d", r.ExitCode)
	if r.TimedOut {
		b.WriteString(" (timed out)")
	}
	if r.Err != nil {
		fmt.Fprintf(&b, " err=%v", r.Err)
	}
	if len(r.Stderr) > 0 {
		fmt.Fprintf(&b, "\nstderr:\n%s", clip(r.Stderr, 4096))
	}
	return b.String()
}

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + fmt.Sprintf("\n... (%d more bytes)", len(b)-n)
}

// RunNative runs spec in fresh namespaces with a read-only root.
func RunNative(spec Spec) *Result {
	self, err := os.Executable()
	if err != nil {
		return &Result{ExitCode: -1, Err: fmt.Errorf("os.Executable: %w", err)}
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	cmd := exec.Command(self, spec.Argv...)
	cmd.Env = append([]string{nativeInitEnv + "=" + dir}, spec.Env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A fresh network namespace too: only a loopback device, as
		// with runsc's default --network=none.
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS |
			syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC |
			syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 4294967295}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 4294967295}},
		GidMappingsEnableSetgroups: true,
		Setsid:                     true,
		Pdeathsig:                  syscall.SIGKILL,
	}
	return run(cmd, spec, false)
}

// SandboxArgv returns the runsc command line that runs spec's program.
func SandboxArgv(runsc string, spec Spec) []string {
	argv := []string{runsc}
	if f := strings.Fields(os.Getenv("MOAT_RUNSC_FLAGS")); len(f) > 0 {
		argv = append(argv, f...)
	}
	// --read-only: the native run's root is read-only too.
	argv = append(argv, "do", "--read-only", "--rootfs", "/")
	if spec.Dir != "" {
		argv = append(argv, "--cwd", spec.Dir)
	}
	for _, e := range spec.Env {
		argv = append(argv, "--env", e)
	}
	argv = append(argv, "--")
	return append(argv, spec.Argv...)
}

// RunSandbox runs spec under `runsc do --rootfs /`. runsc's own
// environment is spec.Env too, so the program sees the same variables
// whether runsc passes its environment on or uses only --env.
func RunSandbox(runsc string, spec Spec) *Result {
	argv := SandboxArgv(runsc, spec)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = spec.Env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return run(cmd, spec, true)
}

func run(cmd *exec.Cmd, spec Spec, killGroup bool) *Result {
	timeout := spec.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	res := &Result{ExitCode: -1}
	if err := cmd.Start(); err != nil {
		res.Err = fmt.Errorf("start %s: %w", cmd.Path, err)
		return res
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		res.TimedOut = true
		if killGroup {
			_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		}
		_ = cmd.Process.Kill()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			err = errors.New("process did not go away after SIGKILL")
		}
	}
	res.Stdout = stdout.Bytes()
	res.Stderr = stderr.Bytes()
	if killGroup {
		// Leave nothing behind: gofer or sandbox children of runsc.
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	}
	if cmd.ProcessState != nil {
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			res.ExitCode = 128 + int(ws.Signal())
		}
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		res.Err = err
	}
	if res.TimedOut {
		res.Err = fmt.Errorf("timed out after %v", timeout)
	}
	return res
}

// nativeInit runs as PID 1 of the fresh namespaces: it makes the mount
// tree private, mounts a /proc for the new PID namespace, remounts the root
// read-only and executes the program with the environment minus its marker.
func nativeInit() {
	dir := os.Getenv(nativeInitEnv)
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "harness native init: "+format+"\n", args...)
		os.Exit(125)
	}
	if len(os.Args) < 2 {
		fail("no program given")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("make / private: %v", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fail("mount /proc: %v", err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err != nil {
		fail("statfs /: %v", err)
	}
	// Keep the flags the kernel locks for a mount inherited into a user
	// namespace; only add read-only.
	keep := map[int64]uintptr{
		unix.ST_NOSUID:     unix.MS_NOSUID,
		unix.ST_NODEV:      unix.MS_NODEV,
		unix.ST_NOEXEC:     unix.MS_NOEXEC,
		unix.ST_NOATIME:    unix.MS_NOATIME,
		unix.ST_NODIRATIME: unix.MS_NODIRATIME,
		unix.ST_RELATIME:   unix.MS_RELATIME,
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for stFlag, msFlag := range keep {
		if st.Flags&stFlag != 0 {
			flags |= msFlag
		}
	}
	if err := unix.Mount("/", "/", "", flags, ""); err != nil {
		fail("remount / read-only: %v", err)
	}
	// The one writable place, as in the sandbox: a fresh tmpfs at
	// /dev/shm, so programs never touch the host's.
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		fail("mount /dev/shm: %v", err)
	}
	if err := os.Chdir(dir); err != nil {
		fail("chdir %s: %v", dir, err)
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, nativeInitEnv+"=") {
			env = append(env, e)
		}
	}
	argv := os.Args[1:]
	if err := unix.Exec(argv[0], argv, env); err != nil {
		fail("exec %s: %v", argv[0], err)
	}
}

// Unavailable skips t because something it needs (a daemon, a package) is
// missing here, or fails it when MOAT_REQUIRE_ALL=1, as scripts/test.sh sets
// it: there setup-deps has installed everything, so a test that cannot run
// is a failure, never a silent skip.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("MOAT_REQUIRE_ALL") == "1" {
		t.Fatalf("cannot run (MOAT_REQUIRE_ALL=1): "+format, args...)
	}
	t.Skipf(format, args...)
}
