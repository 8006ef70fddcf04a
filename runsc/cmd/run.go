package cmd

import (
	"context"
	"flag"
	"os"
	"os/signal"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	"golang.org/x/sys/unix"
)

// Run is `runsc run`: create and start a container, and unless detached
// wait for it and delete it.
type Run struct {
	bundle        string
	pidFile       string
	consoleSocket string
	detach        bool
	compat        runcCompat
}

// Name implements subcommands.Command.
func (*Run) Name() string { return "run" }

// Synopsis implements subcommands.Command.
func (*Run) Synopsis() string { return "create and run a container" }

// Usage implements subcommands.Command.
func (*Run) Usage() string {
	return `run [--bundle DIR] [--pid-file FILE] [--detach] ID

Creates container ID from the bundle and starts it. Without --detach,
waits for its process, passes on the signals runsc gets, deletes the
container and exits with the process's status (128+N if signal N killed
it); with --detach, exits once it is started. A process asking for a
terminal gets the one sent to --console-socket or, without it, runsc's own
stdio (made the terminal's foreground job, when it is one).

`
}

// SetFlags implements subcommands.Command.
func (r *Run) SetFlags(f *flag.FlagSet) {
	f.StringVar(&r.bundle, "bundle", ".", "path to the bundle directory (holding config.json)")
	f.StringVar(&r.bundle, "b", ".", "short for --bundle")
	f.StringVar(&r.pidFile, "pid-file", "", "file to write the sandbox process's pid to")
	f.StringVar(&r.consoleSocket, "console-socket", "", "unix socket to send the master of the container's terminal to (when process.terminal is set)")
	f.BoolVar(&r.detach, "detach", false, "return once the container is started")
	f.BoolVar(&r.detach, "d", false, "short for --detach")
	r.compat.setFlags(f, true)
}

// Execute implements subcommands.Command.
func (r *Run) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "run")
	if !ok {
		return exitError
	}
	if err := r.compat.check(); err != nil {
		return ociFail(conf, log, "run", err)
	}
	// Receive the signals to pass on from now on, so that none arriving
	// while the container starts kills runsc instead.
	sigs := make(chan os.Signal, 16)
	if !r.detach {
		signal.Notify(sigs, append(sandbox.ForwardedSignals, unix.SIGWINCH)...)
		defer signal.Stop(sigs)
	}
	c, err := container.Create(container.CreateArgs{
		Config:        conf,
		ID:            id,
		Bundle:        r.bundle,
		PidFile:       r.pidFile,
		ConsoleSocket: r.consoleSocket,
		Foreground:    !r.detach,
		Log:           log,
	})
	if err != nil {
		return ociFail(conf, log, "run", err)
	}
	if err := c.Start(); err != nil {
		c.Delete(true)
		return ociFail(conf, log, "run", err)
	}
	if r.detach {
		return subcommands.ExitSuccess
	}
	go func() {
		for s := range sigs {
			if err := c.Kill(s.(unix.Signal), false); err != nil {
				log.Debug("passing on a signal", "signal", s, "err", err)
			}
		}
	}()
	status, err := c.Wait()
	if c.RestoreTerminal != nil {
		c.RestoreTerminal()
	}
	if err != nil {
		c.Delete(true)
		return ociFail(conf, log, "run", err)
	}
	if err := c.Delete(true); err != nil {
		return ociFail(conf, log, "run", err)
	}
	return subcommands.ExitStatus(status)
}
