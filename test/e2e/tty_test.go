package e2e

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// TestInteractiveTerminal drives an interactive busybox shell in a
// container whose process.terminal is set, run in the foreground
// (`RUNTIME run`) on a host pty as a user at a terminal would: the
// terminal's name, canonical line editing (a backspace), ^C interrupting
// the foreground job while the shell lives on, a window size change seen
// by `stty size`, the exit status, and the host terminal's modes given
// back at the end. It runs under runsc and, when installed, runc, which
// must agree.
func TestInteractiveTerminal(t *testing.T) {
	runtimes := []struct{ name, path string }{{"runsc", ""}}
	if p, err := exec.LookPath("runc"); err == nil {
		runtimes = append(runtimes, struct{ name, path string }{"runc", p})
	}
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			path := rt.path
			if path == "" {
				path = harness.RequireRunsc(t)
			}
			if os.Getuid() != 0 {
				harness.Unavailable(t, "OCI containers need root")
			}
			interactiveTerminal(t, path)
		})
	}
}

// ttyBundle makes a bundle of a static busybox whose process is an
// interactive shell on a terminal.
func ttyBundle(t *testing.T, runtime string) string {
	t.Helper()
	bundle := t.TempDir()
	rootfs := filepath.Join(bundle, "rootfs")
	for _, d := range []string{"bin", "proc", "dev", "sys", "tmp"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile("/bin/busybox")
	if err != nil {
		harness.Unavailable(t, "no /bin/busybox: %v", err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"sh", "sleep", "stty", "tty", "echo"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", app))
	}
	if out, err := exec.Command(runtime, "spec", "--bundle", bundle).CombinedOutput(); err != nil {
		t.Fatalf("%s spec: %v\n%s", runtime, err, out)
	}
	cfg := filepath.Join(bundle, "config.json")
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	proc := spec["process"].(map[string]any)
	proc["terminal"] = true
	proc["args"] = []string{"sh", "-i"}
	proc["env"] = []string{"PATH=/bin", "TERM=dumb", "PS1=moat$ ", "HOME=/"}
	spec["root"] = map[string]any{"path": "rootfs", "readonly": false}
	raw, _ = json.Marshal(spec)
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return bundle
}

// hostPTY opens a new host pty: its master and replica.
func hostPTY(t *testing.T) (master, replica *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		harness.Unavailable(t, "no host pty: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return m, r
}

// terminalUser reads what a program writes to a host pty's master and
// types into it.
type terminalUser struct {
	t      *testing.T
	master *os.File

	mu      sync.Mutex
	out     bytes.Buffer
	seen    int
	changed chan struct{}
}

func newTerminalUser(t *testing.T, master *os.File) *terminalUser {
	u := &terminalUser{t: t, master: master, changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				u.mu.Lock()
				u.out.Write(buf[:n])
				u.mu.Unlock()
				select {
				case u.changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return u
}

func (u *terminalUser) output() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.out.String()
}

// expect waits for s after what earlier expects consumed, consumes up to
// its end and returns what came before it.
func (u *terminalUser) expect(s string) string {
	u.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		u.mu.Lock()
		rest := u.out.String()[u.seen:]
		if i := strings.Index(rest, s); i >= 0 {
			u.seen += i + len(s)
			u.mu.Unlock()
			return rest[:i]
		}
		u.mu.Unlock()
		select {
		case <-u.changed:
		case <-deadline:
			u.t.Fatalf("the terminal never showed %q after %q; it shows %q", s, u.output()[:u.seen], u.output()[u.seen:])
		}
	}
}

func (u *terminalUser) send(s string) {
	if _, err := u.master.Write([]byte(s)); err != nil {
		u.t.Fatalf("typing %q: %v", s, err)
	}
}

func interactiveTerminal(t *testing.T, runtime string) {
	bundle := ttyBundle(t, runtime)
	root := t.TempDir()
	id := fmt.Sprintf("tty-%d", os.Getpid())
	master, replica := hostPTY(t)
	before, err := unix.IoctlGetTermios(int(replica.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runtime, "--root", root, "run", "--bundle", bundle, id)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = replica, replica, replica
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		exec.Command(runtime, "--root", root, "delete", "--force", id).Run()
	})
	u := newTerminalUser(t, master)
	u.expect("moat$ ")

	t.Run("tty", func(t *testing.T) {
		u.send("tty\r")
		u.expect("tty\r\n")
		if got := u.expect("moat$ "); got != "/dev/pts/0\r\n" {
			t.Errorf("tty printed %q, want /dev/pts/0", got)
		}
	})
	t.Run("backspace", func(t *testing.T) {
		// read reads a canonical line: the terminal's line discipline
		// erases the X.
		u.send("echo go; read x; echo \"[$x]\"\r")
		u.expect("go\r\n")
		u.send("abX\x7fc\r")
		if got := u.expect("moat$ "); !strings.Contains(got, "[abc]\r\n") {
			t.Errorf("read after a backspace gave %q, want [abc]", got)
		}
	})
	t.Run("ctrl_c", func(t *testing.T) {
		u.send("echo go; sleep 30\r")
		u.expect("go\r\n")
		time.Sleep(time.Second) // let sleep start
		start := time.Now()
		u.send("\x03")
		u.expect("moat$ ")
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("^C took %v to end sleep", d)
		}
		u.send("echo status $?\r")
		u.expect("echo status $?\r\n")
		if got := u.expect("moat$ "); got != "status 130\r\n" {
			t.Errorf("after ^C: %q, want status 130", got)
		}
	})
	t.Run("resize", func(t *testing.T) {
		if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 100}); err != nil {
			t.Fatal(err)
		}
		// The runtime learns of it by a signal, on which the shell
		// redraws its line (typing may be split by the redraw): ask
		// until the answer shows.
		mark := len(u.output())
		for i := 0; i < 20; i++ {
			u.send("echo sz $(stty size)\r")
			u.expect("moat$ ")
			if strings.Contains(u.output()[mark:], "\nsz 40 100\r\n") {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		got := u.output()[mark:]
		t.Errorf("stty size after the resize: %q, want 40 100", got)
	})
	u.send("exit 7\r")
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s run did not end after exit; the terminal shows %q", runtime, u.output())
	}
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("%s run exited %d, want 7; the terminal shows %q", runtime, code, u.output())
	}
	after, err := unix.IoctlGetTermios(int(replica.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("the host terminal's modes were not given back: lflag %#x iflag %#x oflag %#x, were %#x %#x %#x",
			after.Lflag, after.Iflag, after.Oflag, before.Lflag, before.Iflag, before.Oflag)
	}
}

