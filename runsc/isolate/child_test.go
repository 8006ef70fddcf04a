package isolate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests in this file re-execute the test binary: the child named by
// childEnv confines itself and then does something the test judges from
// the outside (its exit status, its signal, what it printed).

const childEnv = "MOAT_ISOLATE_TEST_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		fn, ok := children[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown child %q\n", name)
			os.Exit(3)
		}
		if err := fn(); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", name, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var children = map[string]func() error{
	"allow":          childAllow,
	"deny-openat":    childDenyOpenat,
	"deny-prebuilt":  childDenyPrebuilt,
	"deny-execve":    childDenyExecve,
	"deny-tsync":     childDenyOtherThread,
	"trap":           childTrap,
	"log":            childLog,
	"gofer":          childGofer,
	"pivot":          childPivot,
	"caps":           func() error { return childCaps(nil) },
	"caps-keep":      func() error { return childCaps([]uintptr{unix.CAP_SYS_PTRACE}) },
	"caps-partial":   childCapsPartial,
	"caps-none-left": childCapsNothingToDrop,
	"nnp":            childNNP,
	"nnp-by-tsync":   childNNPByTsync,
	"caps-ambient":   childCapsAmbient,
	"limit-bset":     childLimitBoundingSet,
	"print-caps":     childPrintCaps,
	"pivot-then-all": childPivotThenAll,
	"clear-caps":     childClearCaps,
	"pivot-async":    childPivotAsync,
}

// runChild runs child name and returns its wait status and output.
func runChild(t *testing.T, name string, attr *syscall.SysProcAttr) (syscall.WaitStatus, string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if !AllThreadsSupported() {
		t.Skip("cgo is linked in (-race?): per-thread state cannot be set on all threads")
	}
	ws, out, err := startChild(name, attr)
	if err != nil {
		t.Fatal(err)
	}
	return ws, out
}

// startChild is runChild, from any goroutine.
func startChild(name string, attr *syscall.SysProcAttr) (syscall.WaitStatus, string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	cmd.SysProcAttr = attr
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, "", fmt.Errorf("running child %s: %v", name, err)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus), out.String(), nil
}

func wantExit0(t *testing.T, ws syscall.WaitStatus, out string) {
	t.Helper()
	if !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("child: status %v, want exit 0; output:\n%s", ws, out)
	}
}

func wantSIGSYS(t *testing.T, ws syscall.WaitStatus, out string) {
	t.Helper()
	if !ws.Signaled() || ws.Signal() != unix.SIGSYS {
		t.Fatalf("child: status %v, want killed by SIGSYS; output:\n%s", ws, out)
	}
}

func TestSeccompAllowedCallsWork(t *testing.T) {
	ws, out := runChild(t, "allow", nil)
	wantExit0(t, ws, out)
	if !strings.Contains(out, "allowed ok") {
		t.Errorf("child output %q lacks its report", out)
	}
}

func TestSeccompKills(t *testing.T) {
	for _, name := range []string{"deny-openat", "deny-prebuilt", "deny-execve", "deny-tsync", "gofer"} {
		t.Run(name, func(t *testing.T) {
			ws, out := runChild(t, name, nil)
			wantSIGSYS(t, ws, out)
		})
	}
}

// TestPrebuildReportsBuildErrors checks that a filter that cannot be
// built is reported by install, which then installs nothing.
func TestPrebuildReportsBuildErrors(t *testing.T) {
	install := Prebuild(&Filter{Rules: SentryRules()}) // no default action
	if err := install(); err == nil || !strings.Contains(err.Error(), "building seccomp filter") {
		t.Fatalf("install: %v, want the build's error", err)
	}
}

func TestSeccompTrapMode(t *testing.T) {
	ws, out := runChild(t, "trap", nil)
	// The Go runtime turns the SIGSYS into a crash report (exit 2) that
	// names the signal and the call site.
	if !ws.Exited() || ws.ExitStatus() != 2 {
		t.Fatalf("status %v, want exit 2 from the runtime's crash; output:\n%s", ws, out)
	}
	for _, want := range []string{"SIGSYS: bad system call", "Getpgid"} {
		if !strings.Contains(out, want) {
			t.Errorf("crash report lacks %q:\n%s", want, out)
		}
	}
}

