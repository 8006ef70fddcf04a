// Package boot builds and runs the Sentry inside the sandbox process: the
// memory file, the platform, the kernel with its mounts (the gofer root,
// /dev, /proc), the first process, and the forwarding of host signals to
// it. It runs after runsc has pivoted the process into an empty root.
package boot

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/dev"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
	"github.com/moat-sandbox/moat/sentry/fs/host"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/fs/sys"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace"
	"github.com/moat-sandbox/moat/sentry/syscalls/linux"
)

// Config configures Run.
type Config struct {
	Argv []string
	Env  []string
	Cwd  string
	// GoferFD is a connected SOCK_SEQPACKET socket to the gofer.
	GoferFD int
	// Stdio are the host fds of the application's stdin, stdout, stderr.
	Stdio         [3]int
	Debug, Strace bool
	Log           *slog.Logger
	// Confine installs the Sentry's seccomp filter. Run calls it after the
	// memory file and platform stubs exist, before application code runs.
	Confine func() error
	// SelfTestOpen makes the Sentry open a host file after Confine, which
	// the filter must punish by killing the process.
	SelfTestOpen bool
}

// defaultPath is the PATH used to find the command when the environment
// has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Run runs the sandbox until its init exits and returns the exit status to
// report: the exit code, or 128+N when signal N killed it.
func Run(cfg Config) (int, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(cfg.Argv) == 0 {
		return 0, errors.New("no command")
	}
	// Tracing the stubs needs a dumpable Sentry; dropping capabilities
	// cleared it.
	unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)

	t0 := time.Now()
	phase := func(name string) { log.Debug("boot phase", "phase", name, "at", time.Since(t0)) }
	mf, err := mm.NewMemoryFile()
	if err != nil {
		return 0, err
	}
	plat, err := ptrace.New(mf.FD())
	if err != nil {
		return 0, err
	}
	phase("platform")
	client, err := proto.NewClient(cfg.GoferFD)
	if err != nil {
		return 0, fmt.Errorf("connecting to the gofer: %w", err)
	}
	rootFS, err := gofer.New(client)
	if err != nil {
		return 0, fmt.Errorf("mounting the root: %w", err)
	}
	mns := fs.NewMountNamespace(rootFS, fs.MountFlags{ReadOnly: true})

	var strace io.Writer
	if cfg.Strace {
		strace = &logWriter{log: log}
	}
	k, err := kernel.New(kernel.Config{
		Platform: plat,
		MemFile:  mf,
		Syscalls: linux.AMD64,
		Log:      log,
		Strace:   strace,
		MountNS:  mns,
	})
	if err != nil {
		return 0, err
	}
	phase("kernel")
	if err := mountSpecial(k, mns, log); err != nil {
		return 0, err
	}

	// Save the stdio flags: host files make the descriptors non-blocking,
	// and they are shared with whoever started runsc.
	var savedFlags [3]int
	for i, fd := range cfg.Stdio {
		savedFlags[i], _ = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	}
	defer func() {
		for i, fd := range cfg.Stdio {
			unix.FcntlInt(uintptr(fd), unix.F_SETFL, savedFlags[i])
		}
	}()
	fdt := fs.NewFDTable()
	tty := &host.TTY{}
	for i, fd := range cfg.Stdio {
		nfd, err := unix.Dup(fd)
		if err != nil {
			return 0, fmt.Errorf("duplicating stdio fd %d: %w", fd, err)
		}
		f, err := host.NewFile(nfd, host.Options{TTY: tty})
		if err != nil {
			return 0, err
		}
		if err := fdt.NewFDAt(int32(i), f, fs.FDFlags{}, 1024); err != nil {
			return 0, err
		}
		f.DecRef()
	}

	phase("stdio")
	if cfg.Confine != nil {
		if err := cfg.Confine(); err != nil {
			return 0, err
		}
	}
	if cfg.SelfTestOpen {
		log.Warn("self test: opening a host file from the Sentry; the seccomp filter must kill this process")
		fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
		return 0, fmt.Errorf("self test: open of a host file was not killed (fd %d, err %v)", fd, err)
	}

	phase("confined")
	env := cfg.Env
	if !hasVar(env, "PATH") {
		env = append(env, "PATH="+defaultPath)
	}
	ctx := kernel.Background()
	root := mns.Root()
	cwd := root
	if cfg.Cwd != "" && cfg.Cwd != "/" {
		cwd, err = fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: cfg.Cwd, FollowFinal: true})
		if err != nil {
			return 0, fmt.Errorf("working directory %q: %w", cfg.Cwd, err)
		}
	}
	exe, err := lookPath(ctx, root, cwd, cfg.Argv[0], env)
	if err != nil {
		// As a shell reports a command it cannot find.
		fmt.Fprintf(os.Stderr, "runsc: %v\n", err)
		return 127, nil
	}
	creds := auth.NewRootCredentials()
	t, err := k.CreateInit(kernel.InitOptions{
		Path:    exe,
		Argv:    cfg.Argv,
		Envv:    env,
		Root:    root,
		Cwd:     cwd,
		Umask:   0o022,
		FDTable: fdt,
		Creds:   creds,
	})
	if err != nil {
		// A command that cannot be executed is reported as a shell does.
		switch {
		case errors.Is(err, unix.ENOENT):
			fmt.Fprintf(os.Stderr, "runsc: %v\n", err)
			return 127, nil
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.EISDIR):
			fmt.Fprintf(os.Stderr, "runsc: %v\n", err)
			return 126, nil
		}
		return 0, err
	}

	phase("init loaded")
	// Host signals sent to the sandbox go to init.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	go func() {
		for s := range sigs {
			log.Debug("forwarding signal to init", "signal", s)
			k.SignalInit(kernel.Signal(s.(syscall.Signal)))
		}
	}()

	start := time.Now()
	t.Start()
	ws := k.Wait()
	signal.Stop(sigs)
	log.Debug("init exited", "status", fmt.Sprintf("%#x", uint32(ws)), "after", time.Since(start))
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitCode(), nil
}