// TestRunscDoTerminal: `runsc do` at a terminal gives the command a
// terminal of the sandbox's, named as it is inside (/dev/pts/0), with the
// host terminal's size; with its output redirected the command's stdout
// is the redirection, not a terminal.
func TestRunscDoTerminal(t *testing.T) {
	runsc := harness.RequireRunsc(t)
	script := `tty; stty size; [ -t 1 ] && echo stdout-tty || echo stdout-not-tty`
	for _, tc := range []struct {
		name      string
		redirect  bool
		wantLines []string
	}{
		{"at a terminal", false, []string{"/dev/pts/0", "24 80", "stdout-tty"}},
		{"output redirected", true, []string{"stdout-not-tty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master, replica := hostPTY(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, runsc, "do", "--read-only", "--rootfs", "/", "--", "/bin/busybox", "sh", "-c", script)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = replica, replica, replica
			var pipeOut bytes.Buffer
			if tc.redirect {
				cmd.Stdout = &pipeOut
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			u := newTerminalUser(t, master)
			if err := cmd.Run(); err != nil {
				t.Fatalf("runsc do: %v; the terminal shows %q", err, u.output())
			}
			got := pipeOut.String()
			if !tc.redirect {
				for _, want := range tc.wantLines {
					u.expect(want + "\r\n")
				}
				return
			}
			for _, want := range tc.wantLines {
				if !strings.Contains(got, want+"\n") {
					t.Errorf("stdout %q lacks %q", got, want)
				}
			}
		})
	}
}
