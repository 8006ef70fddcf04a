package cmd

import (
	"context"
	"flag"
	"fmt"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/runsc/sandbox"
)

// Gofer is `runsc gofer` (internal): the file server of a sandbox, started
// by runsc itself.
type Gofer struct {
	root   string
	connFD int
	binds  bindList
	// gomaxprocs, when positive, is the GOMAXPROCS to serve with once
	// confined (sandbox.SetProcs).
	gomaxprocs int
}

// bindList collects --bind flags.
type bindList []gofer.Mount

func (l *bindList) String() string { return fmt.Sprint(*l) }

func (l *bindList) Set(v string) error {
	m, err := sandbox.ParseGoferBind(v)
	if err != nil {
		return err
	}
	*l = append(*l, m)
	return nil
}

// Name implements subcommands.Command.
func (*Gofer) Name() string { return "gofer" }

// Synopsis implements subcommands.Command.
func (*Gofer) Synopsis() string { return "serve a sandbox's files (internal, started by runsc)" }

// Usage implements subcommands.Command.
func (*Gofer) Usage() string {
	return "gofer [--gomaxprocs N] --root DIR --conn-fd N [--bind=ro|rw[,rec]:SOURCE]...\n\n" +
		"Serves DIR on the connected SOCK_SEQPACKET socket N (read-only unless\n" +
		"--overlay=none), and each bind mount SOURCE as a further attach point.\n\n"
}

// SetFlags implements subcommands.Command.
func (g *Gofer) SetFlags(f *flag.FlagSet) {
	f.StringVar(&g.root, "root", "", "host directory to serve")
	f.IntVar(&g.connFD, "conn-fd", -1, "connected socket to serve on")
	f.Var(&g.binds, "bind", "ro|rw[,rec]:SOURCE of a bind mount to serve (repeatable, in attach point order)")
	f.IntVar(&g.gomaxprocs, "gomaxprocs", 0, "GOMAXPROCS to set once confined (runsc starts the gofer with GOMAXPROCS=1)")
}

// Execute implements subcommands.Command.
func (g *Gofer) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if g.root == "" || g.connFD < 0 || f.NArg() != 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	if err := sandbox.RunGofer(conf, g.root, g.connFD, g.binds, g.gomaxprocs, log); err != nil {
		return fail(conf, log, "gofer", err)
	}
	return subcommands.ExitSuccess
}
