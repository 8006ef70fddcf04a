package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/sandbox"
)

// Boot is `runsc boot` (internal): the sandbox process, which confines
// itself and runs the Sentry. runsc starts it in its own namespaces.
type Boot struct {
	goferFD      int
	cwd          string
	env          envList
	selfTestOpen bool
}

// Name implements subcommands.Command.
func (*Boot) Name() string { return "boot" }

// Synopsis implements subcommands.Command.
func (*Boot) Synopsis() string { return "run the Sentry in a sandbox (internal, started by runsc)" }

// Usage implements subcommands.Command.
func (*Boot) Usage() string {
	return "boot --gofer-fd N [--cwd DIR] [--env K=V]... [--self-test-open] -- CMD [ARG...]\n\n" +
		"Confines this process and runs CMD under the Sentry, its files served\n" +
		"by the gofer on socket N and its stdio this process's fds 0-2. Exits\n" +
		"with CMD's status, or 125 if the sandbox fails.\n\n"
}

// SetFlags implements subcommands.Command.
func (b *Boot) SetFlags(f *flag.FlagSet) {
	f.IntVar(&b.goferFD, "gofer-fd", -1, "connected socket to the gofer")
	f.StringVar(&b.cwd, "cwd", "/", "working directory of CMD")
	f.Var(&b.env, "env", "NAME=VALUE of CMD's environment (repeatable)")
	f.BoolVar(&b.selfTestOpen, "self-test-open", false, "open a host file once confined, to prove the seccomp filter kills the Sentry")
}

// Execute implements subcommands.Command.
func (b *Boot) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if b.goferFD < 0 || f.NArg() == 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	// The log file is open already (main opens it first); from here on
	// no host path can be reached.
	if err := sandbox.ConfineSandbox(); err != nil {
		return fail(conf, log, "boot", err)
	}
	status, err := boot.Run(boot.Config{
		Argv:         f.Args(),
		Env:          b.env,
		Cwd:          b.cwd,
		GoferFD:      b.goferFD,
		Stdio:        [3]int{0, 1, 2},
		Debug:        conf.Debug,
		Strace:       conf.Strace,
		Log:          log,
		Confine:      sandbox.SentryConfine(conf),
		SelfTestOpen: b.selfTestOpen,
	})
	if err != nil {
		return fail(conf, log, "boot", err)
	}
	return subcommands.ExitStatus(status)
}
