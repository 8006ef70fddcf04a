package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/container"
	"github.com/moat-sandbox/moat/runsc/specutils"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Exec is `runsc exec`: run a new process in a running container, with
// runc's flags.
//
// runsc exec stays until the process exits and exits with its status:
// the process lives in the sandbox, so no host process is it. With
// --detach, runsc exec starts a copy of itself, the exec proxy, which
// does the exec and stays in its place, and exits once the process runs,
// after writing the proxy's pid to --pid-file. containerd's runc shim,
// a child subreaper, reads that pid and waits for it as for the exec'd
// process: the proxy, reparented to the shim, exits with the process's
// status, passes on the signals it gets (the shim's kill of an exec), and
// if the proxy is killed (SIGKILL cannot be passed on) the sandbox kills
// the process, which sees the proxy's control connection close.
type Exec struct {
	consoleSocket string
	cwd           string
	env           envList
	tty           bool
	user          string
	addGIDs       stringList
	process       string
	detach        bool
	pidFile       string
	processLabel  string
	apparmor      string
	noNewPrivs    bool
	caps          stringList
	preserveFDs   int
	cgroup        stringList
	ignorePaused  bool
}

// proxyEnv marks the exec proxy: runsc exec --detach starts it with this
// variable set, its stdio as descriptors 3, 4 and 5 and a pipe at 6 on
// which it reports the start ("ok", or the error and status).
const proxyEnv = "MOAT_EXEC_PROXY"

// Name implements subcommands.Command.
func (*Exec) Name() string { return "exec" }

// Synopsis implements subcommands.Command.
func (*Exec) Synopsis() string { return "run a new process in a running container" }

// Usage implements subcommands.Command.
func (*Exec) Usage() string {
	return `exec [flags] ID COMMAND [ARG...]
exec [flags] --process process.json ID

Runs a new process in container ID: COMMAND with the container's process
settings (env, user, capabilities, rlimits, cwd) changed by the flags, or
the process described by --process (a spec's process section). Waits for
it and exits with its status (128+N if signal N killed it), passing on
the signals runsc gets; with --detach, exits once it is started. The
process has no parent in the container (its ppid is 0) and leads a
session of its own.

`
}

// SetFlags implements subcommands.Command.
func (e *Exec) SetFlags(f *flag.FlagSet) {
	f.StringVar(&e.consoleSocket, "console-socket", "", "unix socket to send the master of the process's terminal to (with --tty)")
	f.StringVar(&e.cwd, "cwd", "", "working directory of the process")
	f.Var(&e.env, "env", "set an environment variable NAME=VALUE (repeatable)")
	f.Var(&e.env, "e", "short for --env")
	f.BoolVar(&e.tty, "tty", false, "give the process a terminal")
	f.BoolVar(&e.tty, "t", false, "short for --tty")
	f.StringVar(&e.user, "user", "", "UID[:GID] of the process")
	f.StringVar(&e.user, "u", "", "short for --user")
	f.Var(&e.addGIDs, "additional-gids", "an additional group id (repeatable, or comma-separated)")
	f.Var(&e.addGIDs, "g", "short for --additional-gids")
	f.StringVar(&e.process, "process", "", "JSON file holding the process to run (a spec's process section)")
	f.StringVar(&e.process, "p", "", "short for --process")
	f.BoolVar(&e.detach, "detach", false, "return once the process is started")
	f.BoolVar(&e.detach, "d", false, "short for --detach")
	f.StringVar(&e.pidFile, "pid-file", "", "file to write a host pid standing for the process to (see the docs)")
	f.StringVar(&e.processLabel, "process-label", "", "accepted for runc compatibility (no SELinux labels in the sandbox)")
	f.StringVar(&e.apparmor, "apparmor", "", "accepted for runc compatibility (no AppArmor profiles in the sandbox)")
	f.BoolVar(&e.noNewPrivs, "no-new-privs", false, "set no_new_privs for the process")
	f.Var(&e.caps, "cap", "add a capability, such as CAP_KILL (repeatable)")
	f.Var(&e.caps, "c", "short for --cap")
	f.IntVar(&e.preserveFDs, "preserve-fds", 0, "pass N more descriptors (not supported yet: must be 0)")
	f.Var(&e.cgroup, "cgroup", "accepted for runc compatibility (the sandbox has one cgroup)")
	f.BoolVar(&e.ignorePaused, "ignore-paused", false, "allow exec in a paused container")
}

