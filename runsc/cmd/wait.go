package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"os"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Wait is `runsc wait`: wait for a container's process to exit.
type Wait struct{}

// Name implements subcommands.Command.
func (*Wait) Name() string { return "wait" }

// Synopsis implements subcommands.Command.
func (*Wait) Synopsis() string { return "wait for a container's process to exit" }

// Usage implements subcommands.Command.
func (*Wait) Usage() string {
	return "wait ID\n\nWaits until the process of container ID has exited and prints\n{\"id\":ID,\"exitStatus\":N} (N is 128+S if signal S killed it).\n\n"
}

// SetFlags implements subcommands.Command.
func (*Wait) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (*Wait) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "wait")
	if !ok {
		return exitError
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "wait", err)
	}
	st, err := c.Wait()
	if err != nil {
		return ociFail(conf, log, "wait", err)
	}
	b, _ := json.Marshal(struct {
		ID         string `json:"id"`
		ExitStatus int    `json:"exitStatus"`
	}{id, st})
	os.Stdout.Write(append(b, '\n'))
	return subcommands.ExitSuccess
}
