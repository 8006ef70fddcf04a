package boot

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// This file is the sandbox side of runsc exec: a new process in the
// running kernel (kernel.CreateProcess), whose stdio are host descriptors
// the caller passed over the control socket.

// ExecSpec is a process to start in a running sandbox: the control
// request exec carries it, with its stdin, stdout and stderr as three
// descriptors in one SCM_RIGHTS message.
type ExecSpec struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env,omitempty"`
	// Cwd is the working directory; empty means "/".
	Cwd     string  `json:"cwd,omitempty"`
	Process Process `json:"process"`
	// Terminal says the stdio descriptors are a terminal the process
	// leads: its process group is the terminal's foreground.
	Terminal bool `json:"terminal,omitempty"`
}

// Exec starts spec's process in the sandbox with stdio as its stdin,
// stdout and stderr, of which it takes ownership (closing them on error).
// A command that cannot be found or executed gives an *ExecError.
func (s *Sandbox) Exec(spec *ExecSpec, stdio []int) (*kernel.ExternalProcess, error) {
	p, err := s.loadProcess(s.k.MountNS.Root(), s.seccomp, pidNamespace{}, spec, stdio)
	if err != nil {
		return nil, err
	}
	s.log.Debug("exec", "pid", p.PID(), "argv", spec.Argv)
	p.Start()
	return p, nil
}

// loadProcess loads spec's process, without starting it, with root as
// its root directory (the root of the container it belongs to), filter
// as its seccomp filter and ns saying its PID namespace; it takes
// ownership of stdio as Exec does.
func (s *Sandbox) loadProcess(root fs.VirtualDentry, filter *SeccompFilter, ns pidNamespace, spec *ExecSpec, stdio []int) (p *kernel.ExternalProcess, err error) {
	owned := stdio
	defer func() {
		for _, fd := range owned {
			unix.Close(fd)
		}
	}()
	if len(stdio) != 3 {
		return nil, fmt.Errorf("exec needs 3 stdio descriptors, got %d", len(stdio))
	}
	if len(spec.Argv) == 0 {
		return nil, errors.New("no command")
	}
	select {
	case <-s.done:
		return nil, kernel.ErrInitExited
	default:
	}
	fdt := fs.NewFDTable()
	defer func() {
		if err != nil && fdt != nil {
			fdt.DecRef()
		}
	}()
	files, con, err := stdioFiles(root, stdio, spec.Terminal, auth.KUID(spec.Process.UID), auth.KGID(spec.Process.GID), s.log)
	owned = nil
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && con != nil {
			con.closeNow()
		}
	}()
	if err = installStdio(fdt, files); err != nil {
		return nil, err
	}

	opts, err := processOptions(root, spec.Argv, spec.Env, spec.Cwd, spec.Process)
	if err != nil {
		return nil, err
	}
	opts.FDTable = fdt
	opts.NewPIDNamespace, opts.PIDNamespace = ns.new, ns.join
	p, err = s.k.CreateProcess(opts)
	if err != nil {
		fdt = nil // CreateProcess dropped it
		return nil, execError(err)
	}
	if spec.Process.NoNewPrivileges {
		p.Leader().SetNoNewPrivs()
	}
	if err := applyExecSettings(p.Leader(), spec.Process.Settings); err != nil {
		return nil, err
	}
	if err := filter.install(p.Leader()); err != nil {
		// Cannot happen: the same filter went on the container's init.
		return nil, err
	}
	if con != nil {
		if err := p.Leader().SetControllingTTY(con.Terminal(), false, true); err != nil {
			return nil, fmt.Errorf("binding the terminal: %w", err)
		}
		s.ttys.watch(p, con)
	}
	return p, nil
}

// exitStatus turns a wait status into what runsc reports: the exit code,
// or 128+N when signal N killed the process.
func exitStatus(ws kernel.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitCode()
}

// parseRights returns the descriptors of the SCM_RIGHTS messages in oob.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("control message: %w", err)
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			continue
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// exec answers an exec request, taking ownership of fds.
func (c *controller) exec(req *Request, fds []int) Response {
	if req.Exec == nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return Response{Error: "exec without a process"}
	}
	// Under c.mu, so that the process is in execs before anyone can ask
	// to wait for it.
	c.mu.Lock()
	defer c.mu.Unlock()
	var p *kernel.ExternalProcess
	var err error
	if c.sub != nil {
		p, err = c.sub.exec(req.Exec, fds)
	} else {
		p, err = c.s.Exec(req.Exec, fds)
	}
	if err != nil {
		r := Response{Error: err.Error()}
		var ee *ExecError
		if errors.As(err, &ee) {
			r.ExecStatus = ee.Status
		}
		if errors.Is(err, kernel.ErrInitExited) {
			r.Error = "container not running"
		}
		return r
	}
	if c.execs == nil {
		c.execs = make(map[int32]*kernel.ExternalProcess)
	}
	c.execs[int32(p.PID())] = p
	return Response{PID: int32(p.PID())}
}

// waitExec waits for the exec'd process req.PID; with KillOnHangup, a
// caller that hangs up on fd first (it died) takes the process with it.
func (c *controller) waitExec(fd int, req *Request) Response {
	c.mu.Lock()
	p := c.execs[req.PID]
	c.mu.Unlock()
	if p == nil {
		return Response{Error: fmt.Sprintf("no process %d started by exec is waiting to be waited for", req.PID)}
	}
	if req.KillOnHangup {
		// The watcher polls its own duplicate: fd is closed once this
		// answer is sent.
		if wfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			go watchHangup(wfd, p)
		}
	}
	<-c.s.ttys.done(p)
	c.mu.Lock()
	if c.execs[req.PID] == p {
		delete(c.execs, req.PID)
	}
	c.mu.Unlock()
	return Response{Exited: true, Status: exitStatus(p.Status())}
}

// watchHangup kills p if fd's peer hangs up before p has exited. It
// closes fd.
func watchHangup(fd int, p *kernel.ExternalProcess) {
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	for {
		select {
		case <-p.Done():
			return
		default:
		}
		fds[0].Revents = 0
		n, err := unix.Poll(fds, 100)
		if errors.Is(err, unix.EINTR) || n == 0 {
			continue
		}
		if err != nil || fds[0].Revents&unix.POLLNVAL != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
			p.Signal(kernel.Signal(unix.SIGKILL))
			return
		}
	}
}

// killPID sends sig to process pid of the sandbox.
func (c *controller) killPID(pid int32, sig kernel.Signal) Response {
	if !sig.IsValid() {
		return Response{Error: fmt.Sprintf("invalid signal %d", sig)}
	}
	tg := c.s.k.ThreadGroupByID(kernel.ThreadID(pid))
	if tg == nil {
		return Response{Error: fmt.Sprintf("no such process %d", pid)}
	}
	if err := tg.SendSignal(kernel.NewSignalInfo(sig, kernel.SI_USER)); err != nil {
		return Response{Error: fmt.Sprintf("signalling process %d: %v", pid, err)}
	}
	return Response{}
}