// Execute implements subcommands.Command.
func (e *Exec) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	proxy := os.Getenv(proxyEnv) != ""
	if f.NArg() < 1 || (e.process == "" && f.NArg() < 2) {
		fmt.Fprintf(os.Stderr, "runsc exec: %q requires a container id and, without --process, a command\n", "exec")
		f.Usage()
		return exitError
	}
	id := f.Arg(0)
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, n := range []struct{ name, val string }{{"process-label", e.processLabel}, {"apparmor", e.apparmor}} {
		if n.val != "" {
			log.Info("exec: --" + n.name + " is ignored: the sandbox has no such labels")
		}
	}
	if len(e.cgroup) > 0 {
		log.Info("exec: --cgroup is ignored: the sandbox has one cgroup")
	}
	fail := func(err error) subcommands.ExitStatus {
		if proxy {
			reportStart(err)
			return exitError
		}
		return ociFail(conf, log, "exec", err)
	}
	if e.preserveFDs != 0 {
		return fail(fmt.Errorf("--preserve-fds=%d is not supported yet: the process gets only its stdio", e.preserveFDs))
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return fail(err)
	}
	p, err := e.processSpec(c, f.Args()[1:], set)
	if err != nil {
		return fail(err)
	}
	if p.Terminal && e.detach && e.consoleSocket == "" {
		return fail(errors.New("cannot allocate tty if runc will detach without setting console socket"))
	}
	if !p.Terminal && e.consoleSocket != "" {
		return fail(errors.New("cannot use console socket if runc will not detach or allocate tty"))
	}
	if e.detach && !proxy {
		return e.startProxy(conf, log)
	}

	// The signals to pass on, received from now on so that none arriving
	// while the process starts kills runsc instead.
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs)
	defer signal.Stop(sigs)

	stdio := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	if proxy {
		stdio = [3]*os.File{os.NewFile(3, "stdin"), os.NewFile(4, "stdout"), os.NewFile(5, "stderr")}
	}
	// The Sentry makes its stdio non-blocking, which the descriptions
	// we share with our caller would keep: put their flags back at the
	// end.
	var saved [3]int
	for i, f := range stdio {
		saved[i], _ = unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	}
	restore := func() {
		for i, f := range stdio {
			unix.FcntlInt(f.Fd(), unix.F_SETFL, saved[i])
		}
	}
	pid, err := c.Exec(container.ExecArgs{
		Process:       p,
		Stdin:         stdio[0],
		Stdout:        stdio[1],
		Stderr:        stdio[2],
		ConsoleSocket: e.consoleSocket,
		IgnorePaused:  e.ignorePaused,
	})
	if err != nil {
		restore()
		var ee *container.ExecError
		if errors.As(err, &ee) {
			if proxy {
				reportStart(err)
			} else {
				ociFail(conf, log, "exec", err)
			}
			return subcommands.ExitStatus(ee.Status)
		}
		return fail(err)
	}
	log.Debug("exec: started", "pid", pid)
	if proxy {
		// The sandbox has its own copies of the stdio now; the proxy
		// must not keep its caller's pipes open.
		restore()
		for _, f := range stdio {
			f.Close()
		}
		reportStart(nil)
	} else if e.pidFile != "" {
		if err := container.WritePidFile(e.pidFile, os.Getpid()); err != nil {
			c.SignalProcess(pid, unix.SIGKILL)
			restore()
			return ociFail(conf, log, "exec", err)
		}
	}
	go func() {
		for s := range sigs {
			sig := s.(syscall.Signal)
			switch sig {
			case unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE:
				continue // the Go runtime's, or about runsc itself
			}
			if err := c.SignalProcess(pid, sig); err != nil {
				log.Debug("exec: passing on a signal", "signal", sig, "err", err)
			}
		}
	}()
	status, err := c.WaitExec(pid, true)
	if !proxy {
		restore()
	}
	if err != nil {
		return ociFail(conf, log, "exec", err)
	}
	return subcommands.ExitStatus(status)
}

