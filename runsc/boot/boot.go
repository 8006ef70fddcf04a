// Package boot builds and runs the Sentry inside the sandbox process: the
// memory file, the platform, the kernel with its mounts (the gofer root,
// /dev, /proc), the first process, and the forwarding of host signals to
// it. It runs after runsc has pivoted the process into an empty root.
//
// Load builds everything and loads init without running it; Run (runsc
// do) then runs it to its end. An OCI container's sandbox instead calls
// Serve (control.go), which answers runsc's control calls (start, exec,
// kill, wait, ps, stats, state, pause, resume) until init has exited.
// process.go turns a spec's process settings (Spec, Process) into init's
// credentials and limits; exec.go starts further processes (runsc exec);
// binds.go and specmounts.go make the spec's mounts; seccomp.go compiles
// the spec's seccomp profile.
//
// Locks: controller.mu (control.go) guards the control server's own
// state and orders start against a kill of the unstarted sandbox; the
// only call made with it held is Sandbox.Start, which takes no lock (it
// hands init to a goroutine).
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
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/runsc/internal/future"
	"github.com/moat-sandbox/moat/runsc/internal/hugeheap"
	"github.com/moat-sandbox/moat/runsc/internal/startpages"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/dev"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
	"github.com/moat-sandbox/moat/sentry/fs/overlay"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/fs/sys"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/loader"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace"
	"github.com/moat-sandbox/moat/sentry/syscalls/linux"
	"github.com/moat-sandbox/moat/sentry/vdso"
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
	// Process holds the init process's identity and limits from an OCI
	// spec; the zero value is root with every capability and the
	// default limits.
	Process Process
	// Hostname is the UTS hostname; empty means the kernel's default.
	Hostname string
	// Domainname is the UTS domain name; empty means "(none)".
	Domainname string
	// WritableRoot mounts the gofer's root read-write (--overlay=none);
	// the gofer must serve it so.
	WritableRoot bool
	// ReadOnlyRoot mounts the gofer's root read-only (runsc do
	// --read-only, a spec's root.readonly): changes fail with EROFS.
	// Without it or WritableRoot, the root is the gofer's tree under a
	// memory-backed overlay: writable, with every change kept in the
	// sandbox.
	ReadOnlyRoot bool
	// Mounts, MaskedPaths and ReadonlyPaths come from an OCI spec (see
	// specmounts.go).
	Mounts        []SpecMount
	MaskedPaths   []string
	ReadonlyPaths []string
	Devices       []SpecDevice
	// Platform is how application system calls are trapped (runsc
	// --platform): "systrap" (also the empty string) or "ptrace".
	Platform string
}

// defaultPath is the PATH used to find the command when the environment
// has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Run runs the sandbox until its init exits and returns the exit status to
// report: the exit code, or 128+N when signal N killed it. A command that
// cannot be found or executed gives 127 or 126, as a shell reports it.
// When stdin and stdout are the terminal whose foreground the sandbox is,
// the command gets a terminal of its own relayed to it (runsc do at a
// shell), as process.terminal gives.
func Run(cfg Config) (int, error) {
	// runsc do at a terminal: the command gets a terminal of the
	// Sentry's, as process.terminal gives one (tty.go).
	if !cfg.Process.Terminal && onForegroundTerminal(cfg.Stdio) {
		cfg.Process.Terminal = true
	}
	s, err := Load(cfg)
	if err != nil {
		var ee *ExecError
		if errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "runsc: %v\n", ee.Err)
			return ee.Status, nil
		}
		return 0, err
	}
	defer s.Release()
	s.Start()
	// Once the command is past its start, the code that built the
	// kernel need not stay mapped.
	startpages.ReleaseAfter(startpages.StartTime)
	return s.Wait(), nil
}

