package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/isolate"
	"golang.org/x/sys/unix"
)

func init() {
	// The main goroutine keeps the main thread: a goroutine that ends
	// locked to a thread (children's) ends the thread, but would wedge
	// the main thread instead, in whatever namespace it had joined
	// (TestDoSharedNetNS looks for threads left in one).
	runtime.LockOSThread()
}

func TestMain(m *testing.M) {
	if os.Getenv(jobControlEnv) != "" {
		os.Unsetenv(jobControlEnv)
		os.Exit(jobControlHelper())
	}
	if os.Getenv(fakeEnv) != "" && !slices.ContainsFunc(os.Args[1:], func(a string) bool {
		return strings.HasPrefix(a, "-test.") // a fuzzing worker, not the fake runsc
	}) {
		os.Exit(fakeRunsc(os.Args[1:]))
	}
	os.Setenv(fakeEnv, "1")
	os.Exit(m.Run())
}

// run calls Do with the fake runsc and returns the status and the
// sandbox's stdout and stderr.
func run(t *testing.T, ctx context.Context, o Options) (int, string, string, error) {
	t.Helper()
	skipUnlessConfinable(t)
	o.Exe = os.Args[0]
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	o.Stdin, o.Stdout, o.Stderr = devnull, outW, errW
	var wg sync.WaitGroup
	var stdout, stderr []byte
	wg.Add(2)
	go func() { defer wg.Done(); stdout, _ = io.ReadAll(outR) }()
	go func() { defer wg.Done(); stderr, _ = io.ReadAll(errR) }()
	status, err := Do(ctx, o)
	outW.Close()
	errW.Close()
	wg.Wait()
	return status, string(stdout), string(stderr), err
}

func skipUnlessConfinable(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if !isolate.AllThreadsSupported() {
		t.Skip("cgo is linked in (-race?): the children cannot confine themselves")
	}
}

func testRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "motd"), []byte("inside the sandbox\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDoStatus(t *testing.T) {
	for _, userns := range []bool{true, false} {
		name := "userns"
		if !userns {
			name = "no userns"
		}
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				argv []string
				want int
			}{
				{[]string{"exit", "0"}, 0},
				{[]string{"exit", "3"}, 3},
				{[]string{"exit", "255"}, 255},
				// The filter kills the sandbox on open: 128+SIGSYS.
				{[]string{"open"}, 128 + int(unix.SIGSYS)},
			} {
				t.Run(strings.Join(tc.argv, " "), func(t *testing.T) {
					status, _, stderr, err := run(t, context.Background(), Options{Argv: tc.argv, NoUserNS: !userns})
					if err != nil {
						t.Fatal(err)
					}
					if status != tc.want {
						t.Errorf("status %d, want %d; stderr:\n%s", status, tc.want, stderr)
					}
				})
			}
		})
	}
}

// TestDoDetach checks that Detach returns the status the sandbox reports
// without waiting for its teardown (the fake lingers fakeTeardown after
// reporting), falls back on the exit status when there is no report, and
// that the children are still killed and reaped.
func TestDoDetach(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"exit", "0"}, 0},
		{[]string{"exit", "3"}, 3},
		{[]string{"exit", "255"}, 255},
		// Killed by the filter: no report, the status of its death.
		{[]string{"open"}, 128 + int(unix.SIGSYS)},
	} {
		t.Run(strings.Join(tc.argv, " "), func(t *testing.T) {
			start := time.Now()
			status, err := Do(context.Background(), Options{
				Argv:   tc.argv,
				Exe:    os.Args[0],
				Stdout: devNull(t),
				Stderr: devNull(t),
				Detach: true,
			})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if status != tc.want {
				t.Errorf("status %d, want %d", status, tc.want)
			}
			if took >= fakeTeardown {
				t.Errorf("Do took %v: it waited for the sandbox's teardown", took)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(childPIDs(t)) != 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if kids := childPIDs(t); len(kids) != 0 {
				t.Errorf("processes left behind: %v", kids)
			}
		})
	}
}

