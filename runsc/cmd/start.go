package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Start is `runsc start`: run a created container's process.
type Start struct{}

// Name implements subcommands.Command.
func (*Start) Name() string { return "start" }

// Synopsis implements subcommands.Command.
func (*Start) Synopsis() string { return "run a created container's process" }

// Usage implements subcommands.Command.
func (*Start) Usage() string {
	return "start ID\n\nRuns the process of container ID, which must be created (not yet started).\n\n"
}

// SetFlags implements subcommands.Command.
func (*Start) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (*Start) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "start")
	if !ok {
		return exitError
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "start", err)
	}
	if err := c.Start(); err != nil {
		return ociFail(conf, log, "start", err)
	}
	return subcommands.ExitSuccess
}
