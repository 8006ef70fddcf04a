package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/sandbox"
)

// Do is `runsc do`: run a command in a throwaway sandbox without a bundle.
type Do struct {
	rootfs       string
	cwd          string
	env          envList
	userns       bool
	selfTestOpen bool
	readOnly     bool
}

// Name implements subcommands.Command.
func (*Do) Name() string { return "do" }

// Synopsis implements subcommands.Command.
func (*Do) Synopsis() string { return "run a command in a new sandbox, without a bundle" }

// Usage implements subcommands.Command.
func (*Do) Usage() string {
	return `do [flags] [--] CMD [ARG...]

Runs CMD in a new sandbox whose root is a host directory (default "/"),
served read-only by a gofer under a memory-backed overlay: CMD may change
files, and the changes vanish with the sandbox (--overlay=none writes
through to the host directory; --read-only refuses changes). CMD is looked up in the sandbox's PATH
(default ` + sandbox.DefaultPath + `). Exits with CMD's
status (128+N if signal N killed it), or 125 if runsc itself fails.
SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to runsc are
passed on to CMD.

`
}

// SetFlags implements subcommands.Command.
func (d *Do) SetFlags(f *flag.FlagSet) {
	f.StringVar(&d.rootfs, "rootfs", "/", "host directory to use as the sandbox's root")
	f.BoolVar(&d.readOnly, "read-only", false, "mount the root read-only (changes fail with EROFS) instead of under an overlay")
	f.StringVar(&d.cwd, "cwd", "/", "working directory of CMD inside the sandbox")
	f.Var(&d.env, "env", "NAME=VALUE to add to CMD's environment (repeatable)")
	f.BoolVar(&d.userns, "userns", true, "run the sandbox process in a user namespace of its own")
	f.BoolVar(&d.selfTestOpen, "self-test-open", false, "internal: have the Sentry open a host file once confined (it must be killed)")
}

// Execute implements subcommands.Command.
func (d *Do) Execute(ctx context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() == 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	status, err := sandbox.Do(ctx, sandbox.Options{
		Config:       conf,
		Rootfs:       d.rootfs,
		Cwd:          d.cwd,
		Env:          d.env,
		Argv:         f.Args(),
		NoUserNS:     !d.userns,
		SelfTestOpen: d.selfTestOpen,
		ReadOnlyRoot: d.readOnly,
		Log:          log,
	})
	if err != nil {
		return fail(conf, log, "do", err)
	}
	return subcommands.ExitStatus(status)
}