func TestSeccompLogMode(t *testing.T) {
	ws, out := runChild(t, "log", nil)
	// The unlisted getpgid ran; the explicitly denied openat still killed.
	if !strings.Contains(out, "getpgid ran") {
		t.Errorf("unlisted syscall did not run in log mode; output:\n%s", out)
	}
	wantSIGSYS(t, ws, out)
}

// TestStartPivotToEmptyRoot checks the sandbox's order: capabilities
// cleared while the old root is detached by a child, then Wait.
func TestStartPivotToEmptyRoot(t *testing.T) {
	attrs := map[string]*syscall.SysProcAttr{
		"caller's user namespace": {Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS},
		"own user namespace": {
			Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWUTS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		},
	}
	for name, attr := range attrs {
		t.Run(name, func(t *testing.T) {
			ws, out := runChild(t, "pivot-async", attr)
			wantExit0(t, ws, out)
		})
	}
}

func TestPivotToEmptyRoot(t *testing.T) {
	ws, out := runChild(t, "pivot", &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS})
	wantExit0(t, ws, out)
	// The host's mounts are untouched.
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Errorf("host /proc after the child's pivot: %v", err)
	}
}

// TestFullConfinement runs the Sentry's whole sequence (pivot, no_new_privs,
// capabilities, seccomp) in a child and checks Go keeps working after it.
func TestFullConfinement(t *testing.T) {
	ws, out := runChild(t, "pivot-then-all", &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS})
	wantExit0(t, ws, out)
	if !strings.Contains(out, "confined") {
		t.Errorf("child output %q lacks its report", out)
	}
}

func TestDropCapabilities(t *testing.T) {
	attr := &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS}
	t.Run("all", func(t *testing.T) {
		ws, out := runChild(t, "caps", attr)
		wantExit0(t, ws, out)
	})
	t.Run("keep ptrace", func(t *testing.T) {
		ws, out := runChild(t, "caps-keep", attr)
		wantExit0(t, ws, out)
	})
	t.Run("some already gone", func(t *testing.T) {
		ws, out := runChild(t, "caps-partial", attr)
		wantExit0(t, ws, out)
	})
	t.Run("nothing to drop", func(t *testing.T) {
		// Started from a thread whose bounding set is the child's
		// keep, as runsc do starts a gofer that serves "/".
		if os.Getuid() != 0 || !AllThreadsSupported() {
			t.Skip("needs root and all-threads calls")
		}
		if _, _, inh, err := threadCaps(); err != nil || inh != 0 {
			t.Skipf("the test runs with inheritable capabilities (%#x, %v): its child would too", inh, err)
		}
		keep := []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH}
		var ws syscall.WaitStatus
		var out string
		err := onLimitedThread(keep, func() (err error) {
			ws, out, err = startChild("caps-none-left", attr)
			return err
		})
		if errors.Is(err, unix.EPERM) {
			t.Skipf("the bounding set cannot be limited here: %v", err)
		} else if err != nil {
			t.Fatal(err)
		}
		wantExit0(t, ws, out)
	})
}

// TestInstallSetsNoNewPrivsEverywhere checks that Install, which sets
// no_new_privs on its own thread only, leaves it set on every thread (the
// kernel's TSYNC copies it along with the filter).
// TestClearCapabilities checks that ClearCapabilities leaves every thread
// with empty effective, permitted, inheritable and ambient sets and that
// an execve as root afterwards brings none back, as the sandbox process
// is confined, in its own user namespace and in the caller's.
func TestClearCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name string
		attr *syscall.SysProcAttr
	}{
		{"caller's user namespace", &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS}},
		{"own user namespace", &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWUTS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, out := runChild(t, "clear-caps", tc.attr)
			wantExit0(t, ws, out)
			if !strings.Contains(out, "cleared") {
				t.Errorf("child output %q lacks its report", out)
			}
		})
	}
}

func TestInstallSetsNoNewPrivsEverywhere(t *testing.T) {
	ws, out := runChild(t, "nnp-by-tsync", nil)
	wantExit0(t, ws, out)
}

// TestDropCapabilitiesClearsAmbient raises an ambient capability on every
// thread first: DropCapabilities must leave none (its capset empties the
// inheritable set, which takes the ambient set with it).
func TestDropCapabilitiesClearsAmbient(t *testing.T) {
	ws, out := runChild(t, "caps-ambient", &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS})
	wantExit0(t, ws, out)
}

