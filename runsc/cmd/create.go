package cmd

import (
	"context"
	"flag"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Create is `runsc create`: make a container whose init is loaded but not
// running.
type Create struct {
	bundle        string
	pidFile       string
	consoleSocket string
	compat        runcCompat
}

// Name implements subcommands.Command.
func (*Create) Name() string { return "create" }

// Synopsis implements subcommands.Command.
func (*Create) Synopsis() string { return "create a container (start runs it)" }

// Usage implements subcommands.Command.
func (*Create) Usage() string {
	return `create [--bundle DIR] [--pid-file FILE] ID

Creates container ID from the bundle (default: the current directory):
starts its sandbox and gofer and loads the spec's process without running
it; ` + "`runsc start ID`" + ` runs it. The container's stdio is this command's,
or, when process.terminal is set, a new terminal whose master is sent to
--console-socket.
Exits 0 once the container is created, 1 on error.

`
}

// SetFlags implements subcommands.Command.
func (c *Create) SetFlags(f *flag.FlagSet) {
	f.StringVar(&c.bundle, "bundle", ".", "path to the bundle directory (holding config.json)")
	f.StringVar(&c.bundle, "b", ".", "short for --bundle")
	f.StringVar(&c.pidFile, "pid-file", "", "file to write the sandbox process's pid to")
	f.StringVar(&c.consoleSocket, "console-socket", "", "unix socket to send the master of the container's terminal to (when process.terminal is set)")
	c.compat.setFlags(f, false)
}

// Execute implements subcommands.Command.
func (c *Create) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "create")
	if !ok {
		return exitError
	}
	if err := c.compat.check(); err != nil {
		return ociFail(conf, log, "create", err)
	}
	if _, err := container.Create(container.CreateArgs{
		Config:        conf,
		ID:            id,
		Bundle:        c.bundle,
		PidFile:       c.pidFile,
		ConsoleSocket: c.consoleSocket,
		Log:           log,
	}); err != nil {
		return ociFail(conf, log, "create", err)
	}
	return subcommands.ExitSuccess
}