// processSpec returns the process to run: --process's, or the
// container's own process with args and the flags' changes, as runc
// builds it.
func (e *Exec) processSpec(c *container.Container, args []string, set map[string]bool) (*specs.Process, error) {
	if e.process != "" {
		b, err := os.ReadFile(e.process)
		if err != nil {
			return nil, fmt.Errorf("reading the process file: %w", err)
		}
		var p specs.Process
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("parsing the process file %s: %w", e.process, err)
		}
		if len(p.Args) == 0 {
			return nil, errors.New("args must not be empty")
		}
		if p.Cwd == "" {
			return nil, errors.New("cwd property must not be empty")
		}
		return &p, nil
	}
	spec, _, err := specutils.ReadBundle(c.Bundle())
	if err != nil {
		return nil, fmt.Errorf("the container's bundle: %w", err)
	}
	p := specs.Process{}
	if spec.Process != nil {
		p = *spec.Process
	}
	p.Args = args
	p.Env = append(append([]string(nil), p.Env...), e.env...)
	p.Terminal = e.tty
	p.ConsoleSize = nil
	if e.cwd != "" {
		p.Cwd = e.cwd
	}
	if set["no-new-privs"] {
		p.NoNewPrivileges = e.noNewPrivs
	}
	if e.user != "" {
		uid, gid, err := parseUser(e.user)
		if err != nil {
			return nil, err
		}
		p.User.UID, p.User.GID = uid, gid
	}
	if len(e.addGIDs) > 0 {
		p.User.AdditionalGids = nil
		for _, list := range e.addGIDs {
			for _, g := range strings.Split(list, ",") {
				n, err := strconv.ParseUint(strings.TrimSpace(g), 10, 32)
				if err != nil {
					return nil, fmt.Errorf("invalid additional gid %q", g)
				}
				p.User.AdditionalGids = append(p.User.AdditionalGids, uint32(n))
			}
		}
	}
	if len(e.caps) > 0 {
		caps := specs.LinuxCapabilities{}
		if p.Capabilities != nil {
			caps = *p.Capabilities
		}
		for _, name := range e.caps {
			name = strings.ToUpper(name)
			if !strings.HasPrefix(name, "CAP_") {
				name = "CAP_" + name
			}
			if _, err := specutils.CapabilityNumber(name); err != nil {
				return nil, err
			}
			caps.Bounding = append(caps.Bounding, name)
			caps.Effective = append(caps.Effective, name)
			caps.Permitted = append(caps.Permitted, name)
			// Ambient capabilities need inheritable ones: added only
			// where the spec already has some, as runc does.
			if caps.Inheritable != nil {
				caps.Ambient = append(caps.Ambient, name)
			}
		}
		p.Capabilities = &caps
	}
	return &p, nil
}

// parseUser parses --user's UID[:GID]. User names are not looked up.
func parseUser(s string) (uid, gid uint32, err error) {
	us, gs, hasGID := strings.Cut(s, ":")
	u, err := strconv.ParseUint(us, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("invalid --user %q: want UID[:GID] as numbers", s)
	}
	if !hasGID {
		return uint32(u), 0, nil
	}
	g, err := strconv.ParseUint(gs, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("invalid --user %q: want UID[:GID] as numbers", s)
	}
	return uint32(u), uint32(g), nil
}

// startProxy starts the exec proxy (see Exec) with the same arguments,
// waits for its report and, once the process runs, writes the proxy's
// pid to --pid-file.
func (e *Exec) startProxy(conf *config.Config, log *slog.Logger) subcommands.ExitStatus {
	exe, err := os.Executable()
	if err != nil {
		return ociFail(conf, log, "exec", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return ociFail(conf, log, "exec", err)
	}
	defer r.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		w.Close()
		return ociFail(conf, log, "exec", err)
	}
	defer null.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), proxyEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.ExtraFiles = []*os.File{os.Stdin, os.Stdout, os.Stderr, w}
	// Its own session: the caller's terminal signals are not for it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return ociFail(conf, log, "exec", fmt.Errorf("starting the exec proxy: %w", err))
	}
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	var rep startReport
	if err := json.Unmarshal(b, &rep); err != nil {
		// It died before reporting.
		st, _ := cmd.Process.Wait()
		return ociFail(conf, log, "exec", fmt.Errorf("the exec proxy failed (%v)", st))
	}
	if rep.Error != "" {
		cmd.Process.Wait()
		fmt.Fprintf(os.Stderr, "runsc exec: %s\n", rep.Error)
		if conf.DebugLog != "" || conf.LogFile != "" {
			log.Error("exec failed", "err", rep.Error)
		}
		if rep.Status != 0 {
			return subcommands.ExitStatus(rep.Status)
		}
		return exitError
	}
	if e.pidFile != "" {
		if err := container.WritePidFile(e.pidFile, cmd.Process.Pid); err != nil {
			cmd.Process.Kill() // the sandbox kills the process with it
			cmd.Process.Wait()
			return ociFail(conf, log, "exec", err)
		}
	}
	// The proxy is not waited for: it outlives us, and our parent (or
	// its subreaper) reaps it.
	cmd.Process.Release()
	return subcommands.ExitSuccess
}

// startReport is what the exec proxy writes on its report pipe.
type startReport struct {
	Error  string `json:"error,omitempty"`
	Status int    `json:"status,omitempty"`
}

// reportStart is the proxy's side of the report pipe (descriptor 6).
func reportStart(err error) {
	f := os.NewFile(6, "report")
	defer f.Close()
	var rep startReport
	if err != nil {
		rep.Error = err.Error()
		var ee *container.ExecError
		if errors.As(err, &ee) {
			rep.Status = ee.Status
		}
	}
	b, _ := json.Marshal(&rep)
	f.Write(b)
}