// TestLimitBoundingSet checks that a process started from a thread that
// limited its bounding set has only the kept capabilities in every set,
// in and out of a new user namespace (where the kernel gives it a full
// bounding set back), and that the rest of the caller keeps its own.
func TestLimitBoundingSet(t *testing.T) {
	ws, out := runChild(t, "limit-bset", nil)
	wantExit0(t, ws, out)
}

func TestSetNoNewPrivs(t *testing.T) {
	ws, out := runChild(t, "nnp", nil)
	wantExit0(t, ws, out)
}

// startThreads makes sure the process has several OS threads, some of
// them locked, as a Go program does, before it confines itself.
func startThreads(n int) (stop func()) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			wg.Done()
			<-done
		}()
	}
	wg.Wait()
	return func() { close(done) }
}

func childAllow() error {
	stop := startThreads(4)
	defer stop()
	if err := Install(SentryFilter(ModeKill)); err != nil {
		return err
	}
	// Exercise the runtime: goroutines, channels, timers, GC, large
	// allocations, pipes and the poller, stat of a held fd.
	var wg sync.WaitGroup
	sum := make(chan int, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b := make([]byte, 1<<20)
			b[i] = byte(i)
			time.Sleep(time.Millisecond)
			sum <- int(b[i])
		}(i)
	}
	wg.Wait()
	runtime.GC()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	go func() { w.Write([]byte("ping")); w.Close() }()
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	if _, err := r.Read(buf); err != nil || string(buf) != "ping" {
		return fmt.Errorf("pipe read: %q, %v", buf, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(1, &st); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	if err := unix.Fstatat(1, "", &st, unix.AT_EMPTY_PATH); err != nil {
		return fmt.Errorf("newfstatat(AT_EMPTY_PATH): %w", err)
	}
	fmt.Printf("allowed ok pid %d\n", os.Getpid())
	return nil
}

func childDenyOpenat() error {
	if err := Install(SentryFilter(ModeKill)); err != nil {
		return err
	}
	fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
	return fmt.Errorf("openat returned fd %d, err %v: the filter did not kill", fd, err)
}

// childDenyPrebuilt installs the filter Prebuild compiled, from a thread
// other than the one that asked for it.
func childDenyPrebuilt() error {
	install := Prebuild(SentryFilter(ModeKill))
	errc := make(chan error)
	go func() { errc <- install() }()
	if err := <-errc; err != nil {
		return err
	}
	fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
	return fmt.Errorf("openat returned fd %d, err %v: the filter did not kill", fd, err)
}

func childDenyExecve() error {
	if err := Install(SentryFilter(ModeKill)); err != nil {
		return err
	}
	err := unix.Exec("/bin/true", []string{"true"}, nil)
	return fmt.Errorf("execve returned %v: the filter did not kill", err)
}

// childDenyOtherThread installs from one thread and makes the forbidden
// call from a thread that existed before, which TSYNC must cover.
func childDenyOtherThread() error {
	ready := make(chan struct{})
	goOn := make(chan struct{})
	res := make(chan error)
	go func() {
		runtime.LockOSThread()
		close(ready)
		<-goOn
		_, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
		res <- err
	}()
	<-ready
	runtime.LockOSThread()
	if err := Install(SentryFilter(ModeKill)); err != nil {
		return err
	}
	close(goOn)
	return fmt.Errorf("openat on another thread returned %v: TSYNC did not cover it", <-res)
}

func childTrap() error {
	if err := Install(SentryFilter(ModeTrap)); err != nil {
		return err
	}
	_, err := unix.Getpgid(0)
	return fmt.Errorf("getpgid returned %v under a trap filter", err)
}

func childLog() error {
	if err := Install(SentryFilter(ModeLog)); err != nil {
		return err
	}
	if _, err := unix.Getpgid(0); err != nil {
		return fmt.Errorf("getpgid in log mode: %w", err)
	}
	fmt.Println("getpgid ran")
	fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
	return fmt.Errorf("openat returned fd %d, err %v: denials must kill in log mode too", fd, err)
}

func childGofer() error {
	if err := Install(GoferFilter(ModeKill, os.Getpid())); err != nil {
		return err
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("read-only openat under the gofer filter: %w", err)
	}
	unix.Close(fd)
	fd, err = unix.Open(filepath.Join(os.TempDir(), "moat-gofer-filter"), unix.O_WRONLY|unix.O_CREAT, 0o600)
	return fmt.Errorf("openat for writing returned fd %d, err %v under the gofer filter", fd, err)
}

func childPivot() error {
	// A descriptor opened before the pivot keeps working.
	before, err := os.Open("/etc/passwd")
	if err != nil {
		return err
	}
	defer before.Close()
	if err := PivotToEmptyRoot(); err != nil {
		return err
	}
	return checkEmptyRoot(before)
}

// childPivotAsync pivots as runsc boot does: it clears its capabilities
// while the old root is being detached, and only then waits for that.
func childPivotAsync() error {
	stop := startThreads(3)
	defer stop()
	before, err := os.Open("/etc/passwd")
	if err != nil {
		return err
	}
	defer before.Close()
	p, err := StartPivotToEmptyRoot()
	if err != nil {
		return err
	}
	if err := SetNoNewPrivs(); err != nil {
		return err
	}
	if err := ClearCapabilities(); err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return err
	}
	// The root stays read-only and empty with no capability left.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND, ""); !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("remounting the root read-write without capabilities: %v, want EPERM", err)
	}
	return checkEmptyRoot(before)
}

