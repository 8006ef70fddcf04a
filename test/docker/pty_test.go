package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ptyProc is a docker client running on a pty, as at a user's terminal.
type ptyProc struct {
	master *os.File
	cmd    *exec.Cmd
	cancel context.CancelFunc

	mu      sync.Mutex
	out     bytes.Buffer // everything the client wrote
	seen    int          // how far expect has consumed out
	changed chan struct{}
}

// openPTY returns a new pty's master and replica.
func openPTY() (master, replica *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlocking pty: %w", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	r, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, r, nil
}

// startOnPTY runs the docker client with args on a new pty, as the
// foreground job of its own session. A container it runs must be named:
// it is removed when the case ends, as killing a client stuck at an -it
// session does not stop its container.
func (d *daemon) startOnPTY(c *check, container string, args ...string) *ptyProc {
	c.Helper()
	if container != "" {
		c.t.Cleanup(func() { d.docker(c, "", "rm", "-f", container) })
	}
	master, replica, err := openPTY()
	if err != nil {
		c.Fatalf("pty: %v", err)
	}
	defer replica.Close()
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(d.env, "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = replica, replica, replica
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		cancel()
		master.Close()
		c.Fatalf("starting docker %s: %v", strings.Join(args, " "), err)
	}
	p := &ptyProc{master: master, cmd: cmd, cancel: cancel, changed: make(chan struct{}, 1)}
	go p.read()
	return p
}

func (p *ptyProc) read() {
	buf := make([]byte, 4096)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// output is everything the client wrote so far.
func (p *ptyProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// expect waits for s in the output after what earlier expects consumed,
// and consumes up to its end.
func (p *ptyProc) expect(c *check, s string) {
	c.Helper()
	deadline := time.After(20 * time.Second)
	for {
		p.mu.Lock()
		rest := p.out.String()[p.seen:]
		if i := strings.Index(rest, s); i >= 0 {
			p.seen += i + len(s)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		select {
		case <-p.changed:
		case <-deadline:
			c.Fatalf("terminal never showed %q; it shows %q", s, p.output())
		}
	}
}

// send types s.
func (p *ptyProc) send(s string) { p.master.Write([]byte(s)) }

// resizeSeen resizes the client's terminal, as a user's terminal window
// does (the client gets SIGWINCH and passes the size on), and waits for
// `stty size` in the container's shell, at its prompt, to show it.
//
// docker run -it and exec -it watch their terminal's size only once the
// container's process has started: they read the size, send it, and only
// then handle SIGWINCH. A SIGWINCH before that reaches only their signal
// proxy, which passes it on as `kill -s WINCH` and resizes nothing
// (dockerd's debug log shows the kill and no resize call). The shell's
// prompt arrives through the attach stream meanwhile, so a resize right
// after it can be lost by the client itself, under runc as under runsc
// (it happened about once in ten runs on a loaded machine). So
// resizeSeen first waits for the container to show the client's first
// size (the pty's own, sent just before the client starts watching),
// then resizes, and resizes again to a new size, as a user would, if
// that was lost all the same.
func (p *ptyProc) resizeSeen(c *check, rows, cols uint16) {
	c.Helper()
	ws, err := unix.IoctlGetWinsize(int(p.master.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		c.Fatalf("reading the pty's size: %v", err)
	}
	if !p.sizeShown(c, ws.Row, ws.Col, 40) {
		c.Fatalf("stty size never showed the client's first size %dx%d; output %q", ws.Row, ws.Col, p.output())
	}
	const tries = 3
	for i := uint16(0); i < tries; i++ {
		r, cl := rows+i, cols+i
		if err := unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: r, Col: cl}); err != nil {
			c.Fatalf("resizing the pty: %v", err)
		}
		if p.sizeShown(c, r, cl, 12) {
			if i > 0 {
				c.Logf("the resize to %dx%d was lost, the one to %dx%d was seen", rows, cols, r, cl)
			}
			return
		}
	}
	c.Errorf("stty size never showed any of %d resizes from %dx%d; output %q", tries, rows, cols, p.output())
}

// sizeShown asks the container's shell for `stty size` up to tries
// times, 250 ms apart, until it answers rows and cols, and reports
// whether it did.
func (p *ptyProc) sizeShown(c *check, rows, cols uint16, tries int) bool {
	c.Helper()
	// The shell redraws its line on a SIGWINCH (typing may be split by
	// the redraw): only the answer's own line counts.
	want := fmt.Sprintf("\nsz %d %d\r\n", rows, cols)
	p.mu.Lock()
	mark := p.out.Len()
	p.mu.Unlock()
	for i := 0; i < tries; i++ {
		p.send("echo sz $(stty size)\r")
		p.expect(c, "# ")
		if strings.Contains(p.output()[mark:], want) {
			return true
		}
		time.Sleep(250 * time.Millisecond)
	}
	return false
}

// wait returns the client's exit status.
func (p *ptyProc) wait(c *check) int {
	c.Helper()
	err := p.cmd.Wait()
	if err != nil && p.cmd.ProcessState == nil {
		c.Fatalf("docker on a pty: %v", err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// close kills the client if it still runs and closes the pty.
func (p *ptyProc) close() {
	p.cancel()
	if p.cmd.ProcessState == nil {
		p.cmd.Wait()
	}
	p.master.Close()
}
