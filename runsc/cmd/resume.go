package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Resume is `runsc resume`: thaw a paused container.
type Resume struct{}

// Name implements subcommands.Command.
func (*Resume) Name() string { return "resume" }

// Synopsis implements subcommands.Command.
func (*Resume) Synopsis() string { return "resume every process of a paused container" }

// Usage implements subcommands.Command.
func (*Resume) Usage() string {
	return `resume ID

Lets the processes of paused container ID go on; the signals queued while
it was paused are delivered.

`
}

// SetFlags implements subcommands.Command.
func (*Resume) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (*Resume) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "resume")
	if !ok {
		return exitError
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "resume", err)
	}
	if err := c.Resume(); err != nil {
		return ociFail(conf, log, "resume", err)
	}
	return subcommands.ExitSuccess
}