// ExecError is Load's error for a command that cannot be run: Status is
// what a shell would exit with (127 not found, 126 not executable).
type ExecError struct {
	Status int
	Err    error
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// Sandbox is a built kernel with its init process loaded but not yet
// running (Load), then running (Start).
type Sandbox struct {
	k     *kernel.Kernel
	init  *kernel.Task
	log   *slog.Logger
	sigs  chan os.Signal
	stdio [3]int
	// goferFD is the gofer connection (Serve watches it for a hangup).
	goferFD int
	// savedFlags are the stdio descriptors' flags before the Sentry made
	// them non-blocking; Release puts them back (they are shared with
	// whoever started runsc).
	savedFlags [3]int

	startOnce sync.Once
	started   chan struct{}
	// done is closed when init has exited; status is then its status.
	done   chan struct{}
	status int
	// seccomp is the container's compiled seccomp profile (nil for
	// none), which processes started by exec get too, as runc gives
	// them.
	seccomp *SeccompFilter
	// console is init's terminal with process.terminal (tty.go); ttys
	// are those of processes exec started.
	console *Console
	ttys    consoleTable
}

// Load builds the kernel, mounts the root through the gofer and loads
// init, without running it. After Load the process is confined
// (cfg.Confine has run).
func Load(cfg Config) (*Sandbox, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(cfg.Argv) == 0 {
		return nil, errors.New("no command")
	}
	// Tracing the stubs needs a dumpable Sentry; dropping capabilities
	// cleared it.
	unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)

	// The clock's TSC calibration spans the boot: NewClock pairs the TSC
	// with the host's clock now, the kernel's first clock update (in
	// kernel.New) does it again, and the rate is the slope between.
	clk, err := vdso.NewClock()
	if err != nil {
		return nil, fmt.Errorf("starting the clock: %w", err)
	}
	t0 := time.Now()
	// Each phase grows the heap; one that took it into a new chunk of
	// address space gets huge pages for it.
	phase := func(name string) {
		hugeheap.Advise()
		log.Debug("boot phase", "phase", name, "at", time.Since(t0))
	}
	mf, err := mm.NewMemoryFile()
	if err != nil {
		return nil, err
	}
	// The platform (its template stub, forked, and the first address
	// space) is made while the root is mounted: the one mostly waits on
	// the kernel, the other on the gofer.
	platform := future.Start(func() (*ptrace.Platform, error) {
		switch cfg.Platform {
		case "", "systrap":
			return ptrace.NewSystrap(mf.FD())
		case "ptrace":
			return ptrace.New(mf.FD())
		}
		return nil, fmt.Errorf("unknown platform %q", cfg.Platform)
	})
	// So is the syscall table, while the main goroutine mostly waits on
	// the gofer.
	go linux.AMD64()
	client, err := proto.NewClient(cfg.GoferFD)
	if err != nil {
		return nil, fmt.Errorf("connecting to the gofer: %w", err)
	}
	phase("client")
	rootFS, err := mountRoot(cfg, client, mf)
	if err != nil {
		return nil, fmt.Errorf("mounting the root: %w", err)
	}
	// A read-only root is the overlay too, mounted read-only once the
	// spec's mount points exist (see below).
	mns := fs.NewMountNamespace(rootFS, fs.MountFlags{})
	phase("root mounted")
	// The special mount points and init's files come through the gofer
	// while the kernel is built.
	warmedPoints, warmed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(warmed)
		warmMountPoints(kernel.Background(), mns.Root())
		close(warmedPoints)
		warmInit(kernel.Background(), mns.Root(), cfg)
	}()

	var strace io.Writer
	if cfg.Strace {
		strace = &logWriter{log: log}
	}
	plat, err := platform()
	if err != nil {
		return nil, err
	}
	phase("platform")
	k, err := kernel.New(kernel.Config{
		Clock:    clk,
		Platform: plat,
		MemFile:  mf,
		Syscalls: linux.AMD64(),
		Log:      log,
		Strace:   strace,
		MountNS:  mns,
		Hostname: cfg.Hostname,
	})
	if err != nil {
		return nil, err
	}
	if cfg.Domainname != "" {
		k.SetDomainname(cfg.Domainname)
	}
	phase("kernel")
	<-warmedPoints
	if err := mountSpecial(k, mns, log); err != nil {
		return nil, err
	}
	phase("special mounted")
	if err := applySpecMounts(k, mns, cfg, client, log); err != nil {
		return nil, err
	}
	if cfg.ReadOnlyRoot && !cfg.WritableRoot {
		mns.Root().Mount.SetFlags(fs.MountFlags{ReadOnly: true})
	}

	s := &Sandbox{k: k, log: log, stdio: cfg.Stdio, goferFD: cfg.GoferFD, started: make(chan struct{}), done: make(chan struct{})}
	for i, fd := range cfg.Stdio {
		s.savedFlags[i], _ = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	}
	ok := false
	defer func() {
		if !ok {
			s.restoreStdio()
		}
	}()
	fdt := fs.NewFDTable()
	stdio := make([]int, 0, 3)
	for _, fd := range cfg.Stdio {
		nfd, err := unix.Dup(fd)
		if err != nil {
			for _, fd := range stdio {
				unix.Close(fd)
			}
			return nil, fmt.Errorf("duplicating stdio fd %d: %w", fd, err)
		}
		stdio = append(stdio, nfd)
	}
	files, con, err := stdioFiles(mns.Root(), stdio, cfg.Process.Terminal, 0, 0, log)
	if err != nil {
		return nil, err
	}
	if con != nil {
		defer func() {
			if !ok {
				con.closeNow()
			}
		}()
	}
	if err = installStdio(fdt, files); err != nil {
		return nil, err
	}

	phase("stdio")
	if cfg.Confine != nil {
		if err := cfg.Confine(); err != nil {
			return nil, err
		}
	}
	if cfg.SelfTestOpen {
		log.Warn("self test: opening a host file from the Sentry; the seccomp filter must kill this process")
		fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
		return nil, fmt.Errorf("self test: open of a host file was not killed (fd %d, err %v)", fd, err)
	}

	phase("confined")
	<-warmed
	opts, err := processOptions(mns.Root(), cfg.Argv, cfg.Env, cfg.Cwd, cfg.Process)
	if err != nil {
		return nil, err
	}
	opts.FDTable = fdt
	t, err := k.CreateInit(opts)
	if err != nil {
		return nil, execError(err)
	}
	if con != nil {
		if err := t.SetControllingTTY(con.Terminal(), false, true); err != nil {
			return nil, fmt.Errorf("binding init's terminal: %w", err)
		}
		s.console = con
	}
	if cfg.Process.NoNewPrivileges {
		t.SetNoNewPrivs()
	}
	if err := applySettings(k, t, cfg.Process.Settings, log); err != nil {
		return nil, err
	}
	if s.seccomp, err = loadSeccomp(cfg.Process.Seccomp, log); err != nil {
		return nil, err
	}
	if err := s.seccomp.install(t); err != nil {
		return nil, err
	}
	s.init = t
	phase("init loaded")

	// Host signals sent to the sandbox go to init.
	s.sigs = make(chan os.Signal, 16)
	signal.Notify(s.sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	go func() {
		for sig := range s.sigs {
			if sig == syscall.SIGWINCH && s.console != nil {
				// The host terminal's size changed: the
				// console's terminal signals its own.
				s.console.SyncWindowSize()
				continue
			}
			log.Debug("forwarding signal to init", "signal", sig)
			k.SignalInit(kernel.Signal(sig.(syscall.Signal)))
		}
	}()
	ok = true
	return s, nil
}

