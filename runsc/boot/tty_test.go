package boot

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// consoleRoot is a root with a devpts mounted at /dev/pts, as a
// container's.
func consoleRoot(t *testing.T) fs.VirtualDentry {
	t.Helper()
	root := synth.NewDir(0o755, map[string]fs.Node{"dev": synth.NewDir(0o755, map[string]fs.Node{"pts": synth.NewDir(0o755, nil)})})
	mns := fs.NewMountNamespace(synth.NewFilesystem("tmpfs", 1, root, false), fs.MountFlags{})
	ctx := kernel.Background()
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: mns.Root(), Start: mns.Root(), Path: "/dev/pts", FollowFinal: true})
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := devpts.NewFilesystem(nil, devpts.Options{PtmxMode: 0o666, Mode: 0o620, GID: 5, SetGID: true})
	if _, err := mns.Mount(ctx, at, pts, fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	return mns.Root()
}

// hostPTY returns a new host pty's master and a replica descriptor.
func hostPTY(t *testing.T) (*os.File, int) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no host pty: %v", err)
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
	fd, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, fd
}

// readFor reads the host master until want shows or a deadline passes.
func readFor(t *testing.T, m *os.File, want string) string {
	t.Helper()
	var got []byte
	buf := make([]byte, 256)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(string(got), want) && time.Now().Before(deadline) {
		m.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _ := m.Read(buf)
		got = append(got, buf[:n]...)
	}
	if !strings.Contains(string(got), want) {
		t.Fatalf("the host terminal shows %q, want %q", got, want)
	}
	return string(got)
}

// TestConsole relays a Sentry terminal to a host pty: output processing
// is the Sentry's (the host terminal is raw), typed input reaches the
// slave through the Sentry's line discipline, the window size follows
// the host's, and Close gives the host terminal its modes back.
func TestConsole(t *testing.T) {
	root := consoleRoot(t)
	master, replica := hostPTY(t)
	before, err := unix.IoctlGetTermios(replica, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	out, err := unix.Dup(replica)
	if err != nil {
		t.Fatal(err)
	}
	// The console takes both descriptors; keep one to look at the modes.
	look, err := unix.Dup(replica)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(look)
	c, slave, err := NewConsole(root, replica, out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := kernel.Background()
	closed := false
	defer func() {
		if !closed {
			slave.DecRef()
			c.closeNow()
		}
	}()

	t.Run("slave", func(t *testing.T) {
		if got := slave.VirtualDentry().Dentry.Name(); got != "0" {
			t.Errorf("slave named %q, want 0 (/dev/pts/0)", got)
		}
		st, err := slave.Stat(ctx)
		if err != nil || st.GID != 5 {
			t.Errorf("slave group %d (%v), want the mount's gid 5", st.GID, err)
		}
	})
	t.Run("host terminal raw", func(t *testing.T) {
		tm, err := unix.IoctlGetTermios(look, unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tm.Lflag&(unix.ECHO|unix.ICANON|unix.ISIG) != 0 || tm.Oflag&unix.OPOST != 0 {
			t.Errorf("host terminal lflag %#x oflag %#x, want raw", tm.Lflag, tm.Oflag)
		}
	})
	t.Run("output", func(t *testing.T) {
		if _, err := slave.Write(ctx, []byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		readFor(t, master, "hello\r\n")
	})
	t.Run("input", func(t *testing.T) {
		master.Write([]byte("abX\x7fc\r"))
		// The echo, with the erasure, comes back to the host.
		readFor(t, master, "abX\b \bc\r\n")
		buf := make([]byte, 64)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			n, err := slave.Read(ctx, buf)
			if n > 0 {
				if got := string(buf[:n]); got != "abc\n" {
					t.Fatalf("slave read %q, want abc\\n", got)
				}
				return
			}
			if err != nil && !errors.Is(err, syserror.ErrWouldBlock) {
				t.Fatalf("slave read: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("no input reached the slave")
	})
	t.Run("window size", func(t *testing.T) {
		if ws := c.Terminal().WindowSize(); ws.Row != 24 || ws.Col != 80 {
			t.Fatalf("initial size %dx%d, want 24x80", ws.Row, ws.Col)
		}
		unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 132})
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if ws := c.Terminal().WindowSize(); ws.Row == 50 && ws.Col == 132 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("size %+v after the host's resize to 50x132", c.Terminal().WindowSize())
	})
	t.Run("close", func(t *testing.T) {
		slave.DecRef()
		closed = true
		start := time.Now()
		c.Close()
		if d := time.Since(start); d > time.Second {
			t.Errorf("Close took %v with no slave left", d)
		}
		after, err := unix.IoctlGetTermios(look, unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if after.Lflag != before.Lflag || after.Oflag != before.Oflag || after.Iflag != before.Iflag {
			t.Errorf("host modes %#x/%#x/%#x after Close, were %#x/%#x/%#x", after.Lflag, after.Oflag, after.Iflag, before.Lflag, before.Oflag, before.Iflag)
		}
	})
}
