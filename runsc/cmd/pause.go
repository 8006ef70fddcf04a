package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Pause is `runsc pause`: freeze every process of a container.
type Pause struct{}

// Name implements subcommands.Command.
func (*Pause) Name() string { return "pause" }

// Synopsis implements subcommands.Command.
func (*Pause) Synopsis() string { return "suspend every process of a container" }

// Usage implements subcommands.Command.
func (*Pause) Usage() string {
	return `pause ID

Freezes every process of running container ID in the Sentry: running ones
stop at their next entry into it, blocked ones stay blocked. Time goes on
and signals sent meanwhile (kill) are queued; SIGKILL still kills. The
state shows "paused" until resume.

`
}

// SetFlags implements subcommands.Command.
func (*Pause) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (*Pause) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "pause")
	if !ok {
		return exitError
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "pause", err)
	}
	if err := c.Pause(); err != nil {
		return ociFail(conf, log, "pause", err)
	}
	return subcommands.ExitSuccess
}
