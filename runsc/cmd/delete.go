package cmd

import (
	"context"
	"errors"
	"flag"
	"os"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Delete is `runsc delete`: remove containers and every trace of them.
type Delete struct{ force bool }

// Name implements subcommands.Command.
func (*Delete) Name() string { return "delete" }

// Synopsis implements subcommands.Command.
func (*Delete) Synopsis() string { return "delete containers" }

// Usage implements subcommands.Command.
func (*Delete) Usage() string {
	return `delete [--force] ID...

Deletes each container: kills what is left of its sandbox and gofer and
removes its state. A running container is refused unless --force, which
also ignores containers that do not exist.

`
}

// SetFlags implements subcommands.Command.
func (d *Delete) SetFlags(f *flag.FlagSet) {
	f.BoolVar(&d.force, "force", false, "kill a running container first; ignore missing ones")
	f.BoolVar(&d.force, "f", false, "short for --force")
}

// Execute implements subcommands.Command.
func (d *Delete) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() == 0 {
		f.Usage()
		return exitError
	}
	status := subcommands.ExitSuccess
	for _, id := range f.Args() {
		c, err := container.Load(conf.RootDir, id)
		if err == nil {
			err = c.Delete(d.force)
		}
		if err != nil && !(d.force && errors.Is(err, os.ErrNotExist)) {
			status = ociFail(conf, log, "delete", err)
		}
	}
	return status
}
