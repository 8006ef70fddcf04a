package sandbox

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/sentry/platform"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace"
	"golang.org/x/sys/unix"
)

// The test binary doubles as runsc: Do starts it (Options.Exe) with
// fakeEnv set. Its gofer subcommand is the real one (RunGofer). Its boot
// subcommand confines itself exactly as runsc boot does (ConfineSandbox,
// then the Sentry's seccomp filter) and then, standing in for the
// kernel, acts out its argv:
//
//	exit N         exit with status N
//	cat PATH       read PATH through the gofer and copy it to stdout
//	whoami         print pid, uid, hostname and namespaces as the sandbox sees them;
//	               "whoami attach" then attaches to the gofer (a round trip)
//	procs          print GOMAXPROCS before confinement and after
//	wait-usr1      print "ready", exit 42 on SIGUSR1
//	hang           sleep forever
//	open           open a host path after the filter (must die of SIGSYS)
//	args           print cwd, env and argv as received
//	platform       run code under the real ptrace platform, confined
//	log            write a log line once confined
//	tty-fg         print the foreground process group of stdin, a terminal
//
// MOAT_FAKE_GOFER=hang makes the gofer ignore its connection and sleep,
// to check that Do kills it; MOAT_FAKE_GOFER=netns makes it print its
// network namespace to stderr ("gofer net=...") before serving.

const fakeEnv = "MOAT_SANDBOX_TEST_FAKE_RUNSC"

// fakeTeardown is how long the fake boot lingers after reporting its
// status on --status-fd.
const fakeTeardown = 3 * time.Second

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func fakeRunsc(args []string) int {
	conf := &config.Config{}
	global := flag.NewFlagSet("runsc", flag.ContinueOnError)
	conf.RegisterFlags(global)
	if err := global.Parse(args); err != nil {
		return 2
	}
	if err := conf.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "fake runsc:", err)
		return 2
	}
	log, closer, err := conf.OpenLog(global.Arg(0), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake runsc:", err)
		return 2
	}
	defer closer.Close()
	sub := flag.NewFlagSet(global.Arg(0), flag.ContinueOnError)
	switch global.Arg(0) {
	case "gofer":
		root := sub.String("root", "", "")
		fd := sub.Int("conn-fd", -1, "")
		procs := sub.Int("gomaxprocs", 0, "")
		var bindArgs listFlag
		sub.Var(&bindArgs, "bind", "")
		if err := sub.Parse(global.Args()[1:]); err != nil {
			return 2
		}
		switch os.Getenv("MOAT_FAKE_GOFER") {
		case "hang":
			select {}
		case "netns":
			l, _ := os.Readlink("/proc/self/ns/net")
			fmt.Fprintf(os.Stderr, "gofer net=%s\n", l)
		}
		var binds []gofer.Mount
		for _, a := range bindArgs {
			m, err := ParseGoferBind(a)
			if err != nil {
				fmt.Fprintln(os.Stderr, "fake gofer:", err)
				return 2
			}
			binds = append(binds, m)
		}
		if err := RunGofer(conf, *root, *fd, binds, *procs, log); err != nil {
			fmt.Fprintln(os.Stderr, "fake gofer:", err)
			return 1
		}
		return 0
	case "boot":
		fd := sub.Int("gofer-fd", -1, "")
		cwd := sub.String("cwd", "", "")
		var env listFlag
		sub.Var(&env, "env", "")
		selfTest := sub.Bool("self-test-open", false, "")
		statusFD := sub.Int("status-fd", -1, "")
		procs := sub.Int("gomaxprocs", 0, "")
		if err := sub.Parse(global.Args()[1:]); err != nil {
			return 2
		}
		status := fakeBoot(conf, log, *fd, *cwd, env, *selfTest, *procs, sub.Args())
		if *statusFD >= 0 {
			ReportStatus(*statusFD, status)
			// Tear down slowly, as a Sentry with many pages might:
			// Do must not wait for it.
			time.Sleep(fakeTeardown)
		}
		return status
	}
	fmt.Fprintf(os.Stderr, "fake runsc: unknown subcommand %q\n", global.Arg(0))
	return 2
}

