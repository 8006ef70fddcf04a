package cmd

import (
	"context"
	"flag"
	"log/slog"
	"strings"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/internal/hugeheap"
	"github.com/moat-sandbox/moat/runsc/internal/startpages"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
)

// Boot is `runsc boot` (internal): the sandbox process, which confines
// itself and runs the Sentry. runsc starts it in its own namespaces.
type Boot struct {
	goferFD      int
	cwd          string
	env          envList
	selfTestOpen bool
	readOnly     bool
	// volumes are the destinations of runsc do's bind mounts ("DEST" or
	// "DEST:ro"), in the gofer's attach point order.
	volumes listFlag
	// statusFD, when set, receives CMD's exit status ("%d\n") once CMD
	// has exited and the stdio descriptors have their flags back, before
	// the sandbox tears itself down (sandbox.Options.Detach).
	statusFD int
	// gomaxprocs, when positive, is the GOMAXPROCS to run with once
	// confined (sandbox.SetProcs).
	gomaxprocs int
	// The descriptors of an OCI container's sandbox (runsc create): see
	// runsc/sandbox/create.go.
	specFD, controlFD, syncFD, exitFD int
}

// Name implements subcommands.Command.
func (*Boot) Name() string { return "boot" }

// Synopsis implements subcommands.Command.
func (*Boot) Synopsis() string { return "run the Sentry in a sandbox (internal, started by runsc)" }

// Usage implements subcommands.Command.
func (*Boot) Usage() string {
	return "boot --gofer-fd N [--status-fd N] [--gomaxprocs N] [--cwd DIR] [--env K=V]... [--self-test-open] -- CMD [ARG...]\n" +
		"boot --gofer-fd N --spec-fd N --control-fd N --sync-fd N --exit-fd N\n\n" +
		"Confines this process and runs CMD under the Sentry, its files served\n" +
		"by the gofer on socket N and its stdio this process's fds 0-2. Exits\n" +
		"with CMD's status, or 125 if the sandbox fails.\n\n" +
		"The second form is a container's sandbox (runsc create): the command\n" +
		"and its settings come as JSON on the spec pipe; the sandbox loads it,\n" +
		"reports ready on the sync pipe, and runs it when told to on the\n" +
		"control socket.\n\n"
}

// SetFlags implements subcommands.Command.
func (b *Boot) SetFlags(f *flag.FlagSet) {
	f.IntVar(&b.goferFD, "gofer-fd", -1, "connected socket to the gofer")
	f.IntVar(&b.statusFD, "status-fd", -1, "pipe on which to report CMD's exit status before tearing down")
	f.IntVar(&b.gomaxprocs, "gomaxprocs", 0, "GOMAXPROCS to set once confined (runsc do starts the sandbox with GOMAXPROCS=1)")
	f.StringVar(&b.cwd, "cwd", "/", "working directory of CMD")
	f.Var(&b.env, "env", "NAME=VALUE of CMD's environment (repeatable)")
	f.BoolVar(&b.readOnly, "read-only", false, "mount the root read-only rather than under a memory-backed overlay")
	f.Var(&b.volumes, "volume", "DEST[:ro]: mount the gofer's next bind attach point at DEST (repeatable)")
	f.BoolVar(&b.selfTestOpen, "self-test-open", false, "open a host file once confined, to prove the seccomp filter kills the Sentry")
	f.IntVar(&b.specFD, "spec-fd", -1, "pipe carrying the container's boot spec (JSON)")
	f.IntVar(&b.controlFD, "control-fd", -1, "listening control socket")
	f.IntVar(&b.syncFD, "sync-fd", -1, "pipe on which to report readiness")
	f.IntVar(&b.exitFD, "exit-fd", -1, "file to write init's exit status to")
}