// Start runs init; later calls do nothing.
func (s *Sandbox) Start() {
	s.startOnce.Do(func() {
		close(s.started)
		go func() {
			start := time.Now()
			s.init.Start()
			ws := s.k.Wait()
			if s.console != nil {
				s.console.Close()
			}
			s.log.Debug("init exited", "status", fmt.Sprintf("%#x", uint32(ws)), "after", time.Since(start))
			if ws.Signaled() {
				s.status = 128 + int(ws.Signal())
			} else {
				s.status = ws.ExitCode()
			}
			close(s.done)
		}()
	})
}

// Started reports whether Start was called.
func (s *Sandbox) Started() bool {
	select {
	case <-s.started:
		return true
	default:
		return false
	}
}

// Done is closed when init has exited and every task is gone.
func (s *Sandbox) Done() <-chan struct{} { return s.done }

// Wait waits for init to exit (Start must have been called) and returns
// its status: the exit code, or 128+N when signal N killed it.
func (s *Sandbox) Wait() int {
	<-s.done
	return s.status
}

// Release gives the stdio descriptors their flags back and stops
// forwarding host signals, the latter on a goroutine of its own:
// signal.Stop waits for the runtime's signal loop to be idle (0.3 to 2
// ms measured here), which the report of init's status that follows
// (runsc boot --status-fd) need not wait for. A signal forwarded
// meanwhile finds init gone and is dropped.
func (s *Sandbox) Release() {
	s.restoreStdio()
	if s.sigs != nil {
		go signal.Stop(s.sigs)
	}
}

