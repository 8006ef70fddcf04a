package shim

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// StdioSpec is where a process's standard I/O goes, as containerd gives
// it: fifo paths, or file:// and binary:// URIs for the output.
type StdioSpec struct {
	Stdin, Stdout, Stderr string
	Terminal              bool
}

// processIO connects a process to its StdioSpec. Without a terminal the
// process gets pipes, copied to and from the fifos (or files, or a logging
// binary); with one, the pty master runsc sends to the console socket is
// copied instead. Output copies end when every holder of the process's
// end has gone, which is when the sandbox (or exec'd process) has exited.
type processIO struct {
	spec StdioSpec

	// child are the ends runsc gets; closed once it has started.
	child cmdIO

	// mu guards stdinW, console, stdinR and copying.
	mu      sync.Mutex
	stdinW  io.WriteCloser // where stdin is copied to; nil once closed
	console *os.File       // the pty master, with a terminal

	stdinR *os.File // the stdin fifo, once opened
	// copying is set while the stdin fifo is copied to stdinW.
	copying bool
	outputs sync.WaitGroup
	closers []io.Closer
	logCmd  *exec.Cmd // binary:// logger
}

// newProcessIO opens what spec names and makes the pipes for a process
// without a terminal. id and ns are the container's id and namespace,
// passed to a binary:// logger.
func newProcessIO(ctx context.Context, reaper *Reaper, id, ns string, spec StdioSpec) (_ *processIO, retErr error) {
	p := &processIO{spec: spec}
	defer func() {
		if retErr != nil {
			p.Close()
		}
	}()
	if spec.Terminal {
		return p, nil
	}
	if spec.Stdin != "" {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		p.child.Stdin, p.stdinW = r, w
	}
	u, err := parseStdioURI(spec.Stdout)
	if err != nil {
		return nil, err
	}
	if u != nil && u.Scheme == "binary" {
		if err := p.startLogger(reaper, u, id, ns); err != nil {
			return nil, err
		}
		return p, nil
	}
	for _, out := range []struct {
		path  string
		child **os.File
	}{{spec.Stdout, &p.child.Stdout}, {spec.Stderr, &p.child.Stderr}} {
		if out.path == "" {
			continue
		}
		dst, err := openOutput(out.path)
		if err != nil {
			return nil, err
		}
		r, w, err := os.Pipe()
		if err != nil {
			dst.Close()
			return nil, err
		}
		*out.child = w
		p.outputs.Add(1)
		go func() {
			defer p.outputs.Done()
			io.Copy(dst, r)
			r.Close()
			dst.Close()
		}()
	}
	return p, nil
}

// parseStdioURI parses an output URI; a plain path (a fifo) gives nil.
func parseStdioURI(s string) (*url.URL, error) {
	if s == "" || s[0] == '/' {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parsing stdio uri %q: %w", s, err)
	}
	switch u.Scheme {
	case "fifo":
		return nil, nil
	case "file", "binary":
		if u.Path == "" || u.Path[0] != '/' {
			return nil, fmt.Errorf("stdio uri %q: path must be absolute", s)
		}
		return u, nil
	}
	return nil, fmt.Errorf("unsupported stdio uri scheme %q", u.Scheme)
}