// devNull opens /dev/null for writing, closed with the test.
func devNull(t *testing.T) *os.File {
	t.Helper()
	skipUnlessConfinable(t)
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestDoSelfTestOpen(t *testing.T) {
	status, _, stderr, err := run(t, context.Background(), Options{Argv: []string{"exit", "0"}, SelfTestOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	if status != 128+int(unix.SIGSYS) {
		t.Errorf("status %d, want %d (killed by SIGSYS); stderr:\n%s", status, 128+int(unix.SIGSYS), stderr)
	}
}

func TestDoServesRootThroughGofer(t *testing.T) {
	root := testRoot(t)
	for _, userns := range []bool{true, false} {
		status, stdout, stderr, err := run(t, context.Background(), Options{
			Rootfs:   root,
			Argv:     []string{"cat", "/etc/motd"},
			NoUserNS: !userns,
		})
		if err != nil {
			t.Fatal(err)
		}
		if status != 0 || stdout != "inside the sandbox\n" {
			t.Errorf("userns=%v: status %d, stdout %q; stderr:\n%s", userns, status, stdout, stderr)
		}
	}
	// A relative root is taken from the current directory.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, root)
	if err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr, err := run(t, context.Background(), Options{Rootfs: rel, Argv: []string{"cat", "/etc/motd"}})
	if err != nil || status != 0 || stdout != "inside the sandbox\n" {
		t.Errorf("relative root %s: status %d, err %v, stdout %q; stderr:\n%s", rel, status, err, stdout, stderr)
	}
	// A path outside the root is not found (the gofer is pivoted into it).
	status, _, stderr, err = run(t, context.Background(), Options{Rootfs: root, Argv: []string{"cat", "/etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	if status != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("cat of a host-only file: status %d, stderr:\n%s", status, stderr)
	}
}

func TestDoNamespaces(t *testing.T) {
	for _, userns := range []bool{true, false} {
		status, stdout, stderr, err := run(t, context.Background(), Options{Argv: []string{"whoami"}, NoUserNS: !userns})
		if err != nil || status != 0 {
			t.Fatalf("status %d, err %v; stderr:\n%s", status, err, stderr)
		}
		// pgrp 1: the sandbox leads a process group of its own, so a
		// terminal's ^C reaches only runsc, which forwards it once.
		if !strings.HasPrefix(stdout, "pid=1 uid=0 pgrp=1 ") {
			t.Errorf("sandbox sees %q, want pid 1, uid 0 and its own process group", stdout)
		}
		for _, ns := range []string{"mnt", "pid", "ipc", "uts", "net", "user"} {
			own, err := os.Readlink("/proc/self/ns/" + ns)
			if err != nil {
				t.Fatal(err)
			}
			shared := strings.Contains(stdout, " "+ns+"="+own)
			if want := ns == "user" && !userns; shared != want {
				t.Errorf("userns=%v: sandbox in the caller's %s namespace: %v, want %v (%s)", userns, ns, shared, want, stdout)
			}
		}
	}
}

// threadsInNetNS lists the threads of this process whose network
// namespace is ns (as /proc/[tid]/ns/net reads). Threads that end while
// being read are left out.
func threadsInNetNS(ns string) []string {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return []string{"/proc/self/task: " + err.Error()}
	}
	var out []string
	for _, e := range ents {
		if got, err := os.Readlink("/proc/self/task/" + e.Name() + "/ns/net"); err == nil && got == ns {
			out = append(out, e.Name())
		}
	}
	return out
}

// awaitNoThreadInNetNS waits (up to 10 s: the threads Do moved there
// move back, or end, just after Do returns) until no thread of this
// process is in network namespace ns, and returns those still there.
func awaitNoThreadInNetNS(ns string) []string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := threadsInNetNS(ns)
		if len(in) == 0 || time.Now().After(deadline) {
			return in
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDoSharedNetNS checks that the sandbox and the gofer share one new
// network namespace (children), with and without a user namespace for
// the sandbox, and that afterwards no thread of the caller is left in it
// (an unlocked thread there would run any goroutine in the wrong
// namespace; the main thread, which a goroutine ending locked would
// wedge rather than end, is kept by init).
func TestDoSharedNetNS(t *testing.T) {
	t.Setenv("MOAT_FAKE_GOFER", "netns")
	skipUnlessConfinable(t)
	// The check sees a thread in another namespace, and not once it has
	// moved back.
	moved := make(chan string)
	release := make(chan struct{})
	back := make(chan error)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			moved <- ""
			return // the thread ends with the goroutine
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			moved <- ""
			return
		}
		ns, _ := os.Readlink("/proc/thread-self/ns/net")
		moved <- fmt.Sprint(unix.Gettid()) + " " + ns
		<-release
		err = unix.Setns(orig, unix.CLONE_NEWNET)
		if err == nil {
			runtime.UnlockOSThread()
		}
		back <- err
	}()
	tidNS := <-moved
	if tidNS == "" {
		t.Fatal("unshare(CLONE_NEWNET) failed")
	}
	tid, ns, _ := strings.Cut(tidNS, " ")
	in := threadsInNetNS(ns)
	close(release)
	if err := <-back; err != nil {
		t.Fatalf("setns back: %v", err)
	}
	if len(in) != 1 || in[0] != tid {
		t.Fatalf("threads in %s: %v, want %s alone", ns, in, tid)
	}
	if in := threadsInNetNS(ns); len(in) != 0 {
		t.Fatalf("threads in %s after the thread moved back: %v", ns, in)
	}
	own, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, userns := range []bool{true, false} {
		t.Run(fmt.Sprintf("userns=%v", userns), func(t *testing.T) {
			status, stdout, stderr, err := run(t, context.Background(), Options{Argv: []string{"whoami", "attach"}, NoUserNS: !userns})
			if err != nil || status != 0 {
				t.Fatalf("status %d, err %v; stderr:\n%s", status, err, stderr)
			}
			_, sandboxNS, _ := strings.Cut(stdout, " net=")
			sandboxNS, _, _ = strings.Cut(sandboxNS, " ")
			_, goferNS, _ := strings.Cut(stderr, "gofer net=")
			goferNS, _, _ = strings.Cut(goferNS, "\n")
			if sandboxNS == "" || sandboxNS == own || goferNS != sandboxNS {
				t.Fatalf("sandbox in %q, gofer in %q, runsc in %q: want one new namespace for both\nstdout: %s\nstderr: %s", sandboxNS, goferNS, own, stdout, stderr)
			}
			if in := awaitNoThreadInNetNS(sandboxNS); len(in) != 0 {
				t.Errorf("threads of Do's caller left in the sandbox's network namespace %s: %v", sandboxNS, in)
			}
		})
	}
}

// TestDoSandboxProcs checks that the sandbox confines itself with one P
// and then runs with runsc's GOMAXPROCS (SetProcs).
func TestDoSandboxProcs(t *testing.T) {
	status, stdout, stderr, err := run(t, context.Background(), Options{Argv: []string{"procs"}})
	if err != nil || status != 0 {
		t.Fatalf("status %d, err %v; stderr:\n%s", status, err, stderr)
	}
	if want := fmt.Sprintf("before=1 after=%d\n", runtime.GOMAXPROCS(0)); stdout != want {
		t.Errorf("sandbox reports %q, want %q", stdout, want)
	}
}

func TestDoPassesArguments(t *testing.T) {
	status, stdout, stderr, err := run(t, context.Background(), Options{
		Cwd:  "/tmp",
		Env:  []string{"A=1", "B=two words"},
		Argv: []string{"args", "--flag", "x y", "-"},
	})
	if err != nil || status != 0 {
		t.Fatalf("status %d, err %v; stderr:\n%s", status, err, stderr)
	}
	want := `cwd=/tmp env=["A=1" "B=two words" "PATH=` + DefaultPath + `"] argv=["args" "--flag" "x y" "-"]` + "\n"
	if stdout != want {
		t.Errorf("got %q, want %q", stdout, want)
	}
}

// startAsync runs Do in the background and returns a reader of the
// sandbox's stdout and the eventual result.
func startAsync(t *testing.T, ctx context.Context, o Options) (*bufio.Reader, <-chan int) {
	t.Helper()
	skipUnlessConfinable(t)
	o.Exe = os.Args[0]
	outR, outW, _ := os.Pipe()
	t.Cleanup(func() { outR.Close() })
	o.Stdout = outW
	o.Stdin, _ = os.Open(os.DevNull)
	res := make(chan int, 1)
	go func() {
		status, err := Do(ctx, o)
		outW.Close()
		if err != nil {
			t.Errorf("Do: %v", err)
		}
		res <- status
	}()
	return bufio.NewReader(outR), res
}

func waitReady(t *testing.T, r *bufio.Reader) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("sandbox said %q, %v; want ready", line, err)
	}
}

func TestDoForwardsSignals(t *testing.T) {
	r, res := startAsync(t, context.Background(), Options{Argv: []string{"wait-usr1"}})
	waitReady(t, r)
	// A signal to runsc itself reaches the sandbox.
	if err := unix.Kill(os.Getpid(), unix.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case status := <-res:
		if status != 42 {
			t.Errorf("status %d, want 42 (the sandbox got SIGUSR1)", status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sandbox did not exit")
	}
}

func TestDoCancelKillsSandbox(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, res := startAsync(t, ctx, Options{Argv: []string{"hang"}})
	waitReady(t, r)
	cancel()
	select {
	case status := <-res:
		if status != 128+int(unix.SIGKILL) {
			t.Errorf("status %d, want %d", status, 128+int(unix.SIGKILL))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sandbox did not exit")
	}
}

// childPIDs lists the processes whose parent is this process.
func childPIDs(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, tk := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + tk.Name() + "/children")
		all = append(all, strings.Fields(string(b))...)
	}
	return all
}

func TestDoKillsHangingGofer(t *testing.T) {
	t.Setenv("MOAT_FAKE_GOFER", "hang")
	status, _, stderr, err := run(t, context.Background(), Options{Argv: []string{"exit", "7"}})
	if err != nil || status != 7 {
		t.Fatalf("status %d, err %v; stderr:\n%s", status, err, stderr)
	}
	if kids := childPIDs(t); len(kids) != 0 {
		t.Errorf("processes left behind: %v", kids)
	}
}

func TestDoCleansUpOnErrors(t *testing.T) {
	t.Setenv("MOAT_FAKE_GOFER", "hang")
	tests := []struct {
		name string
		o    Options
		hook *func() error
	}{
		{"missing rootfs", Options{Rootfs: "/nonexistent", Argv: []string{"exit", "0"}}, nil},
		{"no command", Options{}, nil},
		{"empty command", Options{Argv: []string{""}}, nil},
		{"gofer fails to start", Options{Argv: []string{"exit", "0"}}, &beforeGoferStart},
		{"sandbox fails to start", Options{Argv: []string{"exit", "0"}}, &beforeBootStart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hook != nil {
				old := *tc.hook
				*tc.hook = func() error { return errors.New("injected failure") }
				defer func() { *tc.hook = old }()
			}
			_, _, _, err := run(t, context.Background(), tc.o)
			if err == nil {
				t.Fatal("Do succeeded")
			}
			if kids := childPIDs(t); len(kids) != 0 {
				t.Errorf("processes left behind: %v", kids)
			}
		})
	}
	t.Run("bad binary", func(t *testing.T) {
		o := Options{Argv: []string{"exit", "0"}, Exe: "/nonexistent/runsc"}
		if _, err := Do(context.Background(), o); err == nil {
			t.Fatal("Do succeeded")
		}
	})
}

func TestDoGlobalFlagsReachChildren(t *testing.T) {
	dir := t.TempDir()
	conf := config.Default()
	conf.Debug = true
	conf.DebugLog = dir
	status, _, stderr, err := run(t, context.Background(), Options{Config: conf, Argv: []string{"cat", "/etc/hostname"}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_ = status
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, ".gofer.log") || !strings.Contains(joined, ".boot.log") {
		t.Errorf("debug log directory holds %v, want a gofer and a boot log; stderr:\n%s", names, stderr)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "runsc.1.") {
			t.Errorf("log %s is named by the namespace pid, not the host pid", n)
		}
	}
}

func TestDoKeepsGivenPath(t *testing.T) {
	status, stdout, stderr, err := run(t, context.Background(), Options{
		Env:  []string{"PATH=/opt/bin"},
		Argv: []string{"args"},
	})
	if err != nil || status != 0 {
		t.Fatalf("status %d, err %v; stderr:\n%s", status, err, stderr)
	}
	if want := `cwd= env=["PATH=/opt/bin"] argv=["args"]` + "\n"; stdout != want {
		t.Errorf("got %q, want %q", stdout, want)
	}
}

// TestPtracePlatformConfined runs the real ptrace platform inside a
// sandbox process confined as runsc boot confines itself (empty root, no
// capabilities, the Sentry's seccomp filter), in and out of a user
// namespace.
func TestPtracePlatformConfined(t *testing.T) {
	for _, userns := range []bool{true, false} {
		status, stdout, stderr, err := run(t, context.Background(), Options{Argv: []string{"platform"}, NoUserNS: !userns})
		if err != nil {
			t.Fatal(err)
		}
		if status != 0 || stdout != "platform ok\n" {
			t.Errorf("userns=%v: status %d, stdout %q; stderr:\n%s", userns, status, stdout, stderr)
		}
	}
}

const jobControlEnv = "MOAT_SANDBOX_TEST_JOBCONTROL"

// jobControlHelper runs in a session of its own whose controlling terminal
// is its stdin, like a shell's foreground job: Do must hand the terminal to
// the sandbox and take it back afterwards.
func jobControlHelper() int {
	status, err := Do(context.Background(), Options{Exe: os.Args[0], Argv: []string{"tty-fg"}})
	if err != nil || status != 0 {
		fmt.Fprintf(os.Stderr, "Do: status %d, %v\n", status, err)
		return 1
	}
	fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	if err != nil || fg != unix.Getpgrp() {
		fmt.Fprintf(os.Stderr, "terminal not given back: foreground %d (%v), ours %d\n", fg, err, unix.Getpgrp())
		return 1
	}
	fmt.Println("restored")
	return 0
}

func TestDoForegroundOnTerminal(t *testing.T) {
	skipUnlessConfinable(t)
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), jobControlEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	out, _ := io.ReadAll(ptmx) // until the session ends (EIO)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v; output:\n%s", err, out)
	}
	text := strings.ReplaceAll(string(out), "\r", "")
	if !strings.Contains(text, "foreground=1 err=<nil>\n") {
		t.Errorf("the sandbox was not the terminal's foreground group; output:\n%s", text)
	}
	if !strings.Contains(text, "restored\n") {
		t.Errorf("the terminal was not given back; output:\n%s", text)
	}
}

func TestDoLogsAfterConfinement(t *testing.T) {
	status, _, stderr, err := run(t, context.Background(), Options{Argv: []string{"log"}})
	if err != nil {
		t.Fatal(err)
	}
	if status != 0 || !strings.Contains(stderr, "logging from a confined sandbox") {
		t.Errorf("status %d; stderr:\n%s", status, stderr)
	}
}