// checkEmptyRoot checks that the process's root is an empty read-only
// tmpfs, its current directory too, nothing of the host is reachable,
// and before, opened earlier, still reads.
func checkEmptyRoot(before *os.File) error {
	var st unix.Stat_t
	if err := unix.Stat("./etc", &st); !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("stat ./etc after pivot: %v, want ENOENT", err)
	}
	if ents, err := os.ReadDir("."); err != nil || len(ents) != 0 {
		return fmt.Errorf("current directory holds %v (err %v), want nothing", ents, err)
	}
	for _, p := range []string{"/etc/passwd", "/proc/self/status", "/../etc/passwd", "/proc"} {
		if _, err := os.Open(p); !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("open %s after pivot: %v, want ENOENT", p, err)
		}
	}
	if err := unix.Mkdir("/x", 0o755); !errors.Is(err, unix.EROFS) {
		return fmt.Errorf("mkdir /x: %v, want EROFS", err)
	}
	if _, err := os.Create("/f"); !errors.Is(err, unix.EROFS) {
		return fmt.Errorf("create /f: %v, want EROFS", err)
	}
	ents, err := os.ReadDir("/")
	if err != nil || len(ents) != 0 {
		return fmt.Errorf("new root holds %v (err %v), want nothing", ents, err)
	}
	var root, dotdot unix.Stat_t
	if err := unix.Stat("/", &root); err != nil {
		return err
	}
	if err := unix.Stat("/..", &dotdot); err != nil {
		return err
	}
	if root.Ino != dotdot.Ino || root.Dev != dotdot.Dev {
		return errors.New("/.. is not /")
	}
	if wd, err := os.Getwd(); err != nil || wd != "/" {
		return fmt.Errorf("cwd %q (%v), want /", wd, err)
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs("/", &sfs); err != nil {
		return err
	}
	if sfs.Type != unix.TMPFS_MAGIC || sfs.Flags&unix.ST_RDONLY == 0 {
		return fmt.Errorf("root fs type %#x flags %#x, want read-only tmpfs", sfs.Type, sfs.Flags)
	}
	b := make([]byte, 4)
	if _, err := before.Read(b); err != nil {
		return fmt.Errorf("reading a file opened before the pivot: %w", err)
	}
	return nil
}

// childPivotThenAll runs the Sentry's whole confinement sequence in the
// order runsc boot uses: pivot, capabilities, seccomp.
func childPivotThenAll() error {
	stop := startThreads(3)
	defer stop()
	if err := PivotToEmptyRoot(); err != nil {
		return err
	}
	if err := SetNoNewPrivs(); err != nil {
		return err
	}
	if err := DropCapabilities(); err != nil {
		return err
	}
	if err := Install(SentryFilter(ModeKill)); err != nil {
		return err
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	fmt.Println("confined")
	return nil
}

// taskStatusField returns field from /proc/self/task/*/status for every
// thread.
func taskStatusField(field string) ([]string, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var vals []string
	for _, tk := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + tk.Name() + "/status")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				vals = append(vals, strings.TrimSpace(v))
			}
		}
	}
	if len(vals) < 2 {
		return nil, fmt.Errorf("%s found for %d threads, want several", field, len(vals))
	}
	return vals, nil
}