// mountSpecial mounts /dev, /proc and /sys where the root has directories
// for them.
func mountSpecial(k *kernel.Kernel, mns *fs.MountNamespace, log *slog.Logger) error {
	ctx := kernel.Background()
	root := mns.Root()
	devFS, _ := dev.New()
	procFS := proc.New(kernel.ProcKernel{
		K:        k,
		Release:  linux.UnameRelease,
		Version:  linux.UnameVersion,
		MemTotal: func() uint64 { return linux.SandboxMemory },
	}, nil)
	sysFS := sys.New(kernel.NumCPUs())
	for _, m := range []struct {
		path string
		f    *fs.Filesystem
	}{{"/dev", devFS}, {"/proc", procFS}, {"/sys", sysFS}} {
		at, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: m.path, FollowFinal: true})
		if err != nil {
			log.Info("not mounting: no mount point", "path", m.path, "err", err)
			continue
		}
		noExec := m.path == "/proc" || m.path == "/sys"
		if _, err := mns.Mount(ctx, at, m.f, fs.MountFlags{NoSUID: true, NoExec: noExec, NoDev: m.path == "/sys"}); err != nil {
			return fmt.Errorf("mounting %s: %w", m.path, err)
		}
	}
	return nil
}

func hasVar(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}

// lookPath finds the command as execvp would: names with a slash as they
// are, others in $PATH.
func lookPath(ctx fs.Context, root, cwd fs.VirtualDentry, name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	p := defaultPath
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			p = e[len("PATH="):]
		}
	}
	for _, dir := range strings.Split(p, ":") {
		if dir == "" {
			dir = "."
		}
		cand := path.Join(dir, name)
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: cwd, Path: cand, FollowFinal: true})
		if err != nil {
			continue
		}
		st, err := vd.Stat(ctx)
		if err != nil || !st.IsRegular() || st.Mode&0o111 == 0 {
			continue
		}
		return cand, nil
	}
	return "", fmt.Errorf("%q: executable file not found in $PATH", name)
}

// logWriter turns strace lines into log records.
type logWriter struct{ log *slog.Logger }

func (w *logWriter) Write(b []byte) (int, error) {
	w.log.Info(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