func (s *Sandbox) restoreStdio() {
	for i, fd := range s.stdio {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, s.savedFlags[i])
	}
}

// specialMountPoints are where mountSpecial mounts the Sentry's own
// file systems.
var specialMountPoints = []string{"/dev", "/proc", "/sys"}

// warmMountPoints looks up the special mount points, all at once (each
// is a gofer round trip), so that mountSpecial finds them cached.
func warmMountPoints(ctx fs.Context, root fs.VirtualDentry) {
	var wg sync.WaitGroup
	for _, p := range specialMountPoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
		}()
	}
	wg.Wait()
}

// warmInit looks up and opens, from root, the files starting init will
// need from the gofer: its executable, the interpreter that loads it (an
// ELF's PT_INTERP, a script's #! interpreter, and that one's) and
// /etc/passwd when HOME is to be found there. Load runs it while it
// builds the kernel, so these round trips are off init's path: the
// dentries stay cached and each file keeps its donated descriptor for
// the next open (sentry/fs/gofer keeps idle ones). Errors are left for
// init's own lookups to report.
func warmInit(ctx fs.Context, root fs.VirtualDentry, cfg Config) {
	open := func(start fs.VirtualDentry, p string) *fs.FileDescription {
		// O_NONBLOCK: a FIFO there (the Sentry serves named pipes
		// itself) must not wait for a writer that never comes; the
		// exec that follows refuses it as Linux does.
		f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: start, Path: p, FollowFinal: true}, fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_NONBLOCK})
		if err != nil {
			return nil
		}
		return f
	}
	if !hasVar(cfg.Env, "HOME") {
		if f := open(root, "/etc/passwd"); f != nil {
			f.DecRef()
		}
	}
	cwd := root
	if cfg.Cwd != "" && cfg.Cwd != "/" {
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: cfg.Cwd, FollowFinal: true})
		if err != nil {
			return
		}
		cwd = vd
	}
	exe, err := lookPath(ctx, root, cwd, cfg.Argv[0], cfg.Env)
	if err != nil {
		return
	}
	// An executable, its interpreter, and a script interpreter's own.
	dynamic := false
	for i := 0; i < 3 && exe != ""; i++ {
		f := open(cwd, exe)
		if f == nil {
			break
		}
		interp := loader.Interpreter(warmFile{ctx, f})
		dynamic = dynamic || (interp != "" && isELF(warmFile{ctx, f}))
		f.DecRef()
		exe = interp
	}
	// A dynamic executable's loader (glibc's) reads its library cache
	// first thing.
	if dynamic {
		if f := open(root, "/etc/ld.so.cache"); f != nil {
			f.DecRef()
		}
	}
}

// isELF reports whether r starts with the ELF magic number.
func isELF(r io.ReaderAt) bool {
	var magic [4]byte
	n, _ := r.ReadAt(magic[:], 0)
	return n == 4 && string(magic[:]) == "\x7fELF"
}

// warmFile reads an open file for loader.Interpreter.
type warmFile struct {
	ctx fs.Context
	f   *fs.FileDescription
}

