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
func (p *ptyProc) resizeSeen(c *check, rows, cols uint16) {
	c.Helper()
	if err := unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		c.Fatalf("resizing the pty: %v", err)
	}
	// The shell redraws its line on the SIGWINCH (typing may be split
	// by the redraw): ask until the answer shows.
	want := fmt.Sprintf("\nsz %d %d\r\n", rows, cols)
	p.mu.Lock()
	mark := p.out.Len()
	p.mu.Unlock()
	for i := 0; i < 40; i++ {
		p.send("echo sz $(stty size)\r")
		p.expect(c, "# ")
		if strings.Contains(p.output()[mark:], want) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.Errorf("stty size never showed %q after the resize; output %q", want, p.output())
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