// openOutput opens an output: a file:// URI (created, appended to), or a
// fifo path or fifo:// URI. A fifo is opened read-write, which never
// blocks, and containerd already has its reading end open.
func openOutput(s string) (*os.File, error) {
	u, err := parseStdioURI(s)
	if err != nil {
		return nil, err
	}
	if u != nil && u.Scheme == "file" {
		if err := os.MkdirAll(filepath.Dir(u.Path), 0o755); err != nil {
			return nil, err
		}
		return os.OpenFile(u.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	}
	path := s
	if u, err := url.Parse(s); err == nil && u.Scheme == "fifo" {
		path = u.Path
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}

// startLogger starts a binary:// logger, as containerd's logging
// protocol has it: the process's stdout and stderr readers are its fds 3
// and 4, and it closes fd 5 once it is ready. The URI's query parameters
// become its arguments.
func (p *processIO) startLogger(reaper *Reaper, u *url.URL, id, ns string) error {
	var args []string
	for k, vs := range u.Query() {
		args = append(args, k)
		if len(vs) > 0 && vs[0] != "" {
			args = append(args, vs[0])
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return err
	}
	defer errR.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		outW.Close()
		errW.Close()
		return err
	}
	defer readyR.Close()
	cmd := exec.Command(u.Path, args...)
	cmd.Env = append(os.Environ(), "CONTAINER_ID="+id, "CONTAINER_NAMESPACE="+ns)
	cmd.ExtraFiles = []*os.File{outR, errR, readyW}
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	_, err = reaper.Start(cmd)
	readyW.Close()
	if err != nil {
		outW.Close()
		errW.Close()
		return fmt.Errorf("starting logging binary %s: %w", u.Path, err)
	}
	p.logCmd = cmd
	p.child.Stdout, p.child.Stderr = outW, errW
	readyR.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	if _, err := readyR.Read(b[:]); err != nil && err != io.EOF {
		return fmt.Errorf("waiting for logging binary %s: %w", u.Path, err)
	}
	return nil
}

// childStarted closes the shim's copies of the ends runsc was given and
// starts copying stdin.
func (p *processIO) childStarted() {
	for _, f := range []*os.File{p.child.Stdin, p.child.Stdout, p.child.Stderr} {
		if f != nil {
			f.Close()
		}
	}
	p.child = cmdIO{}
	p.startStdinCopy()
}

// startStdinCopy copies the stdin fifo to the process: to its pipe, or
// to the pty master.
func (p *processIO) startStdinCopy() {
	if p.spec.Stdin == "" {
		return
	}
	p.mu.Lock()
	dst := p.stdinW
	p.copying = dst != nil
	p.mu.Unlock()
	if dst == nil {
		return
	}
	go func() {
		// Opening for reading blocks until containerd's writer is there.
		f, err := os.OpenFile(p.spec.Stdin, os.O_RDONLY, 0)
		if err == nil {
			p.mu.Lock()
			p.stdinR = f
			p.mu.Unlock()
			io.Copy(dst, f)
			f.Close()
		}
		p.mu.Lock()
		p.copying = false
		p.mu.Unlock()
		if err == nil && !p.spec.Terminal {
			p.CloseStdin()
		}
	}()
}

// CloseStdin closes the process's standard input (CloseIO). Without a
// terminal, while the stdin fifo is being copied, the copy closes it at
// the fifo's end, after the data still in the fifo: closing the
// process's end at once lost what the copy had not moved yet (a client
// writes, closes its end of the fifo, then calls CloseIO), as runc's
// shim never does. A copy still waiting for a writer is let go, as Close
// does.
func (p *processIO) CloseStdin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.copying && !p.spec.Terminal {
		if p.stdinR == nil {
			// Unblock the copy's open: it then reads the fifo's end.
			if f, err := os.OpenFile(p.spec.Stdin, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		return
	}
	if p.spec.Terminal {
		// The pty stays; an EOF is the terminal's end-of-file character.
		if p.console != nil {
			p.console.Write([]byte{4})
		}
		return
	}
	if p.stdinW != nil {
		p.stdinW.Close()
		p.stdinW = nil
	}
}

// setConsole takes the pty master of a terminal process and starts
// copying between it and the fifos.
func (p *processIO) setConsole(master *os.File) error {
	p.mu.Lock()
	p.console = master
	p.stdinW = master
	p.mu.Unlock()
	if p.spec.Stdout != "" {
		dst, err := openOutput(p.spec.Stdout)
		if err != nil {
			return err
		}
		p.outputs.Add(1)
		go func() {
			defer p.outputs.Done()
			io.Copy(dst, master)
			dst.Close()
		}()
	}
	p.startStdinCopy()
	return nil
}

// Resize sets the terminal's window size.
func (p *processIO) Resize(width, height uint32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.console == nil {
		return fmt.Errorf("process has no terminal")
	}
	ws := &unix.Winsize{Col: uint16(width), Row: uint16(height)}
	return unix.IoctlSetWinsize(int(p.console.Fd()), unix.TIOCSWINSZ, ws)
}

// WaitOutput waits up to timeout for the output copies to finish.
func (p *processIO) WaitOutput(timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		p.outputs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// Close releases everything: pipes, the console, a stdin fifo open
// still waiting for its writer.
func (p *processIO) Close() {
	for _, f := range []*os.File{p.child.Stdin, p.child.Stdout, p.child.Stderr} {
		if f != nil {
			f.Close()
		}
	}
	p.child = cmdIO{}
	p.mu.Lock()
	if p.stdinW != nil && p.stdinW != io.WriteCloser(p.console) {
		p.stdinW.Close()
	}
	p.stdinW = nil
	if p.console != nil {
		p.console.Close()
		p.console = nil
	}
	stdinOpen := p.stdinR != nil
	p.mu.Unlock()
	if p.spec.Stdin != "" && !stdinOpen {
		// Unblock the goroutine opening the stdin fifo.
		if f, err := os.OpenFile(p.spec.Stdin, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	for _, c := range p.closers {
		c.Close()
	}
}