func (w warmFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := w.f.PRead(w.ctx, p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func (w warmFile) Size() (int64, error) {
	st, err := w.f.Stat(w.ctx)
	return st.Size, err
}

// registerFilesystems makes tmpfs, proc, sysfs and mqueue mountable with mount(2)
// inside the sandbox.
func registerFilesystems(k *kernel.Kernel) {
	k.RegisterFilesystem("tmpfs", func(ctx fs.Context, _ string, _ bool, data string) (*fs.Filesystem, error) {
		opts, err := tmpfs.ParseOptions(data, tmpfs.DefaultOptions(k.MemFile), k.MemFile.Capacity())
		if err != nil {
			return nil, err
		}
		uid, gid, err := mounterIDs(ctx, uint32(opts.UID), uint32(opts.GID), opts.SetUID, opts.SetGID)
		if err != nil {
			return nil, err
		}
		opts.UID, opts.GID = uid, gid
		return tmpfs.New(k.MemFile, opts, ctx.Credentials()), nil
	})
	k.RegisterFilesystem("proc", func(ctx fs.Context, _ string, _ bool, _ string) (*fs.Filesystem, error) {
		return proc.New(kernel.ProcKernel{
			K:        k,
			Release:  linux.UnameRelease,
			Version:  linux.UnameVersion,
			MemTotal: func() uint64 { return linux.SandboxMemory },
		}.ForMounter(ctx), nil), nil
	})
	k.RegisterFilesystem("sysfs", func(fs.Context, string, bool, string) (*fs.Filesystem, error) {
		return sys.New(kernel.NumCPUs()), nil
	})
	linux.RegisterMqueue(k)
}

// mounterIDs maps mount options' uid= and gid= (when set) from the
// mounter's user namespace to global ids, as Linux's tmpfs and devpts
// read them: an id with no mapping there is EINVAL. Unset ones pass
// through unchanged.
func mounterIDs(ctx fs.Context, uid, gid uint32, setUID, setGID bool) (auth.KUID, auth.KGID, error) {
	var ns *auth.UserNamespace
	if c := ctx.Credentials(); c != nil {
		ns = c.UserNamespace
	}
	kuid, kgid := auth.KUID(uid), auth.KGID(gid)
	if setUID {
		k, ok := ns.MapToKUID(uid)
		if !ok {
			return 0, 0, unix.EINVAL
		}
		kuid = k
	}
	if setGID {
		k, ok := ns.MapToKGID(gid)
		if !ok {
			return 0, 0, unix.EINVAL
		}
		kgid = k
	}
	return kuid, kgid, nil
}

// mountRoot returns the container's root file system: the gofer's tree,
// read-write when cfg.WritableRoot, and otherwise read-only under an
// overlay whose upper layer is a tmpfs. (A read-only root is that overlay
// mounted read-only, after boot has made the spec's mount points.)
func mountRoot(cfg Config, client *proto.Client, mf *mm.MemoryFile) (*fs.Filesystem, error) {
	if cfg.WritableRoot {
		return gofer.NewWritable(client)
	}
	lower, err := gofer.New(client)
	if err != nil {
		return nil, err
	}
	upper := tmpfs.New(mf, tmpfs.DefaultOptions(mf), nil)
	return overlay.New(kernel.Background(), upper, lower)
}

// mountSpecial mounts /dev, /proc and /sys, making their directories
// where the root lacks them and can be written (an image's root often
// has no /proc; runc makes the mount points too).
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
	registerFilesystems(k)
	// Mounted at specialMountPoints, in order. Each lookup of a cold
	// tree is a gofer round trip: warmMountPoints makes them at once
	// (Load has, while it built the kernel; a sub-container's root is
	// cold), so those below find them cached.
	warmMountPoints(ctx, root)
	fss := []*fs.Filesystem{devFS, procFS, sysFS}
	for i, p := range specialMountPoints {
		at, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
		if err == unix.ENOENT {
			if err = mkdirAll(ctx, root, p); err == nil {
				at, err = fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
			}
		}
		if err != nil {
			log.Info("not mounting: no mount point", "path", p, "err", err)
			continue
		}
		noExec := p == "/proc" || p == "/sys"
		if _, err := mns.Mount(ctx, at, fss[i], fs.MountFlags{NoSUID: true, NoExec: noExec, NoDev: p == "/sys"}); err != nil {
			return fmt.Errorf("mounting %s: %w", p, err)
		}
	}
	// /dev/shm is a tmpfs (rw,nosuid,nodev), as Linux's container runtimes
	// mount it.
	if at, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/dev/shm", FollowFinal: true}); err == nil {
		shm := tmpfs.New(k.MemFile, tmpfs.DefaultOptions(k.MemFile), nil)
		if _, err := mns.Mount(ctx, at, shm, fs.MountFlags{NoSUID: true, NoDev: true}); err != nil {
			return fmt.Errorf("mounting /dev/shm: %w", err)
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