func fakeBoot(conf *config.Config, log *slog.Logger, goferFD int, cwd string, env []string, selfTest bool, procs int, argv []string) int {
	// Gather what must be read before the pivot.
	hostname, _ := os.Hostname()
	pgrp := unix.Getpgrp()
	var nss []string
	for _, ns := range []string{"mnt", "pid", "ipc", "uts", "net", "user"} {
		l, _ := os.Readlink("/proc/self/ns/" + ns)
		nss = append(nss, ns+"="+l)
	}
	procsBefore := runtime.GOMAXPROCS(0)
	confinement, err := ConfineSandbox()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake boot:", err)
		return ExitInternal
	}
	SetProcs(procs)
	// Signals must be caught before the test is told we are ready.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, unix.SIGUSR1)
	if len(argv) > 0 && argv[0] == "platform" {
		// Like the kernel: memory file and platform first, then the filter.
		if err := fakePlatform(SentryConfine(conf, confinement)); err != nil {
			fmt.Fprintln(os.Stderr, "fake boot: platform:", err)
			return 1
		}
		fmt.Println("platform ok")
		return 0
	}
	if err := SentryConfine(conf, confinement)(); err != nil {
		fmt.Fprintln(os.Stderr, "fake boot:", err)
		return ExitInternal
	}
	if selfTest {
		fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
		fmt.Fprintf(os.Stderr, "fake boot: self-test open returned %d, %v\n", fd, err)
		return ExitInternal
	}
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "fake boot: no command")
		return ExitInternal
	}
	switch argv[0] {
	case "exit":
		n, _ := strconv.Atoi(argv[1])
		return n
	case "cat":
		if err := fakeCat(goferFD, argv[1]); err != nil {
			fmt.Fprintln(os.Stderr, "fake boot: cat:", err)
			return 1
		}
		return 0
	case "whoami":
		fmt.Printf("pid=%d uid=%d pgrp=%d hostname=%s %s\n", os.Getpid(), os.Getuid(), pgrp, hostname, strings.Join(nss, " "))
		if len(argv) > 1 && argv[1] == "attach" {
			// A round trip: the gofer is past its start.
			c, err := proto.NewClient(goferFD)
			if err == nil {
				_, _, err = c.Attach()
				c.Shutdown()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "fake boot: attach:", err)
				return 1
			}
		}
		return 0
	case "procs":
		fmt.Printf("before=%d after=%d\n", procsBefore, runtime.GOMAXPROCS(0))
		return 0
	case "wait-usr1":
		fmt.Println("ready")
		select {
		case <-usr1:
			return 42
		case <-time.After(20 * time.Second):
			return 1
		}
	case "hang":
		fmt.Println("ready")
		select {}
	case "open":
		fd, err := unix.Open("/etc/passwd", unix.O_RDONLY, 0)
		fmt.Fprintf(os.Stderr, "fake boot: open returned %d, %v\n", fd, err)
		return 1
	case "log":
		// The first formatted time after confinement must not need a
		// file (the local time zone).
		log.Warn("logging from a confined sandbox")
		return 0
	case "tty-fg":
		// The terminal's foreground group as seen from here: 1 is ours.
		fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
		fmt.Printf("foreground=%d err=%v\n", fg, err)
		return 0
	case "args":
		fmt.Printf("cwd=%s env=%q argv=%q\n", cwd, env, argv)
		return 0
	}
	fmt.Fprintf(os.Stderr, "fake boot: unknown command %q\n", argv[0])
	return 127
}

// fakeCat walks path from the gofer's root one component at a time, opens
// it for reading and copies it to stdout, as the Sentry would for cat.
func fakeCat(goferFD int, path string) error {
	c, err := proto.NewClient(goferFD)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	h, _, err := c.Attach()
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if h, _, err = c.Walk(h, name); err != nil {
			return fmt.Errorf("walk %s: %w", name, err)
		}
	}
	fd, err := c.Open(h, unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	_, err = io.Copy(os.Stdout, f)
	return err
}

// platformCode is: getpid; exit; a store to 0x200000; ud2.
var platformCode = []byte{
	0xb8, 39, 0, 0, 0, 0x0f, 0x05,
	0xb8, 60, 0, 0, 0, 0x0f, 0x05,
	0xc6, 0x04, 0x25, 0x00, 0x00, 0x20, 0x00, 0x01,
	0x0f, 0x0b,
}

// fakePlatform does what the Sentry's start-up does with the ptrace
// platform around confine, then runs application code in two address
// spaces (one made after the filter is in place) on several threads.
func fakePlatform(confine func() error) error {
	fd, err := unix.MemfdCreate("memory-file", unix.MFD_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.Ftruncate(fd, 1<<20); err != nil {
		return err
	}
	if _, err := unix.Pwrite(fd, platformCode, 0); err != nil {
		return err
	}
	p, err := ptrace.New(fd)
	if err != nil {
		return err
	}
	first, err := p.NewAddressSpace()
	if err != nil {
		return err
	}
	if err := confine(); err != nil {
		return err
	}
	second, err := p.NewAddressSpace()
	if err != nil {
		return fmt.Errorf("address space after confine: %w", err)
	}
	for _, as := range []platform.AddressSpace{first, second} {
		if err := as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec); err != nil {
			return err
		}
		if err := as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write); err != nil {
			return err
		}
		errs := make(chan error, 3)
		for i := 0; i < 3; i++ {
			go func() { errs <- runPlatformThread(p, as) }()
		}
		for i := 0; i < 3; i++ {
			if err := <-errs; err != nil {
				return err
			}
		}
	}
	var b [1]byte
	if _, err := unix.Pread(fd, b[:], 0x1000); err != nil || b[0] != 1 {
		return fmt.Errorf("store did not reach the memory file (%v)", err)
	}
	second.Release()
	first.Release()
	return nil
}

func runPlatformThread(p *ptrace.Platform, as platform.AddressSpace) error {
	c := p.NewContext()
	defer c.Release()
	regs := ptrace.InitialRegisters()
	regs.Rip = 0x100000
	regs.Rsp = 0x300000
	for _, want := range []uint64{39, 60} {
		r, _, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchSyscall || regs.Orig_rax != want {
			return fmt.Errorf("switch: %v %v, syscall %d, want syscall %d", r, err, regs.Orig_rax, want)
		}
	}
	if _, err := c.FPState(as); err != nil {
		return fmt.Errorf("fp state: %w", err)
	}
	r, info, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchFault || info.Signo != int32(unix.SIGILL) {
		return fmt.Errorf("want SIGILL, got %v %+v %v", r, info, err)
	}
	return nil
}