// Execute implements subcommands.Command.
func (b *Boot) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	// The Sentry's heap grows by megabytes while it boots: onto huge
	// pages over the whole of its chunk, not only the 2 MiB that every
	// runsc process's start gets.
	hugeheap.Advise()
	conf, log := Globals(args)
	// Unix sockets on host paths of the gofer's file systems (--host-uds).
	gofer.SetDefaultHostUDS(gofer.HostUDS{Connect: conf.HostUDS.AllowOpen(), Bind: conf.HostUDS.AllowCreate()})
	if b.specFD >= 0 {
		return b.container(conf, log, f)
	}
	if b.goferFD < 0 || f.NArg() == 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	// The log file is open already (main opens it first); from here on
	// no host path can be reached.
	confinement, err := sandbox.ConfineSandbox()
	if err != nil {
		return fail(conf, log, "boot", err)
	}
	sandbox.SetProcs(b.gomaxprocs)
	status, err := boot.Run(boot.Config{
		Argv:         f.Args(),
		Env:          b.env,
		Cwd:          b.cwd,
		GoferFD:      b.goferFD,
		Stdio:        [3]int{0, 1, 2},
		Debug:        conf.Debug,
		Strace:       conf.Strace,
		Log:          log,
		Confine:      sandbox.SentryConfine(conf, confinement),
		SelfTestOpen: b.selfTestOpen,
		WritableRoot: conf.WritableRoot(),
		ReadOnlyRoot: b.readOnly,
		Mounts:       volumeMounts(b.volumes),
		Platform:     conf.Platform,
	})
	if err != nil {
		return fail(conf, log, "boot", err)
	}
	if b.statusFD >= 0 {
		sandbox.ReportStatus(b.statusFD, status)
	}
	return subcommands.ExitStatus(status)
}

// container runs the sandbox of an OCI container: load, report ready,
// serve control calls until init has exited.
func (b *Boot) container(conf *config.Config, log *slog.Logger, f *flag.FlagSet) subcommands.ExitStatus {
	if b.goferFD < 0 || b.controlFD < 0 || b.syncFD < 0 || f.NArg() != 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	spec, err := sandbox.ReadSpec(b.specFD)
	if err != nil {
		sandbox.ReportReady(b.syncFD, err)
		return fail(conf, log, "boot", err)
	}
	confinement, err := sandbox.ConfineSandbox()
	if err != nil {
		sandbox.ReportReady(b.syncFD, err)
		return fail(conf, log, "boot", err)
	}
	s, err := boot.Load(boot.Config{
		Argv:       spec.Argv,
		Env:        spec.Env,
		Cwd:        spec.Cwd,
		GoferFD:    b.goferFD,
		Stdio:      [3]int{0, 1, 2},
		Debug:      conf.Debug,
		Strace:     conf.Strace,
		Log:        log,
		Confine:    sandbox.SentryConfine(conf, confinement),
		Process:    spec.Process,
		Hostname:   spec.Hostname,
		Domainname: spec.Domainname,
		// A read-only root when the spec asks for one; otherwise the
		// default overlay, or the writable gofer root of --overlay=none.
		ReadOnlyRoot:  spec.ReadOnlyRoot,
		Mounts:        spec.Mounts,
		MaskedPaths:   spec.MaskedPaths,
		ReadonlyPaths: spec.ReadonlyPaths,
		Devices:       spec.Devices,
		WritableRoot:  conf.WritableRoot(),
		Platform:      conf.Platform,
	})
	if err != nil {
		sandbox.ReportReady(b.syncFD, err)
		log.Debug("loading init failed", "err", err)
		return sandbox.ExitInternal
	}
	defer s.Release()
	if err := sandbox.ReportReady(b.syncFD, nil); err != nil {
		return fail(conf, log, "boot", err)
	}
	// Once the container is past its start, the code that built the
	// kernel need not stay mapped.
	startpages.ReleaseAfter(startpages.StartTime)
	return subcommands.ExitStatus(s.Serve(b.controlFD, b.exitFD))
}

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// volumeMounts turns boot's --volume values into the bind mounts the
// gofer serves in that order (their sources are the gofer's business).
func volumeMounts(vols []string) []boot.SpecMount {
	var out []boot.SpecMount
	for _, v := range vols {
		dst, ro := strings.CutSuffix(v, ":ro")
		out = append(out, boot.Volume("", dst, ro))
	}
	return out
}