// childCapsNothingToDrop is childCaps for a process started with keep
// already, from a thread whose bounding set was keep: it must make no
// all-threads call.
func childCapsNothingToDrop() error {
	stop := startThreads(3)
	defer stop()
	keep := []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH}
	before := allThreadsCalls.Load()
	if err := DropCapabilities(keep...); err != nil {
		return err
	}
	if n := allThreadsCalls.Load() - before; n != 0 {
		return fmt.Errorf("%d all-threads calls with nothing to drop", n)
	}
	return checkCaps(keep)
}

func childCaps(keep []uintptr) error {
	stop := startThreads(3)
	defer stop()
	if err := DropCapabilities(keep...); err != nil {
		return err
	}
	return checkCaps(keep)
}

// checkCaps checks that every thread has the capabilities in keep and no
// other, and that no thread can use CAP_SYS_ADMIN.
func checkCaps(keep []uintptr) error {
	var want uint64
	for _, c := range keep {
		want |= 1 << c
	}
	for field, w := range map[string]uint64{"CapEff": want, "CapPrm": want, "CapBnd": want, "CapInh": 0, "CapAmb": 0} {
		vals, err := taskStatusField(field)
		if err != nil {
			return err
		}
		for _, v := range vals {
			got, err := strconv.ParseUint(v, 16, 64)
			if err != nil || got != w {
				return fmt.Errorf("%s = %s on a thread, want %x", field, v, w)
			}
		}
	}
	// Every thread, not just this one, lost CAP_SYS_ADMIN.
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() { errs <- unix.Sethostname([]byte("moat-test")) }()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("sethostname after dropping capabilities: %v, want EPERM", err)
		}
	}
	return nil
}

func childNNP() error {
	stop := startThreads(3)
	defer stop()
	if err := SetNoNewPrivs(); err != nil {
		return err
	}
	return nnpEverywhere("")
}

// nnpEverywhere checks that every thread has no_new_privs set; when
// (" after X") ends the error.
func nnpEverywhere(when string) error {
	vals, err := taskStatusField("NoNewPrivs")
	if err != nil {
		return err
	}
	for _, v := range vals {
		if v != "1" {
			return fmt.Errorf("NoNewPrivs = %s on a thread%s", v, when)
		}
	}
	return nil
}

// childCapsPartial drops a few capabilities from the bounding set first, as
// a runsc started with a reduced set has, so DropCapabilities skips them:
// every thread must still end with only what it keeps.
func childCapsPartial() error {
	for _, c := range []uintptr{unix.CAP_SYS_TIME, unix.CAP_CHOWN, unix.CAP_BPF} {
		if err := allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0, 0, 0, 0); err != nil {
			return err
		}
	}
	return childCaps([]uintptr{unix.CAP_SYS_PTRACE})
}

// allowAll is a filter that lets everything through, for tests of what
// installing a filter does besides filtering.
var allowAll = &Filter{Rules: Rules{unix.SYS_GETPID: Allow}, Default: ActionAllow}

func childNNPByTsync() error {
	stop := startThreads(3)
	defer stop()
	if v, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); v != 0 {
		return errors.New("no_new_privs already set before Install")
	}
	if err := Install(allowAll); err != nil {
		return err
	}
	return nnpEverywhere(" after Install")
}

func childCapsAmbient() error {
	// An ambient capability must be permitted and inheritable: raise
	// CAP_NET_RAW's inheritable bit on every thread (keeping what is
	// permitted now), then make it ambient on every thread.
	prm, err := taskStatusField("CapPrm")
	if err != nil {
		return err
	}
	all, err := strconv.ParseUint(prm[0], 16, 64)
	if err != nil {
		return err
	}
	if err := capsetAllThreads(all, all, 1<<unix.CAP_NET_RAW); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, unix.CAP_NET_RAW, 0, 0, 0); err != nil {
		return fmt.Errorf("raising an ambient capability: %w", err)
	}
	vals, err := taskStatusField("CapAmb")
	if err != nil {
		return err
	}
	if got, _ := strconv.ParseUint(vals[0], 16, 64); got != 1<<unix.CAP_NET_RAW {
		return fmt.Errorf("CapAmb = %s before the drop, want CAP_NET_RAW", vals[0])
	}
	return childCaps([]uintptr{unix.CAP_NET_RAW})
}

