package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"os"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// State is `runsc state`: print a container's OCI state.
type State struct{}

// Name implements subcommands.Command.
func (*State) Name() string { return "state" }

// Synopsis implements subcommands.Command.
func (*State) Synopsis() string { return "print a container's OCI state as JSON" }

// Usage implements subcommands.Command.
func (*State) Usage() string {
	return "state ID\n\nPrints the OCI state of container ID (status creating, created,\nrunning or stopped; pid is the sandbox process's).\n\n"
}

// SetFlags implements subcommands.Command.
func (*State) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (*State) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "state")
	if !ok {
		return exitError
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "state", err)
	}
	b, err := json.MarshalIndent(c.State(), "", "  ")
	if err != nil {
		return ociFail(conf, log, "state", err)
	}
	os.Stdout.Write(append(b, '\n'))
	return subcommands.ExitSuccess
}
