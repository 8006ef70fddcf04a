package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
	"github.com/moat-sandbox/moat/runsc/specutils"
	"golang.org/x/sys/unix"
)

// Kill is `runsc kill`: signal a container's process(es).
type Kill struct{ all bool }

// Name implements subcommands.Command.
func (*Kill) Name() string { return "kill" }

// Synopsis implements subcommands.Command.
func (*Kill) Synopsis() string { return "send a signal to a container's process" }

// Usage implements subcommands.Command.
func (*Kill) Usage() string {
	return `kill [--all] ID [SIGNAL]

Sends SIGNAL (default SIGTERM; a name such as KILL or SIGKILL, or a
number) to the process of container ID, or with --all to every process in
it. A created container that is not started dies of any signal but those
ignored by default.

`
}

// SetFlags implements subcommands.Command.
func (k *Kill) SetFlags(f *flag.FlagSet) {
	f.BoolVar(&k.all, "all", false, "send the signal to every process of the container")
	f.BoolVar(&k.all, "a", false, "short for --all")
}

// Execute implements subcommands.Command.
func (k *Kill) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() < 1 || f.NArg() > 2 {
		f.Usage()
		return exitError
	}
	sig := unix.SIGTERM
	if f.NArg() == 2 {
		s, err := specutils.ParseSignal(f.Arg(1))
		if err != nil {
			return ociFail(conf, log, "kill", err)
		}
		sig = s
	}
	c, err := container.Load(conf.RootDir, f.Arg(0))
	if err != nil {
		return ociFail(conf, log, "kill", err)
	}
	if err := c.Kill(sig, k.all); err != nil {
		return ociFail(conf, log, "kill", err)
	}
	return subcommands.ExitSuccess
}