// childPrintCaps prints its capability sets, as a process started by
// childLimitBoundingSet sees them.
func childPrintCaps() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Cap") {
			fmt.Println(line)
		}
	}
	return nil
}

// onLimitedThread runs f on a thread of its own whose bounding set
// LimitBoundingSet has limited to keep, as runsc starts its gofer, and
// returns LimitBoundingSet's error or f's. The thread ends afterwards.
func onLimitedThread(keep []uintptr, f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := LimitBoundingSet(keep...); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	return <-done
}

func childLimitBoundingSet() error {
	keep := []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	want := fmt.Sprintf("%016x", uint64(1<<unix.CAP_SYS_ADMIN|1<<unix.CAP_SETPCAP))
	full := fmt.Sprintf("%016x", ^uint64(0)>>(63-unix.CAP_LAST_CAP))
	start := func(userns bool) (out string, err error) {
		err = onLimitedThread(keep, func() error {
			cmd := exec.Command("/proc/self/exe", "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=print-caps")
			if userns {
				cmd.SysProcAttr = &syscall.SysProcAttr{
					Cloneflags:  unix.CLONE_NEWUSER,
					UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
					GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
				}
			}
			b, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, b)
			}
			out = string(b)
			return nil
		})
		return out, err
	}
	got, err := start(false)
	if err != nil {
		return err
	}
	for _, set := range []string{"CapPrm", "CapEff", "CapBnd"} {
		if !strings.Contains(got, set+":\t"+want+"\n") {
			return fmt.Errorf("child of a limited thread: %s not %s:\n%s", set, want, got)
		}
	}
	got, err = start(true)
	if err != nil {
		return err
	}
	if !strings.Contains(got, "CapBnd:\t"+full+"\n") {
		return fmt.Errorf("child in a new user namespace: bounding set not full (%s):\n%s", full, got)
	}
	// This thread, and so the process's other threads, kept the full set.
	if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_TIME, 0, 0, 0); err != nil || in != 1 {
		return fmt.Errorf("the caller lost CAP_SYS_TIME from its bounding set: %d, %v", in, err)
	}
	return nil
}

// childClearCaps makes an ambient capability first (ClearCapabilities
// must take it too), clears the capabilities, and checks every thread's
// sets, that no thread can use one, and that a root execve gains none.
func childClearCaps() error {
	stop := startThreads(3)
	defer stop()
	prm, err := taskStatusField("CapPrm")
	if err != nil {
		return err
	}
	all, err := strconv.ParseUint(prm[0], 16, 64)
	if err != nil {
		return err
	}
	if err := capsetAllThreads(all, all, 1<<unix.CAP_NET_RAW); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, unix.CAP_NET_RAW, 0, 0, 0); err != nil {
		return fmt.Errorf("raising an ambient capability: %w", err)
	}
	if err := SetNoNewPrivs(); err != nil {
		return err
	}
	if err := ClearCapabilities(); err != nil {
		return err
	}
	for _, field := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb"} {
		vals, err := taskStatusField(field)
		if err != nil {
			return err
		}
		for _, v := range vals {
			if got, err := strconv.ParseUint(v, 16, 64); err != nil || got != 0 {
				return fmt.Errorf("%s = %s on a thread, want 0", field, v)
			}
		}
	}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() { errs <- unix.Sethostname([]byte("moat-test")) }()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("sethostname after clearing capabilities: %v, want EPERM", err)
		}
	}
	// The securebits are locked: they cannot be cleared again.
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, 0, 0, 0, 0); err == nil {
		return errors.New("securebits could be cleared after ClearCapabilities")
	}
	// Root's execve (uid 0 here) grants nothing: the bounding set is
	// full, but no_new_privs and SECBIT_NOROOT keep it out.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=print-caps")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec after clearing: %v: %s", err, out)
	}
	for _, set := range []string{"CapPrm", "CapEff", "CapInh", "CapAmb"} {
		if !strings.Contains(string(out), set+":\t0000000000000000\n") {
			return fmt.Errorf("exec as root after clearing gained capabilities:\n%s", out)
		}
	}
	fmt.Println("cleared")
	return nil
}
